// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER) on f32 fused multiply-adds, two entry
// points: convolution_integer_depthwise_fma (one input channel per group, C/G = 1, any M/G, at
// most 64 taps) and convolution_integer_grouped_fma (at most 258 taps a group; below).
//
//   out[n, m, oh, ow] = sum_{c, kh, kw} (x[n, g C/G + c, oh*SH + kh*DH - ph, ow*SW + kw*DW - pw] - xzp)
//                                       * (w[m, c, kh, kw] - wzp[m]),        g = m / (M/G)
//
// Exact in f32: |x - xzp| <= 255 and |w - wzp| <= 255, so every product is an integer of at most
// 65025 and every partial sum of at most C/G*KH*KW <= 258 of them is an integer below 2^24, which
// f32 holds exactly whatever the order of the additions; the result converts to i32 exactly (no
// wrap can occur at these magnitudes, so it equals the wrapping i32 sum of the reference). A GPU
// runs f32 fused multiply-adds at twice its i32 multiply-add (and packed dot product) rate, and
// the values need no byte shuffling.
//
// depthwise_fma: a workgroup owns TP output planes (n, m) and a tile of TH = QR*TR rows by TW =
// 4*TQ columns of each. It stages the input window the tile reads (x - xzp as f32, 0 outside the
// input: padding holds the input zero point) as rows of PQ 16-byte slots, and the planes' taps
// (w - wzp[m]), then one barrier; each thread computes four outputs of QR rows (SLIDE: four
// neighbouring outputs; each window row read once, as vec4s, for every output row it feeds).
// No private arrays and no vector indexed by a variable: NVIDIA's compiler does not unroll the
// loops over pipeline constants far enough, and such arrays land in local memory (10-30x slower).
// Bytes become f32 without a conversion instruction: the float whose bits are 0x4B000000 | b is
// 2^23 + b, and 2^23 + 128 + xzp (INT8, stored as b ^ 0x80) or 2^23 + xzp (UINT8) is subtracted.
// Bindings and uniforms: those of convolution_integer.wgsl (tiles_h, tiles_w, workgroups,
// fma_planes; grouped_fma: channel_blocks), and 9 the output as 16-byte vectors.

#include "convolution_integer.wgsl"
#include "common/bytes.wgsl"

override KH: u32 = 3u;
override KW: u32 = 3u;
override SH: u32 = 1u;
override SW: u32 = 1u;
override DH: u32 = 1u;
override DW: u32 = 1u;
override QR: u32 = 4u;        // output rows a thread (at most 4)
override TQ: u32 = 8u;        // quads of output columns a tile row (TW = 4 TQ)
override TR: u32 = 8u;        // threads down a tile (TH = QR TR)
override TP: u32 = 1u;        // planes a workgroup; WG = TQ TR TP
override NVQ: u32 = 2u;       // vec4 slots a thread reads of a window row: ceil((3 SW + (KW-1) DW + 1) / 4)
override PQ: u32 = 9u;        // vec4 slots a window row: (TQ - 1) SW + NVQ
override WIN_H: u32 = 34u;    // window rows: (TH - 1) SH + (KH - 1) DH + 1
override SLOTS: u32 = 306u;   // vec4 slots of the staged window: TP WIN_H PQ (grouped: CG WIN_H PQ)
override XV: u32 = 306u;      // SLOTS where SLIDE (read as vec4s), else 1
override XS: u32 = 1u;        // 4 SLOTS where not SLIDE (read a float at a time: no 16-byte loads for 4 bytes), else 1
override WSQ: u32 = 3u;       // vec4 tap slots: TP KH KWP / 4 (each tap row padded to KWP, whole vec4s)
override STAGE: u32 = 2u;     // staging items a thread: ceil(SLOTS / WG)
// Stride 1 or 2 along W, no W dilation, at most 8 taps wide: a thread's four outputs are
// neighbours, its window row read as NVQ aligned vec4s (no bank conflicts at stride 1) and each
// tap's four inputs picked from them (the taps written out: constant picks); its outputs stored
// as a 16-byte vector where VEC says so. Otherwise the four outputs lie TQ columns apart and each
// tap reads its four inputs one by one (neighbouring threads, neighbouring slots).
override SLIDE: bool = false;
// SLIDE rows whose window starts ALIGN_S bytes into a word of the input (contiguous rows, every
// row on a 4-byte boundary): the window is staged from that word on, a word of four columns an
// item into one vec4 slot, and the taps' columns shift by ALIGN_S. 4: not so.
override ALIGN_S: u32 = 4u;
// depthwise_fma, rows on 4-byte boundaries (ALIGN_S < 4): thread l stages slot q = l % PQ of
// window rows l / PQ, + RS, + 2 RS, ... (RS = WG / PQ rows a pass; threads from RS PQ on stage
// none), so that its column mask and addresses are worked out once, not per item (STAGE =
// ceil(rows / RS); H100: 2-4 % faster). 0: item i = l + k WG is slot i % PQ of row i / PQ.
override RS: u32 = 0u;
override VEC: bool = false;   // output rows contiguous, whole quads on 16-byte boundaries

@group(0) @binding(9) var<storage, read_write> output4: array<vec4<i32>>;

var<workgroup> xv: array<vec4<f32>, XV>;   // the window, row-major, rows of PQ vec4s (SLIDE)
var<workgroup> xs: array<f32, XS>;         // the same as floats (not SLIDE)
var<workgroup> wq: array<vec4<f32>, WSQ>;   // the planes' taps, rows of KWP

// Taps a row of wq: KW rounded up to whole vec4s.
fn kwp() -> u32 { return 4u * ((KW + 3u) / 4u); }

const NO_PLANE: u32 = 0xFFFFFFFFu;

// Output plane `plane` = (n, m) of depthwise_fma: the input element offset of its channel
// g = m / (M/G), and m (NO_PLANE past the last plane).
fn plane_info(plane: u32) -> vec2<u32> {
    if (plane >= cv.fma_planes) { return vec2<u32>(0u, NO_PLANE); }
    let M = cv.out_channels;
    let m = plane % M;
    return vec2<u32>((plane / M) * cv.in_stride_n + (m / cv.group_out_channels) * cv.in_stride_c, m);
}

const TWO23: f32 = 8388608.0;

@compute @workgroup_size(WG)
fn convolution_integer_depthwise_fma(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                     @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }   // uniform across the workgroup
    let tw_i = wg % cv.tiles_w;
    let rest = wg / cv.tiles_w;
    let th_i = rest % cv.tiles_h;
    let pg = rest / cv.tiles_h;
    let oh0 = th_i * QR * TR;
    let ow0 = tw_i * 4u * TQ;
    let ih0 = i32(oh0 * SH) - i32(cv.pad_top);
    let iw0 = i32(ow0 * SW) - i32(cv.pad_left);
    let M = cv.out_channels;

    // One phase of loads before the one barrier: every thread works out the planes of its own
    // items (a plane table of its own phase cost a barrier and a memory round trip more).
    let pi0 = plane_info(pg * TP);

    // the planes' taps, w - wzp[m]
    for (var i = l; i < 4u * WSQ; i += WG) {
        let row = i / kwp();
        let kw = i % kwp();
        var pi = pi0;
        if (TP > 1u) { pi = plane_info(pg * TP + row / KH); }
        var v = 0.0;
        if (pi.y != NO_PLANE && kw < KW) {
            let a = pi.y * cv.filter_stride_m + (row % KH) * cv.filter_stride_h + kw * cv.filter_stride_w;
            v = f32(widen(filter_byte(a), W_SIGNED) - filter_zp(pi.y));
        }
        wq[i >> 2u][i & 3u] = v;
    }

    // the input window (a loop of constant count: its items' loads can all be in flight)
    let bias = TWO23 + select(0.0, 128.0, X_SIGNED) + f32(input_zp());
    if (RS > 0u) {
        let q = l % PQ;
        let cm = col_keep(q, iw0);
        let zrep = (u32(input_zp()) & 0xFFu) * 0x01010101u;
        for (var k = 0u; k < STAGE; k++) {
            let r = l / PQ + k * RS;
            if (l >= RS * PQ || r >= TP * WIN_H) { break; }
            var pi = pi0;
            var wy = r;
            if (TP > 1u) {
                pi = plane_info(pg * TP + r / WIN_H);
                wy = r % WIN_H;
            }
            stage_word(r * PQ + q, q, wy, pi.x, pi.y != NO_PLANE, ih0, iw0, cm, zrep, bias);
        }
    } else {
        for (var k = 0u; k < STAGE; k++) {
            let i = l + k * WG;
            if (i >= SLOTS) { break; }
            let r = i / PQ;
            var pi = pi0;
            if (TP > 1u) { pi = plane_info(pg * TP + r / WIN_H); }
            stage_slot(i, i % PQ, r, r % WIN_H, pi.x, pi.y != NO_PLANE, ih0, iw0, bias);
        }
    }
    workgroupBarrier();

    let tq = l % TQ;
    let tr = (l / TQ) % TR;
    let p = l / (TQ * TR);
    // No private arrays (a variable index into one can put it in local memory): four named rows
    // of sums; the loops' bounds are constants.
    let fb = p * KH * kwp();
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    if (SLIDE) {
        // window row y feeds output row r with tap row kh where y = r SH + kh DH: each row read once
        let v0 = (p * WIN_H + tr * QR * SH) * PQ + tq * SW;
        for (var y = 0u; y < (QR - 1u) * SH + (KH - 1u) * DH + 1u; y++) {
            let b = v0 + y * PQ;
            let x0 = xv[b];
            let x1 = xv[b + min(1u, NVQ - 1u)];
            let x2 = xv[b + min(2u, NVQ - 1u)];
            let x3 = xv[b + min(3u, NVQ - 1u)];
            a0 = slide_row(a0, y, x0, x1, x2, x3, fb);
            if (QR > 1u) { a1 = slide_row(a1, y - SH, x0, x1, x2, x3, fb); }
            if (QR > 2u) { a2 = slide_row(a2, y - 2u * SH, x0, x1, x2, x3, fb); }
            if (QR > 3u) { a3 = slide_row(a3, y - 3u * SH, x0, x1, x2, x3, fb); }
        }
    } else {
        let s0 = (p * WIN_H + tr * QR * SH) * 4u * PQ + tq * SW;
        for (var kh = 0u; kh < KH; kh++) {
            for (var kw = 0u; kw < KW; kw++) {
                let j = fb + kh * kwp() + kw;
                let w = vec4<f32>(wq[j >> 2u][j & 3u]);
                let c = s0 + kh * DH * 4u * PQ + kw * DW;
                a0 = fma(window4(c), w, a0);
                if (QR > 1u) { a1 = fma(window4(c + SH * 4u * PQ), w, a1); }
                if (QR > 2u) { a2 = fma(window4(c + 2u * SH * 4u * PQ), w, a2); }
                if (QR > 3u) { a3 = fma(window4(c + 3u * SH * 4u * PQ), w, a3); }
            }
        }
    }

    let plane = pg * TP + p;
    if (plane >= cv.fma_planes) { return; }
    let n = plane / M;
    let m = plane % M;
    let ow = ow0 + select(tq, 4u * tq, SLIDE);
    let oh = oh0 + tr * QR;
    store_quad(n, m, oh, ow, vec4<i32>(a0));
    if (QR > 1u) { store_quad(n, m, oh + 1u, ow, vec4<i32>(a1)); }
    if (QR > 2u) { store_quad(n, m, oh + 2u, ow, vec4<i32>(a2)); }
    if (QR > 3u) { store_quad(n, m, oh + 3u, ow, vec4<i32>(a3)); }
}

// Tap (w - wzp[m]) of the group's output channel ml at filter element offset a within its
// channel's filter (0 past the group's channels).
fn group_tap(g: u32, ml: u32, a: u32) -> f32 {
    let MG = cv.group_out_channels;
    if (ml >= MG) { return 0.0; }
    let m = g * MG + ml;
    return f32(widen(filter_byte(m * cv.filter_stride_m + a), W_SIGNED) - filter_zp(m));
}

// Staging item i: slot q of window row r (row wy of its plane, whose channel starts at input
// element x; `plane_in` false past the last plane): x - xzp as f32, 0 outside the input.
fn stage_slot(i: u32, q: u32, r: u32, wy: u32, x: u32, plane_in: bool, ih0: i32, iw0: i32, bias: f32) {
    let H = i32(cv.in_height);
    let W = i32(cv.in_width);
    let ih = ih0 + i32(wy);
    let row_in = plane_in && ih >= 0 && ih < H;
    if (ALIGN_S < 4u) {
        // slot q of the row: the word of its four input columns
        let cols = vec4<i32>(slot_col(q, iw0)) + vec4<i32>(0, 1, 2, 3);
        let inside = (cols >= vec4<i32>(0)) & (cols < vec4<i32>(W)) & vec4<bool>(row_in);
        let b = word_bytes(slot_word(q, ih, x, iw0));
        xv[i] = select(vec4<f32>(0.0), as_f32(b) - vec4<f32>(bias), inside);
        return;
    }
    let row = x + u32(clamp(ih, 0, H - 1)) * cv.in_stride_h;
    // item (r, q) stages columns q, q + PQ, q + 2 PQ, q + 3 PQ of the row, so that neighbouring
    // threads write neighbouring slots (no bank conflicts); no vector indexed by a variable (that
    // can land in local memory on NVIDIA)
    let cols = vec4<i32>(iw0 + i32(q)) + vec4<i32>(0, 1, 2, 3) * i32(PQ);
    let inside = (cols >= vec4<i32>(0)) & (cols < vec4<i32>(W)) & vec4<bool>(row_in);
    let cc = vec4<u32>(clamp(cols, vec4<i32>(0), vec4<i32>(W - 1))) * cv.in_stride_w;
    let b = vec4<u32>(input_byte(row + cc.x), input_byte(row + cc.y), input_byte(row + cc.z), input_byte(row + cc.w));
    let v = select(vec4<f32>(0.0), as_f32(b) - vec4<f32>(bias), inside);
    let o = r * 4u * PQ + q;
    put(o, v.x);
    put(o + PQ, v.y);
    put(o + 2u * PQ, v.z);
    put(o + 3u * PQ, v.w);
}

// Rows staged a word a slot (ALIGN_S < 4): the first input column of window slot q (its four
// columns start ALIGN_S before the window's), and the word of those columns in input row ih
// (clamped into the input) of the channel whose elements start at x.
fn slot_col(q: u32, iw0: i32) -> i32 { return iw0 - i32(ALIGN_S) + 4 * i32(q); }
fn slot_word(q: u32, ih: i32, x: u32, iw0: i32) -> u32 {
    let row = x + u32(clamp(ih, 0, i32(cv.in_height) - 1)) * cv.in_stride_h;
    return word_at((i32(cv.input_base + row) + slot_col(q, iw0)) >> 2u);
}

// The four bytes of a word, lowest first.
fn word_bytes(w: u32) -> vec4<u32> { return (vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xFFu); }

// The byte lanes of window slot q (ALIGN_S < 4) whose columns lie inside the row: 0xFF in each.
fn col_keep(q: u32, iw0: i32) -> u32 {
    let cols = vec4<i32>(slot_col(q, iw0)) + vec4<i32>(0, 1, 2, 3);
    let inside = (cols >= vec4<i32>(0)) & (cols < vec4<i32>(i32(cv.in_width)));
    let k = select(vec4<u32>(0u), vec4<u32>(0xFFu, 0xFF00u, 0xFF0000u, 0xFF000000u), inside);
    return k.x | k.y | k.z | k.w;
}

// Staging item (RS > 0): slot q of window row wy (input row ih0 + wy of the channel whose elements
// start at x) into xv[i], a word of four columns; the bytes outside the input (column lanes not
// in `cm`, or the whole row) replaced by the input zero point's (zrep: its byte in every lane), so
// that x - xzp is exactly 0.
fn stage_word(i: u32, q: u32, wy: u32, x: u32, plane_in: bool, ih0: i32, iw0: i32, cm: u32, zrep: u32, bias: f32) {
    let ih = ih0 + i32(wy);
    let keep = select(0u, cm, plane_in && ih >= 0 && ih < i32(cv.in_height));
    let word = slot_word(q, ih, x, iw0);
    xv[i] = as_f32(word_bytes((word & keep) | (zrep & ~keep))) - vec4<f32>(bias);
}

// Bytes as f32 without a conversion (common/bytes.wgsl); the caller subtracts the bias.
fn as_f32(b: vec4<u32>) -> vec4<f32> { return biased_bytes(b, X_SIGNED); }

// Window slot c (a float) of the staged window.
fn put(c: u32, v: f32) {
    if (SLIDE) { xv[c >> 2u][c & 3u] = v; } else { xs[c] = v; }
}
fn win(c: u32) -> f32 { return xs[c]; }

// Window values c + j TQ SW (j < 4): a tap's inputs for a thread's four outputs, TQ columns apart
// (neighbouring threads read neighbouring slots at stride 1: no bank conflicts).
fn window4(c: u32) -> vec4<f32> {
    let d = TQ * SW;
    return vec4<f32>(win(c), win(c + d), win(c + 2u * d), win(c + 3u * d));
}

// Element i (a constant where called) of the 16 values x0 .. x3.
fn pick(x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, i: u32) -> f32 {
    let v = select(select(x0, x1, i >= 4u), select(x2, x3, i >= 12u), i >= 8u);
    return v[i & 3u];
}

// Tap kw's inputs for four neighbouring outputs (SLIDE): window columns kw + j SW.
fn tap4(x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, kw0: u32) -> vec4<f32> {
    let kw = kw0 + select(0u, ALIGN_S, ALIGN_S < 4u);
    return vec4<f32>(pick(x0, x1, x2, x3, kw), pick(x0, x1, x2, x3, kw + SW), pick(x0, x1, x2, x3, kw + 2u * SW),
                     pick(x0, x1, x2, x3, kw + 3u * SW));
}

// SLIDE: one window row's taps added to an output row's sums, if the row reads it as tap row
// t / DH (t = y - r SH, wrapped below 0: then past every tap row).
fn slide_row(a: vec4<f32>, t: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, fb: u32) -> vec4<f32> {
    if (t % DH != 0u || t / DH >= KH) { return a; }
    // the row's taps as one or two 16-byte loads (rows of KWP taps)
    let f = (fb + (t / DH) * kwp()) >> 2u;
    let w0 = wq[f];
    let w1 = wq[f + select(0u, 1u, KW > 4u)];
    var s = fma(tap4(x0, x1, x2, x3, 0u), vec4<f32>(w0.x), a);   // (tap4 shifts by ALIGN_S)
    if (KW > 1u) { s = fma(tap4(x0, x1, x2, x3, 1u), vec4<f32>(w0.y), s); }
    if (KW > 2u) { s = fma(tap4(x0, x1, x2, x3, 2u), vec4<f32>(w0.z), s); }
    if (KW > 3u) { s = fma(tap4(x0, x1, x2, x3, 3u), vec4<f32>(w0.w), s); }
    if (KW > 4u) { s = fma(tap4(x0, x1, x2, x3, 4u), vec4<f32>(w1.x), s); }
    if (KW > 5u) { s = fma(tap4(x0, x1, x2, x3, 5u), vec4<f32>(w1.y), s); }
    if (KW > 6u) { s = fma(tap4(x0, x1, x2, x3, 6u), vec4<f32>(w1.z), s); }
    if (KW > 7u) { s = fma(tap4(x0, x1, x2, x3, 7u), vec4<f32>(w1.w), s); }
    return s;
}

// A thread's four outputs of row oh: columns ow + j (SLIDE) or ow + j TQ, those inside the output.
fn store_quad(n: u32, m: u32, oh: u32, ow: u32, v: vec4<i32>) {
    if (oh >= cv.out_height) { return; }
    let o = output_index(n, m, oh, ow);
    let OW = cv.out_width;
    if (SLIDE && VEC && !ACCUMULATE) {
        if (ow < OW) { output4[o / 4u] = v; }
        return;
    }
    let d = select(TQ, 1u, SLIDE);
    let s = d * cv.out_stride_w;
    if (ow < OW) { store_output(o, v.x); }
    if (ow + d < OW) { store_output(o + s, v.y); }
    if (ow + 2u * d < OW) { store_output(o + 2u * s, v.z); }
    if (ow + 3u * d < OW) { store_output(o + 3u * s, v.w); }
}

// ---------------------------------------------------------------------------------------------
// convolution_integer_grouped_fma: few channels a group, SLIDE rows only. Groups of more than 258
// taps (CCH > 0) sum CCH channels (CCH * KH * KW <= 258 taps: exact) in f32 at a time and add each
// such sum, converted exactly, to i32 sums (wrapping adds, as the reference's sum wraps). A
// workgroup owns batch item n, group g, a block of 4 MT of the group's output channels and a tile
// of TR rows by 4 TQ columns; it stages the window of the group's CG input channels (CG planes of
// WIN_H rows of PQ vec4s) and the block's taps, four
// channels a vec4 (wv[(mt * CG * KH * KW + tap)] = the taps of channels 4 mt .. 4 mt + 3); each
// thread computes four neighbouring outputs of one row for four channels: a window row read
// once feeds 16 outputs a tap, and each tap's four channels are one 16-byte load.
override MT: u32 = 1u;        // vec4 blocks of output channels a workgroup (4 MT channels)
override WV: u32 = 1u;        // vec4 tap slots: MT CG KH KW
override CCH: u32 = 0u;       // channels an exact f32 sum (C/G KH KW > 258), else 0: one f32 sum

var<workgroup> wv: array<vec4<f32>, WV>;

@compute @workgroup_size(WG)
fn convolution_integer_grouped_fma(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                   @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }   // uniform across the workgroup
    var rest = wg;
    let tw_i = rest % cv.tiles_w;
    rest = rest / cv.tiles_w;
    let th_i = rest % cv.tiles_h;
    rest = rest / cv.tiles_h;
    let cb = rest % cv.channel_blocks;
    rest = rest / cv.channel_blocks;
    let g = rest % cv.group_count;
    let n = rest / cv.group_count;
    let oh0 = th_i * TR;
    let ow0 = tw_i * 4u * TQ;
    let ih0 = i32(oh0 * SH) - i32(cv.pad_top);
    let iw0 = i32(ow0 * SW) - i32(cv.pad_left);
    let CG = cv.group_in_channels;
    let MG = cv.group_out_channels;
    let KHW = KH * KW;
    let ml0 = cb * 4u * MT;   // the block's first channel within the group

    // the block's taps, w - wzp[m], four channels a slot (channels past the group's weigh 0)
    for (var i = l; i < WV; i += WG) {
        let t = i % (CG * KHW);
        let mt = i / (CG * KHW);
        let c = t / KHW;
        let k = t % KHW;
        let ml = ml0 + 4u * mt;
        let a = c * cv.filter_stride_c + (k / KW) * cv.filter_stride_h + (k % KW) * cv.filter_stride_w;
        wv[i] = vec4<f32>(group_tap(g, ml, a), group_tap(g, ml + 1u, a), group_tap(g, ml + 2u, a),
                          group_tap(g, ml + 3u, a));
    }

    // the window of the group's input channels (plane c: channel g CG + c)
    let bias = TWO23 + select(0.0, 128.0, X_SIGNED) + f32(input_zp());
    let xn = n * cv.in_stride_n + g * CG * cv.in_stride_c;
    // (item i = l + k WG: a thread's slot column down the rows, RS, measured 2-7 % slower here)
    for (var k = 0u; k < STAGE; k++) {
        let i = l + k * WG;
        if (i >= SLOTS) { break; }
        let r = i / PQ;
        stage_slot(i, i % PQ, r, r % WIN_H, xn + (r / WIN_H) * cv.in_stride_c, true, ih0, iw0, bias);
    }
    workgroupBarrier();

    let tq = l % TQ;
    let tr = (l / TQ) % TR;
    let mt = l / (TQ * TR);
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    var s0 = vec4<i32>(0);
    var s1 = vec4<i32>(0);
    var s2 = vec4<i32>(0);
    var s3 = vec4<i32>(0);
    for (var c = 0u; c < CG; c++) {
        if (CCH > 0u && c > 0u && c % CCH == 0u) {
            s0 += vec4<i32>(a0);
            s1 += vec4<i32>(a1);
            s2 += vec4<i32>(a2);
            s3 += vec4<i32>(a3);
            a0 = vec4<f32>(0.0);
            a1 = vec4<f32>(0.0);
            a2 = vec4<f32>(0.0);
            a3 = vec4<f32>(0.0);
        }
        let f = (mt * CG + c) * KHW;
        for (var kh = 0u; kh < KH; kh++) {
            let b = (c * WIN_H + tr * SH + kh * DH) * PQ + tq * SW;
            let x0 = xv[b];
            let x1 = xv[b + min(1u, NVQ - 1u)];
            let x2 = xv[b + min(2u, NVQ - 1u)];
            let x3 = xv[b + min(3u, NVQ - 1u)];
            // the taps written out (constant picks: a variable one would index the window
            // vectors in local memory)
            let fk = f + kh * KW;
            add_tap(&a0, &a1, &a2, &a3, tap4(x0, x1, x2, x3, 0u), wv[fk]);
            if (KW > 1u) { add_tap(&a0, &a1, &a2, &a3, tap4(x0, x1, x2, x3, 1u), wv[fk + 1u]); }
            if (KW > 2u) { add_tap(&a0, &a1, &a2, &a3, tap4(x0, x1, x2, x3, 2u), wv[fk + 2u]); }
            if (KW > 3u) { add_tap(&a0, &a1, &a2, &a3, tap4(x0, x1, x2, x3, 3u), wv[fk + 3u]); }
            if (KW > 4u) { add_tap(&a0, &a1, &a2, &a3, tap4(x0, x1, x2, x3, 4u), wv[fk + 4u]); }
            if (KW > 5u) { add_tap(&a0, &a1, &a2, &a3, tap4(x0, x1, x2, x3, 5u), wv[fk + 5u]); }
            if (KW > 6u) { add_tap(&a0, &a1, &a2, &a3, tap4(x0, x1, x2, x3, 6u), wv[fk + 6u]); }
            if (KW > 7u) { add_tap(&a0, &a1, &a2, &a3, tap4(x0, x1, x2, x3, 7u), wv[fk + 7u]); }
        }
    }
    let oh = oh0 + tr;
    let ow = ow0 + 4u * tq;
    let ml = ml0 + 4u * mt;
    let m = g * MG + ml;
    if (ml < MG) { store_quad(n, m, oh, ow, s0 + vec4<i32>(a0)); }
    if (ml + 1u < MG) { store_quad(n, m + 1u, oh, ow, s1 + vec4<i32>(a1)); }
    if (ml + 2u < MG) { store_quad(n, m + 2u, oh, ow, s2 + vec4<i32>(a2)); }
    if (ml + 3u < MG) { store_quad(n, m + 3u, oh, ow, s3 + vec4<i32>(a3)); }
}

// One tap's four inputs t for four channels' taps w (grouped_fma).
fn add_tap(a0: ptr<function, vec4<f32>>, a1: ptr<function, vec4<f32>>, a2: ptr<function, vec4<f32>>,
           a3: ptr<function, vec4<f32>>, t: vec4<f32>, w: vec4<f32>) {
    *a0 = fma(t, vec4<f32>(w.x), *a0);
    *a1 = fma(t, vec4<f32>(w.y), *a1);
    *a2 = fma(t, vec4<f32>(w.z), *a2);
    *a3 = fma(t, vec4<f32>(w.w), *a3);
}

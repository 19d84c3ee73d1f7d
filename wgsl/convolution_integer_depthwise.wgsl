// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER), depthwise kernel: one input channel per
// group (C/G = 1, any M/G), no workgroup memory. A thread owns eight neighbouring outputs
// (n, m, oh, ow0 .. ow0 + 7), ow0 = 8 * q, with g = m / (M/G):
//   out[n, m, oh, ow] = sum_{kh, kw} (x[n, g, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw] - xzp)
//                                    * (w[m, 0, kh, kw] - wzp[m])
// Taps outside the input add nothing (padding holds the input zero point).
// Fast rows (DW_FAST: contiguous input rows, kernel width <= 8, dilation 1 along W, stride DW_SW
// along W; the plan's conditions): a row's bytes are loaded as words, each output's KW bytes taken
// from them with constant shifts (bytes outside the row replaced by the zero point, so that every
// thread of a warp takes the same path), and each output's row of taps is one packed 4x8 dot
// product (two where the kernel is 5 to 8 wide, DW_KW8: taps 0-3 and 4-7), per word:
//   sum_k (x_k - zx)(w_k - zw) = dot(x, w) - zw * sum(x) - zx * sum(w) + KW * zx * zw
// (exact in wrapping i32, as the reference). Other layers take the taps one at a time, as the
// portable kernel does.
// Bindings and uniforms: those of convolution_integer.wgsl, and 9 the output as 16-byte vectors.

#include "convolution_integer.wgsl"

override DW_FAST: bool = false;  // the fast rows' structural conditions hold
override DW_SW: u32 = 1u;        // the stride along W (1 or 2) where DW_FAST
// Output rows contiguous, of whole quads, each quad on a 16-byte boundary: 16-byte stores.
override DW_VEC: bool = false;
// Fast rows of 5 to 8 taps: a second word of taps (4 .. KW - 1) a row.
override DW_KW8: bool = false;
// Fast rows whose starts are congruent mod 4 bytes (the input's H stride a multiple of 4): a thread's
// rows share one alignment, so the lanes of each row word outside the row are masked by the same
// masks, computed once a thread (row_mask / row_fill) and applied without a branch. (Per-row
// masking under an `edge` branch diverges in every warp that holds a row's first or last eight.)
override DW_ROWS4: bool = false;
// Fast rows: the kernel height where the rows are written out as a loop of constant count (1 to
// _DW_KH_CAP of the plan), 0 for a loop over cv.kernel_h.
override DW_KH: u32 = 0u;

@group(0) @binding(9) var<storage, read_write> output4: array<vec4<i32>>;

const ONES4 = 0x01010101u;

// Input word i of a fast row whose column 0 is byte rs of the binding; at an edge of the input
// (`edge`) its bytes outside the row's columns [0, W) replaced by the zero point (zrep), so that
// every word funnel-shifted from these holds the zero point in the lanes of taps outside the row.
// (Masking the raw words, 4 to 7 a row, costs less than masking each output's shifted word, 8 to 16.)
fn row_word(i: i32, rs: i32, W: i32, zrep: u32, edge: bool) -> u32 {
    let v = word_at(i);
    if (edge) { return in_row(v, 4 * i - rs, W, zrep); }
    return v;
}

// DW_ROWS4: the lanes of row word j (from the row's first aligned word of the thread's taps on)
// inside the row, and the zero point in the others.
var<private> row_mask: array<u32, 7>;
var<private> row_fill: array<u32, 7>;

// Row word i + j in the raw domain (x_flip): masked as row_word masks it, the zero point everywhere
// where the row is outside the input.
fn raw_word(i: i32, j: i32, rs: i32, W: i32, zrep: u32, edge: bool, inside: bool, xf: u32) -> u32 {
    var v: u32;
    if (DW_ROWS4) {
        v = (word_at(i + j) & row_mask[j]) | row_fill[j];
    } else {
        v = row_word(i + j, rs, W, zrep, edge);
    }
    return select(zrep, v, inside) ^ xf;
}

// Taps k0 .. k0 + 3 of the filter row starting at filter element w_row, as one word (lanes outside
// `mask` zero): a contiguous row's bytes funnel-shifted from two words, else a byte at a time.
fn filter_word(w_row: u32, k0: u32, mask: u32) -> u32 {
    if (cv.filter_stride_w == 1u) {
        let fa = cv.filter_base + w_row + k0;
        let fi = fa >> 2u;
        return funnel(filter_weights[fi], filter_weights[fi + 1u], (fa & 3u) * 8u) & mask;
    }
    var w = 0u;
    for (var kw = 0u; kw < 4u; kw++) {
        if (((mask >> (8u * kw)) & 0xFFu) != 0u) {
            w |= filter_byte(w_row + (k0 + kw) * cv.filter_stride_w) << (8u * kw);
        }
    }
    return w;
}

fn sum_w(w: u32) -> i32 {
    if (W_SIGNED) { return dot4I8Packed(w, ONES4); }
    return i32(dot4U8Packed(w, ONES4));
}

// The fast rows work in a "raw" domain where one packed dot product serves every sign mix: a UINT8
// input with an INT8 filter has its input bytes flipped (x ^ 0x80 = x - 128 as INT8: RAW_X_FLIP),
// an INT8 input with a UINT8 filter its filter bytes (w - 128). Each output accumulates
// dot(x, w) and (where the filter zero point or the mix needs it, need_sx()) sum(x) in that
// domain; every other term is the same for all outputs of a thread and goes into one constant:
//   sum_k (x_k - zx)(w_k - zw) = raw dot + coef * raw sum + (the rows' constants),
// coef = -zw, plus 128 for an INT8 input with a UINT8 filter (the entry point's last step)
// (all wrapping i32, as the reference: the identity holds modulo 2^32). A row's input words flip
// before their bytes are shifted into place (a flip commutes with byte moves), so a row pays it
// once a word, not once an output.
const RAW_X_FLIP: u32 = 0x80808080u;
fn x_flip() -> u32 { return select(0u, RAW_X_FLIP, !X_SIGNED && W_SIGNED); }
fn need_sx() -> bool { return WZP != 0u || (X_SIGNED && !W_SIGNED); }
fn raw_dot(x: u32, w: u32) -> i32 {
    if (X_SIGNED || W_SIGNED) { return dot4I8Packed(x, w); }
    return i32(dot4U8Packed(x, w));
}

var<private> dot_lo: vec4<i32>;   // raw dot products, outputs ow0 .. ow0 + 3
var<private> dot_hi: vec4<i32>;   // outputs ow0 + 4 .. ow0 + 7
var<private> sx_lo: vec4<i32>;    // raw input sums (NEED_SX)
var<private> sx_hi: vec4<i32>;
var<private> row_consts: i32;     // the constant terms of the rows taken

// One word of filter taps (true bytes w, its `kmask` lanes; ones = ONES4 & kmask) against the
// eight outputs' input words xl, xh (raw domain): their raw sums, and the word's constant:
// -zx * sum(w) + n * zx * zw, with the flips' corrections (128 * sum(w) - 128 * n * zw for a
// flipped input, whose raw sum is sum(x) - 128 * n).
fn add_word(xl: vec4<u32>, xh: vec4<u32>, w: u32, kmask: u32, xz: i32, wz: i32) {
    let ones = ONES4 & kmask;
    let n = i32(dot4U8Packed(ones, ONES4));
    var wr = w;
    if (X_SIGNED && !W_SIGNED) { wr = w ^ (RAW_X_FLIP & kmask); }
    dot_lo += vec4<i32>(raw_dot(xl.x, wr), raw_dot(xl.y, wr), raw_dot(xl.z, wr), raw_dot(xl.w, wr));
    dot_hi += vec4<i32>(raw_dot(xh.x, wr), raw_dot(xh.y, wr), raw_dot(xh.z, wr), raw_dot(xh.w, wr));
    if (need_sx()) {
        sx_lo += vec4<i32>(raw_dot(xl.x, ones), raw_dot(xl.y, ones), raw_dot(xl.z, ones), raw_dot(xl.w, ones));
        sx_hi += vec4<i32>(raw_dot(xh.x, ones), raw_dot(xh.y, ones), raw_dot(xh.z, ones), raw_dot(xh.w, ones));
    }
    let sw = sum_w(w);
    var c = n * xz * wz - xz * sw;
    if (!X_SIGNED && W_SIGNED) { c += 128 * sw - 128 * n * wz; }
    row_consts += c;
}

// The eight outputs' sums over one fast row of taps (accumulated in the private sums above):
// input row x_row (element offset), filter row w_row, iw0 the first tap column of output ow0;
// a row outside the input (`inside` false) reads as the zero point everywhere, adding exactly 0.
fn fast_row(x_row: u32, w_row: u32, iw0: i32, W: i32, KW: u32, xz: i32, wz: i32, zrep: u32, kmask: u32,
            edge: bool, inside: bool) {
    let xf = x_flip();
    // the row's bytes from column iw0 on as words (words before the buffer read as 0:
    // their lanes are outside the row), aligned to that column, in the raw domain
    let rs = i32(cv.input_base + x_row);
    let a = rs + iw0;
    let sh = u32(a & 3) * 8u;
    let i = a >> 2u;
    let v0 = raw_word(i, 0, rs, W, zrep, edge, inside, xf);
    let v1 = raw_word(i, 1, rs, W, zrep, edge, inside, xf);
    let v2 = raw_word(i, 2, rs, W, zrep, edge, inside, xf);
    let v3 = raw_word(i, 3, rs, W, zrep, edge, inside, xf);
    let u0 = funnel(v0, v1, sh);
    let u1 = funnel(v1, v2, sh);
    let u2 = funnel(v2, v3, sh);
    // output o's taps start at byte o * DW_SW
    var xl = vec4<u32>(u0, funnel(u0, u1, 8u), funnel(u0, u1, 16u), funnel(u0, u1, 24u));
    var xh = vec4<u32>(u1, funnel(u1, u2, 8u), funnel(u1, u2, 16u), funnel(u1, u2, 24u));
    var v4 = 0u;
    var u3 = 0u;
    if (DW_SW == 2u || DW_KW8) {
        v4 = raw_word(i, 4, rs, W, zrep, edge, inside, xf);
        u3 = funnel(v3, v4, sh);
    }
    if (DW_SW == 2u) {
        let u4 = funnel(v4, raw_word(i, 5, rs, W, zrep, edge, inside, xf), sh);
        xl = vec4<u32>(u0, funnel(u0, u1, 16u), u1, funnel(u1, u2, 16u));
        xh = vec4<u32>(u2, funnel(u2, u3, 16u), u3, funnel(u3, u4, 16u));
    }
    add_word(xl, xh, filter_word(w_row, 0u, kmask), kmask, xz, wz);
    if (DW_KW8) {
        // taps 4 .. KW - 1: output o's second word starts 4 bytes after its first
        let kmask2 = low_lanes(KW - 4u);
        var yl = xh;   // stride 1: outputs 0-3's second words are outputs 4-7's first
        var yh = vec4<u32>(u2, funnel(u2, u3, 8u), funnel(u2, u3, 16u), funnel(u2, u3, 24u));
        if (DW_SW == 2u) {
            let v5 = raw_word(i, 5, rs, W, zrep, edge, inside, xf);
            let v6 = raw_word(i, 6, rs, W, zrep, edge, inside, xf);
            let u4 = funnel(v4, v5, sh);
            let u5 = funnel(v5, v6, sh);
            yl = vec4<u32>(u1, funnel(u1, u2, 16u), u2, funnel(u2, u3, 16u));
            yh = vec4<u32>(u3, funnel(u3, u4, 16u), u4, funnel(u4, u5, 16u));
        }
        add_word(yl, yh, filter_word(w_row, 4u, kmask2), kmask2, xz, wz);
    }
}

@compute @workgroup_size(WG)
fn convolution_integer_depthwise(@builtin(global_invocation_id) gid: vec3<u32>,
                                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= cv.dw_threads) { return; }
    let octs = (cv.out_width + 7u) / 8u;
    // the threads of every row's interior eights first, then those of its edge eights, so that a
    // warp takes the edge masking for all its threads or for none
    let ni = cv.dw_interior;
    var q: u32;
    var rest: u32;
    if (tid < cv.dw_rows * ni) {
        q = cv.dw_q_lo + tid % ni;
        rest = tid / ni;
    } else {
        let e = tid - cv.dw_rows * ni;
        let ne = octs - ni;
        let k = e % ne;
        rest = e / ne;
        q = select(k + ni, k, k < cv.dw_q_lo);
    }
    let oh = rest % cv.out_height;
    rest = rest / cv.out_height;
    let m = rest % cv.out_channels;
    let n = rest / cv.out_channels;
    let ow0 = 8u * q;
    let g = m / cv.group_out_channels;
    let H = i32(cv.in_height);
    let W = i32(cv.in_width);
    let KW = cv.kernel_w;
    let xz = input_zp();
    let wz = filter_zp(m);
    let x_n = n * cv.in_stride_n + g * cv.in_stride_c;
    let w_m = m * cv.filter_stride_m;
    let ih0 = i32(oh * cv.stride_h) - i32(cv.pad_top);
    let iw0 = i32(ow0 * cv.stride_w) - i32(cv.pad_left);   // first tap column of output ow0
    let nout = min(8u, cv.out_width - ow0);
    // an eight with taps outside its rows (an edge of the input): those taps read the zero point
    let edge = iw0 < 0 || iw0 + i32(7u * DW_SW + KW) > W;
    let kmask = low_lanes(min(KW, 4u));   // the tap lanes of a fast row's words
    let zrep = (u32(xz) & 0xFFu) * ONES4;
    if (DW_FAST && DW_ROWS4) {
        // row word j's first column: the same for every row of the thread
        let c0 = iw0 - ((i32(cv.input_base + x_n) + iw0) & 3);
        // the words a row takes: 4 (taps 0-3 of eight outputs at stride 1), one more for taps 4-7,
        // two more at stride 2
        let words = 4 + select(0, 1, DW_KW8) + select(0, 2, DW_SW == 2u);
        for (var j = 0; j < words; j++) {
            row_mask[j] = in_row(0xFFFFFFFFu, c0 + 4 * j, W, 0u);
            row_fill[j] = in_row(0u, c0 + 4 * j, W, zrep);
        }
    }
    var lo = vec4<i32>(0);   // outputs ow0 .. ow0 + 3
    var hi = vec4<i32>(0);   // outputs ow0 + 4 .. ow0 + 7
    if (DW_FAST && DW_KH > 0u) {
        // rows of a constant count (the kernel height): a row outside the input is read clamped
        // and its sums dropped, so no row's loads wait on a branch and all can be in flight
        for (var kh = 0u; kh < DW_KH; kh++) {
            let ih = ih0 + i32(kh * cv.dilation_h);
            let x_row = x_n + u32(clamp(ih, 0, H - 1)) * cv.in_stride_h;
            fast_row(x_row, w_m + kh * cv.filter_stride_h, iw0, W, KW, xz, wz, zrep, kmask, edge, ih >= 0 && ih < H);
        }
    }
    for (var kh = 0u; kh < select(cv.kernel_h, 0u, DW_FAST && DW_KH > 0u); kh++) {
        let ih = ih0 + i32(kh * cv.dilation_h);
        if (ih < 0 || ih >= H) { continue; }
        let x_row = x_n + u32(ih) * cv.in_stride_h;
        let w_row = w_m + kh * cv.filter_stride_h;
        if (DW_FAST) {
            fast_row(x_row, w_row, iw0, W, KW, xz, wz, zrep, kmask, edge, true);
            continue;
        }
        // a tap at a time (the layers the fast rows do not take)
        let cs = i32(cv.stride_w);
        for (var kw = 0u; kw < KW; kw++) {
            let wv = widen(filter_byte(w_row + kw * cv.filter_stride_w), W_SIGNED) - wz;
            let c0 = iw0 + i32(kw * cv.dilation_w);
            var t = vec4<i32>(0);
            var u = vec4<i32>(0);
            for (var o = 0u; o < 4u; o++) {
                let c = c0 + i32(o) * cs;
                if (o < nout && c >= 0 && c < W) {
                    t[o] = (widen(input_byte(x_row + u32(c) * cv.in_stride_w), X_SIGNED) - xz) * wv;
                }
                let d = c + 4 * cs;
                if (o + 4u < nout && d >= 0 && d < W) {
                    u[o] = (widen(input_byte(x_row + u32(d) * cv.in_stride_w), X_SIGNED) - xz) * wv;
                }
            }
            lo += t;
            hi += u;
        }
    }
    if (DW_FAST) {
        // the raw sums back to the true ones (see x_flip)
        let coef = select(0, 128, X_SIGNED && !W_SIGNED) - wz;
        lo = dot_lo + coef * sx_lo + vec4<i32>(row_consts);
        hi = dot_hi + coef * sx_hi + vec4<i32>(row_consts);
    }
    let o = output_index(n, m, oh, ow0);
    if (DW_VEC && !ACCUMULATE) {
        output4[o / 4u] = lo;
        if (nout > 4u) { output4[o / 4u + 1u] = hi; }
        return;
    }
    // written out: no vector indexed by a variable (that can land in local memory on NVIDIA)
    store_four(o, lo, nout);
    if (nout > 4u) { store_four(o + 4u * cv.out_stride_w, hi, nout - 4u); }
}

// The first min(n, 4) of the four outputs v from output element o on (w stride apart).
fn store_four(o: u32, v: vec4<i32>, n: u32) {
    let s = cv.out_stride_w;
    store_output(o, v.x);
    if (n > 1u) { store_output(o + s, v.y); }
    if (n > 2u) { store_output(o + 2u * s, v.z); }
    if (n > 3u) { store_output(o + 3u * s, v.w); }
}

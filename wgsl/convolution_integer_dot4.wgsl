// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER), fast path: packed 4x8 dot products.
//
// Implicit GEMM per group g: rows = output pixels p = (n*OH + oh)*OW + ow, columns = output
// channels m of the group, reduction over k = (kh*KW + kw)*CG4P + c4, four channels a word, where
// CG4P = ceil(Cg/4) rounded up to a multiple of 4 (so every pixel's and every tap's words start
// on a vec4 boundary; the words past ceil(Cg/4) hold 0).
// All four sign mixes reduce to the signed case: a UINT8 byte u is stored as u ^ 0x80, which
// reads as the INT8 value u - 128. With x' = x - ox and w' = w - ow (ox, ow = 128 for UINT8, else
// 0) and zx' = zx - ox, zw' = zw - ow:
//   y = sum (x - zx)(w - zw) = sum x'w' - zw' * sum x' - zx' * sum w' + K * zx' * zw'
// (K = Cg*KH*KW taps; exact in wrapping i32). Padded taps hold zx' in their real channels, so they
// add 0 like the portable kernel's skipped taps; channels past Cg hold 0.
//
// Two passes: pack (input -> packed_input, words [n][ih][iw][g][CG4P], and filter -> packed_filter,
// words [m][kh][kw][CG4P], both flipped), and the GEMM.
//
// GEMM: a workgroup of TXN x TYN threads (tx, ty) owns TP = TXN*RP pixels (RP = 4..8) by TM
// channels, TYN = TM/4 and TXN = WG/TYN (TM = 64: 16x16 threads for WG = 256, 8x16 for 128,
// 32x16 for 512; TM = 128: 16x32 for WG = 512); thread (tx, ty) owns pixels tx + TXN*i (i < RP)
// and channels ty + TYN*j (j < 4). The 512-thread forms exist to put 16 warps on an SM: the driver
// must fit them in 128 registers a thread, where the 256-thread tiles hold one workgroup (8 warps)
// per SM. RP sizes the tile to the SM count (the host's cost model). A step stages KC = 16
// words of k of every tile row in workgroup memory: the k line is the taps' CG4P-word rows end to
// end, so a step may hold the end of one tap and the start of the next (or several taps where
// CG4P < 16), and only the last step is partial (96 channels: 14 steps of 216 words, not 18 of one
// tap each; each staging thread follows its own 4-word chunk's tap), rows of 4 vec4
// (padded to 5 vec4s so the compute reads are free of bank conflicts); the staging is double
// buffered (the next step's global loads are issued before the current step's dot products, and
// one barrier a step). The accumulators are named vec4<i32> variables (one per pixel, a component
// per channel) and the k loop body is written out straight-line: on NVIDIA through naga/Vulkan,
// private arrays used in loops land in local memory (the old kernel ran at ~2 TOPS because of it).
// The per-pixel sums of x' and per-channel sums of w' for the zero-point correction are folded
// into the staging (each thread sums the vec4 it stages; four partial sums a row).
// Split-K (convolution_integer_dot4_splitk, after pack_zero has zeroed the output), in stream-K
// form: the k steps of all tiles make one line, workgroup w runs split.y consecutive steps of it
// (one segment per tile it touches: a slice may start mid-tile and cross into the next tile), and
// each segment atomically adds its outputs; the corrections are linear in the sums, so each
// segment subtracts those of its own k range and the one holding a tile's first step adds
// K zx' zw'. Wrapping i32 adds make the result exact in any order.
// Bindings: those of convolution_integer.wgsl, plus 6 packed_input, 7 packed_filter (written by the
// pack passes) and 8, 9: the same buffers, read-only (as vec4s), for the GEMM; 10 the output as
// atomics (split-K).

#include "convolution_integer.wgsl"
#include "convolution_integer_im2col.wgsl"

override RP: u32 = 4u;   // output pixels per thread: 4 to 8 (TP = TXN * RP pixels a workgroup, at most 128)
override NEED_SX: bool = true;  // zw' can be nonzero: needs the per-pixel sums of x'
override NEED_SW: bool = true;  // zx' can be nonzero: needs the per-channel sums of w'
override TM: u32 = 64u;   // output channels a tile: 64, or 128 with WG = 512 (32 threads along the channels)

// The taps' rows cross step boundaries (CG4P not a multiple of KC): a step may hold several taps
// and the last one may be partial. Otherwise every step is 16 channel words of one tap.
override K_CROSS: bool = false;

const KC: u32 = 16u;        // k words staged per step (of the taps' channel words end to end)
const RS: u32 = 5u;         // vec4s per staged row (4 used, 1 pad against bank conflicts)

@group(0) @binding(6) var<storage, read_write> packed_input: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> packed_filter: array<u32>;
// The GEMM reads the packed words through read-only bindings of the same buffers.
@group(0) @binding(8) var<storage, read> packed_input_ro: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read> packed_filter_ro: array<vec4<u32>>;
// The output as atomics (the split-K GEMM's binding of it; the host binds the output tensor here).
@group(0) @binding(10) var<storage, read_write> output_atomic: array<atomic<i32>>;

var<workgroup> a_sh: array<vec4<u32>, 2u * (WG / (TM / 4u)) * RP * RS>;   // 2 buffers x TP pixel rows x RS
var<workgroup> b_sh: array<vec4<u32>, 2u * TM * RS>;    // 2 buffers x TM channel rows x RS
// Each pixel row's output element at channel 0 (written by its staging thread with the row's
// window position; the stores add the channel's offset instead of dividing the pixel index anew:
// H100, the conv sweep's GEMM rows 0-5 % faster, the i8 x i8 / i8 x u8 rows 1-3 % slower).
var<workgroup> out_sh: array<u32, (WG / (TM / 4u)) * RP>;

// Thread geometry: TYN = TM/4 threads along the channels (a thread's channels ty + TYN*j, j < 4),
// TXN = WG/TYN along the pixels (pixels tx + TXN*i, i < RP); staging passes of WG/4 rows.
fn tyn() -> u32 { return TM / 4u; }
fn txn() -> u32 { return WG / tyn(); }
fn stage_rows() -> u32 { return WG / 4u; }
fn a_buf() -> u32 { return txn() * RP * RS; }   // one A buffer
fn b_buf() -> u32 { return TM * RS; }   // one B buffer

// Packed word c4 of the channels from input address a (channel c4*4 of the group at a0): 0 past Cg.
fn input_word(a0: u32, c4: u32) -> u32 {
    let cg = cv.group_in_channels;
    if (c4 * 4u >= cg) { return 0u; }
    var a = a0 + c4 * 4u * cv.in_stride_c;
    var word = 0u;
    let lanes = min(4u, cg - c4 * 4u);
    for (var j = 0u; j < lanes; j++) {
        word |= (input_byte(a) ^ x_flip()) << (8u * j);
        a += cv.in_stride_c;
    }
    return word;
}

// Where input-pack thread e works: column unit col (a pixel, or a quad of them) of `cols` a row,
// row ih, vec4 v4 of the group's channel words, group g, batch item n (col fastest, so each
// channel plane is read coalesced).
struct PackPos { col: u32, ih: u32, v4: u32, g: u32, n: u32 }

fn pack_pos(e: u32, cols: u32) -> PackPos {
    let v4s = cv.group_words_padded / 4u;
    var r = e / cols;
    let ih = r % cv.in_height;
    r = r / cv.in_height;
    let v4 = r % v4s;
    r = r / v4s;
    return PackPos(e % cols, ih, v4, r % cv.group_count, r / cv.group_count);
}

// One thread per vec4 (4 words, 16 channels) of a pixel; neighbouring threads take neighbouring
// pixels.
fn pack_input_vec4(e: u32) {
    let cg4p = cv.group_words_padded;
    let pp = pack_pos(e, cv.in_width);
    let iw = pp.col;
    let ih = pp.ih;
    let v4 = pp.v4;
    let g = pp.g;
    let n = pp.n;
    let a0 = n * cv.in_stride_n + g * cv.group_in_channels * cv.in_stride_c + ih * cv.in_stride_h + iw * cv.in_stride_w;
    let c4 = v4 * 4u;
    let pix = (n * cv.in_height + ih) * cv.in_width + iw;
    let o = (pix * cv.group_count + g) * (cg4p / 4u) + v4;
    if (X_FAST) {
        // 16 independent word loads (every channel real, one byte offset), then the byte gather.
        let a = cv.input_base + a0 + c4 * 4u * cv.in_stride_c;
        let b = a >> 2u;
        let d = cv.in_stride_c >> 2u;
        let sh = (a & 3u) * 8u;
        let r0 = vec4<u32>(input[b], input[b + d], input[b + 2u * d], input[b + 3u * d]);
        let r1 = vec4<u32>(input[b + 4u * d], input[b + 5u * d], input[b + 6u * d], input[b + 7u * d]);
        let r2 = vec4<u32>(input[b + 8u * d], input[b + 9u * d], input[b + 10u * d], input[b + 11u * d]);
        let r3 = vec4<u32>(input[b + 12u * d], input[b + 13u * d], input[b + 14u * d], input[b + 15u * d]);
        packed_input[o] = vec4<u32>(gather_word(r0, sh), gather_word(r1, sh), gather_word(r2, sh), gather_word(r3, sh));
        return;
    }
    packed_input[o] =
        vec4<u32>(input_word(a0, c4), input_word(a0, c4 + 1u), input_word(a0, c4 + 2u), input_word(a0, c4 + 3u));
}

// The 4x4 byte transpose: r holds 4 pixels (bytes) of each of 4 channels (words); the result holds
// 4 channels (bytes) of each of the 4 pixels (words).
fn transpose4(r: vec4<u32>) -> vec4<u32> {
    let t0 = (r.x & 0x00FF00FFu) | ((r.y << 8u) & 0xFF00FF00u);   // c0p0 c1p0 c0p2 c1p2
    let t1 = ((r.x >> 8u) & 0x00FF00FFu) | (r.y & 0xFF00FF00u);   // c0p1 c1p1 c0p3 c1p3
    let t2 = (r.z & 0x00FF00FFu) | ((r.w << 8u) & 0xFF00FF00u);
    let t3 = ((r.z >> 8u) & 0x00FF00FFu) | (r.w & 0xFF00FF00u);
    return vec4<u32>((t0 & 0xFFFFu) | (t2 << 16u), (t1 & 0xFFFFu) | (t3 << 16u),
                     (t0 >> 16u) | (t2 & 0xFFFF0000u), (t1 >> 16u) | (t3 & 0xFFFF0000u));
}

// Word of 4 pixels of the group's channel c0 + j (j < 16; 0 past Cg) from aligned word b, channels
// d words apart.
fn quad_load(b: u32, d: u32, c0: u32, j: u32) -> u32 {
    if (c0 + j >= cv.group_in_channels) { return 0u; }
    return input[b + j * d];
}

// Channels c0 + 4k .. c0 + 4k + 3 of 4 pixels, as 4 packed words (one a pixel), the real channels'
// lanes flipped.
fn quad_words(b: u32, d: u32, c0: u32, k: u32) -> vec4<u32> {
    let q = vec4<u32>(quad_load(b, d, c0, 4u * k), quad_load(b, d, c0, 4u * k + 1u), quad_load(b, d, c0, 4u * k + 2u),
                      quad_load(b, d, c0, 4u * k + 3u));
    let cg = cv.group_in_channels;
    let lanes = min(4u, cg - min(cg, c0 + 4u * k));
    let flip = (x_flip() * ONES) & select(0u, low_lanes(lanes), lanes > 0u);
    return transpose4(q) ^ vec4<u32>(flip);
}

// X_QUAD: one thread per vec4 (16 channels) of four neighbouring pixels of a row: 16 aligned word
// loads (4 pixels of a channel each; channels past Cg read as 0), four 4x4 byte transposes, the
// real channels' lanes flipped, four vec4 stores. Neighbouring threads take neighbouring quads.
fn pack_input_quad(e: u32) {
    let cg4p = cv.group_words_padded;
    let pp = pack_pos(e, cv.in_width / 4u);
    let iw = pp.col * 4u;
    let ih = pp.ih;
    let v4 = pp.v4;
    let g = pp.g;
    let n = pp.n;
    let cg = cv.group_in_channels;
    let c0 = v4 * 16u;   // the vec4's first channel of the group
    let a = cv.input_base + n * cv.in_stride_n + (g * cg + c0) * cv.in_stride_c + ih * cv.in_stride_h + iw;
    let b = a >> 2u;
    let d = cv.in_stride_c >> 2u;
    let w0 = quad_words(b, d, c0, 0u);
    let w1 = quad_words(b, d, c0, 1u);
    let w2 = quad_words(b, d, c0, 2u);
    let w3 = quad_words(b, d, c0, 3u);
    let pix = (n * cv.in_height + ih) * cv.in_width + iw;
    let stride = cv.group_count * (cg4p / 4u);
    let o = (pix * cv.group_count + g) * (cg4p / 4u) + v4;
    packed_input[o] = vec4<u32>(w0.x, w1.x, w2.x, w3.x);
    packed_input[o + stride] = vec4<u32>(w0.y, w1.y, w2.y, w3.y);
    packed_input[o + 2u * stride] = vec4<u32>(w0.z, w1.z, w2.z, w3.z);
    packed_input[o + 3u * stride] = vec4<u32>(w0.w, w1.w, w2.w, w3.w);
}

fn pack_filter_word(e: u32) {
    packed_filter[e] = filter_word(e / cv.k_words, e % cv.k_words);
}

// Packed word k of filter row m (flipped; 0 past Cg).
fn filter_word(m: u32, k: u32) -> u32 {
    let cg4p = cv.group_words_padded;
    let cg = cv.group_in_channels;
    let c4 = k % cg4p;
    let khw = k / cg4p;
    let kh = khw / cv.kernel_w;
    let kw = khw % cv.kernel_w;
    if (W_FAST) {   // every word holds 4 real channels: straight-line byte loads
        return fw4(m * cv.filter_stride_m + c4 * 4u * cv.filter_stride_c + kh * cv.filter_stride_h + kw * cv.filter_stride_w,
                   cv.filter_stride_c);
    }
    var word = 0u;
    if (c4 < cv.group_words) {
        var a = m * cv.filter_stride_m + c4 * 4u * cv.filter_stride_c + kh * cv.filter_stride_h + kw * cv.filter_stride_w;
        let lanes = min(4u, cg - c4 * 4u);
        for (var j = 0u; j < lanes; j++) {
            word |= (filter_byte(a) ^ w_flip()) << (8u * j);
            a += cv.filter_stride_c;
        }
    }
    return word;
}

fn pack_input(e: u32) {
    if (X_QUAD) { pack_input_quad(e); } else { pack_input_vec4(e); }
}

// Both packs in one dispatch (one launch less): threads below x_words / 4 pack a vec4 of the
// input, the next M * KWP threads a word of the filter.
@compute @workgroup_size(WG)
fn pack(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    let xv = cv.packed_input_words / select(4u, 16u, X_QUAD);
    if (e < xv) { pack_input(e); return; }
    if (e - xv < cv.out_channels * cv.k_words) { pack_filter_word(e - xv); }
}

// The pack for split-K: the same, then the next threads zero the output, which the split-K GEMM's
// slices then add into, element r (in (n, m, oh, ow) order) a thread; for a packed output that is
// word r past the output base, without the index arithmetic.
@compute @workgroup_size(WG)
fn pack_zero(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    let xv = cv.packed_input_words / select(4u, 16u, X_QUAD);
    if (e < xv) { pack_input(e); return; }
    let fw = cv.out_channels * cv.k_words;
    if (e - xv < fw) { pack_filter_word(e - xv); return; }
    zero_output(e - xv - fw);
}

// Zero output element r (in (n, m, oh, ow) order; for a packed output, word r past the output
// base, without the index arithmetic): the split-K GEMM's slices add into it.
fn zero_output(r: u32) {
    if (r >= cv.output_count) { return; }
    if (OUT_PACKED) {
        output[cv.output_base + r] = 0i;
        return;
    }
    let ow = r % cv.out_width;
    var t = r / cv.out_width;
    let oh = t % cv.out_height;
    t = t / cv.out_height;
    output[output_index(t / cv.out_channels, t % cv.out_channels, oh, ow)] = 0i;
}

// The packed word of a padded tap at channel word c4: zx' in the real channels, 0 past Cg.
fn pad_word(c4: u32, zx_byte: u32) -> u32 {
    let cg = cv.group_in_channels;
    if (c4 * 4u >= cg) { return 0u; }
    let lanes = min(4u, cg - c4 * 4u);
    let mask = select((1u << (8u * lanes)) - 1u, 0xFFFFFFFFu, lanes == 4u);
    return (zx_byte * ONES) & mask;
}

// acc + the dot product of 16 int8 lanes (4 words each side), one chain of dot4I8Packed.
fn dd(acc: i32, a: vec4<u32>, b: vec4<u32>) -> i32 {
    return dot4I8Packed(a.w, b.w) + (dot4I8Packed(a.z, b.z) + (dot4I8Packed(a.y, b.y) + (dot4I8Packed(a.x, b.x) + acc)));
}

// One pixel's 4 channel accumulators += its 4 staged words times those of channels b0..b3.
fn mac(c: vec4<i32>, a: vec4<u32>, b0: vec4<u32>, b1: vec4<u32>, b2: vec4<u32>, b3: vec4<u32>) -> vec4<i32> {
    return vec4<i32>(dd(c.x, a, b0), dd(c.y, a, b1), dd(c.z, a, b2), dd(c.w, a, b3));
}

fn sum4(v: vec4<u32>) -> i32 { return dd(0i, v, vec4<u32>(ONES)); }

// A staged pixel row: where its words start (at tap (0, 0), the group's first word; may be negative), the
// top-left input position of its window, and whether the tile has the row (TP < 128 leaves
// staging rows unused: they stage zeros without loading).
struct PixRow { base: i32, ih0: i32, iw0: i32, live: bool, obase: u32 }

fn pix_row(p_in: u32, g: u32, live: bool) -> PixRow {
    let o = out_pos(min(p_in, cv.pixels - 1u));   // rows past P read pixel P - 1: valid, never stored
    let pix_words = i32(cv.group_count * cv.group_words_padded);
    let base = ((i32(o.n) * i32(cv.in_height) + o.ih0) * i32(cv.in_width) + o.iw0) * pix_words
             + i32(g * cv.group_words_padded);
    return PixRow(base, o.ih0, o.iw0, live, output_index(o.n, 0u, o.oh, o.ow));
}

// The 4 words of row `pr` at tap offset (dh, dw), chunk offset toff (words): pad where the tap
// falls outside the input, 0 past the group's channel words.
fn load_a(pr: PixRow, dh: i32, dw: i32, toff: i32, chunk_ok: bool, padv: vec4<u32>) -> vec4<u32> {
    let ih = pr.ih0 + dh;
    let iw = pr.iw0 + dw;
    if (!chunk_ok || !pr.live) { return vec4<u32>(0u); }
    if (ih < 0 || ih >= i32(cv.in_height) || iw < 0 || iw >= i32(cv.in_width)) { return padv; }
    return packed_input_ro[u32(pr.base + toff) >> 2u];
}

struct Staged { a0: vec4<u32>, a1: vec4<u32>, b0: vec4<u32>, b1: vec4<u32> }

// Global loads of one step for this thread: its chunk (4 words from k word kq, channel words c4 ..
// c4 + 3 of tap kh, kw) of pixel rows ra0 (and ra0 + WG/4 when TP > WG/4) and of channel rows rb0
// (and rb0 + 32 when WG = 128); zeros past the k line.
fn stage(pr0: PixRow, pr1: PixRow, wrow0: u32, w_ok0: bool, wrow1: u32, w_ok1: bool,
         kq: u32, kh: u32, kw: u32, c4: u32, zx_byte: u32) -> Staged {
    let chunk_ok = !K_CROSS || kq < cv.k_words;
    let dh = i32(kh * cv.dilation_h);
    let dw = i32(kw * cv.dilation_w);
    let toff = (dh * i32(cv.in_width) + dw) * i32(cv.group_count * cv.group_words_padded) + i32(c4);
    let padv = vec4<u32>(pad_word(c4, zx_byte), pad_word(c4 + 1u, zx_byte), pad_word(c4 + 2u, zx_byte),
                         pad_word(c4 + 3u, zx_byte));
    let wk = kq / 4u;
    var s: Staged;
    s.a0 = load_a(pr0, dh, dw, toff, chunk_ok, padv);
    s.a1 = vec4<u32>(0u);
    if (txn() * RP > stage_rows()) { s.a1 = load_a(pr1, dh, dw, toff, chunk_ok, padv); }
    s.b0 = vec4<u32>(0u);
    if (w_ok0 && chunk_ok) { s.b0 = packed_filter_ro[wrow0 / 4u + wk]; }
    s.b1 = vec4<u32>(0u);
    if (TM > stage_rows() && w_ok1 && chunk_ok) { s.b1 = packed_filter_ro[wrow1 / 4u + wk]; }
    return s;
}

// Write a step's staged vec4s into buffer `buf` (and add them to this thread's partial sums).
// Rows past the tile (TP or TM smaller than a staging pass) are not written.
fn put(s: Staged, buf: u32, ra0: u32, rb0: u32, q: u32) {
    let TP = txn() * RP;
    if (ra0 < TP) { a_sh[buf * a_buf() + ra0 * RS + q] = s.a0; }
    if (TP > stage_rows() && ra0 + stage_rows() < TP) { a_sh[buf * a_buf() + (ra0 + stage_rows()) * RS + q] = s.a1; }
    if (rb0 < TM) { b_sh[buf * b_buf() + rb0 * RS + q] = s.b0; }
    if (TM > stage_rows()) { b_sh[buf * b_buf() + (rb0 + stage_rows()) * RS + q] = s.b1; }
}

// The partial sums of staging row r (slots 4r..4r+3 of a_sh after the main loop): x, z for rows
// r < WG/4, y, w for the rows WG/4 later (see the end of the GEMM).
fn slot_sum(r: u32) -> vec4<i32> {
    return bitcast<vec4<i32>>(a_sh[4u * r] + a_sh[4u * r + 1u] + a_sh[4u * r + 2u] + a_sh[4u * r + 3u]);
}

fn pixel_sum(r: u32) -> i32 {
    if (r >= stage_rows()) { return slot_sum(r - stage_rows()).y; }
    return slot_sum(r).x;
}

fn channel_sum(r: u32) -> i32 {
    if (r >= stage_rows()) { return slot_sum(r - stage_rows()).w; }
    return slot_sum(r).z;
}

// The outputs of local pixel row pl, channels ml0 + TYN*j of the group (global m0 + TYN*j):
// acc + corr - zw * sx. (add_pixel repeats its index arithmetic on purpose: a shared helper
// returning a struct measured 1.8-2.5% slower on the H100, same-run A/B, on the unsplit layers.)
fn store_pixel(pl: u32, c: vec4<i32>, ptile: u32, ml0: u32, m0: u32, corr: vec4<i32>, zw: vec4<i32>) {
    let p = ptile * (txn() * RP) + pl;
    if (p >= cv.pixels) { return; }
    var sx = 0i;
    if (NEED_SX) { sx = pixel_sum(pl); }
    let y = c + corr - zw * sx;
    let mg = cv.group_out_channels;
    let s = cv.out_stride_m;
    let o = out_sh[pl] + m0 * s;
    let d = tyn();
    if (ml0 < mg) { output[o] = y.x; }
    if (ml0 + d < mg) { output[o + d * s] = y.y; }
    if (ml0 + 2u * d < mg) { output[o + 2u * d * s] = y.z; }
    if (ml0 + 3u * d < mg) { output[o + 3u * d * s] = y.w; }
}

// store_pixel for split-K: each slice adds its partial outputs (wrapping i32 adds: exact in any order).
fn add_pixel(pl: u32, c: vec4<i32>, ptile: u32, ml0: u32, m0: u32, corr: vec4<i32>, zw: vec4<i32>) {
    let p = ptile * (txn() * RP) + pl;
    if (p >= cv.pixels) { return; }
    var sx = 0i;
    if (NEED_SX) { sx = pixel_sum(pl); }
    let y = c + corr - zw * sx;
    let mg = cv.group_out_channels;
    let s = cv.out_stride_m;
    let o = out_sh[pl] + m0 * s;
    let d = tyn();
    if (ml0 < mg) { atomicAdd(&output_atomic[o], y.x); }
    if (ml0 + d < mg) { atomicAdd(&output_atomic[o + d * s], y.y); }
    if (ml0 + 2u * d < mg) { atomicAdd(&output_atomic[o + 2u * d * s], y.z); }
    if (ml0 + 3u * d < mg) { atomicAdd(&output_atomic[o + 3u * d * s], y.w); }
}

// A workgroup's accumulators and what its stores need.
struct Tile {
    ptile: u32, ml0: u32, m0: u32, tx: u32, corr: vec4<i32>, zw: vec4<i32>,
    c0: vec4<i32>, c1: vec4<i32>, c2: vec4<i32>, c3: vec4<i32>, c4: vec4<i32>, c5: vec4<i32>, c6: vec4<i32>,
    c7: vec4<i32>,
}

// The GEMM of k steps [st0, st0 + nsteps) of tile `tile` (tiles ordered pixel tile fastest, then
// channel tile, then group) by one workgroup.
fn gemm(tile_id: u32, st0: u32, nsteps: u32, l: u32) -> Tile {
    var tile: Tile;
    let TXN = txn();           // threads along the pixels (8 or 16); tyn() along the channels
    let TP = TXN * RP;
    let ptile = tile_id % cv.pixel_tiles;
    let rest = tile_id / cv.pixel_tiles;
    let mtile = rest % cv.channel_tiles;
    let g = rest / cv.channel_tiles;
    let cg4p = cv.group_words_padded;
    let mg = cv.group_out_channels;
    let KW = cv.kernel_w;
    let zx_byte = (u32(input_zp()) & 0xFFu) ^ x_flip();
    let zxp = i32(zx_byte << 24u) >> 24u;            // zx' as an integer

    // Staging role: chunk q of pixel rows ra0 (+ WG/4) and of channel rows rb0 (+ 32).
    let q = l & 3u;
    let ra0 = l >> 2u;
    let rb0 = l >> 2u;
    let pr0 = pix_row(ptile * TP + ra0, g, ra0 < TP);
    var pr1 = pr0;
    if (TP > stage_rows()) { pr1 = pix_row(ptile * TP + ra0 + stage_rows(), g, ra0 + stage_rows() < TP); }
    if (q == 0u) {   // (read by the stores, after the main loop's barriers)
        if (ra0 < TP) { out_sh[ra0] = pr0.obase; }
        if (TP > stage_rows() && ra0 + stage_rows() < TP) { out_sh[ra0 + stage_rows()] = pr1.obase; }
    }
    let wml0 = mtile * TM + rb0;
    let wml1 = wml0 + stage_rows();
    let wrow0 = (g * mg + min(wml0, mg - 1u)) * cv.k_words;
    let wrow1 = (g * mg + min(wml1, mg - 1u)) * cv.k_words;
    // Compute role: pixels tx + TXN i, channels ty + 16 j.
    let tx = l % TXN;
    let ty = l / TXN;
    let ab = tx * RS;
    let bb = ty * RS;
    let ai = TXN * RS;           // a_sh stride between a thread's pixel rows

    var c0 = vec4<i32>(0); var c1 = vec4<i32>(0); var c2 = vec4<i32>(0); var c3 = vec4<i32>(0);
    var c4 = vec4<i32>(0); var c5 = vec4<i32>(0); var c6 = vec4<i32>(0); var c7 = vec4<i32>(0);
    var sums = vec4<i32>(0);   // partial sums (chunk q) of x' of rows ra0, ra0 + WG/4, of w' of rows rb0, rb0 + 32

    // This thread's chunk of the step that `stage` loads next: k word kq, tap (kh, kw), its
    // channel words from cw.
    var kq = st0 * KC + 4u * q;
    let tap0 = kq / cg4p;
    var kh = tap0 / KW; var kw = tap0 % KW; var cw = kq % cg4p;
    let w_ok0 = wml0 < mg && rb0 < TM;   // 512 threads with 64-channel tiles stage 64 of their 128 rows
    var s = stage(pr0, pr1, wrow0, w_ok0, wrow1, wml1 < mg, kq, kh, kw, cw, zx_byte);
    put(s, 0u, ra0, rb0, q);
    if (NEED_SX) { sums.x += sum4(s.a0); if (TP > stage_rows()) { sums.y += sum4(s.a1); } }
    if (NEED_SW) { sums.z += sum4(s.b0); if (TM > stage_rows()) { sums.w += sum4(s.b1); } }
    workgroupBarrier();

    for (var st = 0u; st < nsteps; st++) {
        let cur = st & 1u;
        let more = st + 1u < nsteps;
        if (more) {
            kq += KC;
            cw += KC;
            if (K_CROSS) {
                loop {   // on to the chunk's tap (the next one, or several on where CG4P < 16)
                    if (cw < cg4p) { break; }
                    cw -= cg4p;
                    kw += 1u;
                    if (kw == KW) { kw = 0u; kh += 1u; }
                }
            } else if (cw >= cg4p) {   // (at most once: 16 divides CG4P)
                cw -= cg4p;
                kw += 1u;
                if (kw == KW) { kw = 0u; kh += 1u; }
            }
            s = stage(pr0, pr1, wrow0, w_ok0, wrow1, wml1 < mg, kq, kh, kw, cw, zx_byte);
        }
        let abuf = cur * a_buf() + ab;
        let bbuf = cur * b_buf() + bb;
        let bi = tyn() * RS;   // b_sh stride between a thread's channel rows
        for (var k = 0u; k < 4u; k++) {
            let b0 = b_sh[bbuf + k];
            let b1 = b_sh[bbuf + bi + k];
            let b2 = b_sh[bbuf + 2u * bi + k];
            let b3 = b_sh[bbuf + 3u * bi + k];
            let a0 = a_sh[abuf + k];
            let a1 = a_sh[abuf + ai + k];
            let a2 = a_sh[abuf + 2u * ai + k];
            let a3 = a_sh[abuf + 3u * ai + k];
            c0 = mac(c0, a0, b0, b1, b2, b3);
            c1 = mac(c1, a1, b0, b1, b2, b3);
            c2 = mac(c2, a2, b0, b1, b2, b3);
            c3 = mac(c3, a3, b0, b1, b2, b3);
            if (RP > 4u) { c4 = mac(c4, a_sh[abuf + 4u * ai + k], b0, b1, b2, b3); }
            if (RP > 5u) { c5 = mac(c5, a_sh[abuf + 5u * ai + k], b0, b1, b2, b3); }
            if (RP > 6u) { c6 = mac(c6, a_sh[abuf + 6u * ai + k], b0, b1, b2, b3); }
            if (RP > 7u) { c7 = mac(c7, a_sh[abuf + 7u * ai + k], b0, b1, b2, b3); }
        }
        if (more) {
            put(s, 1u - cur, ra0, rb0, q);
            if (NEED_SX) { sums.x += sum4(s.a0); if (TP > stage_rows()) { sums.y += sum4(s.a1); } }
            if (NEED_SW) { sums.z += sum4(s.b0); if (TM > stage_rows()) { sums.w += sum4(s.b1); } }
        }
        workgroupBarrier();
    }

    // Partial sums -> slot l of a_sh (the staging rows are done with); a row's total adds the
    // slots of its four chunks (slot_sum).
    a_sh[l] = bitcast<vec4<u32>>(sums);
    workgroupBarrier();

    let kzx = i32(cv.taps) * zxp;
    let ml0 = mtile * TM + ty;
    let d = tyn();
    let m0 = g * mg + ml0;
    let zw = vec4<i32>(chan_zw(ml0, m0), chan_zw(ml0 + d, m0 + d), chan_zw(ml0 + 2u * d, m0 + 2u * d),
                       chan_zw(ml0 + 3u * d, m0 + 3u * d));
    var corr = select(vec4<i32>(0), kzx * zw, st0 == 0u);   // K zx' zw' once, with the tile's first step
    if (NEED_SW) {
        corr -= zxp * vec4<i32>(channel_sum(ty), channel_sum(ty + d), channel_sum(ty + 2u * d), channel_sum(ty + 3u * d));
    }
    tile.ptile = ptile; tile.ml0 = ml0; tile.m0 = m0; tile.tx = tx; tile.corr = corr; tile.zw = zw;
    tile.c0 = c0; tile.c1 = c1; tile.c2 = c2; tile.c3 = c3; tile.c4 = c4; tile.c5 = c5; tile.c6 = c6; tile.c7 = c7;
    return tile;
}

@compute @workgroup_size(WG)
fn convolution_integer_dot4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                            @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }
    let t = gemm(wg, 0u, cv.tile_steps, l);
    let TXN = txn();
    store_pixel(t.tx, t.c0, t.ptile, t.ml0, t.m0, t.corr, t.zw);
    store_pixel(t.tx + TXN, t.c1, t.ptile, t.ml0, t.m0, t.corr, t.zw);
    store_pixel(t.tx + 2u * TXN, t.c2, t.ptile, t.ml0, t.m0, t.corr, t.zw);
    store_pixel(t.tx + 3u * TXN, t.c3, t.ptile, t.ml0, t.m0, t.corr, t.zw);
    if (RP > 4u) { store_pixel(t.tx + 4u * TXN, t.c4, t.ptile, t.ml0, t.m0, t.corr, t.zw); }
    if (RP > 5u) { store_pixel(t.tx + 5u * TXN, t.c5, t.ptile, t.ml0, t.m0, t.corr, t.zw); }
    if (RP > 6u) { store_pixel(t.tx + 6u * TXN, t.c6, t.ptile, t.ml0, t.m0, t.corr, t.zw); }
    if (RP > 7u) { store_pixel(t.tx + 7u * TXN, t.c7, t.ptile, t.ml0, t.m0, t.corr, t.zw); }
}

// Split-K (stream-K form): the k steps of all tiles in one line (tile-major, split.x steps a tile);
// workgroup w runs steps [w * split.y, (w + 1) * split.y) of that line, one segment per tile it
// touches, and adds each segment's partial outputs into the (zeroed) output. (Its add_pixel calls
// mirror convolution_integer_dot4's store_pixel calls: a shared helper choosing between them would
// put both output bindings, plain and atomic, into each entry point's interface.)
@compute @workgroup_size(WG)
fn convolution_integer_dot4_splitk(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                   @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }
    let steps = cv.tile_steps;
    var at = wg * cv.workgroup_steps;
    let end = min(at + cv.workgroup_steps, cv.tiles * steps);
    let TXN = txn();
    while (at < end) {
        let st0 = at % steps;
        let n = min(end - at, steps - st0);
        let t = gemm(at / steps, st0, n, l);
        add_pixel(t.tx, t.c0, t.ptile, t.ml0, t.m0, t.corr, t.zw);
        add_pixel(t.tx + TXN, t.c1, t.ptile, t.ml0, t.m0, t.corr, t.zw);
        add_pixel(t.tx + 2u * TXN, t.c2, t.ptile, t.ml0, t.m0, t.corr, t.zw);
        add_pixel(t.tx + 3u * TXN, t.c3, t.ptile, t.ml0, t.m0, t.corr, t.zw);
        if (RP > 4u) { add_pixel(t.tx + 4u * TXN, t.c4, t.ptile, t.ml0, t.m0, t.corr, t.zw); }
        if (RP > 5u) { add_pixel(t.tx + 5u * TXN, t.c5, t.ptile, t.ml0, t.m0, t.corr, t.zw); }
        if (RP > 6u) { add_pixel(t.tx + 6u * TXN, t.c6, t.ptile, t.ml0, t.m0, t.corr, t.zw); }
        if (RP > 7u) { add_pixel(t.tx + 7u * TXN, t.c7, t.ptile, t.ml0, t.m0, t.corr, t.zw); }
        at += n;
        workgroupBarrier();   // the next segment's staging overwrites the sums this one's stores read
    }
}

// Fast pack paths (set by the host where they apply): 16 independent loads per packed vec4
// instead of a loop of dependent byte loads.
override X_FAST: bool = false;  // input channel stride a multiple of 4 bytes and Cg a multiple of 16
override OUT_PACKED: bool = false;  // the output is packed (pack_zero zeroes it without index arithmetic)
override W_FAST: bool = false;  // Cg a multiple of 16: every filter word holds 4 real channels
// The input pack takes four pixels a thread (pack_input_quad): rows of whole, aligned words (W a
// multiple of 4, W stride 1, the H, C and N strides and the base multiples of 4 bytes).
override X_QUAD: bool = false;

// Byte sh/8 of each of 4 raw words, gathered into one word (lane i from r[i]) and flipped.
fn gather_word(r: vec4<u32>, sh: u32) -> u32 {
    let w = ((r.x >> sh) & 0xFFu) | (((r.y >> sh) & 0xFFu) << 8u) | (((r.z >> sh) & 0xFFu) << 16u) | ((r.w >> sh) << 24u);
    return w ^ (x_flip() * ONES);
}

// The filter bytes at byte address a (relative), a + d, a + 2d, a + 3d: one flipped word of 4 channels.
fn fw4(a: u32, d: u32) -> u32 {
    let w = filter_byte(a) | (filter_byte(a + d) << 8u) | (filter_byte(a + 2u * d) << 16u) | (filter_byte(a + 3u * d) << 24u);
    return w ^ (w_flip() * ONES);
}

// ---- im2col form, for few channels a group (a 7x7 stem on 3 channels): the GEMM's K is a
// pixel's whole window, k = (c * KH + kh) * KW + kw < K = Cg*KH*KW, four taps a word and
// group_words_padded words a (pixel, group) row (K/4 rounded up to whole vec4s), instead of 16
// padded channel words per tap. pack_im2col writes those rows (packed_input, [n][oh][ow][g][words];
// taps outside the input hold zx', taps past K hold 0) and the filter rows in the same k order;
// the GEMM entry points then run the layer as a 1x1 convolution over the OH x OW output pixels
// (the plan gives the GEMM step that geometry; K zx' zw' uses the real K in `taps`). The word
// forms (row, dense rows, bytes) are in convolution_integer_im2col.wgsl.

// Thread e packs vec4 v of row r (a pixel and group): neighbouring threads take neighbouring rows
// (pixels) at the same v, so their taps share (c, kh, kw), their branches agree and their byte loads
// fall on neighbouring input bytes (measured on an H200: 1-D k3 98.6 -> 62.5 us, the stem 42.0 ->
// 39.4 us, against v fastest); the word-gathering forms take v fastest (below).
fn pack_im2col_vec4(e: u32) {
    let v4s = cv.group_words_padded / 4u;
    let rows = cv.packed_input_words / cv.group_words_padded;
    var v = e / rows;
    var r = e - v * rows;
    if (IM2COL_ROWS || IM2COL_DENSE_ROWS) {
        // the word-gathering forms: neighbouring threads take a row's neighbouring vec4s and
        // store them together (row form, H200, the stem's pack: 24.3 -> 22.9 us; dense rows, H100:
        // 5x5 C=64 85 -> 76 us, depthwise 5x5 as im2col 130 -> 75.5, C=24 even, but 1-D k3 C=256
        // 54 -> 101); the byte-gathering form keeps pixel lanes (v fastest there: C=24 18.7 ->
        // 19.9, 1-D k3 62.7 -> 98.8)
        r = e / v4s;
        v = e - r * v4s;
    }
    let g = r % cv.group_count;
    let p = r / cv.group_count;
    let o = out_pos(p);
    let xn = o.n * cv.in_stride_n + g * cv.group_in_channels * cv.in_stride_c;
    let zx_byte = (u32(input_zp()) & 0xFFu) ^ x_flip();
    packed_input[r * v4s + v] = im2col_words4(xn, o.ih0, o.iw0, v * 4u, zx_byte);
}

// Word f % words of filter row f / words in im2col order (packed_filter).
fn pack_im2col_filter_word(f: u32) {
    let w = cv.group_words_padded;
    packed_filter[f] = im2col_filter_word(f / w, f % w);
}

// Threads below packed_input_words / 4 pack a vec4 of the input rows, the next M * words a filter word.
@compute @workgroup_size(WG)
fn pack_im2col(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    let xv = cv.packed_input_words / 4u;
    if (e < xv) { pack_im2col_vec4(e); return; }
    if (e - xv < cv.out_channels * cv.group_words_padded) { pack_im2col_filter_word(e - xv); }
}

// pack_im2col for the split-K GEMM: the next output_count threads zero the output.
@compute @workgroup_size(WG)
fn pack_im2col_zero(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    let xv = cv.packed_input_words / 4u;
    if (e < xv) { pack_im2col_vec4(e); return; }
    let fw = cv.out_channels * cv.group_words_padded;
    if (e - xv < fw) { pack_im2col_filter_word(e - xv); return; }
    zero_output(e - xv - fw);
}

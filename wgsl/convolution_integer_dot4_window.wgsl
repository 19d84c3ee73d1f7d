// ConvolutionInteger, window kernel on the packed 4x8 dot product: layers whose whole window is
// short (stems on 3 channels, small-C layers), one pass, no packed copy of the input.
//
// A pixel's window is its im2col row (convolution_integer_im2col.wgsl: K = Cg*KH*KW taps, four a
// signed 4x8 word, UINT8 flipped by 0x80, taps outside the input zx', lanes past K 0). A workgroup
// stages one block of CPT output channels' filter rows in the same word order (w_sh: for each k
// word, the CPT channels' words as vec4s of 4 channels) and keeps it while it walks `win_tiles`
// tiles of WG output pixels; each thread gathers its own pixel's window words from the input (the
// words of neighbouring pixels overlap, so the loads hit the cache) and multiplies each against
// the CPT channels' words of that k word, which every thread of the workgroup reads at the same
// address (a broadcast): CPT accumulators a thread, no workgroup barrier inside the walk, and the
// K words are not padded to whole 16-word steps. With x' = x - ox, w' = w - ow (as the dot4 GEMM):
//   y = sum x'w' - zw' * sum x' - zx' * sum w' + K * zx' * zw'      (wrapping i32)
// sum x' a pixel runs along with the products (one more dot product a word, only where zw' can be
// nonzero); sum w' a channel is summed once from the staged block (zc_sh holds K zx' zw' - zx' sum w').
// Three entry points: the row form walked kernel row by kernel row (convolution_integer_dot4_window_rows,
// the plan's choice on GPUs), any im2col form four words at a time (convolution_integer_dot4_window),
// and the row form 4 pixels a thread (convolution_integer_dot4_window_tile, CPU adapters: below). They
// are separate pipelines on purpose: with both loops in one entry point (the other dead by its
// override) the H100 ran 64-channel blocks 1.3-1.5x slower. CPT = 64 (64 accumulators) ran slower
// than 32 on every layer measured (the H100: stem 7x7 76.0 against 62.0 us), so blocks hold 16 or
// 32 channels (the tile form: 8).
// Bindings and uniforms: those of convolution_integer.wgsl (this kernel reads k_words, taps,
// channel_blocks, pixel_tiles, win_tiles and workgroups besides the geometry).

#include "convolution_integer.wgsl"
#include "convolution_integer_im2col.wgsl"

override NEED_SX: bool = true;  // zw' can be nonzero: the per-pixel sums of x'
override CPT: u32 = 32u;        // output channels a thread and a workgroup's block: 16 or 32
override KWP: u32 = 64u;        // staged k words a channel (sizes w_sh; >= k_words, a multiple of 4)
override RW: u32 = 1u;          // row form: words a kernel row, ceil(KW/4) (1 or 2)

var<workgroup> w_sh: array<vec4<u32>, KWP * (CPT / 4u)>;   // [k word][channel quad]
var<workgroup> zc_sh: array<vec4<i32>, CPT / 4u>;           // K zx' zw' - zx' sum w', a channel
var<workgroup> zw_sh: array<vec4<i32>, CPT / 4u>;           // zw', a channel

// The accumulators of a thread's CPT channels (named, not an array: on NVIDIA through naga and
// Vulkan, private arrays indexed in loops land in local memory).
struct Acc { c0: vec4<i32>, c1: vec4<i32>, c2: vec4<i32>, c3: vec4<i32>, c4: vec4<i32>, c5: vec4<i32>, c6: vec4<i32>, c7: vec4<i32> }

// c + the dot products of word a with the 4 channels' words of b.
fn q4(c: vec4<i32>, a: u32, b: vec4<u32>) -> vec4<i32> {
    return c + vec4<i32>(dot4I8Packed(a, b.x), dot4I8Packed(a, b.y), dot4I8Packed(a, b.z), dot4I8Packed(a, b.w));
}

// s + window word a times the staged words of k word row r (w_sh[r .. r + CPT/4)).
fn row(s: Acc, a: u32, r: u32) -> Acc {
    var o = s;
    o.c0 = q4(o.c0, a, w_sh[r]);
    o.c1 = q4(o.c1, a, w_sh[r + 1u]);
    o.c2 = q4(o.c2, a, w_sh[r + 2u]);
    o.c3 = q4(o.c3, a, w_sh[r + 3u]);
    if (CPT > 16u) {
        o.c4 = q4(o.c4, a, w_sh[r + 4u]);
        o.c5 = q4(o.c5, a, w_sh[r + 5u]);
        o.c6 = q4(o.c6, a, w_sh[r + 6u]);
        o.c7 = q4(o.c7, a, w_sh[r + 7u]);
    }
    return o;
}

// The outputs of channel quad j (channels 4j .. 4j + 3 of the block; the first at element o, the
// others out_stride_m apart): c - zw' sum x' + zc, channels past the group's (left) not stored.
fn put4(c: vec4<i32>, j: u32, sx: i32, o: u32, left: u32) {
    let y = c - zw_sh[j] * sx + zc_sh[j];
    let s = cv.out_stride_m;
    let m = 4u * j;
    if (m < left) { store_output(o + m * s, y.x); }
    if (m + 1u < left) { store_output(o + (m + 1u) * s, y.y); }
    if (m + 2u < left) { store_output(o + (m + 2u) * s, y.z); }
    if (m + 3u < left) { store_output(o + (m + 3u) * s, y.w); }
}

// A workgroup's channel block and pixel tiles.
struct WinBlock { chunk: u32, g: u32, m0: u32, left: u32, zx_byte: u32 }

// Workgroup wg's block: its chunk of pixel tiles (fastest), channel block and group; left: the
// group's channels from the block's first on; zx_byte: the input zero point's flipped byte.
fn win_block(wg: u32) -> WinBlock {
    let chunks = (cv.pixel_tiles + cv.win_tiles - 1u) / cv.win_tiles;
    let rest = wg / chunks;
    let blk = rest % cv.channel_blocks;
    let g = rest / cv.channel_blocks;
    let mg = cv.group_out_channels;
    let ml0 = blk * CPT;
    return WinBlock(wg % chunks, g, g * mg + ml0, mg - ml0, (u32(input_zp()) & 0xFFu) ^ x_flip());
}

// The workgroup's block (chunk of pixel tiles fastest, then channel block, then group); stages
// the block's filter rows (vec4 i of w_sh = k word i / QN, channels 4 (i % QN) .. + 3) and the
// zero-point terms of its channels; zx_byte: the input zero point's flipped byte. Every thread of
// the workgroup calls it (barriers).
fn stage_block(wg: u32, l: u32) -> WinBlock {
    let b = win_block(wg);
    let zx_byte = b.zx_byte;
    let zxp = i32(zx_byte << 24u) >> 24u;   // zx' as an integer
    let g = b.g;
    let mg = cv.group_out_channels;
    let ml0 = mg - b.left;          // the block's first channel in the group
    let m0 = b.m0;                  // ... and in the layer
    let QN = CPT / 4u;
    for (var i = l; i < cv.k_words * QN; i += WG) {
        let kq = i / QN;
        let ml = ml0 + 4u * (i % QN);
        var v = vec4<u32>(0u);
        let m = g * mg + ml;
        if (ml < mg) { v.x = im2col_filter_word(m, kq); }
        if (ml + 1u < mg) { v.y = im2col_filter_word(m + 1u, kq); }
        if (ml + 2u < mg) { v.z = im2col_filter_word(m + 2u, kq); }
        if (ml + 3u < mg) { v.w = im2col_filter_word(m + 3u, kq); }
        w_sh[i] = v;
    }
    workgroupBarrier();
    // The zero-point terms of channel quad l (sum w' over the block's staged words).
    if (l < QN) {
        var sw = vec4<i32>(0);
        for (var kq = 0u; kq < cv.k_words; kq++) {
            let b = w_sh[kq * QN + l];
            sw += vec4<i32>(dot4I8Packed(b.x, ONES), dot4I8Packed(b.y, ONES), dot4I8Packed(b.z, ONES),
                            dot4I8Packed(b.w, ONES));
        }
        let ml = ml0 + 4u * l;
        let m = m0 + 4u * l;
        let zw = vec4<i32>(chan_zw(ml, m), chan_zw(ml + 1u, m + 1u), chan_zw(ml + 2u, m + 2u), chan_zw(ml + 3u, m + 3u));
        zw_sh[l] = zw;
        zc_sh[l] = i32(cv.taps) * zxp * zw - zxp * sw;
    }
    workgroupBarrier();
    return b;
}

// A thread's output pixel: its index (past `pixels`: none), position and window origin.
struct Pixel { p: u32, n: u32, oh: u32, ow: u32, ih0: i32, iw0: i32, xn: u32 }

fn pixel_of(b: WinBlock, t: u32, l: u32) -> Pixel {
    let p = (b.chunk * cv.win_tiles + t) * WG + l;
    let o = out_pos(p);
    return Pixel(p, o.n, o.oh, o.ow, o.ih0, o.iw0, o.n * cv.in_stride_n + b.g * cv.group_in_channels * cv.in_stride_c);
}

// Store a pixel's CPT outputs.
fn store_acc(acc: Acc, sx: i32, b: WinBlock, px: Pixel) {
    let o = output_index(px.n, b.m0, px.oh, px.ow);
    put4(acc.c0, 0u, sx, o, b.left);
    put4(acc.c1, 1u, sx, o, b.left);
    put4(acc.c2, 2u, sx, o, b.left);
    put4(acc.c3, 3u, sx, o, b.left);
    if (CPT > 16u) {
        put4(acc.c4, 4u, sx, o, b.left);
        put4(acc.c5, 5u, sx, o, b.left);
        put4(acc.c6, 6u, sx, o, b.left);
        put4(acc.c7, 7u, sx, o, b.left);
    }
}

// The window's words four at a time in the form the overrides select (im2col_words4).
@compute @workgroup_size(WG)
fn convolution_integer_dot4_window(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                   @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }   // uniform across the workgroup
    let b = stage_block(wg, l);
    let QN = CPT / 4u;
    // (declared once and zeroed by assignment each tile: a `var` declared in the loop body kept the
    // previous tile's sums on lavapipe, naga 29)
    var acc: Acc;
    var sx: i32;
    for (var t = 0u; t < cv.win_tiles; t++) {
        let px = pixel_of(b, t, l);
        if (px.p >= cv.pixels) { break; }
        acc = Acc();
        sx = 0i;
        for (var kq = 0u; kq < cv.k_words; kq += 4u) {
            let a = im2col_words4(px.xn, px.ih0, px.iw0, kq, b.zx_byte);
            if (NEED_SX) {
                sx += dot4I8Packed(a.x, ONES) + dot4I8Packed(a.y, ONES) + dot4I8Packed(a.z, ONES) + dot4I8Packed(a.w, ONES);
            }
            let r = kq * QN;
            acc = row(acc, a.x, r);
            acc = row(acc, a.y, r + QN);
            acc = row(acc, a.z, r + 2u * QN);
            acc = row(acc, a.w, r + 3u * QN);
        }
        store_acc(acc, sx, b, px);
    }
}

// Row form (IM2COL_ROWS), walked kernel row by kernel row: a row's RW words are 4 * RW neighbouring
// bytes of one input row (RW + 1 word loads and funnel shifts), the lanes outside the input row (the
// same for every kernel row of the pixel) zx', those past KW 0.
@compute @workgroup_size(WG)
fn convolution_integer_dot4_window_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                        @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }   // uniform across the workgroup
    let b = stage_block(wg, l);
    let QN = CPT / 4u;
    let zrep = b.zx_byte * ONES;
    let flip = x_flip() * ONES;
    var acc: Acc;
    var sx: i32;
    for (var t = 0u; t < cv.win_tiles; t++) {
        let px = pixel_of(b, t, l);
        if (px.p >= cv.pixels) { break; }
        acc = Acc();
        sx = 0i;
        // a kernel row's lanes under the kernel (k), those inside the input row (keep) and the
        // others (pad: zx'), the same for every kernel row of the pixel
        let k0 = low_lanes(min(4u, cv.kernel_w));
        let k1 = select(0u, low_lanes(max(cv.kernel_w, 5u) - 4u), RW > 1u);   // (RW > 1: KW 5 to 8)
        let W = i32(cv.in_width);
        let keep0 = in_row(k0, px.iw0, W, 0u);
        let keep1 = in_row(k1, px.iw0 + 4, W, 0u);
        let pad0 = k0 & ~keep0;
        let pad1 = k1 & ~keep1;
        var r = 0u;   // the kernel row's first k word
        for (var c = 0u; c < cv.group_in_channels; c++) {
            let xc = i32(cv.input_base + px.xn + c * cv.in_stride_c) + px.iw0;
            for (var kh = 0u; kh < cv.kernel_h; kh++) {
                let ih = px.ih0 + i32(kh * cv.dilation_h);
                var w0 = zrep & (pad0 | keep0);   // a row outside the input: every tap zx'
                var w1 = zrep & (pad1 | keep1);
                if (ih >= 0 && ih < i32(cv.in_height)) {
                    let a = xc + ih * i32(cv.in_stride_h);
                    let i = a >> 2u;
                    let sh = u32(a & 3) * 8u;
                    let l0 = input[u32(max(i, 0))];   // (words before the binding: lanes outside the row)
                    let l1 = input[u32(i + 1)];
                    w0 = (zrep & pad0) | ((funnel(l0, l1, sh) ^ flip) & keep0);
                    if (RW > 1u) { w1 = (zrep & pad1) | ((funnel(l1, input[u32(i + 2)], sh) ^ flip) & keep1); }
                }
                if (NEED_SX) { sx += dot4I8Packed(w0, ONES) + dot4I8Packed(w1, ONES); }
                acc = row(acc, w0, r * QN);
                if (RW > 1u) { acc = row(acc, w1, (r + 1u) * QN); }
                r += RW;
            }
        }
        store_acc(acc, sx, b, px);
    }
}

// Tile form (CPU adapters): the row form with each thread taking 4 neighbouring output pixels of
// one output row (a quad) against a block of CPT = 8 channels, so that every staged vec4 a kernel
// row reads feeds 16 dot products (the pixel form's 4) and the quad's 4 row words come from one
// span of 4 input words (the pixel form loads 2 a word). On a CPU adapter (llvmpipe) every lane's
// load is a gather of its own, the lanes' addresses the same or not: lavapipe ran dot products from
// registers at about 120 GOPS, with a staged vec4 read per 4 of them at about 40. Smaller blocks
// (8 channels, 64 threads) also give the 2-core thread pool more workgroups to share out.

// A thread's 4 pixels: ow0 .. ow0 + 3 of output row (n, oh) (those past OW none); where their
// kernel rows start (xc: pixel ow0's byte address, the others stride_w bytes apart) and which
// lanes of each pixel's row words come from the input (keep), hold zx' (pad) or are past KW.
struct Quad { n: u32, oh: u32, ow0: u32, live: bool, xc: i32, ih0: i32, keep0: vec4<u32>, pad0: vec4<u32>,
              keep1: vec4<u32>, pad1: vec4<u32> }

fn quad_of(b: WinBlock, t: u32, l: u32) -> Quad {
    let qw = (cv.out_width + 3u) / 4u;
    let u = (b.chunk * cv.win_tiles + t) * WG + l;
    let r = u / qw;
    let rows = cv.pixels / cv.out_width;   // N * OH
    let n = min(r, rows - 1u) / cv.out_height;
    let oh = min(r, rows - 1u) % cv.out_height;
    let ow0 = 4u * (u % qw);
    let ih0 = i32(oh * cv.stride_h) - i32(cv.pad_top);
    let iw0 = i32(ow0 * cv.stride_w) - i32(cv.pad_left);
    let k0 = low_lanes(min(4u, cv.kernel_w));
    let k1 = select(0u, low_lanes(max(cv.kernel_w, 5u) - 4u), RW > 1u);
    let W = i32(cv.in_width);
    let c4 = vec4<i32>(iw0) + vec4<i32>(0, 1, 2, 3) * i32(cv.stride_w);
    let d4 = 4 * i32(cv.dilation_w);
    let keep0 = vec4<u32>(in_row_d(k0, c4.x), in_row_d(k0, c4.y), in_row_d(k0, c4.z), in_row_d(k0, c4.w));
    let keep1 = vec4<u32>(in_row_d(k1, c4.x + d4), in_row_d(k1, c4.y + d4), in_row_d(k1, c4.z + d4),
                          in_row_d(k1, c4.w + d4));
    let xn = n * cv.in_stride_n + b.g * cv.group_in_channels * cv.in_stride_c;
    return Quad(n, oh, ow0, r < rows, i32(cv.input_base + xn) + iw0, ih0, keep0, vec4<u32>(k0) & ~keep0, keep1,
                vec4<u32>(k1) & ~keep1);
}

// The lanes of k whose taps (columns c, c + dw, c + 2 dw, c + 3 dw) lie inside the input row.
fn in_row_d(k: u32, c: i32) -> u32 {
    if (cv.dilation_w == 1u) { return in_row(k, c, i32(cv.in_width), 0u); }
    var m = 0u;
    for (var j = 0u; j < 4u; j++) {
        let cj = c + i32(j * cv.dilation_w);
        if (cj >= 0 && cj < i32(cv.in_width)) { m |= 0xFFu << (8u * j); }
    }
    return k & m;
}

// Word k (0 .. 3) of the span s.
fn span_at(s: vec4<u32>, k: u32) -> u32 {
    return select(select(select(s.x, s.y, k == 1u), s.z, k == 2u), s.w, k == 3u);
}

// Byte o (0 .. 15) of the 16-byte span s.
fn span_byte(s: vec4<u32>, o: u32) -> u32 {
    return (span_at(s, o >> 2u) >> ((o & 3u) * 8u)) & 0xFFu;
}

// The 4 taps from byte o of the span s, dilation_w apart (a W-dilated kernel row): one word.
fn span_word_d(s: vec4<u32>, o: u32) -> u32 {
    let d = cv.dilation_w;
    return span_byte(s, o) | (span_byte(s, o + d) << 8u) | (span_byte(s, o + 2u * d) << 16u)
         | (span_byte(s, min(o + 3u * d, 15u)) << 24u);   // (past the span: a lane past KW, masked)
}

// The 4 bytes from byte o (0 .. 12) of the 16-byte span s: one word.
fn span_word(s: vec4<u32>, o: u32) -> u32 {
    let k = o >> 2u;
    return funnel(span_at(s, k), span_at(s, min(k + 1u, 3u)), (o & 3u) * 8u);   // (o = 12: hi not read)
}

// The 4 input words from byte `off` of the quad's kernel row kh of channel c on (o: that byte's
// place in the first word); inside: the row lies inside the input (else every tap is padding).
struct RowSpan { inside: bool, s: vec4<u32>, o: u32 }

fn quad_span(x: Quad, c: u32, kh: u32, off: u32) -> RowSpan {
    let ih = x.ih0 + i32(kh * cv.dilation_h);
    if (ih < 0 || ih >= i32(cv.in_height)) { return RowSpan(false, vec4<u32>(0u), 0u); }
    let a = x.xc + i32(c * cv.in_stride_c) + ih * i32(cv.in_stride_h) + i32(off);
    let i = a >> 2u;
    // (words before the binding: lanes outside the row)
    let s = vec4<u32>(input[u32(max(i, 0))], input[u32(max(i + 1, 0))], input[u32(max(i + 2, 0))],
                      input[u32(max(i + 3, 0))]);
    return RowSpan(true, s, u32(a & 3));
}

// The quad's row words v flipped, their lanes outside the input row zx' (pad), those past KW 0.
fn quad_lanes(v: vec4<u32>, keep: vec4<u32>, pad: vec4<u32>, zrep: u32, flip: u32) -> vec4<u32> {
    return (vec4<u32>(zrep) & pad) | ((v ^ vec4<u32>(flip)) & keep);
}

// Word w (0 or 1) of the quad's 4 pixels' kernel row kh of channel c (quad_lanes): one span of 4
// input words (the 4 pixels' taps lie within 3 + 3 stride_w + 3 dilation_w + 1 <= 16 bytes of the
// span's first word: stride_w + dilation_w <= 4).
fn quad_words(x: Quad, c: u32, kh: u32, w: u32, zrep: u32, flip: u32) -> vec4<u32> {
    let keep = select(x.keep0, x.keep1, w == 1u);
    let pad = select(x.pad0, x.pad1, w == 1u);
    let sp = quad_span(x, c, kh, 4u * w * cv.dilation_w);
    if (!sp.inside) { return vec4<u32>(zrep) & (pad | keep); }
    let s = sp.s;
    let o = sp.o;
    let st = cv.stride_w;
    var v: vec4<u32>;
    if (cv.dilation_w == 1u) {
        v = vec4<u32>(span_word(s, o), span_word(s, o + st), span_word(s, o + 2u * st), span_word(s, o + 3u * st));
    } else {
        v = vec4<u32>(span_word_d(s, o), span_word_d(s, o + st), span_word_d(s, o + 2u * st), span_word_d(s, o + 3u * st));
    }
    return quad_lanes(v, keep, pad, zrep, flip);
}

// sum x' of 4 words, a lane each.
fn sum4(v: vec4<u32>) -> vec4<i32> {
    return vec4<i32>(dot4I8Packed(v.x, ONES), dot4I8Packed(v.y, ONES), dot4I8Packed(v.z, ONES), dot4I8Packed(v.w, ONES));
}

// Both words of the quad's kernel row kh of channel c where KW > 4, W stride 1, no W dilation: one
// span serves them (the second word's taps start 4 bytes on: within byte 3 + 3 + 4 + 3 of it).
// lavapipe, against a span a word: 7x7 1x32x28x28 5565-5578 -> 5314-5330 us, KW 6 2884 -> 2781,
// 5x5 1x64x11x11 1594 -> 1497 (still slower than the GEMM there: 1275).
struct WordPair { a: vec4<u32>, b: vec4<u32> }

fn quad_word_pair(x: Quad, c: u32, kh: u32, zrep: u32, flip: u32) -> WordPair {
    let sp = quad_span(x, c, kh, 0u);
    if (!sp.inside) { return WordPair(vec4<u32>(zrep) & (x.pad0 | x.keep0), vec4<u32>(zrep) & (x.pad1 | x.keep1)); }
    let s = sp.s;
    let o = sp.o;
    let v0 = vec4<u32>(span_word(s, o), span_word(s, o + 1u), span_word(s, o + 2u), span_word(s, o + 3u));
    let v1 = vec4<u32>(span_word(s, o + 4u), span_word(s, o + 5u), span_word(s, o + 6u), span_word(s, o + 7u));
    return WordPair(quad_lanes(v0, x.keep0, x.pad0, zrep, flip), quad_lanes(v1, x.keep1, x.pad1, zrep, flip));
}

// acc + the quad's 4 pixels' words v times the block's 8 channels' words (quads q0, q1):
// Acc's c(2j), c(2j + 1) hold pixel j's two channel quads.
fn tile8(acc: Acc, v: vec4<u32>, q0: vec4<u32>, q1: vec4<u32>) -> Acc {
    var a = acc;
    a.c0 = q4(a.c0, v.x, q0);
    a.c1 = q4(a.c1, v.x, q1);
    a.c2 = q4(a.c2, v.y, q0);
    a.c3 = q4(a.c3, v.y, q1);
    a.c4 = q4(a.c4, v.z, q0);
    a.c5 = q4(a.c5, v.z, q1);
    a.c6 = q4(a.c6, v.w, q0);
    a.c7 = q4(a.c7, v.w, q1);
    return a;
}

// Store pixel j of the quad (channel quads c, d of the block), if it is inside the output.
fn store_pix(c: vec4<i32>, d: vec4<i32>, sx: i32, b: WinBlock, x: Quad, j: u32) {
    if (x.ow0 + j >= cv.out_width) { return; }
    let o = output_index(x.n, b.m0, x.oh, x.ow0 + j);
    put4(c, 0u, sx, o, b.left);
    put4(d, 1u, sx, o, b.left);
}

@compute @workgroup_size(WG)
fn convolution_integer_dot4_window_tile(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                        @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }   // uniform across the workgroup
    let b = stage_block(wg, l);            // (CPT = 8: two channel quads a k word)
    let zrep = b.zx_byte * ONES;
    let flip = x_flip() * ONES;
    var acc: Acc;
    for (var t = 0u; t < cv.win_tiles; t++) {
        let x = quad_of(b, t, l);
        if (!x.live) { break; }
        acc = Acc();
        var sx = vec4<i32>(0);
        var r = 0u;   // the k word
        for (var c = 0u; c < cv.group_in_channels; c++) {
            for (var kh = 0u; kh < cv.kernel_h; kh++) {
                if (RW > 1u && cv.stride_w == 1u && cv.dilation_w == 1u) {   // (lavapipe: 1.04-1.07x)
                    let v = quad_word_pair(x, c, kh, zrep, flip);
                    if (NEED_SX) { sx += sum4(v.a) + sum4(v.b); }
                    acc = tile8(acc, v.a, w_sh[2u * r], w_sh[2u * r + 1u]);
                    acc = tile8(acc, v.b, w_sh[2u * r + 2u], w_sh[2u * r + 3u]);
                    r += 2u;
                    continue;
                }
                for (var w = 0u; w < RW; w++) {
                    let v = quad_words(x, c, kh, w, zrep, flip);
                    if (NEED_SX) { sx += sum4(v); }
                    acc = tile8(acc, v, w_sh[2u * r], w_sh[2u * r + 1u]);
                    r += 1u;
                }
            }
        }
        store_pix(acc.c0, acc.c1, sx.x, b, x, 0u);
        store_pix(acc.c2, acc.c3, sx.y, b, x, 1u);
        store_pix(acc.c4, acc.c5, sx.z, b, x, 2u);
        store_pix(acc.c6, acc.c7, sx.w, b, x, 3u);
    }
}

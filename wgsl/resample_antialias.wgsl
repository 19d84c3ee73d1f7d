// Resample3 LINEAR with Antialiased = TRUE (DML_OPERATOR_RESAMPLE3, spec 4.5): a triangle filter
// stretched by max(1, 1/Scale) per axis, 1 to 4 dimensions (the host pads to 4, outermost first:
// n, c, h, w), float32, float16, int8 and uint8, every tensor strided.
//
// Index math: output[n,c,h,w] = sum_a Wn[n,a] * sum_b Wc[c,b] * sum_i Wh[h,i] * sum_j Ww[w,j]
//                                 * input[Fn[n]+a, Fc[c]+b, Fh[h]+i, Fw[w]+j]
// (innermost sum first, each in ascending tap order, f32: acc = acc + weight * value), then stored
// with the tensor's rounding (f16: pack2x16float; i8/u8: round half to even, saturate).
// The host computes every axis's taps (first pixel F, tap count, normalised weights W) with the
// reference's float32 arithmetic (dmlwgsl.reference.resample.antialias_taps); the shader only sums.
// table (u32 words), per axis d: heads at p.head[d] + 2 * o = (first pixel, tap count) of output o;
//        weights at p.weight[d] + o * p.tap_stride[d] + j (f32 bits).
// Bindings: input (u32 words: 16- and 8-bit values move as raw bits), output (u32 words), output_atomic
//           (the same, atomic, for 8/16-bit elements at any strides), p (uniforms), table.
// Entry points: aa_element (one thread per output, 4-byte elements, any strides), aa_element_atomic
// (8/16-bit elements at any strides: merged into words with atomics), aa_tile (the fast path, see
// the end of this file).
// Overrides (structure, part of the pipeline cache key): DTYPE, WG, TAPS_W and TAPS_H (aa_tile).

override WG: u32 = 256u;
override DTYPE: u32 = 0u;   // 0 float32, 1 float16, 2 int8, 3 uint8
override TAPS_W: u32 = 4u;  // aa_tile: most taps of an output along W and along H (its tap loops
override TAPS_H: u32 = 4u;  // run to these constants, so the compiler can unroll them)

struct Params {
    out_sizes: vec4<u32>,    // output sizes padded to 4 dims, outermost first
    out_strides: vec4<u32>,  // output strides in elements
    in_strides: vec4<u32>,   // input strides in elements
    head: vec4<u32>,         // first word of each axis's (first, count) pairs
    weight: vec4<u32>,       // first word of each axis's weights
    tap_stride: vec4<u32>,   // weights per output entry, per axis
    info: vec4<u32>,         // x output element count, y input base, z output base (elements), w unused
    tile: vec4<u32>,         // aa_tile: x tile width, y tile height (outputs), z tiles per row, w tiles per plane
    tile2: vec4<u32>,        // aa_tile: x workgroups, y planes' channel count, zw unused
}

#include "common/grid.wgsl"

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<storage, read_write> output_atomic: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> table: array<u32>;

fn per_word() -> u32 {
    if (DTYPE == 0u) { return 1u; }
    if (DTYPE == 1u) { return 2u; }
    return 4u;
}

// Input element s as f32 (exact for every input type).
fn load(s: u32) -> f32 {
    if (DTYPE == 0u) { return bitcast<f32>(input[s]); }
    if (DTYPE == 1u) { return unpack2x16float(input[s >> 1u] >> ((s & 1u) * 16u)).x; }
    let b = (input[s >> 2u] >> ((s & 3u) * 8u)) & 0xFFu;
    if (DTYPE == 2u) { return f32(i32(b << 24u) >> 24u); }
    return f32(b);
}

// Element k (0-based) of input word `word` as f32.
fn unpack_elem(word: u32, k: u32) -> f32 {
    if (DTYPE == 0u) { return bitcast<f32>(word); }
    if (DTYPE == 1u) { return unpack2x16float(word >> (k * 16u)).x; }
    let b = (word >> (k * 8u)) & 0xFFu;
    if (DTYPE == 2u) { return f32(i32(b << 24u) >> 24u); }
    return f32(b);
}

// An f32 result as the output type's bits (low bits of the word).
fn store_bits(v: f32) -> u32 {
    if (DTYPE == 0u) { return bitcast<u32>(v); }
    if (DTYPE == 1u) { return pack2x16float(vec2<f32>(v, 0.0)) & 0xFFFFu; }
    if (DTYPE == 2u) { return u32(i32(clamp(round(v), -128.0, 127.0))) & 0xFFu; }
    return u32(clamp(round(v), 0.0, 255.0));
}

// (first pixel, tap count) of output o along axis d.
fn head(d: u32, o: u32) -> vec2<u32> {
    let k = p.head[d] + 2u * o;
    return vec2<u32>(table[k], table[k + 1u]);
}

fn weight(d: u32, o: u32, j: u32) -> f32 {
    return bitcast<f32>(table[p.weight[d] + o * p.tap_stride[d] + j]);
}

// (n, c, h, w) of output element e in row-major order.
fn coords(e: u32) -> vec4<u32> {
    var r = e;
    let w = r % p.out_sizes.w;
    r = r / p.out_sizes.w;
    let h = r % p.out_sizes.z;
    r = r / p.out_sizes.z;
    let c = r % p.out_sizes.y;
    return vec4<u32>(r / p.out_sizes.y, c, h, w);
}

// The filtered value of output element o (the nested sums of the header, in their order).
fn value(o: vec4<u32>) -> f32 {
    let hn = head(0u, o.x);
    let hc = head(1u, o.y);
    let hh = head(2u, o.z);
    let hw = head(3u, o.w);
    var acc_n = 0.0;
    for (var a = 0u; a < hn.y; a++) {
        var acc_c = 0.0;
        for (var b = 0u; b < hc.y; b++) {
            var acc_h = 0.0;
            for (var i = 0u; i < hh.y; i++) {
                let row = p.info.y + (hn.x + a) * p.in_strides.x + (hc.x + b) * p.in_strides.y
                    + (hh.x + i) * p.in_strides.z;
                var acc_w = 0.0;
                for (var j = 0u; j < hw.y; j++) {
                    acc_w = acc_w + weight(3u, o.w, j) * load(row + (hw.x + j) * p.in_strides.w);
                }
                acc_h = acc_h + weight(2u, o.z, i) * acc_w;
            }
            acc_c = acc_c + weight(1u, o.y, b) * acc_h;
        }
        acc_n = acc_n + weight(0u, o.x, a) * acc_c;
    }
    return acc_n;
}

@compute @workgroup_size(WG)
fn aa_element(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= p.info.x) { return; }
    let o = coords(e);
    output[p.info.z + dot(o, p.out_strides)] = store_bits(value(o));
}

@compute @workgroup_size(WG)
fn aa_element_atomic(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= p.info.x) { return; }
    let o = coords(e);
    let dst = p.info.z + dot(o, p.out_strides);
    let eb = 4u / per_word();
    let sh = (dst % per_word()) * eb * 8u;
    let mask = select(0xFFu, 0xFFFFu, DTYPE == 1u) << sh;
    atomicAnd(&output_atomic[dst / per_word()], ~mask);
    atomicOr(&output_atomic[dst / per_word()], store_bits(value(o)) << sh);
}

// -- aa_tile: the fast path ---------------------------------------------------------------------
// One workgroup = one tile of up to p.tile.y output rows x p.tile.x output columns (both powers of
// two, log2 in p.tile2.z and .w) of one (n, c) plane; the n and c axes are not filtered (one tap
// of weight 1; the host checks). Index math stays out of the inner loops: every thread keeps one
// column (or row) of the tile, so there is no division per element.
//   0. the tile's W and H taps (first pixel relative to the region, count, weights) -> hds, wts
//   1. the input region under the tile's taps -> src, as f32: each group of 32 threads copies whole
//      region rows, coalesced (one load per input word when the row is contiguous), four loads in
//      flight per thread
//   2. along W: mid[r, j] = sum_q Ww[j, q] * src[r, F(j) + q], for every region row r
//   3. along H: output[i, j] = sum_q Wh[i, q] * mid[F(i) + q, j], one output word per thread
//      (8/16-bit outputs: rows of whole words, the host checks)
// The host sizes tiles so that src, mid, wts and hds fit.
const SRC_N: u32 = 4096u;
const MID_N: u32 = 2048u;
const WTS_N: u32 = 768u;
const HDS_N: u32 = 256u;
var<workgroup> src: array<f32, SRC_N>;
var<workgroup> mid: array<f32, MID_N>;
var<workgroup> wts: array<f32, WTS_N>;  // W weights at q * tile.x + j, then H weights at + q * tile.y + i
var<workgroup> hds: array<u32, HDS_N>;  // (first - region start, count): column j at 2j, row i at 2 * (tile.x + i)

// (row, slot) of the region slot WG further on (dr, dq: WG / span, WG % span).
fn advance(a: vec2<u32>, dr: u32, dq: u32, span: u32) -> vec2<u32> {
    var r = a.x + dr;
    var q = a.y + dq;
    if (q >= span) {
        q -= span;
        r += 1u;
    }
    return vec2<u32>(r, q);
}

// Raw bits of region slot a = (row, slot) (rb0: element index of the region's (0, 0)): an input
// word where rows are contiguous, else one element (in the low bits); 0 when not `live`.
fn slot(rb0: u32, a: vec2<u32>, live: bool) -> u32 {
    if (!live) { return 0u; }
    let rb = rb0 + a.x * p.in_strides.z;
    if (p.in_strides.w == 1u) { return input[rb / per_word() + a.y]; }
    let s = rb + a.y * p.in_strides.w;
    if (DTYPE == 0u) { return input[s]; }
    return input[s / per_word()] >> ((s % per_word()) * (32u / per_word()));
}

// Store region slot a's elements (see slot) into src.
fn put(rb0: u32, cols: u32, a: vec2<u32>, live: bool, bits: u32) {
    if (!live) { return; }
    if (p.in_strides.w != 1u || DTYPE == 0u) {
        src[a.x * cols + a.y] = unpack_elem(bits, 0u);
        return;
    }
    let pw = per_word();
    let rb = rb0 + a.x * p.in_strides.z;
    let e0 = (rb / pw + a.y) * pw;
    for (var u = 0u; u < pw; u++) {
        let e = e0 + u;
        if (e >= rb && e < rb + cols) { src[a.x * cols + (e - rb)] = unpack_elem(bits, u); }
    }
}

@compute @workgroup_size(WG)
fn aa_tile(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let wg = wid.x + (wid.y + wid.z * nwg.y) * nwg.x;
    if (wg >= p.tile2.x) { return; }   // uniform across the workgroup
    let tx = p.tile.x;
    let ty = p.tile.y;
    let plane = wg / p.tile.w;
    let t = wg % p.tile.w;
    let oh0 = (t / p.tile.z) * ty;
    let ow0 = (t % p.tile.z) * tx;
    let th = min(ty, p.out_sizes.z - oh0);
    let tw = min(tx, p.out_sizes.w - ow0);
    let n = plane / p.tile2.y;
    let c = plane % p.tile2.y;
    let base = p.info.y + head(0u, n).x * p.in_strides.x + head(1u, c).x * p.in_strides.y;
    // the region: input rows r0.. and columns c0.. under the tile's taps (firsts grow with o)
    let r0 = head(2u, oh0).x;
    let hl = head(2u, oh0 + th - 1u);
    let rows = hl.x + hl.y - r0;
    let c0 = head(3u, ow0).x;
    let wl = head(3u, ow0 + tw - 1u);
    let cols = wl.x + wl.y - c0;
    let taps_w = p.tap_stride.w;
    let taps_h = p.tap_stride.z;
    let hb = tx * taps_w;  // first H weight in wts

    // 0. taps of the tile's columns and rows
    if (lid < tw) {
        let h = head(3u, ow0 + lid);
        hds[2u * lid] = h.x - c0;
        hds[2u * lid + 1u] = h.y;
    }
    if (lid < th) {
        let h = head(2u, oh0 + lid);
        hds[2u * (tx + lid)] = h.x - r0;
        hds[2u * (tx + lid) + 1u] = h.y;
    }
    for (var k = lid; k < hb; k += WG) {
        let j = k & (tx - 1u);
        if (j < tw) { wts[k] = weight(3u, ow0 + j, k >> p.tile2.z); }
    }
    for (var k = lid; k < ty * taps_h; k += WG) {
        let i = k & (ty - 1u);
        if (i < th) { wts[hb + k] = weight(2u, oh0 + i, k >> p.tile2.w); }
    }

    // 1. the region: slot k (row k / span, slot k % span) per thread, k += WG; the row and slot
    //    advance by additions (one division per thread, none per slot)
    let pw = per_word();
    let contiguous = p.in_strides.w == 1u;
    let span = select(cols, (cols + 2u * pw - 2u) / pw, contiguous);  // slots per row
    let total = rows * span;
    let dr = WG / span;
    let dq = WG % span;
    var cur = vec2<u32>(lid / span, lid % span);  // (row, slot) of slot k
    let rb0 = base + r0 * p.in_strides.z + c0;     // element index of the region's (0, 0)
    for (var k = lid; k < total; k += 4u * WG) {
        let a0 = cur;
        let a1 = advance(a0, dr, dq, span);
        let a2 = advance(a1, dr, dq, span);
        let a3 = advance(a2, dr, dq, span);
        cur = advance(a3, dr, dq, span);
        let b0 = slot(rb0, a0, k < total);
        let b1 = slot(rb0, a1, k + WG < total);
        let b2 = slot(rb0, a2, k + 2u * WG < total);
        let b3 = slot(rb0, a3, k + 3u * WG < total);
        put(rb0, cols, a0, k < total, b0);
        put(rb0, cols, a1, k + WG < total, b1);
        put(rb0, cols, a2, k + 2u * WG < total, b2);
        put(rb0, cols, a3, k + 3u * WG < total, b3);
    }
    workgroupBarrier();

    // 2. along W: thread column j for rows lid / tx, + WG / tx, ...
    let j = lid & (tx - 1u);
    if (j < tw) {
        let off = hds[2u * j];
        let cnt = hds[2u * j + 1u];
        for (var r = lid >> p.tile2.z; r < rows; r += WG >> p.tile2.z) {
            let s0 = r * cols + off;
            var acc_w = 0.0;
            for (var q = 0u; q < TAPS_W; q++) {  // a constant count: unrolled; taps past cnt add nothing
                acc_w = acc_w + select(0.0, wts[q * tx + j] * src[s0 + min(q, cnt - 1u)], q < cnt);
            }
            mid[r * tx + j] = acc_w;
        }
    }
    workgroupBarrier();

    // 3. along H: thread word column (pw outputs from j0) for rows lid / groups, ...
    let gsh = p.tile2.z - (pw >> 1u);  // log2(tx / pw): pw is 1, 2 or 4
    let j0 = (lid & ((1u << gsh) - 1u)) * pw;
    if (j0 < tw) {
        for (var i = lid >> gsh; i < th; i += WG >> gsh) {
            let offh = hds[2u * (tx + i)];
            let cnth = hds[2u * (tx + i) + 1u];
            let dst = p.info.z + n * p.out_strides.x + c * p.out_strides.y + (oh0 + i) * p.out_strides.z
                + (ow0 + j0) * p.out_strides.w;
            var word = 0u;
            var mask = 0u;
            for (var u = 0u; u < pw; u++) {
                let jj = j0 + u;
                if (jj < tw) {
                    var acc_h = 0.0;
                    for (var q = 0u; q < TAPS_H; q++) {
                        let v = wts[hb + q * ty + i] * mid[(offh + min(q, cnth - 1u)) * tx + jj];
                        acc_h = acc_h + select(0.0, v, q < cnth);
                    }
                    // n and c: one tap of weight 1 (acc = 0 + 1 * v, exactly v)
                    let sh = ((dst + u) % pw) * (32u / pw);
                    word |= store_bits(acc_h) << sh;
                    mask |= select(0xFFFFFFFFu, select(0xFFu, 0xFFFFu, DTYPE == 1u), pw > 1u) << sh;
                }
            }
            let wi = dst / pw;
            if (mask != 0xFFFFFFFFu) {
                // a row's last word with fewer outputs: its other bytes are gaps or lie outside the
                // tensor, which no other thread writes, so a plain read-modify-write is safe
                word |= output[wi] & ~mask;
            }
            output[wi] = word;
        }
    }
}

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
// Entry points: aa_rows (n and c not filtered: one thread owns CW output columns and walks a band
// of output rows, filtering each input row along W once for every output row that uses it, see
// below), aa_element (one thread per output, 4-byte elements, any strides), aa_element_atomic
// (8/16-bit elements at any strides: merged into words with atomics), aa_tile (workgroup-memory
// tiles, see the end of this file; on request only: measured slower on the H100, see
// src/dmlwgsl/ops/_resample_antialias.py).
// Overrides (structure, part of the pipeline cache key): DTYPE, WG, CW, KA.

override WG: u32 = 256u;
override DTYPE: u32 = 0u;   // 0 float32, 1 float16, 2 int8, 3 uint8
override CW: u32 = 4u;      // aa_rows: output columns per thread, 1, 2 or 4 (a multiple of the elements per word)
override KA: u32 = 2u;      // aa_rows: output rows accumulated at once (<= KA_CAP; the host computes it)

struct Params {
    out_sizes: vec4<u32>,    // output sizes padded to 4 dims, outermost first
    out_strides: vec4<u32>,  // output strides in elements
    in_strides: vec4<u32>,   // input strides in elements
    head: vec4<u32>,         // first word of each axis's (first, count) pairs
    weight: vec4<u32>,       // first word of each axis's weights
    tap_stride: vec4<u32>,   // weights per output entry, per axis
    count: u32,              // output elements
    input_base: u32,         // first input element inside the binding
    output_base: u32,        // first output element inside the binding
    tile_w: u32,             // aa_tile: tile width (outputs)
    tile_h: u32,             // aa_tile: tile height (outputs)
    tiles_per_row: u32,      // aa_tile: tiles across a plane's width
    tiles_per_plane: u32,    // aa_tile: tiles in one (n, c) plane
    tile_workgroups: u32,    // aa_tile: workgroups in the dispatch
    tile_planes_c: u32,      // aa_tile: the channel count of the planes
    column_groups: u32,      // aa_rows: column groups per output row
    bands: u32,              // aa_rows: bands per (n, c) plane
    band_rows: u32,          // aa_rows: output rows per band
    walk_threads: u32,       // aa_rows: threads in the dispatch
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
                let row = p.input_base + (hn.x + a) * p.in_strides.x + (hc.x + b) * p.in_strides.y
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
    if (e >= p.count) { return; }
    let o = coords(e);
    output[p.output_base + dot(o, p.out_strides)] = store_bits(value(o));
}

@compute @workgroup_size(WG)
fn aa_element_atomic(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= p.count) { return; }
    let o = coords(e);
    let dst = p.output_base + dot(o, p.out_strides);
    let eb = 4u / per_word();
    let sh = (dst % per_word()) * eb * 8u;
    let mask = select(0xFFu, 0xFFFFu, DTYPE == 1u) << sh;
    atomicAnd(&output_atomic[dst / per_word()], ~mask);
    atomicOr(&output_atomic[dst / per_word()], store_bits(value(o)) << sh);
}

// -- aa_tile: workgroup-memory tiles ------------------------------------------------------------
// One workgroup = one tile of p.tile_h output rows x p.tile_w output columns of one (n, c) plane
// (the n and c axes are not filtered: one tap of weight 1, the host checks). It stages the input
// region under the tile's taps in workgroup memory (coalesced word loads, each input element read
// once per tile), filters it along W into `mid` (one value per region row and tile column), then
// along H, and stores whole output words (8/16-bit outputs: rows of whole words, the host checks).
// The host sizes tiles so that the region fits SRC_N and TILE_ROWS x tile width fits MID_N.
const SRC_N: u32 = 2560u;
const MID_N: u32 = 1536u;
var<workgroup> src: array<f32, SRC_N>;
var<workgroup> mid: array<f32, MID_N>;

// Staging of aa_tile's region: slot k is an input word of a contiguous row (w stride 1), else one
// element; `span` slots per region row.
struct Stage {
    base: u32,   // element index of the region's first element
    cols: u32,
    n: u32,      // slots
    span: u32,   // slots per row
}

// Element index of the first element of region row r.
fn row_start(g: Stage, r: u32) -> u32 { return g.base + r * p.in_strides.z; }

// The raw word (or element bits) of slot k; 0 past the last slot.
fn fetch(g: Stage, k: u32) -> u32 {
    if (k >= g.n) { return 0u; }
    let r = k / g.span;
    let q = k % g.span;
    if (p.in_strides.w == 1u) { return input[row_start(g, r) / per_word() + q]; }
    let s = row_start(g, r) + q * p.in_strides.w;
    if (DTYPE == 0u) { return input[s]; }
    return input[s / per_word()] >> ((s % per_word()) * (32u / per_word()));
}

// Store slot k's elements into src.
fn scatter(g: Stage, k: u32, word: u32) {
    if (k >= g.n) { return; }
    let r = k / g.span;
    let q = k % g.span;
    if (p.in_strides.w != 1u) {
        src[r * g.cols + q] = unpack_elem(word, 0u);
        return;
    }
    let pw = per_word();
    let rb = row_start(g, r);
    let e0 = (rb / pw + q) * pw;
    for (var u = 0u; u < pw; u++) {
        let e = e0 + u;
        if (e >= rb && e < rb + g.cols) { src[r * g.cols + (e - rb)] = unpack_elem(word, u); }
    }
}

@compute @workgroup_size(WG)
fn aa_tile(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= p.tile_workgroups) { return; }   // uniform across the workgroup
    let plane = wg / p.tiles_per_plane;
    let t = wg % p.tiles_per_plane;
    let oh0 = (t / p.tiles_per_row) * p.tile_h;
    let ow0 = (t % p.tiles_per_row) * p.tile_w;
    let th = min(p.tile_h, p.out_sizes.z - oh0);
    let tw = min(p.tile_w, p.out_sizes.w - ow0);
    let n = plane / p.tile_planes_c;
    let c = plane % p.tile_planes_c;
    let base = p.input_base + head(0u, n).x * p.in_strides.x + head(1u, c).x * p.in_strides.y;
    // The region: input rows r0.. and columns c0.. under the tile's taps (firsts grow with o).
    let r0 = head(2u, oh0).x;
    let hl = head(2u, oh0 + th - 1u);
    let rows = hl.x + hl.y - r0;
    let c0 = head(3u, ow0).x;
    let wl = head(3u, ow0 + tw - 1u);
    let cols = wl.x + wl.y - c0;

    // 1. stage the region as f32; along a contiguous row, one load per input word. Each thread
    //    issues four loads before it stores any: more loads in flight, closer to the copy's bandwidth.
    let pw = per_word();
    var g: Stage;
    g.base = base + r0 * p.in_strides.z + c0;  // element index of region (0, 0)
    g.cols = cols;
    g.n = rows * cols;
    g.span = cols;
    if (p.in_strides.w == 1u) {
        g.span = (cols + 2u * pw - 2u) / pw;  // most words `cols` elements can touch, wherever they start
        g.n = rows * g.span;
    }
    for (var k = lid; k < g.n; k += 4u * WG) {
        let v0 = fetch(g, k);
        let v1 = fetch(g, k + WG);
        let v2 = fetch(g, k + 2u * WG);
        let v3 = fetch(g, k + 3u * WG);
        scatter(g, k, v0);
        scatter(g, k + WG, v1);
        scatter(g, k + 2u * WG, v2);
        scatter(g, k + 3u * WG, v3);
    }
    workgroupBarrier();

    // 2. along W: mid[r, j] = sum_k Ww[ow0 + j, k] * src[r, F(ow0 + j) - c0 + k]
    for (var k = lid; k < rows * tw; k += WG) {
        let r = k / tw;
        let j = k % tw;
        let hw = head(3u, ow0 + j);
        let s0 = r * cols + hw.x - c0;
        var acc_w = 0.0;
        for (var q = 0u; q < hw.y; q++) {
            acc_w = acc_w + weight(3u, ow0 + j, q) * src[s0 + q];
        }
        mid[r * p.tile_w + j] = acc_w;
    }
    workgroupBarrier();

    // 3. along H, one output word per thread (1, 2 or 4 outputs of one row)
    let gw = (tw + pw - 1u) / pw;
    for (var k = lid; k < th * gw; k += WG) {
        let i = k / gw;
        let j0 = (k % gw) * pw;
        let hh = head(2u, oh0 + i);
        let dst = p.output_base + n * p.out_strides.x + c * p.out_strides.y + (oh0 + i) * p.out_strides.z
            + (ow0 + j0) * p.out_strides.w;
        var word = 0u;
        var mask = 0u;
        for (var q = 0u; q < pw; q++) {
            let j = j0 + q;
            if (j < tw) {
                var acc_h = 0.0;
                for (var a = 0u; a < hh.y; a++) {
                    acc_h = acc_h + weight(2u, oh0 + i, a) * mid[(hh.x - r0 + a) * p.tile_w + j];
                }
                // n and c: one tap of weight 1 (acc = 0 + 1 * v, exactly v)
                let sh = ((dst + q) % pw) * (32u / pw);
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

// -- aa_rows: row walk -----------------------------------------------------------------------------
// Thread t owns output columns ow0 .. ow0 + CW - 1 of output rows oh_lo .. oh_hi - 1 (a band) of one
// (n, c) plane (n and c not filtered: one tap of weight 1, the host checks). It keeps its columns'
// W taps in registers and walks the input rows under the band in ascending order: each row is
// filtered along W once (v), then added to every output row whose H taps cover it; those rows form
// a sliding window of at most KA accumulators (first pixels and last pixels of the H taps grow with
// the output row: the host checks), acc[0] being the oldest row not finished. When the walk passes
// an output row's last tap the row is stored (whole words for 8/16-bit outputs: the host checks that
// rows start on word boundaries) and the window slides. Each sum runs in the header's order:
// acc_h = 0, then + Wh[i] * acc_w(row Fh + i) for ascending i, so results equal aa_element's.
const TW_CAP: u32 = 12u;   // W taps per column held in registers (the host checks the count)
const KA_CAP: u32 = 8u;    // largest KA

fn store_cols(dst: u32, v: vec4<f32>, ncol: u32) {
    if (DTYPE == 0u) {
        for (var q = 0u; q < 4u; q++) {
            if (q < ncol) { output[dst + q * p.out_strides.w] = bitcast<u32>(v[q]); }
        }
        return;
    }
    // 8/16-bit: w stride 1 and dst a multiple of the elements per word (the host checks)
    let pw = per_word();
    let eb = 32u / pw;
    for (var k = 0u; k < 4u; k += pw) {
        if (k < ncol) {
            var word = 0u;
            var mask = 0u;
            for (var u = 0u; u < pw; u++) {
                let q = k + u;
                if (q < ncol) {
                    word |= store_bits(v[q]) << (u * eb);
                    mask |= select(0xFFu, 0xFFFFu, DTYPE == 1u) << (u * eb);
                }
            }
            let wi = (dst + k) / pw;
            if (mask != 0xFFFFFFFFu) {
                // a row's last word with fewer outputs: its other bytes are gaps or lie outside
                // the tensor, which no other thread writes, so a plain read-modify-write is safe
                word |= output[wi] & ~mask;
            }
            output[wi] = word;
        }
    }
}

@compute @workgroup_size(WG)
fn aa_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_id(gid, nwg);
    if (t >= p.walk_threads) { return; }
    let g = t % p.column_groups;
    let rest = t / p.column_groups;
    let band = rest % p.bands;
    let plane = rest / p.bands;
    let n = plane / p.out_sizes.y;
    let c = plane % p.out_sizes.y;
    let ow0 = g * CW;
    let ncol = min(CW, p.out_sizes.w - ow0);

    // this thread's W taps, in registers
    var fw = vec4<u32>(0u);
    var cw = vec4<u32>(0u);
    var wts: array<f32, 48>;  // 4 * TW_CAP
    for (var q = 0u; q < 4u; q++) {
        if (q < ncol) {
            let h = head(3u, ow0 + q);
            fw[q] = h.x;
            cw[q] = h.y;
            for (var j = 0u; j < TW_CAP; j++) {
                if (j < h.y) { wts[q * TW_CAP + j] = weight(3u, ow0 + q, j); }
            }
        }
    }
    let oh_lo = band * p.band_rows;
    let oh_hi = min(oh_lo + p.band_rows, p.out_sizes.z);
    let plane_in = p.input_base + head(0u, n).x * p.in_strides.x + head(1u, c).x * p.in_strides.y;
    let plane_out = p.output_base + n * p.out_strides.x + c * p.out_strides.y + ow0 * p.out_strides.w;
    let r0 = head(2u, oh_lo).x;
    let hl = head(2u, oh_hi - 1u);
    let r1 = hl.x + hl.y;

    var acc: array<vec4<f32>, KA_CAP>;  // zero-initialised
    var done = oh_lo;                   // the output row in acc[0]
    for (var r = r0; r < r1; r++) {
        // along W: this row's value under each of the thread's columns
        let row = plane_in + r * p.in_strides.z;
        var v = vec4<f32>(0.0);
        for (var q = 0u; q < 4u; q++) {
            if (q < ncol) {
                var acc_w = 0.0;
                for (var j = 0u; j < TW_CAP; j++) {
                    if (j < cw[q]) {
                        acc_w = acc_w + wts[q * TW_CAP + j] * load(row + (fw[q] + j) * p.in_strides.w);
                    }
                }
                v[q] = acc_w;
            }
        }
        // along H: into every live output row whose taps cover row r
        for (var k = 0u; k < KA_CAP; k++) {
            let oh = done + k;
            if (k < KA && oh < oh_hi) {
                let h = head(2u, oh);
                if (r >= h.x && r < h.x + h.y) {
                    acc[k] = acc[k] + weight(2u, oh, r - h.x) * v;
                }
            }
        }
        // store the rows whose last tap is r, and slide the window
        loop {
            if (done >= oh_hi) { break; }
            let h = head(2u, done);
            if (h.x + h.y - 1u != r) { break; }
            // n and c: one tap of weight 1 (acc = 0 + 1 * v, exactly v)
            store_cols(plane_out + done * p.out_strides.z, acc[0], ncol);
            for (var k = 0u; k + 1u < KA_CAP; k++) { acc[k] = acc[k + 1u]; }
            acc[KA_CAP - 1u] = vec4<f32>(0.0);
            done += 1u;
        }
    }
}

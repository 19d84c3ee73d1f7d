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
// table (u32 words), per axis d, output-fastest: first pixel of output o at p.head[d] + o, its tap
//        count at p.head[d] + p.entries[d] + o, weight j at p.weight[d] + j * p.entries[d] + o (f32
//        bits); entries and offsets are multiples of 4 (table4: the same words as vec4s).
// Bindings: input (u32 words: 16- and 8-bit values move as raw bits), output (u32 words), output_atomic
//           (the same, atomic, for 8/16-bit elements at any strides), p (uniforms), table.
// Entry points: aa_taps (one thread owns CW output columns of RB output rows and sums their W taps
// with written-out code, every tap's load independent of the others; GW: 8/16-bit rows that are not
// whole words, NC: the n or c axis filtered; the default where it runs, see the end of this file), aa_rows (n and c not filtered: one thread owns CW output columns and walks a band
// of output rows, filtering each input row along W once for every output row that uses it, see
// below), aa_element (one thread per output, 4-byte elements, any strides), aa_element_words
// (8/16-bit elements, an output axis of stride 1: one thread per output word of a row along it),
// aa_element_atomic (8/16-bit elements at any strides: merged into words with atomics), aa_tile (workgroup-memory
// tiles, see the end of this file; on request only: measured slower on the H100, see
// src/dmlwgsl/ops/_resample_antialias.py).
// Overrides (structure, part of the pipeline cache key): DTYPE, WG, CW, KA; aa_taps' TH, TW, RB, GW, NC.

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
    entries: vec4<u32>,      // table entries per axis (the output length rounded up to 4)
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
    div_w: vec2<u32>,        // magic pairs (grid.wgsl's div_magic) of out_sizes.w, .z, .y and
    div_h: vec2<u32>,        //   column_groups
    div_c: vec2<u32>,
    div_groups: vec2<u32>,
    div_bands: vec2<u32>,    // aa_taps: magic pair of p.bands
    pat_w: vec4<u32>,        // aa_pat (resample_antialias_pat.wgsl): W slot weights, step, first word, row words
    pat_h: vec4<u32>,        // aa_pat: H slot weights, step, first row, slot table rows
    pat_last: u32,           // aa_pat: the bits of a row's last word inside the row
    pat_rows: u32,           // aa_pat: input rows (H)
    ew_order: vec4<u32>,     // aa_element_words: output axes, the stride-1 axis first, then by stride
    ew_merged: u32,          // aa_element_words: the first ew_merged of them make one contiguous row
    ew_len: u32,             // aa_element_words: the row's elements (the product of their sizes)
}

#include "common/grid.wgsl"
#include "common/bytes.wgsl"
// (merge_word: aa_element_words, aa_taps' GW form, aa_pat's OA form)
#include "common/merge.wgsl"

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<storage, read_write> output_atomic: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> table: array<u32>;
@group(0) @binding(5) var<storage, read> table2: array<vec2<u32>>;  // aa_taps: the table, two words at a time
@group(0) @binding(6) var<storage, read> table4: array<vec4<u32>>;  // aa_taps: four words at a time

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
    if (DTYPE == 2u) { return round_byte(v, -128.0, 127.0); }
    return round_byte(v, 0.0, 255.0);
}

// (first pixel, tap count) of output o along axis d.
fn head(d: u32, o: u32) -> vec2<u32> {
    let k = p.head[d] + o;
    return vec2<u32>(table[k], table[k + p.entries[d]]);
}

fn weight(d: u32, o: u32, j: u32) -> f32 {
    return bitcast<f32>(table[p.weight[d] + j * p.entries[d] + o]);
}

// (n, c, h, w) of output element e in row-major order.
fn coords(e: u32) -> vec4<u32> {
    let r1 = div_magic(e, p.div_w.x, p.div_w.y);
    let r2 = div_magic(r1, p.div_h.x, p.div_h.y);
    let n = div_magic(r2, p.div_c.x, p.div_c.y);
    return vec4<u32>(n, r2 - n * p.out_sizes.y, r1 - r2 * p.out_sizes.z, e - r1 * p.out_sizes.w);
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

// -- aa_element_words: one thread per output word of a row ---------------------------------------------
// 8/16-bit outputs that aa_pat and aa_taps do not take (more than TAP_CAP taps along w, or w not the
// output's stride-1 axis, e.g. c of an NHWC output) but with an axis of stride 1. The output is rows:
// axes p.ew_order[0 .. p.ew_merged - 1] (the stride-1 axis, then each axis whose stride is the product
// of the sizes before it) lie contiguous in memory, one row of p.ew_len elements (a packed output in
// any axis order is a single row); the other axes number the rows (innermost fastest,
// p.column_groups threads a row). Thread g of a row owns the row's g-th output word (as aa_taps' GW),
// sums each of its elements' taps as aa_element does (any axes filtered, any input strides) and
// stores the word plainly where the row fills it; a row's first and last words, which it may share
// with other rows, gaps or bytes outside the tensor, only ever through atomics (plain and atomic
// writes never meet on one word). Threads: p.walk_threads (div_groups: the magic pair of
// p.column_groups).

// Coordinates along axes p.ew_order[k0 .. k1 - 1] of index x (mixed radix, the first fastest), into o.
fn ew_coords(o: vec4<u32>, x: u32, k0: u32, k1: u32) -> vec4<u32> {
    var c = o;
    var rest = x;
    for (var k = k0; k < k1; k++) {
        let a = p.ew_order[k];
        let size = p.out_sizes[a];
        let q = rest / size;
        c[a] = rest - q * size;
        rest = q;
    }
    return c;
}

@compute @workgroup_size(WG)
fn aa_element_words(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_id(gid, nwg);
    if (t >= p.walk_threads) { return; }
    let r = div_magic(t, p.div_groups.x, p.div_groups.y);
    let g = t - r * p.column_groups;
    let o = ew_coords(vec4<u32>(0u), r, p.ew_merged, 4u);
    let pw = per_word();
    let bits = 32u / pw;
    let rs = p.output_base + dot(o, p.out_strides);  // the row's first element
    let c0 = i32(g * pw) - i32(rs % pw);             // the row element in lane 0 of the thread's word
    var word = 0u;
    var mask = 0u;
    for (var q = 0u; q < pw; q++) {
        let e = c0 + i32(q);
        if (e >= 0 && e < i32(p.ew_len)) {
            word |= store_bits(value(ew_coords(o, u32(e), 0u, p.ew_merged))) << (q * bits);
            mask |= ((1u << bits) - 1u) << (q * bits);
        }
    }
    merge_word(rs / pw + g, word, mask);
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

// The first n elements of output word wi (n <= the elements a word): a whole word is one store; a
// row's last word with fewer outputs keeps its other bytes, which are gaps or lie outside the
// tensor and which no other thread writes, so a plain read-modify-write is safe.
fn put_word(wi: u32, word: u32, n: u32) {
    let full = per_word();
    if (n >= full) {
        output[wi] = word;
    } else if (n > 0u) {
        let mask = (1u << (n * (32u / full))) - 1u;
        output[wi] = (word & mask) | (output[wi] & ~mask);
    }
}

// Four outputs as one word of 8-bit elements, the first lowest.
fn bytes4(v: vec4<f32>) -> u32 {
    return store_bits(v.x) | (store_bits(v.y) << 8u) | (store_bits(v.z) << 16u) | (store_bits(v.w) << 24u);
}

// The thread's first ncol columns (of CW) of v, stored from output element dst. Written out, no
// vector indexed by a variable (on the H100 the loop form cost aa_taps' skeleton 1.1-2.2x:
// H100, index arithmetic and stores alone, 8x64x240x240 at 1/2, 1/3, 1/4; see EXPERIMENTS.md).
fn store_cols(dst: u32, v: vec4<f32>, ncol: u32) {
    if (DTYPE == 0u) {
        let sw = p.out_strides.w;
        output[dst] = bitcast<u32>(v.x);
        if (CW > 1u && ncol > 1u) { output[dst + sw] = bitcast<u32>(v.y); }
        if (CW > 2u && ncol > 2u) { output[dst + 2u * sw] = bitcast<u32>(v.z); }
        if (CW > 3u && ncol > 3u) { output[dst + 3u * sw] = bitcast<u32>(v.w); }
        return;
    }
    // 8/16-bit: w stride 1 and dst a multiple of the elements per word (the host checks)
    let wi = dst / per_word();
    if (DTYPE == 1u) {
        put_word(wi, store_bits(v.x) | (store_bits(v.y) << 16u), ncol);
        if (CW > 2u && ncol > 2u) { put_word(wi + 1u, store_bits(v.z) | (store_bits(v.w) << 16u), ncol - 2u); }
        return;
    }
    put_word(wi, bytes4(v), ncol);
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

// -- aa_taps: written-out taps -------------------------------------------------------------------
// Thread t owns output columns ow0 .. ow0 + CW - 1 of output row oh of one (n, c) plane (n and c not
// filtered: one tap of weight 1, the host checks; CW = the elements per output word, so 8/16-bit
// outputs are stored as whole words: the host checks that rows start on word boundaries).
// Each column's W taps (at most TAP_CAP, the host checks) are read once into two vec4 registers; the
// TH x TW taps are written-out code (TH, TW: overrides, the most taps along h, and 4 or 8 along w),
// and every tap is loaded unconditionally (contiguous rows: four elements at a time from whole words;
// strided rows: from a clamped index, the entry's last pixel past its count) and added as
// select(0, weight * value, tap < count): all of a thread's loads are independent, so they are in
// flight together. (A private array indexed by a loop counter lives in
// local memory on the H100: measured 2.4-4x slower. Adding +0.0 for a skipped tap leaves the sum
// unchanged: a sum that starts at +0.0 is never -0.0.) With more than TH_CAP taps along h (TH = 0)
// the rows run in a loop. Sums in the header's order, so results equal aa_element's.
// A thread takes RB output rows of its columns in turn (a band; the host sizes it, see
// _taps_band), reading the columns' W taps once.
// Threads: p.column_groups per band, p.bands bands per plane (p.walk_threads in all).
const TAP_CAP: u32 = 8u;
const TH_CAP: u32 = 8u;
override TH: u32 = 4u;  // aa_taps: written-out rows (the most taps along h, <= TH_CAP), 0: a loop
override TW: u32 = 4u;  // aa_taps: written-out taps along w, 4 or 8 (>= the most taps along w)
override RB: u32 = 1u;  // aa_taps: output rows a thread (a band: its columns' W taps are read once)
override GW: u32 = 0u;  // aa_taps: 1: 8/16-bit output rows of any length and offset (w stride 1),
                        //   a thread owns one output word of a row, shared end words merged with
                        //   atomics (see "general forms" below); 0: rows of whole words
override NC: u32 = 0u;  // aa_taps: 1: the n or c axis is filtered (their taps summed around each
                        //   output row's h-w sums); 0: one tap of weight 1 each

struct Col {
    first: u32,
    last: u32,       // the last tap's index (count - 1; 0 for a column past the row)
    count: u32,
    lo: vec4<f32>,   // weights of taps 0..3
    hi: vec4<f32>,   // weights of taps 4..7
}

// The thread's four columns (CW of them used).
struct Cols {
    c0: Col,
    c1: Col,
    c2: Col,
    c3: Col,
}

// Words k .. k + CW - 1 of the table (k a multiple of CW): one load.
fn words(k: u32) -> vec4<u32> {
    if (CW == 4u) { return table4[k >> 2u]; }
    if (CW == 2u) { return vec4<u32>(table2[k >> 1u], 0u, 0u); }
    return vec4<u32>(table[k], 0u, 0u, 0u);
}

// W weight j of the thread's CW columns (from output column ow0).
fn wts(j: u32, ow0: u32) -> vec4<f32> { return bitcast<vec4<f32>>(words(p.weight[3] + j * p.entries[3] + ow0)); }

// Column q's taps from the thread's vectors (first pixels, counts, weights 0-3 and 4-7 per column).
fn col_of(f: u32, n: u32, lo: vec4<f32>, hi: vec4<f32>) -> Col {
    return Col(f, max(n, 1u) - 1u, n, lo, hi);
}

// The W taps of output columns ow0 .. ow0 + CW - 1, each table field one load for all of them
// (table entries past the row have count 0: those columns add nothing).
fn cols_taps(ow0: u32) -> Cols {
    let f = words(p.head[3] + ow0);
    let n = words(p.head[3] + p.entries[3] + ow0);
    let w0 = wts(0u, ow0);
    let w1 = wts(1u, ow0);
    let w2 = wts(2u, ow0);
    let w3 = wts(3u, ow0);
    var w4 = vec4<f32>(0.0);
    var w5 = vec4<f32>(0.0);
    var w6 = vec4<f32>(0.0);
    var w7 = vec4<f32>(0.0);
    if (TW > 4u) {
        w4 = wts(4u, ow0);
        w5 = wts(5u, ow0);
        w6 = wts(6u, ow0);
        w7 = wts(7u, ow0);
    }
    var cs: Cols;
    cs.c0 = col_of(f.x, n.x, vec4<f32>(w0.x, w1.x, w2.x, w3.x), vec4<f32>(w4.x, w5.x, w6.x, w7.x));
    cs.c1 = col_of(f.y, n.y, vec4<f32>(w0.y, w1.y, w2.y, w3.y), vec4<f32>(w4.y, w5.y, w6.y, w7.y));
    cs.c2 = col_of(f.z, n.z, vec4<f32>(w0.z, w1.z, w2.z, w3.z), vec4<f32>(w4.z, w5.z, w6.z, w7.z));
    cs.c3 = col_of(f.w, n.w, vec4<f32>(w0.w, w1.w, w2.w, w3.w), vec4<f32>(w4.w, w5.w, w6.w, w7.w));
    return cs;
}

// Input elements s .. s + 3 (contiguous, any alignment) as f32, from whole-word loads: two words
// for 8-bit elements, three for 16-bit (elements past the tensor's end read whatever the bounds-
// checked load gives; their taps are discarded by the caller's select).
fn elems4(s: u32) -> vec4<f32> {
    if (DTYPE == 0u) {
        return vec4<f32>(bitcast<f32>(input[s]), bitcast<f32>(input[s + 1u]), bitcast<f32>(input[s + 2u]),
                         bitcast<f32>(input[s + 3u]));
    }
    if (DTYPE == 1u) {
        let k = s >> 1u;
        let a = input[k];
        let b = input[k + 1u];
        let c = input[k + 2u];
        let odd = (s & 1u) == 1u;
        let lo = select(a, (a >> 16u) | (b << 16u), odd);
        let hi = select(b, (b >> 16u) | (c << 16u), odd);
        return vec4<f32>(unpack2x16float(lo), unpack2x16float(hi));
    }
    let k = s >> 2u;
    let a = input[k];
    let sh = (s & 3u) * 8u;
    // (a shift by 32 is a shift by 0 in WGSL: an aligned s takes the first word as it is)
    let w = select((a >> sh) | (input[k + 1u] << (32u - sh)), a, sh == 0u);
    if (DTYPE == 2u) {
        return vec4<f32>(f32(i32(w << 24u) >> 24u), f32(i32(w << 16u) >> 24u), f32(i32(w << 8u) >> 24u),
                         f32(i32(w) >> 24u));
    }
    return vec4<f32>(f32(w & 0xFFu), f32((w >> 8u) & 0xFFu), f32((w >> 16u) & 0xFFu), f32(w >> 24u));
}

// Weight w times tap value x, or 0 for a tap past the column's count. An 8-bit input's values
// are finite, and a tap past the count has weight 0 (the table's rows are zero there, up to TW), so
// w * x is then exactly +-0 and adds nothing: no select (the sign of a zero sum cannot reach an
// integer output). A float tap past the count may read an infinity or a NaN: selected out.
fn term(w: f32, x: f32, j: u32, c: Col) -> f32 {
    if (DTYPE >= 2u) { return w * x; }
    return select(0.0, w * x, j < c.count);
}

// Column c's taps j0 .. j0 + 3 on the row whose tap 0 is element s: contiguous rows four elements
// from whole words; strided rows element by element, a tap past the count reading the column's last
// (its term is discarded either way).
fn taps4(s: u32, c: Col, j0: u32) -> vec4<f32> {
    if (p.in_strides.w == 1u) { return elems4(s + j0); }
    let sw = p.in_strides.w;
    return vec4<f32>(load(s + min(j0, c.last) * sw), load(s + min(j0 + 1u, c.last) * sw),
                     load(s + min(j0 + 2u, c.last) * sw), load(s + min(j0 + 3u, c.last) * sw));
}

// Column c's W sum over the input row starting at element `row`, taps in ascending order.
fn col_sum(row: u32, c: Col) -> f32 {
    let s = row + c.first * p.in_strides.w;
    let v = taps4(s, c, 0u);
    var acc = 0.0;
    acc = acc + term(c.lo.x, v.x, 0u, c);
    acc = acc + term(c.lo.y, v.y, 1u, c);
    acc = acc + term(c.lo.z, v.z, 2u, c);
    acc = acc + term(c.lo.w, v.w, 3u, c);
    if (TW > 4u) {
        let u = taps4(s, c, 4u);
        acc = acc + term(c.hi.x, u.x, 4u, c);
        acc = acc + term(c.hi.y, u.y, 5u, c);
        acc = acc + term(c.hi.z, u.z, 6u, c);
        acc = acc + term(c.hi.w, u.w, 7u, c);
    }
    return acc;
}

// The thread's columns on one input row, times the row's H weight.
fn row_terms(row: u32, wh: f32, cs: Cols) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    v.x = wh * col_sum(row, cs.c0);
    if (CW > 1u) { v.y = wh * col_sum(row, cs.c1); }
    if (CW > 2u) {
        v.z = wh * col_sum(row, cs.c2);
        v.w = wh * col_sum(row, cs.c3);
    }
    return v;
}

// Written-out row i of TH: acc + the row's terms, or acc unchanged past the output's H count.
fn add_row(acc: vec4<f32>, i: u32, plane_in: u32, hh: vec2<u32>, oh: u32, cs: Cols) -> vec4<f32> {
    let row = plane_in + (hh.x + min(i, hh.y - 1u)) * p.in_strides.z;
    let v = row_terms(row, weight(2u, oh, i), cs);
    return acc + select(vec4<f32>(0.0), v, i < hh.y);
}

// A banded walk's thread t (aa_taps; aa_pat in resample_antialias_pat.wgsl): column group g (of
// `cols` output columns) of band `band` of an (n, c) plane; the plane's first input element, and the
// output element of its column g * cols in row 0 (n and c not filtered: one tap of weight 1).
struct Walk {
    g: u32,
    band: u32,
    plane_in: u32,
    plane_out: u32,
    n: u32,          // the output's n and c
    c: u32,
}

fn walk_of(t: u32, cols: u32) -> Walk {
    let rest = div_magic(t, p.div_groups.x, p.div_groups.y);
    let g = t - rest * p.column_groups;
    let plane = div_magic(rest, p.div_bands.x, p.div_bands.y);
    let n = div_magic(plane, p.div_c.x, p.div_c.y);
    let c = plane - n * p.out_sizes.y;
    return Walk(g, rest - plane * p.bands,
                p.input_base + head(0u, n).x * p.in_strides.x + head(1u, c).x * p.in_strides.y,
                p.output_base + n * p.out_strides.x + c * p.out_strides.y + g * cols * p.out_strides.w, n, c);
}

// -- aa_taps' general forms (GW, NC) ---------------------------------------------------------------
// GW = 1: 8/16-bit output rows that are not whole words (any width, row stride or offset; w stride
// 1). Thread g of a row owns the row's g-th output word (the word holding row element
// g * CW - head, head = the row's first element modulo CW = the elements a word), so its CW columns
// are ow0 = g * CW - head .. (some before or past the row: computed from a clamped column, never
// stored). A word the row fills is stored plainly (no other thread writes it); the row's first and
// last words, which it may share with a neighbouring row, a gap or bytes outside the tensor, are
// merged with atomicAnd / atomicOr on output_atomic (the same buffer) and only ever through atomics,
// so plain and atomic writes never meet on one word. Rows of one plane whose heads differ (a row
// stride that is not whole words) reload the columns' taps when the head changes.

// Column k's taps (k inside the row), each field a scalar load (k need not be a multiple of CW).
fn col_at(k: u32) -> Col {
    let w = p.weight[3] + k;
    let e = p.entries[3];
    var hi = vec4<f32>(0.0);
    if (TW > 4u) {
        hi = vec4<f32>(bitcast<f32>(table[w + 4u * e]), bitcast<f32>(table[w + 5u * e]),
                       bitcast<f32>(table[w + 6u * e]), bitcast<f32>(table[w + 7u * e]));
    }
    let lo = vec4<f32>(bitcast<f32>(table[w]), bitcast<f32>(table[w + e]), bitcast<f32>(table[w + 2u * e]),
                       bitcast<f32>(table[w + 3u * e]));
    return col_of(table[p.head[3] + k], table[p.head[3] + e + k], lo, hi);
}

// The taps of columns ow0 .. ow0 + CW - 1 (ow0 may be negative), each clamped into the row.
fn cols_taps_any(ow0: i32) -> Cols {
    let last = i32(p.out_sizes.w) - 1;
    var cs: Cols;
    cs.c0 = col_at(u32(clamp(ow0, 0, last)));
    if (CW > 1u) { cs.c1 = col_at(u32(clamp(ow0 + 1, 0, last))); }
    if (CW > 2u) {
        cs.c2 = col_at(u32(clamp(ow0 + 2, 0, last)));
        cs.c3 = col_at(u32(clamp(ow0 + 3, 0, last)));
    }
    return cs;
}

// Output word wi from CW values (lane q = element q of the word); lanes lo .. hi - 1 belong to the
// row: all of them stored plainly, fewer merged with atomics (see GW above).
fn store_word_any(wi: u32, v: vec4<f32>, lo: u32, hi: u32) {
    var word = 0u;
    if (DTYPE == 1u) {
        word = store_bits(v.x) | (store_bits(v.y) << 16u);
    } else {
        word = bytes4(v);
    }
    var mask = 0xFFFFFFFFu;
    if (lo != 0u || hi != CW) {
        let bits = 32u / CW;
        mask = ((1u << ((hi - lo) * bits)) - 1u) << (lo * bits);  // (hi - lo < CW: no shift by 32)
    }
    merge_word(wi, word, mask);
}

// Output row oh of the columns cs summed over its h and w taps on the (n, c) plane at plane_in.
fn taps_rows(plane_in: u32, oh: u32, cs: Cols) -> vec4<f32> {
    let hh = head(2u, oh);
    var acc = vec4<f32>(0.0);
    if (TH == 0u) {
        for (var i = 0u; i < hh.y; i++) {
            acc = acc + row_terms(plane_in + (hh.x + i) * p.in_strides.z, weight(2u, oh, i), cs);
        }
    } else {
        acc = add_row(acc, 0u, plane_in, hh, oh, cs);
        if (TH > 1u) { acc = add_row(acc, 1u, plane_in, hh, oh, cs); }
        if (TH > 2u) { acc = add_row(acc, 2u, plane_in, hh, oh, cs); }
        if (TH > 3u) { acc = add_row(acc, 3u, plane_in, hh, oh, cs); }
        if (TH > 4u) { acc = add_row(acc, 4u, plane_in, hh, oh, cs); }
        if (TH > 5u) { acc = add_row(acc, 5u, plane_in, hh, oh, cs); }
        if (TH > 6u) { acc = add_row(acc, 6u, plane_in, hh, oh, cs); }
        if (TH > 7u) { acc = add_row(acc, 7u, plane_in, hh, oh, cs); }
    }
    return acc;
}

// Output row oh of the columns cs: its h-w sums over the n and c taps (NC), the header's order.
// Without NC the n and c axes have one tap of weight 1 (acc = 0 + 1 * v, exactly v).
fn taps_value(wk: Walk, oh: u32, cs: Cols) -> vec4<f32> {
    if (NC == 0u) { return taps_rows(wk.plane_in, oh, cs); }
    let hn = head(0u, wk.n);
    let hc = head(1u, wk.c);
    var acc_n = vec4<f32>(0.0);
    for (var a = 0u; a < hn.y; a++) {
        var acc_c = vec4<f32>(0.0);
        for (var b = 0u; b < hc.y; b++) {
            let plane_in = p.input_base + (hn.x + a) * p.in_strides.x + (hc.x + b) * p.in_strides.y;
            acc_c = acc_c + weight(1u, wk.c, b) * taps_rows(plane_in, oh, cs);
        }
        acc_n = acc_n + weight(0u, wk.n, a) * acc_c;
    }
    return acc_n;
}

@compute @workgroup_size(WG)
fn aa_taps(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_id(gid, nwg);
    if (t >= p.walk_threads) { return; }
    let wk = walk_of(t, CW);
    let band = wk.band;
    // RB output rows (a band) of the same columns: their W taps are read once (GW: once a head)
    let oh_lo = band * RB;
    let oh_hi = min(oh_lo + RB, p.out_sizes.z);
    if (GW == 1u) {
        let width = i32(p.out_sizes.w);
        let plane_out = p.output_base + wk.n * p.out_strides.x + wk.c * p.out_strides.y;
        var cs: Cols;
        var cur = 0xFFFFFFFFu;
        for (var oh = oh_lo; oh < oh_hi; oh++) {
            let rs = plane_out + oh * p.out_strides.z;
            let hd = rs % CW;
            let ow0 = i32(wk.g * CW) - i32(hd);
            if (ow0 >= width) { continue; }  // the row ends in an earlier word
            if (hd != cur) {
                cs = cols_taps_any(ow0);
                cur = hd;
            }
            let acc = taps_value(wk, oh, cs);
            store_word_any(rs / CW + wk.g, acc, u32(max(-ow0, 0)), u32(min(i32(CW), width - ow0)));
        }
        return;
    }
    let ow0 = wk.g * CW;
    let ncol = min(CW, p.out_sizes.w - ow0);
    let cs = cols_taps(ow0);
    for (var oh = oh_lo; oh < oh_hi; oh++) {
        store_cols(wk.plane_out + oh * p.out_strides.z, taps_value(wk, oh, cs), ncol);
    }
}

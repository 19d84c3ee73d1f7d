// Resample / Resample1 / Resample2 (DML_OPERATOR_RESAMPLE, _RESAMPLE1, _RESAMPLE2): nearest and
// linear, 1 to 4 dimensions (the host pads to 4, outermost first: n, c, h, w), float32, float16,
// int8 and uint8, every tensor strided.
//
// Index math: axis d maps output index o to x = (o - OutputPixelOffset[d]) / Scale[d] - InputPixelOffset[d].
// The host evaluates that per axis with the reference's float32 arithmetic and binds the results
// as tables, because WGSL's f32 division is not correctly rounded and would pick the neighbouring
// pixel near a boundary on some adapters. Table entries are already multiplied by the input stride:
//   nearest: table[tbl[d] + o]   = clamped index * stride[d]     (1 word; tbl[d] a multiple of 4)
//            output[n,c,h,w] = input[in_base + Tn[n] + Tc[c] + Th[h] + Tw[w]]   (raw bits, any dtype)
//   linear:  table4[tbl[d] + o]  = (i0 * stride[d], i1 * stride[d], bits(w0), bits(w1))  (one vec4)
//            output = sum over the tap combinations (a, b, c) of the outer axes, in that order, of
//            ((wn_a * wc_b) * wh_c) * (w0w * input[.. i0w] + w1w * input[.. i1w]), in f32, then
//            stored with the tensor's rounding (f16: pack2x16float; i8/u8: round half to even, saturate).
//            An axis with taps[d] == 1 is not interpolated: tap 0 only, weight 1.
// Bindings: 0 input (u32 words), 1 output (u32 words), 2 output (vec4 words), 3 output (atomic u32
//           words), 4 uniforms (Params), 5 table (u32), 6 table4 (the same buffer as vec4 words).
//           Each entry point uses one of 1, 2 or 3.
// Entry points: resample_rows (packed float32/float16 output whose rows are whole 16-byte blocks,
// batch and channel not interpolated: one thread owns one block column and walks a band of rows,
// see below), resample_rows_half (its float16 linear form, 4 outputs per thread),
// resample_rows_pat_v1/_v2/_v4 (float16 linear where every thread's W taps follow one pattern,
// known when the pipeline is built: see the end of this file; the suffix is the store width in words), resample_packed (packed output; one
// thread builds one 16-byte block), resample_strided (any output strides, 4-byte elements),
// resample_atomic (any output strides, 1- and 2-byte elements, merged into words with atomics
// because neighbouring strided elements may share a word).
// Bindings of the row walks: resample_rows_half and _pat_v2 write 7, _pat_v1 writes 1, the
// others 2.
// Overrides (structure, part of the pipeline cache key): MODE, DTYPE, WG, HALF, PV, NW, TAP0_A-D,
// TAP1_A-D.

override WG: u32 = 256u;
override MODE: u32 = 0u;    // 0 nearest, 1 linear
override DTYPE: u32 = 0u;   // 0 float32, 1 float16, 2 int8, 3 uint8
override HALF: u32 = 0u;    // resample_rows with float16: 1 = 4 outputs (8 bytes, output2) per thread, not 8
// resample_rows_pat (float16 linear, one W tap pattern shared by every thread, see there):
override PV: u32 = 8u;      // outputs per thread: 4, 6, 8, 12 or 16
override NW: u32 = 4u;      // input words in a thread's window: 1 to 6
override TAP0_A: u32 = 0u;  // tap 0 of outputs 0-3: half index in the window, 4 bits at bit 4 (j % 4)
override TAP0_B: u32 = 0u;  // outputs 4-7
override TAP0_C: u32 = 0u;  // outputs 8-11
override TAP0_D: u32 = 0u;  // outputs 12-15
override TAP1_A: u32 = 0u;  // the same for tap 1 (16-bit values: the cache key prints them exactly)
override TAP1_B: u32 = 0u;
override TAP1_C: u32 = 0u;
override TAP1_D: u32 = 0u;

struct Params {
    out_sizes: vec4<u32>,    // output sizes padded to 4 dims, outermost first
    out_strides: vec4<u32>,  // output strides in elements (strided and atomic entry points)
    tbl: vec4<u32>,          // first entry of each axis: nearest in words, linear in vec4 words
    taps: vec4<u32>,         // linear: 2 where the axis is interpolated, else 1
    shifts: vec4<u32>,       // log2 of out_sizes where a power of two, else 32 (x unused)
    info: vec4<u32>,         // x element count, y input base, z output base (elements), w unused
    rows: vec4<u32>,         // resample_rows: x thread count, y blocks per row, z bands per (n, c), w rows per band
    pat: vec4<u32>,          // resample_rows_pat: x words per input row, y window step (words per thread),
                             // z first thread's window word (i32), w unused
}

#include "common/grid.wgsl"

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<storage, read_write> output4: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> output_atomic: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> p: Params;
@group(0) @binding(5) var<storage, read> table: array<u32>;
@group(0) @binding(6) var<storage, read> table4: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> output2: array<vec2<u32>>;

fn elem_bytes() -> u32 {
    if (DTYPE == 0u) { return 4u; }
    if (DTYPE == 1u) { return 2u; }
    return 1u;
}

// Index along one axis of a row-major remainder: a shift and a mask for power-of-two sizes.
fn split(r: ptr<function, u32>, size: u32, sh: u32) -> u32 {
    if (sh < 32u) {
        let i = *r & ((1u << sh) - 1u);
        *r = *r >> sh;
        return i;
    }
    let i = *r % size;
    *r = *r / size;
    return i;
}

// (n, c, h, w) of output element e in row-major order.
fn coords(e: u32) -> vec4<u32> {
    var r = e;
    let w = split(&r, p.out_sizes.w, p.shifts.w);
    let h = split(&r, p.out_sizes.z, p.shifts.z);
    let c = split(&r, p.out_sizes.y, p.shifts.y);
    return vec4<u32>(r, c, h, w);
}

// Raw bits of input element s; sub-word elements come zero-extended.
fn raw(s: u32) -> u32 {
    if (DTYPE == 0u) { return input[s]; }
    if (DTYPE == 1u) { return (input[s >> 1u] >> ((s & 1u) * 16u)) & 0xFFFFu; }
    return (input[s >> 2u] >> ((s & 3u) * 8u)) & 0xFFu;
}

// Input element s as f32 (exact for every input type).
fn load(s: u32) -> f32 {
    if (DTYPE == 0u) { return bitcast<f32>(input[s]); }
    if (DTYPE == 1u) { return unpack2x16float(input[s >> 1u] >> ((s & 1u) * 16u)).x; }  // no dynamic index
    let b = (input[s >> 2u] >> ((s & 3u) * 8u)) & 0xFFu;
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

// -- nearest ------------------------------------------------------------------------------------
fn nearest_outer(o: vec4<u32>) -> u32 {
    return p.info.y + table[p.tbl.x + o.x] + table[p.tbl.y + o.y] + table[p.tbl.z + o.z];
}

// -- linear -------------------------------------------------------------------------------------
// Tap k (0 or 1) of a linear table entry: input offset and weight.
fn tap_offset(t: vec4<u32>, k: u32) -> u32 { return select(t.x, t.y, k == 1u); }
fn tap_weight(t: vec4<u32>, k: u32) -> f32 { return bitcast<f32>(select(t.z, t.w, k == 1u)); }

// Linear interpolation of the outputs (o.x, o.y, o.z, ow + j) for j = 0..3 (the host guarantees
// they lie in one row), accumulated per output in the reference's order.
fn linear4(o: vec4<u32>, ow: u32) -> vec4<f32> {
    let e = p.tbl.w + ow;
    let t0 = table4[e];
    let t1 = table4[e + 1u];
    let t2 = table4[e + 2u];
    let t3 = table4[e + 3u];
    let i0 = vec4<u32>(t0.x, t1.x, t2.x, t3.x);
    let i1 = vec4<u32>(t0.y, t1.y, t2.y, t3.y);
    let w0 = bitcast<vec4<f32>>(vec4<u32>(t0.z, t1.z, t2.z, t3.z));
    let w1 = bitcast<vec4<f32>>(vec4<u32>(t0.w, t1.w, t2.w, t3.w));
    let en = table4[p.tbl.x + o.x];
    let ec = table4[p.tbl.y + o.y];
    let eh = table4[p.tbl.z + o.z];
    var acc = vec4<f32>(0.0);
    for (var a = 0u; a < p.taps.x; a++) {
        for (var b = 0u; b < p.taps.y; b++) {
            for (var c = 0u; c < p.taps.z; c++) {
                let base = p.info.y + tap_offset(en, a) + tap_offset(ec, b) + tap_offset(eh, c);
                let wc = (tap_weight(en, a) * tap_weight(ec, b)) * tap_weight(eh, c);
                // A register window over the 4 consecutive inputs that x2 upsampling touches, picked
                // with dynamic vector indices, measured 25 % slower on the H100: plain loads it is.
                let va = vec4<f32>(load(base + i0.x), load(base + i0.y), load(base + i0.z), load(base + i0.w));
                var v = va;
                if (p.taps.w == 2u) {
                    let vb = vec4<f32>(load(base + i1.x), load(base + i1.y), load(base + i1.z), load(base + i1.w));
                    v = w0 * va + w1 * vb;
                }
                acc += wc * v;
            }
        }
    }
    return acc;
}

// One output element (any position): the same arithmetic, one lane.
fn linear_value(o: vec4<u32>) -> f32 {
    let t = table4[p.tbl.w + o.w];
    let en = table4[p.tbl.x + o.x];
    let ec = table4[p.tbl.y + o.y];
    let eh = table4[p.tbl.z + o.z];
    var acc = 0.0;
    for (var a = 0u; a < p.taps.x; a++) {
        for (var b = 0u; b < p.taps.y; b++) {
            for (var c = 0u; c < p.taps.z; c++) {
                let base = p.info.y + tap_offset(en, a) + tap_offset(ec, b) + tap_offset(eh, c);
                let wc = (tap_weight(en, a) * tap_weight(ec, b)) * tap_weight(eh, c);
                var v = load(base + t.x);
                if (p.taps.w == 2u) {
                    v = bitcast<f32>(t.z) * v + bitcast<f32>(t.w) * load(base + t.y);
                }
                acc += wc * v;
            }
        }
    }
    return acc;
}

// Four f32 results as one word of four 8-bit outputs.
fn bytes4(v: vec4<f32>) -> u32 {
    return store_bits(v.x) | (store_bits(v.y) << 8u) | (store_bits(v.z) << 16u) | (store_bits(v.w) << 24u);
}

// Bits of the output element at o.
fn element_bits(o: vec4<u32>) -> u32 {
    if (MODE == 0u) { return raw(nearest_outer(o) + table[p.tbl.w + o.w]); }
    return store_bits(linear_value(o));
}

// -- 16-byte blocks -------------------------------------------------------------------------------
// Put element bits v at byte q of a block, keeping the other bytes.
fn place(block: ptr<function, vec4<u32>>, q: u32, v: u32) {
    let w = q >> 2u;
    if (DTYPE == 0u) {
        (*block)[w] = v;
        return;
    }
    let sh = (q & 3u) * 8u;
    let mask = select(0xFFu, 0xFFFFu, DTYPE == 1u) << sh;
    (*block)[w] = ((*block)[w] & ~mask) | (v << sh);
}

// A whole block of 16 / elem_bytes() outputs that lies in one row (o.w .. o.w + epv - 1): the
// outer offsets and weights are looked up once per block.
fn row_block(o: vec4<u32>) -> vec4<u32> {
    if (MODE == 0u) {
        // Four indices per vec4 load where the row's entries start on a multiple of 4 words.
        let base = nearest_outer(o);
        let tw = p.tbl.w + o.w;
        var block = vec4<u32>(0u);
        for (var j = 0u; j < 4u / elem_bytes(); j++) {
            let tj = tw + 4u * j;
            var idx: vec4<u32>;
            if ((tw & 3u) == 0u) {
                idx = table4[tj >> 2u];
            } else {
                idx = vec4<u32>(table[tj], table[tj + 1u], table[tj + 2u], table[tj + 3u]);
            }
            let v = vec4<u32>(raw(base + idx.x), raw(base + idx.y), raw(base + idx.z), raw(base + idx.w));
            if (DTYPE == 0u) {
                block = v;
            } else if (DTYPE == 1u) {
                block[2u * j] = v.x | (v.y << 16u);
                block[2u * j + 1u] = v.z | (v.w << 16u);
            } else {
                block[j] = v.x | (v.y << 8u) | (v.z << 16u) | (v.w << 24u);
            }
        }
        return block;
    }
    if (DTYPE == 0u) {
        return bitcast<vec4<u32>>(linear4(o, o.w));
    }
    if (DTYPE == 1u) {
        let a = linear4(o, o.w);
        let b = linear4(o, o.w + 4u);
        return vec4<u32>(pack2x16float(a.xy), pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));
    }
    return vec4<u32>(bytes4(linear4(o, o.w)), bytes4(linear4(o, o.w + 4u)), bytes4(linear4(o, o.w + 8u)),
                     bytes4(linear4(o, o.w + 12u)));
}

@compute @workgroup_size(WG)
fn resample_packed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let eb = elem_bytes();
    let b = output_block(thread_id(gid, nwg), p.info.z * eb, p.info.x, eb);
    if (b.n == 0u) { return; }
    let o = coords(b.e_lo);
    if (b.n == 16u / eb && o.w + b.n <= p.out_sizes.w) {
        output4[b.t] = row_block(o);
        return;
    }
    // A block that crosses a row, or the first or last block of the tensor (whose bytes outside
    // the tensor belong to someone else and are kept).
    var block = vec4<u32>(0u);
    if (b.n != 16u / eb) { block = output4[b.t]; }
    for (var k = 0u; k < b.n; k++) {
        place(&block, b.q0 + k * eb, element_bits(coords(b.e_lo + k)));
    }
    output4[b.t] = block;
}

@compute @workgroup_size(WG)
fn resample_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= p.info.x) { return; }
    let o = coords(e);
    output[p.info.z + dot(o, p.out_strides)] = element_bits(o);
}

@compute @workgroup_size(WG)
fn resample_atomic(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= p.info.x) { return; }
    let o = coords(e);
    let eb = elem_bytes();
    let dst = p.info.z + dot(o, p.out_strides);
    let per_word = 4u / eb;
    let sh = (dst % per_word) * eb * 8u;
    let mask = select(0xFFu, 0xFFFFu, DTYPE == 1u) << sh;
    atomicAnd(&output_atomic[dst / per_word], ~mask);
    atomicOr(&output_atomic[dst / per_word], element_bits(o) << sh);
}

// -- row walk -------------------------------------------------------------------------------------
// resample_rows: packed float32/float16 output, 16-byte aligned, rows of a whole number of 16-byte
// blocks (V = 4 or 8 outputs), batch and channel axes with one tap (the host checks all of that).
// Thread = (n, c, band, block column g); lanes of a warp take consecutive g, so every load and
// store of a warp is contiguous. A thread reads its V columns' W table once, then walks the band's
// output rows (p.rows.w of them): each input row it needs is interpolated along W once (linear:
// v = w0 * a + w1 * b per column, the reference's order) and kept in one of two registers slots,
// so with upsampling along H an input row serves several output rows; the vertical blend
// acc = 0 + wh0 * v(h0) (+ wh1 * v(h1)) is the reference's sum (wn = wc = 1 exactly). Branches on
// the row cache are uniform across a warp except where it straddles two bands.

// W taps of 4 consecutive output columns starting at linear table entry e.
struct Quad4 {
    i0: vec4<u32>,
    i1: vec4<u32>,
    w0: vec4<f32>,
    w1: vec4<f32>,
}

fn w_quad(e: u32) -> Quad4 {
    let t0 = table4[e];
    let t1 = table4[e + 1u];
    let t2 = table4[e + 2u];
    let t3 = table4[e + 3u];
    return Quad4(vec4<u32>(t0.x, t1.x, t2.x, t3.x), vec4<u32>(t0.y, t1.y, t2.y, t3.y),
                 bitcast<vec4<f32>>(vec4<u32>(t0.z, t1.z, t2.z, t3.z)),
                 bitcast<vec4<f32>>(vec4<u32>(t0.w, t1.w, t2.w, t3.w)));
}

// 4 outputs interpolated along W on the input row starting at element `row`.
fn h_quad(row: u32, q: Quad4) -> vec4<f32> {
    let a = vec4<f32>(load(row + q.i0.x), load(row + q.i0.y), load(row + q.i0.z), load(row + q.i0.w));
    if (p.taps.w == 1u) { return a; }
    let b = vec4<f32>(load(row + q.i1.x), load(row + q.i1.y), load(row + q.i1.z), load(row + q.i1.w));
    return q.w0 * a + q.w1 * b;
}

// One row of a thread's block: 4 (float32) or 8 (float16, lo then hi) values.
struct Row8 {
    lo: vec4<f32>,
    hi: vec4<f32>,
}

fn wide() -> bool { return DTYPE == 1u && HALF == 0u; }   // 8 outputs per thread

fn h_row(row: u32, qa: Quad4, qb: Quad4) -> Row8 {
    var r = Row8(h_quad(row, qa), vec4<f32>(0.0));
    if (wide()) { r.hi = h_quad(row, qb); }
    return r;
}

// Raw bits of a nearest block (16 bytes) on the input row starting at element `row`.
fn n_block(row: u32, ia: vec4<u32>, ib: vec4<u32>) -> vec4<u32> {
    let a = vec4<u32>(raw(row + ia.x), raw(row + ia.y), raw(row + ia.z), raw(row + ia.w));
    if (DTYPE == 0u) { return a; }
    let b = vec4<u32>(raw(row + ib.x), raw(row + ib.y), raw(row + ib.z), raw(row + ib.w));
    return vec4<u32>(a.x | (a.y << 16u), a.z | (a.w << 16u), b.x | (b.y << 16u), b.z | (b.w << 16u));
}

// Cache of two W-interpolated input rows: ra older, rb newer.
struct Walk {
    ra: u32,
    rb: u32,
    va: Row8,
    vb: Row8,
}

// Output row oh of a thread's block (linear): lo (and hi for 8 outputs).
fn linear_row(w: ptr<function, Walk>, oh: u32, base: u32, qa: Quad4, qb: Quad4) -> Row8 {
    let eh = table4[p.tbl.z + oh];
    let r0 = base + eh.x;
    if (r0 != (*w).ra && r0 != (*w).rb) {
        (*w).ra = (*w).rb;
        (*w).va = (*w).vb;
        (*w).rb = r0;
        (*w).vb = h_row(r0, qa, qb);
    }
    let hit0 = r0 == (*w).rb;
    let wh0 = bitcast<f32>(eh.z);
    var lo = vec4<f32>(0.0) + wh0 * select((*w).va.lo, (*w).vb.lo, hit0);
    var hi = vec4<f32>(0.0);
    if (wide()) { hi = vec4<f32>(0.0) + wh0 * select((*w).va.hi, (*w).vb.hi, hit0); }
    if (p.taps.z == 2u) {
        let r1 = base + eh.y;
        if (r1 != (*w).ra && r1 != (*w).rb) {
            (*w).ra = (*w).rb;
            (*w).va = (*w).vb;
            (*w).rb = r1;
            (*w).vb = h_row(r1, qa, qb);
        }
        let hit1 = r1 == (*w).rb;
        let wh1 = bitcast<f32>(eh.w);
        lo += wh1 * select((*w).va.lo, (*w).vb.lo, hit1);
        if (wide()) { hi += wh1 * select((*w).va.hi, (*w).vb.hi, hit1); }
    }
    return Row8(lo, hi);
}

// Where a thread of resample_rows works: its band's rows, first output (in units of its outputs
// per thread), input base of (n, c) and its first column.
struct Place {
    oh0: u32,
    oh1: u32,
    dst: u32,
    step: u32,
    n: u32,
    c: u32,
    ow: u32,
}

fn rows_place(tid: u32, v: u32) -> Place {
    let g = tid % p.rows.y;
    var r = tid / p.rows.y;
    let band = r % p.rows.z;
    r = r / p.rows.z;
    let c = r % p.out_sizes.y;
    let n = r / p.out_sizes.y;
    let oh0 = band * p.rows.w;
    let ow = g * v;
    let dst = (p.info.z + ((n * p.out_sizes.y + c) * p.out_sizes.z + oh0) * p.out_sizes.w + ow) / v;
    return Place(oh0, min(oh0 + p.rows.w, p.out_sizes.z), dst, p.out_sizes.w / v, n, c, ow);
}

fn empty_walk() -> Walk {
    return Walk(0xFFFFFFFFu, 0xFFFFFFFFu, Row8(vec4<f32>(0.0), vec4<f32>(0.0)), Row8(vec4<f32>(0.0), vec4<f32>(0.0)));
}

@compute @workgroup_size(WG)
fn resample_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.rows.x) { return; }
    let pl = rows_place(tid, 16u / elem_bytes());
    var dst = pl.dst;
    if (MODE == 0u) {
        let base = p.info.y + table[p.tbl.x + pl.n] + table[p.tbl.y + pl.c];
        let tw = (p.tbl.w + pl.ow) >> 2u;   // p.tbl.w and ow are multiples of 4
        let ia = table4[tw];
        var ib = vec4<u32>(0u);
        if (DTYPE == 1u) { ib = table4[tw + 1u]; }
        var last = 0xFFFFFFFFu;
        var blk = vec4<u32>(0u);
        for (var oh = pl.oh0; oh < pl.oh1; oh++) {
            let row = base + table[p.tbl.z + oh];
            if (row != last) {
                blk = n_block(row, ia, ib);
                last = row;
            }
            output4[dst] = blk;
            dst += pl.step;
        }
        return;
    }
    let base = p.info.y + table4[p.tbl.x + pl.n].x + table4[p.tbl.y + pl.c].x;
    let e = p.tbl.w + pl.ow;
    let qa = w_quad(e);
    var qb = qa;
    if (wide()) { qb = w_quad(e + 4u); }
    var w = empty_walk();
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = linear_row(&w, oh, base, qa, qb);
        if (DTYPE == 0u) {
            output4[dst] = bitcast<vec4<u32>>(v.lo);
        } else {
            output4[dst] = vec4<u32>(pack2x16float(v.lo.xy), pack2x16float(v.lo.zw), pack2x16float(v.hi.xy),
                                     pack2x16float(v.hi.zw));
        }
        dst += pl.step;
    }
}

// Linear float16 with HALF == 1: 4 outputs (8 bytes) per thread.
@compute @workgroup_size(WG)
fn resample_rows_half(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.rows.x) { return; }
    let pl = rows_place(tid, 4u);
    var dst = pl.dst;
    // (word 4 * i of the table is entry i's .x: this entry point binds `table` like the others)
    let base = p.info.y + table[4u * (p.tbl.x + pl.n)] + table4[p.tbl.y + pl.c].x;
    let qa = w_quad(p.tbl.w + pl.ow);
    var w = empty_walk();
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = linear_row(&w, oh, base, qa, qa);
        output2[dst] = vec2<u32>(pack2x16float(v.lo.xy), pack2x16float(v.lo.zw));
        dst += pl.step;
    }
}

// -- row walk with one W tap pattern (float16 linear) -----------------------------------------------
// resample_rows_half spends most of its time working out, per thread, where its taps lie in the
// input words (a load, a shift and a conversion per tap). Where the W taps of every thread follow
// one pattern (2x: output 8g + j reads elements 4g - 1 + (0, 1, 1, 2, 2, 3, 3, 4)[j] and the next;
// 1.5x with 6 or 12 outputs per thread likewise), the host finds the pattern and makes it
// structure: thread g loads the NW words of its window, from word k = k0 + g * step of the input
// row, converts each once (unpack2x16float) and picks its taps with selects on override constants,
// which the compiler resolves while building the pipeline. The taps that the table clamps at the
// row ends read virtual words (the window may start at word -1 and end one word past the row)
// that repeat the edge element, so tap index, weight and value are the table's everywhere and no
// thread diverges. The host checks every thread's taps against the table; the shader only adds
// table entries and window offsets. Why this is structure and not data: the pattern depends on the
// W scale and pixel offsets alone, not on any size, so one pipeline serves every shape at a given
// scale (the cache key holds PV, NW and the tap nibbles); the weights, sizes and strides stay in
// the table and the uniforms.
// Rows as in resample_rows, but the cache is canonical: va holds the row of H tap 0 and vb the row
// of tap 1, so the vertical blend 0 + wh0 * va + wh1 * vb needs no selects.
// Requirements (host): input row starts even (whole words), W stride 1, W even, PV divides the
// output width.

// Up to 16 values of a thread's outputs: a (0-3), b (4-7), c (8-11), d (12-15).
struct Row16 {
    a: vec4<f32>,
    b: vec4<f32>,
    c: vec4<f32>,
    d: vec4<f32>,
}

// A thread's first window word, relative to its row start (-1 at the left edge), and the W
// weights of its outputs. Kept this small on purpose: the load offsets and edge masks are
// recomputed per row (a few integer operations); holding them in five more registers measured
// 10 % slower (2x up, PV = 8, on the H100).
struct PatThread {
    k: i32,
    w0: Row16,
    w1: Row16,
}

// Half d (0 to 11) of the window words u0..u5, unpacked: d is a constant of the pipeline.
fn pat_half(d: u32, u0: vec2<f32>, u1: vec2<f32>, u2: vec2<f32>, u3: vec2<f32>, u4: vec2<f32>, u5: vec2<f32>) -> f32 {
    let odd = (d & 1u) == 1u;
    var v = select(u0.x, u0.y, odd);
    v = select(v, select(u1.x, u1.y, odd), (d >> 1u) == 1u);
    v = select(v, select(u2.x, u2.y, odd), (d >> 1u) == 2u);
    v = select(v, select(u3.x, u3.y, odd), (d >> 1u) == 3u);
    v = select(v, select(u4.x, u4.y, odd), (d >> 1u) == 4u);
    v = select(v, select(u5.x, u5.y, odd), (d >> 1u) == 5u);
    return v;
}

// Window half of tap t (0 or 1) of output j.
fn pat_d(j: u32, t: u32) -> u32 {
    var m = select(TAP0_A, TAP1_A, t == 1u);
    if (j >= 4u) { m = select(TAP0_B, TAP1_B, t == 1u); }
    if (j >= 8u) { m = select(TAP0_C, TAP1_C, t == 1u); }
    if (j >= 12u) { m = select(TAP0_D, TAP1_D, t == 1u); }
    return (m >> (4u * (j & 3u))) & 15u;
}

// Tap t of outputs 4q .. 4q + 3.
fn pat_quad(q: u32, t: u32, u0: vec2<f32>, u1: vec2<f32>, u2: vec2<f32>, u3: vec2<f32>, u4: vec2<f32>,
            u5: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(pat_half(pat_d(4u * q, t), u0, u1, u2, u3, u4, u5),
                     pat_half(pat_d(4u * q + 1u, t), u0, u1, u2, u3, u4, u5),
                     pat_half(pat_d(4u * q + 2u, t), u0, u1, u2, u3, u4, u5),
                     pat_half(pat_d(4u * q + 3u, t), u0, u1, u2, u3, u4, u5));
}

// Word j of a thread's window on the input row whose first word is rw. Only the first word can
// lie before the row (k = -1) and only the last one past it: those loads are clamped into the row
// and the word replaced by its edge element, twice.
fn pat_word(rw: i32, j: u32, t: PatThread) -> u32 {
    let wh = i32(p.pat.x);
    var at = t.k + i32(j);
    if (j == 0u) { at = max(at, 0); }
    if (j == NW - 1u) { at = min(at, wh - 1); }
    var x = input[u32(rw + at)];
    if (j == 0u) { x = select(x, (x & 0xFFFFu) * 0x10001u, t.k < 0); }
    if (j == NW - 1u) { x = select(x, (x >> 16u) * 0x10001u, t.k + i32(j) >= wh); }
    return x;
}

// The PV outputs of a thread interpolated along W on the input row starting at element `row`.
fn pat_fetch(row: u32, t: PatThread) -> Row16 {
    let rw = i32(row >> 1u);
    let u0 = unpack2x16float(pat_word(rw, 0u, t));
    var u1 = vec2<f32>(0.0);
    var u2 = vec2<f32>(0.0);
    var u3 = vec2<f32>(0.0);
    var u4 = vec2<f32>(0.0);
    var u5 = vec2<f32>(0.0);
    if (NW > 1u) { u1 = unpack2x16float(pat_word(rw, 1u, t)); }
    if (NW > 2u) { u2 = unpack2x16float(pat_word(rw, 2u, t)); }
    if (NW > 3u) { u3 = unpack2x16float(pat_word(rw, 3u, t)); }
    if (NW > 4u) { u4 = unpack2x16float(pat_word(rw, 4u, t)); }
    if (NW > 5u) { u5 = unpack2x16float(pat_word(rw, 5u, t)); }
    var r = Row16(pat_quad(0u, 0u, u0, u1, u2, u3, u4, u5), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    if (PV > 4u) { r.b = pat_quad(1u, 0u, u0, u1, u2, u3, u4, u5); }
    if (PV > 8u) { r.c = pat_quad(2u, 0u, u0, u1, u2, u3, u4, u5); }
    if (PV > 12u) { r.d = pat_quad(3u, 0u, u0, u1, u2, u3, u4, u5); }
    if (p.taps.w == 1u) { return r; }
    r.a = t.w0.a * r.a + t.w1.a * pat_quad(0u, 1u, u0, u1, u2, u3, u4, u5);
    if (PV > 4u) { r.b = t.w0.b * r.b + t.w1.b * pat_quad(1u, 1u, u0, u1, u2, u3, u4, u5); }
    if (PV > 8u) { r.c = t.w0.c * r.c + t.w1.c * pat_quad(2u, 1u, u0, u1, u2, u3, u4, u5); }
    if (PV > 12u) { r.d = t.w0.d * r.d + t.w1.d * pat_quad(3u, 1u, u0, u1, u2, u3, u4, u5); }
    return r;
}

// 0 + wh0 * a (+ wh1 * b): the reference's vertical sum, for the outputs the thread has.
fn pat_blend(wh0: f32, a: Row16, wh1: f32, b: Row16, two: bool) -> Row16 {
    var r = Row16(vec4<f32>(0.0) + wh0 * a.a, vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    if (PV > 4u) { r.b = vec4<f32>(0.0) + wh0 * a.b; }
    if (PV > 8u) { r.c = vec4<f32>(0.0) + wh0 * a.c; }
    if (PV > 12u) { r.d = vec4<f32>(0.0) + wh0 * a.d; }
    if (two) {
        r.a += wh1 * b.a;
        if (PV > 4u) { r.b += wh1 * b.b; }
        if (PV > 8u) { r.c += wh1 * b.c; }
        if (PV > 12u) { r.d += wh1 * b.d; }
    }
    return r;
}

// The two W-interpolated input rows of the last output row: ra/va of its H tap 0, rb/vb of tap 1.
struct PatWalk {
    ra: u32,
    rb: u32,
    va: Row16,
    vb: Row16,
}

// Output row oh of a thread's PV columns.
fn pat_row(c: ptr<function, PatWalk>, oh: u32, base: u32, t: PatThread) -> Row16 {
    let eh = table4[p.tbl.z + oh];
    let r0 = base + eh.x;
    if (p.taps.z == 1u) {
        if (r0 != (*c).ra) {
            (*c).va = pat_fetch(r0, t);
            (*c).ra = r0;
        }
        return pat_blend(bitcast<f32>(eh.z), (*c).va, 0.0, (*c).va, false);
    }
    let r1 = base + eh.y;
    if (r0 != (*c).ra || r1 != (*c).rb) {
        if (r0 == (*c).rb) {
            (*c).va = (*c).vb;
            (*c).ra = (*c).rb;
        } else if (r0 != (*c).ra) {
            (*c).va = pat_fetch(r0, t);
            (*c).ra = r0;
        }
        if (r1 == (*c).ra) {
            (*c).vb = (*c).va;
            (*c).rb = (*c).ra;
        } else if (r1 != (*c).rb) {
            (*c).vb = pat_fetch(r1, t);
            (*c).rb = r1;
        }
    }
    return pat_blend(bitcast<f32>(eh.z), (*c).va, bitcast<f32>(eh.w), (*c).vb, true);
}

// Where a thread of resample_rows_pat works: its band's rows, its first output element (tensor
// index, without the output base), the input element of its (n, c) plane and its W window.
struct PatPlace {
    oh0: u32,
    oh1: u32,
    e: u32,
    base: u32,
    t: PatThread,
}

// W weights of outputs 4q .. 4q + 3 of a thread whose first table entry is tw (w0 or w1: which).
fn pat_weights(tw: u32, q: u32, which: u32) -> vec4<f32> {
    let t0 = table4[tw + 4u * q];
    let t1 = table4[tw + 4u * q + 1u];
    let t2 = table4[tw + 4u * q + 2u];
    let t3 = table4[tw + 4u * q + 3u];
    if (which == 0u) { return bitcast<vec4<f32>>(vec4<u32>(t0.z, t1.z, t2.z, t3.z)); }
    return bitcast<vec4<f32>>(vec4<u32>(t0.w, t1.w, t2.w, t3.w));
}

fn pat_place(tid: u32) -> PatPlace {
    let rp = rows_place(tid, PV);   // (its dst and step are for stores of PV elements: unused here)
    let n = rp.n;
    let c = rp.c;
    let ow = rp.ow;
    let e = ((n * p.out_sizes.y + c) * p.out_sizes.z + rp.oh0) * p.out_sizes.w + ow;
    let base = p.info.y + table[4u * (p.tbl.x + n)] + table4[p.tbl.y + c].x;
    let tw = p.tbl.w + ow;
    let z = vec4<f32>(0.0);
    var w0 = Row16(pat_weights(tw, 0u, 0u), z, z, z);
    var w1 = Row16(pat_weights(tw, 0u, 1u), z, z, z);
    if (PV == 6u) {
        // outputs 4 and 5 (the other two lanes multiply values that are never stored)
        let t4 = table4[tw + 4u];
        let t5 = table4[tw + 5u];
        w0.b = bitcast<vec4<f32>>(vec4<u32>(t4.z, t5.z, t5.z, t5.z));
        w1.b = bitcast<vec4<f32>>(vec4<u32>(t4.w, t5.w, t5.w, t5.w));
    } else if (PV > 4u) {
        w0.b = pat_weights(tw, 1u, 0u);
        w1.b = pat_weights(tw, 1u, 1u);
    }
    if (PV > 8u) {
        w0.c = pat_weights(tw, 2u, 0u);
        w1.c = pat_weights(tw, 2u, 1u);
    }
    if (PV > 12u) {
        w0.d = pat_weights(tw, 3u, 0u);
        w1.d = pat_weights(tw, 3u, 1u);
    }
    let k = bitcast<i32>(p.pat.z) + i32(ow / PV) * i32(p.pat.y);
    return PatPlace(rp.oh0, rp.oh1, e, base, PatThread(k, w0, w1));
}

fn pat_walk() -> PatWalk {
    let z = vec4<f32>(0.0);
    return PatWalk(0xFFFFFFFFu, 0xFFFFFFFFu, Row16(z, z, z, z), Row16(z, z, z, z));
}

// The row walk's entry points, one per output binding (the stores of a row as PV says):
// 8-byte stores (output2) for PV = 4 and 12, words (output) for PV = 6, 16-byte stores
// (output4) for PV = 8 and 16.
@compute @workgroup_size(WG)
fn resample_rows_pat_v2(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.rows.x) { return; }
    let pl = pat_place(tid);
    var c = pat_walk();
    var dst = (p.info.z + pl.e) / 4u;
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = pat_row(&c, oh, pl.base, pl.t);
        output2[dst] = vec2<u32>(pack2x16float(v.a.xy), pack2x16float(v.a.zw));
        if (PV == 12u) {
            output2[dst + 1u] = vec2<u32>(pack2x16float(v.b.xy), pack2x16float(v.b.zw));
            output2[dst + 2u] = vec2<u32>(pack2x16float(v.c.xy), pack2x16float(v.c.zw));
        }
        dst += p.out_sizes.w / 4u;
    }
}

@compute @workgroup_size(WG)
fn resample_rows_pat_v1(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.rows.x) { return; }
    let pl = pat_place(tid);
    var c = pat_walk();
    var dst = (p.info.z + pl.e) / 2u;
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = pat_row(&c, oh, pl.base, pl.t);
        output[dst] = pack2x16float(v.a.xy);
        output[dst + 1u] = pack2x16float(v.a.zw);
        output[dst + 2u] = pack2x16float(v.b.xy);
        dst += p.out_sizes.w / 2u;
    }
}

@compute @workgroup_size(WG)
fn resample_rows_pat_v4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.rows.x) { return; }
    let pl = pat_place(tid);
    var c = pat_walk();
    var dst = (p.info.z + pl.e) / 8u;
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = pat_row(&c, oh, pl.base, pl.t);
        output4[dst] = vec4<u32>(pack2x16float(v.a.xy), pack2x16float(v.a.zw), pack2x16float(v.b.xy),
                                 pack2x16float(v.b.zw));
        if (PV == 16u) {
            output4[dst + 1u] = vec4<u32>(pack2x16float(v.c.xy), pack2x16float(v.c.zw), pack2x16float(v.d.xy),
                                          pack2x16float(v.d.zw));
        }
        dst += p.out_sizes.w / 8u;
    }
}

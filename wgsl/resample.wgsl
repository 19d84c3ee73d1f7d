// Resample / Resample1 / Resample2 (DML_OPERATOR_RESAMPLE, _RESAMPLE1, _RESAMPLE2), the reference
// kernels: nearest and linear, 1 to 4 dimensions (the host pads to 4, outermost first: n, c, h,
// w), float32, float16, int8 and uint8, every tensor strided. The fast paths (resample_rows.wgsl,
// resample_pattern.wgsl) include this file and are tested against these entry points.
//
// Index math (spec 4.2), per axis d and output index o:
//     x = (o - OutputPixelOffset[d]) / Scale[d] - InputPixelOffset[d]          (float32)
//     nearest: i = round(x) by the rounding rule, clamped to [0, size - 1]
//     linear:  i0 = clamp(floor(x)), i1 = clamp(floor(x) + 1), w1 = x - floor(x), w0 = 1 - w1
// WGSL's f32 division is not correctly rounded (2.5 ulp), so it would pick the neighbouring pixel
// near a boundary on some adapters. The host therefore evaluates x with the reference's float32
// arithmetic and binds the results as per-axis tables, in one of two forms (bit d of COMPUTED):
//   0 whole table:   one entry per output index (short axes: the table stays in the caches);
//   1 computed here: long axes (a table entry per output would cost as much as the output, and
//                    could pass the binding limit): x is evaluated with the reference's float32
//                    steps, each correctly rounded: the subtraction and the conversion of o as
//                    WGSL rounds them, the division by Scale in integers (div_rn), or as a
//                    multiplication by 1 / Scale where that is exact (a power-of-two Scale).
// Entries are already multiplied by the input stride:
//   nearest: one word, index * stride; the tensor: output[n,c,h,w] = input[base + Tn + Tc + Th + Tw]
//   linear:  one vec4 (i0 * stride, i1 * stride, bits(w0), bits(w1)); output = sum over the tap
//            combinations (a, b, c) of the outer axes, in that order, of
//            ((wn_a * wc_b) * wh_c) * (w0w * input[.. i0w] + w1w * input[.. i1w]), in f32, then stored
//            with the tensor's rounding (f16: pack2x16float; i8/u8: round half to even, saturate).
//            An axis with taps[d] == 1 is not interpolated: tap 0 only, weight 1.
// Bindings: input (u32 words), output (u32 words), output4 (vec4 words), output_atomic (atomic
//           u32 words), p (Params), table (u32), table4 (the same buffer as vec4 words).
// Entry points: resample_packed (packed output; one thread builds one 16-byte block),
// resample_strided (any output strides, 4-byte elements), resample_atomic (any output strides,
// 1- and 2-byte elements, merged into words with atomics because neighbouring strided elements
// may share a word).
// Past the binding limit a plan splits the output along one axis into parts, one dispatch each,
// binding windows of the input and output: out_sizes are the part's, origin its first index
// (the reference entry points add it before the table lookups), input_base may wrap around
// (u32 arithmetic: the tables hold offsets from the tensor's start, the window starts later).
// Overrides (structure, part of the pipeline cache key): MODE, DTYPE, WG, COMPUTED.

override WG: u32 = 256u;
override MODE: u32 = 0u;    // 0 nearest, 1 linear
override DTYPE: u32 = 0u;   // 0 float32, 1 float16, 2 int8, 3 uint8
override COMPUTED: u32 = 0u;  // bit d: axis d computes its coordinates (else: whole table; no cost to the others)

struct Params {
    out_sizes: vec4<u32>,     // output sizes padded to 4 dims, outermost first (of this step's part)
    origin: vec4<u32>,        // index of this step's first output (a plan split past the binding limit)
    out_strides: vec4<u32>,   // output strides in elements (strided and atomic entry points)
    table_start: vec4<u32>,   // first entry of each axis: nearest in words, linear in vec4 words
    taps: vec4<u32>,          // linear: 2 where the axis is interpolated, else 1
    shifts: vec4<u32>,        // log2 of out_sizes where a power of two, else 32 (x unused)
    in_sizes: vec4<u32>,      // computed axes: input sizes
    in_strides: vec4<u32>,    // computed axes: input strides in elements
    scales: vec4<f32>,        // computed axes: Scales
    inv_scales: vec4<f32>,    // computed axes: 1 / Scale where exact (a power of two), else 0 (divide)
    sig_rcps: vec4<f32>,      // computed axes: 2^23 / (Scale's 24-bit significand), rounded (div_rn)
    in_offsets: vec4<f32>,    // computed axes: InputPixelOffsets
    out_offsets: vec4<f32>,   // computed axes: OutputPixelOffsets
    count: u32,               // output elements
    input_base: u32,          // input's first element in its binding
    output_base: u32,         // output's first element in its binding
    rounding: u32,            // nearest, computed axes: 0 floor(x + 0.5), 1 floor(x), 2 ceil(x)
    row_threads: u32,         // resample_rows: threads
    row_blocks: u32,          // resample_rows: block columns per output row
    row_bands: u32,           // resample_rows: bands of rows per (n, c) plane
    band_rows: u32,           // resample_rows: output rows per band
    pat_row_words: u32,       // resample_rows_pat: words per input row
    pat_step: u32,            // resample_rows_pat: window step (words per thread)
    pat_k0: i32,              // resample_rows_pat: first thread's window word
    pat_w_start: u32,         // resample_rows_pat: first vec4 of its W weights (see pat_place)
}

#include "common/grid.wgsl"
#include "common/bytes.wgsl"
// (merge_word: the row walks' byte stores; resample_atomic merges its own bits)
#include "common/merge.wgsl"

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<storage, read_write> output4: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> output_atomic: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> p: Params;
@group(0) @binding(5) var<storage, read> table: array<u32>;
@group(0) @binding(6) var<storage, read> table4: array<vec4<u32>>;

// -- coordinates ------------------------------------------------------------------------------------
// float32(o) rounded to nearest even, as the reference's arange(float32) gives it (WGSL's f32(u32)
// may round either way past 2^24), without a conversion (the conversion unit is the narrow one on
// GPUs): below 2^24 exact, 2^23 + (o mod 2^23) from the bits, less 2^23 below it; past it
// o = hi * 256 + lo, both parts exact (hi < 2^24), their sum rounded once (WGSL's f32 addition is
// correctly rounded; a fused multiply-add of it rounds the same exact sum once).
fn f32_of(o: u32) -> f32 {
    if (o < 0x1000000u) { return bitcast<f32>(0x4B000000u | (o & 0x7FFFFFu)) - select(8388608.0, 0.0, o >= 0x800000u); }
    let hi = o >> 8u;
    let f_hi = bitcast<f32>(0x4B000000u | (hi & 0x7FFFFFu)) - select(8388608.0, 0.0, hi >= 0x800000u);
    return f_hi * 256.0 + (bitcast<f32>(0x4B000000u | (o & 0xFFu)) - 8388608.0);
}

// a / s correctly rounded (s > 0, both normal, a zero or a normal quotient: the plan checks the
// ranges), from the 24-bit significands ma and ms (ma / ms in (1/2, 2)): q = floor(ma * 2^25 / ms)
// (26 quotient bits) and the sticky bit (remainder != 0), rounded to nearest even. q is first
// estimated as 4 * (ma * y), y = 2^23 / ms rounded (the host's, `sig_rcps`; correctly rounded
// products: within 9 of the truth), then corrected with the exact remainder
// r = ma * 2^25 - q * ms (|r| < 2^31, so the wrapping difference of the low 32 bits). No division
// and two conversions (the conversion unit is the narrow one on GPUs).
fn div_rn(a: f32, s: f32, y: f32) -> f32 {
    if (a == 0.0) { return a; }
    let ua = bitcast<u32>(abs(a));
    let us = bitcast<u32>(s);
    let ma = (ua & 0x7FFFFFu) | 0x800000u;
    let ms = (us & 0x7FFFFFu) | 0x800000u;
    // the estimate in [2^24, 2^26], an integer: its significand shifted by its exponent's excess
    let uf = bitcast<u32>(4.0 * (bitcast<f32>(0x4B000000u | (ma & 0x7FFFFFu)) * y));
    var q = ((uf & 0x7FFFFFu) | 0x800000u) << ((uf >> 23u) - 150u);
    var r = bitcast<i32>((ma << 25u) - q * ms);
    let step = i32(floor(f32(r) * (y * 1.1920928955078125e-7)));   // r / ms, within 1 of the correction
    q = u32(i32(q) + step);
    r -= step * i32(ms);
    for (var i = 0u; i < 2u; i++) {
        if (r < 0) {
            q -= 1u;
            r += i32(ms);
        } else if (r >= i32(ms)) {
            q += 1u;
            r -= i32(ms);
        }
    }
    let drop = select(1u, 2u, q >= 0x2000000u);  // keep 24 significant bits
    let rem = q & ((1u << drop) - 1u);
    let half = 1u << (drop - 1u);
    var m = q >> drop;
    if (rem > half || (rem == half && (r != 0 || (m & 1u) == 1u))) { m += 1u; }
    // m * 2^e, e = Ea - Es - 25 + drop: biased exponent e + 150 (m = 2^24 carries into it)
    let e = ((ua >> 23u) & 0xFFu) + 125u + drop - ((us >> 23u) & 0xFFu);
    return bitcast<f32>((bitcast<u32>(a) & 0x80000000u) | ((e << 23u) + m - 0x800000u));
}

// x of output index o along a computed axis d, clipped to [-2, 2^31 - 128] (the reference clips it
// to [-2, size + 1]; past size - 1 either clip gives the last index, and linear weights of 0 and 1
// there: i0 = i1. The upper clip only keeps i32(floor(x)) in range). The product by an exact
// 1 / Scale is exact, so a fused multiply-add of the last two steps rounds as they do.
fn coordinate(d: u32, o: u32) -> f32 {
    let a = f32_of(o) - p.out_offsets[d];
    var q = a * p.inv_scales[d];
    if (p.inv_scales[d] == 0.0) { q = div_rn(a, p.scales[d], p.sig_rcps[d]); }
    let x = q - p.in_offsets[d];
    return clamp(x, -2.0, 2147483520.0);
}

fn computed_nearest(d: u32, o: u32) -> u32 {
    let x = coordinate(d, o);
    var f = ceil(x);
    if (p.rounding == 0u) { f = floor(x + 0.5); }
    if (p.rounding == 1u) { f = floor(x); }
    return u32(clamp(i32(f), 0, i32(p.in_sizes[d]) - 1)) * p.in_strides[d];
}

fn computed_linear(d: u32, o: u32) -> vec4<u32> {
    let x = coordinate(d, o);
    let f = floor(x);
    let last = i32(p.in_sizes[d]) - 1;
    let i0 = clamp(i32(f), 0, last);
    let i1 = clamp(i32(f) + 1, 0, last);
    let w1 = select(x - f, 0.0, i0 == i1);
    let s = p.in_strides[d];
    return vec4<u32>(u32(i0) * s, u32(i1) * s, bitcast<u32>(1.0 - w1), bitcast<u32>(w1));
}

// Nearest: input offset (index * stride) of output index o along axis d.
fn nearest_entry(d: u32, o: u32) -> u32 {
    if ((COMPUTED & (1u << d)) == 0u) { return table[p.table_start[d] + o]; }
    return computed_nearest(d, o);
}

// Linear: (i0 * stride, i1 * stride, bits(w0), bits(w1)) of output index o along axis d.
fn linear_entry(d: u32, o: u32) -> vec4<u32> {
    if ((COMPUTED & (1u << d)) == 0u) { return table4[p.table_start[d] + o]; }
    return computed_linear(d, o);
}

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
    if (DTYPE == 2u) { return round_byte(v, -128.0, 127.0); }
    return round_byte(v, 0.0, 255.0);
}

// -- nearest ------------------------------------------------------------------------------------
fn nearest_outer(o: vec4<u32>) -> u32 {
    return p.input_base + nearest_entry(0u, o.x) + nearest_entry(1u, o.y) + nearest_entry(2u, o.z);
}

// -- linear -------------------------------------------------------------------------------------
// Tap k (0 or 1) of a linear table entry: input offset and weight.
fn tap_offset(t: vec4<u32>, k: u32) -> u32 { return select(t.x, t.y, k == 1u); }
fn tap_weight(t: vec4<u32>, k: u32) -> f32 { return bitcast<f32>(select(t.z, t.w, k == 1u)); }

// Linear interpolation of the outputs (o.x, o.y, o.z, ow + j) for j = 0..3 (the host guarantees
// they lie in one row), accumulated per output in the reference's order.
fn linear4(o: vec4<u32>, ow: u32) -> vec4<f32> {
    let t0 = linear_entry(3u, ow);
    let t1 = linear_entry(3u, ow + 1u);
    let t2 = linear_entry(3u, ow + 2u);
    let t3 = linear_entry(3u, ow + 3u);
    let i0 = vec4<u32>(t0.x, t1.x, t2.x, t3.x);
    let i1 = vec4<u32>(t0.y, t1.y, t2.y, t3.y);
    let w0 = bitcast<vec4<f32>>(vec4<u32>(t0.z, t1.z, t2.z, t3.z));
    let w1 = bitcast<vec4<f32>>(vec4<u32>(t0.w, t1.w, t2.w, t3.w));
    let en = linear_entry(0u, o.x);
    let ec = linear_entry(1u, o.y);
    let eh = linear_entry(2u, o.z);
    var acc = vec4<f32>(0.0);
    for (var a = 0u; a < p.taps.x; a++) {
        for (var b = 0u; b < p.taps.y; b++) {
            for (var c = 0u; c < p.taps.z; c++) {
                let base = p.input_base + tap_offset(en, a) + tap_offset(ec, b) + tap_offset(eh, c);
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
    let t = linear_entry(3u, o.w);
    let en = linear_entry(0u, o.x);
    let ec = linear_entry(1u, o.y);
    let eh = linear_entry(2u, o.z);
    var acc = 0.0;
    for (var a = 0u; a < p.taps.x; a++) {
        for (var b = 0u; b < p.taps.y; b++) {
            for (var c = 0u; c < p.taps.z; c++) {
                let base = p.input_base + tap_offset(en, a) + tap_offset(ec, b) + tap_offset(eh, c);
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

// Four zero-extended bytes as one word, the first in the low byte.
fn bytes_word(v: vec4<u32>) -> u32 { return v.x | (v.y << 8u) | (v.z << 16u) | (v.w << 24u); }

// A 16-byte block from the raw bits of its eight 16-bit elements (a then b) ...
fn halves_block(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(a.x | (a.y << 16u), a.z | (a.w << 16u), b.x | (b.y << 16u), b.z | (b.w << 16u));
}

// ... or of its sixteen 8-bit elements (a, b, c, d).
fn bytes_block(a: vec4<u32>, b: vec4<u32>, c: vec4<u32>, d: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(bytes_word(a), bytes_word(b), bytes_word(c), bytes_word(d));
}

// Four f32 results as one word of four 8-bit outputs.
fn bytes4(v: vec4<f32>) -> u32 {
    return store_bits(v.x) | (store_bits(v.y) << 8u) | (store_bits(v.z) << 16u) | (store_bits(v.w) << 24u);
}

// Bits of the output element at o.
fn element_bits(o: vec4<u32>) -> u32 {
    if (MODE == 0u) { return raw(nearest_outer(o) + nearest_entry(3u, o.w)); }
    return store_bits(linear_value(o));
}

// -- 16-byte blocks -------------------------------------------------------------------------------
// Put element bits v at byte q of a block, keeping the other bytes.
// (Lane selects, not (*block)[w]: a vector indexed by a variable can land in local memory on NVIDIA.)
fn place(block: ptr<function, vec4<u32>>, q: u32, v: u32) {
    let lane = vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(q >> 2u);
    if (DTYPE == 0u) {
        *block = select(*block, vec4<u32>(v), lane);
        return;
    }
    let sh = (q & 3u) * 8u;
    let mask = select(0xFFu, 0xFFFFu, DTYPE == 1u) << sh;
    *block = select(*block, (*block & vec4<u32>(~mask)) | vec4<u32>(v << sh), lane);
}

// Raw bits of the nearest taps of the row's elements o.w + 4j .. o.w + 4j + 3 (base: the outer axes'
// offset), their indices computed here (COMPUTED bit 3).
fn nearest_quad(o: vec4<u32>, base: u32, j: u32) -> vec4<u32> {
    let ow = o.w + 4u * j;
    return gather4(base, vec4<u32>(nearest_entry(3u, ow), nearest_entry(3u, ow + 1u), nearest_entry(3u, ow + 2u),
                                   nearest_entry(3u, ow + 3u)));
}

// Raw bits of the input elements base + idx.
fn gather4(base: u32, idx: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(raw(base + idx.x), raw(base + idx.y), raw(base + idx.z), raw(base + idx.w));
}

// The four table words from word r (0-3) of the eight words a then b.
fn quad_at(a: vec4<u32>, b: vec4<u32>, r: u32) -> vec4<u32> {
    let lo = select(a, vec4<u32>(a.yzw, b.x), r == 1u);
    let hi = select(vec4<u32>(a.zw, b.xy), vec4<u32>(a.w, b.xyz), r == 3u);
    return select(lo, hi, r >= 2u);
}

// A whole block of 16 / elem_bytes() outputs that lies in one row (o.w .. o.w + epv - 1): the
// outer offsets and weights are looked up once per block.
fn row_block(o: vec4<u32>) -> vec4<u32> {
    if (MODE == 0u) {
        // Four elements at a time (written out: no vector indexed by a variable, which can land
        // in local memory on NVIDIA). A table axis's entries come as the aligned vec4s that hold
        // them (one more where the block's first entry is not on a vec4 boundary), shifted into
        // place: a warp's threads read entries 64 bytes apart, so each scalar load would touch as
        // many cache lines as a vec4 load (the table ends with a vec4 of padding, _table_words).
        let base = nearest_outer(o);
        if ((COMPUTED & 8u) != 0u) {
            let v0 = nearest_quad(o, base, 0u);
            if (DTYPE == 0u) { return v0; }
            let v1 = nearest_quad(o, base, 1u);
            if (DTYPE == 1u) { return halves_block(v0, v1); }
            return bytes_block(v0, v1, nearest_quad(o, base, 2u), nearest_quad(o, base, 3u));
        }
        let tj = p.table_start.w + o.w;
        let q = tj >> 2u;
        let r = tj & 3u;
        let t0 = table4[q];
        if (DTYPE == 0u) {
            if (r == 0u) { return gather4(base, t0); }
            return gather4(base, quad_at(t0, table4[q + 1u], r));
        }
        let t1 = table4[q + 1u];
        let v0 = gather4(base, quad_at(t0, t1, r));
        if (DTYPE == 1u) {
            var t2 = t1;
            if (r != 0u) { t2 = table4[q + 2u]; }
            return halves_block(v0, gather4(base, quad_at(t1, t2, r)));
        }
        let t2 = table4[q + 2u];
        let t3 = table4[q + 3u];
        var t4 = t3;
        if (r != 0u) { t4 = table4[q + 4u]; }
        return bytes_block(v0, gather4(base, quad_at(t1, t2, r)), gather4(base, quad_at(t2, t3, r)),
                           gather4(base, quad_at(t3, t4, r)));
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

// Word i (0-7) of the 32 bytes a then b.
fn word8(a: vec4<u32>, b: vec4<u32>, i: u32) -> u32 {
    let v = select(a, b, i >= 4u);
    let j = i & 3u;
    return select(select(v.x, v.y, j == 1u), select(v.z, v.w, j == 3u), j >= 2u);
}

// The 16 bytes from byte d (0 < d < 16) of the 32 bytes a then b.
fn window16(a: vec4<u32>, b: vec4<u32>, d: u32) -> vec4<u32> {
    let q = d >> 2u;
    let s = (d & 3u) * 8u;
    let x0 = word8(a, b, q);
    let x1 = word8(a, b, q + 1u);
    let x2 = word8(a, b, q + 2u);
    let x3 = word8(a, b, q + 3u);
    if (s == 0u) { return vec4<u32>(x0, x1, x2, x3); }
    let x4 = word8(a, b, q + 4u);
    let r = 32u - s;
    return vec4<u32>((x0 >> s) | (x1 << r), (x1 >> s) | (x2 << r), (x2 >> s) | (x3 << r), (x3 >> s) | (x4 << r));
}

@compute @workgroup_size(WG)
fn resample_packed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let eb = elem_bytes();
    let b = output_block(thread_id(gid, nwg), p.output_base * eb, p.count, eb);
    if (b.n == 0u) { return; }
    let o = coords(b.e_lo);
    if (b.n == 16u / eb && o.w + b.n <= p.out_sizes.w) {
        output4[b.t] = row_block(o + p.origin);
        return;
    }
    if (b.n == 16u / eb && p.out_sizes.w >= b.n) {
        // A whole block across the end of a row (rows of a block or more: it holds two rows'
        // elements): the row's last block and the next row's first, each built as above, and the
        // block's bytes taken from the two (the element path below, the only one before, ran
        // 16 elements one by one in such a thread while its warp waited).
        let m = p.out_sizes.w - o.w;   // the first row's elements in the block (1 .. 16 / eb - 1)
        var last = o;
        last.w = p.out_sizes.w - b.n;
        var next = o;
        next.w = p.out_sizes.w - 1u;
        next = next_coords(next);
        output4[b.t] = window16(row_block(last + p.origin), row_block(next + p.origin), 16u - m * eb);
        return;
    }
    // The first or last block of the tensor (whose bytes outside the tensor belong to someone
    // else and are kept), or a block over three rows or more: element by element, the
    // coordinates stepped from the first (no division per element).
    var block = vec4<u32>(0u);
    if (b.n != 16u / eb) { block = output4[b.t]; }
    var oc = o;
    for (var k = 0u; k < b.n; k++) {
        place(&block, b.q0 + k * eb, element_bits(oc + p.origin));
        oc = next_coords(oc);
    }
    output4[b.t] = block;
}

// The coordinates of the output element after o in row-major order (o.x may pass the last batch
// after the tensor's last element: never used).
fn next_coords(o: vec4<u32>) -> vec4<u32> {
    var n = o + vec4<u32>(0u, 0u, 0u, 1u);
    if (n.w == p.out_sizes.w) {
        n.w = 0u;
        n.z += 1u;
        if (n.z == p.out_sizes.z) {
            n.z = 0u;
            n.y += 1u;
            if (n.y == p.out_sizes.y) {
                n.y = 0u;
                n.x += 1u;
            }
        }
    }
    return n;
}

@compute @workgroup_size(WG)
fn resample_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= p.count) { return; }
    let o = coords(e);
    output[p.output_base + dot(o, p.out_strides)] = element_bits(o + p.origin);
}

@compute @workgroup_size(WG)
fn resample_atomic(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= p.count) { return; }
    let o = coords(e);
    let eb = elem_bytes();
    let dst = p.output_base + dot(o, p.out_strides);
    let per_word = 4u / eb;
    let sh = (dst % per_word) * eb * 8u;
    let mask = select(0xFFu, 0xFFFFu, DTYPE == 1u) << sh;
    atomicAnd(&output_atomic[dst / per_word], ~mask);
    atomicOr(&output_atomic[dst / per_word], element_bits(o + p.origin) << sh);
}

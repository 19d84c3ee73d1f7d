// Strided gather ("permute") machinery shared by the data-movement operators.
//
// The host describes an operator as an iteration space of up to 8 dimensions (innermost first)
// with, per dimension, a size, a source stride and a destination stride, both in elements:
//     output[dst_base + dot(i, dst_strides)] = input[src_base + dot(i, src_strides)]
// for every index i, in output order. Elements are moved as raw bit patterns of ELEM_BYTES bytes
// inside u32 words, so every data type works on every adapter (no f16/int64/f64 features needed).
//
// Bindings: 0 input (u32 words), 1 output (u32 words), 2 output (vec4 words), 3 output (atomic
//           u32 words), 4 uniforms (Permute). Each entry point uses one of 1, 2 or 3.
// Bodies of the entry points (an operator's file declares the entry points and calls one):
//   permute_packed   output contiguous in iteration order: one thread builds one 16-byte vec4 of
//                    output, so no two threads write one word and stores are full-width.
//   permute_strided  any output strides, ELEM_BYTES 4 or 8: one thread per EPT elements.
//   permute_atomic   any output strides, ELEM_BYTES 1 or 2: bytes merged into words with atomics,
//                    because neighbouring elements of a strided output may share a word.

override WG: u32 = 256u;
override ELEM_BYTES: u32 = 4u;   // 1, 2, 4 or 8
override EPT: u32 = 4u;          // elements per thread on the strided paths

struct Permute {
    sizes: array<vec4<u32>, 2>,        // iteration sizes, innermost first
    src_strides: array<vec4<u32>, 2>,  // elements
    dst_strides: array<vec4<u32>, 2>,  // elements
    shifts: array<vec4<u32>, 2>,       // log2(size) for power-of-two sizes, else 32
    count: u32,                        // elements in the iteration space
    src_base: u32,                     // element offset of the first input element in its binding
    dst_base: u32,                     // element offset of the first output element in its binding
    rank: u32,                         // dimensions in use
}

#include "common/grid.wgsl"

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<storage, read_write> output4: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> output_atomic: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> pm: Permute;

// The cursor keeps its index in two vectors, updated with select() rather than dynamic array
// indexing, so it stays in registers even where a driver does not unroll the loops.
struct Cursor {
    lo: vec4<u32>,   // index of dimensions 0..3
    hi: vec4<u32>,   // index of dimensions 4..7
    src: u32,
    dst: u32,
}

const LANES = vec4<u32>(0u, 1u, 2u, 3u);

fn pm_size(d: u32) -> u32 { return pm.sizes[d >> 2u][d & 3u]; }
fn pm_src_stride(d: u32) -> u32 { return pm.src_strides[d >> 2u][d & 3u]; }
fn pm_dst_stride(d: u32) -> u32 { return pm.dst_strides[d >> 2u][d & 3u]; }

// Word w of a 16-byte vector replaced by x (a select, not a dynamic store).
fn with_word(v: vec4<u32>, w: u32, x: u32) -> vec4<u32> {
    return select(v, vec4<u32>(x), LANES == vec4<u32>(w));
}

// Word w of a 16-byte vector, 0 for w > 3 (a dot product with a lane mask, not v[w]: a vector
// indexed by a variable can land in local memory on NVIDIA).
fn word_of(v: vec4<u32>, w: u32) -> u32 {
    return dot(v, select(vec4<u32>(0u), vec4<u32>(1u), LANES == vec4<u32>(w)));
}

// (d - 4 wraps past 3 for d < 4: the second term is then 0.)
fn cursor_get(c: Cursor, d: u32) -> u32 { return word_of(c.lo, d) + word_of(c.hi, d - 4u); }

fn cursor_set(c: ptr<function, Cursor>, d: u32, i: u32) {
    (*c).lo = select((*c).lo, vec4<u32>(i), LANES == vec4<u32>(d));
    (*c).hi = select((*c).hi, vec4<u32>(i), LANES + 4u == vec4<u32>(d));
}

// Position a cursor on element e (in iteration order): one division per dimension, or a
// shift and mask where the size is a power of two.
fn cursor_at(e: u32) -> Cursor {
    var c: Cursor;
    var rest = e;
    c.lo = vec4<u32>(0u);
    c.hi = vec4<u32>(0u);
    c.src = pm.src_base;
    c.dst = pm.dst_base;
    for (var d = 0u; d < 8u; d++) {
        if (d >= pm.rank) { break; }
        let sh = pm.shifts[d >> 2u][d & 3u];
        var i: u32;
        if (sh < 32u) {
            i = rest & ((1u << sh) - 1u);
            rest = rest >> sh;
        } else {
            let s = pm_size(d);
            i = rest % s;
            rest = rest / s;
        }
        cursor_set(&c, d, i);
        c.src += i * pm_src_stride(d);
        c.dst += i * pm_dst_stride(d);
    }
    return c;
}

// Advance a cursor by one element with carries; u32 wrap-around keeps the offsets exact.
fn cursor_step(c: ptr<function, Cursor>) {
    for (var d = 0u; d < 8u; d++) {
        let i = cursor_get(*c, d) + 1u;
        (*c).src += pm_src_stride(d);
        (*c).dst += pm_dst_stride(d);
        if (i < pm_size(d) || d + 1u >= pm.rank) {
            cursor_set(c, d, i);
            return;
        }
        (*c).src -= pm_size(d) * pm_src_stride(d);
        (*c).dst -= pm_size(d) * pm_dst_stride(d);
        cursor_set(c, d, 0u);
    }
}

// Bits of one sub-word element (ELEM_BYTES 1 or 2).
fn lane_mask() -> u32 {
    if (ELEM_BYTES == 1u) { return 0xFFu; }
    return 0xFFFFu;
}

// Raw bits of input element s: (low word, high word); sub-word elements come zero-extended.
fn fetch(s: u32) -> vec2<u32> {
    if (ELEM_BYTES == 8u) { return vec2<u32>(input[2u * s], input[2u * s + 1u]); }
    if (ELEM_BYTES == 4u) { return vec2<u32>(input[s], 0u); }
    if (ELEM_BYTES == 2u) { return vec2<u32>((input[s >> 1u] >> ((s & 1u) * 16u)) & 0xFFFFu, 0u); }
    return vec2<u32>((input[s >> 2u] >> ((s & 3u) * 8u)) & 0xFFu, 0u);
}

// A 16-byte block with element bits v put at byte q.
fn put(block: vec4<u32>, q: u32, v: vec2<u32>) -> vec4<u32> {
    let w = q >> 2u;
    if (ELEM_BYTES >= 4u) {
        let b = with_word(block, w, v.x);
        if (ELEM_BYTES == 8u) { return with_word(b, w + 1u, v.y); }
        return b;
    }
    let sh = (q & 3u) * 8u;
    let mask = lane_mask() << sh;
    return with_word(block, w, (word_of(block, w) & ~mask) | (v.x << sh));
}

fn permute_packed(gid: vec3<u32>, nwg: vec3<u32>) {
    let b = output_block(thread_id(gid, nwg), pm.dst_base * ELEM_BYTES, pm.count, ELEM_BYTES);
    if (b.n == 0u) { return; }
    let epv = 16u / ELEM_BYTES;
    var c = cursor_at(b.e_lo);
    var block = vec4<u32>(0u);
    if (b.n == epv) {
        // Whole block: lane positions are compile-time constants after unrolling.
        for (var k = 0u; k < epv; k++) {
            block = put(block, k * ELEM_BYTES, fetch(c.src));
            cursor_step(&c);
        }
    } else {
        // First or last block of the tensor: keep the bytes that belong to someone else.
        block = output4[b.t];
        for (var k = 0u; k < b.n; k++) {
            block = put(block, b.q0 + k * ELEM_BYTES, fetch(c.src));
            cursor_step(&c);
        }
    }
    output4[b.t] = block;
}

fn permute_strided(gid: vec3<u32>, nwg: vec3<u32>) {
    let count = pm.count;
    let e0 = thread_id(gid, nwg) * EPT;
    if (e0 >= count) { return; }
    var c = cursor_at(e0);
    let n = min(EPT, count - e0);
    for (var k = 0u; k < n; k++) {
        let v = fetch(c.src);
        if (ELEM_BYTES == 8u) {
            output[2u * c.dst] = v.x;
            output[2u * c.dst + 1u] = v.y;
        } else {
            output[c.dst] = v.x;
        }
        cursor_step(&c);
    }
}

fn permute_atomic(gid: vec3<u32>, nwg: vec3<u32>) {
    let count = pm.count;
    let e0 = thread_id(gid, nwg) * EPT;
    if (e0 >= count) { return; }
    var c = cursor_at(e0);
    let n = min(EPT, count - e0);
    let per_word = 4u / ELEM_BYTES;
    for (var k = 0u; k < n; k++) {
        let v = fetch(c.src).x;
        let w = c.dst / per_word;
        let sh = (c.dst % per_word) * ELEM_BYTES * 8u;
        let mask = lane_mask() << sh;
        atomicAnd(&output_atomic[w], ~mask);
        atomicOr(&output_atomic[w], v << sh);
        cursor_step(&c);
    }
}

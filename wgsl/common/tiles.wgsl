// 16-byte tiles for the block (de)interleave fast paths of DepthToSpace and SpaceToDepth.
//
// Both operators move, for one row and one chunk of V = 16 / ELEM_BYTES columns, BLOCK vectors of
// V elements to BLOCK vectors of V elements with the element order interleaved by BLOCK:
//   interleave:   out element q (of V*BLOCK) = vector (q % BLOCK), element (q / BLOCK)
//   deinterleave: out vector j, element t    = flat input element (t * BLOCK + j)
// Every index is a compile-time constant once BLOCK and ELEM_BYTES are fixed, so the moves
// compile to register shuffles, and loads and stores are whole 16-byte vectors.
// Bindings (besides common/permute.wgsl's): 5 input as vec4 words, 6 uniforms (Tiled),
// 7 input as vec2 words (8-byte loads for DepthToSpace with BLOCK 2).

#include "common/permute.wgsl"

override BLOCK: u32 = 2u;   // block size (the tiled path takes 2, 3 or 4; the row kernels any)

struct Tiled {
    in_stride_n: u32,    // input strides in elements (the w stride is 1)
    in_stride_c: u32,
    in_stride_h: u32,
    out_stride_n: u32,   // output strides in elements (the w stride is 1)
    out_stride_c: u32,
    out_stride_h: u32,
    channels: u32,       // channels of the row space (C' for DepthToSpace, C for SpaceToDepth)
    height: u32,         // rows (H, or H/b) per channel
    chunks: u32,         // chunks of columns per row
    chan_i: u32,         // channel map: other_c = i * chan_i + j * chan_j + c * chan_c
    chan_j: u32,
    chan_c: u32,
    threads: u32,        // invocations that do work
    src_base: u32,       // element offset of the input in its binding
    dst_base: u32,       // element offset of the output in its binding
}

@group(0) @binding(5) var<storage, read> input4: array<vec4<u32>>;
@group(0) @binding(6) var<uniform> tl: Tiled;
@group(0) @binding(7) var<storage, read> input2: array<vec2<u32>>;

// Up to four 16-byte vectors, chosen with select() so that nothing lands in an indexed private
// array (which drivers may keep in local memory when they do not unroll).
struct Quad {
    a: vec4<u32>,
    b: vec4<u32>,
    c: vec4<u32>,
    d: vec4<u32>,
}

fn quad_get(q: Quad, j: u32) -> vec4<u32> {
    return select(select(q.a, q.b, j == 1u), select(q.c, q.d, j == 3u), j >= 2u);
}

fn quad_set(q: Quad, j: u32, v: vec4<u32>) -> Quad {
    return Quad(select(q.a, v, j == 0u), select(q.b, v, j == 1u), select(q.c, v, j == 2u), select(q.d, v, j == 3u));
}

// Row coordinates of a tiled thread: (n, c, h, i, first column of the chunk).
struct TileAt {
    n: u32,
    c: u32,
    h: u32,
    i: u32,
    w0: u32,
}

// chunk = columns per thread (V, or V / 2 on the half-vector path of DepthToSpace).
fn tile_at(tid: u32, chunk: u32) -> TileAt {
    var t: TileAt;
    let chunks = tl.chunks;
    t.w0 = (tid % chunks) * chunk;
    var r = tid / chunks;
    t.i = r % BLOCK;
    r = r / BLOCK;
    t.h = r % tl.height;
    r = r / tl.height;
    t.c = r % tl.channels;
    t.n = r / tl.channels;
    return t;
}

// Element k (raw bits, zero-extended) of a 16-byte vector.
fn lane_get(v: vec4<u32>, k: u32) -> vec2<u32> {
    if (ELEM_BYTES == 8u) { return vec2<u32>(v[2u * k], v[2u * k + 1u]); }
    if (ELEM_BYTES == 4u) { return vec2<u32>(v[k], 0u); }
    if (ELEM_BYTES == 2u) { return vec2<u32>((v[k >> 1u] >> ((k & 1u) * 16u)) & 0xFFFFu, 0u); }
    return vec2<u32>((v[k >> 2u] >> ((k & 3u) * 8u)) & 0xFFu, 0u);
}

fn interleave(src: Quad) -> Quad {
    let v = 16u / ELEM_BYTES;
    var out = Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    for (var q = 0u; q < v * BLOCK; q++) {
        let o = q / v;
        out = quad_set(out, o, put(quad_get(out, o), (q % v) * ELEM_BYTES, lane_get(quad_get(src, q % BLOCK), q / BLOCK)));
    }
    return out;
}

fn deinterleave(src: Quad) -> Quad {
    let v = 16u / ELEM_BYTES;
    var out = Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    for (var j = 0u; j < BLOCK; j++) {
        var block = vec4<u32>(0u);
        for (var t = 0u; t < v; t++) {
            let q = t * BLOCK + j;
            block = put(block, t * ELEM_BYTES, lane_get(quad_get(src, q / v), q % v));
        }
        out = quad_set(out, j, block);
    }
    return out;
}

// ---- BLOCK == 2, written out word by word (the common case, and the one that must run at copy
// speed): no loops, so no driver has to unroll anything to keep it in registers.

// Interleave the elements of two 8-byte halves a and b: a0 b0 a1 b1 ... (16 bytes out).
fn zip2(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    if (ELEM_BYTES == 8u) { return vec4<u32>(a.x, a.y, b.x, b.y); }
    if (ELEM_BYTES == 4u) { return vec4<u32>(a.x, b.x, a.y, b.y); }
    if (ELEM_BYTES == 2u) {
        return vec4<u32>((a.x & 0xFFFFu) | (b.x << 16u), (a.x >> 16u) | (b.x & 0xFFFF0000u),
                         (a.y & 0xFFFFu) | (b.y << 16u), (a.y >> 16u) | (b.y & 0xFFFF0000u));
    }
    return vec4<u32>(spread8(a.x) | (spread8(b.x) << 8u), spread8(a.x >> 16u) | (spread8(b.x >> 16u) << 8u),
                     spread8(a.y) | (spread8(b.y) << 8u), spread8(a.y >> 16u) | (spread8(b.y >> 16u) << 8u));
}

// Bytes x0 x1 (low 16 bits of x) to x0 0 x1 0.
fn spread8(x: u32) -> u32 {
    return (x & 0xFFu) | ((x & 0xFF00u) << 8u);
}

// Bytes w0 . w2 . of a word to the low 16 bits: w0 w2.
fn compact8(w: u32) -> u32 {
    return (w & 0xFFu) | ((w >> 8u) & 0xFF00u);
}

// The even (x) and odd (y) elements of 16 bytes, each as an 8-byte half.
fn unzip2(p: vec4<u32>) -> array<vec2<u32>, 2> {
    if (ELEM_BYTES == 8u) { return array<vec2<u32>, 2>(p.xy, p.zw); }
    if (ELEM_BYTES == 4u) { return array<vec2<u32>, 2>(p.xz, p.yw); }
    if (ELEM_BYTES == 2u) {
        return array<vec2<u32>, 2>(
            vec2<u32>((p.x & 0xFFFFu) | (p.y << 16u), (p.z & 0xFFFFu) | (p.w << 16u)),
            vec2<u32>((p.x >> 16u) | (p.y & 0xFFFF0000u), (p.z >> 16u) | (p.w & 0xFFFF0000u)));
    }
    return array<vec2<u32>, 2>(
        vec2<u32>(compact8(p.x) | (compact8(p.y) << 16u), compact8(p.z) | (compact8(p.w) << 16u)),
        vec2<u32>(compact8(p.x >> 8u) | (compact8(p.y >> 8u) << 16u), compact8(p.z >> 8u) | (compact8(p.w >> 8u) << 16u)));
}

fn deinterleave2(p: vec4<u32>, q: vec4<u32>) -> Quad {
    let u = unzip2(p);
    let w = unzip2(q);
    return Quad(vec4<u32>(u[0], w[0]), vec4<u32>(u[1], w[1]), vec4<u32>(0u), vec4<u32>(0u));
}

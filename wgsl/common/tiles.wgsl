// 16-byte tiles for the block (de)interleave fast paths of DepthToSpace and SpaceToDepth.
//
// Both operators move, for one row and one chunk of V = 16 / ELEM_BYTES columns, BLOCK vectors of
// V elements to BLOCK vectors of V elements with the element order interleaved by BLOCK:
//   interleave:   out element q (of V*BLOCK) = vector (q % BLOCK), element (q / BLOCK)
//   deinterleave: out vector j, element t    = flat input element (t * BLOCK + j)
// Every index is a compile-time constant once BLOCK and ELEM_BYTES are fixed, so the moves
// compile to register shuffles, and loads and stores are whole 16-byte vectors.
// Bindings (besides common/permute.wgsl's): 5 input as vec4 words, 6 uniforms (Tiled).

#include "common/permute.wgsl"

override BLOCK: u32 = 2u;   // block size of the tiled path: 2, 3 or 4

struct Tiled {
    in_strides: vec4<u32>,   // elements: n, c, h (w is 1)
    out_strides: vec4<u32>,  // elements: n, c, h (w is 1)
    sizes: vec4<u32>,        // x N, y channels of the row space, z rows (H) per channel, w chunks per row
    chan: vec4<u32>,         // channel map: other_c = i * chan.x + j * chan.y + c * chan.z
    info: vec4<u32>,         // x thread count, y input base, z output base (elements)
}

@group(0) @binding(5) var<storage, read> input4: array<vec4<u32>>;
@group(0) @binding(6) var<uniform> tl: Tiled;

const MAX_BLOCK: u32 = 4u;

// Row coordinates of a tiled thread: (n, c, h, i, first column of the chunk).
struct TileAt {
    n: u32,
    c: u32,
    h: u32,
    i: u32,
    w0: u32,
}

fn tile_at(tid: u32) -> TileAt {
    let v = 16u / ELEM_BYTES;
    var t: TileAt;
    let chunks = tl.sizes.w;
    t.w0 = (tid % chunks) * v;
    var r = tid / chunks;
    t.i = r % BLOCK;
    r = r / BLOCK;
    t.h = r % tl.sizes.z;
    r = r / tl.sizes.z;
    t.c = r % tl.sizes.y;
    t.n = r / tl.sizes.y;
    return t;
}

// Element k (raw bits, zero-extended) of a 16-byte vector.
fn lane_get(v: vec4<u32>, k: u32) -> vec2<u32> {
    if (ELEM_BYTES == 8u) { return vec2<u32>(v[2u * k], v[2u * k + 1u]); }
    if (ELEM_BYTES == 4u) { return vec2<u32>(v[k], 0u); }
    if (ELEM_BYTES == 2u) { return vec2<u32>((v[k >> 1u] >> ((k & 1u) * 16u)) & 0xFFFFu, 0u); }
    return vec2<u32>((v[k >> 2u] >> ((k & 3u) * 8u)) & 0xFFu, 0u);
}

fn interleave(src: ptr<function, array<vec4<u32>, MAX_BLOCK>>) -> array<vec4<u32>, MAX_BLOCK> {
    let v = 16u / ELEM_BYTES;
    var out: array<vec4<u32>, MAX_BLOCK>;
    for (var q = 0u; q < v * BLOCK; q++) {
        var block = out[q / v];
        place(&block, (q % v) * ELEM_BYTES, lane_get((*src)[q % BLOCK], q / BLOCK));
        out[q / v] = block;
    }
    return out;
}

fn deinterleave(src: ptr<function, array<vec4<u32>, MAX_BLOCK>>) -> array<vec4<u32>, MAX_BLOCK> {
    let v = 16u / ELEM_BYTES;
    var out: array<vec4<u32>, MAX_BLOCK>;
    for (var j = 0u; j < BLOCK; j++) {
        var block = vec4<u32>(0u);
        for (var t = 0u; t < v; t++) {
            let q = t * BLOCK + j;
            place(&block, t * ELEM_BYTES, lane_get((*src)[q / v], q % v));
        }
        out[j] = block;
    }
    return out;
}

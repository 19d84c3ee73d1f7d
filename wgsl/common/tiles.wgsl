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

override BLOCK: u32 = 2u;   // block size (the tiled paths take 2, 3, 4 or 8; the row kernels any)

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
    chunks_m: u32,       // magic pairs (grid.wgsl's div_magic) of chunks, height and channels
    chunks_s: u32,
    height_m: u32,
    height_s: u32,
    channels_m: u32,
    channels_s: u32,
}

@group(0) @binding(5) var<storage, read> input4: array<vec4<u32>>;
@group(0) @binding(6) var<uniform> tl: Tiled;
@group(0) @binding(7) var<storage, read> input2: array<vec2<u32>>;
@group(0) @binding(10) var<storage, read_write> output2: array<vec2<u32>>;

// Output rows that start on 4-byte boundaries only (windows of a larger buffer): each 16-byte
// vector (wholly inside its row) is stored as one 16-byte, two 8-byte or four 4-byte pieces by
// its alignment; otherwise every row starts on a 16-byte boundary.
override OUT_RAGGED: bool = false;
// OUT_RAGGED with the rows' common alignment 4 or 8 bytes: every vector stored as OUT_PIECES (4 or
// 2) pieces, alike in every thread (no branch on each vector's alignment, whose paths a warp
// spanning rows of different alignments all takes); 0: pieces by each vector's alignment.
override OUT_PIECES: u32 = 0u;

// Rows of whole 8-byte halves but not of 16-byte vectors (the tiled kernels on CPU adapters): a
// thread's tile is BLOCK halves, each loaded into the low half of its vector (the high half 0), so
// that the same (de)interleave leaves the result in the first BLOCK halves of the output vectors.
override TILE_HALF: bool = false;

// Elements a thread takes of each row of its tile: a 16-byte vector's, or with TILE_HALF a half's.
fn tile_v() -> u32 { return select(16u, 8u, TILE_HALF) / ELEM_BYTES; }

// The tile's input at element e: a 16-byte vector, or with TILE_HALF an 8-byte half (high half 0).
fn load_in(e: u32) -> vec4<u32> {
    if (TILE_HALF) { return vec4<u32>(input2[e / (8u / ELEM_BYTES)], 0u, 0u); }
    return input4[e / (16u / ELEM_BYTES)];
}

// Half k of an (de)interleaved tile: vector k / 2's low (k even) or high half.
fn tile_half(o: Oct, k: u32) -> vec2<u32> {
    let x = oct_get(o, k / 2u);
    return select(x.xy, x.zw, (k & 1u) == 1u);
}

// Vector x of the output at element e.
fn store_out(e: u32, x: vec4<u32>) {
    if (!OUT_RAGGED) {
        output4[e / (16u / ELEM_BYTES)] = x;
        return;
    }
    let w = e * ELEM_BYTES / 4u;
    if (OUT_PIECES == 0u && w % 4u == 0u) {
        output4[w / 4u] = x;
    } else if (OUT_PIECES == 2u || (OUT_PIECES == 0u && w % 2u == 0u)) {
        output2[w / 2u] = x.xy;
        output2[w / 2u + 1u] = x.zw;
    } else {
        output[w] = x.x;
        output[w + 1u] = x.y;
        output[w + 2u] = x.z;
        output[w + 3u] = x.w;
    }
}

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
    var r = div_magic(tid, tl.chunks_m, tl.chunks_s);
    t.w0 = (tid - r * tl.chunks) * chunk;
    t.i = r % BLOCK;
    r = r / BLOCK;
    let q = div_magic(r, tl.height_m, tl.height_s);
    t.h = r - q * tl.height;
    t.n = div_magic(q, tl.channels_m, tl.channels_s);
    t.c = q - t.n * tl.channels;
    return t;
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

// ---- BLOCK == 4, written out word by word like BLOCK 2. For elements of up to 4 bytes both
// directions are a 4 x 4 transpose of words plus, inside each 16-byte group, a fixed shuffle of
// the elements of 4 words (t4_elems for DepthToSpace, its inverse u4_elems for SpaceToDepth).

// The 4 x 4 word matrix (a, b, c, d) transposed: vector m holds word m of a, b, c and d.
fn words4(a: vec4<u32>, b: vec4<u32>, c: vec4<u32>, d: vec4<u32>) -> Quad {
    return Quad(vec4<u32>(a.x, b.x, c.x, d.x), vec4<u32>(a.y, b.y, c.y, d.y), vec4<u32>(a.z, b.z, c.z, d.z),
                vec4<u32>(a.w, b.w, c.w, d.w));
}

fn pair_lo(p: u32, q: u32) -> u32 { return (p & 0xFFFFu) | (q << 16u); }
fn pair_hi(p: u32, q: u32) -> u32 { return (p >> 16u) | (q & 0xFFFF0000u); }

// 4 words of one column of 4 rows (w.x = row 0, ...), each holding 4 / ELEM_BYTES elements, to
// their interleave: row-minor order (element k of row j lands at k * 4 + j).
fn t4_elems(w: vec4<u32>) -> vec4<u32> {
    if (ELEM_BYTES == 2u) {
        return vec4<u32>(pair_lo(w.x, w.y), pair_lo(w.z, w.w), pair_hi(w.x, w.y), pair_hi(w.z, w.w));
    }
    if (ELEM_BYTES == 1u) {
        // swap 16-bit halves between words (0, 2) and (1, 3), then bytes between (0, 1) and (2, 3)
        let a0 = pair_lo(w.x, w.z);
        let a2 = pair_hi(w.x, w.z);
        let a1 = pair_lo(w.y, w.w);
        let a3 = pair_hi(w.y, w.w);
        return vec4<u32>((a0 & 0x00FF00FFu) | ((a1 & 0x00FF00FFu) << 8u), ((a0 >> 8u) & 0x00FF00FFu) | (a1 & 0xFF00FF00u),
                         (a2 & 0x00FF00FFu) | ((a3 & 0x00FF00FFu) << 8u), ((a2 >> 8u) & 0x00FF00FFu) | (a3 & 0xFF00FF00u));
    }
    return w;
}

// The inverse of t4_elems: 16 bytes in interleaved order to 4 words, word j = row j's elements.
fn u4_elems(w: vec4<u32>) -> vec4<u32> {
    if (ELEM_BYTES == 2u) {
        return vec4<u32>(pair_lo(w.x, w.z), pair_hi(w.x, w.z), pair_lo(w.y, w.w), pair_hi(w.y, w.w));
    }
    return t4_elems(w);  // the 4 x 4 byte transpose is its own inverse
}

fn interleave4(s: Quad) -> Quad {
    if (ELEM_BYTES == 8u) {
        return Quad(vec4<u32>(s.a.xy, s.b.xy), vec4<u32>(s.c.xy, s.d.xy), vec4<u32>(s.a.zw, s.b.zw),
                    vec4<u32>(s.c.zw, s.d.zw));
    }
    let t = words4(s.a, s.b, s.c, s.d);
    return Quad(t4_elems(t.a), t4_elems(t.b), t4_elems(t.c), t4_elems(t.d));
}

fn deinterleave4(s: Quad) -> Quad {
    if (ELEM_BYTES == 8u) {
        return Quad(vec4<u32>(s.a.xy, s.c.xy), vec4<u32>(s.a.zw, s.c.zw), vec4<u32>(s.b.xy, s.d.xy),
                    vec4<u32>(s.b.zw, s.d.zw));
    }
    return words4(u4_elems(s.a), u4_elems(s.b), u4_elems(s.c), u4_elems(s.d));
}

// ---- BLOCK == 3, written out word by word: every output word names its elements with constant
// indices (tri_word(s, 5u) and the like), so each element is a fixed shift and mask.

// Element k (raw bits, zero-extended) of a vector of elements of up to 4 bytes.
fn elem_bits(v: vec4<u32>, k: u32) -> u32 {
    let pw = 4u / ELEM_BYTES;
    return extractBits(v[k / pw], (k % pw) * ELEM_BYTES * 8u, ELEM_BYTES * 8u);
}

// The elements e0.. of one output word packed (4 / ELEM_BYTES of them).
fn pack_word(e0: u32, e1: u32, e2: u32, e3: u32) -> u32 {
    if (ELEM_BYTES == 1u) { return e0 | (e1 << 8u) | (e2 << 16u) | (e3 << 24u); }
    if (ELEM_BYTES == 2u) { return e0 | (e1 << 16u); }
    return e0;
}

// DepthToSpace: element q of the interleave of rows s.a, s.b, s.c is row q % 3, column q / 3.
fn tri_el(s: Quad, q: u32) -> u32 {
    let r = q % 3u;
    return elem_bits(select(select(s.a, s.b, r == 1u), s.c, r == 2u), q / 3u);
}

fn tri_word(s: Quad, k: u32) -> u32 {
    let q = k * (4u / ELEM_BYTES);
    return pack_word(tri_el(s, q), tri_el(s, q + 1u), tri_el(s, q + 2u), tri_el(s, q + 3u));
}

fn interleave3(s: Quad) -> Quad {
    if (ELEM_BYTES == 8u) {
        return Quad(vec4<u32>(s.a.xy, s.b.xy), vec4<u32>(s.c.xy, s.a.zw), vec4<u32>(s.b.zw, s.c.zw), vec4<u32>(0u));
    }
    return Quad(vec4<u32>(tri_word(s, 0u), tri_word(s, 1u), tri_word(s, 2u), tri_word(s, 3u)),
                vec4<u32>(tri_word(s, 4u), tri_word(s, 5u), tri_word(s, 6u), tri_word(s, 7u)),
                vec4<u32>(tri_word(s, 8u), tri_word(s, 9u), tri_word(s, 10u), tri_word(s, 11u)), vec4<u32>(0u));
}

// SpaceToDepth: element f of the run of vectors s.a, s.b, s.c (vector f / V, element f % V).
fn run_el(s: Quad, f: u32) -> u32 {
    let v = 16u / ELEM_BYTES;
    let r = f / v;
    return elem_bits(select(select(s.a, s.b, r == 1u), s.c, r == 2u), f % v);
}

// Word k of output row j: its elements t hold run element 3 t + j.
fn run_word(s: Quad, j: u32, k: u32) -> u32 {
    let f = 3u * k * (4u / ELEM_BYTES) + j;
    return pack_word(run_el(s, f), run_el(s, f + 3u), run_el(s, f + 6u), run_el(s, f + 9u));
}

fn deinterleave3(s: Quad) -> Quad {
    if (ELEM_BYTES == 8u) {
        return Quad(vec4<u32>(s.a.xy, s.b.zw), vec4<u32>(s.a.zw, s.c.xy), vec4<u32>(s.b.xy, s.c.zw), vec4<u32>(0u));
    }
    return Quad(vec4<u32>(run_word(s, 0u, 0u), run_word(s, 0u, 1u), run_word(s, 0u, 2u), run_word(s, 0u, 3u)),
                vec4<u32>(run_word(s, 1u, 0u), run_word(s, 1u, 1u), run_word(s, 1u, 2u), run_word(s, 1u, 3u)),
                vec4<u32>(run_word(s, 2u, 0u), run_word(s, 2u, 1u), run_word(s, 2u, 2u), run_word(s, 2u, 3u)),
                vec4<u32>(0u));
}

// ---- BLOCK == 8: eight vectors (Oct), rows 0-3 and 4-7 each through the BLOCK 4 shuffle, their
// results zipped in groups of one column of 4 rows (ELEM_BYTES words).

struct Oct {
    lo: Quad,
    hi: Quad,
}

fn zip_lo(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    if (ELEM_BYTES == 1u) { return vec4<u32>(a.x, b.x, a.y, b.y); }
    if (ELEM_BYTES == 2u) { return vec4<u32>(a.xy, b.xy); }
    return a;
}

fn zip_hi(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    if (ELEM_BYTES == 1u) { return vec4<u32>(a.z, b.z, a.w, b.w); }
    if (ELEM_BYTES == 2u) { return vec4<u32>(a.zw, b.zw); }
    return b;
}

// The inverse of zip_lo / zip_hi: (p, q) = (zip_lo(a, b), zip_hi(a, b)) back to a (unzip_a) and b.
fn unzip_a(p: vec4<u32>, q: vec4<u32>) -> vec4<u32> {
    if (ELEM_BYTES == 1u) { return vec4<u32>(p.x, p.z, q.x, q.z); }
    if (ELEM_BYTES == 2u) { return vec4<u32>(p.xy, q.xy); }
    return p;
}

fn unzip_b(p: vec4<u32>, q: vec4<u32>) -> vec4<u32> {
    if (ELEM_BYTES == 1u) { return vec4<u32>(p.y, p.w, q.y, q.w); }
    if (ELEM_BYTES == 2u) { return vec4<u32>(p.zw, q.zw); }
    return q;
}

// DepthToSpace: rows 0..7 (one vector each) to 8 output vectors.
fn interleave8(s: Oct) -> Oct {
    if (ELEM_BYTES == 8u) {
        return Oct(Quad(vec4<u32>(s.lo.a.xy, s.lo.b.xy), vec4<u32>(s.lo.c.xy, s.lo.d.xy), vec4<u32>(s.hi.a.xy, s.hi.b.xy),
                        vec4<u32>(s.hi.c.xy, s.hi.d.xy)),
                   Quad(vec4<u32>(s.lo.a.zw, s.lo.b.zw), vec4<u32>(s.lo.c.zw, s.lo.d.zw), vec4<u32>(s.hi.a.zw, s.hi.b.zw),
                        vec4<u32>(s.hi.c.zw, s.hi.d.zw)));
    }
    // word m of rows 0-3 (wa) and of rows 4-7 (wb), each shuffled into column-major order
    let wa = words4(s.lo.a, s.lo.b, s.lo.c, s.lo.d);
    let wb = words4(s.hi.a, s.hi.b, s.hi.c, s.hi.d);
    let a0 = t4_elems(wa.a);
    let b0 = t4_elems(wb.a);
    let a1 = t4_elems(wa.b);
    let b1 = t4_elems(wb.b);
    let a2 = t4_elems(wa.c);
    let b2 = t4_elems(wb.c);
    let a3 = t4_elems(wa.d);
    let b3 = t4_elems(wb.d);
    return Oct(Quad(zip_lo(a0, b0), zip_hi(a0, b0), zip_lo(a1, b1), zip_hi(a1, b1)),
               Quad(zip_lo(a2, b2), zip_hi(a2, b2), zip_lo(a3, b3), zip_hi(a3, b3)));
}

// SpaceToDepth: 8 consecutive input vectors to rows 0..7 (the inverse of interleave8).
fn deinterleave8(s: Oct) -> Oct {
    if (ELEM_BYTES == 8u) {
        return Oct(Quad(vec4<u32>(s.lo.a.xy, s.hi.a.xy), vec4<u32>(s.lo.a.zw, s.hi.a.zw), vec4<u32>(s.lo.b.xy, s.hi.b.xy),
                        vec4<u32>(s.lo.b.zw, s.hi.b.zw)),
                   Quad(vec4<u32>(s.lo.c.xy, s.hi.c.xy), vec4<u32>(s.lo.c.zw, s.hi.c.zw), vec4<u32>(s.lo.d.xy, s.hi.d.xy),
                        vec4<u32>(s.lo.d.zw, s.hi.d.zw)));
    }
    let wa = Quad(u4_elems(unzip_a(s.lo.a, s.lo.b)), u4_elems(unzip_a(s.lo.c, s.lo.d)), u4_elems(unzip_a(s.hi.a, s.hi.b)),
                  u4_elems(unzip_a(s.hi.c, s.hi.d)));
    let wb = Quad(u4_elems(unzip_b(s.lo.a, s.lo.b)), u4_elems(unzip_b(s.lo.c, s.lo.d)), u4_elems(unzip_b(s.hi.a, s.hi.b)),
                  u4_elems(unzip_b(s.hi.c, s.hi.d)));
    return Oct(words4(wa.a, wa.b, wa.c, wa.d), words4(wb.a, wb.b, wb.c, wb.d));
}

// Input vectors first .. first + BLOCK - 1, written out per block size (no select picks a slot).
fn load_run(first: u32) -> Oct {
    if (TILE_HALF) { return load_run_halves(first); }
    var o = Oct(Quad(input4[first], input4[first + 1u], vec4<u32>(0u), vec4<u32>(0u)),
                Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u)));
    if (BLOCK >= 3u) { o.lo.c = input4[first + 2u]; }
    if (BLOCK >= 4u) { o.lo.d = input4[first + 3u]; }
    if (BLOCK == 8u) { o.hi = Quad(input4[first + 4u], input4[first + 5u], input4[first + 6u], input4[first + 7u]); }
    return o;
}

// TILE_HALF: input halves first .. first + BLOCK - 1 (half indices), two a vector.
fn load_run_halves(first: u32) -> Oct {
    let z = vec2<u32>(0u);
    var o = Oct(Quad(vec4<u32>(input2[first], input2[first + 1u]), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u)),
                Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u)));
    if (BLOCK == 3u) { o.lo.b = vec4<u32>(input2[first + 2u], z); }
    if (BLOCK >= 4u) { o.lo.b = vec4<u32>(input2[first + 2u], input2[first + 3u]); }
    if (BLOCK == 8u) {
        o.lo.c = vec4<u32>(input2[first + 4u], input2[first + 5u]);
        o.lo.d = vec4<u32>(input2[first + 6u], input2[first + 7u]);
    }
    return o;
}

// 16 bytes of input from element e, at any alignment (the tiled kernels of unaligned rows): the
// four words from e's word, each funnel-shifted by e's byte offset in it with the next word's low
// bytes. A load past the binding's end reads within the binding or 0 (WGSL's bounds rule), and
// the kernels store only bytes that come from elements of their rows.
fn load_any16(e: u32) -> vec4<u32> {
    let byte = e * ELEM_BYTES;
    let w = byte / 4u;
    let a = vec4<u32>(input[w], input[w + 1u], input[w + 2u], input[w + 3u]);
    if (ELEM_BYTES >= 4u) { return a; }
    let s = vec4<u32>((byte % 4u) * 8u);
    let n = vec4<u32>(a.yzw, input[w + 4u]);
    // (n << (32 - s)) as two shifts, so that s = 0 shifts the next word out instead of by 0
    return (a >> s) | ((n << (vec4<u32>(31u) - s)) << vec4<u32>(1u));
}

// A tile of BLOCK vectors: BLOCK 2, 3 and 4 in lo, 8 in lo and hi.
fn oct_get(o: Oct, j: u32) -> vec4<u32> {
    return select(quad_get(o.lo, j), quad_get(o.hi, j - 4u), j >= 4u);
}

// The tile's (de)interleave for every block size the tiled kernels take (2, 3, 4 and 8).
fn interleave_tile(s: Oct) -> Oct {
    if (BLOCK == 2u) {
        return Oct(Quad(zip2(s.lo.a.xy, s.lo.b.xy), zip2(s.lo.a.zw, s.lo.b.zw), vec4<u32>(0u), vec4<u32>(0u)), s.hi);
    }
    if (BLOCK == 3u) { return Oct(interleave3(s.lo), s.hi); }
    if (BLOCK == 4u) { return Oct(interleave4(s.lo), s.hi); }
    return interleave8(s);
}

fn deinterleave_tile(s: Oct) -> Oct {
    if (BLOCK == 2u) { return Oct(deinterleave2(s.lo.a, s.lo.b), s.hi); }
    if (BLOCK == 3u) { return Oct(deinterleave3(s.lo), s.hi); }
    if (BLOCK == 4u) { return Oct(deinterleave4(s.lo), s.hi); }
    return deinterleave8(s);
}

// ---- Staged stores (<op>_tiled_staged): a thread's BLOCK output vectors go through workgroup
// memory, and the workgroup stores vectors k, k + WG, ... of its run in order, so that each warp
// store is contiguous (a thread storing its own BLOCK consecutive vectors measured at
// half the copy speed on the H100, where loads of that shape ran at copy speed).

// Vectors a workgroup stages: WG * BLOCK <= TR_VECTORS (the plan picks WG), each group of 8
// followed by one spare vector, so that threads writing vectors BLOCK apart hit distinct banks.
const TR_VECTORS = 512u;
var<workgroup> tr_stage: array<vec4<u32>, 576>;
// Per thread of the workgroup: the output element its tile starts at.
var<workgroup> tr_base: array<u32, 256>;

fn tr_slot(p: u32) -> u32 { return p + (p >> 3u); }

// The BLOCK vectors of thread li's tile into slots first, first + step, ... (DepthToSpace: li * BLOCK
// and 1, a thread's vectors consecutive in the output; SpaceToDepth: li and WG, each of its BLOCK
// output rows a run of the workgroup's threads).
fn stage_tile(first: u32, step: u32, out: Oct) {
    tr_stage[tr_slot(first)] = out.lo.a;
    tr_stage[tr_slot(first + step)] = out.lo.b;
    if (BLOCK >= 3u) { tr_stage[tr_slot(first + 2u * step)] = out.lo.c; }
    if (BLOCK >= 4u) { tr_stage[tr_slot(first + 3u * step)] = out.lo.d; }
    if (BLOCK == 8u) {
        tr_stage[tr_slot(first + 4u * step)] = out.hi.a;
        tr_stage[tr_slot(first + 5u * step)] = out.hi.b;
        tr_stage[tr_slot(first + 6u * step)] = out.hi.c;
        tr_stage[tr_slot(first + 7u * step)] = out.hi.d;
    }
}

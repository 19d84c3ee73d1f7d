// Tile transpose shared by DepthToSpace, SpaceToDepth and Resample (its layout step), for inputs
// whose channels are their fastest dimension (NHWC) and outputs with contiguous rows: the row kernel would gather each
// output row with the input's w stride (one scattered load per element), where this kernel
// loads runs of channels and stores runs of a row.
//
// The host writes both operators as planes p = (n, h, i, j) of a 2-D move:
//     output[dst(p) + r + k * out_k] = input[src(p) + (r % TP_DIV) * in_r0 + (r / TP_DIV) * in_r1 + k * in_k]
// with r along an output row (DepthToSpace: q = w*b + j, TP_DIV = b; SpaceToDepth: w, TP_DIV = 1)
// and k along the channels (DepthToSpace c', SpaceToDepth c). With TP_MERGE, r runs on over the
// rows of one plane dimension that follow each other in the output (r / r_w of them, input stride
// in_r2; r % r_w takes the place of r above). A workgroup moves one tile of
// TP_K channels x tile_r row elements of one plane (TP_K x tile_r x words an element = TP_WORDS
// staged words; 256 threads, 4 to 8 elements each): it loads the tile with threads along k (runs of channels), stages it in
// workgroup memory one word per element (two for 8-byte elements), and stores whole output words
// with threads along r. In transpose_entry every output row starts and ends on a word boundary
// (the plan's condition), so no two threads write one word; transpose_ragged_entry (below) takes
// 8/16-bit rows that do not, merging their shared words with atomics. With TP_VEC (runs of channels and output rows on
// 16-byte boundaries, the plan's condition) both sides move whole 16-byte vectors, and 8/16-bit
// elements stage packed (a staged word holds 4 / 2 consecutive row elements of one channel).
// Bindings: common/permute.wgsl's input and output (u32 words), output4 and (ragged entry)
// output_atomic, common/tiles.wgsl's input4, 9 uniforms (Transpose).

#include "common/permute.wgsl"
#include "common/tiles.wgsl"
#include "common/merge.wgsl"

override TP_DIV: u32 = 1u;   // r's interleave: output row element r reads input column r / TP_DIV, lane r % TP_DIV
override TP_K: u32 = 32u;    // channels a tile: a power of two from 2 to 32, the plan's fit to the channels
override TP_VEC: bool = false;  // 16-byte loads along k and stores along r
// 8/16-bit elements whose runs of channels and output rows are whole words but not whole vectors
// (the plan's condition): word loads along k (4 / 2 channels) staged packed as TP_VEC's are, words
// stored along r, each one staged word.
override TP_WPACK: bool = false;
// Rows merged along a plane dimension whose output rows follow each other (TP_MERGE, the plan's
// condition: that dimension's output stride is the row's length): r runs over r_w-element rows of
// that dimension too, r / r_w its index (input stride in_r2), so a tile of a short row is not
// mostly idle and rows that end inside words merge none of their shared words.
override TP_MERGE: bool = false;
// Staged words: TP_K rows of TP_WORDS / TP_K words, each row a spare word longer (odd pitch against
// bank conflicts), or 4 words longer with TP_VEC (rows stay 16-byte aligned for vector reads).
override TP_WORDS: u32 = 2048u;  // staged words a tile (without the spare words): 512 to 4096
var<workgroup> tp_stage: array<vec4<u32>, TP_WORDS / 4u + 32u>;

struct Transpose {
    workgroups: u32,    // tiles in all: planes x tiles_r x tiles_k
    tiles_r: u32,       // tiles along a row and along the channels
    tiles_k: u32,
    plane_h: u32,       // plane sizes (h, i, j); n = planes / (h * i * j)
    plane_i: u32,
    plane_j: u32,
    in_n: u32,          // plane strides of the input and the output, in elements
    in_h: u32,
    in_i: u32,
    in_j: u32,
    out_n: u32,
    out_h: u32,
    out_i: u32,
    out_j: u32,
    r_len: u32,         // elements of an output row
    in_r0: u32,         // input strides of r % TP_DIV and r / TP_DIV
    in_r1: u32,
    k_len: u32,         // channels
    in_k: u32,          // channel strides of the input and the output
    out_k: u32,
    src_base: u32,      // element offset of the input in its binding
    dst_base: u32,      // element offset of the output in its binding
    // div_magic pairs (grid.wgsl) of tiles_k, tiles_r, plane_j, plane_i and plane_h: every thread
    // splits its workgroup's index with multiplies, not five divisions by uniforms
    tiles_k_m: u32, tiles_k_s: u32,
    tiles_r_m: u32, tiles_r_s: u32,
    plane_j_m: u32, plane_j_s: u32,
    plane_i_m: u32, plane_i_s: u32,
    plane_h_m: u32, plane_h_s: u32,
    r_w: u32,           // TP_MERGE: elements of one output row (r % r_w along it, r / r_w across rows)
    in_r2: u32,         // TP_MERGE: input stride of r / r_w
    r_w_m: u32, r_w_s: u32,
}

@group(0) @binding(9) var<uniform> tp: Transpose;

// One tile: its plane's first input and output elements, first row element and first channel,
// and the staging geometry.
struct Tp {
    src0: u32,
    dst0: u32,
    r0: u32,
    k0: u32,
}


fn tp_wpe() -> u32 { return max(ELEM_BYTES / 4u, 1u); }  // words an element
fn tp_pw() -> u32 { return max(4u / ELEM_BYTES, 1u); }   // elements a word
// 8/16-bit elements on the vector path and with TP_WPACK stage packed, tp_pw() of a channel's row
// elements a word (the word path stages one element a word).
fn tp_packed() -> bool { return (TP_VEC || TP_WPACK) && ELEM_BYTES < 4u; }
fn tp_tr() -> u32 { return TP_WORDS / TP_K / tp_wpe() * select(1u, tp_pw(), tp_packed()); } // tile elements along r
fn tp_row_words() -> u32 { return tp_tr() * tp_wpe() / select(1u, tp_pw(), tp_packed()); }
fn tp_pitch() -> u32 { return tp_row_words() + select(1u, 4u, TP_VEC); }

fn stage_get(w: u32) -> u32 { return tp_stage[w >> 2u][w & 3u]; }
fn stage_set(w: u32, v: u32) { tp_stage[w >> 2u][w & 3u] = v; }

fn tp_src(at: Tp, r: u32, k: u32) -> u32 {
    var q = r;
    var base = at.src0 + k * tp.in_k;
    if (TP_MERGE) {
        let row = div_magic(r, tp.r_w_m, tp.r_w_s);
        q = r - row * tp.r_w;
        base += row * tp.in_r2;
    }
    return base + (q % TP_DIV) * tp.in_r0 + (q / TP_DIV) * tp.in_r1;
}

// Element (r0 + lr, k) of the tile, zero outside the plane (and past the tile: lr >= its rows).
fn tp_load(at: Tp, lr: u32, k: u32) -> vec2<u32> {
    let r = at.r0 + lr;
    if (k >= tp.k_len || r >= tp.r_len || lr >= tp_tr()) { return vec2<u32>(0u); }
    return fetch(tp_src(at, r, k));
}

// Element (lr, lk) of the tile into its staged word(s) (nothing past the tile's rows).
fn tp_put(lk: u32, lr: u32, v: vec2<u32>) {
    if (lr >= tp_tr()) { return; }
    let w = lk * tp_pitch() + lr * tp_wpe();
    stage_set(w, v.x);
    if (ELEM_BYTES == 8u) { stage_set(w + 1u, v.y); }
}

// Word path: threads along k (a run of TP_K channels), rows lr0 + s * WG / TP_K, in rounds of 8
// written out so that all of a round's loads are in flight at once.
fn tp_load_words(at: Tp, l: u32) {
    let lk = l % TP_K;
    let k = at.k0 + lk;
    let d = WG / TP_K;
    let tr = tp_tr();
    for (var lr = l / TP_K; lr < tr; lr += 8u * d) {
        let v0 = tp_load(at, lr, k);
        let v1 = tp_load(at, lr + d, k);
        let v2 = tp_load(at, lr + 2u * d, k);
        let v3 = tp_load(at, lr + 3u * d, k);
        let v4 = tp_load(at, lr + 4u * d, k);
        let v5 = tp_load(at, lr + 5u * d, k);
        let v6 = tp_load(at, lr + 6u * d, k);
        let v7 = tp_load(at, lr + 7u * d, k);
        tp_put(lk, lr, v0);
        tp_put(lk, lr + d, v1);
        tp_put(lk, lr + 2u * d, v2);
        tp_put(lk, lr + 3u * d, v3);
        tp_put(lk, lr + 4u * d, v4);
        tp_put(lk, lr + 5u * d, v5);
        tp_put(lk, lr + 6u * d, v6);
        tp_put(lk, lr + 7u * d, v7);
    }
}

// Word path: output word ow of channel k0 + kk's row, threads along the words.
fn tp_store_words(at: Tp, l: u32) {
    let pw = tp_pw();
    let wpe = tp_wpe();
    let ow_row = tp_tr() * wpe / pw;
    let bits = min(ELEM_BYTES, 4u) * 8u;
    for (var idx = l; idx < TP_K * ow_row; idx += WG) {
        let kk = idx / ow_row;
        let ow = idx % ow_row;
        let k = at.k0 + kk;
        let r = at.r0 + ow * pw / wpe;   // the word's first element
        if (k < tp.k_len && r < tp.r_len) {
            var word = 0u;
            if (tp_packed()) {
                word = stage_get(kk * tp_pitch() + ow);   // pw of the row's elements, staged packed
            } else {
                for (var u = 0u; u < pw; u++) {
                    word |= stage_get(kk * tp_pitch() + ow * pw + u) << (u * bits);
                }
            }
            // word ow of the tile: element r (its half ow % 2 for 8-byte elements)
            output[(at.dst0 + r + k * tp.out_k) * ELEM_BYTES / 4u + ow % wpe] = word;
        }
    }
}

// Vector of the tile's input run: row lr, channels k .. k + V - 1 (16 bytes; zero outside).
fn tp_load_vec(at: Tp, lr: u32, k: u32) -> vec4<u32> {
    let r = at.r0 + lr;
    if (k >= tp.k_len || r >= tp.r_len) { return vec4<u32>(0u); }
    return input4[tp_src(at, r, k) / (16u / ELEM_BYTES)];
}

// The V elements of vector x (channels kv * V ..; 4- and 8-byte elements: 8/16-bit ones stage
// packed, tp_load_vecs_packed) into their staged words, one row each. Written out with constant
// component indices (a vector indexed by a loop variable can land in local memory on NVIDIA).
fn tp_put_vec(kv: u32, lr: u32, x: vec4<u32>) {
    let v = 16u / ELEM_BYTES;
    let w = kv * v * tp_pitch() + lr * tp_wpe();
    if (ELEM_BYTES == 8u) {   // 2 elements of 2 words
        stage_set(w, x.x);
        stage_set(w + 1u, x.y);
        stage_set(w + tp_pitch(), x.z);
        stage_set(w + tp_pitch() + 1u, x.w);
        return;
    }
    stage_set(w, x.x);   // 4 elements of 1 word
    stage_set(w + tp_pitch(), x.y);
    stage_set(w + 2u * tp_pitch(), x.z);
    stage_set(w + 3u * tp_pitch(), x.w);
}

// 16-bit packed staging of word e of rows r and r + 1 (a and b) at staged word w: the low halves
// (channel 2e) and the high halves (channel 2e + 1), each a word of the two rows.
fn tp_put_halves(w: u32, a: u32, b: u32) {
    stage_set(w, (a & 0xFFFFu) | (b << 16u));
    stage_set(w + tp_pitch(), (a >> 16u) | (b & 0xFFFF0000u));
}

// 8-bit packed staging of word e of four rows (q) at staged word w: byte k of every row (channel
// 4e + k), one word each.
fn tp_put_bytes(w: u32, q: vec4<u32>) {
    stage_set(w, pack4(q & vec4<u32>(0xFFu)));
    stage_set(w + tp_pitch(), pack4((q >> vec4<u32>(8u)) & vec4<u32>(0xFFu)));
    stage_set(w + 2u * tp_pitch(), pack4((q >> vec4<u32>(16u)) & vec4<u32>(0xFFu)));
    stage_set(w + 3u * tp_pitch(), pack4(q >> vec4<u32>(24u)));
}

// Packed staging (8/16-bit elements, vector path): group g = the vectors of tp_pw() consecutive
// rows at one run of V channels, loaded together; each staged word takes one channel's element
// from each of them (a 2 x 2 half-word or 4 x 4 byte transpose of the vectors' words), so that the
// tile holds TP_WORDS words of data, not of expanded elements.
fn tp_load_vecs_packed(at: Tp, l: u32) {
    let v = 16u / ELEM_BYTES;
    let kvs = TP_K / v;
    let n = tp_tr() / tp_pw() * kvs;   // groups a tile
    for (var g = l; g < n; g += WG) {
        let rq = g / kvs;
        let kv = g % kvs;
        let k = at.k0 + kv * v;
        let r = rq * tp_pw();
        let x0 = tp_load_vec(at, r, k);
        let x1 = tp_load_vec(at, r + 1u, k);
        let w = kv * v * tp_pitch() + rq;   // channel kv * v's staged word of these rows
        // (written out: constant component indices, as tp_put_vec)
        if (ELEM_BYTES == 2u) {
            tp_put_halves(w, x0.x, x1.x);
            tp_put_halves(w + 2u * tp_pitch(), x0.y, x1.y);
            tp_put_halves(w + 4u * tp_pitch(), x0.z, x1.z);
            tp_put_halves(w + 6u * tp_pitch(), x0.w, x1.w);
        } else {
            let x2 = tp_load_vec(at, r + 2u, k);
            let x3 = tp_load_vec(at, r + 3u, k);
            tp_put_bytes(w, vec4<u32>(x0.x, x1.x, x2.x, x3.x));
            tp_put_bytes(w + 4u * tp_pitch(), vec4<u32>(x0.y, x1.y, x2.y, x3.y));
            tp_put_bytes(w + 8u * tp_pitch(), vec4<u32>(x0.z, x1.z, x2.z, x3.z));
            tp_put_bytes(w + 12u * tp_pitch(), vec4<u32>(x0.w, x1.w, x2.w, x3.w));
        }
    }
}

// Word of the tile's input run: row lr, channels k .. k + tp_pw() - 1 (zero outside).
fn tp_load_word(at: Tp, lr: u32, k: u32) -> u32 {
    let r = at.r0 + lr;
    if (k >= tp.k_len || r >= tp.r_len) { return 0u; }
    return input[tp_src(at, r, k) / tp_pw()];
}

// TP_WPACK: tp_load_vecs_packed with words: group g = the words of tp_pw() consecutive rows at one
// run of tp_pw() channels, each staged word one channel's element from each.
fn tp_load_words_packed(at: Tp, l: u32) {
    let pw = tp_pw();
    let kws = TP_K / pw;
    let n = tp_tr() / pw * kws;   // groups a tile
    for (var g = l; g < n; g += WG) {
        let rq = g / kws;
        let kw = g % kws;
        let k = at.k0 + kw * pw;
        let r = rq * pw;
        let w = kw * pw * tp_pitch() + rq;
        let x0 = tp_load_word(at, r, k);
        let x1 = tp_load_word(at, r + 1u, k);
        if (ELEM_BYTES == 2u) {
            tp_put_halves(w, x0, x1);
        } else {
            tp_put_bytes(w, vec4<u32>(x0, x1, tp_load_word(at, r + 2u, k), tp_load_word(at, r + 3u, k)));
        }
    }
}

// Vector path, 4- and 8-byte elements: vectors idx = l, l + WG, ... (TP_K / V vectors a tile row),
// in rounds of 4 loaded before any is staged.
fn tp_load_vecs(at: Tp, l: u32) {
    let v = 16u / ELEM_BYTES;
    let kvs = TP_K / v;
    let n = TP_WORDS * 4u / 16u;   // vectors a tile
    for (var i0 = l; i0 < n; i0 += 4u * WG) {
        let x0 = tp_load_vec(at, i0 / kvs, at.k0 + (i0 % kvs) * v);
        var x1 = vec4<u32>(0u);
        var x2 = vec4<u32>(0u);
        var x3 = vec4<u32>(0u);
        let i1 = i0 + WG;
        let i2 = i0 + 2u * WG;
        let i3 = i0 + 3u * WG;
        if (i1 < n) { x1 = tp_load_vec(at, i1 / kvs, at.k0 + (i1 % kvs) * v); }
        if (i2 < n) { x2 = tp_load_vec(at, i2 / kvs, at.k0 + (i2 % kvs) * v); }
        if (i3 < n) { x3 = tp_load_vec(at, i3 / kvs, at.k0 + (i3 % kvs) * v); }
        tp_put_vec(i0 % kvs, i0 / kvs, x0);
        if (i1 < n) { tp_put_vec(i1 % kvs, i1 / kvs, x1); }
        if (i2 < n) { tp_put_vec(i2 % kvs, i2 / kvs, x2); }
        if (i3 < n) { tp_put_vec(i3 % kvs, i3 / kvs, x3); }
    }
}

// Vector path: output vector ov of channel k0 + kk's row, threads along the vectors; its
// elements are consecutive staged words (read as vectors: rows stay 16-byte aligned).
fn tp_store_vecs(at: Tp, l: u32) {
    let v = 16u / ELEM_BYTES;
    let ovs = tp_tr() / v;   // output vectors a tile row
    for (var idx = l; idx < TP_K * ovs; idx += WG) {
        let kk = idx / ovs;
        let ov = idx % ovs;
        let k = at.k0 + kk;
        let r = at.r0 + ov * v;
        if (k < tp.k_len && r < tp.r_len) {
            // its 16 bytes are four consecutive staged words (8/16-bit elements staged packed)
            let q = (kk * tp_pitch() + ov * v * tp_wpe() / select(1u, tp_pw(), tp_packed())) / 4u;
            output4[(at.dst0 + r + k * tp.out_k) / v] = tp_stage[q];
        }
    }
}

fn pack4(b: vec4<u32>) -> u32 { return b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u); }

// Tile wg's plane, first row element and first channel (workgroup indices split by multiplies).
fn tp_tile(wg: u32) -> Tp {
    let t1 = div_magic(wg, tp.tiles_k_m, tp.tiles_k_s);
    let kt = wg - t1 * tp.tiles_k;
    let t2 = div_magic(t1, tp.tiles_r_m, tp.tiles_r_s);
    let rt = t1 - t2 * tp.tiles_r;
    let t3 = div_magic(t2, tp.plane_j_m, tp.plane_j_s);
    let j = t2 - t3 * tp.plane_j;
    let t4 = div_magic(t3, tp.plane_i_m, tp.plane_i_s);
    let i = t3 - t4 * tp.plane_i;
    let n = div_magic(t4, tp.plane_h_m, tp.plane_h_s);
    let h = t4 - n * tp.plane_h;
    return Tp(tp.src_base + n * tp.in_n + h * tp.in_h + i * tp.in_i + j * tp.in_j,
              tp.dst_base + n * tp.out_n + h * tp.out_h + i * tp.out_i + j * tp.out_j, rt * tp_tr(), kt * TP_K);
}

@compute @workgroup_size(WG)
fn transpose_entry(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= tp.workgroups) { return; }   // uniform across the workgroup: no barrier is skipped unevenly
    let at = tp_tile(wg);
    if (TP_WPACK) {
        tp_load_words_packed(at, l);
    } else if (tp_packed()) {
        tp_load_vecs_packed(at, l);
    } else if (TP_VEC) {
        tp_load_vecs(at, l);
    } else {
        tp_load_words(at, l);
    }
    workgroupBarrier();
    if (TP_VEC) { tp_store_vecs(at, l); } else { tp_store_words(at, l); }
}

// ---- transpose_ragged_entry: 8/16-bit elements whose output rows start or end inside a word (odd
// row lengths, windows at any element offset). The word path's loads and staging; a thread stores
// output word q of a tile row's segment, counted from the word holding its first element (a
// segment of tp_tr() elements spans at most tp_tr() / tp_pw() + 1 words) through merge_word
// (common/merge.wgsl): a word the segment fills stored plainly, a word it shares (with the
// neighbouring row, the next tile of the row, or bytes outside the tensor) merged with atomics. The
// output is bound twice: `output` and `output_atomic`.
fn tp_store_ragged(at: Tp, l: u32) {
    let pw = tp_pw();
    let bits = ELEM_BYTES * 8u;
    let emask = (1u << bits) - 1u;
    let words = tp_tr() / pw + 1u;   // words a segment may touch
    let n = min(tp_tr(), tp.r_len - min(at.r0, tp.r_len));   // the segment's elements
    for (var idx = l; idx < TP_K * words; idx += WG) {
        let kk = idx / words;
        let k = at.k0 + kk;
        if (k >= tp.k_len || n == 0u) { continue; }
        let e0 = at.dst0 + at.r0 + k * tp.out_k;   // the segment's first element in the binding
        let w = e0 / pw + idx % words;
        if (w * pw >= e0 + n) { continue; }
        var word = 0u;
        var mask = 0u;
        for (var u = 0u; u < pw; u++) {
            let e = w * pw + u;
            if (e >= e0 && e < e0 + n) {
                word |= (stage_get(kk * tp_pitch() + (e - e0)) & emask) << (u * bits);
                mask |= emask << (u * bits);
            }
        }
        merge_word(w, word, mask);
    }
}

@compute @workgroup_size(WG)
fn transpose_ragged_entry(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= tp.workgroups) { return; }   // uniform across the workgroup
    let at = tp_tile(wg);
    tp_load_words(at, l);
    workgroupBarrier();
    tp_store_ragged(at, l);
}

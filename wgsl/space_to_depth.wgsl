// SpaceToDepth / SpaceToDepth1 (DML_OPERATOR_SPACE_TO_DEPTH, _SPACE_TO_DEPTH1), every data type.
//
// Index math (spec 2.3), b = BlockSize, input {N, C, H, W}, output {N, C*b*b, H/b, W/b}:
//   DEPTH_COLUMN_ROW ("DCR"): output[n, (i*b + j)*C + c, h, w] = input[n, c, h*b+i, w*b+j]
//   COLUMN_ROW_DEPTH ("CRD"): output[n, c*b*b + i*b + j, h, w] = input[n, c, h*b+i, w*b+j]
// The host (src/dmlwgsl/ops/space_to_depth.py) folds this into a 6-D iteration space in output
// order, (n, i, j, c, h, w) for DCR and (n, c, i, j, h, w) for CRD, with strides linear in the
// index, and the shader runs the shared strided gather (common/permute.wgsl, which also documents
// bindings and uniforms).
// Fast path (space_to_depth_tiled), for rows that are contiguous and 16-byte aligned on both
// sides and BLOCK 2, 3, 4 or 8: one thread loads b consecutive 16-byte vectors of input row h*b + i, and
// stores their b-way deinterleave, vector j going to output channel (i*b + j)*C + c (DCR) or
// c*b*b + i*b + j (CRD) at row h.
// space_to_depth_tiled_staged (GPUs, output rows off 16-byte boundaries): the same tiles, stored
// through workgroup memory (tiles.wgsl's staged stores).
// General fast path (space_to_depth_rows, + space_to_depth_row_edges for unaligned rows), for any
// block size, element size, row length and alignment and any input strides, with an output whose
// w stride is 1: output row (n, out_c(i, j, c), h) reads input row (n, c, h*b + i) from column j
// with stride b (common/rows.wgsl; row_at below is the formula above for one row).
// space_to_depth_rows_tiled (below): those rows at blocks 2, 3, 4 and 8 with contiguous input rows,
// each 16-byte output block lane 0 of the deinterleave of b 16-byte input runs loaded at any
// alignment (the GPU's path for 8-bit elements and 16-bit ones at blocks 2-4).

#include "common/tiles.wgsl"
#include "common/staged_store.wgsl"
#include "common/rows.wgsl"
#include "common/transpose.wgsl"

// Output row (n, c, h, i, j): its first input element (w = 0) and output element.
fn row_of(n: u32, c: u32, h: u32, i: u32, j: u32) -> RowAt {
    let out_c = i * rw.chan_i + j * rw.chan_j + c * rw.chan_c;
    return RowAt(rw.src_base + n * rw.in_stride_n + c * rw.in_stride_c + (h * BLOCK + i) * rw.in_stride_h
                     + j * rw.in_stride_w,
                 rw.dst_base + n * rw.out_stride_n + out_c * rw.out_stride_c + h * rw.out_stride_h);
}

// Output row r, rows ordered (n, c, h, i, j) (the b*b rows one input block feeds are neighbours).
fn row_at(r: u32) -> RowAt {
    let j = r % BLOCK;
    let i = (r / BLOCK) % BLOCK;
    let t = r / (BLOCK * BLOCK);
    let q = div_magic(t, rw.height_m, rw.height_s);
    let h = t - q * rw.height;
    let n = div_magic(q, rw.channels_m, rw.channels_s);
    return row_of(n, q - n * rw.channels, h, i, j);
}

// Output row r in memory order (packed_rows_body): (n, output channel, h), the output channel
// split by the order (DCR: (i*b + j)*C + c, chan_c = 1; CRD: c*b*b + i*b + j).
fn row_at_out(r: u32) -> RowAt {
    let q = div_magic(r, rw.height_m, rw.height_s);
    let h = r - q * rw.height;
    let n = div_magic(q, rw.out_channels_m, rw.out_channels_s);
    let oc = q - n * rw.out_channels;
    var c = oc / (BLOCK * BLOCK);
    var ij = oc % (BLOCK * BLOCK);
    if (rw.chan_c == 1u) {
        ij = div_magic(oc, rw.channels_m, rw.channels_s);
        c = oc - ij * rw.channels;
    }
    return row_of(n, c, h, ij / BLOCK, ij % BLOCK);
}

@compute @workgroup_size(WG)
fn space_to_depth_tiled(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= tl.threads) { return; }
    let v = tile_v();
    // row space: input rows (n, c, h, i) of C channels; tl.chan maps (i, j, c) to the output channel
    let t = tile_at(tid, v);
    let out = deinterleave_tile(load_run(tile_src(t) / v));
    store_row(t, 0u, out.lo.a);
    store_row(t, 1u, out.lo.b);
    if (BLOCK >= 3u) { store_row(t, 2u, out.lo.c); }
    if (BLOCK >= 4u) { store_row(t, 3u, out.lo.d); }
    if (BLOCK == 8u) {
        store_row(t, 4u, out.hi.a);
        store_row(t, 5u, out.hi.b);
        store_row(t, 6u, out.hi.c);
        store_row(t, 7u, out.hi.d);
    }
}

// The tiled kernel with staged stores (tiles.wgsl's store phase; GPUs, output rows off 16-byte
// boundaries): the loads and the deinterleave of space_to_depth_tiled, vector j of thread li staged
// in slot j * WG + li, which the store phase gives back to thread li: each thread stores its own
// vectors, as in space_to_depth_tiled, but in OUT_PIECES pieces alike and only after every load of
// the workgroup (H200: 0.95-2.24x the unstaged kernel's per-vector pieces on 44 window rows, where
// the unstaged kernel with OUT_PIECES had run 0.63-1.07x).
@compute @workgroup_size(WG)
fn space_to_depth_tiled_staged(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                               @builtin(local_invocation_index) li: u32) {
    let tid = thread_id(gid, nwg);
    let v = 16u / ELEM_BYTES;
    if (tid < tl.threads) {
        let t = tile_at(tid, v);
        stage_tile(li, WG, deinterleave_tile(load_run(tile_src(t) / v)));
        tr_base[li] = tile_dst(t, 0u);
    }
    workgroupBarrier();
    store_staged(li, tid - li);
}

// Staged vector p: thread p % WG's vector of output row j = p / WG (channel out_c(i, j, c)).
fn staged_owner(p: u32) -> u32 { return p % WG; }
fn staged_dst(p: u32) -> u32 { return tr_base[p % WG] + (p / WG) * tl.chan_j * tl.out_stride_c; }

// A tile's first input element: input row h*b + i of channel c, from column w0 * b.
fn tile_src(t: TileAt) -> u32 {
    return tl.src_base + t.n * tl.in_stride_n + t.c * tl.in_stride_c + (t.h * BLOCK + t.i) * tl.in_stride_h
           + t.w0 * BLOCK;
}

// The first output element of a tile's vector j: output channel out_c(i, j, c), row h, column w0.
fn tile_dst(t: TileAt, j: u32) -> u32 {
    let out_c = t.i * tl.chan_i + j * tl.chan_j + t.c * tl.chan_c;
    return tl.dst_base + t.n * tl.out_stride_n + out_c * tl.out_stride_c + t.h * tl.out_stride_h + t.w0;
}

// Vector x of a tile's output row j (channel out_c(i, j, c)), at row h.
fn store_row(t: TileAt, j: u32, x: vec4<u32>) {
    let e = tile_dst(t, j);
    if (TILE_HALF) {
        output2[e / tile_v()] = x.xy;   // (the deinterleave of halves fills each row's low half)
    } else {
        store_out(e, x);
    }
}

// ---- space_to_depth_rows_tiled: the row kernel's rows (any length and alignment, contiguous input
// rows) with the tiled kernel's loads and deinterleave. A thread takes BPT whole 16-byte blocks
// of one output row's interior (blocks k, k + regions, ... of the row; the edges are
// row_edges_body's). A block of V = 16 / ELEM_BYTES elements from row element q0 reads input
// elements src + (q0 + t) * BLOCK, t < V: BLOCK 16-byte input runs from any element (load_any16),
// whose deinterleave's lane 0 (tiles.wgsl's deinterleave_tile, compile-time indices) is the block.
// ROW_EDGES: threads past the regions run row_edges_body in the same dispatch.
override ROW_EDGES: bool = false;

fn run_lane0(src: u32) -> vec4<u32> {
    let v = 16u / ELEM_BYTES;
    var s = Oct(Quad(load_any16(src), load_any16(src + v), vec4<u32>(0u), vec4<u32>(0u)),
                Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u)));
    if (BLOCK >= 3u) { s.lo.c = load_any16(src + 2u * v); }
    if (BLOCK >= 4u) { s.lo.d = load_any16(src + 3u * v); }
    if (BLOCK == 8u) {
        s.hi = Quad(load_any16(src + 4u * v), load_any16(src + 5u * v), load_any16(src + 6u * v),
                    load_any16(src + 7u * v));
    }
    return deinterleave_tile(s).lo.a;
}

@compute @workgroup_size(WG)
fn space_to_depth_rows_tiled(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    let regions = rw.rows * rw.regions;
    if (tid < regions) {
        let r = div_magic(tid, rw.regions_m, rw.regions_s);
        let row = row_at(r);
        let span = interior(row.dst);
        let k = tid - r * rw.regions;
        for (var m = 0u; m < BPT; m++) {
            let t = span.x + k + m * rw.regions;
            if (t >= span.y) { break; }
            output4[t] = run_lane0(row.src + (t * (16u / ELEM_BYTES) - row.dst) * BLOCK);
        }
    } else if (ROW_EDGES) {
        row_edges_body(tid - regions);
    }
}

@compute @workgroup_size(WG)
fn space_to_depth_packed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_packed(gid, nwg);
}

@compute @workgroup_size(WG)
fn space_to_depth_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_strided(gid, nwg);
}

@compute @workgroup_size(WG)
fn space_to_depth_atomic(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_atomic(gid, nwg);
}

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
// General fast path (space_to_depth_rows, + space_to_depth_row_edges for unaligned rows), for any
// block size, element size, row length and alignment and any input strides, with an output whose
// w stride is 1: output row (n, out_c(i, j, c), h) reads input row (n, c, h*b + i) from column j
// with stride b (common/rows.wgsl; row_at below is the formula above for one row).

#include "common/tiles.wgsl"
#include "common/rows.wgsl"
#include "common/transpose.wgsl"

// Output row r, rows ordered (n, c, h, i, j) (the b*b rows one input block feeds are neighbours):
// its first input element (w = 0) and output element.
fn row_at(r: u32) -> RowAt {
    let j = r % BLOCK;
    let i = (r / BLOCK) % BLOCK;
    let t = r / (BLOCK * BLOCK);
    let q = div_magic(t, rw.height_m, rw.height_s);
    let h = t - q * rw.height;
    let n = div_magic(q, rw.channels_m, rw.channels_s);
    let c = q - n * rw.channels;
    let out_c = i * rw.chan_i + j * rw.chan_j + c * rw.chan_c;
    return RowAt(rw.src_base + n * rw.in_stride_n + c * rw.in_stride_c + (h * BLOCK + i) * rw.in_stride_h
                     + j * rw.in_stride_w,
                 rw.dst_base + n * rw.out_stride_n + out_c * rw.out_stride_c + h * rw.out_stride_h);
}

@compute @workgroup_size(WG)
fn space_to_depth_tiled(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= tl.threads) { return; }
    let v = tile_v();
    // row space: input rows (n, c, h, i) of C channels; tl.chan maps (i, j, c) to the output channel
    let t = tile_at(tid, v);
    let e = tl.src_base + t.n * tl.in_stride_n + t.c * tl.in_stride_c + (t.h * BLOCK + t.i) * tl.in_stride_h
          + t.w0 * BLOCK;
    let out = deinterleave_tile(load_run(e / v));
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

// Vector x of a tile's output row j (channel out_c(i, j, c)), at row h.
fn store_row(t: TileAt, j: u32, x: vec4<u32>) {
    let out_c = t.i * tl.chan_i + j * tl.chan_j + t.c * tl.chan_c;
    let e = tl.dst_base + t.n * tl.out_stride_n + out_c * tl.out_stride_c + t.h * tl.out_stride_h + t.w0;
    if (TILE_HALF) {
        output2[e / tile_v()] = x.xy;   // (the deinterleave of halves fills each row's low half)
    } else {
        store_out(e, x);
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

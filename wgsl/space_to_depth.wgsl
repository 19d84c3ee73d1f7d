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
// sides and BLOCK <= 4: one thread loads b consecutive 16-byte vectors of input row h*b + i, and
// stores their b-way deinterleave, vector j going to output channel (i*b + j)*C + c (DCR) or
// c*b*b + i*b + j (CRD) at row h.
// General fast path (space_to_depth_rows, + space_to_depth_row_edges for unaligned rows), for any
// block size, element size, row length and alignment and any input strides, with an output whose
// w stride is 1: output row (n, out_c(i, j, c), h) reads input row (n, c, h*b + i) from column j
// with stride b (common/rows.wgsl; row_at below is the formula above for one row).

#include "common/tiles.wgsl"
#include "common/rows.wgsl"

// Output row r, rows ordered (n, c, h, i, j) (the b*b rows one input block feeds are neighbours):
// its first input element (w = 0) and output element.
fn row_at(r: u32) -> RowAt {
    let j = r % BLOCK;
    let i = (r / BLOCK) % BLOCK;
    var t = r / (BLOCK * BLOCK);
    let h = t % rw.height;
    t = t / rw.height;
    let c = t % rw.channels;
    let n = t / rw.channels;
    let out_c = i * rw.chan_i + j * rw.chan_j + c * rw.chan_c;
    return RowAt(rw.src_base + n * rw.in_stride_n + c * rw.in_stride_c + (h * BLOCK + i) * rw.in_stride_h
                     + j * rw.in_stride_w,
                 rw.dst_base + n * rw.out_stride_n + out_c * rw.out_stride_c + h * rw.out_stride_h);
}

@compute @workgroup_size(WG)
fn space_to_depth_tiled(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= tl.threads) { return; }
    let v = 16u / ELEM_BYTES;
    // row space: input rows (n, c, h, i) of C channels; tl.chan maps (i, j, c) to the output channel
    let t = tile_at(tid, v);
    let e = tl.src_base + t.n * tl.in_stride_n + t.c * tl.in_stride_c + (t.h * BLOCK + t.i) * tl.in_stride_h
          + t.w0 * BLOCK;
    var src = Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    for (var k = 0u; k < BLOCK; k++) {
        src = quad_set(src, k, input4[e / v + k]);
    }
    var out: Quad;
    if (BLOCK == 2u) { out = deinterleave2(src.a, src.b); } else { out = deinterleave(src); }
    for (var j = 0u; j < BLOCK; j++) {
        let out_c = t.i * tl.chan_i + j * tl.chan_j + t.c * tl.chan_c;
        let o = tl.dst_base + t.n * tl.out_stride_n + out_c * tl.out_stride_c + t.h * tl.out_stride_h + t.w0;
        output4[o / v] = quad_get(out, j);
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

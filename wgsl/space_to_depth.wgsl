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

#include "common/tiles.wgsl"

@compute @workgroup_size(WG)
fn space_to_depth_tiled(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= tl.info.x) { return; }
    let v = 16u / ELEM_BYTES;
    // row space: input rows (n, c, h, i) of C channels; tl.chan maps (i, j, c) to the output channel
    let t = tile_at(tid, v);
    let e = tl.info.y + t.n * tl.in_strides.x + t.c * tl.in_strides.y + (t.h * BLOCK + t.i) * tl.in_strides.z
          + t.w0 * BLOCK;
    var src = Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    for (var k = 0u; k < BLOCK; k++) {
        src = quad_set(src, k, input4[e / v + k]);
    }
    var out: Quad;
    if (BLOCK == 2u) { out = deinterleave2(src.a, src.b); } else { out = deinterleave(src); }
    for (var j = 0u; j < BLOCK; j++) {
        let out_c = t.i * tl.chan.x + j * tl.chan.y + t.c * tl.chan.z;
        let o = tl.info.z + t.n * tl.out_strides.x + out_c * tl.out_strides.y + t.h * tl.out_strides.z + t.w0;
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

// SpaceToDepth / SpaceToDepth1 (DML_OPERATOR_SPACE_TO_DEPTH, _SPACE_TO_DEPTH1), every data type.
//
// Index math (spec 2.3), b = BlockSize, input {N, C, H, W}, output {N, C*b*b, H/b, W/b}:
//   DEPTH_COLUMN_ROW ("DCR"): output[n, (i*b + j)*C + c, h, w] = input[n, c, h*b+i, w*b+j]
//   COLUMN_ROW_DEPTH ("CRD"): output[n, c*b*b + i*b + j, h, w] = input[n, c, h*b+i, w*b+j]
// The host (src/dmlwgsl/ops/space_to_depth.py) folds this into a 6-D iteration space in output
// order, (n, i, j, c, h, w) for DCR and (n, c, i, j, h, w) for CRD, with strides linear in the
// index, and the shader runs the shared strided gather (common/permute.wgsl, which also documents
// bindings and uniforms).

#include "common/permute.wgsl"

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

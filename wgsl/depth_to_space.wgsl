// DepthToSpace / DepthToSpace1 (DML_OPERATOR_DEPTH_TO_SPACE, _DEPTH_TO_SPACE1), every data type.
//
// Index math (spec 2.3), b = BlockSize, C' = C / (b*b), for output (n, c, h*b + i, w*b + j):
//   DEPTH_COLUMN_ROW ("DCR"): output[n, c, h*b+i, w*b+j] = input[n, (i*b + j)*C' + c, h, w]
//   COLUMN_ROW_DEPTH ("CRD"): output[n, c, h*b+i, w*b+j] = input[n, c*b*b + i*b + j, h, w]
// The host (src/dmlwgsl/ops/depth_to_space.py) folds this formula into a 6-D iteration space
// (n, c, h, i, w, j) whose input and output strides are linear in the index, merges the dimensions
// that stay contiguous, and passes them as uniforms. The shader is then a pure strided gather:
// no per-element division, one pipeline per (element size, output layout).
// Bindings and uniform layout: see common/permute.wgsl.

#include "common/permute.wgsl"

@compute @workgroup_size(WG)
fn depth_to_space_packed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_packed(gid, nwg);
}

@compute @workgroup_size(WG)
fn depth_to_space_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_strided(gid, nwg);
}

@compute @workgroup_size(WG)
fn depth_to_space_atomic(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_atomic(gid, nwg);
}

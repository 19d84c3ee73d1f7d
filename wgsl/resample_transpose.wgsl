// Resample's layout step: a channels-fastest input (e.g. NHWC) moved to a packed (N, C, H, W)
// workspace by common/transpose.wgsl's tile transpose (runs of channels loaded, rows of a plane
// stored), so that the resample kernel that follows reads whole rows. The plan takes it on a GPU
// where the output planes are larger than the input's (upsampling): there the resample kernels'
// gathers along W with a stride of C elements cost more than the extra pass (see
// src/dmlwgsl/ops/resample.py, _transposed_plan).
// Bindings and uniforms: common/transpose.wgsl's (input -> input / input4, the workspace ->
// output / output4, tp).

#include "common/transpose.wgsl"

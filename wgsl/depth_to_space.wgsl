// DepthToSpace / DepthToSpace1 (DML_OPERATOR_DEPTH_TO_SPACE, _DEPTH_TO_SPACE1), every data type.
//
// Index math (spec 2.3), b = BlockSize, C' = C / (b*b), for output (n, c, h*b + i, w*b + j):
//   DEPTH_COLUMN_ROW ("DCR"): output[n, c, h*b+i, w*b+j] = input[n, (i*b + j)*C' + c, h, w]
//   COLUMN_ROW_DEPTH ("CRD"): output[n, c, h*b+i, w*b+j] = input[n, c*b*b + i*b + j, h, w]
// The host (src/dmlwgsl/ops/depth_to_space.py) folds this formula into a 6-D iteration space
// (n, c, h, i, w, j) whose input and output strides are linear in the index, merges the dimensions
// that stay contiguous, and passes them as uniforms. The shader is then a pure strided gather:
// no per-element division, one pipeline per (element size, output layout).
// Fast path (depth_to_space_tiled), for rows that are contiguous and 16-byte aligned on both
// sides and BLOCK <= 4: one thread loads one 16-byte vector from each of the b input channels
// (i*b + j)*C' + c (DCR) or c*b*b + i*b + j (CRD), j = 0..b-1, at row h, and stores their b-way
// interleave as b vectors of output row h*b + i. With BLOCK 2 (depth_to_space_zip) a thread
// builds one output vector from an 8-byte load of each of the two channels instead.
// Bindings and uniform layouts: see common/permute.wgsl and common/tiles.wgsl.

#include "common/tiles.wgsl"

@compute @workgroup_size(WG)
fn depth_to_space_tiled(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= tl.info.x) { return; }
    let v = 16u / ELEM_BYTES;
    // row space: output rows (n, c, h, i) of C' channels; tl.chan maps (i, j, c) to the input channel
    let t = tile_at(tid, v);
    var src = Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    for (var j = 0u; j < BLOCK; j++) {
        let in_c = t.i * tl.chan.x + j * tl.chan.y + t.c * tl.chan.z;
        let e = tl.info.y + t.n * tl.in_strides.x + in_c * tl.in_strides.y + t.h * tl.in_strides.z + t.w0;
        src = quad_set(src, j, input4[e / v]);
    }
    let out = interleave(src);
    let o = tl.info.z + t.n * tl.out_strides.x + t.c * tl.out_strides.y + (t.h * BLOCK + t.i) * tl.out_strides.z
          + t.w0 * BLOCK;
    for (var k = 0u; k < BLOCK; k++) {
        output4[o / v + k] = quad_get(out, k);
    }
}

// BLOCK == 2: one thread per 16-byte output vector, built from two 8-byte loads (one per input
// channel), so that both the loads and the stores of a warp are contiguous.
@compute @workgroup_size(WG)
fn depth_to_space_zip(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= tl.info.x) { return; }
    let h = 8u / ELEM_BYTES;   // elements per 8-byte half vector
    let t = tile_at(tid, h);
    let c0 = t.i * tl.chan.x + t.c * tl.chan.z;
    let e = tl.info.y + t.n * tl.in_strides.x + c0 * tl.in_strides.y + t.h * tl.in_strides.z + t.w0;
    let a = input2[e / h];
    let b = input2[(e + tl.chan.y * tl.in_strides.y) / h];
    let o = tl.info.z + t.n * tl.out_strides.x + t.c * tl.out_strides.y + (t.h * 2u + t.i) * tl.out_strides.z
          + t.w0 * 2u;
    output4[o / (2u * h)] = zip2(a, b);
}

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

// The store phase of the tiled kernels with staged stores (depth_to_space_tiled_staged,
// space_to_depth_tiled_staged), apart from common/tiles.wgsl because it calls staged_owner and
// staged_dst, which each including operator's shader defines (tiles.wgsl is also included by
// shaders that have no staged kernel, common/transpose.wgsl's users among them).

#include "common/tiles.wgsl"

// The store phase: the workgroup's WG * BLOCK staged vectors (slot p owned by the thread
// staged_owner(p) of the workgroup, at output element staged_dst(p), both defined by the operator's
// shader), thread li storing slots li, li + WG, ... (into rows off 16-byte boundaries, each in its
// OUT_PIECES pieces: spreading a vector's pieces over consecutive threads, so that a warp's store is
// one contiguous run, measured slower on the H200 for both operators, 0.58-1.00x for DepthToSpace).
// wg0: the workgroup's first thread.
fn store_staged(li: u32, wg0: u32) {
    for (var m = 0u; m < BLOCK; m++) {
        let p = li + m * WG;
        if (wg0 + staged_owner(p) < tl.threads) {
            store_out(staged_dst(p), tr_stage[tr_slot(p)]);
        }
    }
}

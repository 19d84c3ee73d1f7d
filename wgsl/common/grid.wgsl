// Thread ids and 16-byte output blocks, shared by every operator's shaders.
// The including file declares `override WG: u32` (its workgroup size).

// Linear id of this thread across a dispatch folded into y and z (see runtime.dispatch_size).
fn thread_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG;
}

// Linear index of this workgroup across a dispatch folded into y and z.
fn workgroup_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.x + (wid.y + wid.z * nwg.y) * nwg.x; }

// One whole 16-byte block of a packed output binding, owned by one thread, so that no two
// threads ever write different bytes of one word.
struct Block {
    t: u32,      // index of the block (vec4 word) in the output binding
    e_lo: u32,   // first element of the tensor inside it
    n: u32,      // elements of the tensor inside it: 16 / eb, fewer in the first or last block, 0 = none
    q0: u32,     // byte of the block at which element e_lo starts
}

// The block thread `tid` owns, for a tensor of `count` elements of `eb` bytes that starts
// `base_bytes` into the binding.
fn output_block(tid: u32, base_bytes: u32, count: u32, eb: u32) -> Block {
    var b: Block;
    b.t = base_bytes / 16u + tid;
    let end_bytes = base_bytes + count * eb;
    if (b.t * 16u >= end_bytes) {
        b.n = 0u;
        return b;
    }
    let lo = max(b.t * 16u, base_bytes);
    let hi = min(b.t * 16u + 16u, end_bytes);
    b.e_lo = (lo - base_bytes) / eb;
    b.n = (hi - lo) / eb;
    b.q0 = lo - b.t * 16u;
    return b;
}

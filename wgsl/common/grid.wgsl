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

// a / d for a run-time divisor d >= 1 given as its magic pair (m, s) (plan.div_magic: the
// round-up method, m = floor(2^32 (2^l - d) / d) + 1 and s = l - 1 for l = ceil(log2 d); d = 1 has
// s = 32). Exact for every u32 a. A CPU adapter's compiler splits a vector division by a run-time
// value into one scalar division per lane: lavapipe ran three of them per thread 2.1x slower than
// this (4 M threads, Mesa 25). The high half of a * m from 16-bit halves (WGSL has no mulhi).
fn div_magic(a: u32, m: u32, s: u32) -> u32 {
    let al = a & 0xFFFFu;
    let ah = a >> 16u;
    let ml = m & 0xFFFFu;
    let mh = m >> 16u;
    let ll = al * ml;
    let hl = ah * ml;
    let cross = (ll >> 16u) + (hl & 0xFFFFu) + al * mh;  // < 2^32: (2^16 - 1)^2 + 2 (2^16 - 1)
    let t = ah * mh + (hl >> 16u) + (cross >> 16u);
    return select((t + ((a - t) >> 1u)) >> s, a, s == 32u);
}

// Reference copy kernel for benchmarks: output[i] = input[i] over vec4<u32> words (16 bytes).
// Its bandwidth is the ceiling each data-movement benchmark is compared with.
// Each thread copies VPT vectors, i, i + T, ..., i + (VPT-1)*T for T threads, so every load and
// store instruction of a warp stays fully coalesced while more loads are in flight per thread.
// Bindings: input and output (vec4 words), cp (uniforms: count of vec4 words, threads T).

override WG: u32 = 256u;
override VPT: u32 = 1u;

struct Copy {
    count: u32,    // vec4 words to copy
    threads: u32,  // T: threads in the dispatch (the stride between a thread's vectors)
}

#include "common/grid.wgsl"

@group(0) @binding(0) var<storage, read> input: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> output: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> cp: Copy;

@compute @workgroup_size(WG)
fn copy_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_id(gid, nwg);
    for (var k = 0u; k < VPT; k++) {
        let j = i + k * cp.threads;
        if (j < cp.count) { output[j] = input[j]; }
    }
}

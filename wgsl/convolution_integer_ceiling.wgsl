// The dp4a ceiling of the ConvolutionInteger benchmark: nothing but dot4I8Packed from registers.
//
// 16 independent chains a thread (4 vec4<i32> accumulators, the loop body written out 4 times),
// `steps` dot products each (a multiple of 4); every dot product is 4 multiply-adds = 8 ops. The
// result is stored so nothing is optimised away. (An earlier version kept its operands in private
// arrays: those lived in local memory and the "ceiling" measured 4.9 TOPS instead of ~119 on the H100.)
// Bindings: 0 output (i32, one word per storing thread), 1 uniforms (Ceiling).

override WG: u32 = 256u;

struct Ceiling {
    steps: u32,     // dot products a chain (a multiple of 4)
    operand: u32,   // the first packed operand word (the others add 0x01010101 a step)
    threads: u32,   // threads that store their result (all: the compiler must keep every chain)
}

@group(0) @binding(0) var<storage, read_write> output: array<i32>;
@group(0) @binding(1) var<uniform> ceiling: Ceiling;

const ONES: u32 = 0x01010101u;

// dot4I8Packed of 4 words against one word, as a vec4.
fn d4(a: vec4<u32>, b: u32) -> vec4<i32> {
    return vec4<i32>(dot4I8Packed(a.x, b), dot4I8Packed(a.y, b), dot4I8Packed(a.z, b), dot4I8Packed(a.w, b));
}

@compute @workgroup_size(WG)
fn dot4_ceiling(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) l: u32) {
    let t = (wid.x + (wid.y + wid.z * nwg.y) * nwg.x) * WG + l;
    let s0 = t * 0x9E3779B9u;
    let a0 = vec4<u32>(s0) + vec4<u32>(0u, 1u, 2u, 3u) * 0x01020304u;
    let a1 = a0 + vec4<u32>(0x04080C10u);
    let a2 = a1 + vec4<u32>(0x04080C10u);
    let a3 = a2 + vec4<u32>(0x04080C10u);
    var c0 = vec4<i32>(0); var c1 = vec4<i32>(0); var c2 = vec4<i32>(0); var c3 = vec4<i32>(0);
    var b = ceiling.operand;
    for (var s = 0u; s < ceiling.steps; s += 4u) {
        c0 = d4(a0, b) + c0; c1 = d4(a1, b) + c1; c2 = d4(a2, b) + c2; c3 = d4(a3, b) + c3;
        b += ONES;
        c0 = d4(a0, b) + c0; c1 = d4(a1, b) + c1; c2 = d4(a2, b) + c2; c3 = d4(a3, b) + c3;
        b += ONES;
        c0 = d4(a0, b) + c0; c1 = d4(a1, b) + c1; c2 = d4(a2, b) + c2; c3 = d4(a3, b) + c3;
        b += ONES;
        c0 = d4(a0, b) + c0; c1 = d4(a1, b) + c1; c2 = d4(a2, b) + c2; c3 = d4(a3, b) + c3;
        b += ONES;
    }
    let v = c0 ^ c1 ^ c2 ^ c3;
    if (t < ceiling.threads) { output[t] = v.x ^ v.y ^ v.z ^ v.w; }
}

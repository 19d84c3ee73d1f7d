// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER), portable kernel: core WGSL only.
//
// One thread per output element (n, m, oh, ow), with g = m / (M/G) and Cg = C/G:
//   output = sum_{c<Cg, kh, kw} (input[n, g*Cg + c, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw] - xzp)
//                               * (filter[m, c, kh, kw] - wzp[m])        (i32, wraps on overflow)
// Taps outside the input are skipped: padding holds the input zero point, so they add exactly 0.
//
// This file also holds the declarations the fast path (convolution_integer_dot4.wgsl) includes.
// Every tensor is seen as 4-D (a 1-D convolution is {N, C, 1, W} with a 0 stride on the extra
// axis); element addresses are base + dot(index, strides) in elements. INT8/UINT8 data are read as
// bytes of u32 words, the INT32 output as whole words (one per element, so no atomics).
//
// Bindings: 0 input, 1 filter (filter_weights), 2 input_zero_point, 3 filter_zero_point (bytes in u32 words),
//           4 output (i32), 5 uniforms (Conv); the fast path adds 6 packed_input, 7 packed_filter.
// An absent zero point is bound to a dummy tensor and never read (XZP / WZP say so).

override WG: u32 = 256u;
override X_SIGNED: bool = false;  // input is INT8 (else UINT8)
override W_SIGNED: bool = false;  // filter is INT8 (else UINT8)
override XZP: bool = false;       // input_zero_point present
override WZP: u32 = 0u;           // filter_zero_point: 0 absent, 1 per tensor, 2 per output channel

struct Conv {
    in_sizes: vec4<u32>,      // N, C, H, W
    in_strides: vec4<u32>,    // elements
    filt_sizes: vec4<u32>,    // M, C/G, KH, KW
    filt_strides: vec4<u32>,  // elements
    out_sizes: vec4<u32>,     // N, M, OH, OW
    out_strides: vec4<u32>,   // elements
    geom: vec4<u32>,          // stride h, stride w, dilation h, dilation w
    pads: vec4<u32>,          // start pad h, start pad w, group count, M/G
    bases: vec4<u32>,         // input base, filter base (bytes), output base (elements), output count
    zp: vec4<u32>,            // input zp base, filter zp base (bytes), filter zp channel stride, ceil(Cg/4)
    gemm: vec4<u32>,          // P = N*OH*OW, K words = KH*KW*CG4P, CG4P (ceil(Cg/4) rounded up to 4), pixel tiles
    gemm2: vec4<u32>,         // channel tiles, K taps = Cg*KH*KW, packed_input words, workgroups
    split: vec4<u32>,         // dot4: k steps a tile, k steps a workgroup (split-K), -, tiles
}

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read> filter_weights: array<u32>;  // "filter" is a WGSL reserved word
@group(0) @binding(2) var<storage, read> input_zero_point: array<u32>;
@group(0) @binding(3) var<storage, read> filter_zero_point: array<u32>;
@group(0) @binding(4) var<storage, read_write> output: array<i32>;
@group(0) @binding(5) var<uniform> cv: Conv;

#include "common/grid.wgsl"

// Byte b of a u32 array, as its raw 8 bits.
fn byte_of(word: u32, b: u32) -> u32 {
    return (word >> ((b & 3u) * 8u)) & 0xFFu;
}

// An 8-bit value as i32: sign-extended for INT8, zero-extended for UINT8.
fn widen(bits: u32, signed: bool) -> i32 {
    if (signed) { return i32(bits << 24u) >> 24u; }
    return i32(bits);
}

fn input_byte(e: u32) -> u32 { let a = cv.bases.x + e; return byte_of(input[a >> 2u], a); }
fn filter_byte(e: u32) -> u32 { let a = cv.bases.y + e; return byte_of(filter_weights[a >> 2u], a); }

// The input zero point as an integer (0 when absent).
fn input_zp() -> i32 {
    if (!XZP) { return 0; }
    let a = cv.zp.x;
    return widen(byte_of(input_zero_point[a >> 2u], a), X_SIGNED);
}

// The filter zero point of output channel m (0 when absent).
fn filter_zp(m: u32) -> i32 {
    if (WZP == 0u) { return 0; }
    var a = cv.zp.y;
    if (WZP == 2u) { a += m * cv.zp.z; }
    return widen(byte_of(filter_zero_point[a >> 2u], a), W_SIGNED);
}

fn output_index(n: u32, m: u32, oh: u32, ow: u32) -> u32 {
    return cv.bases.z + n * cv.out_strides.x + m * cv.out_strides.y + oh * cv.out_strides.z + ow * cv.out_strides.w;
}

@compute @workgroup_size(WG)
fn convolution_integer_portable(@builtin(global_invocation_id) gid: vec3<u32>,
                                @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= cv.bases.w) { return; }
    let ow = e % cv.out_sizes.w;
    var rest = e / cv.out_sizes.w;
    let oh = rest % cv.out_sizes.z;
    rest = rest / cv.out_sizes.z;
    let m = rest % cv.out_sizes.y;
    let n = rest / cv.out_sizes.y;

    let H = i32(cv.in_sizes.z);
    let W = i32(cv.in_sizes.w);
    let cg = cv.filt_sizes.y;
    let KH = cv.filt_sizes.z;
    let KW = cv.filt_sizes.w;
    let g = m / cv.pads.w;
    let xz = input_zp();
    let wz = filter_zp(m);
    let ih0 = i32(oh * cv.geom.x) - i32(cv.pads.x);
    let iw0 = i32(ow * cv.geom.y) - i32(cv.pads.y);
    let x_n = n * cv.in_strides.x + g * cg * cv.in_strides.y;
    let w_m = m * cv.filt_strides.x;

    var acc = 0i;
    for (var kh = 0u; kh < KH; kh++) {
        let ih = ih0 + i32(kh * cv.geom.z);
        if (ih < 0 || ih >= H) { continue; }
        for (var kw = 0u; kw < KW; kw++) {
            let iw = iw0 + i32(kw * cv.geom.w);
            if (iw < 0 || iw >= W) { continue; }
            var xa = x_n + u32(ih) * cv.in_strides.z + u32(iw) * cv.in_strides.w;
            var wa = w_m + kh * cv.filt_strides.z + kw * cv.filt_strides.w;
            for (var c = 0u; c < cg; c++) {
                let xv = widen(input_byte(xa), X_SIGNED) - xz;
                let wv = widen(filter_byte(wa), W_SIGNED) - wz;
                acc += xv * wv;
                xa += cv.in_strides.y;
                wa += cv.filt_strides.y;
            }
        }
    }
    output[output_index(n, m, oh, ow)] = acc;
}

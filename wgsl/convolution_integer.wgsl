// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER), portable kernel: core WGSL only.
//
// One thread per output element (n, m, oh, ow), with g = m / (M/G) and Cg = C/G:
//   output = sum_{c<Cg, kh, kw} (input[n, g*Cg + c, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw] - xzp)
//                               * (filter[m, c, kh, kw] - wzp[m])        (i32, wraps on overflow)
// Taps outside the input are skipped: padding holds the input zero point, so they add exactly 0.
//
// This file also holds the declarations the fast paths include (convolution_integer_direct.wgsl,
// convolution_integer_direct_dot4.wgsl, convolution_integer_dot4.wgsl).
// Every tensor is seen as 4-D (a 1-D convolution is {N, C, 1, W} with a 0 stride on the extra
// axis); element addresses are base + dot(index, strides) in elements. INT8/UINT8 data are read as
// bytes of u32 words, the INT32 output as whole words (one per element, so no atomics).
//
// Bindings: 0 input, 1 filter (filter_weights), 2 input_zero_point, 3 filter_zero_point (bytes in u32 words),
//           4 output (i32), 5 uniforms (Conv); the dot4 paths add 6 packed_input, 7 packed_filter.
// An absent zero point is bound to a dummy tensor and never read (XZP / WZP say so).

override WG: u32 = 256u;
override X_SIGNED: bool = false;  // input is INT8 (else UINT8)
override W_SIGNED: bool = false;  // filter is INT8 (else UINT8)
override XZP: bool = false;       // input_zero_point present
override WZP: u32 = 0u;           // filter_zero_point: 0 absent, 1 per tensor, 2 per output channel
// Add the sum to the output instead of storing it: past the binding limit a plan may split a
// group's input channels over several dispatches (one a window), the first storing, the others
// adding (i32 addition wraps, so the split sum is the whole one). One-pass kernels only.
override ACCUMULATE: bool = false;

// The parameters of every ConvolutionInteger kernel, filled by field name from the plan (a kernel
// leaves the fields of the others at 0). Strides and bases are in elements unless marked bytes;
// the 4-D view is {N, C, H, W} input, {M, C/G, KH, KW} filter, {N, M, OH, OW} output.
struct Conv {
    in_channels: u32, in_height: u32, in_width: u32,
    in_stride_n: u32, in_stride_c: u32, in_stride_h: u32, in_stride_w: u32,
    out_channels: u32,            // M
    group_in_channels: u32,       // C/G
    kernel_h: u32, kernel_w: u32,
    filter_stride_m: u32, filter_stride_c: u32, filter_stride_h: u32, filter_stride_w: u32,
    out_height: u32, out_width: u32,
    out_stride_n: u32, out_stride_m: u32, out_stride_h: u32, out_stride_w: u32,
    stride_h: u32, stride_w: u32, dilation_h: u32, dilation_w: u32,
    pad_top: u32, pad_left: u32,
    group_count: u32,
    group_out_channels: u32,      // M/G
    input_base: u32,              // bytes: the input's residual offset in its binding
    filter_base: u32,             // bytes
    output_base: u32,             // elements
    output_count: u32,            // N*M*OH*OW
    input_zp_base: u32,           // bytes
    filter_zp_base: u32,          // bytes
    filter_zp_stride: u32,        // elements between per-channel filter zero points
    group_words: u32,             // ceil(Cg/4): packed words of a pixel's group channels
    // dot4 (convolution_integer_dot4.wgsl)
    pixels: u32,                  // P = N*OH*OW, the GEMM's rows
    k_words: u32,                 // KH*KW*CG4P, the GEMM's reduction in words
    group_words_padded: u32,      // CG4P: ceil(Cg/4) rounded up to a multiple of 4
    pixel_tiles: u32, channel_tiles: u32,
    taps: u32,                    // K = Cg*KH*KW (mod 2^32)
    packed_input_words: u32,
    workgroups: u32,
    tile_steps: u32,              // k steps of a tile
    workgroup_steps: u32,         // k steps a workgroup runs (split-K / stream-K)
    tiles: u32,
    // direct (convolution_integer_direct.wgsl)
    tile_h: u32, tile_w: u32,     // output pixels of a workgroup's tile
    window_h: u32, window_w: u32, // the input window a tile reads (staged in workgroup memory)
    tiles_h: u32, tiles_w: u32,
    channel_block: u32,           // output channels a workgroup computes
    channel_blocks: u32,          // blocks of a group's output channels
    // depthwise (convolution_integer_depthwise.wgsl)
    dw_threads: u32,              // N*M*OH*ceil(OW/8): a thread eight neighbouring outputs of a row
    dw_rows: u32,                 // N*M*OH
    dw_q_lo: u32,                 // the first eight of a row with no tap outside the input ...
    dw_interior: u32,             // ... and how many follow it (the threads of the others come last)
    // depthwise_fma (convolution_integer_depthwise_fma.wgsl)
    fma_planes: u32,              // N*M output planes
    // dot4_window (convolution_integer_dot4_window.wgsl)
    win_tiles: u32,               // tiles of WG output pixels a workgroup walks
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

fn input_byte(e: u32) -> u32 { let a = cv.input_base + e; return byte_of(input[a >> 2u], a); }
fn filter_byte(e: u32) -> u32 { let a = cv.filter_base + e; return byte_of(filter_weights[a >> 2u], a); }

// The low n bytes of a word set (n = 1 to 4): the lanes of n taps.
fn low_lanes(n: u32) -> u32 { return 0xFFFFFFFFu >> (32u - 8u * n); }

// A funnel shift: bytes sh/8 .. of the 64-bit (hi:lo).
fn funnel(lo: u32, hi: u32, sh: u32) -> u32 {
    return select((lo >> sh) | (hi << (32u - sh)), lo, sh == 0u);
}

// Input word i (of the binding), 0 before its start.
fn word_at(i: i32) -> u32 {
    if (i < 0) { return 0u; }
    return input[u32(i)];
}

// The 4 bytes of x that start at input column c: those outside the row [0, W) replaced by the
// zero point (zrep: its byte in every lane), so that their taps add exactly 0.
fn in_row(x: u32, c: i32, W: i32, zrep: u32) -> u32 {
    let lo = u32(clamp(-c, 0, 4));       // lanes before column 0
    let hi = u32(clamp(W - c, 0, 4));    // lanes before column W
    var m = 0u;
    if (hi > lo) { m = (0xFFFFFFFFu >> (8u * (4u - hi + lo))) << (8u * lo); }
    return (x & m) | (zrep & ~m);
}

// The input zero point as an integer (0 when absent).
fn input_zp() -> i32 {
    if (!XZP) { return 0; }
    let a = cv.input_zp_base;
    return widen(byte_of(input_zero_point[a >> 2u], a), X_SIGNED);
}

// The filter zero point of output channel m (0 when absent).
fn filter_zp(m: u32) -> i32 {
    if (WZP == 0u) { return 0; }
    var a = cv.filter_zp_base;
    if (WZP == 2u) { a += m * cv.filter_zp_stride; }
    return widen(byte_of(filter_zero_point[a >> 2u], a), W_SIGNED);
}

// Output pixel p (in (n, oh, ow) order) of the GEMM-like kernels: its position and the top-left
// input position of its window.
struct OutPos { n: u32, oh: u32, ow: u32, ih0: i32, iw0: i32 }

fn out_pos(p: u32) -> OutPos {
    let ohw = cv.out_height * cv.out_width;
    let q = p % ohw;
    let oh = q / cv.out_width;
    let ow = q % cv.out_width;
    return OutPos(p / ohw, oh, ow, i32(oh * cv.stride_h) - i32(cv.pad_top), i32(ow * cv.stride_w) - i32(cv.pad_left));
}

// zw' of group channel ml (global m) of the packed-dot-product kernels (UINT8 filter bytes read
// as w - 128): 0 past M/G.
fn chan_zw(ml: u32, m: u32) -> i32 {
    if (ml >= cv.group_out_channels) { return 0i; }
    return filter_zp(m) - select(128i, 0i, W_SIGNED);
}

fn output_index(n: u32, m: u32, oh: u32, ow: u32) -> u32 {
    return cv.output_base + n * cv.out_stride_n + m * cv.out_stride_m + oh * cv.out_stride_h + ow * cv.out_stride_w;
}

// A one-pass kernel's result for output element i (stored, or added where ACCUMULATE says so).
fn store_output(i: u32, v: i32) {
    if (ACCUMULATE) { output[i] += v; } else { output[i] = v; }
}

@compute @workgroup_size(WG)
fn convolution_integer_portable(@builtin(global_invocation_id) gid: vec3<u32>,
                                @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= cv.output_count) { return; }
    let ow = e % cv.out_width;
    var rest = e / cv.out_width;
    let oh = rest % cv.out_height;
    rest = rest / cv.out_height;
    let m = rest % cv.out_channels;
    let n = rest / cv.out_channels;

    let H = i32(cv.in_height);
    let W = i32(cv.in_width);
    let cg = cv.group_in_channels;
    let KH = cv.kernel_h;
    let KW = cv.kernel_w;
    let g = m / cv.group_out_channels;
    let xz = input_zp();
    let wz = filter_zp(m);
    let ih0 = i32(oh * cv.stride_h) - i32(cv.pad_top);
    let iw0 = i32(ow * cv.stride_w) - i32(cv.pad_left);
    let x_n = n * cv.in_stride_n + g * cg * cv.in_stride_c;
    let w_m = m * cv.filter_stride_m;

    var acc = 0i;
    for (var kh = 0u; kh < KH; kh++) {
        let ih = ih0 + i32(kh * cv.dilation_h);
        if (ih < 0 || ih >= H) { continue; }
        for (var kw = 0u; kw < KW; kw++) {
            let iw = iw0 + i32(kw * cv.dilation_w);
            if (iw < 0 || iw >= W) { continue; }
            var xa = x_n + u32(ih) * cv.in_stride_h + u32(iw) * cv.in_stride_w;
            var wa = w_m + kh * cv.filter_stride_h + kw * cv.filter_stride_w;
            for (var c = 0u; c < cg; c++) {
                let xv = widen(input_byte(xa), X_SIGNED) - xz;
                let wv = widen(filter_byte(wa), W_SIGNED) - wz;
                acc += xv * wv;
                xa += cv.in_stride_c;
                wa += cv.filter_stride_c;
            }
        }
    }
    store_output(output_index(n, m, oh, ow), acc);
}

// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER), depthwise kernel: one input channel per
// group (C/G = 1, any M/G), no workgroup memory. A thread owns four neighbouring outputs
// (n, m, oh, ow0 .. ow0 + 3), ow0 = 4 * q, with g = m / (M/G):
//   out[n, m, oh, ow] = sum_{kh, kw} (x[n, g, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw] - xzp) * (w[m, 0, kh, kw] - wzp[m])
// Taps outside the input add nothing (padding holds the input zero point).
// Fast rows (DW_FAST: contiguous input rows, kernel width <= 4, dilation 1 along W, stride DW_SW
// along W; the plan's conditions): a row's bytes are loaded as words, each output's KW bytes taken
// from them with constant shifts (bytes outside the row replaced by the zero point, so that every
// thread of a warp takes the same path), and each output's row of taps is one packed 4x8 dot
// product:
//   sum_k (x_k - zx)(w_k - zw) = dot(x, w) - zw * sum(x) - zx * sum(w) + KW * zx * zw
// (exact in wrapping i32, as the reference). Other layers take the taps one at a time, as the
// portable kernel does.
// Bindings and uniforms: those of convolution_integer.wgsl, and 9 the output as 16-byte vectors.

#include "convolution_integer.wgsl"

override DW_FAST: bool = false;  // the fast rows' structural conditions hold
override DW_SW: u32 = 1u;        // the stride along W (1 or 2) where DW_FAST
// Output rows contiguous, of whole quads, each quad on a 16-byte boundary: one 16-byte store a thread.
override DW_VEC: bool = false;

@group(0) @binding(9) var<storage, read_write> output4: array<vec4<i32>>;

const ONES4 = 0x01010101u;

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

// sum of x_k * w_k over 4 byte lanes, each signed or not as its tensor's type says; `kmask`
// marks the lanes of real taps (w is 0 beyond them, x need not be).
fn dot_xw(x: u32, w: u32, kmask: u32) -> i32 {
    if (X_SIGNED && W_SIGNED) { return dot4I8Packed(x, w); }
    if (!X_SIGNED && !W_SIGNED) { return i32(dot4U8Packed(x, w)); }
    if (!X_SIGNED) {  // (x - 128) * w + 128 * w, with w signed
        return dot4I8Packed(x ^ 0x80808080u, w) + 128 * dot4I8Packed(w, ONES4);
    }
    // x signed, w unsigned: x * (w - 128) + 128 * x over the tap lanes
    return dot4I8Packed(x, w ^ (0x80808080u & kmask)) + 128 * dot4I8Packed(x, ONES4 & kmask);
}

// sum of the tap lanes of x (signed or not as the input's type says).
fn sum_x(x: u32, kmask: u32) -> i32 {
    if (X_SIGNED) { return dot4I8Packed(x, ONES4 & kmask); }
    return i32(dot4U8Packed(x, ONES4 & kmask));
}

fn sum_w(w: u32) -> i32 {
    if (W_SIGNED) { return dot4I8Packed(w, ONES4); }
    return i32(dot4U8Packed(w, ONES4));
}

@compute @workgroup_size(WG)
fn convolution_integer_depthwise(@builtin(global_invocation_id) gid: vec3<u32>,
                                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    let quads = (cv.out_width + 3u) / 4u;
    if (tid >= cv.dw_threads) { return; }
    let q = tid % quads;
    var rest = tid / quads;
    let oh = rest % cv.out_height;
    rest = rest / cv.out_height;
    let m = rest % cv.out_channels;
    let n = rest / cv.out_channels;
    let ow0 = 4u * q;
    let g = m / cv.group_out_channels;
    let H = i32(cv.in_height);
    let W = i32(cv.in_width);
    let KW = cv.kernel_w;
    let xz = input_zp();
    let wz = filter_zp(m);
    let x_n = n * cv.in_stride_n + g * cv.in_stride_c;
    let w_m = m * cv.filter_stride_m;
    let ih0 = i32(oh * cv.stride_h) - i32(cv.pad_top);
    let iw0 = i32(ow0 * cv.stride_w) - i32(cv.pad_left);   // first tap column of output ow0
    let nout = min(4u, cv.out_width - ow0);
    // a quad with taps outside its rows (an edge of the input): those taps read the zero point
    let edge = iw0 < 0 || iw0 + i32(3u * DW_SW + KW) > W;
    let kmask = 0xFFFFFFFFu >> (32u - 8u * min(KW, 4u));   // the tap lanes of a fast row's words
    let zrep = (u32(xz) & 0xFFu) * ONES4;
    var a0 = 0i;
    var a1 = 0i;
    var a2 = 0i;
    var a3 = 0i;
    for (var kh = 0u; kh < cv.kernel_h; kh++) {
        let ih = ih0 + i32(kh * cv.dilation_h);
        if (ih < 0 || ih >= H) { continue; }
        let x_row = x_n + u32(ih) * cv.in_stride_h;
        let w_row = w_m + kh * cv.filter_stride_h;
        if (DW_FAST) {
            // the filter row as one word (lanes past KW zero), and the row's bytes from column
            // iw0 on as words (words before the buffer read as 0: their lanes are outside the row)
            var w = 0u;
            for (var kw = 0u; kw < KW; kw++) {
                w |= filter_byte(w_row + kw * cv.filter_stride_w) << (8u * kw);
            }
            let a = i32(cv.input_base + x_row) + iw0;
            let sh = u32(a & 3) * 8u;
            let i = a >> 2u;
            let v0 = word_at(i);
            let v1 = word_at(i + 1);
            let v2 = word_at(i + 2);
            let u0 = funnel(v0, v1, sh);
            let u1 = funnel(v1, v2, sh);
            var x0 = u0;
            var x1 = funnel(u0, u1, 8u);
            var x2 = funnel(u0, u1, 16u);
            var x3 = funnel(u0, u1, 24u);
            if (DW_SW == 2u) {
                let u2 = funnel(v2, word_at(i + 3), sh);
                x1 = funnel(u0, u1, 16u);
                x2 = u1;
                x3 = funnel(u1, u2, 16u);
            }
            if (edge) {
                x0 = in_row(x0, iw0, W, zrep);
                x1 = in_row(x1, iw0 + i32(DW_SW), W, zrep);
                x2 = in_row(x2, iw0 + i32(2u * DW_SW), W, zrep);
                x3 = in_row(x3, iw0 + i32(3u * DW_SW), W, zrep);
            }
            let fix = -xz * sum_w(w) + i32(KW) * xz * wz;
            a0 += dot_xw(x0, w, kmask) - wz * sum_x(x0, kmask) + fix;
            a1 += dot_xw(x1, w, kmask) - wz * sum_x(x1, kmask) + fix;
            a2 += dot_xw(x2, w, kmask) - wz * sum_x(x2, kmask) + fix;
            a3 += dot_xw(x3, w, kmask) - wz * sum_x(x3, kmask) + fix;
            continue;
        }
        for (var kw = 0u; kw < KW; kw++) {
            let wv = widen(filter_byte(w_row + kw * cv.filter_stride_w), W_SIGNED) - wz;
            let c0 = iw0 + i32(kw * cv.dilation_w);
            let cs = i32(cv.stride_w);
            if (c0 >= 0 && c0 < W) {
                a0 += (widen(input_byte(x_row + u32(c0) * cv.in_stride_w), X_SIGNED) - xz) * wv;
            }
            if (nout > 1u && c0 + cs >= 0 && c0 + cs < W) {
                a1 += (widen(input_byte(x_row + u32(c0 + cs) * cv.in_stride_w), X_SIGNED) - xz) * wv;
            }
            if (nout > 2u && c0 + 2 * cs >= 0 && c0 + 2 * cs < W) {
                a2 += (widen(input_byte(x_row + u32(c0 + 2 * cs) * cv.in_stride_w), X_SIGNED) - xz) * wv;
            }
            if (nout > 3u && c0 + 3 * cs >= 0 && c0 + 3 * cs < W) {
                a3 += (widen(input_byte(x_row + u32(c0 + 3 * cs) * cv.in_stride_w), X_SIGNED) - xz) * wv;
            }
        }
    }
    let o = output_index(n, m, oh, ow0);
    if (DW_VEC && !ACCUMULATE) {
        output4[o / 4u] = vec4<i32>(a0, a1, a2, a3);
        return;
    }
    store_output(o, a0);
    if (nout > 1u) { store_output(o + cv.out_stride_w, a1); }
    if (nout > 2u) { store_output(o + 2u * cv.out_stride_w, a2); }
    if (nout > 3u) { store_output(o + 3u * cv.out_stride_w, a3); }
}

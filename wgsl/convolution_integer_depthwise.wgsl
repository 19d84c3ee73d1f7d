// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER), depthwise kernel: one input channel per
// group (C/G = 1, any M/G), no workgroup memory. A thread owns eight neighbouring outputs
// (n, m, oh, ow0 .. ow0 + 7), ow0 = 8 * q, with g = m / (M/G):
//   out[n, m, oh, ow] = sum_{kh, kw} (x[n, g, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw] - xzp)
//                                    * (w[m, 0, kh, kw] - wzp[m])
// Taps outside the input add nothing (padding holds the input zero point).
// Fast rows (DW_FAST: contiguous input rows, kernel width <= 8, dilation 1 along W, stride DW_SW
// along W; the plan's conditions): a row's bytes are loaded as words, each output's KW bytes taken
// from them with constant shifts (bytes outside the row replaced by the zero point, so that every
// thread of a warp takes the same path), and each output's row of taps is one packed 4x8 dot
// product (two where the kernel is 5 to 8 wide, DW_KW8: taps 0-3 and 4-7), per word:
//   sum_k (x_k - zx)(w_k - zw) = dot(x, w) - zw * sum(x) - zx * sum(w) + KW * zx * zw
// (exact in wrapping i32, as the reference). Other layers take the taps one at a time, as the
// portable kernel does.
// Bindings and uniforms: those of convolution_integer.wgsl, and 9 the output as 16-byte vectors.

#include "convolution_integer.wgsl"

override DW_FAST: bool = false;  // the fast rows' structural conditions hold
override DW_SW: u32 = 1u;        // the stride along W (1 or 2) where DW_FAST
// Output rows contiguous, of whole quads, each quad on a 16-byte boundary: 16-byte stores.
override DW_VEC: bool = false;
// Fast rows of 5 to 8 taps: a second word of taps (4 .. KW - 1) a row.
override DW_KW8: bool = false;
// Fast rows: the kernel height where the rows are written out as a loop of constant count (1 to
// _DW_KH_CAP of the plan), 0 for a loop over cv.kernel_h.
override DW_KH: u32 = 0u;

@group(0) @binding(9) var<storage, read_write> output4: array<vec4<i32>>;

const ONES4 = 0x01010101u;

// Input word i of a fast row whose column 0 is byte rs of the binding; at an edge of the input
// (`edge`) its bytes outside the row's columns [0, W) replaced by the zero point (zrep), so that
// every word funnel-shifted from these holds the zero point in the lanes of taps outside the row.
// (Masking the raw words, 4 to 7 a row, costs less than masking each output's shifted word, 8 to 16.)
fn row_word(i: i32, rs: i32, W: i32, zrep: u32, edge: bool) -> u32 {
    let v = word_at(i);
    if (edge) { return in_row(v, 4 * i - rs, W, zrep); }
    return v;
}

// Taps k0 .. k0 + 3 of the filter row starting at filter element w_row, as one word (lanes outside
// `mask` zero): a contiguous row's bytes funnel-shifted from two words, else a byte at a time.
fn filter_word(w_row: u32, k0: u32, mask: u32) -> u32 {
    if (cv.filter_stride_w == 1u) {
        let fa = cv.filter_base + w_row + k0;
        let fi = fa >> 2u;
        return funnel(filter_weights[fi], filter_weights[fi + 1u], (fa & 3u) * 8u) & mask;
    }
    var w = 0u;
    for (var kw = 0u; kw < 4u; kw++) {
        if (((mask >> (8u * kw)) & 0xFFu) != 0u) {
            w |= filter_byte(w_row + (k0 + kw) * cv.filter_stride_w) << (8u * kw);
        }
    }
    return w;
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

// The taps of a fast row for one output, x the input bytes from its first tap column on:
// sum_k x_k * (w_k - zw) over the tap lanes (`kmask`; w is 0 beyond them, x need not be), each
// byte signed or not as its tensor's type says; sw = sum_w(w).
fn row_sum(x: u32, w: u32, kmask: u32, wz: i32, sw: i32) -> i32 {
    var sx = 0;   // the input sum: for the filter's zero point, and for a signed x with an unsigned w
    if (WZP != 0u || (X_SIGNED && !W_SIGNED)) { sx = sum_x(x, kmask); }
    var a: i32;
    if (X_SIGNED && W_SIGNED) {
        a = dot4I8Packed(x, w);
    } else if (!X_SIGNED && !W_SIGNED) {
        a = i32(dot4U8Packed(x, w));
    } else if (!X_SIGNED) {   // (x - 128) * w + 128 * w, with w signed
        a = dot4I8Packed(x ^ 0x80808080u, w) + 128 * sw;
    } else {                  // x * (w - 128) + 128 * x, with x signed
        a = dot4I8Packed(x, w ^ (0x80808080u & kmask)) + 128 * sx;
    }
    return a - wz * sx;       // (wz is 0 without a filter zero point)
}

fn row_sums(x: vec4<u32>, w: u32, kmask: u32, wz: i32, sw: i32) -> vec4<i32> {
    return vec4<i32>(row_sum(x.x, w, kmask, wz, sw), row_sum(x.y, w, kmask, wz, sw),
                     row_sum(x.z, w, kmask, wz, sw), row_sum(x.w, w, kmask, wz, sw));
}

// The eight outputs' sums over one fast row of taps: input row x_row (element offset), filter row
// w_row, iw0 the first tap column of output ow0 (see the entry point for the rest).
struct Eight {
    lo: vec4<i32>,   // outputs ow0 .. ow0 + 3
    hi: vec4<i32>,   // outputs ow0 + 4 .. ow0 + 7
}

fn fast_row(x_row: u32, w_row: u32, iw0: i32, W: i32, KW: u32, xz: i32, wz: i32, zrep: u32, kmask: u32,
            edge: bool) -> Eight {
    var r = Eight(vec4<i32>(0), vec4<i32>(0));
    // the filter row's taps 0-3 as one word (lanes past KW zero)
    let w = filter_word(w_row, 0u, kmask);
    // the row's bytes from column iw0 on as words (words before the buffer read as 0:
    // their lanes are outside the row), aligned to that column
    let rs = i32(cv.input_base + x_row);
    let a = rs + iw0;
    let sh = u32(a & 3) * 8u;
    let i = a >> 2u;
    let v0 = row_word(i, rs, W, zrep, edge);
    let v1 = row_word(i + 1, rs, W, zrep, edge);
    let v2 = row_word(i + 2, rs, W, zrep, edge);
    let v3 = row_word(i + 3, rs, W, zrep, edge);
    let u0 = funnel(v0, v1, sh);
    let u1 = funnel(v1, v2, sh);
    let u2 = funnel(v2, v3, sh);
    // output o's taps start at byte o * DW_SW
    var xl = vec4<u32>(u0, funnel(u0, u1, 8u), funnel(u0, u1, 16u), funnel(u0, u1, 24u));
    var xh = vec4<u32>(u1, funnel(u1, u2, 8u), funnel(u1, u2, 16u), funnel(u1, u2, 24u));
    if (DW_SW == 2u) {
        let v4 = row_word(i + 4, rs, W, zrep, edge);
        let u3 = funnel(v3, v4, sh);
        let u4 = funnel(v4, row_word(i + 5, rs, W, zrep, edge), sh);
        xl = vec4<u32>(u0, funnel(u0, u1, 16u), u1, funnel(u1, u2, 16u));
        xh = vec4<u32>(u2, funnel(u2, u3, 16u), u3, funnel(u3, u4, 16u));
    }
    let sw = sum_w(w);
    var fix = vec4<i32>(-xz * sw + i32(KW) * xz * wz);
    if (DW_KW8) {
        // taps 4 .. KW - 1: output o's second word starts 4 bytes after its first
        let kmask2 = low_lanes(KW - 4u);
        let w2 = filter_word(w_row, 4u, kmask2);
        let v4 = row_word(i + 4, rs, W, zrep, edge);
        let u3 = funnel(v3, v4, sh);
        var yl = xh;   // stride 1: outputs 0-3's second words are outputs 4-7's first
        var yh = vec4<u32>(u2, funnel(u2, u3, 8u), funnel(u2, u3, 16u), funnel(u2, u3, 24u));
        if (DW_SW == 2u) {
            let v5 = row_word(i + 5, rs, W, zrep, edge);
            let v6 = row_word(i + 6, rs, W, zrep, edge);
            let u4 = funnel(v4, v5, sh);
            let u5 = funnel(v5, v6, sh);
            yl = vec4<u32>(u1, funnel(u1, u2, 16u), u2, funnel(u2, u3, 16u));
            yh = vec4<u32>(u3, funnel(u3, u4, 16u), u4, funnel(u4, u5, 16u));
        }
        let sw2 = sum_w(w2);
        fix -= vec4<i32>(xz * sw2);
        r.lo += row_sums(yl, w2, kmask2, wz, sw2);
        r.hi += row_sums(yh, w2, kmask2, wz, sw2);
    }
    r.lo += row_sums(xl, w, kmask, wz, sw) + fix;
    r.hi += row_sums(xh, w, kmask, wz, sw) + fix;
    return r;
}

@compute @workgroup_size(WG)
fn convolution_integer_depthwise(@builtin(global_invocation_id) gid: vec3<u32>,
                                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= cv.dw_threads) { return; }
    let octs = (cv.out_width + 7u) / 8u;
    let q = tid % octs;
    var rest = tid / octs;
    let oh = rest % cv.out_height;
    rest = rest / cv.out_height;
    let m = rest % cv.out_channels;
    let n = rest / cv.out_channels;
    let ow0 = 8u * q;
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
    let nout = min(8u, cv.out_width - ow0);
    // an eight with taps outside its rows (an edge of the input): those taps read the zero point
    let edge = iw0 < 0 || iw0 + i32(7u * DW_SW + KW) > W;
    let kmask = low_lanes(min(KW, 4u));   // the tap lanes of a fast row's words
    let zrep = (u32(xz) & 0xFFu) * ONES4;
    var lo = vec4<i32>(0);   // outputs ow0 .. ow0 + 3
    var hi = vec4<i32>(0);   // outputs ow0 + 4 .. ow0 + 7
    if (DW_FAST && DW_KH > 0u) {
        // rows of a constant count (the kernel height): a row outside the input is read clamped
        // and its sums dropped, so no row's loads wait on a branch and all can be in flight
        for (var kh = 0u; kh < DW_KH; kh++) {
            let ih = ih0 + i32(kh * cv.dilation_h);
            let x_row = x_n + u32(clamp(ih, 0, H - 1)) * cv.in_stride_h;
            let r = fast_row(x_row, w_m + kh * cv.filter_stride_h, iw0, W, KW, xz, wz, zrep, kmask, edge);
            let inside = ih >= 0 && ih < H;
            lo += select(vec4<i32>(0), r.lo, inside);
            hi += select(vec4<i32>(0), r.hi, inside);
        }
    }
    for (var kh = 0u; kh < select(cv.kernel_h, 0u, DW_FAST && DW_KH > 0u); kh++) {
        let ih = ih0 + i32(kh * cv.dilation_h);
        if (ih < 0 || ih >= H) { continue; }
        let x_row = x_n + u32(ih) * cv.in_stride_h;
        let w_row = w_m + kh * cv.filter_stride_h;
        if (DW_FAST) {
            let r = fast_row(x_row, w_row, iw0, W, KW, xz, wz, zrep, kmask, edge);
            lo += r.lo;
            hi += r.hi;
            continue;
        }
        // a tap at a time (the layers the fast rows do not take)
        let cs = i32(cv.stride_w);
        for (var kw = 0u; kw < KW; kw++) {
            let wv = widen(filter_byte(w_row + kw * cv.filter_stride_w), W_SIGNED) - wz;
            let c0 = iw0 + i32(kw * cv.dilation_w);
            var t = vec4<i32>(0);
            var u = vec4<i32>(0);
            for (var o = 0u; o < 4u; o++) {
                let c = c0 + i32(o) * cs;
                if (o < nout && c >= 0 && c < W) {
                    t[o] = (widen(input_byte(x_row + u32(c) * cv.in_stride_w), X_SIGNED) - xz) * wv;
                }
                let d = c + 4 * cs;
                if (o + 4u < nout && d >= 0 && d < W) {
                    u[o] = (widen(input_byte(x_row + u32(d) * cv.in_stride_w), X_SIGNED) - xz) * wv;
                }
            }
            lo += t;
            hi += u;
        }
    }
    let o = output_index(n, m, oh, ow0);
    if (DW_VEC && !ACCUMULATE) {
        output4[o / 4u] = lo;
        if (nout > 4u) { output4[o / 4u + 1u] = hi; }
        return;
    }
    for (var k = 0u; k < min(nout, 4u); k++) { store_output(o + k * cv.out_stride_w, lo[k]); }
    for (var k = 4u; k < nout; k++) { store_output(o + k * cv.out_stride_w, hi[k - 4u]); }
}

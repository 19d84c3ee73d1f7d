// ConvolutionInteger, direct kernel on the packed 4x8 dot product: small groups (4 <= C/G < 16,
// e.g. ResNeXt's 32 groups of 8 channels) on adapters with packed_4x8_integer_dot_product.
//
// The direct kernel's tiling (convolution_integer_direct.wgsl: a workgroup stages the input window
// of a tile of outputs and a block of filters once, then its threads take four output columns a
// quad-width apart at a time), with four channels a staged word: each window position holds
// ceil(Cg/4) words of signed 4x8 values and each filter tap the same, so one dot4I8Packed does
// the work of four multiply-adds. As in the dot4 GEMM (convolution_integer_dot4.wgsl), a UINT8
// byte u is stored as u ^ 0x80 (the INT8 value u - 128), x' = x - ox, w' = w - ow, and
//   y = sum x'w' - zw' * sum x' - zx' * sum w' + K * zx' * zw'      (K = Cg*KH*KW, wrapping i32)
// with taps outside the input holding zx' in their real channels and 0 past Cg. sum x' runs along
// with the products (one more dot product a word, only where zw' can be nonzero); sum w' is summed
// per output channel from the staged filter.
// Bindings and uniforms: those of convolution_integer.wgsl (this kernel reads group_words and taps).

#include "convolution_integer_direct.wgsl"

override NEED_SX: bool = true;  // zw' can be nonzero: the per-output sums of x'
override NEED_SW: bool = true;  // zx' can be nonzero: the per-channel sums of w'

const ONES4: u32 = 0x01010101u;

fn flip_x() -> u32 { return select(0x80808080u, 0u, X_SIGNED); }
fn flip_w() -> u32 { return select(0x80808080u, 0u, W_SIGNED); }

@compute @workgroup_size(WG)
fn convolution_integer_direct_dot4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                   @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }   // uniform across the workgroup: no barrier is skipped unevenly
    let t = tile_of(wg);   // (convolution_integer_direct.wgsl)
    let n = t.n;
    let g = t.g;
    let mb = t.mb;
    let oh0 = t.oh0;
    let ow0 = t.ow0;
    let ih0 = t.ih0;
    let iw0 = t.iw0;

    let cg = cv.group_in_channels;
    let cw = cv.group_words;
    let KH = cv.kernel_h;
    let KW = kernel_w();
    let WW = cv.window_w;
    let win = cv.window_h * WW;

    // Stage the input window: word i = (c4 * window_h + wy) * window_w + wx (channels 4 c4..4 c4 + 3).
    let zx_byte = (u32(input_zp()) & 0xFFu) ^ (flip_x() & 0xFFu);
    let xn = n * cv.in_stride_n + g * cg * cv.in_stride_c;
    let H = i32(cv.in_height);
    let W = i32(cv.in_width);
    var wx = l % WW;
    var wy = (l / WW) % cv.window_h;
    var c4 = l / win;
    let dx = WG % WW;
    let dy = (WG / WW) % cv.window_h;
    let dc = WG / win;
    for (var i = l; i < cw * win; i += WG) {
        let ih = ih0 + i32(wy);
        let iw = iw0 + i32(wx);
        let inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
        let lanes = min(4u, cg - 4u * c4);
        var word = 0u;
        var a = xn + 4u * c4 * cv.in_stride_c;
        if (inside) { a += u32(ih) * cv.in_stride_h + u32(iw) * cv.in_stride_w; }
        for (var j = 0u; j < lanes; j++) {
            var b = zx_byte;
            if (inside) { b = input_byte(a) ^ (flip_x() & 0xFFu); }
            word |= b << (8u * j);
            a += cv.in_stride_c;
        }
        x_sh[i] = bitcast<i32>(word);
        wx += dx;
        wy += dy;
        c4 += dc;
        if (wx >= WW) { wx -= WW; wy += 1u; }
        if (wy >= cv.window_h) { wy -= cv.window_h; c4 += 1u; }
    }

    // Stage the filter block: channel_block rows of ceil(Cg/4) * KH * KW words, (c4, kh, kw) order.
    let mg = cv.group_out_channels;
    let ml0 = mb * cv.channel_block;
    let nblk = min(cv.channel_block, mg - ml0);
    let m0 = g * mg + ml0;
    let khw = KH * KW;
    let row = cw * khw;
    for (var j = l; j < nblk * row; j += WG) {
        let ml = j / row;
        let t = j % row;
        let q = t / khw;
        let r = t % khw;
        var a = (m0 + ml) * cv.filter_stride_m + 4u * q * cv.filter_stride_c + (r / KW) * cv.filter_stride_h
              + (r % KW) * cv.filter_stride_w;
        let lanes = min(4u, cg - 4u * q);
        var word = 0u;
        for (var k = 0u; k < lanes; k++) {
            word |= (filter_byte(a) ^ (flip_w() & 0xFFu)) << (8u * k);
            a += cv.filter_stride_c;
        }
        w_sh[j] = bitcast<i32>(word);
    }
    workgroupBarrier();

    let zxp = i32(zx_byte << 24u) >> 24u;   // zx' as an integer
    let TW = cv.tile_w;
    let TH = cv.tile_h;
    let TQ = (TW + 3u) / 4u;
    var qx = l % TQ;
    var py = (l / TQ) % TH;
    var ml = l / (TQ * TH);
    let ex = WG % TQ;
    let ey = (WG / TQ) % TH;
    let em = WG / (TQ * TH);
    let row_step = cv.dilation_h * WW;
    let col_step = cv.dilation_w;
    let s1 = TQ * cv.stride_w;
    let s2 = 2u * s1;
    let s3 = 3u * s1;
    while (ml < nblk) {
        let px = qx;
        let oh = oh0 + py;
        let ow = ow0 + px;
        if (oh < cv.out_height && ow < cv.out_width) {
            var a0 = 0i; var a1 = 0i; var a2 = 0i; var a3 = 0i;
            var x0 = 0i; var x1 = 0i; var x2 = 0i; var x3 = 0i;
            var sw = 0i;
            var wi = ml * row;
            var xr = py * cv.stride_h * WW + px * cv.stride_w;
            for (var q = 0u; q < cw; q++) {
                var xk = xr;
                for (var kh = 0u; kh < KH; kh++) {
                    var xi = xk;
                    for (var kw = 0u; kw < KW; kw++) {
                        let wv = bitcast<u32>(w_sh[wi]);
                        let v0 = bitcast<u32>(x_sh[xi]);
                        let v1 = bitcast<u32>(x_sh[xi + s1]);
                        let v2 = bitcast<u32>(x_sh[xi + s2]);
                        let v3 = bitcast<u32>(x_sh[xi + s3]);
                        a0 += dot4I8Packed(v0, wv);
                        a1 += dot4I8Packed(v1, wv);
                        a2 += dot4I8Packed(v2, wv);
                        a3 += dot4I8Packed(v3, wv);
                        if (NEED_SX) {
                            x0 += dot4I8Packed(v0, ONES4);
                            x1 += dot4I8Packed(v1, ONES4);
                            x2 += dot4I8Packed(v2, ONES4);
                            x3 += dot4I8Packed(v3, ONES4);
                        }
                        if (NEED_SW) { sw += dot4I8Packed(wv, ONES4); }
                        xi += col_step;
                        wi += 1u;
                    }
                    xk += row_step;
                }
                xr += win;
            }
            let m = m0 + ml;
            let zwp = filter_zp(m) - select(128i, 0i, W_SIGNED);
            let corr = i32(cv.taps) * zxp * zwp - zxp * sw;
            store_output(output_index(n, m, oh, ow), a0 + corr - zwp * x0);
            let o1 = TQ;
            let o2 = 2u * TQ;
            let o3 = 3u * TQ;
            if (px + o1 < TW && ow + o1 < cv.out_width) { store_output(output_index(n, m, oh, ow + o1), a1 + corr - zwp * x1); }
            if (px + o2 < TW && ow + o2 < cv.out_width) { store_output(output_index(n, m, oh, ow + o2), a2 + corr - zwp * x2); }
            if (px + o3 < TW && ow + o3 < cv.out_width) { store_output(output_index(n, m, oh, ow + o3), a3 + corr - zwp * x3); }
        }
        qx += ex;
        py += ey;
        ml += em;
        if (qx >= TQ) { qx -= TQ; py += 1u; }
        if (py >= TH) { py -= TH; ml += 1u; }
    }
}

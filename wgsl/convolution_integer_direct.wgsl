// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER), direct kernel for few channels per group:
// depthwise (C/G = 1), small groups (C/G < 16) and small-channel stems, where an implicit GEMM
// would pad each tap's channels to whole 4-word vectors and its 64-channel tiles would sit mostly idle.
//
// A workgroup owns one (n, g), a block of `channel_block` output channels of the group and a
// tile of tile_h x tile_w output pixels. It stages the input window the tile reads (all Cg
// channels, window_h x window_w positions, x - zx as i32, 0 outside the input: padding holds the
// input zero point) and the filter block (w - zw[m] as i32) in workgroup memory once, then its
// threads take the block's outputs, four columns a quad-width apart at a time (channel, row,
// column; columns fastest), WG at a time; a tile may hold more pixels than the workgroup has threads. Every product is exact in i32 and the sums
// wrap, as in the portable kernel:
//   out[n, m, oh, ow] = sum_{c, kh, kw} x_sh[c][(oh - oh0)*sh + kh*dh][(ow - ow0)*sw + kw*dw] * w_sh[m][c][kh][kw]
// Workgroups are ordered tile_w fastest, then tile_h, channel block, group, batch.
// Bindings and uniforms: those of convolution_integer.wgsl (Conv's tile_*, window_*,
// channel_block* and workgroups fields are this kernel's).

#include "convolution_integer.wgsl"

// Staging sizes: powers of two the plan sizes to the tile (WGSL zero-fills workgroup memory at
// every workgroup's start, so slots beyond the tile's need would cost time, not just space).
override XS: u32 = 4096u;  // i32 slots for the staged input window (Cg * window_h * window_w at most)
override WS: u32 = 1024u;  // i32 slots for the staged filter block (channel_block * Cg * KH * KW at most)
// The kernel width when the plan fixes it (widths up to 7): a constant trip count lets the compiler
// unroll the innermost tap loop; 0 reads kernel_w from the uniforms.
override KW_FIXED: u32 = 0u;
// The input's rows are contiguous (W stride 1): stage a window row a word at a time (one load for
// four values) instead of a byte at a time.
override ROW_WORDS: bool = false;

var<workgroup> x_sh: array<i32, XS>;
var<workgroup> w_sh: array<i32, WS>;

// What workgroup wg works on: batch item n, group g, channel block mb, and the tile of outputs
// from (oh0, ow0), whose input window starts at (ih0, iw0) (negative: in the padding). Shared by
// both direct kernels.
struct DirectTile {
    n: u32,
    g: u32,
    mb: u32,
    oh0: u32,
    ow0: u32,
    ih0: i32,
    iw0: i32,
}

fn tile_of(wg0: u32) -> DirectTile {
    var wg = wg0;
    let tw = wg % cv.tiles_w;
    wg = wg / cv.tiles_w;
    let th = wg % cv.tiles_h;
    wg = wg / cv.tiles_h;
    let mb = wg % cv.channel_blocks;
    wg = wg / cv.channel_blocks;
    let oh0 = th * cv.tile_h;
    let ow0 = tw * cv.tile_w;
    let ih0 = i32(oh0 * cv.stride_h) - i32(cv.pad_top);
    let iw0 = i32(ow0 * cv.stride_w) - i32(cv.pad_left);
    return DirectTile(wg / cv.group_count, wg % cv.group_count, mb, oh0, ow0, ih0, iw0);
}

// The kernel's width (a constant where KW_FIXED says so).
fn kernel_w() -> u32 { return select(cv.kernel_w, KW_FIXED, KW_FIXED > 0u); }

@compute @workgroup_size(WG)
fn convolution_integer_direct(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                              @builtin(local_invocation_index) l: u32) {
    let wg = workgroup_index(wid, nwg);
    if (wg >= cv.workgroups) { return; }   // uniform across the workgroup: no barrier is skipped unevenly
    let t = tile_of(wg);
    let n = t.n;
    let g = t.g;
    let mb = t.mb;
    let oh0 = t.oh0;
    let ow0 = t.ow0;
    let ih0 = t.ih0;
    let iw0 = t.iw0;

    let cg = cv.group_in_channels;
    let KH = cv.kernel_h;
    let KW = kernel_w();
    let WW = cv.window_w;
    let win = cv.window_h * WW;

    // Stage the input window, element i = (c * window_h + wy) * window_w + wx, WG at a time; the
    // coordinates advance by carries instead of a division per element.
    let xz = input_zp();
    let xn = n * cv.in_stride_n + g * cg * cv.in_stride_c;
    let H = i32(cv.in_height);
    let W = i32(cv.in_width);
    var wx = l % WW;
    var wy = (l / WW) % cv.window_h;
    var c = l / win;
    let dx = WG % WW;
    let dy = (WG / WW) % cv.window_h;
    let dc = WG / win;
    if (ROW_WORDS) {
        stage_rows_by_words(l, xn, ih0, iw0, cg, xz);
    }
    for (var i = select(l, cg * win, ROW_WORDS); i < cg * win; i += WG) {
        let ih = ih0 + i32(wy);
        let iw = iw0 + i32(wx);
        var v = 0i;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
            v = widen(input_byte(xn + c * cv.in_stride_c + u32(ih) * cv.in_stride_h + u32(iw) * cv.in_stride_w),
                      X_SIGNED) - xz;
        }
        x_sh[i] = v;
        wx += dx;
        wy += dy;
        c += dc;
        if (wx >= WW) { wx -= WW; wy += 1u; }
        if (wy >= cv.window_h) { wy -= cv.window_h; c += 1u; }
    }

    // Stage the filter block: channel_block rows of Cg*KH*KW taps, w - zw[m].
    let mg = cv.group_out_channels;
    let ml0 = mb * cv.channel_block;
    let nblk = min(cv.channel_block, mg - ml0);
    let m0 = g * mg + ml0;
    let khw = KH * KW;
    let taps = cg * khw;
    for (var j = l; j < nblk * taps; j += WG) {
        let ml = j / taps;
        let t = j % taps;
        let r = t % khw;
        let m = m0 + ml;
        let a = m * cv.filter_stride_m + (t / khw) * cv.filter_stride_c + (r / KW) * cv.filter_stride_h
              + (r % KW) * cv.filter_stride_w;
        w_sh[j] = widen(filter_byte(a), W_SIGNED) - filter_zp(m);
    }
    workgroupBarrier();

    // The outputs, four columns a thread (one filter load feeds four multiply-adds): columns
    // qx + j * quads (j < 4, quads = ceil(tile_w / 4)), so a warp's lanes read neighbouring staged
    // values (no bank conflicts at stride 1) and store neighbouring outputs; item
    // i = (ml * tile_h + py) * quads + qx, WG at a time (carries again). Columns past the tile
    // read staged values of the next row or clamped slots and are not stored.
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
            var a0 = 0i;
            var a1 = 0i;
            var a2 = 0i;
            var a3 = 0i;
            var wi = ml * taps;
            var xr = py * cv.stride_h * WW + px * cv.stride_w;
            for (var ci = 0u; ci < cg; ci++) {
                var xk = xr;
                for (var kh = 0u; kh < KH; kh++) {
                    var xi = xk;
                    for (var kw = 0u; kw < KW; kw++) {
                        let wv = w_sh[wi];
                        a0 += x_sh[xi] * wv;
                        a1 += x_sh[xi + s1] * wv;
                        a2 += x_sh[xi + s2] * wv;
                        a3 += x_sh[xi + s3] * wv;
                        xi += col_step;
                        wi += 1u;
                    }
                    xk += row_step;
                }
                xr += win;
            }
            let m = m0 + ml;
            store_output(output_index(n, m, oh, ow), a0);
            let o1 = TQ;
            let o2 = 2u * TQ;
            let o3 = 3u * TQ;
            if (px + o1 < TW && ow + o1 < cv.out_width) { store_output(output_index(n, m, oh, ow + o1), a1); }
            if (px + o2 < TW && ow + o2 < cv.out_width) { store_output(output_index(n, m, oh, ow + o2), a2); }
            if (px + o3 < TW && ow + o3 < cv.out_width) { store_output(output_index(n, m, oh, ow + o3), a3); }
        }
        qx += ex;
        py += ey;
        ml += em;
        if (qx >= TQ) { qx -= TQ; py += 1u; }
        if (py >= TH) { py -= TH; ml += 1u; }
    }
}

// The input window staged by words (ROW_WORDS: in_stride_w = 1): item (row, k) loads word k of
// the bytes that window row `row` = c * window_h + wy covers and writes the (up to four) window
// columns it holds; words wholly outside the input row are not loaded (their columns are padding).
fn stage_rows_by_words(l: u32, xn: u32, ih0: i32, iw0: i32, cg: u32, xz: i32) {
    let WW = cv.window_w;
    let rows = cg * cv.window_h;
    let per_row = WW / 4u + 2u;   // words a row of WW bytes can touch at any byte offset
    let W = i32(cv.in_width);
    for (var i = l; i < rows * per_row; i += WG) {
        let row = i / per_row;
        let k = i % per_row;
        let c = row / cv.window_h;
        let wy = row % cv.window_h;
        let ih = ih0 + i32(wy);
        // byte address of window column 0 (iw = iw0), as a signed value: it may lie before the buffer
        let a0 = i32(cv.input_base + xn + c * cv.in_stride_c) + ih * i32(cv.in_stride_h) + iw0;
        let w0 = (a0 >> 2u) + i32(k);            // the word (floor division: >> on i32 is arithmetic)
        let col0 = w0 * 4 - a0;                  // window column of the word's byte 0
        if (col0 >= i32(WW)) { continue; }
        let row_ok = ih >= 0 && ih < i32(cv.in_height);
        let iwa = iw0 + col0;                    // input column of byte 0
        let overlaps = row_ok && iwa + 3 >= 0 && iwa < W;
        var word = 0u;
        if (overlaps) { word = input[u32(w0)]; }
        let base = row * WW;
        for (var b = 0; b < 4; b++) {
            let col = col0 + b;
            if (col < 0 || col >= i32(WW)) { continue; }
            let iw = iwa + b;
            var v = 0i;
            if (overlaps && iw >= 0 && iw < W) { v = widen((word >> (8u * u32(b))) & 0xFFu, X_SIGNED) - xz; }
            x_sh[base + u32(col)] = v;
        }
    }
}

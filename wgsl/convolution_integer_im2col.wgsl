// ConvolutionInteger: the im2col forms of a pixel's window, shared by the dot4 GEMM's pack and
// im2col staging (convolution_integer_dot4.wgsl) and the window kernel
// (convolution_integer_dot4_window.wgsl). Included after convolution_integer.wgsl.
//
// A pixel's window as K = Cg*KH*KW taps, k = (c * KH + kh) * KW + kw, four taps a signed 4x8 word
// (UINT8 bytes flipped by 0x80: the INT8 value u - 128), taps outside the input holding zx' (so they
// add 0 after the zero-point correction), taps past K 0; the filter rows in the same order.
// Its overrides are declared here, above every kernel that reads them: with an override declared
// below its use in a GEMM's call graph, naga 29's process_overrides panicked (handlevec.rs
// assertion) on every such pipeline, lavapipe and GL.

// Row form (IM2COL_ROWS, where the input's rows are contiguous, W is not dilated, KW <= 8 and the
// padding costs the GEMM no k step): each kernel row (c, kh) holds ceil(KW/4) whole words, taps
// kw = 4 * part .. 4 * part + 3 of word `part`, lanes past KW 0 in both input and filter rows. A
// word is then 4 neighbouring bytes of one input row: two word loads and a funnel shift, the
// lanes outside the input replaced by zx' (as in_row does), instead of four byte gathers.
override IM2COL_ROWS: bool = false;
// Dense-rows form (IM2COL_DENSE_ROWS, otherwise where the rows are contiguous, W is not dilated and
// KW >= 3): the dense tap order, each word from at most two 4-byte spans (im2col_dense_word).
override IM2COL_DENSE_ROWS: bool = false;

const ONES: u32 = 0x01010101u;

fn x_flip() -> u32 { return select(0x80u, 0u, X_SIGNED); }
fn w_flip() -> u32 { return select(0x80u, 0u, W_SIGNED); }

// Tap k's byte of output pixel (n, oh, ow), group g, channel-major: (c, kh, kw) advance by carries.
// In row form `kw` counts words of a kernel row (part), not taps.
struct TapPos { c: u32, kh: u32, kw: u32 }

// Words of a kernel row in row form (1 or 2).
fn row_words() -> u32 { return (cv.kernel_w + 3u) / 4u; }

fn tap_pos(k: u32) -> TapPos {
    if (IM2COL_ROWS) {   // k counts words
        let r = k / row_words();
        return TapPos(r / cv.kernel_h, r % cv.kernel_h, k % row_words());
    }
    let khw = cv.kernel_h * cv.kernel_w;
    let r = k % khw;
    return TapPos(k / khw, r / cv.kernel_w, r % cv.kernel_w);
}

fn next_tap(t: TapPos) -> TapPos {
    var u = t;
    u.kw += 1u;
    if (u.kw == select(cv.kernel_w, row_words(), IM2COL_ROWS)) { u.kw = 0u; u.kh += 1u; if (u.kh == cv.kernel_h) { u.kh = 0u; u.c += 1u; } }
    return u;
}

// One word (4 taps from tap position t, tap index k) of an im2col row, flipped; advances t.
// `inside`: the pixel's whole window lies in the input (no bounds test a tap).
fn im2col_word(xn: u32, ih0: i32, iw0: i32, k: u32, t: ptr<function, TapPos>, zx_byte: u32, inside: bool) -> u32 {
    var word = 0u;
    for (var j = 0u; j < 4u; j++) {
        if (k + j < cv.taps) {
            let ih = ih0 + i32((*t).kh * cv.dilation_h);
            let iw = iw0 + i32((*t).kw * cv.dilation_w);
            var b = zx_byte;
            if (inside || (ih >= 0 && ih < i32(cv.in_height) && iw >= 0 && iw < i32(cv.in_width))) {
                b = input_byte(xn + (*t).c * cv.in_stride_c + u32(ih) * cv.in_stride_h + u32(iw) * cv.in_stride_w)
                    ^ x_flip();
            }
            word |= b << (8u * j);
            *t = next_tap(*t);
        }
    }
    return word;
}

// The 4 input bytes of kernel row (c, kh) of the pixel whose window starts at (ih0, iw0), from tap
// column kw on (contiguous input rows, no W dilation), flipped; lanes outside the input zx' (zrep).
fn im2col_span(xn: u32, ih0: i32, iw0: i32, c: u32, kh: u32, kw: u32, zrep: u32) -> u32 {
    let ih = ih0 + i32(kh * cv.dilation_h);
    if (ih < 0 || ih >= i32(cv.in_height)) { return zrep; }
    let col = iw0 + i32(kw);
    let a = i32(cv.input_base + xn + c * cv.in_stride_c + u32(ih) * cv.in_stride_h) + col;
    let i = a >> 2u;
    let x = funnel(word_at(i), word_at(i + 1), u32(a & 3) * 8u) ^ (x_flip() * ONES);
    return in_row(x, col, i32(cv.in_width), zrep);
}

// Row form: word `t.kw` of kernel row (t.c, t.kh) of the pixel whose window starts at (ih0, iw0),
// flipped (lanes past KW 0, lanes outside the input zx'); past the window's rows, 0.
fn im2col_row_word(xn: u32, ih0: i32, iw0: i32, t: TapPos, zx_byte: u32) -> u32 {
    if (t.c >= cv.group_in_channels) { return 0u; }
    let lanes = min(4u, cv.kernel_w - 4u * t.kw);   // taps in this word
    return im2col_span(xn, ih0, iw0, t.c, t.kh, 4u * t.kw, zx_byte * ONES) & low_lanes(lanes);
}

// Dense-rows form (IM2COL_DENSE_ROWS: the dense tap order, contiguous input rows, no W dilation,
// KW >= 3): the word of taps k .. k + 3 (t: tap k's position) lies in at most two kernel rows, the
// taps from t.kw to the row's end (at most 4) and the next row's first: two 4-byte spans of input
// row words instead of four byte gathers; lanes past K 0.
fn im2col_dense_word(xn: u32, ih0: i32, iw0: i32, t: TapPos, k: u32, zx_byte: u32) -> u32 {
    if (k >= cv.taps) { return 0u; }
    let zrep = zx_byte * ONES;
    let na = min(4u, cv.kernel_w - t.kw);   // lanes from this kernel row
    var word = im2col_span(xn, ih0, iw0, t.c, t.kh, t.kw, zrep);
    if (na < 4u) {
        var c = t.c;
        var kh = t.kh + 1u;
        if (kh == cv.kernel_h) { kh = 0u; c += 1u; }
        let b = im2col_span(xn, ih0, iw0, c, kh, 0u, zrep);   // (past the last row: masked below)
        word = (word & low_lanes(na)) | (b << (8u * na));
    }
    return word & low_lanes(min(4u, cv.taps - k));
}

// Tap position t advanced by 4 taps.
fn next_tap4(t: TapPos) -> TapPos { return next_tap(next_tap(next_tap(next_tap(t)))); }

// Words kq .. kq + 3 (kq a multiple of 4) of the im2col row of the pixel whose window starts at
// (ih0, iw0), xn its batch item's and group's offset in the input: in the form the overrides
// select, flipped, taps outside the input zx', lanes past K (or past KW in row form) 0.
fn im2col_words4(xn: u32, ih0: i32, iw0: i32, kq: u32, zx_byte: u32) -> vec4<u32> {
    if (IM2COL_ROWS) {   // kq counts words of kernel rows
        let t0 = tap_pos(kq);
        let t1 = next_tap(t0);
        let t2 = next_tap(t1);
        let t3 = next_tap(t2);
        return vec4<u32>(im2col_row_word(xn, ih0, iw0, t0, zx_byte), im2col_row_word(xn, ih0, iw0, t1, zx_byte),
                         im2col_row_word(xn, ih0, iw0, t2, zx_byte), im2col_row_word(xn, ih0, iw0, t3, zx_byte));
    }
    let k0 = 4u * kq;   // the chunk's first tap
    if (IM2COL_DENSE_ROWS) {
        let t0 = tap_pos(k0);
        let t1 = next_tap4(t0);
        let t2 = next_tap4(t1);
        let t3 = next_tap4(t2);
        return vec4<u32>(im2col_dense_word(xn, ih0, iw0, t0, k0, zx_byte), im2col_dense_word(xn, ih0, iw0, t1, k0 + 4u, zx_byte),
                         im2col_dense_word(xn, ih0, iw0, t2, k0 + 8u, zx_byte), im2col_dense_word(xn, ih0, iw0, t3, k0 + 12u, zx_byte));
    }
    let inside = ih0 >= 0 && iw0 >= 0 && ih0 + i32((cv.kernel_h - 1u) * cv.dilation_h) < i32(cv.in_height)
        && iw0 + i32((cv.kernel_w - 1u) * cv.dilation_w) < i32(cv.in_width);
    var t = tap_pos(k0);
    let w0 = im2col_word(xn, ih0, iw0, k0, &t, zx_byte, inside);
    let w1 = im2col_word(xn, ih0, iw0, k0 + 4u, &t, zx_byte, inside);
    let w2 = im2col_word(xn, ih0, iw0, k0 + 8u, &t, zx_byte, inside);
    let w3 = im2col_word(xn, ih0, iw0, k0 + 12u, &t, zx_byte, inside);
    return vec4<u32>(w0, w1, w2, w3);
}

// Word f of filter row m in im2col order (the input's im2col words' order), flipped; 0 past K.
fn im2col_filter_word(m: u32, f: u32) -> u32 {
    if (IM2COL_ROWS) {
        let t = tap_pos(f);
        var word = 0u;
        if (t.c < cv.group_in_channels) {
            let a = m * cv.filter_stride_m + t.c * cv.filter_stride_c + t.kh * cv.filter_stride_h;
            if (cv.filter_stride_w == 1u) {
                // contiguous taps: the word's 4 bytes from two word loads (lanes past KW 0)
                let f = cv.filter_base + a + 4u * t.kw;
                let i = f >> 2u;
                let word = funnel(filter_weights[i], filter_weights[i + 1u], (f & 3u) * 8u) ^ (w_flip() * ONES);
                return word & low_lanes(min(4u, cv.kernel_w - 4u * t.kw));
            }
            for (var j = 0u; j < 4u; j++) {
                let kw = 4u * t.kw + j;
                if (kw < cv.kernel_w) { word |= (filter_byte(a + kw * cv.filter_stride_w) ^ w_flip()) << (8u * j); }
            }
        }
        return word;
    }
    let k0 = f * 4u;
    var t = tap_pos(k0);
    var word = 0u;
    for (var j = 0u; j < 4u; j++) {
        if (k0 + j < cv.taps) {
            let a = m * cv.filter_stride_m + t.c * cv.filter_stride_c + t.kh * cv.filter_stride_h
                  + t.kw * cv.filter_stride_w;
            word |= (filter_byte(a) ^ w_flip()) << (8u * j);
            t = next_tap(t);
        }
    }
    return word;
}

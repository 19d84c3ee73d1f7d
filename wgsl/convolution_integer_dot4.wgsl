// ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER), fast path: packed 4x8 dot products.
//
// Implicit GEMM per group g: rows = output pixels p = (n*OH + oh)*OW + ow, columns = output
// channels m of the group, reduction over k = (kh*KW + kw)*ceil(Cg/4) + c4, four channels a word.
// All four sign mixes reduce to the signed case: a UINT8 byte u is stored as u ^ 0x80, which
// reads as the INT8 value u - 128. With x' = x - ox and w' = w - ow (ox, ow = 128 for UINT8, else
// 0) and zx' = zx - ox, zw' = zw - ow:
//   y = sum (x - zx)(w - zw) = sum x'w' - zw' * sum x' - zx' * sum w' + K * zx' * zw'
// (K = Cg*KH*KW taps; exact in wrapping i32). Padded taps hold zx' in their real channels, so they
// add 0 like the portable kernel's skipped taps; channels past Cg and k past the end hold 0.
//
// Three passes: pack_input (input -> packed_input, one word per (n, ih, iw, g, c4), flipped),
// pack_filter (filter -> packed_filter, words [g][k][m], flipped), and the GEMM: a workgroup of
// 16x16 threads owns a tile of TP = 16*RP pixels by TM = 16*RM channels, stages KC words of k
// per step in workgroup memory, and each thread keeps RP x RM i32 accumulators in registers.
// Bindings: those of convolution_integer.wgsl, plus 6 packed_input, 7 packed_filter (written by the
// pack passes) and 8, 9: the same buffers, read-only, for the GEMM.
// Extra entry point: dot4_ceiling, nothing but dot4I8Packed from registers (benchmark ceiling).

#include "convolution_integer.wgsl"

override RP: u32 = 4u;   // output pixels per thread (4; 8 gave wrong sums on lavapipe, see the op)
override RM: u32 = 4u;   // output channels per thread (4 or 8)
override NEED_SX: bool = true;  // zw' can be nonzero: needs the per-pixel sums of x'
override NEED_SW: bool = true;  // zx' can be nonzero: needs the per-channel sums of w'

const KC: u32 = 16u;        // k words staged per step
const ONES: u32 = 0x01010101u;

@group(0) @binding(6) var<storage, read_write> packed_input: array<u32>;
@group(0) @binding(7) var<storage, read_write> packed_filter: array<vec4<u32>>;
// The GEMM reads the packed words through read-only bindings of the same buffers.
@group(0) @binding(8) var<storage, read> packed_input_ro: array<u32>;
@group(0) @binding(9) var<storage, read> packed_filter_ro: array<vec4<u32>>;

var<workgroup> a_sh: array<vec4<u32>, 512>;   // [KC][TP/4] words of 4 pixels
var<workgroup> b_sh: array<vec4<u32>, 512>;   // [KC][TM/4] words of 4 channels
var<workgroup> sx_sh: array<i32, 128>;
var<workgroup> sw_sh: array<i32, 128>;

fn x_flip() -> u32 { return select(0x80u, 0u, X_SIGNED); }
fn w_flip() -> u32 { return select(0x80u, 0u, W_SIGNED); }

@compute @workgroup_size(WG)
fn pack_input(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    if (e >= cv.gemm2.z) { return; }
    let cg4 = cv.zp.w;
    let cg = cv.filt_sizes.y;
    let c4 = e % cg4;
    var r = e / cg4;
    let g = r % cv.pads.z;
    r = r / cv.pads.z;
    let iw = r % cv.in_sizes.w;
    r = r / cv.in_sizes.w;
    let ih = r % cv.in_sizes.z;
    let n = r / cv.in_sizes.z;
    let c0 = g * cg + c4 * 4u;
    var a = n * cv.in_strides.x + c0 * cv.in_strides.y + ih * cv.in_strides.z + iw * cv.in_strides.w;
    var word = 0u;
    let lanes = min(4u, cg - c4 * 4u);
    for (var j = 0u; j < lanes; j++) {
        word |= (input_byte(a) ^ x_flip()) << (8u * j);
        a += cv.in_strides.y;
    }
    packed_input[e] = word;
}

@compute @workgroup_size(WG)
fn pack_filter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_id(gid, nwg);
    let mg4 = cv.gemm.z;
    let kw_words = cv.gemm.y;
    if (e >= cv.pads.z * kw_words * mg4 * 4u) { return; }
    let ml = e % (mg4 * 4u);
    let r = e / (mg4 * 4u);
    let k = r % kw_words;
    let g = r / kw_words;
    let cg4 = cv.zp.w;
    let cg = cv.filt_sizes.y;
    let c4 = k % cg4;
    let khw = k / cg4;
    let kh = khw / cv.filt_sizes.w;
    let kw = khw % cv.filt_sizes.w;
    var word = 0u;
    if (ml < cv.pads.w) {
        let m = g * cv.pads.w + ml;
        var a = m * cv.filt_strides.x + c4 * 4u * cv.filt_strides.y + kh * cv.filt_strides.z + kw * cv.filt_strides.w;
        let lanes = min(4u, cg - c4 * 4u);
        for (var j = 0u; j < lanes; j++) {
            word |= (filter_byte(a) ^ w_flip()) << (8u * j);
            a += cv.filt_strides.y;
        }
    }
    packed_filter[e >> 2u][e & 3u] = word;
}

// The packed word of a padded tap at channel word c4: zx' in the real channels, 0 past Cg.
fn pad_word(c4: u32, zx_byte: u32) -> u32 {
    let lanes = min(4u, cv.filt_sizes.y - c4 * 4u);
    let mask = select((1u << (8u * lanes)) - 1u, 0xFFFFFFFFu, lanes == 4u);
    return (zx_byte * ONES) & mask;
}

// Packed input word c4 of pixel p (p past the end reads pixel P - 1: valid, never stored) at
// kernel offset (dh, dw); the pad word where the tap falls outside the input.
fn a_word(p: u32, g: u32, c4: u32, dh: i32, dw: i32, pad: u32) -> u32 {
    let pc = min(p, cv.gemm.x - 1u);
    let ohw = cv.out_sizes.z * cv.out_sizes.w;
    let n = pc / ohw;
    let r = pc % ohw;
    let ih = i32((r / cv.out_sizes.w) * cv.geom.x) - i32(cv.pads.x) + dh;
    let iw = i32((r % cv.out_sizes.w) * cv.geom.y) - i32(cv.pads.y) + dw;
    if (ih < 0 || ih >= i32(cv.in_sizes.z) || iw < 0 || iw >= i32(cv.in_sizes.w)) { return pad; }
    return packed_input_ro[((n * cv.in_sizes.z + u32(ih)) * cv.in_sizes.w + u32(iw)) * cv.pads.z * cv.zp.w + g * cv.zp.w + c4];
}

@compute @workgroup_size(256)
fn convolution_integer_dot4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                            @builtin(local_invocation_index) l: u32) {
    let wg = wid.x + (wid.y + wid.z * nwg.y) * nwg.x;
    if (wg >= cv.gemm2.w) { return; }
    let TP = 16u * RP;
    let TM = 16u * RM;
    let P = cv.gemm.x;
    let kw_words = cv.gemm.y;
    let mg4 = cv.gemm.z;
    let ptile = wg % cv.gemm.w;
    let rest = wg / cv.gemm.w;
    let mtile = rest % cv.gemm2.x;
    let g = rest / cv.gemm2.x;
    let cg4 = cv.zp.w;
    let H = i32(cv.in_sizes.z);
    let W = i32(cv.in_sizes.w);
    let OW = cv.out_sizes.w;
    let OHW = cv.out_sizes.z * OW;
    let pix_words = cv.pads.z * cg4;                 // words per input pixel
    let zx_byte = (u32(input_zp()) & 0xFFu) ^ x_flip();
    let zxp = i32(zx_byte << 24u) >> 24u;            // zx' as an integer

    // This thread stages pixel groups pg + 16*i4 (4 pixels each) at k word kk of every step.
    let kk = l % KC;
    let pg = l / KC;
    let tx = l % 16u;
    let ty = l / 16u;
    var acc: array<array<i32, 8>, 8>;
    for (var i = 0u; i < 8u; i++) {
        for (var j = 0u; j < 8u; j++) { acc[i][j] = 0i; }
    }
    var sum = 0i;   // thread l < TP: sum of x' of pixel l; 128 <= l < 128 + TM: sum of w' of channel l - 128

    for (var k0 = 0u; k0 < kw_words; k0 += KC) {
        // Stage A: RP/4 vec4s of 4 pixels at word k0 + kk.
        let k = k0 + kk;
        let c4 = k % cg4;
        let khw = k / cg4;
        let dh = i32((khw / cv.filt_sizes.w) * cv.geom.z);
        let dw = i32((khw % cv.filt_sizes.w) * cv.geom.w);
        let pad = pad_word(c4, zx_byte);
        for (var i4 = 0u; i4 < RP / 4u; i4++) {
            var v = vec4<u32>(0u);
            if (k < kw_words) {
                // One word per pixel: neighbouring pixels lie G*ceil(Cg/4) words apart.
                let p0 = ptile * TP + (i4 * 16u + pg) * 4u;
                v = vec4<u32>(a_word(p0, g, c4, dh, dw, pad), a_word(p0 + 1u, g, c4, dh, dw, pad),
                              a_word(p0 + 2u, g, c4, dh, dw, pad), a_word(p0 + 3u, g, c4, dh, dw, pad));
            }
            a_sh[kk * (TP / 4u) + i4 * 16u + pg] = v;
        }
        // Stage B: TM/4 vec4s of 4 channels per k word, read straight from packed_filter.
        for (var idx = l; idx < KC * (TM / 4u); idx += 256u) {
            let bk = k0 + idx / (TM / 4u);
            let m4 = mtile * (TM / 4u) + idx % (TM / 4u);
            var v = vec4<u32>(0u);
            if (bk < kw_words && m4 < mg4) { v = packed_filter_ro[(g * kw_words + bk) * mg4 + m4]; }
            b_sh[idx] = v;
        }
        workgroupBarrier();

        if (NEED_SX && l < TP) {
            for (var s = 0u; s < KC; s++) { sum = dot4I8Packed(a_sh[s * (TP / 4u) + l / 4u][l % 4u], ONES) + sum; }
        }
        if (NEED_SW && l >= 128u && l - 128u < TM) {
            let c = l - 128u;
            for (var s = 0u; s < KC; s++) { sum = dot4I8Packed(b_sh[s * (TM / 4u) + c / 4u][c % 4u], ONES) + sum; }
        }
        for (var s = 0u; s < KC; s++) {
            // Unpacked into scalar registers so the unrolled loop indexes no vector dynamically.
            var a: array<u32, 8>;
            var b: array<u32, 8>;
            for (var i4 = 0u; i4 < RP / 4u; i4++) {
                let v = a_sh[s * (TP / 4u) + i4 * 16u + tx];
                a[4u * i4] = v.x; a[4u * i4 + 1u] = v.y; a[4u * i4 + 2u] = v.z; a[4u * i4 + 3u] = v.w;
            }
            for (var j4 = 0u; j4 < RM / 4u; j4++) {
                let v = b_sh[s * (TM / 4u) + j4 * 16u + ty];
                b[4u * j4] = v.x; b[4u * j4 + 1u] = v.y; b[4u * j4 + 2u] = v.z; b[4u * j4 + 3u] = v.w;
            }
            for (var i = 0u; i < RP; i++) {
                for (var j = 0u; j < RM; j++) {
                    acc[i][j] = dot4I8Packed(a[i], b[j]) + acc[i][j];
                }
            }
        }
        workgroupBarrier();
    }

    if (l < TP) { sx_sh[l] = sum; }
    if (l >= 128u && l - 128u < TM) { sw_sh[l - 128u] = sum; }
    workgroupBarrier();

    let kzx = i32(cv.gemm2.y) * zxp;
    let wo = select(128i, 0i, W_SIGNED);
    for (var i = 0u; i < RP; i++) {
        let pl = (i >> 2u) * 64u + tx * 4u + (i & 3u);
        let p = ptile * TP + pl;
        if (p >= P) { continue; }
        let n = p / OHW;
        let q = p % OHW;
        let oh = q / OW;
        let ow = q % OW;
        var sx = 0i;
        if (NEED_SX) { sx = sx_sh[pl]; }
        for (var j = 0u; j < RM; j++) {
            let ml_local = (j >> 2u) * 64u + ty * 4u + (j & 3u);
            let ml = mtile * TM + ml_local;
            if (ml >= cv.pads.w) { continue; }
            let m = g * cv.pads.w + ml;
            let zwp = filter_zp(m) - wo;
            var y = acc[i][j] + kzx * zwp;
            if (NEED_SX) { y -= zwp * sx; }
            if (NEED_SW) { y -= zxp * sw_sh[ml_local]; }
            output[output_index(n, m, oh, ow)] = y;
        }
    }
}

// Benchmark ceiling: 16 independent chains of dot4I8Packed on registers, cv.gemm.x steps each;
// every step of a chain is 4 multiply-adds. The result is stored so nothing is optimised away.
@compute @workgroup_size(256)
fn dot4_ceiling(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) l: u32) {
    let t = (wid.x + (wid.y + wid.z * nwg.y) * nwg.x) * 256u + l;
    var acc: array<i32, 16>;
    var a: array<u32, 16>;
    for (var j = 0u; j < 16u; j++) { a[j] = t * 0x9E3779B9u + j * 0x01020304u; acc[j] = 0i; }
    var b = cv.gemm.y;
    for (var s = 0u; s < cv.gemm.x; s++) {
        for (var j = 0u; j < 16u; j++) { acc[j] = dot4I8Packed(a[j], b) + acc[j]; }
        b += 0x01010101u;
    }
    var total = 0i;
    for (var j = 0u; j < 16u; j++) { total ^= acc[j]; }
    if (t < cv.bases.w) { output[t] = total; }
}

// 8-bit integers to and from f32 without conversion instructions, shared by Resample's kernels
// and ConvolutionInteger's float kernels.
//
// GPUs convert between integers and floats, and round a float to an integer, on a narrower unit
// than their float adds and multiplies. Two exact replacements:
// - A byte b (0-255) becomes the float whose bits are 0x4B000000 | b, which is 2^23 + b exactly
//   (an INT8 byte flipped by 0x80 becomes 2^23 + 128 + its value); the caller subtracts the bias.
// - An f32 v clamped to [lo, hi] (the type's range, |v| <= 255) becomes an integer by adding
//   1.5 * 2^23: the sum lies in [2^23, 2^24), where every float is an integer, so the add rounds v
//   to an integer, and the low byte of the sum's bits is that integer in two's complement. The add
//   rounds to the nearest integer, ties to even, where the adapter's float add rounds to nearest
//   (IEEE 754's default; tested with exact ties on lavapipe and llvmpipe GL by tests/test_resample.py
//   and test_resample3.py, which run on whatever adapters the tests find): the same as round() then
//   a conversion, which DML's INT8 / UINT8 rounding asks for. WGSL lets a correctly rounded add
//   take either neighbour, which is within Resample's documented 8-bit tolerance (1).
// H200: Resample linear uint8 x2 up (resample_rows_pat, 2x32x256x256) 23.2 -> 19.5 us with the
// rounding replaced (bench/EXPERIMENTS.md, session 34). Replacing the byte-to-f32 conversions of
// Resample's windows measured no faster there (23.4 us), so Resample keeps those.

// Bytes as floats 2^23 + b (signed: 2^23 + 128 + the INT8 value), four at a time.
fn biased_bytes(b: vec4<u32>, signed: bool) -> vec4<f32> {
    return bitcast<vec4<f32>>(vec4<u32>(0x4B000000u) | (b ^ vec4<u32>(select(0u, 0x80u, signed))));
}

// v rounded to an integer and saturated to [lo, hi] (INT8: -128, 127; UINT8: 0, 255), as the low
// byte of a word (the integer's two's complement).
fn round_byte(v: f32, lo: f32, hi: f32) -> u32 {
    return bitcast<u32>(clamp(v, lo, hi) + 12582912.0) & 0xFFu;
}

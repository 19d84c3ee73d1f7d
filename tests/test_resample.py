"""Resample / Resample1 / Resample2 (spec section 4) against the numpy reference and ONNX Resize.

Every GPU run goes through ``run_checked`` (poisoned output between guard bands, twice).
Nearest is compared bit for bit. Linear is compared within LINEAR_TOL: the shader evaluates the
same float32 expression as the reference in the same order, but a GPU compiler may fuse a multiply
and an add (one rounding instead of two), and pack2x16float may round float16 either way.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dmlwgsl.ops.resample import (
    C_LANES_MIN,
    KERNELS,
    LINEAR_TOLERANCE,
    AxisDirection,
    InterpolationMode,
    OnnxResizeUnsupported,
    Resample1Desc,
    Resample2Desc,
    ResampleDesc,
    ResampleOperator,
    compile_resample,
    onnx_resize_to_resample,
    plan_resample,
    resample,
)
from dmlwgsl.plan import Capabilities, PlanError
from dmlwgsl.reference import resample as ref
from dmlwgsl.reference.tensors import read_tensor, tensor_bytes
from dmlwgsl.tensor import DataType, DmlValidationError, TensorDesc
from dmlwgsl.testing import GUARD, run_checked, strided_desc

F32, F16, I8, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8
LINEAR_TOL = LINEAR_TOLERANCE  # (atol, reason) by data type; values in the tests lie in [-8, 8]
RULE = {None: "half_up", AxisDirection.DECREASING: "floor", AxisDirection.INCREASING: "ceil"}


def values(dt: DataType, sizes, rng) -> np.ndarray:
    """Real values of the type: floats are multiples of 1/64 in [-8, 8) (no denormals)."""
    if dt in (F32, F16):
        return (rng.integers(-512, 512, size=sizes) / 64).astype(dt.numpy_dtype)
    info = np.iinfo(dt.numpy_dtype)
    return rng.integers(info.min, info.max + 1, size=sizes).astype(dt.numpy_dtype)


def check_gpu(
    device,
    x,
    out_desc: TensorDesc,
    mode,
    scales,
    in_off,
    out_off,
    direction=None,
    *,
    in_desc: TensorDesc | None = None,
    expected=None,
) -> np.ndarray:
    """Run Resample1 (direction None) or Resample2 on ``x`` under run_checked; compare with the
    reference (or ``expected``). Returns the output."""
    x = np.asarray(x)
    in_desc = in_desc or TensorDesc(DataType.from_numpy(x.dtype), x.shape)
    raw = tensor_bytes(in_desc, x)
    x = read_tensor(raw, in_desc)  # the logical values (a broadcast input repeats one of them)
    mode = InterpolationMode.parse(mode)
    if direction is None:
        desc = Resample1Desc(in_desc, out_desc, mode, scales, in_off, out_off)
    else:
        desc = Resample2Desc(in_desc, out_desc, mode, direction, scales, in_off, out_off)
    op = compile_resample(desc, device=device)
    if expected is None:
        name = "nearest" if mode == InterpolationMode.NEAREST_NEIGHBOR else "linear"
        expected = ref.resample(x, out_desc.sizes, name, scales, in_off, out_off, RULE[direction])
    expected = np.asarray(expected).astype(out_desc.data_type.numpy_dtype)
    tol = {}
    if mode == InterpolationMode.LINEAR:
        atol, why = LINEAR_TOL[in_desc.data_type]
        tol = {"atol": atol, "why": why}
    return run_checked(
        device, lambda ins, out: op(ins["input"], out), {"input": (in_desc, raw)}, out_desc, expected, **tol
    )


def nearest_1d(device, n_in, n_out, scale, in_off=0.5, out_off=-0.5, direction=None):
    """Indices that 1-D nearest picks (input = arange)."""
    x = np.arange(n_in, dtype=np.float32)
    y = check_gpu(device, x, TensorDesc(F32, (n_out,)), "nearest", (scale,), (in_off,), (out_off,), direction)
    return y.astype(int).tolist()


# -- spec worked examples (4.4) ------------------------------------------------------------------
def test_spec_linear_example(device):
    """Spec 4.4: 4x4 -> 8x8 linear with the default offsets (ONNX half_pixel)."""
    x = np.array([[0, 1, 2, 3], [0, 1, 2, 3], [12, 13, 14, 15], [12, 13, 14, 15]], np.float32)
    desc = ResampleDesc(TensorDesc(F32, (4, 4)), TensorDesc(F32, (8, 8)), "linear", (2.0, 2.0))
    op = compile_resample(desc, device=device)
    expected = ref.resample(x, (8, 8), "linear", (2, 2), (0.5, 0.5), (-0.5, -0.5))
    np.testing.assert_array_equal(expected[0], [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3])
    np.testing.assert_array_equal(expected[3], [3, 3.25, 3.75, 4.25, 4.75, 5.25, 5.75, 6])
    np.testing.assert_array_equal(expected[4], [9, 9.25, 9.75, 10.25, 10.75, 11.25, 11.75, 12])
    raw = x.view(np.uint8).reshape(-1)
    run_checked(
        device, lambda ins, out: op(ins["input"], out), {"input": (desc.input, raw)}, desc.output, expected
    )  # exact: every weight and product here is a short binary fraction


def test_webnn_nearest_downsample_ties_up(device):
    """4x6 -> 2x3 nearest with Resample v0: ties go UP, the bottom-right of each 2x2 block
    (Chromium WebNN's DML output, spec 4.3). DML-unconfirmed."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    desc = ResampleDesc(TensorDesc(F32, (4, 6)), TensorDesc(F32, (2, 3)), "nearest", (0.5, 0.5))
    op = compile_resample(desc, device=device)
    expected = np.array([[7, 9, 11], [19, 21, 23]], np.float32)
    run_checked(
        device,
        lambda ins, out: op(ins["input"], out),
        {"input": (desc.input, x.view(np.uint8).reshape(-1))},
        desc.output,
        expected,
    )


# -- 8-bit linear results: rounding ties go to even ------------------------------------------------
@pytest.mark.parametrize("dt", [DataType.UINT8, DataType.INT8])
@pytest.mark.parametrize("layout", ["packed", "nhwc"])
def test_linear_8bit_ties_round_to_even(device, rng, dt, layout):
    """Bilinear x2 (half-pixel) weighs its four taps 1/16, 3/16, 3/16, 9/16: every float32 sum is
    exact, and about one output in 16 is an exact tie (k + 0.5). Every kernel that can run the
    description (they round through wgsl/common/bytes.wgsl's round_byte, an add of 1.5 * 2^23)
    must give the reference's round-half-to-even result bit for bit, ties and negative ties
    included; the kernels that must be among them are named."""
    sizes, out_sizes, r = (1, 3, 16, 32), (1, 3, 32, 64), 4
    in_desc = TensorDesc(dt, sizes) if layout == "packed" else strided_desc(dt, sizes, "nhwc")
    out_desc = TensorDesc(dt, out_sizes)
    args = (out_sizes, "linear", (1.0, 1.0, 2.0, 2.0), (0.5,) * r, (-0.5,) * r)
    x = values(dt, sizes, rng)
    exact = ref.resample(x.astype(np.float32), *args)
    assert np.count_nonzero(exact - np.floor(exact) == 0.5) > 200, "the case has too few exact ties"
    assert np.count_nonzero((exact - np.floor(exact) == 0.5) & (np.floor(exact) % 2 == 0)) > 50
    expected = ref.resample(x, *args)
    desc = Resample1Desc(in_desc, out_desc, "linear", args[2], args[3], args[4])
    inputs = {"input": (in_desc, tensor_bytes(in_desc, x))}
    ran = []
    for kernel in (None, *KERNELS):
        try:
            op = compile_resample(desc, device=device, kernel=kernel)
        except PlanError:
            continue
        run_checked(device, lambda ins, out: op(ins["input"], out), inputs, out_desc, expected)
        ran.append(op.plan.kernels[-1])
    assert {"resample_packed", "resample_atomic", "resample_rows_byte", "resample_rows_pat"} <= set(ran), ran


# -- ties (DML-unconfirmed for Resample/Resample1, spec 4.3) -------------------------------------
def test_tie_scale_half(device):
    # x = 2o + 0.5: every output lands on a tie.
    assert nearest_1d(device, 4, 2, 0.5) == [1, 3]
    assert nearest_1d(device, 4, 2, 0.5, direction=AxisDirection.DECREASING) == [0, 2]
    assert nearest_1d(device, 4, 2, 0.5, direction=AxisDirection.INCREASING) == [1, 3]


def test_tie_scale_one_and_a_half(device):
    # x = (o + 0.5) / 1.5 - 0.5 = [-1/6, 0.5, 7/6]
    assert nearest_1d(device, 2, 3, 1.5) == [0, 1, 1]
    assert nearest_1d(device, 2, 3, 1.5, direction=AxisDirection.DECREASING) == [0, 0, 1]
    assert nearest_1d(device, 2, 3, 1.5, direction=AxisDirection.INCREASING) == [0, 1, 1]


def test_tie_scale_three(device):
    assert nearest_1d(device, 3, 9, 3.0) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert nearest_1d(device, 3, 9, 3.0, direction=AxisDirection.DECREASING) == [0, 0, 0, 0, 1, 1, 1, 2, 2]
    assert nearest_1d(device, 3, 9, 3.0, direction=AxisDirection.INCREASING) == [0, 0, 1, 1, 1, 2, 2, 2, 2]


def test_offsets_landing_on_half(device):
    # scale 1, InputPixelOffset 0.5, OutputPixelOffset 0: x = o - 0.5, a tie everywhere.
    assert nearest_1d(device, 5, 5, 1.0, 0.5, 0.0) == [0, 1, 2, 3, 4]
    assert nearest_1d(device, 5, 5, 1.0, 0.5, 0.0, AxisDirection.DECREASING) == [0, 0, 1, 2, 3]
    assert nearest_1d(device, 5, 5, 1.0, 0.5, 0.0, AxisDirection.INCREASING) == [0, 1, 2, 3, 4]
    # OutputPixelOffset 0.5 with scale 2: x = (o - 0.5) / 2 - 0.5 = o/2 - 0.75; ties at o = 2.5 + ... none,
    # but o=1 gives -0.25 and o=3 gives 0.75.
    assert nearest_1d(device, 3, 6, 2.0, 0.5, 0.5) == [0, 0, 0, 1, 1, 2]


def test_resample1_equals_resample2_decreasing_shifted_input_offset():
    """Spec 4.3's reading: Resample1 nearest == Resample2 DECREASING with InputPixelOffset - 0.5
    (exact here: every coordinate is a short binary fraction)."""
    x = ref.input_coordinates(16, 4.0, 0.5, -0.5)
    xs = ref.input_coordinates(16, 4.0, 0.0, -0.5)
    np.testing.assert_array_equal(ref.nearest_indices(x, 4, "half_up"), ref.nearest_indices(xs, 4, "floor"))


# -- axes, ranks, crop and clamp -----------------------------------------------------------------
def test_scales_on_batch_and_channel_axes(device, rng):
    x = values(F32, (2, 4, 3, 3), rng)
    y = check_gpu(device, x, TensorDesc(F32, (4, 2, 3, 3)), "nearest", (2.0, 0.5, 1.0, 1.0), (0.5,) * 4, (-0.5,) * 4)
    np.testing.assert_array_equal(y, x[[0, 0, 1, 1]][:, [1, 3]])
    check_gpu(device, x, TensorDesc(F32, (3, 6, 3, 3)), "linear", (1.5, 1.5, 1.0, 1.0), (0.5,) * 4, (-0.5,) * 4)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_ranks(device, rng, rank, mode):
    in_sizes = (2, 3, 4, 5)[4 - rank :]
    out_sizes = (3, 2, 7, 9)[4 - rank :]
    scales = tuple(o / i for o, i in zip(out_sizes, in_sizes))
    check_gpu(
        device, values(F32, in_sizes, rng), TensorDesc(F32, out_sizes), mode, scales, (0.5,) * rank, (-0.5,) * rank
    )


def test_clamp_when_scale_too_small(device):
    # scale 1 into a bigger output: the last pixel repeats (no constant fill).
    assert nearest_1d(device, 4, 6, 1.0) == [0, 1, 2, 3, 3, 3]
    x = np.arange(4, dtype=np.float32)
    y = check_gpu(device, x, TensorDesc(F32, (6,)), "linear", (1.0,), (0.5,), (-0.5,))
    np.testing.assert_array_equal(y, [0, 1, 2, 3, 3, 3])


def test_crop_when_scale_too_big(device):
    # scale 2 into a smaller output than 2x: the rest is cropped.
    assert nearest_1d(device, 4, 3, 2.0) == [0, 0, 1]
    x = np.arange(4, dtype=np.float32)
    y = check_gpu(device, x, TensorDesc(F32, (3,)), "linear", (2.0,), (0.5,), (-0.5,))
    np.testing.assert_array_equal(y, [0, 0.25, 0.75])


def test_huge_scale_and_extreme_offsets(device, rng):
    """FLT_MAX scale (ORT's align_corners for size 1) and offsets far outside: indices clamp."""
    x = values(F32, (3, 4), rng)
    flt_max = float(np.finfo(np.float32).max)
    for mode in ("nearest", "linear"):
        check_gpu(device, x, TensorDesc(F32, (5, 2)), mode, (flt_max, 1e-30), (0.0, 1e6), (0.0, -1e6))


# -- layouts and types -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "in_pattern,out_pattern", [("nhwc", "packed"), ("padded", "nhwc"), ("broadcast", "padded"), ("window", "window")]
)
@pytest.mark.parametrize("dt", [F32, F16, U8])
def test_strided(device, rng, dt, in_pattern, out_pattern):
    in_desc = strided_desc(dt, (2, 3, 4, 5), in_pattern)
    out_desc = strided_desc(dt, (2, 3, 7, 3), out_pattern, output=True)
    for mode in ("nearest", "linear"):
        check_gpu(
            device,
            values(dt, (2, 3, 4, 5), rng),
            out_desc,
            mode,
            (1, 1, 1.75, 0.6),
            (0.5,) * 4,
            (-0.5,) * 4,
            in_desc=in_desc,
        )


def test_float16_without_shader_f16(device, rng):
    """float16 runs on every adapter; the GL adapter has no shader-f16 (u32 words packed by hand)."""
    if device.info.get("backend_type") == "OpenGL":
        assert "shader-f16" not in device.features
    x = values(F16, (3, 5, 6), rng)
    for mode in ("nearest", "linear"):
        check_gpu(device, x, TensorDesc(F16, (3, 9, 11)), mode, (1.0, 1.8, 11 / 6), (0.5,) * 3, (-0.5,) * 3)


@pytest.mark.parametrize("dt", [I8, U8])
def test_int8_uint8(device, rng, dt):
    x = values(dt, (2, 7, 9), rng)
    check_gpu(device, x, TensorDesc(dt, (2, 13, 4)), "nearest", (1.0, 13 / 7, 4 / 9), (0.5,) * 3, (-0.5,) * 3)
    check_gpu(device, x, TensorDesc(dt, (2, 13, 4)), "linear", (1.0, 13 / 7, 4 / 9), (0.5,) * 3, (-0.5,) * 3)


@pytest.mark.parametrize("dt", [F32, F16, I8, U8])
def test_wide_rows_every_block_alignment(device, rng, dt):
    """Rows of 37 outputs: the shader's whole-block fast path (16 bytes in one row) meets rows at
    every offset, plus the blocks that straddle two rows."""
    x = values(dt, (3, 20), rng)
    for mode in ("nearest", "linear"):
        check_gpu(device, x, TensorDesc(dt, (3, 37)), mode, (1.0, 37 / 20), (0.5, 0.5), (-0.5, -0.5))


@pytest.mark.parametrize("dt", [F32, F16, I8, U8], ids=lambda d: d.name.lower())
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_packed_blocks_across_rows(device, rng, dt, mode):
    """resample_packed's 16-byte blocks that hold the end of one row and the start of the next
    (rows of a block or more, not whole blocks): built from the row's last block and the next
    row's first; the next row may start a new plane, channel or batch. Rows shorter than a block
    (three rows or more in a block) and the tensor's partial first and last blocks go element by
    element. Output placed at every element offset of a word, under poison and guards."""
    epb = 16 // dt.size_in_bytes
    cases = [  # (in sizes, out sizes): rows of epb + 1 .. 4 epb + 3 elements, and shorter than a block
        ((2, 3, 3, 7), (2, 3, 2, epb + 1)),
        ((1, 2, 5, 9), (2, 2, 7, 2 * epb + 3)),
        ((3, 7), (5, 4 * epb + 3)),
        ((2, 2, 3, 5), (2, 2, 4, epb - 1)),
    ]
    for in_sizes, out_sizes in cases:
        in_desc, out_desc = TensorDesc(dt, in_sizes), TensorDesc(dt, out_sizes)
        r = len(in_sizes)
        scales = tuple(o / i for o, i in zip(out_sizes, in_sizes))
        desc = Resample1Desc(in_desc, out_desc, mode, scales, (0.5,) * r, (-0.5,) * r)
        op = compile_resample(desc, device=device, kernel="resample_packed")
        x = values(dt, in_sizes, rng)
        expected = ref.resample(x, out_sizes, mode, scales, (0.5,) * r, (-0.5,) * r)
        tol = {"atol": LINEAR_TOLERANCE[dt][0], "why": LINEAR_TOLERANCE[dt][1]} if mode == "linear" else {}
        inputs = {"input": (in_desc, tensor_bytes(in_desc, x))}
        for k in range(4 // dt.size_in_bytes):
            run_checked(
                device,
                lambda ins, out: op(ins["input"], out),
                inputs,
                out_desc,
                expected.astype(dt.numpy_dtype),
                output_offset=GUARD + k * dt.size_in_bytes,
                **tol,
            )


def test_integer_linear_rounds_half_to_even(device):
    # x = o + 0.5: every output is the mean of two neighbours, a .5 tie for odd sums.
    u = np.array([0, 1, 2, 3, 4, 6], np.uint8)
    check_gpu(device, u, TensorDesc(U8, (5,)), "linear", (1.0,), (-0.5,), (0.0,), expected=[0, 2, 2, 4, 5])
    i = np.array([-1, -2, -3, -4, 127, 126], np.int8)
    check_gpu(device, i, TensorDesc(I8, (5,)), "linear", (1.0,), (-0.5,), (0.0,), expected=[-2, -2, -4, 62, 126])


# -- row walk (resample_rows) ----------------------------------------------------------------------
ROW_CASES = [  # (in sizes, out sizes, scales): H up / down / crop / clamp / one tap, W up / down / one tap
    ((2, 3, 5, 6), (2, 3, 11, 16), (1, 1, 2.2, 16 / 6)),
    ((1, 2, 7, 9), (1, 2, 3, 8), (1, 1, 3 / 7, 8 / 9)),
    ((1, 2, 4, 8), (1, 2, 9, 8), (1, 1, 1.0, 1.0)),
    ((2, 1, 6, 5), (2, 1, 6, 24), (1, 1, 1.0, 3.0)),
    ((3, 5, 8), (3, 13, 16), (1, 13 / 5, 2.0)),
    ((4, 16), (9, 16), (2.0, 1.5)),
]
#: ROW_CASES for 8-bit nearest, whose row walk stores 16 outputs a thread: output rows of whole
#: 16-element groups, the same mapping kinds.
BYTE_ROW_CASES = [
    ((2, 3, 5, 6), (2, 3, 11, 16), (1, 1, 2.2, 16 / 6)),
    ((1, 2, 7, 9), (1, 2, 3, 16), (1, 1, 3 / 7, 16 / 9)),
    ((1, 2, 4, 16), (1, 2, 9, 16), (1, 1, 1.0, 1.0)),
    ((2, 1, 6, 5), (2, 1, 6, 32), (1, 1, 1.0, 3.0)),
    ((3, 5, 8), (3, 13, 16), (1, 13 / 5, 2.0)),
    ((4, 48), (9, 16), (2.0, 0.5)),
]


#: (mode, type, kernel) of the row walks' forms
ROW_WALK_FORMS = [
    ("nearest", F32, "resample_rows"),
    ("nearest", F16, "resample_rows"),
    ("linear", F32, "resample_rows"),
    ("linear", F16, "resample_rows"),
    ("linear", F16, "resample_rows_half"),
    ("linear", U8, "resample_rows_byte"),
    ("linear", I8, "resample_rows_byte"),
    ("nearest", U8, "resample_rows"),
    ("nearest", I8, "resample_rows"),
]


@pytest.mark.parametrize("mode,dt,kernel", ROW_WALK_FORMS)
def test_row_walk(device, rng, dt, mode, kernel):
    """resample_rows / resample_rows_half (one thread per block column walking a band of rows,
    W-interpolated input rows cached) against the reference kernel resample_packed: bands of 3
    rows (the last one short), every H and W mapping kind, strided inputs; an output not on a
    16-byte boundary gets a plan of its own (resample_packed)."""
    # (run_checked sizes its input buffer to whole words: 8-bit inputs take an offset of 4 elements)
    in_off = 16 + (dt.size_in_bytes if dt.size_in_bytes > 1 else 4)
    for in_sizes, out_sizes, scales in (
        BYTE_ROW_CASES if kernel == "resample_rows" and dt.size_in_bytes == 1 else ROW_CASES
    ):
        r = len(in_sizes)
        out_desc = TensorDesc(dt, out_sizes)
        for pattern in ("packed", "padded", "broadcast", "window"):
            in_desc = strided_desc(dt, in_sizes, pattern)
            desc = Resample1Desc(in_desc, out_desc, mode, scales, (0.5,) * r, (-0.5,) * r)
            op = compile_resample(desc, device=device, kernel=kernel, band_rows=3)
            assert op.plan.kernels == [kernel]
            x = values(dt, in_sizes, rng)
            expected = ref.resample(
                read_tensor(tensor_bytes(in_desc, x), in_desc), out_sizes, mode, scales, (0.5,) * r, (-0.5,) * r
            ).astype(dt.numpy_dtype)
            packed = compile_resample(desc, device=device, kernel="resample_packed")
            for k in (op, packed):
                run_checked(
                    device,
                    lambda ins, out, k=k: k(ins["input"], out),
                    {"input": (in_desc, tensor_bytes(in_desc, x))},
                    out_desc,
                    expected,
                    **({"atol": LINEAR_TOL[dt][0], "why": LINEAR_TOL[dt][1]} if mode == "linear" else {}),
                )
        desc = Resample1Desc(TensorDesc(dt, in_sizes), out_desc, mode, scales, (0.5,) * r, (-0.5,) * r)
        op = compile_resample(desc, device=device, kernel=kernel, band_rows=3)
        expected = ref.resample(x, out_sizes, mode, scales, (0.5,) * r, (-0.5,) * r).astype(dt.numpy_dtype)
        tol = {"atol": LINEAR_TOL[dt][0], "why": LINEAR_TOL[dt][1]} if mode == "linear" else {}
        run_checked(
            device,
            lambda ins, out: op(ins["input"], out),
            {"input": (desc.input, x.view(np.uint8).reshape(-1))},
            out_desc,
            expected,
            input_offset=in_off,  # odd element offset: the other row parity
            **tol,
        )
        run_checked(
            device,
            lambda ins, out: op(ins["input"], out),
            {"input": (desc.input, x.view(np.uint8).reshape(-1))},
            out_desc,
            expected,
            output_offset=GUARD + dt.size_in_bytes,
            input_offset=in_off,
            **tol,
        )
        assert any(":resample_packed|" in k for k in op.cache_keys), op.cache_keys


def check_layout(device, rng, mode, dt, kernel, in_desc, out_sizes, *, band_rows=None, offsets=(16,)):
    """Compile ``kernel`` (None: the plan's choice) for ``in_desc`` resampled to ``out_sizes`` at the
    size ratios (half-pixel offsets), run it with the input at each of ``offsets`` bytes into its
    buffer, and check it against the reference: exact for nearest, within the linear tolerance for
    linear, under poison and guards. Returns the operator."""
    in_sizes = in_desc.sizes
    r = len(in_sizes)
    scales = tuple(o / i for o, i in zip(out_sizes, in_sizes))
    out_desc = TensorDesc(dt, out_sizes)
    tol = {"atol": LINEAR_TOL[dt][0], "why": LINEAR_TOL[dt][1]} if mode == "linear" else {}
    desc = Resample1Desc(in_desc, out_desc, mode, scales, (0.5,) * r, (-0.5,) * r)
    op = compile_resample(desc, device=device, kernel=kernel, band_rows=band_rows)
    raw = tensor_bytes(in_desc, values(dt, in_sizes, rng))
    expected = ref.resample(read_tensor(raw, in_desc), out_sizes, mode, scales, (0.5,) * r, (-0.5,) * r)
    for off in offsets:
        run_checked(
            device,
            lambda ins, out: op(ins["input"], out),
            {"input": (in_desc, raw)},
            out_desc,
            expected.astype(dt.numpy_dtype),
            input_offset=off,
            **tol,
        )
    return op


@pytest.mark.parametrize(
    "mode,dt,kernel,in_sizes,out_sizes",
    [
        ("nearest", F32, "resample_rows", (2, 3, 7, 9), (2, 3, 14, 18)),
        ("linear", F32, "resample_rows", (2, 3, 7, 9), (2, 3, 13, 23)),
        ("linear", F32, "resample_rows", (1, 2, 9, 255), (1, 2, 18, 510)),
        ("nearest", F16, "resample_rows", (2, 2, 5, 9), (2, 2, 10, 18)),
        ("linear", F16, "resample_rows", (2, 2, 5, 9), (2, 2, 10, 22)),
        ("linear", F16, "resample_rows_half", (2, 2, 5, 9), (2, 2, 11, 18)),
        ("nearest", U8, "resample_rows", (2, 2, 5, 10), (2, 2, 10, 20)),
    ],
)
def test_row_walk_ragged_rows(device, rng, mode, dt, kernel, in_sizes, out_sizes):
    """Output rows of whole words that are not whole groups of a thread's outputs (RAGGED): a
    row's last thread stores only its words inside the row; the plan takes the row walk unasked
    where it would for whole groups (on CPU adapters always). Strided inputs, bands of 3 rows;
    exact (nearest) or within the linear tolerance, under poison and guards. Rows that are not
    whole words take ENDS instead (test_row_walk_ends)."""
    r = len(in_sizes)
    scales = tuple(o / i for o, i in zip(out_sizes, in_sizes))
    out_desc = TensorDesc(dt, out_sizes)
    for pattern in ("packed", "padded", "broadcast"):
        in_desc = strided_desc(dt, in_sizes, pattern)
        op = check_layout(device, rng, mode, dt, kernel, in_desc, out_sizes, band_rows=3)
        assert op.plan.kernels == [kernel] and op.plan.steps[0].constants_dict.get("RAGGED") == 1
    if dt != U8:
        # unasked, the ragged rows walk where rows of whole groups (the same scales, W rounded up to
        # a group) walk: on lavapipe both do; a GPU's plan keeps nearest float32 on resample_packed
        desc = Resample1Desc(TensorDesc(dt, in_sizes), out_desc, mode, scales, (0.5,) * r, (-0.5,) * r)
        group = 16 // dt.size_in_bytes if kernel == "resample_rows" else 4
        whole = TensorDesc(dt, (*out_sizes[:3], out_sizes[3] + -out_sizes[3] % group))
        whole_desc = Resample1Desc(TensorDesc(dt, in_sizes), whole, mode, scales, (0.5,) * r, (-0.5,) * r)
        walks = compile_resample(whole_desc, device=device).plan.kernels[0].startswith("resample_rows")
        assert compile_resample(desc, device=device).plan.kernels[0].startswith("resample_rows") == walks
        assert walks or not Capabilities.from_device(device).is_cpu


@pytest.mark.parametrize("mode, dt, kernel", [f for f in ROW_WALK_FORMS if f[1] != F32])  # 8/16-bit forms
def test_row_walk_ends(device, rng, mode, dt, kernel):
    """The row walks on 8/16-bit output rows that are not whole words (ENDS): rows of 1-203
    elements starting anywhere in a word, each thread's outputs stored where they lie (1, 2 or 4
    words of them), the words shared with a neighbour or the next row merged with atomics. Packed,
    padded and broadcast inputs, bands of 3 rows; exact (nearest) or within the linear tolerance,
    under poison and guards. Every adapter's plan takes resample_rows_byte there (lavapipe:
    1.37-3.47x resample_packed; H200: 0.86-4.88x, geometric mean 2.24x)."""
    cases = [
        ((2, 3, 7, 22), (2, 3, 13, 66)),
        ((1, 2, 9, 35), (1, 2, 17, 29)),
        ((2, 1, 4, 5), (2, 1, 9, 7)),
        ((1, 2, 3, 3), (1, 2, 5, 1)),
        ((1, 1, 6, 101), (1, 1, 5, 203)),
    ]
    for in_sizes, out_sizes in cases:
        if dt.size_in_bytes == 2 and out_sizes[3] % 2 == 0:
            out_sizes = (*out_sizes[:3], out_sizes[3] + 1)  # (16-bit rows off words: odd lengths)
        for pattern in ("packed", "padded", "broadcast"):
            in_desc = strided_desc(dt, in_sizes, pattern)
            op = check_layout(device, rng, mode, dt, kernel, in_desc, out_sizes, band_rows=3)
            assert op.plan.steps[0].constants_dict.get("ENDS") == 1
    if kernel != "resample_rows_byte":
        return
    r = 4
    desc = Resample1Desc(
        TensorDesc(dt, (2, 3, 7, 22)),
        TensorDesc(dt, (2, 3, 13, 66)),
        "linear",
        (1, 1, 13 / 7, 3),
        (0.5,) * r,
        (-0.5,) * r,
    )
    for profile in ("lavapipe", "h100"):
        plan = plan_resample(desc, Capabilities.profile(profile))
        assert plan.kernels == ["resample_rows_byte"] and "atomics" in plan.why
    assert plan_resample(desc, Capabilities.profile("h100"), kernel="resample_rows_byte").kernels == [
        "resample_rows_byte"
    ]


@pytest.mark.parametrize(
    "mode, dt, kernel, in_sizes, out_sizes",
    [
        ("nearest", F32, "resample_rows", (2, 9, 5, 6), (2, 9, 10, 12)),
        ("nearest", U8, "resample_rows", (1, 12, 7, 8), (1, 12, 14, 32)),
        ("linear", F32, "resample_rows", (2, 8, 6, 10), (2, 8, 9, 12)),
        ("linear", F16, "resample_rows", (1, 11, 5, 8), (1, 11, 10, 16)),
        ("linear", F16, "resample_rows_half", (2, 8, 6, 6), (2, 8, 3, 12)),
        ("linear", I8, "resample_rows_byte", (1, 10, 5, 8), (1, 10, 10, 16)),
        ("linear", F32, "resample_rows", (2, 9, 5, 9), (2, 9, 10, 18)),  # RAGGED too
    ],
)
def test_row_walk_channel_lanes(device, rng, mode, dt, kernel, in_sizes, out_sizes):
    """A channels-fastest (NHWC) input: the row walks put the channels in the lanes (C_LANES; a GPU's
    plan does so unasked where the planes do not grow; any adapter where the walk is requested, at any
    scale). Every thread's block lands in
    its own plane: exact (nearest) or within the linear tolerance, under poison and guards; a packed
    input keeps the plain walk."""
    r = len(in_sizes)
    scales = tuple(o / i for o, i in zip(out_sizes, in_sizes))
    out_desc = TensorDesc(dt, out_sizes)
    op = check_layout(device, rng, mode, dt, kernel, strided_desc(dt, in_sizes, "nhwc"), out_sizes, band_rows=2)
    assert op.plan.kernels == [kernel] and op.plan.steps[0].constants_dict.get("C_LANES") == 1
    assert "channels in the lanes" in op.plan.why
    packed = Resample1Desc(TensorDesc(dt, in_sizes), out_desc, mode, scales, (0.5,) * r, (-0.5,) * r)
    assert "C_LANES" not in compile_resample(packed, device=device, kernel=kernel).plan.steps[0].constants_dict


@pytest.mark.parametrize("dt", [F32, F16, I8, U8], ids=lambda d: d.name.lower())
@pytest.mark.parametrize(
    "mode, in_sizes, out_sizes",
    [
        ("nearest", (2, 5, 6, 8), (2, 5, 12, 16)),
        ("linear", (1, 40, 7, 12), (1, 40, 14, 20)),
        ("linear", (2, 3, 9, 4), (2, 3, 5, 8)),  # C = 3 (an RGB image), one axis down
        ("nearest", (1, 33, 4, 4), (1, 33, 12, 8)),  # more channels than a tile's 32
        ("nearest", (2, 5, 6, 7), (2, 5, 12, 14)),  # odd widths: 8/16-bit workspace rows inside words
        ("linear", (1, 37, 3, 9), (1, 37, 6, 13)),
    ],
)
def test_transposed_input(device, rng, dt, mode, in_sizes, out_sizes):
    """resample_transpose: a channels-fastest input (NHWC; and at an odd element offset in its
    buffer, the plan of that placement: the transpose loads words, not 16-byte vectors) moved to a
    packed workspace, then the plan for a packed input reading it; exact (nearest) or within the
    linear tolerance, under poison and guards."""
    in_desc = strided_desc(dt, in_sizes, "nhwc")
    op = check_layout(
        device, rng, mode, dt, "resample_transpose", in_desc, out_sizes, offsets=(16, 16 + dt.size_in_bytes)
    )
    assert op.plan.kernels[0] == "resample_transpose" and len(op.plan.kernels) == 2
    assert op.plan.steps[1].bindings_dict["packed_input"] == "input" and "packed workspace" in op.plan.why


def test_where_transpose_cannot_run(device):
    cases = [
        (strided_desc(F32, (1, 4, 6, 8), "packed"), "not its fastest dimension"),
    ]
    for in_desc, rule in cases:
        out = TensorDesc(in_desc.data_type, (1, 4, 12, 14 if in_desc.sizes[3] == 7 else 16))
        desc = Resample1Desc(in_desc, out, "nearest", (1, 1, 2, 2), (0.5,) * 4, (-0.5,) * 4)
        with pytest.raises(PlanError, match=f"resample_transpose cannot run this description: .*{rule}"):
            compile_resample(desc, device=device, kernel="resample_transpose")


def test_transpose_plan_on_a_gpu():
    """The h100 profile transposes an NHWC input first where the planes grow (x1.5), keeps channel
    lanes where they shrink; lavapipe does neither unasked. At x2 a float32 input takes the pattern
    walk with channels in the lanes instead (4 outputs a thread)."""
    nhwc = strided_desc(F32, (2, 32, 64, 64), "nhwc")
    x2 = Resample1Desc(nhwc, TensorDesc(F32, (2, 32, 128, 128)), "nearest", (1, 1, 2, 2), (0.5,) * 4, (-0.5,) * 4)
    p2 = plan_resample(x2, Capabilities.profile("h100"))
    assert p2.kernels == ["resample_rows_pat"] and p2.steps[0].constants_dict["PAT_CL"] == 4
    assert "not a transpose" in p2.why
    up = Resample1Desc(nhwc, TensorDesc(F32, (2, 32, 96, 96)), "nearest", (1, 1, 1.5, 1.5), (0.5,) * 4, (-0.5,) * 4)
    p = plan_resample(up, Capabilities.profile("h100"))
    assert p.kernels == ["resample_transpose", "resample_packed"]
    assert dict(p.workspace) == {"packed_input": 2 * 32 * 64 * 64 * 4}
    assert dict(p.details)["table_input"] == "packed"
    u = p.steps[0].uniforms_dict
    assert (u["r_len"], u["k_len"], u["in_k"], u["out_k"], u["in_r1"]) == (64, 32, 1, 64 * 64, 32)
    assert p.steps[0].constants_dict["TP_VEC"] == 1
    assert "resample_transpose" not in plan_resample(up, Capabilities.profile("lavapipe")).kernels


def test_channel_lanes_plan_on_a_gpu():
    """The h100 profile takes a row walk with channel lanes for NHWC inputs of at least C_LANES_MIN
    channels whose planes do not grow (nearest too, which otherwise builds 16-byte blocks); where
    they grow, and on lavapipe, the plan stays as it was."""
    nhwc = strided_desc(F32, (2, 32, 64, 64), "nhwc")
    h100, lavapipe = Capabilities.profile("h100"), Capabilities.profile("lavapipe")
    for mode in ("nearest", "linear"):
        down = Resample1Desc(nhwc, TensorDesc(F32, (2, 32, 32, 32)), mode, (1, 1, 0.5, 0.5), (0.5,) * 4, (-0.5,) * 4)
        gpu = plan_resample(down, h100)
        assert gpu.kernels == ["resample_rows"] and gpu.steps[0].constants_dict["C_LANES"] == 1
        assert "C_LANES" not in plan_resample(down, lavapipe).steps[0].constants_dict
        up = Resample1Desc(nhwc, TensorDesc(F32, (2, 32, 128, 128)), mode, (1, 1, 2, 2), (0.5,) * 4, (-0.5,) * 4)
        assert "C_LANES" not in plan_resample(up, h100).steps[0].constants_dict
        few = strided_desc(F32, (2, C_LANES_MIN - 1, 64, 64), "nhwc")
        d2 = Resample1Desc(
            few, TensorDesc(F32, (2, C_LANES_MIN - 1, 32, 32)), mode, (1, 1, 0.5, 0.5), (0.5,) * 4, (-0.5,) * 4
        )
        assert "C_LANES" not in plan_resample(d2, h100).steps[0].constants_dict


@pytest.mark.parametrize(
    "dt, v",
    [(F32, 4), (F32, 5), (F32, 6), (F32, 8), (F16, 4), (F16, 6), (F16, 8), (F16, 10), (F16, 12), (F16, 16), (I8, 4)]
    + [(U8, 8), (I8, 12), (U8, 16)],
)
def test_row_walk_pattern(device, rng, dt, v):
    """resample_rows_pat (linear, every thread's W taps at the same places of its input words): W
    scales that have such a pattern with v outputs per thread, with H up, down and one tap; one of
    the two first or last input columns marked (floats: NaN, so that a window reading the
    neighbouring row or the wrong lane instead of the clamped edge element shows as 0 * NaN; 8-bit:
    the type's extreme, far from the others), an input off a word boundary (16- and 8-bit: its plan
    puts each window word together from the two it straddles, PAT_BYTES), an output off a 16-byte
    boundary (resample_packed), a padded input."""
    tol = {"atol": LINEAR_TOL[dt][0], "why": LINEAR_TOL[dt][1]}
    esize = dt.size_in_bytes
    epw = 4 // esize
    mark = {F32: np.nan, F16: np.nan, I8: -128, U8: 255}[dt]
    used = 0
    for sw in (2.0, 1.5, 3.0, 1.0, 4.0, 0.75) + ((1.25, 2.5) if v % 4 else ()):
        w_in = next((w for w in range(2 * epw, 64, epw) if (w * sw) % v == 0 and w * sw >= 3 * v), None)
        if w_in is None:
            continue
        w_out = int(w_in * sw)
        for h_in, h_out in ((5, 11), (6, 3), (4, 4)):
            in_sizes, out_sizes = (2, 3, h_in, w_in), (2, 3, h_out, w_out)
            scales = (1, 1, h_out / h_in, sw)
            desc = Resample1Desc(
                TensorDesc(dt, in_sizes), TensorDesc(dt, out_sizes), "linear", scales, (0.5,) * 4, (-0.5,) * 4
            )
            try:
                op = compile_resample(desc, device=device, kernel="resample_rows_pat", band_rows=3, pattern_outputs=v)
            except PlanError as e:
                assert "no common pattern" in str(e) or "whole groups" in str(e), e
                continue
            assert op.plan.kernels == ["resample_rows_pat"] and op.plan.steps[0].constants_dict["PV"] == v
            used += 1
            for nan_col in (None, -1, 0, -2, 1):
                x = values(dt, in_sizes, rng)
                if nan_col is not None:
                    x[..., nan_col] = mark
                expected = ref.resample(x, out_sizes, "linear", scales, (0.5,) * 4, (-0.5,) * 4)
                inputs = {"input": (desc.input, x.view(np.uint8).reshape(-1))}
                run_checked(device, lambda ins, out: op(ins["input"], out), inputs, desc.output, expected, **tol)
            # the input off a word boundary (16/8-bit: rows of half words; the plan for that placement
            # puts each window word together from two, PAT_BYTES), the output off a 16-byte one (the
            # plan for that placement takes resample_packed)
            for offset, want in (
                ({"input_offset": 16 + 2}, "PAT_BYTES=1"),
                ({"output_offset": GUARD + max(2, esize)}, ":resample_packed|"),
            ):
                if dt == F32 and "input_offset" in offset:  # (float32 rows are always whole words)
                    continue
                run = lambda ins, out: op(ins["input"], out)  # noqa: E731
                run_checked(device, run, inputs, desc.output, expected, **offset, **tol)
                assert any(want in k for k in op.cache_keys), op.cache_keys
            padded = TensorDesc(dt, in_sizes, (3 * h_in * (w_in + epw), h_in * (w_in + epw), w_in + epw, 1))
            check_gpu(device, x, desc.output, "linear", scales, (0.5,) * 4, (-0.5,) * 4, in_desc=padded)
    assert used >= 3, f"only {used} cases took resample_rows_pat with {v} outputs per thread"


@pytest.mark.parametrize("dt", [F32, F16, U8])
@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_pattern_ragged_rows(device, rng, dt, mode):
    """resample_rows_pat where a row's last group of outputs is partial (rows of whole words, not of
    whole groups): its thread stores only the words inside the row (16-byte, 8-byte or word stores
    by alignment; rows start off 16-byte boundaries), its window words past the row read the edge
    element; odd widths for float32 (3x5x9x241 -> x2), even ones off whole groups for 16/8-bit;
    poison and guards around the output."""
    w_in = {F32: 241, F16: 50, U8: 52}[dt]
    ragged = 0
    for in_sizes, sc in (((3, 5, 9, w_in), (1, 1, 2, 2)), ((2, 3, 4, w_in), (1, 1, 1, 3))):
        out_sizes = tuple(int(i * s) for i, s in zip(in_sizes, sc))
        op = check_layout(device, rng, mode, dt, "resample_rows_pat", TensorDesc(dt, in_sizes), out_sizes, band_rows=3)
        c = op.plan.steps[0].constants_dict
        assert c.get("RAGGED", 0) == (out_sizes[3] % c["PV"] != 0), (out_sizes, c)
        ragged += c.get("RAGGED", 0)
    assert ragged >= 1


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_pattern_channels_in_lanes(device, rng, mode):
    """resample_rows_pat on a channels-fastest float32 input (NHWC): PAT_CL channels x 32 / PAT_CL
    block columns a warp, its window words W stride apart; x2, x1.5 and x3 along W, H up and down,
    the channel upsampled (linear: planes blended); exact for nearest, within the tolerance for
    linear; channels that are not a multiple of PAT_CL are refused by name."""
    from dmlwgsl.ops.resample import PATTERN_C_LANES

    for in_sizes, out_sizes in (
        ((2, 8, 5, 16), (2, 8, 11, 32)),
        ((1, 16, 6, 32), (1, 16, 3, 48)),
        ((2, 8, 4, 16), (2, 16, 8, 48)),
    ):
        in_desc = strided_desc(F32, in_sizes, "nhwc")
        op = check_layout(device, rng, mode, F32, "resample_rows_pat", in_desc, out_sizes, band_rows=3)
        assert op.plan.steps[0].constants_dict["PAT_CL"] == PATTERN_C_LANES
    odd = strided_desc(F32, (2, 6, 5, 16), "nhwc")
    scales = (1, 1, 2, 2)
    desc = Resample1Desc(odd, TensorDesc(F32, (2, 6, 10, 32)), mode, scales, (0.5,) * 4, (-0.5,) * 4)
    with pytest.raises(PlanError, match="channels are not a multiple of"):
        compile_resample(desc, device=device, kernel="resample_rows_pat")


@pytest.mark.parametrize("dt", [F32, F16, U8, I8])
def test_row_walk_pattern_nearest(device, rng, dt):
    """resample_rows_pat for nearest: each output element's bits taken from the raw window words at
    its tap, exact for every bit pattern (float inputs carry NaNs with payloads, signalling ones
    included, and -0); W scales with a pattern (x2, x3, x1.5, x0.5, x4), H up and down, Resample1's
    rounding and Resample2's both directions, the edge columns marked, the channel upsampled."""
    epw = 4 // dt.size_in_bytes
    used = 0
    for sw, (h_in, h_out), c_out, direction in (
        (2.0, (5, 11), 3, None),
        (3.0, (6, 3), 6, AxisDirection.DECREASING),
        (1.5, (4, 4), 3, AxisDirection.INCREASING),
        (0.5, (5, 10), 3, None),
        (4.0, (3, 7), 3, AxisDirection.DECREASING),
    ):
        w_in = next(w for w in range(16 * epw, 256, epw) if (w * sw) % 16 == 0)
        in_sizes, out_sizes = (2, 3, h_in, w_in), (2, c_out, h_out, int(w_in * sw))
        scales = (1, c_out / 3, h_out / h_in, sw)
        ins, outs = TensorDesc(dt, in_sizes), TensorDesc(dt, out_sizes)
        if direction is None:
            desc = Resample1Desc(ins, outs, "nearest", scales, (0.5,) * 4, (-0.5,) * 4)
        else:
            desc = Resample2Desc(ins, outs, "nearest", direction, scales, (0.5,) * 4, (-0.5,) * 4)
        try:
            op = compile_resample(desc, device=device, kernel="resample_rows_pat", band_rows=3)
        except PlanError as e:  # (float32 x0.5: a thread's taps span more than a window holds)
            assert "no common pattern" in str(e), e
            continue
        assert op.plan.kernels == ["resample_rows_pat"] and op.plan.steps[0].constants_dict["MODE"] == 0
        used += 1
        x = values(dt, in_sizes, rng)
        if dt in (F32, F16):
            bits = x.view(np.uint32 if dt == F32 else np.uint16)
            nan = (0x7F800001, 0xFFC01234, 0x80000000) if dt == F32 else (0x7C01, 0xFE35, 0x8000)
            bits[..., 0], bits[..., -1], bits[..., 1] = nan  # signalling / quiet NaNs with payloads, -0
        else:
            x[..., 0], x[..., -1] = np.iinfo(dt.numpy_dtype).min, np.iinfo(dt.numpy_dtype).max
        expected = ref.resample(x, out_sizes, "nearest", scales, (0.5,) * 4, (-0.5,) * 4, RULE[direction])
        inputs = {"input": (desc.input, x.view(np.uint8).reshape(-1))}
        run_checked(device, lambda ins, out: op(ins["input"], out), inputs, desc.output, expected)
    assert used >= 4, f"only {used} cases took resample_rows_pat"


@pytest.mark.parametrize(
    "dt, kernel, in_sizes, out_sizes",
    [
        (F32, "resample_rows", (2, 3, 5, 8), (2, 6, 10, 16)),
        (F32, "resample_rows", (1, 4, 6, 8), (1, 3, 6, 12)),  # channels down, rows not interpolated
        (F16, "resample_rows", (1, 3, 5, 8), (1, 5, 9, 16)),
        (F16, "resample_rows_half", (2, 3, 4, 6), (2, 7, 8, 12)),
        (U8, "resample_rows_byte", (1, 3, 5, 8), (1, 5, 10, 16)),
        (I8, "resample_rows_byte", (2, 5, 4, 4), (2, 2, 8, 8)),
        (F32, "resample_rows", (2, 3, 4, 8), (3, 3, 8, 16)),  # the batch
        (F32, "resample_rows", (2, 3, 4, 8), (4, 5, 7, 12)),  # every axis
        (F16, "resample_rows_half", (3, 2, 4, 6), (5, 4, 8, 12)),
        (U8, "resample_rows_byte", (2, 2, 4, 8), (3, 3, 8, 8)),
    ],
)
def test_row_walk_interpolated_batch_or_channel(device, rng, dt, kernel, in_sizes, out_sizes):
    """Linear with the batch or channel axis interpolated: the row walks walk every input plane of
    an output (2 or 4), each with its own row cache (bands of 3 rows); a channels-fastest input too
    (channel lanes); within the linear tolerance of the reference, under poison and guards."""
    planes = (2 if in_sizes[0] != out_sizes[0] else 1) * (2 if in_sizes[1] != out_sizes[1] else 1)
    for pattern in ("packed", "nhwc"):
        op = check_layout(
            device, rng, "linear", dt, kernel, strided_desc(dt, in_sizes, pattern), out_sizes, band_rows=3
        )
        assert op.plan.kernels == [kernel] and op.plan.steps[0].constants_dict["ROW_PLANES"] == planes
    # unasked, with a W tap pattern: a float32 plan blends the planes' windows in resample_rows_pat
    for sc in ((1, 2, 2, 2), (2, 2, 2, 2)):
        d32 = ResampleDesc(TensorDesc(F32, (2, 4, 8, 8)), TensorDesc(F32, (2 * sc[0], 8, 16, 16)), "linear", sc)
        assert compile_resample(d32, device=device).plan.kernels == ["resample_rows_pat"]


@pytest.mark.parametrize(
    "dt, in_sizes, out_sizes",
    [
        (F32, (2, 3, 5, 8), (2, 6, 10, 16)),  # the channel
        (F32, (2, 3, 4, 16), (4, 5, 7, 24)),  # every axis (W x1.5: 6 outputs a thread)
        (F16, (3, 2, 4, 8), (5, 4, 8, 16)),
        (F16, (2, 3, 4, 8), (3, 3, 8, 16)),  # the batch
        (U8, (2, 2, 4, 32), (3, 3, 8, 64)),
        (I8, (2, 5, 4, 32), (2, 2, 3, 64)),  # channels down, rows down
    ],
)
def test_pattern_interpolated_batch_or_channel(device, rng, dt, in_sizes, out_sizes):
    """resample_rows_pat with the batch or channel axis interpolated: the windows of an output's 2 or
    4 input planes blended (weights wn * wc) before the W taps, one row cache for all of them (bands
    of 3 rows); packed and padded inputs, within the linear tolerance of the reference, under poison
    and guards."""
    planes = (2 if in_sizes[0] != out_sizes[0] else 1) * (2 if in_sizes[1] != out_sizes[1] else 1)
    for layout in ("packed", "padded"):
        in_desc = strided_desc(dt, in_sizes, layout)
        if layout == "padded":  # rows on whole words (the pattern's condition): pad by whole rows
            w = in_sizes[3]
            in_desc = TensorDesc(dt, in_sizes, (in_sizes[1] * (in_sizes[2] + 1) * w, (in_sizes[2] + 1) * w, w, 1))
        op = check_layout(device, rng, "linear", dt, "resample_rows_pat", in_desc, out_sizes, band_rows=3)
        assert op.plan.kernels == ["resample_rows_pat"] and op.plan.steps[0].constants_dict["ROW_PLANES"] == planes
        assert "their windows blended before the W taps" in op.plan.why


# -- property tests ---------------------------------------------------------------------------------
@st.composite
def cases(draw):
    rank = draw(st.integers(1, 4))
    in_sizes = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    out_sizes = tuple(draw(st.integers(1, 7)) for _ in range(rank))
    scales, in_off, out_off = [], [], []
    for i, o in zip(in_sizes, out_sizes):
        scales.append(draw(st.sampled_from([o / i, 0.5, 1.0, 1.5, 2.0, 3.0, 0.3, o / i * 1.25])))
        in_off.append(draw(st.sampled_from([0.5, 0.0, -0.5, 0.25, 1.0])))
        out_off.append(draw(st.sampled_from([-0.5, 0.0, 0.5, -0.25])))
    return dict(
        rank=rank,
        in_sizes=in_sizes,
        out_sizes=out_sizes,
        scales=tuple(scales),
        in_off=tuple(in_off),
        out_off=tuple(out_off),
        mode=draw(st.sampled_from(["nearest", "linear"])),
        dt=draw(st.sampled_from([F32, F16, I8, U8])),
        direction=draw(st.sampled_from([None, AxisDirection.DECREASING, AxisDirection.INCREASING])),
        in_pattern=draw(st.sampled_from(["packed", "nhwc", "padded", "broadcast", "window"])),
        out_pattern=draw(st.sampled_from(["packed", "nhwc", "padded", "window"])),
        seed=draw(st.integers(0, 2**16)),
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(c=cases())
def test_property_vs_reference(device, c):
    rng = np.random.default_rng(c["seed"])
    in_desc = strided_desc(c["dt"], c["in_sizes"], c["in_pattern"])
    out_desc = strided_desc(c["dt"], c["out_sizes"], c["out_pattern"], output=True)
    check_gpu(
        device,
        values(c["dt"], c["in_sizes"], rng),
        out_desc,
        c["mode"],
        c["scales"],
        c["in_off"],
        c["out_off"],
        c["direction"],
        in_desc=in_desc,
    )


# -- numpy one-liner and compile-once path ----------------------------------------------------------------
# -- coordinates computed in the shader (long axes) ---------------------------------------------------
def tight(device, binding_limit):
    """The device's capability record with a tight binding limit for the planner."""

    from dmlwgsl.plan import Capabilities

    return Capabilities.from_device(device).with_binding_limit(binding_limit)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(c=cases(), scale_bits=st.integers(0, 2**23 - 1), scale_exp=st.integers(-3, 3))
def test_coordinates_computed_in_the_shader(device, c, scale_bits, scale_exp):
    """The shader's float32 coordinate (its own correctly rounded division) against the
    reference's, on random scales with every significand bit in play, offsets, rounding rules and
    types: bit-exact indices (nearest bit-exact; linear within the type's tolerance)."""
    rng = np.random.default_rng(c["seed"])
    r = c["rank"]
    s0 = float(np.float32((1 + scale_bits / 2**23) * 2.0**scale_exp))
    scales = tuple(s0 if d == r - 1 else c["scales"][d] for d in range(r))
    in_desc = strided_desc(c["dt"], c["in_sizes"], c["in_pattern"])
    out_desc = TensorDesc(c["dt"], c["out_sizes"])
    raw_in = tensor_bytes(in_desc, values(c["dt"], c["in_sizes"], rng))
    x = read_tensor(raw_in, in_desc)
    mode = InterpolationMode.parse(c["mode"])
    d = c["direction"]
    if d is None:
        desc = Resample1Desc(in_desc, out_desc, mode, scales, c["in_off"], c["out_off"])
    else:
        desc = Resample2Desc(in_desc, out_desc, mode, d, scales, c["in_off"], c["out_off"])
    op = ResampleOperator(device, desc, axis_table_bytes=0)  # every axis computes its coordinates
    assert set(dict(op.plan.details)["axis_tables"]) == {"computed"}
    expected = ref.resample(x, c["out_sizes"], c["mode"], scales, c["in_off"], c["out_off"], RULE[d])
    tol = {}
    if mode == InterpolationMode.LINEAR:
        tol = {"atol": LINEAR_TOL[c["dt"]][0], "why": LINEAR_TOL[c["dt"]][1]}
    run_checked(device, lambda ins, out: op(ins["input"], out), {"input": (in_desc, raw_in)}, out_desc, expected, **tol)


@pytest.mark.parametrize("dt", [F32, F16, U8, I8])
def test_pattern_on_a_computed_w_axis(device, rng, monkeypatch, dt):
    """resample_rows_pat where the W axis computes its coordinates in the shader (a long axis: its
    weights computed as computed_linear does, its taps the pattern) and the other axes are whole
    tables: x2 (an exact 1 / Scale), x1.5 and x3 (the shader's correctly rounded division), a 1-D
    signal and a 4-D tensor with H and the channel interpolated; the pattern checked in parts of
    16 outputs (the long-axis path of the host's check); at most COMPUTED_PATTERN_OUTPUTS a thread;
    each case with the weights computed and with them in runs of a table (W_RUNS) where they compress."""
    import dmlwgsl.ops.resample as rs

    monkeypatch.setattr(rs, "_PATTERN_CHECK_CHUNK", 16)
    tol = {"atol": LINEAR_TOL[dt][0], "why": LINEAR_TOL[dt][1]}
    # (8-bit: x2 throughout: x1.5 and x3 have patterns only with 12 outputs a thread, more than a
    # computed axis takes, COMPUTED_PATTERN_OUTPUTS)
    w15, w3 = (1.5, 3.0) if dt in (F32, F16) else (2.0, 2.0)
    for in_sizes, sc in (((96,), (2.0,)), ((2, 3, 5, 48), (1, 2, 1.4, w15)), ((1, 2, 4, 32), (1, 1, 2, w3))):
        out_sizes = tuple(int(i * s) for i, s in zip(in_sizes, sc))
        r = len(in_sizes)
        desc = Resample1Desc(TensorDesc(dt, in_sizes), TensorDesc(dt, out_sizes), "linear", sc, (0.5,) * r, (-0.5,) * r)
        x = values(dt, in_sizes, rng)
        x[..., 0] = x[..., -1] = {F32: np.nan, F16: np.nan, I8: -128, U8: 255}[dt]  # the clamped edges
        expected = ref.resample(x, out_sizes, "linear", sc, (0.5,) * r, (-0.5,) * r)
        inputs = {"input": (desc.input, x.view(np.uint8).reshape(-1))}
        for runs in (0, rs.MAX_W_RUNS):  # the weights computed, then (where they compress) runs of a table
            monkeypatch.setattr(rs, "MAX_W_RUNS", runs)
            rs._AXES_CACHE.clear()
            # the W axis's table (16 bytes an output) past the limit, the others' within it
            op = ResampleOperator(device, desc, kernel="resample_rows_pat", axis_table_bytes=160)
            assert dict(op.plan.details)["axis_tables"][-1] == "computed"
            assert op.plan.kernels == ["resample_rows_pat"]
            assert ("pattern_outputs" in dict(op.plan.details)) == ("w_runs" in dict(op.plan.details))
            assert runs or "w_runs" not in dict(op.plan.details)
            assert op.plan.steps[0].constants_dict["PV"] <= rs.COMPUTED_PATTERN_OUTPUTS
            run_checked(device, lambda ins, out: op(ins["input"], out), inputs, desc.output, expected, **tol)
    rs._AXES_CACHE.clear()


@pytest.mark.parametrize(
    "mode,dt,kernel", ROW_WALK_FORMS + [("linear", F16, "resample_rows_pat"), ("nearest", I8, "resample_rows_pat")]
)
def test_row_walks_on_computed_axes(device, rng, kernel, dt, mode):
    """The row walks where every axis computes its coordinates in the shader (long axes; the
    planner's AXIS_TABLE_CACHE_BYTES made 0): the W taps (or nearest columns) a thread computes once,
    each H row's entry as it walks, the batch's and channel's planes; a 1-D signal, a 2-D plane and a
    4-D tensor with the batch and channel interpolated, scales with a correctly rounded division
    (x1.6, x0.32, x20/9) and exact inverses (W x2 for the pattern walk, whose taps are a pattern),
    int8/uint8 rows that are not whole words (ENDS); against the reference (nearest exact,
    linear within the type's tolerance)."""
    w2 = kernel == "resample_rows_pat"
    shapes = [
        ((32,) if w2 else (40,), (64,)),
        ((9, 24) if w2 else (9, 50), (20, 48) if w2 else (20, 16)),
        ((3, 4, 5, 16) if w2 else (3, 4, 5, 24), (5, 6, 9, 32)),
    ]
    if kernel == "resample_rows_byte":
        shapes.append(((3, 2, 5, 37), (3, 2, 7, 29)))
    for in_sizes, out_sizes in shapes:
        r = len(in_sizes)
        sc = tuple(o / i for i, o in zip(in_sizes, out_sizes))
        desc = Resample1Desc(TensorDesc(dt, in_sizes), TensorDesc(dt, out_sizes), mode, sc, (0.5,) * r, (-0.5,) * r)
        op = ResampleOperator(device, desc, kernel=kernel, axis_table_bytes=0)
        assert set(dict(op.plan.details)["axis_tables"]) == {"computed"}
        assert op.plan.kernels == [kernel]
        x = values(dt, in_sizes, rng)
        expected = ref.resample(x, out_sizes, mode, sc, (0.5,) * r, (-0.5,) * r)
        tol = {"atol": LINEAR_TOL[dt][0], "why": LINEAR_TOL[dt][1]} if mode == "linear" else {}
        inputs = {"input": (desc.input, x.view(np.uint8).reshape(-1))}
        run_checked(device, lambda ins, out: op(ins["input"], out), inputs, desc.output, expected, **tol)


def test_pattern_weight_runs_to_the_ulp(device, monkeypatch):
    """resample_rows_pat on a computed W axis whose weights the host compressed to runs of repeating
    threads (W_RUNS; the table holds each run's first period): a linear 1-D resample of 0, 1, 0, 1,
    ... shows each weight's bits, compared bit for bit with the reference, for exact inverses (x2,
    x4, x1/2) and correctly rounded quotients (x1.5, x3) at half-pixel, dyadic and random offsets;
    runs of one period and of explicit end threads; where the weights do not compress (runs capped
    at 1 here), the computed path gives the same bits."""
    import dmlwgsl.ops.resample as rs
    from dmlwgsl.plan import PlanError

    rng = np.random.default_rng(11)
    took = {True: 0, False: 0}
    for cap in (rs.MAX_W_RUNS, 1):
        monkeypatch.setattr(rs, "MAX_W_RUNS", cap)
        rs._AXES_CACHE.clear()
        for k, scale in enumerate((2.0, 4.0, 0.5, 1.5, 3.0) * 3):
            in_off, out_off = [(0.5, -0.5), (0.25, 0.0), tuple(float(np.float32(v)) for v in rng.uniform(-1, 1, 2))][
                k // 5
            ]
            n_in = int(rng.integers(200, 700))
            n_out = int(n_in * scale)
            desc = Resample1Desc(
                TensorDesc(F32, (n_in,)), TensorDesc(F32, (n_out,)), "linear", (scale,), (in_off,), (out_off,)
            )
            try:
                op = ResampleOperator(device, desc, kernel="resample_rows_pat", axis_table_bytes=0)
            except PlanError:
                continue  # these offsets give the W taps no pattern
            runs = op.plan.steps[0].constants_dict.get("W_RUNS", 0)
            took[runs > 0] += 1
            x = (np.arange(n_in) % 2).astype(np.float32)
            expected = ref.resample(x, (n_out,), "linear", (scale,), (in_off,), (out_off,))
            xt, yt = device.upload(x), device.tensor(desc.output)
            op(xt, yt)
            bad = np.flatnonzero(yt.numpy().view(np.uint32) != expected.view(np.uint32))
            assert bad.size == 0, f"x{scale} offsets ({in_off!r}, {out_off!r}), {runs} runs: outputs {bad[:5]} differ"
            xt.buffer.destroy()
            yt.buffer.destroy()
    rs._AXES_CACHE.clear()
    assert took[True] >= 4 and took[False] >= 4, took


def test_weight_runs_of_a_long_x2_axis():
    """The host's runs for 2^24 outputs of x2 (half-pixel): the end threads, a run of period 2
    outputs below 2^23 and one of period 1 above it (o + 0.5 rounds there), each thread's table
    weights the reference's."""
    import dmlwgsl.ops.resample as rs

    n = 1 << 23
    x = ref.input_coordinates(2 * n, 2.0, 0.5, -0.5)
    _, _, w0, w1 = ref.linear_taps(x, n)
    runs, words = rs._weight_runs(w0, w1, 4)
    assert len(runs) <= 5 and runs[0][0] == 0
    starts = [r[0] for r in runs]
    assert (1 << 23) // 4 in starts  # the period changes where o + 0.5 stops being exact
    table = words.view(np.float32).reshape(-1, 4)
    assert table[: len(runs)].view(np.uint32).tolist() == [[*r, 0] for r in runs]  # the runs first
    table = table[len(runs) :]
    for g in (0, 1, 5, (1 << 21) - 1, 1 << 21, (1 << 21) + 7, (1 << 22) - 2, (1 << 22) - 1):
        g0, t, off = [r for r in runs if r[0] <= g][-1]
        for m in range(2):
            got = table[off + m * t + (g - g0) % t]
            o = 4 * g + 2 * m
            want = np.array([w0[o], w1[o], w0[o + 1], w1[o + 1]])
            assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_computed_coordinates_past_2_24(device, rng):
    """Computed coordinates of output indices past 2^24, where float32(o) rounds o to even (the
    shader adds two exact parts of o once, no conversion): 1-D uint8 nearest from 2^22 inputs to
    17-18 million outputs at irregular scales and offsets, Resample1's rule and Resample2's
    floor, bit for bit against the reference (poisoned output, guard bytes)."""
    n = 1 << 22
    x = rng.integers(0, 256, n).astype(np.uint8)
    for scale, in_off, out_off, direction in (
        (4.1234567, 0.5, -0.5, None),
        (4.37, 0.25, -0.31, AxisDirection.DECREASING),
    ):
        scale = float(np.float32(scale))
        out_desc = TensorDesc(U8, (int(n * scale),))
        assert out_desc.sizes[0] > 1 << 24
        rule = direction or AxisDirection.DECREASING  # (the axis tables do not depend on the rule)
        desc = Resample2Desc(TensorDesc(U8, (n,)), out_desc, "nearest", rule, (scale,), (in_off,), (out_off,))
        assert dict(plan_resample(desc, Capabilities.from_device(device)).details)["axis_tables"] == ("computed",)
        check_gpu(device, x, out_desc, "nearest", (scale,), (in_off,), (out_off,), direction)


def test_computed_coordinates_to_the_ulp(device):
    """The shader's correctly rounded division (div_rn: WGSL's quotient corrected with the exact
    remainder) on 300 random float32 scales and offsets: a linear 1-D resample of 0, 1, 0, 1, ...
    returns each output's weight w1 or w0 = 1 - w1 exactly (0 * w0 + 1 * w1), so its bits show the
    coordinate x = (o - OutputPixelOffset) / Scale - InputPixelOffset to the last bit; compared
    bit for bit with the reference. (Where the adapter's own division is correctly rounded, as on
    lavapipe, the correction has nothing to do; the H100's, within 2.5 ulp, exercises it.)"""
    rng = np.random.default_rng(7)
    for _ in range(300):
        scale = float(np.float32(rng.uniform(0.26, 3.9)))
        in_off, out_off = (float(np.float32(v)) for v in rng.uniform(-1, 1, 2))
        n_in = int(rng.integers(64, 2048))
        n_out = max(4, int(n_in * scale))
        desc = Resample1Desc(
            TensorDesc(F32, (n_in,)), TensorDesc(F32, (n_out,)), "linear", (scale,), (in_off,), (out_off,)
        )
        op = ResampleOperator(device, desc, axis_table_bytes=0)  # the coordinates computed in the shader
        assert dict(op.plan.details)["axis_tables"] == ("computed",)
        x = (np.arange(n_in) % 2).astype(np.float32)
        expected = ref.resample(x, (n_out,), "linear", (scale,), (in_off,), (out_off,))
        xt, yt = device.upload(x), device.tensor(desc.output)
        op(xt, yt)
        got = yt.numpy()
        bad = np.flatnonzero(got.view(np.uint32) != expected.view(np.uint32))
        assert bad.size == 0, f"scale {scale!r} offsets ({in_off!r}, {out_off!r}): outputs {bad[:5]} differ"
        xt.buffer.destroy()
        yt.buffer.destroy()


@pytest.mark.slow  # 2^25 outputs checked against the reference: 20-40 s per case on lavapipe
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_long_1d_axis(device, mode):
    """Issue 13: 2^24 -> 2^25 on lavapipe (128 MiB binding limit): the whole linear table would be
    512 MiB; the coordinates are computed in the shader, exactly (past 2^23 float32 rounds o + 0.5
    to even, which the shader reproduces)."""
    n = 2**24
    x = (np.arange(n, dtype=np.int64) % 251 - 125).astype(np.float32) / 4
    desc = Resample1Desc(TensorDesc(F32, (n,)), TensorDesc(F32, (2 * n,)), mode, (2.0,), (0.5,), (-0.5,))
    op = compile_resample(desc, device=device)
    assert dict(op.plan.details)["axis_tables"] == ("computed",)
    xt, yt = device.upload(x), device.tensor(desc.output)
    device.fill(yt.buffer, b"\xee")
    op(xt, yt)
    got = yt.numpy()
    expected = ref.resample(x, (2 * n,), mode, (2.0,), (0.5,), (-0.5,))
    if mode == "nearest":
        assert got.tobytes() == expected.tobytes()
    else:
        assert np.max(np.abs(got - expected)) <= LINEAR_TOL[F32][0]
    xt.buffer.destroy()
    yt.buffer.destroy()


@pytest.mark.parametrize(
    "kernel,dt,mode,in_sizes,out_sizes",
    [
        ("resample_rows", F32, "linear", (2, 3, 8, 16), (2, 3, 13, 24)),
        ("resample_rows", F16, "nearest", (2, 3, 8, 16), (2, 3, 16, 32)),
        ("resample_rows_half", F16, "linear", (3, 2, 8, 16), (3, 2, 12, 24)),
        ("resample_rows_byte", U8, "linear", (2, 3, 8, 16), (2, 3, 16, 32)),
        ("resample_rows", I8, "nearest", (2, 3, 8, 16), (2, 3, 16, 32)),
        ("resample_rows_pat", F16, "linear", (2, 3, 8, 16), (2, 3, 16, 32)),
        ("resample_rows", F32, "linear", (2, 3, 8, 16), (2, 5, 13, 24)),  # 2 input planes an output (channel)
        ("resample_rows_byte", U8, "linear", (2, 3, 8, 16), (2, 5, 16, 32)),
    ],
)
def test_row_walks_past_the_binding_limit(device, rng, kernel, dt, mode, in_sizes, out_sizes):
    """The row walks past the binding limit: parts of whole (n, c) planes, each binding windows of
    the input and output, the walk's threads over the part's planes and its tables indexed from
    the part's origin; exact (linear: the tests' tolerance), guard bytes kept, at two offsets."""
    plane = out_sizes[2] * out_sizes[3] * dt.size_in_bytes
    limit = 2 * plane + 64  # two planes of the output fit a binding, not the tensor
    scales = tuple(o / i for o, i in zip(out_sizes, in_sizes))
    in_desc, out_desc = TensorDesc(dt, in_sizes), TensorDesc(dt, out_sizes)
    desc = Resample1Desc(in_desc, out_desc, mode, scales, (0.5,) * 4, (-0.5,) * 4)
    op = ResampleOperator(device, desc, kernel=kernel, capabilities=tight(device, limit))
    assert op.plan.dispatches > 1 and all(k.startswith(kernel + "[") for k in op.plan.kernels)
    x = values(dt, in_sizes, rng)
    raw_in = tensor_bytes(in_desc, x)
    expected = ref.resample(x, out_sizes, mode, scales, (0.5,) * 4, (-0.5,) * 4)
    check_at_two_offsets(device, op, in_desc, raw_in, out_desc, expected, mode, GUARD + 16)


def check_at_two_offsets(device, op, in_desc, raw_in, out_desc, expected, mode, output_offset):
    """run_checked at the buffers' starts, then with both tensors placed further in (the output at
    ``output_offset``), under the tests' linear tolerance where ``mode`` is linear."""
    dt = in_desc.data_type
    tol = {"atol": LINEAR_TOL[dt][0], "why": LINEAR_TOL[dt][1]} if mode == "linear" else {}
    for offsets in ({}, {"input_offset": 16 + 4 * dt.size_in_bytes, "output_offset": output_offset}):
        run_checked(
            device,
            lambda ins, out: op(ins["input"], out),
            {"input": (in_desc, raw_in)},
            out_desc,
            expected,
            **offsets,
            **tol,
        )


@pytest.mark.parametrize("binding_limit", [2048, 512])
@pytest.mark.parametrize(
    "dt,mode,in_sizes,out_sizes,out_pattern",
    [
        (F32, "linear", (2, 3, 20, 30), (2, 3, 37, 45), "packed"),
        (F16, "nearest", (2, 3, 20, 30), (3, 5, 11, 61), "packed"),
        (U8, "linear", (3, 40, 50), (3, 61, 101), "packed"),
        (I8, "nearest", (2, 3, 20, 30), (2, 3, 41, 17), "padded"),
        (F32, "nearest", (3000,), (4001,), "packed"),
        (F32, "linear", (2, 3, 20, 30), (2, 3, 41, 17), "nhwc"),
    ],
)
def test_past_the_binding_limit(device, rng, binding_limit, dt, mode, in_sizes, out_sizes, out_pattern):
    """Issue 11: tensors larger than the binding limit (here a capability record with a tight
    one) split into parts that bind windows of the input and output; exact, guard bytes kept."""
    r = len(in_sizes)
    in_desc = strided_desc(dt, in_sizes, "padded" if r > 1 else "packed")
    out_desc = strided_desc(dt, out_sizes, out_pattern, output=True) if r > 1 else TensorDesc(dt, out_sizes)
    # (linear: an output row reads 2 input rows of each interpolated axis, which must fit a window)
    scales = tuple(o / i * 1.1 if o != i else 1.0 for o, i in zip(out_sizes, in_sizes))
    oo = tuple(0.25 if o != i else -0.5 for o, i in zip(out_sizes, in_sizes))
    desc = Resample1Desc(in_desc, out_desc, mode, scales, (0.5,) * r, oo)
    op = ResampleOperator(device, desc, capabilities=tight(device, binding_limit))
    assert op.plan.dispatches > 1 and all(s.windows for s in op.plan.steps)
    assert "beyond the binding limit" in op.plan.why
    x = values(dt, in_sizes, rng)
    raw_in = tensor_bytes(in_desc, x)
    expected = ref.resample(read_tensor(raw_in, in_desc), out_sizes, mode, scales, (0.5,) * r, oo)
    check_at_two_offsets(device, op, in_desc, raw_in, out_desc, expected, mode, GUARD + 4 * dt.size_in_bytes)


def test_one_liner_defaults(device, rng):
    x = values(F32, (2, 3, 4, 4), rng)
    y = resample(x, (2, 3, 8, 6), device=device)
    np.testing.assert_array_equal(y, ref.resample(x, (2, 3, 8, 6), "nearest", (1, 1, 2, 1.5), (0.5,) * 4, (-0.5,) * 4))
    y = resample(x[:, :, ::2, ::-1], (2, 3, 3, 3), mode=InterpolationMode.LINEAR, device=device)
    e = ref.resample(
        np.ascontiguousarray(x[:, :, ::2, ::-1]), (2, 3, 3, 3), "linear", (1, 1, 1.5, 0.75), (0.5,) * 4, (-0.5,) * 4
    )
    np.testing.assert_allclose(y, e, atol=LINEAR_TOL[F32][0])
    y = resample(
        x,
        (2, 3, 2, 2),
        scales=(1, 1, 0.5, 0.5),
        input_pixel_offsets=0.0,
        output_pixel_offsets=0.0,
        rounding_direction="decreasing",
        device=device,
    )
    np.testing.assert_array_equal(y, x[:, :, ::2, ::2])


def test_resample_v0_is_resample1_with_pixel_centres(device, rng):
    x = values(F32, (1, 2, 5, 3), rng)
    in_desc, out_desc = TensorDesc(F32, x.shape), TensorDesc(F32, (1, 2, 8, 8))
    scales = (1.0, 1.0, 1.6, 8 / 3)
    raw = x.view(np.uint8).reshape(-1)
    for mode in ("nearest", "linear"):
        v0 = compile_resample(ResampleDesc(in_desc, out_desc, mode, scales), device=device)
        v1 = compile_resample(Resample1Desc(in_desc, out_desc, mode, scales, (0.5,) * 4, (-0.5,) * 4), device=device)
        a = run_checked(
            device,
            lambda ins, out: v0(ins["input"], out),
            {"input": (in_desc, raw)},
            out_desc,
            ref.resample(x, out_desc.sizes, mode, scales, (0.5,) * 4, (-0.5,) * 4),
            **({} if mode == "nearest" else {"atol": LINEAR_TOL[F32][0], "why": LINEAR_TOL[F32][1]}),
        )
        b = run_checked(device, lambda ins, out: v1(ins["input"], out), {"input": (in_desc, raw)}, out_desc, a)
        assert a.tobytes() == b.tobytes()


def test_two_shapes_compile_once(device, rng):
    # every axis interpolated in both (which axes are is structure; the sizes and scales are data)
    d1 = ResampleDesc(TensorDesc(F32, (2, 3, 4, 5)), TensorDesc(F32, (3, 5, 7, 3)), "linear", (1.5, 5 / 3, 7 / 4, 0.6))
    op1 = compile_resample(d1, device=device)
    misses = device.pipelines.misses
    op2 = compile_resample(
        ResampleDesc(TensorDesc(F32, (2, 7, 3, 2)), TensorDesc(F32, (3, 5, 6, 6)), "linear", (1.5, 5 / 7, 2.0, 3.0)),
        device=device,
    )
    assert device.pipelines.misses == misses
    assert op2.cache_keys == op1.cache_keys and len(op1.cache_keys) == 1


# -- ONNX Resize bridge ------------------------------------------------------------------------------------
_ONNX_CASES = None


def onnx_cases():
    """(name, inputs by name, attributes, expected output) of every ONNX Resize node test."""
    global _ONNX_CASES
    if _ONNX_CASES is None:
        from onnx import helper
        from onnx_node_cases import node_cases

        out = []
        for case in node_cases("Resize"):
            node = case.model.graph.node[0]
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            inputs, outputs = case.data_sets[0]
            named = {n: v for n, v in zip([i for i in node.input if i], inputs)}
            out.append((case.name, node, named, attrs, outputs[0]))
        _ONNX_CASES = out
    return _ONNX_CASES


def onnx_params(node, named, attrs):
    """Run the bridge on one ONNX node test."""
    ins = list(node.input) + [""] * (4 - len(node.input))
    get = lambda k: None if not ins[k] else named.get(ins[k])  # noqa: E731
    return onnx_resize_to_resample(named[ins[0]].shape, roi=get(1), scales=get(2), sizes=get(3), **attrs)


#: ONNX node tests that DirectML cannot express, and the word their refusal must contain.
REFUSED = {
    "test_resize_upsample_scales_cubic": "cubic",
    "test_resize_upsample_scales_cubic_align_corners": "cubic",
    "test_resize_downsample_scales_cubic": "cubic",
    "test_resize_downsample_scales_cubic_align_corners": "cubic",
    "test_resize_upsample_sizes_cubic": "cubic",
    "test_resize_downsample_sizes_cubic": "cubic",
    "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside": "cubic",
    "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside": "cubic",
    "test_resize_upsample_scales_cubic_asymmetric": "cubic",
    "test_resize_downsample_scales_cubic_antialias": "cubic",
    "test_resize_downsample_sizes_cubic_antialias": "cubic",
    "test_resize_tf_crop_and_resize_extrapolation_value": "outside the input",
}


def test_onnx_refusals_stay_refused():
    seen = set()
    for name, node, named, attrs, _ in onnx_cases():
        if name not in REFUSED:
            continue
        seen.add(name)
        with pytest.raises(OnnxResizeUnsupported, match=REFUSED[name]):
            onnx_params(node, named, attrs)
    assert seen == set(REFUSED)


def test_onnx_backend_node_tests(device):
    ran = []
    for name, node, named, attrs, expected in onnx_cases():
        if name in REFUSED:
            continue
        p = onnx_params(node, named, attrs)
        x = named[node.input[0]]
        assert p.output_sizes == expected.shape, name
        in_desc = TensorDesc(DataType.from_numpy(x.dtype), x.shape)
        out_desc = TensorDesc(in_desc.data_type, p.output_sizes)
        op = compile_resample(p.desc(in_desc, out_desc), device=device)
        tol = {}
        if p.interpolation_mode == InterpolationMode.LINEAR:
            # ONNX's reference interpolates in float64; DirectML's contract is float32 coordinates
            # and weights, so results agree to float32 rounding of values of magnitude <= 16.
            tol = {"atol": 1e-5, "rtol": 1e-6, "why": "ONNX reference computes in float64, DML in float32"}
        try:
            run_checked(
                device,
                lambda ins, out: op(ins["input"], out),
                {"input": (in_desc, x.view(np.uint8).reshape(-1))},
                out_desc,
                expected.astype(x.dtype),
                **tol,
            )
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None
        ran.append(name)
    assert len(ran) >= 20, ran


def test_onnx_bridge_nearest_modes():
    """ORT's nearest_mode table (spec 4.3) on half_pixel."""
    p = onnx_resize_to_resample((1, 1, 2, 2), scales=[1, 1, 2, 2], nearest_mode="round_prefer_floor")
    assert p.rounding_direction == AxisDirection.INCREASING and p.input_pixel_offsets[3] == 1.0
    p = onnx_resize_to_resample((1, 1, 2, 2), scales=[1, 1, 2, 2], nearest_mode="round_prefer_ceil")
    assert p.rounding_direction == AxisDirection.DECREASING and p.input_pixel_offsets[3] == 0.0
    p = onnx_resize_to_resample((1, 1, 2, 2), sizes=[1, 1, 3, 1], coordinate_transformation_mode="align_corners")
    assert p.scales[2] == 2.0 and p.scales[3] == float(np.finfo(np.float32).max)
    with pytest.raises(OnnxResizeUnsupported, match="exclude_outside"):
        onnx_resize_to_resample((1, 1, 2, 2), scales=[1, 1, 2, 2], mode="linear", exclude_outside=1)
    with pytest.raises(OnnxResizeUnsupported, match="rank"):
        onnx_resize_to_resample((1, 1, 1, 2, 2), scales=[1, 1, 1, 2, 2])


# -- validation: one test per rule ---------------------------------------------------------------------
def _desc(**kw):
    base = dict(
        input=TensorDesc(F32, (1, 1, 2, 2)),
        output=TensorDesc(F32, (1, 1, 4, 4)),
        interpolation_mode=InterpolationMode.NEAREST_NEIGHBOR,
        rounding_direction=AxisDirection.DECREASING,
        scales=(1, 1, 2, 2),
        input_pixel_offsets=(0.5,) * 4,
        output_pixel_offsets=(-0.5,) * 4,
    )
    base.update(kw)
    return Resample2Desc(**base)


@pytest.mark.parametrize(
    "kw,message",
    [
        (
            dict(input=TensorDesc(DataType.INT32, (1, 1, 2, 2)), output=TensorDesc(DataType.INT32, (1, 1, 4, 4))),
            r"input\.data_type: INT32 is not supported here",
        ),
        (
            dict(output=TensorDesc(F16, (1, 1, 4, 4))),
            r"output\.data_type: must equal input\.data_type \(FLOAT32\); got FLOAT16",
        ),
        (
            dict(output=TensorDesc(F32, (1, 4, 4))),
            r"output\.sizes: dimension count must equal the input's \(4\); got 3",
        ),
        (
            dict(input=TensorDesc(F32, (1, 1, 1, 2, 2)), output=TensorDesc(F32, (1, 1, 1, 4, 4))),
            r"input\.sizes: dimension count must be in 1\.\.4; got 5",
        ),
        (dict(scales=(1, 2, 2)), r"scales: must have one entry per dimension \(dimension count 4\); got 3"),
        (dict(input_pixel_offsets=(0.5,) * 5), r"input_pixel_offsets: must have one entry per dimension"),
        (dict(output_pixel_offsets=(0.5,)), r"output_pixel_offsets: must have one entry per dimension"),
        (dict(scales=(1, 1, 0.0, 2)), r"scales\[2\]: must be > 0; got 0\.0"),
        (dict(scales=(1, 1, 2, -1.5)), r"scales\[3\]: must be > 0; got -1\.5"),
        (dict(scales=(1, 1, float("nan"), 2)), r"scales\[2\]: must be finite in float32 \(no NaN or inf\)"),
        (dict(scales=(1, 1, 2, 1e39)), r"scales\[3\]: must be finite in float32"),
        (dict(input_pixel_offsets=(0.5, float("inf"), 0.5, 0.5)), r"input_pixel_offsets\[1\]: must be finite"),
        (dict(output_pixel_offsets=(0.5, 0.5, float("-inf"), 0.5)), r"output_pixel_offsets\[2\]: must be finite"),
        (dict(interpolation_mode="cubic"), r"interpolation_mode: unknown mode 'cubic'"),
        (dict(rounding_direction="sideways"), r"rounding_direction: unknown direction 'sideways'"),
        (
            dict(output=TensorDesc(F32, (1, 1, 4, 4), (0, 0, 1, 1))),
            r"output\.strides: two elements of an output may not share",
        ),
        (dict(input=TensorDesc(F32, (1, 1, 0, 2))), r"input\.sizes\[2\]: a size of zero"),
    ],
)
def test_validation(kw, message):
    with pytest.raises(DmlValidationError, match=message):
        compile_resample(_desc(**kw), device=object())  # fails before the device is touched


def test_validation_one_liner_before_gpu_work():
    x = np.zeros((2, 2), np.float32)
    with pytest.raises(DmlValidationError, match=r"interpolation_mode: unknown mode 'bicubic'"):
        resample(x, (4, 4), mode="bicubic", device=object())
    with pytest.raises(DmlValidationError, match=r"rounding_direction: unknown direction"):
        resample(x, (4, 4), rounding_direction="up", device=object())
    with pytest.raises(DmlValidationError, match=r"input\.data_type: INT32 is not supported"):
        resample(x.astype(np.int32), (4, 4), device=object())
    with pytest.raises(DmlValidationError, match=r"output\.sizes: dimension count must equal the input's \(2\); got 3"):
        resample(x, (1, 4, 4), device=object())
    with pytest.raises(DmlValidationError, match=r"scales\[1\]: must be > 0"):
        resample(x, (4, 4), scales=(2, 0), device=object())
    with pytest.raises(DmlValidationError, match=r"input_pixel_offsets\[0\]: must be finite"):
        resample(x, (4, 4), input_pixel_offsets=(float("nan"), 0.5), device=object())


@pytest.mark.parametrize("dt", [U8, I8, F16], ids=lambda d: d.name.lower())
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize(
    "in_sizes,out_sizes",
    [
        ((2, 3, 5, 38), (2, 3, 10, 76)),  # x2, rows of half words (uint8)
        ((2, 3, 6, 243), (2, 3, 6, 972)),  # x4 along W only, odd W: the random sweep's row (145x285x243)
        ((1, 2, 7, 29), (1, 2, 5, 116)),  # x4, odd W, H shrunk
        ((3, 2, 4, 32), (3, 2, 8, 48)),  # x1.5: rows off words only where placed or padded so
        ((1, 3, 5, 37), (1, 3, 10, 74)),  # output rows not whole words (uint8): PAT_RAGGED_BYTES
        ((2, 1, 2, 21), (2, 1, 4, 63)),  # x3, output rows of 63 elements: every row starts off a word
    ],
)
def test_pattern_rows_off_words(device, rng, dt, mode, in_sizes, out_sizes):
    """resample_rows_pat on 8/16-bit rows that are not whole words from a word boundary (PAT_BYTES;
    output rows that are not whole words: PAT_RAGGED_BYTES, the words two threads share merged
    with atomics): odd widths, a padded input (odd row
    strides), the input 1, 2 and 3 bytes off a word (16-bit: 2); each window word put together
    from the two it straddles, lane by lane at the rows' edges (the first and last columns set to
    the type's extremes, so that a lane read from a neighbouring row shows); exact for nearest,
    linear within the tests' tolerance, under poison and guards."""
    esize = dt.size_in_bytes
    in_desc = TensorDesc(dt, in_sizes)
    try:
        op = check_layout(
            device,
            rng,
            mode,
            dt,
            "resample_rows_pat",
            in_desc,
            out_sizes,
            band_rows=3,
            offsets=(16, 17, 18, 19)[::esize],
        )
    except PlanError as e:  # (a scale whose taps have no pattern at these sizes: none of these rows)
        raise AssertionError(f"resample_rows_pat should take {in_sizes} -> {out_sizes}: {e}") from e
    assert any("PAT_BYTES=1" in k for k in op.cache_keys), op.cache_keys
    if (out_sizes[3] * esize) % 4:  # output rows not whole words: shared end words merged with atomics
        assert all("PAT_RAGGED_BYTES=1" in k for k in op.cache_keys), op.cache_keys
    w = in_sizes[3]
    strides = (in_sizes[1] * in_sizes[2] * (w + 3), in_sizes[2] * (w + 3), w + 3, 1)  # rows 3 elements apart
    padded = TensorDesc(dt, in_sizes, strides)
    x = values(dt, in_sizes, rng)
    lo, hi = (-8.0, 7.984375) if dt == F16 else (np.iinfo(dt.numpy_dtype).min, np.iinfo(dt.numpy_dtype).max)
    x[..., 0], x[..., -1] = lo, hi
    r = len(in_sizes)
    scales = tuple(o / i for o, i in zip(out_sizes, in_sizes))
    expected = ref.resample(x, out_sizes, mode, scales, (0.5,) * r, (-0.5,) * r)
    desc = Resample1Desc(padded, TensorDesc(dt, out_sizes), mode, scales, (0.5,) * r, (-0.5,) * r)
    op = compile_resample(desc, device=device, kernel="resample_rows_pat", band_rows=3)
    assert op.plan.steps[0].constants_dict.get("PAT_BYTES") == 1
    tol = {"atol": LINEAR_TOL[dt][0], "why": LINEAR_TOL[dt][1]} if mode == "linear" else {}
    run_checked(
        device,
        lambda ins, out: op(ins["input"], out),
        {"input": (padded, tensor_bytes(padded, x))},
        desc.output,
        expected.astype(dt.numpy_dtype),
        **tol,
    )

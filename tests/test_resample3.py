"""Resample3 with Antialiased (spec 4.5): the reference against onnx's reference implementation and
node-test data, every path on every adapter against the reference under run_checked (poisoned
output between guard bands), plans as values on the kept profiles, and the dispatch rules.

GPU results are compared within LINEAR_TOLERANCE: the shader sums the reference's float32 terms in
the reference's order, but a GPU compiler may fuse a multiply and an add (one rounding instead of
two), and float16/int8/uint8 stores may then round an f32 result that sits on a boundary either way.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx_node_cases import node_cases

import dmlwgsl
from dmlwgsl.ops._resample_antialias import (
    ResampleAntialiasOperator,
    compile_resample3,
    plan_resample_antialias,
)
from dmlwgsl.ops.resample import (
    LINEAR_TOLERANCE,
    AxisDirection,
    OnnxResizeUnsupported,
    Resample3Desc,
    ResampleOperator,
    compile_resample,
    onnx_resize_to_resample,
)
from dmlwgsl.plan import PROFILES, Capabilities, Placement, PlanError
from dmlwgsl.reference import resample as ref
from dmlwgsl.reference.tensors import read_tensor, tensor_bytes
from dmlwgsl.tensor import DataType, DmlValidationError, TensorDesc
from dmlwgsl.testing import assert_matches, run_checked, strided_desc

F32, F16, I8, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8
TYPES = (F32, F16, I8, U8)
#: onnx's reference works in float64, ours in float32: results agree to float32 rounding of
#: values below 8 plus the float32 weights' rounding (a few ulps of 8).
ONNX_F32 = (4e-6, "float32 reference against onnx's float64 one: float32 weights and sums, |values| < 8")


def values(dt: DataType, sizes, rng) -> np.ndarray:
    """Real values of the type: floats are multiples of 1/64 in [-8, 8); integers over their range."""
    if dt in (F32, F16):
        return (rng.integers(-512, 512, size=sizes) / 64).astype(dt.numpy_dtype)
    info = np.iinfo(dt.numpy_dtype)
    return rng.integers(info.min, info.max + 1, size=sizes).astype(dt.numpy_dtype)


def desc3(in_desc: TensorDesc, out_desc: TensorDesc, scales=None, in_off=None, out_off=None) -> Resample3Desc:
    r = in_desc.rank
    if scales is None:
        scales = tuple(o / i for o, i in zip(out_desc.sizes, in_desc.sizes))
    return Resample3Desc(
        in_desc,
        out_desc,
        "linear",
        AxisDirection.DECREASING,
        tuple(scales),
        tuple(in_off or (0.5,) * r),
        tuple(out_off or (-0.5,) * r),
        True,
    )


def onnx_antialias(x: np.ndarray, scales) -> np.ndarray:
    """onnx's reference implementation (op_resize) of Resize linear antialias, half_pixel."""
    from onnx.reference.ops.op_resize import _interpolate_nd, _linear_coeffs_antialias

    return _interpolate_nd(x, _linear_coeffs_antialias, scale_factors=[float(s) for s in scales])


# -- the reference -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, scales",
    [
        ((4, 4), (0.6, 0.6)),
        ((1, 1, 16, 20), (1, 1, 0.5, 1 / 3)),
        ((9,), (0.25,)),
        ((3, 5, 7), (0.7, 0.4, 1.5)),
        ((1, 2, 30, 31), (1, 1, 0.26, 0.74)),
        ((15, 6), (1 / 7, 0.9)),
        ((2, 1, 5, 40), (0.5, 1, 2.0, 0.1)),
    ],
)
def test_reference_matches_onnx(shape, scales, rng):
    x = values(F32, shape, rng)
    sc = tuple(float(np.float32(s)) for s in scales)
    want = onnx_antialias(x, sc)
    got = ref.resample_antialias(x, want.shape, sc, (0.5,) * x.ndim, (-0.5,) * x.ndim)
    assert_matches(got, want.astype(np.float32), atol=ONNX_F32[0], why=ONNX_F32[1])


def _antialias_node_cases():
    out = []
    for case in node_cases("Resize"):
        if case.name in (
            "test_resize_downsample_scales_linear_antialias",
            "test_resize_downsample_sizes_linear_antialias",
        ):
            node = case.model.graph.node[0]
            (inputs, outputs) = case.data_sets[0]
            named = dict(zip([i for i in node.input if i], inputs))
            out.append((case.name, node, named, outputs[0]))
    return out


def test_reference_and_gpu_match_the_onnx_node_tests(device):
    from onnx import helper

    cases = _antialias_node_cases()
    assert len(cases) == 2
    for name, node, named, expected in cases:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        ins = list(node.input) + [""] * 4
        x = named[ins[0]]
        p = onnx_resize_to_resample(
            x.shape, scales=named.get(ins[2]) if ins[2] else None, sizes=named.get(ins[3]) if ins[3] else None, **attrs
        )
        assert p.antialiased and p.output_sizes == expected.shape, name
        got = ref.resample_antialias(x, p.output_sizes, p.scales, p.input_pixel_offsets, p.output_pixel_offsets)
        # values up to 16 here: twice the float32 bound of ONNX_F32
        assert_matches(got, expected, atol=2 * ONNX_F32[0], why=ONNX_F32[1] + " (here up to 16)")
        in_desc = TensorDesc(F32, x.shape)
        op = compile_resample(p.desc(in_desc), device=device)
        assert isinstance(op, ResampleAntialiasOperator)
        for op in (op, compile_resample3(p.desc(in_desc), device=device, kernel="aa_rows")):
            out = run_checked(
                device,
                lambda ins, o: op(ins["input"], o),
                {"input": (in_desc, tensor_bytes(in_desc, x))},
                op.output_desc,
                got,
                atol=2 * LINEAR_TOLERANCE[F32][0],
                why=LINEAR_TOLERANCE[F32][1] + " (values up to 16)",
            )
            assert out.shape == expected.shape


def test_taps_follow_the_definition():
    x = ref.input_coordinates(6, 0.5, 0.5, -0.5)  # 12 -> 6: x = 2o + 0.5
    first, count, w = ref.antialias_taps(x, 12, 0.5)
    # interior: pixels 2o-1 .. 2o+2 weigh (1, 3, 3, 1) / 8; at the edges the outside pixel folds in
    np.testing.assert_array_equal(first, [0, 1, 3, 5, 7, 9])
    np.testing.assert_array_equal(count, [3, 4, 4, 4, 4, 3])
    assert w[1].tolist() == [0.125, 0.375, 0.375, 0.125]
    assert w[0].tolist()[:3] == [0.5, 0.375, 0.125]  # pixel -1 is pixel 0
    # every row sums to 1 (float32), and upsampling is plain linear
    assert np.allclose(w.sum(axis=1), 1, atol=2e-7)
    xu = ref.input_coordinates(9, 1.5, 0.5, -0.5)
    f, c, wu = ref.antialias_taps(xu, 6, 1.5)
    i0, i1, w0, w1 = ref.linear_taps(xu, 6)
    np.testing.assert_array_equal(f, i0)
    np.testing.assert_array_equal(wu[:, 0], w0)
    np.testing.assert_array_equal(np.where(c == 2, wu[:, 1], 0), w1)
    # a single tap weighs exactly 1 (an input of length 1)
    f1, c1, w1_ = ref.antialias_taps(ref.input_coordinates(1, 0.25, 0.5, -0.5), 1, 0.25)
    assert c1.tolist() == [1] and w1_.tolist() == [[1.0]]


def test_tap_table_pads_weight_rows_to_whole_groups_of_four():
    """aa_taps reads 4 or 8 weight rows of every column whatever the axis's most taps, and for 8-bit
    inputs adds w * x without a select: each axis's weight rows run to a multiple of 4, zero past
    every column's count (W of 36 -> 12: 3 or 4 taps; 40 -> 8 (1/5): 6 or 7; H 20 -> 10: 3 or 4)."""
    from dmlwgsl.ops._resample_antialias import antialias_tables

    for sizes, out in (((1, 1, 20, 36), (1, 1, 10, 12)), ((1, 1, 20, 40), (1, 1, 10, 8))):
        desc = desc3(TensorDesc(DataType.UINT8, sizes), TensorDesc(DataType.UINT8, out))
        words, heads, wofs, entries, taps = antialias_tables(desc)
        ends = [*heads[1:], len(words)]
        for d in range(4):
            first, count = taps[d]
            rows = (ends[d] - wofs[d]) // entries[d]
            assert rows % 4 == 0 and rows >= max(4, int(count.max())), (sizes, d, rows)
            w = words[wofs[d] : wofs[d] + rows * entries[d]].view(np.float32).reshape(rows, entries[d])
            j = np.arange(rows)[:, None]
            assert not np.any(w[:, : count.size][j >= count[None, :]]), (sizes, d)
            assert not np.any(w[:, count.size :]), (sizes, d)


# -- GPU against the reference ---------------------------------------------------------------------------
def check(device, kernel, in_desc, out_desc, rng, scales=None, in_off=None, out_off=None, x=None):
    desc = desc3(in_desc, out_desc, scales, in_off, out_off)
    x = values(in_desc.data_type, in_desc.sizes, rng) if x is None else x
    raw = tensor_bytes(in_desc, x)
    xin = read_tensor(raw, in_desc)  # broadcast inputs: the values the description reads
    want = ref.resample_antialias(xin, out_desc.sizes, desc.scales, desc.input_pixel_offsets, desc.output_pixel_offsets)
    op = compile_resample3(desc, device=device, kernel=kernel)
    atol, why = LINEAR_TOLERANCE[in_desc.data_type]
    run_checked(
        device, lambda ins, o: op(ins["input"], o), {"input": (in_desc, raw)}, out_desc, want, atol=atol, why=why
    )
    return op


def element_kernel(dt: DataType) -> str:
    return "aa_element" if dt == F32 else "aa_element_atomic"


def fallback(dt: DataType, out_desc: TensorDesc, cpu: bool = True) -> str:
    """The plan's one-thread-an-output path: on CPU adapters aa_element_words for 8/16-bit outputs
    with an axis of stride 1 (or a single element), else (and on GPUs) element_kernel's."""
    st, sizes = out_desc.element_strides, out_desc.sizes
    rows = any(v == 1 and n > 1 for v, n in zip(st, sizes)) or all(n == 1 for n in sizes)
    return "aa_element_words" if cpu and dt != F32 and rows else element_kernel(dt)


@pytest.mark.parametrize("dt", (I8, U8), ids=lambda d: d.name.lower())
def test_8bit_ties_round_to_even(device, dt, rng):
    """Antialiased 1/2 weighs its 4 x 4 taps by products of 1/8 and 3/8: every float32 sum is exact
    and about one output in 64 is an exact tie (k + 0.5). Every antialias kernel (rounding through
    wgsl/common/bytes.wgsl's round_byte) gives the reference's round-half-to-even bit for bit."""
    in_desc, out_desc = TensorDesc(dt, (2, 3, 64, 64)), TensorDesc(dt, (2, 3, 32, 32))
    x = values(dt, in_desc.sizes, rng)
    desc = desc3(in_desc, out_desc)
    args = (out_desc.sizes, desc.scales, desc.input_pixel_offsets, desc.output_pixel_offsets)
    exact = ref.resample_antialias(x.astype(np.float32), *args)
    assert np.count_nonzero(exact - np.floor(exact) == 0.5) > 40, "the case has too few exact ties"
    want = ref.resample_antialias(x, *args)
    inputs = {"input": (in_desc, tensor_bytes(in_desc, x))}
    for kernel in ("aa_pat", "aa_taps", "aa_rows", "aa_tile", "aa_element_atomic"):
        op = compile_resample3(desc, device=device, kernel=kernel)
        run_checked(device, lambda ins, o: op(ins["input"], o), inputs, out_desc, want)
        assert op.plan.kernels == [kernel]


@pytest.mark.parametrize("dt", TYPES, ids=lambda d: d.name.lower())
@pytest.mark.parametrize(
    "sizes, out",
    [
        ((2, 3, 20, 36), (2, 3, 10, 12)),  # 1/2 and 1/3
        ((1, 2, 33, 72), (1, 2, 9, 16)),  # 1/3.7 and 1/4.5
        ((1, 1, 12, 40), (1, 1, 18, 8)),  # H upsampled (plain linear), W 1/5
        ((50,), (12,)),
        ((7, 9), (3, 4)),
        ((3, 10, 8), (3, 5, 4)),
        ((2, 1, 25, 30), (2, 1, 10, 12)),  # 0.4
        ((1, 2, 70, 30), (1, 2, 35, 8)),  # aa_rows: 5 bands of 8 rows, the last one partial
    ],
)
def test_every_path_every_type(device, dt, sizes, out, rng):
    in_desc, out_desc = TensorDesc(dt, sizes), TensorDesc(dt, out)
    # (aa_taps for float32 and uint8 here: float16 and int8 take it in test_strided_inputs_and_outputs,
    # which keeps CI's cold shader compiles within budget)
    kernels = ("aa_taps",) * (dt in (F32, U8)) + ("aa_rows", "aa_tile", element_kernel(dt))
    for kernel in kernels:
        if kernel == "aa_taps" and sizes[-1] / out[-1] > 4:  # 9 or more taps along w
            with pytest.raises(PlanError, match="taps along w .aa_taps holds at most 8"):
                check(device, kernel, in_desc, out_desc, rng)
            continue
        op = check(device, kernel, in_desc, out_desc, rng)
        assert op.plan.kernels == [kernel]


@pytest.mark.parametrize("dt", TYPES, ids=lambda d: d.name.lower())
def test_taps_bands_of_rows(device, dt, rng, monkeypatch):
    """aa_taps with several output rows a thread (RB): every band height, the last band partial
    (23 output rows), on a padded input and a window of a larger output."""
    import dmlwgsl.ops._resample_antialias as aa

    monkeypatch.setattr(aa, "_TAPS_THREADS", 1)  # the tallest band whatever the size
    for bands in ((8,), (4,), (2,)):
        monkeypatch.setattr(aa, "_TAPS_BANDS", bands)
        in_desc = TensorDesc(dt, (1, 2, 47, 40), strides=(4400, 2200, 44, 1))
        out_desc = TensorDesc(dt, (1, 2, 23, 16), strides=(1000, 500, 20, 1))
        op = check(device, "aa_taps", in_desc, out_desc, rng)
        s = op.plan.steps[0]
        assert s.constants_dict["RB"] == bands[0] and walk(s)[1:3] == (-(-23 // bands[0]), bands[0])


@pytest.mark.parametrize("dt", TYPES, ids=lambda d: d.name.lower())
@pytest.mark.parametrize("pattern", ("nhwc", "padded", "broadcast", "window"))
def test_strided_inputs_and_outputs(device, dt, pattern, rng):
    sizes, out = (2, 3, 18, 28), (2, 3, 8, 12)
    in_desc = strided_desc(dt, sizes, pattern)
    out_desc = strided_desc(dt, out, "window" if pattern == "broadcast" else pattern, output=True)
    op = check(device, None, in_desc, out_desc, rng)
    # f32 at any strides; 8/16-bit outputs: aa_rows and aa_tile only in rows of whole words, aa_taps
    # in any rows along w stride 1 (its GW form where they are not whole words)
    pw = 4 // dt.size_in_bytes
    st = out_desc.element_strides
    rows_ok = not (dt != F32 and (st[-1] != 1 or any(v % pw for v in st[:-1])))
    taps_ok = dt == F32 or st[-1] == 1
    # aa_pat where the scales give a tap pattern (here on a CPU adapter, which takes every form: 8
    # output rows at 4/9 fit a band of 3 and 3/7 six columns, with 4 and 8 for float32 only), else
    # aa_taps wherever it runs, except that a CPU adapter takes aa_rows for 8/16-bit outputs of whole
    # words (measured faster there)
    pat = op.plan.kernels == ["aa_pat"]
    assert pat or "aa_pat could not run here" in op.plan.why
    cpu = Capabilities.from_device(device).is_cpu
    cpu_rows = cpu and dt != F32 and rows_ok and not pat
    want = "aa_pat" if pat else "aa_rows" if cpu_rows else "aa_taps" if taps_ok else fallback(dt, out_desc, cpu)
    assert op.plan.kernels == [want] and (not pat or Capabilities.from_device(device).is_cpu)
    if want == "aa_taps":
        assert op.plan.steps[0].constants_dict["GW"] == int(not rows_ok)
    if taps_ok:
        check(device, "aa_taps", in_desc, out_desc, rng)
    check(device, element_kernel(dt), in_desc, out_desc, rng)
    if "aa_tile could not run" not in op.plan.why and not pat and want != "aa_element_words":
        try:
            check(device, "aa_tile", in_desc, out_desc, rng)
        except PlanError as e:  # (aa_rows' and aa_taps' plans do not say why aa_tile is not taken)
            assert (cpu_rows or want == "aa_taps") and "aa_tile cannot run" in str(e)
    if rows_ok:
        check(device, "aa_rows", in_desc, out_desc, rng)
    assert want != element_kernel(dt) or "aa_rows could not run" in op.plan.why
    if want == "aa_element_words":  # (packed NHWC outputs: one row along c, w, h and n)
        assert op.plan.steps[0].uniforms_dict["ew_merged"] == 4


@pytest.mark.parametrize("dt", TYPES, ids=lambda d: d.name.lower())
@pytest.mark.parametrize("kernel", ("aa_rows", "aa_taps"))
def test_word_rows_partial_words_and_gaps(device, dt, kernel, rng):
    """aa_rows and aa_taps with output rows of 9 elements every 12: the last word of a row is partly
    a gap, which run_checked's poison must keep (a read-modify-write no other thread races)."""
    in_desc = TensorDesc(dt, (2, 3, 20, 27))
    out_desc = TensorDesc(dt, (2, 3, 10, 9), (3 * 10 * 12, 10 * 12, 12, 1))
    op = check(device, kernel, in_desc, out_desc, rng)
    assert op.plan.kernels == [kernel]


#: aa_taps' GW form: 8/16-bit output rows that are not whole words. (input sizes, input strides or
#: None, output sizes, output strides or None, scales or None)
ODD_ROWS = [
    ((40, 38), None, (30, 29), None, None),  # rank 2, rows of 29 elements packed: every row's head differs
    ((6, 7, 75), None, (3, 2, 25), None, None),  # rank 3, n and c filtered (NC) as well
    ((2, 3, 21, 31), (3 * 21 * 33, 21 * 33, 33, 1), (2, 3, 14, 8), (3 * 14 * 11, 14 * 11, 11, 1), (1, 1, 2 / 3, 1 / 4)),
    ((3, 2, 9, 66), None, (3, 2, 9, 26), None, (1, 1, 1, 0.4)),  # h not filtered; float16: whole words
    ((13,), None, (5,), (2,), None),  # rank 1: a strided w (no rows along w stride 1): aa_element_atomic
]


@pytest.mark.parametrize("dt", (F16, I8, U8), ids=lambda d: d.name.lower())
@pytest.mark.parametrize("case", range(len(ODD_ROWS)))
def test_rows_not_whole_words(device, dt, case, rng):
    """aa_taps' GW form and aa_pat's IA / OA forms, requested and chosen by the plan: 8/16-bit output
    rows of odd lengths, row strides and windows that are not whole words (whole words stored, shared
    words merged with atomics, the gaps' poison kept), input rows that are not whole words (padded,
    odd lengths), 1-4 dims, the n and c axes filtered (aa_taps' NC)."""
    si, ist, so, ost, scales = ODD_ROWS[case]
    in_desc, out_desc = TensorDesc(dt, si, ist), TensorDesc(dt, so, ost)
    if ost is not None and ost[-1] != 1:
        op = check(device, None, in_desc, out_desc, rng, scales=scales)
        assert op.plan.kernels == ["aa_element_atomic"] and "do not run along w stride 1" in op.plan.why
        return
    pw = 4 // dt.size_in_bytes
    words = all(v % pw == 0 for v in out_desc.element_strides[:-1])
    in_words = all(v % pw == 0 for v in in_desc.element_strides[:-1])
    for kernel in ("aa_taps", "aa_pat", None):
        try:
            op = check(device, kernel, in_desc, out_desc, rng, scales=scales)
        except PlanError as e:  # no tap pattern, or the n or c axis filtered
            assert kernel == "aa_pat" and ("do not step by" in str(e) or "n or c axis" in str(e)), e
            continue
        c = op.plan.steps[0].constants_dict
        if kernel is None and words:
            continue  # (rows of whole words: the plans of test_strided_inputs_and_outputs)
        if op.plan.kernels == ["aa_pat"]:
            assert (c["IA"], c["OA"]) == (int(not in_words), int(not words)), c
        else:
            assert op.plan.kernels == ["aa_taps"] and c["GW"] == int(not words), op.plan.why
            assert c["NC"] == int(len(si) == 3)


@pytest.mark.parametrize("dt", (F16, U8), ids=lambda d: d.name.lower())
def test_taps_rows_not_whole_words_bands(device, dt, rng, monkeypatch):
    """The GW form with bands of 8 and 4 rows (a row stride of 17 elements: the heads change from row
    to row inside a band, the columns' taps reloaded), the last band partial, and an output 3 elements
    past a word."""
    import dmlwgsl.ops._resample_antialias as aa

    monkeypatch.setattr(aa, "_TAPS_THREADS", 1)  # the tallest band whatever the size
    for bands in ((8,), (4,)):
        monkeypatch.setattr(aa, "_TAPS_BANDS", bands)
        in_desc, out_desc = TensorDesc(dt, (1, 2, 47, 40)), TensorDesc(dt, (1, 2, 23, 17))
        op = check(device, "aa_taps", in_desc, out_desc, rng)
        assert op.plan.steps[0].constants_dict["RB"] == bands[0] and op.plan.steps[0].constants_dict["GW"] == 1
    desc = desc3(in_desc, out_desc)
    x = values(dt, in_desc.sizes, rng)
    want = ref.resample_antialias(x, out_desc.sizes, desc.scales, desc.input_pixel_offsets, desc.output_pixel_offsets)
    atol, why = LINEAR_TOLERANCE[dt]
    op = compile_resample3(desc, device=device, kernel="aa_taps")
    inputs = {"input": (in_desc, tensor_bytes(in_desc, x))}
    odd = {"input_offset": dt.size_in_bytes, "output_offset": 64 + 3 * dt.size_in_bytes}
    run_checked(device, lambda ins, o: op(ins["input"], o), inputs, out_desc, want, atol=atol, why=why, **odd)


def _nhwc(dt: DataType, sizes, alloc=None) -> TensorDesc:
    """An NCHW description over channels-last memory (``alloc``: the allocated n, h, w, c)."""
    n, h, w, c = alloc or (sizes[0], sizes[2], sizes[3], sizes[1])
    return TensorDesc(dt, sizes, (h * w * c, 1, w * c, c))


@pytest.mark.parametrize("dt", (F16, I8, U8), ids=lambda d: d.name.lower())
def test_element_words(device, dt, rng):
    """aa_element_words, requested and chosen by the plan: a packed NHWC output (one row along c, w,
    h and n: every word stored whole but the tensor's ends) with c filtered, an NHWC window (rows of
    3 channels broken by gaps), rows of odd lengths with more taps along w than aa_taps holds (3
    axes merged into one row), ranks 1-3, an input and output off word boundaries."""
    cases = [  # (input, output, output axes merged into a row)
        (_nhwc(dt, (2, 5, 18, 28)), _nhwc(dt, (2, 3, 8, 12)), 4),
        (_nhwc(dt, (1, 3, 17, 21)), _nhwc(dt, (1, 3, 9, 7), (1, 9, 8, 5)), 1),
        (TensorDesc(dt, (3, 20, 77)), TensorDesc(dt, (3, 10, 7)), 3),
        (TensorDesc(dt, (90,)), TensorDesc(dt, (9,)), 1),
        (TensorDesc(dt, (5, 50), (64, 1)), TensorDesc(dt, (2, 5), (7, 1)), 1),
    ]
    for in_desc, out_desc, merged in cases:
        # GPUs take aa_element_atomic by default (aa_element_words measured slower on the H200)
        gpu = plan_resample_antialias(desc3(in_desc, out_desc), Capabilities.profile("h100"))
        assert gpu.kernels == ["aa_element_atomic"] and "aa_taps cannot run here" in gpu.why, gpu.why
        cpu = Capabilities.from_device(device).is_cpu
        for kernel in ("aa_element_words",) + ((None,) if cpu else ()):
            op = check(device, kernel, in_desc, out_desc, rng)
            u = op.plan.steps[0].uniforms_dict
            assert op.plan.kernels == ["aa_element_words"] and u["ew_merged"] == merged, u
    desc = desc3(*cases[0][:2])
    x = values(dt, desc.input.sizes, rng)
    args = (desc.output.sizes, desc.scales, desc.input_pixel_offsets, desc.output_pixel_offsets)
    want = ref.resample_antialias(read_tensor(tensor_bytes(desc.input, x), desc.input), *args)
    atol, why = LINEAR_TOLERANCE[dt]
    op = compile_resample3(desc, device=device, kernel="aa_element_words")
    inputs = {"input": (desc.input, tensor_bytes(desc.input, x))}
    odd = {"input_offset": 3 * dt.size_in_bytes, "output_offset": 64 + dt.size_in_bytes}
    run_checked(device, lambda ins, o: op(ins["input"], o), inputs, desc.output, want, atol=atol, why=why, **odd)
    strided = desc3(TensorDesc(dt, (13,)), TensorDesc(dt, (5,), (2,)))
    with pytest.raises(PlanError, match="aa_element_words is for 8- and 16-bit elements with an output axis"):
        compile_resample3(strided, device=device, kernel="aa_element_words")


@pytest.mark.parametrize("dt", TYPES, ids=lambda d: d.name.lower())
@pytest.mark.parametrize(
    "sizes, out, scales",
    [
        ((40,), (20,), None),  # rank 1
        ((30, 44), (10, 12), None),  # rank 2, 1/3 and 0.27
        ((3, 12, 50), (3, 36, 20), None),  # rank 3: h upsampled 3x (linear), w 0.4
        ((1, 1, 9, 33), (1, 1, 30, 12), None),  # h upsampled 3.3x: 7 output rows share an input row
        ((1, 2, 17, 31), (1, 2, 9, 8), (1, 1, 0.53, 0.26)),  # scales not the size ratio
        ((1, 2, 60, 16), (1, 2, 6, 8), None),  # 19-20 taps along h: aa_taps' row loop (TH = 0)
    ],
)
@pytest.mark.parametrize("kernel", ("aa_rows", "aa_taps"))
def test_row_paths_ranks_and_mixed_axes(device, dt, sizes, out, scales, kernel, rng):
    op = check(device, kernel, TensorDesc(dt, sizes), TensorDesc(dt, out), rng, scales=scales)
    assert op.plan.kernels == [kernel]


@pytest.mark.parametrize("kernel", ("aa_taps", "aa_rows", "aa_element"))
def test_non_finite_inputs_reach_only_their_outputs(device, kernel, rng):
    """An Inf or NaN input pixel reaches only the outputs whose taps cover it: aa_taps loads taps past
    an output's count (and rows past its h count) too, and must discard them without multiplying."""
    in_desc, out_desc = TensorDesc(F32, (1, 2, 24, 40)), TensorDesc(F32, (1, 2, 12, 10))
    x = values(F32, in_desc.sizes, rng)
    x[0, 0, 5, 7], x[0, 0, 17, 30], x[0, 1, 0, 0], x[0, 1, 23, 39] = np.inf, -np.inf, np.nan, np.inf
    op = check(device, kernel, in_desc, out_desc, rng, x=x)
    assert op.plan.kernels == [kernel]


@pytest.mark.parametrize("dt", TYPES, ids=lambda d: d.name.lower())
def test_pattern_kernel(device, dt, rng, monkeypatch):
    """aa_pat (requested, every type): windows of 16-byte vectors and of words, vector and element
    stores, the tallest bands with a partial last band, scales 1/2 and 2/3, a padded input whose
    8-bit rows end in a partial word, an output window whose last group is partial, h upsampled;
    NaN and Inf inputs where some slots weigh 0 (SAFE = 0) for the float types."""
    import dmlwgsl.ops._resample_antialias as aa

    monkeypatch.setattr(aa, "_PAT_THREADS", 1)  # the tallest band whatever the size
    cases = [  # (input, output, scales or None, the structure asserted)
        (TensorDesc(dt, (2, 3, 21, 48)), TensorDesc(dt, (2, 3, 10, 24)), None, {"VW": 1, "SV": 1}),
        (
            TensorDesc(dt, (1, 2, 27, 38), strides=(2 * 27 * 40, 27 * 40, 40, 1)),
            TensorDesc(dt, (1, 2, 18, 19), strides=(2 * 18 * 20, 18 * 20, 20, 1)),
            (1, 1, 2 / 3, 0.5),
            {"VW": 0},
        ),
    ]
    if dt in (F32, U8):
        cases.append((TensorDesc(dt, (3, 12, 48)), TensorDesc(dt, (3, 36, 24)), None, {"KW": 4}))
    for in_desc, out_desc, scales, want in cases:
        op = check(device, "aa_pat", in_desc, out_desc, rng, scales=scales)
        c = op.plan.steps[0].constants_dict
        assert op.plan.kernels == ["aa_pat"] and {k: c[k] for k in want} == want, (in_desc, c)
        assert c["RB"] == 2, c  # the tallest band
    if dt in (F32, F16):
        in_desc, out_desc = TensorDesc(dt, (1, 3, 41, 64)), TensorDesc(dt, (1, 3, 20, 32))
        x = values(dt, in_desc.sizes, rng)
        x[0, 0, 5, 7], x[0, 1, 17, 30], x[0, 2, 0, 0], x[0, 2, 40, 63] = np.inf, -np.inf, np.nan, np.inf
        op = check(device, "aa_pat", in_desc, out_desc, rng, x=x)
        assert op.plan.steps[0].constants_dict["SAFE"] == 0


@pytest.mark.parametrize("dt", TYPES, ids=lambda d: d.name.lower())
def test_pattern_six_columns_three_rows(device, dt, rng):
    """aa_pat at 3/4 (requested, and the CPU plan): 6 output columns a thread (4 and 8 give no
    pattern) and bands of 3 rows (2 and 1 give none over 150 rows), rows of odd lengths (IA, OA) and of whole words
    (8-bit: 6 outputs are still not whole words, OA), a padded input and an output window."""
    cases = [
        (TensorDesc(dt, (2, 1, 200, 77)), TensorDesc(dt, (2, 1, 150, 57))),  # (fewer rows fit 2 a band)
        (TensorDesc(dt, (1, 2, 40, 64), (2 * 40 * 68, 40 * 68, 68, 1)), TensorDesc(dt, (1, 2, 30, 48))),
        (TensorDesc(dt, (1, 1, 44, 36)), TensorDesc(dt, (1, 1, 33, 27), (33 * 30, 33 * 30, 30, 1))),
    ]
    cpu = Capabilities.from_device(device).is_cpu
    for in_desc, out_desc in cases:
        for kernel in ("aa_pat",) + (None,) * cpu:
            op = check(device, kernel, in_desc, out_desc, rng, scales=(1, 1, 0.75, 0.75))
            c = op.plan.steps[0].constants_dict
            # (float32 windows step by elements: 4 columns step by 5 and fit these widths in 8 slots)
            assert op.plan.kernels == ["aa_pat"] and (c["PV"] == 6 or dt == F32) and c["SV"] == 0, c
            assert c["RB"] == 3 or out_desc.sizes[2] < 150, c
            words = all(v % (4 // dt.size_in_bytes) == 0 for v in out_desc.element_strides[:-1])
            assert c["OA"] == int(dt in (I8, U8) or not words), c


def test_where_aa_pat_runs_and_where_not():
    """GPU plans take aa_pat where the scales give a tap pattern (float32 only with windows of
    16-byte vectors); CPU plans keep their kernels; each rule refuses a request, named."""
    gpu, cpu = Capabilities.profile("h100"), Capabilities.profile("lavapipe")
    vec = desc3(TensorDesc(F32, (8, 64, 240, 240)), TensorDesc(F32, (8, 64, 120, 120)))
    p = plan_resample_antialias(vec, gpu)
    c = p.steps[0].constants_dict
    assert p.kernels == ["aa_pat"] and (c["PV"], c["RB"], c["VW"], c["SV"]) == (4, 2, 1, 1), c
    assert (c["KW"], c["KH"], c["NR"], c["SAFE"]) == (4, 4, 6, 1) and "windows of 16-byte vectors" in p.steps[0].why
    assert walk(p.steps[0]) == (30, 60, 2, 8 * 64 * 30 * 60)
    assert dict(p.details)["pattern"] == (4, 2, True)
    u8 = desc3(TensorDesc(U8, (8, 64, 240, 240)), TensorDesc(U8, (8, 64, 120, 120)))
    c = plan_resample_antialias(u8, gpu).steps[0].constants_dict
    assert (c["PV"], c["RB"], c["VW"]) == (8, 2, 1)
    # float32 rows of 45 elements are not whole vectors: aa_taps on a GPU (measured faster than word
    # windows there); a CPU adapter takes every form with the tallest band (words, 2 rows)
    odd = desc3(TensorDesc(F32, (2, 4, 30, 45)), TensorDesc(F32, (2, 4, 15, 15)))
    p = plan_resample_antialias(odd, gpu)
    assert p.kernels == ["aa_taps"] and "aa_pat could not run here: float32 rows that are not whole" in p.why
    c = plan_resample_antialias(odd, cpu).steps[0].constants_dict
    assert (c["VW"], c["RB"]) == (0, 2)
    small = desc3(TensorDesc(U8, (1, 1, 8, 32)), TensorDesc(U8, (1, 1, 4, 16)))
    assert plan_resample_antialias(small, cpu).steps[0].constants_dict["RB"] == 2
    assert plan_resample_antialias(small, gpu).steps[0].constants_dict["RB"] == 1  # (too few threads for 2)
    # 8/16-bit rows that give no pattern: aa_rows on a CPU adapter, aa_taps on a GPU, each saying why
    nopat = desc3(TensorDesc(U8, (2, 3, 18, 28)), TensorDesc(U8, (2, 3, 8, 12)))
    p = plan_resample_antialias(nopat, cpu)
    assert p.kernels == ["aa_rows"] and "aa_pat could not run here" in p.why
    assert plan_resample_antialias(nopat, gpu).kernels == ["aa_taps"]
    quarter = desc3(TensorDesc(F32, (8, 64, 240, 240)), TensorDesc(F32, (8, 64, 60, 60)))
    p = plan_resample_antialias(quarter, gpu)
    assert p.kernels == ["aa_taps"] and "8 w slots an output (float32 takes at most 6)" in p.why
    assert plan_resample_antialias(odd, gpu, kernel="aa_pat").steps[0].constants_dict["VW"] == 0
    rules = [
        (desc3(TensorDesc(F32, (1, 4, 6, 8)), TensorDesc(F32, (1, 2, 3, 4))), "the n or c axis is filtered"),
        (
            desc3(TensorDesc(U8, (1, 1, 20, 19), (76, 76, 38, 2)), TensorDesc(U8, (1, 1, 10, 19))),
            "UINT8 input rows do not run along w stride 1",
        ),
        (desc3(TensorDesc(F32, (1, 1, 20, 40)), TensorDesc(F32, (1, 1, 10, 3))), "taps along w"),
        (desc3(TensorDesc(U8, (1, 1, 20, 40)), TensorDesc(U8, (1, 1, 10, 24))), "do not step by whole input words"),
    ]
    # 8/16-bit rows that are not whole words: read across words (IA), stored shifted (OA), by
    # default on CPU adapters, on request on GPUs (which take aa_taps' GW form, measured there)
    odd = desc3(TensorDesc(U8, (1, 1, 20, 38)), TensorDesc(U8, (1, 1, 10, 19)))
    for caps, kernel in ((cpu, None), (gpu, "aa_pat")):
        p = plan_resample_antialias(odd, caps, kernel=kernel)
        c = p.steps[0].constants_dict
        assert p.kernels == ["aa_pat"] and (c["IA"], c["OA"], c["VW"]) == (1, 1, 0), c
    p = plan_resample_antialias(odd, gpu)
    assert p.kernels == ["aa_taps"] and p.steps[0].constants_dict["GW"] == 1
    assert "aa_pat could not run here: UINT8 rows that are not whole words" in p.why
    odd_in = desc3(TensorDesc(U8, (1, 1, 20, 38)), TensorDesc(U8, (1, 1, 10, 20)))  # (output rows whole words)
    assert plan_resample_antialias(odd_in, gpu).kernels == ["aa_taps"]
    for d, rule in rules:
        with pytest.raises(PlanError, match=f"aa_pat cannot run this description: .*{rule}"):
            plan_resample_antialias(d, gpu, kernel="aa_pat")
    loose = {"input": Placement(padded=False)}
    with pytest.raises(PlanError, match="not a multiple of 16 bytes"):
        plan_resample_antialias(vec, gpu, kernel="aa_pat", placements=loose)
    assert plan_resample_antialias(vec, gpu, placements=loose).kernels == ["aa_taps"]


def test_where_aa_rows_cannot_run(device, rng):
    """Each rule of aa_rows refuses a request with the rule named, and the default path runs instead."""
    cases = [  # (input, output, the rule, the default path: aa_taps where its own rules hold)
        ((F32, (1, 4, 6, 8)), (F32, (1, 2, 3, 4)), "the n or c axis is filtered", "aa_taps"),
        ((F32, (1, 1, 8, 160)), (F32, (1, 1, 4, 20)), "more than 12 taps along w", "aa_element"),
        ((F16, (1, 1, 3, 8)), (F16, (1, 1, 30, 4)), "20 output rows share an input row", "aa_taps"),
        ((U8, (1, 1, 20, 19)), (U8, (1, 1, 10, 9)), "UINT8 output rows are not whole 32-bit words", "aa_pat"),
        (
            (U8, (1, 1, 20, 38)),
            (U8, (1, 1, 10, 9)),
            "UINT8 output rows are not whole 32-bit words",
            "aa_element_words",
        ),
    ]
    for (dt, si), (_, so), rule, default in cases:
        op = check(device, None, TensorDesc(dt, si), TensorDesc(dt, so), rng)
        assert op.plan.kernels == [default]
        if default not in ("aa_taps", "aa_pat", "aa_element_words"):
            assert f"aa_rows could not run here either: {rule}" in op.plan.why
        with pytest.raises(PlanError, match=f"aa_rows cannot run this description: {rule}"):
            compile_resample3(op.desc, device=device, kernel="aa_rows")


def test_where_aa_taps_cannot_run(device, rng):
    """Each rule of aa_taps refuses a request with the rule named, and the element path runs instead."""
    cases = [
        ((F32, (1, 1, 8, 400)), (F32, (1, 1, 4, 20)), "40 taps along w"),
        ((F32, (1, 1, 8, 45)), (F32, (1, 1, 4, 9)), "9 taps along w"),
        ((U8, (1, 1, 20, 38)), (U8, (1, 1, 10, 9)), "9 taps along w"),
        (
            (I8, (1, 1, 8, 12), None),
            (I8, (1, 1, 4, 6), (48, 48, 12, 2)),
            "INT8 output rows do not run along w stride 1",
        ),
    ]
    for (dt, si, *ist), (_, so, *ost), rule in cases:
        in_desc = TensorDesc(dt, si, strides=ist[0] if ist else None)
        out_desc = TensorDesc(dt, so, strides=ost[0] if ost else None)
        op = check(device, None, in_desc, out_desc, rng)
        cpu = Capabilities.from_device(device).is_cpu
        assert op.plan.kernels == [fallback(dt, out_desc, cpu)] and f"aa_taps cannot run here: {rule}" in op.plan.why
        with pytest.raises(PlanError, match=f"aa_taps cannot run this description: {rule}"):
            compile_resample3(op.desc, device=device, kernel="aa_taps")


def test_where_aa_tile_cannot_run(device, rng):
    # antialiasing along c (4 -> 2): aa_tile filters h and w only
    op = check(device, None, TensorDesc(F32, (1, 4, 6, 8)), TensorDesc(F32, (1, 2, 3, 4)), rng)
    assert op.plan.kernels == ["aa_taps"] and op.plan.steps[0].constants_dict["NC"] == 1
    with pytest.raises(PlanError, match="aa_tile cannot run this description: the n or c axis"):
        compile_resample3(op.desc, device=device, kernel="aa_tile")
    # uint8 rows of 9 bytes are not whole words (38 -> 9: 9 taps along w, more than aa_taps holds)
    op = check(device, None, TensorDesc(U8, (1, 1, 20, 38)), TensorDesc(U8, (1, 1, 10, 9)), rng)
    assert op.plan.kernels == ["aa_element_words"]
    with pytest.raises(PlanError, match="aa_tile cannot run this description: .*whole 32-bit words"):
        compile_resample3(op.desc, device=device, kernel="aa_tile")
    # scale 1/40: a tile's input region would not fit workgroup memory
    op = check(device, None, TensorDesc(F32, (1, 1, 80, 400)), TensorDesc(F32, (1, 1, 2, 10)), rng)
    assert op.plan.kernels == ["aa_element"] and "fits" in op.plan.why
    with pytest.raises(PlanError, match="aa_tile cannot run this description: no tile"):
        compile_resample3(op.desc, device=device, kernel="aa_tile")


def test_offsets_and_scales_not_equal_to_the_size_ratio(device, rng):
    # align_corners-like offsets, and a scale that crops
    in_desc, out_desc = TensorDesc(F16, (1, 1, 17, 30)), TensorDesc(F16, (1, 1, 6, 8))
    check(
        device,
        "aa_tile",
        in_desc,
        out_desc,
        rng,
        scales=(1, 1, 0.3125, 0.2414),
        in_off=(0.5, 0.5, 0, 0.25),
        out_off=(-0.5, -0.5, 0, 1.0),
    )
    check(
        device,
        "aa_element_atomic",
        in_desc,
        out_desc,
        rng,
        scales=(1, 1, 0.3125, 0.2414),
        in_off=(0.5, 0.5, 0, 0.25),
        out_off=(-0.5, -0.5, 0, 1.0),
    )


def test_tensors_at_odd_offsets(device, rng):
    """run_checked with input and output at element-aligned, not 16-aligned, offsets."""
    for dt in (F16, U8):
        in_desc, out_desc = TensorDesc(dt, (1, 2, 12, 16)), TensorDesc(dt, (1, 2, 6, 8))
        desc = desc3(in_desc, out_desc)
        x = values(dt, in_desc.sizes, rng)
        want = ref.resample_antialias(
            x, out_desc.sizes, desc.scales, desc.input_pixel_offsets, desc.output_pixel_offsets
        )
        atol, why = LINEAR_TOLERANCE[dt]
        # aa_rows stores whole words: its output starts on a word, the input anywhere
        for kernel, out_elems in ((None, 3), ("aa_rows", 4 // dt.size_in_bytes)):
            op = compile_resample3(desc, device=device, kernel=kernel)
            run_checked(
                device,
                lambda ins, o: op(ins["input"], o),
                {"input": (in_desc, tensor_bytes(in_desc, x))},
                out_desc,
                want,
                atol=atol,
                why=why,
                input_offset=2 * dt.size_in_bytes + 16,
                output_offset=64 + out_elems * dt.size_in_bytes,
            )
        # the plan says why before any GPU work: an output 3 elements past a word
        odd = {"output": Placement(residual=(64 + 3 * dt.size_in_bytes) % 256)}
        with pytest.raises(PlanError, match="aa_rows cannot run this description: .* offset in words"):
            plan_resample_antialias(desc, Capabilities.profile("lavapipe"), kernel="aa_rows", placements=odd)


def test_numpy_one_liner(device):
    x = np.arange(2 * 3 * 16 * 24, dtype=np.float32).reshape(2, 3, 16, 24) / 100
    got = dmlwgsl.resample(x, (2, 3, 8, 6), mode="linear", antialias=True, device=device)
    want = ref.resample_antialias(x, (2, 3, 8, 6), (1, 1, 0.5, 0.25), (0.5,) * 4, (-0.5,) * 4)
    atol, why = LINEAR_TOLERANCE[F32]
    assert_matches(got, want, atol=atol, why=why)
    # nearest ignores antialias: the same as without
    near = dmlwgsl.resample(x, (2, 3, 8, 6), antialias=True, device=device)
    assert_matches(near, dmlwgsl.resample(x, (2, 3, 8, 6), device=device))


def test_one_pipeline_serves_every_shape(device, rng):
    a = check(device, "aa_tile", TensorDesc(F32, (1, 2, 20, 36)), TensorDesc(F32, (1, 2, 10, 12)), rng)
    b = check(device, "aa_tile", TensorDesc(F32, (2, 1, 40, 48)), TensorDesc(F32, (2, 1, 20, 16)), rng)
    assert a.cache_keys == b.cache_keys
    # aa_rows: one pipeline per accumulator count (here 2: scale 1/2 and 1/3 along h)
    a = check(device, "aa_rows", TensorDesc(U8, (1, 2, 20, 36)), TensorDesc(U8, (1, 2, 10, 12)), rng)
    b = check(device, "aa_rows", TensorDesc(U8, (2, 1, 45, 48)), TensorDesc(U8, (2, 1, 15, 16)), rng)
    assert a.cache_keys == b.cache_keys
    # aa_taps' GW form and aa_element_words: rows' lengths, heads and strides are uniforms
    for kernel in ("aa_taps", "aa_element_words"):
        a = check(device, kernel, TensorDesc(I8, (1, 2, 20, 19)), TensorDesc(I8, (1, 2, 10, 9)), rng)
        b = check(
            device, kernel, TensorDesc(I8, (3, 1, 30, 27)), TensorDesc(I8, (3, 1, 15, 13), (300, 300, 17, 1)), rng
        )
        assert a.cache_keys == b.cache_keys, kernel


# -- dispatch and validation ------------------------------------------------------------------------------
def test_what_is_not_filtered_is_resample2(device):
    i, o = TensorDesc(F32, (1, 1, 4, 4)), TensorDesc(F32, (1, 1, 8, 6))
    up = desc3(i, o)  # every Scale >= 1: plain linear
    assert not up.filters and isinstance(compile_resample(up, device=device), ResampleOperator)
    near = Resample3Desc(
        i, TensorDesc(F32, (1, 1, 2, 2)), "nearest", "increasing", (1, 1, 0.5, 0.5), (0.5,) * 4, (-0.5,) * 4, True
    )
    assert not near.filters and isinstance(compile_resample(near, device=device), ResampleOperator)
    down = desc3(i, TensorDesc(F32, (1, 1, 2, 2)))
    assert down.filters and isinstance(compile_resample(down, device=device), ResampleAntialiasOperator)
    with pytest.raises(PlanError, match="does not filter"):
        compile_resample3(up, device=device, kernel="aa_tile")


def test_validation_names_the_field():
    i, o = TensorDesc(F32, (1, 1, 4, 4)), TensorDesc(F32, (1, 1, 2, 2))
    d = desc3(i, o)
    with pytest.raises(DmlValidationError, match="antialiased: must be a bool"):
        Resample3Desc(
            i, o, "linear", "decreasing", d.scales, d.input_pixel_offsets, d.output_pixel_offsets, 1
        ).validate()
    with pytest.raises(DmlValidationError, match=r"scales\[2\]: must be > 0"):
        desc3(i, o, scales=(1, 1, 0, 0.5)).validate()
    with pytest.raises(DmlValidationError, match="output.data_type"):
        desc3(i, TensorDesc(F16, (1, 1, 2, 2))).validate()


def walk(step):
    """aa_rows' geometry uniforms: (column groups, bands, band rows, threads)."""
    u = step.uniforms_dict
    return (u["column_groups"], u["bands"], u["band_rows"], u["walk_threads"])


@pytest.mark.parametrize("profile", PROFILES)
def test_plans_as_values(profile):
    caps = Capabilities.profile(profile)
    d = desc3(TensorDesc(F32, (8, 64, 256, 256)), TensorDesc(F32, (8, 64, 128, 128)))
    # the default: aa_pat (test_where_aa_pat_runs_and_where_not); on request aa_taps, one thread per
    # output word and 8 output rows (2**20 threads), 4 x 4 taps
    assert plan_resample_antialias(d, caps).kernels == ["aa_pat"]
    e = plan_resample_antialias(d, caps, kernel="aa_taps")
    assert e.kernels == ["aa_taps"] and e.dispatches == 1 and e.steps[0].invocations == 8 * 64 * 128 * 16
    assert walk(e.steps[0]) == (128, 16, 8, 8 * 64 * 128 * 16)
    assert e.steps[0].constants_dict["CW"] == 1 and e.steps[0].constants_dict["RB"] == 8
    # fewer rows: the most rows a thread that leave 2**19 threads (2**21 / 4), or one
    quarter = plan_resample_antialias(desc3(TensorDesc(F32, (8, 64, 128, 256)), TensorDesc(F32, (8, 64, 64, 64))), caps,
                                      kernel="aa_taps")  # fmt: skip
    assert quarter.steps[0].constants_dict["RB"] == 4 and walk(quarter.steps[0])[1:3] == (16, 4)
    q = plan_resample_antialias(desc3(TensorDesc(U8, (2, 3, 90, 128)), TensorDesc(U8, (2, 3, 30, 32))), caps,
                                kernel="aa_taps")  # fmt: skip
    assert q.kernels == ["aa_taps"] and walk(q.steps[0]) == (8, 30, 1, 2 * 3 * 30 * 8)
    assert q.steps[0].constants_dict["CW"] == 4
    el = plan_resample_antialias(d, caps, kernel="aa_element")
    assert el.kernels == ["aa_element"] and el.steps[0].invocations == 8 * 64 * 128 * 128
    p = plan_resample_antialias(d, caps, kernel="aa_tile")
    u = p.steps[0].uniforms_dict
    tw, th = u["tile_w"], u["tile_h"]
    groups = 8 * 64 * (128 // tw) * (128 // th)
    assert p.steps[0].invocations == groups * 256
    assert p.bytes_moved == (8 * 64 * 256 * 256 + 8 * 64 * 128 * 128) * 4
    assert dict(p.details)["taps_per_axis"] == (1, 1, 4, 4)
    # only the pixels under some tap count: Scale 0.1 with 10 outputs of 400 reads columns 0..104
    sparse = desc3(TensorDesc(U8, (1, 1, 4, 400)), TensorDesc(U8, (1, 1, 4, 10)), scales=(1, 1, 1, 0.1))
    assert plan_resample_antialias(sparse, caps).bytes_moved == 4 * 105 + 40
    with pytest.raises(PlanError, match="aa_element_atomic is for 8- and 16-bit"):
        plan_resample_antialias(d, caps, kernel="aa_element_atomic")
    with pytest.raises(PlanError, match="no path 'fast'"):
        plan_resample_antialias(d, caps, kernel="fast")
    c = desc3(TensorDesc(F32, (1, 4, 6, 8)), TensorDesc(F32, (1, 2, 3, 4)))
    with pytest.raises(PlanError, match="aa_tile cannot run this description: the n or c axis is filtered"):
        plan_resample_antialias(c, caps, kernel="aa_tile")
    # aa_rows: one output word per thread, bands of 16 rows while 2**17 threads remain
    r = plan_resample_antialias(d, caps, kernel="aa_rows")
    s = r.steps[0]
    assert r.kernels == ["aa_rows"] and r.bytes_moved == p.bytes_moved
    assert walk(s) == (128, 8, 16, 8 * 64 * 128 * 8) and s.invocations == 8 * 64 * 128 * 8
    assert s.constants_dict["KA"] == 2 and s.constants_dict["CW"] == 1
    h = plan_resample_antialias(desc3(TensorDesc(F16, (8, 64, 240, 240)), TensorDesc(F16, (8, 64, 60, 60))), caps,
                                kernel="aa_rows").steps[0]  # fmt: skip
    assert h.constants_dict["CW"] == 2 and walk(h) == (30, 15, 4, 8 * 64 * 30 * 15)
    # a description too small to fill the GPU at any band height: bands of 8
    small = plan_resample_antialias(desc3(TensorDesc(U8, (1, 3, 40, 48)), TensorDesc(U8, (1, 3, 20, 12))), caps,
                                    kernel="aa_rows")  # fmt: skip
    assert walk(small.steps[0]) == (3, 3, 8, 3 * 3 * 3)


def test_onnx_mapping():
    p = onnx_resize_to_resample((1, 1, 8, 8), scales=(1, 1, 0.5, 0.5), mode="linear", antialias=1)
    assert p.antialiased and isinstance(p.desc(TensorDesc(F32, (1, 1, 8, 8))), Resample3Desc)
    assert p.kwargs()["antialias"] is True
    n = onnx_resize_to_resample((1, 1, 8, 8), scales=(1, 1, 0.5, 0.5), mode="nearest", antialias=1)
    assert not n.antialiased  # antialias has no meaning for nearest
    with pytest.raises(OnnxResizeUnsupported, match="antialias: with coordinate_transformation_mode 'align_corners'"):
        onnx_resize_to_resample(
            (1, 1, 8, 8),
            scales=(1, 1, 0.5, 0.5),
            mode="linear",
            antialias=1,
            coordinate_transformation_mode="align_corners",
        )

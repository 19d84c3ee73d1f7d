"""Fuzz suite (hypothesis) for every operator, through the public compile_* APIs.

Valid descriptions (random sizes, data types, strided / broadcast / windowed layouts, element
offsets into the buffers) must give the reference's result bit for bit (linear Resample: within
ops/resample.py's LINEAR_TOLERANCE, with its reason), under ``run_checked``: poisoned output
between guard bands, two poisons, every input byte (and the bytes around it) unmodified.

Invalid descriptions (one field of a valid one broken) must raise DmlValidationError naming that
field, before any GPU work: the device's ``gpu_calls`` counter (buffers created, writes,
submissions) does not move.

Profiles: the CI profile runs by default (a few examples per op and backend, well under a minute
on 2 cores); ``pytest -m fuzz`` runs the long profile, 10,000 examples per op and backend.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from depth_space_cases import check_op
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmlwgsl
from dmlwgsl.ops.convolution_integer import dot4_available
from dmlwgsl.ops.depth_to_space import DEPTH_SPACE_TYPES
from dmlwgsl.ops.resample import LINEAR_TOLERANCE, AxisDirection, InterpolationMode
from dmlwgsl.reference import convolution_integer as ref_conv
from dmlwgsl.reference import depth_to_space as ref_d2s
from dmlwgsl.reference import resample as ref_rs
from dmlwgsl.reference import space_to_depth as ref_s2d
from dmlwgsl.reference.tensors import read_tensor
from dmlwgsl.tensor import DataType, DmlValidationError, TensorDesc
from dmlwgsl.testing import GUARD, random_bytes, run_checked, strided_desc

#: examples per op and backend: (valid, invalid) for the CI profile; the long one runs 10,000 each.
CI_EXAMPLES = (40, 80)
LONG_EXAMPLES = 10_000
PROFILES = [
    pytest.param("ci", id="ci"),
    pytest.param("long", id="long", marks=[pytest.mark.fuzz, pytest.mark.slow]),
]
IN_PATTERNS = ("packed", "nhwc", "padded", "broadcast", "window")
OUT_PATTERNS = ("packed", "nhwc", "padded", "window")


def _settings(profile: str, invalid: bool = False):
    n = LONG_EXAMPLES if profile == "long" else CI_EXAMPLES[invalid]
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=profile == "ci",  # CI reproduces; the long run explores
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def _offsets(draw, esize: int) -> tuple[int, int]:
    """Element-aligned byte offsets of the input and the output inside their buffers."""
    return 16 + esize * draw(st.integers(0, 5)), GUARD + esize * draw(st.integers(0, 5))


# ------------------------------------------------------------------------------------------------
# Valid descriptions
# ------------------------------------------------------------------------------------------------
@st.composite
def depth_space_cases(draw, op: str):
    dt = draw(st.sampled_from(sorted(DEPTH_SPACE_TYPES)))
    b = draw(st.integers(1, 4))
    order = draw(st.sampled_from(["DCR", "CRD"]))
    n = draw(st.integers(1, 3))
    if op == "depth_to_space":
        sizes = (n, b * b * draw(st.integers(1, 4)), draw(st.integers(1, 5)), draw(st.integers(1, 9)))
    else:
        sizes = (n, draw(st.integers(1, 5)), b * draw(st.integers(1, 4)), b * draw(st.integers(1, 6)))
    return dict(
        dt=dt,
        b=b,
        order=order,
        sizes=sizes,
        ip=draw(st.sampled_from(IN_PATTERNS)),
        op=draw(st.sampled_from(OUT_PATTERNS)),
        offsets=_offsets(draw, DataType(dt).size_in_bytes),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


def check_depth_space(device, op: str, c: dict) -> None:
    check_op(
        device,
        op,
        c["dt"],
        c["sizes"],
        c["b"],
        c["order"],
        np.random.default_rng(c["seed"]),
        lin=c["ip"],
        lout=c["op"],
        input_offset=c["offsets"][0],
        output_offset=c["offsets"][1],
    )


@st.composite
def resample_cases(draw):
    rank = draw(st.integers(1, 4))
    in_sizes = tuple(draw(st.integers(1, 6)) for _ in range(rank))
    out_sizes = tuple(draw(st.integers(1, 9)) for _ in range(rank))
    scales, in_off, out_off = [], [], []
    for i, o in zip(in_sizes, out_sizes):
        scales.append(draw(st.sampled_from([o / i, 0.5, 1.0, 1.5, 2.0, 3.0, 0.3, o / i * 1.25, 0.75])))
        in_off.append(draw(st.sampled_from([0.5, 0.0, -0.5, 0.25, 1.0])))
        out_off.append(draw(st.sampled_from([-0.5, 0.0, 0.5, -0.25])))
    dt = draw(st.sampled_from([DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8]))
    return dict(
        in_sizes=in_sizes,
        out_sizes=out_sizes,
        scales=tuple(scales),
        in_off=tuple(in_off),
        out_off=tuple(out_off),
        mode=draw(st.sampled_from(["nearest", "linear"])),
        dt=dt,
        direction=draw(st.sampled_from([None, AxisDirection.DECREASING, AxisDirection.INCREASING])),
        ip=draw(st.sampled_from(IN_PATTERNS)),
        op=draw(st.sampled_from(OUT_PATTERNS)),
        offsets=_offsets(draw, dt.size_in_bytes),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


def _resample_values(dt: DataType, desc: TensorDesc, rng) -> np.ndarray:
    """Input bytes: floats in [-8, 8] on a 1/64 grid (LINEAR_TOLERANCE is stated for them),
    integers over their whole range."""
    n = desc.total_tensor_size_in_bytes // dt.size_in_bytes
    if dt in (DataType.FLOAT32, DataType.FLOAT16):
        vals = (rng.integers(-512, 512, size=n) / 64).astype(dt.numpy_dtype)
    else:
        info = np.iinfo(dt.numpy_dtype)
        vals = rng.integers(info.min, info.max + 1, size=n).astype(dt.numpy_dtype)
    return vals.view(np.uint8)


def check_resample(device, c: dict) -> None:
    rng = np.random.default_rng(c["seed"])
    dt = c["dt"]
    in_desc = strided_desc(dt, c["in_sizes"], c["ip"])
    out_desc = strided_desc(dt, c["out_sizes"], c["op"], output=True)
    raw = _resample_values(dt, in_desc, rng)
    mode = InterpolationMode.parse(c["mode"])
    if c["direction"] is None:
        desc = dmlwgsl.Resample1Desc(in_desc, out_desc, mode, c["scales"], c["in_off"], c["out_off"])
        rule = "half_up"
    else:
        desc = dmlwgsl.Resample2Desc(in_desc, out_desc, mode, c["direction"], c["scales"], c["in_off"], c["out_off"])
        rule = desc.nearest_rule
    expected = ref_rs.resample(
        read_tensor(raw, in_desc), c["out_sizes"], c["mode"], c["scales"], c["in_off"], c["out_off"], rule
    ).astype(dt.numpy_dtype)
    tol = {}
    if mode == InterpolationMode.LINEAR and dt in LINEAR_TOLERANCE:
        atol, why = LINEAR_TOLERANCE[dt]
        tol = {"atol": atol, "why": why}
    op = dmlwgsl.compile_resample(desc, device=device)
    run_checked(
        device,
        lambda ins, out: op(ins["input"], out),
        {"input": (in_desc, raw)},
        out_desc,
        expected,
        input_offset=c["offsets"][0],
        output_offset=c["offsets"][1],
        **tol,
    )


@st.composite
def conv_cases(draw):
    one_d = draw(st.booleans())
    nsp = 1 if one_d else 2
    g = draw(st.integers(1, 3))
    cg = draw(st.integers(1, 4))
    mg = draw(st.integers(1, 3))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    dil = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    pads0 = tuple(draw(st.integers(0, 2)) for _ in range(nsp))
    pads1 = tuple(draw(st.integers(0, 2)) for _ in range(nsp))
    spatial = []
    for d in range(nsp):
        reach = 1 + (k[d] - 1) * dil[d] - pads0[d] - pads1[d]
        spatial.append(max(1, reach) + draw(st.integers(0, 6)))
    x_dt = draw(st.sampled_from([DataType.INT8, DataType.UINT8]))
    w_dt = draw(st.sampled_from([DataType.INT8, DataType.UINT8]))
    return dict(
        x_sizes=(draw(st.integers(1, 2)), g * cg, *spatial),
        w_sizes=(g * mg, cg, *k),
        g=g,
        strides=strides,
        dil=dil,
        pads0=pads0,
        pads1=pads1,
        x_dt=x_dt,
        w_dt=w_dt,
        xzp=draw(st.sampled_from(["none", "scalar"])),
        wzp=draw(st.sampled_from(["none", "scalar", "channel"])),
        xp=draw(st.sampled_from(IN_PATTERNS)),
        wp=draw(st.sampled_from(IN_PATTERNS)),
        op=draw(st.sampled_from(OUT_PATTERNS)),
        kernel=draw(st.sampled_from(["auto", "portable", "dot4_window"])),
        offsets=(16 + draw(st.integers(0, 5)), GUARD + 4 * draw(st.integers(0, 5))),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


def check_conv(device, c: dict) -> None:
    rng = np.random.default_rng(c["seed"])
    rank = len(c["x_sizes"])
    x_desc = strided_desc(c["x_dt"], c["x_sizes"], c["xp"])
    w_desc = strided_desc(c["w_dt"], c["w_sizes"], c["wp"])
    m = c["w_sizes"][0]
    out_sizes = dmlwgsl.convolution_integer_output_sizes(
        c["x_sizes"], c["w_sizes"], c["strides"], c["dil"], c["pads0"], c["pads1"]
    )
    out_desc = strided_desc(DataType.INT32, out_sizes, c["op"], output=True)
    inputs = {"input": (x_desc, random_bytes(x_desc, rng)), "filter": (w_desc, random_bytes(w_desc, rng))}
    zps = {}
    for name, kind, dt in (("input_zero_point", c["xzp"], c["x_dt"]), ("filter_zero_point", c["wzp"], c["w_dt"])):
        if kind == "none":
            zps[name] = None
            continue
        sizes = (1,) * rank if kind == "scalar" else (1, m) + (1,) * (rank - 2)
        d = TensorDesc(dt, sizes)
        inputs[name] = (d, random_bytes(d, rng))
        zps[name] = d
    x = read_tensor(inputs["input"][1], x_desc)
    w = read_tensor(inputs["filter"][1], w_desc)
    xz = read_tensor(inputs["input_zero_point"][1], zps["input_zero_point"]) if zps["input_zero_point"] else None
    wz = read_tensor(inputs["filter_zero_point"][1], zps["filter_zero_point"]) if zps["filter_zero_point"] else None
    expected = ref_conv.convolution_integer(
        x,
        w,
        None if xz is None else xz.reshape(-1)[0],
        None if wz is None else wz.reshape(-1),
        strides=c["strides"],
        dilations=c["dil"],
        start_padding=c["pads0"],
        end_padding=c["pads1"],
        group_count=c["g"],
    )
    desc = dmlwgsl.ConvolutionIntegerDesc(
        x_desc,
        w_desc,
        out_desc,
        zps["input_zero_point"],
        zps["filter_zero_point"],
        c["strides"],
        c["dil"],
        c["pads0"],
        c["pads1"],
        c["g"],
    )
    kernel = c["kernel"]
    if kernel == "dot4_window" and not dot4_available(device):
        kernel = "auto"  # (the window kernel runs on the packed 4x8 dot product)
    op = dmlwgsl.compile_convolution_integer(desc, device=device, kernel=kernel)
    run_checked(
        device,
        lambda ins, out: op(
            ins["input"], ins["filter"], out, ins.get("input_zero_point"), ins.get("filter_zero_point")
        ),
        inputs,
        out_desc,
        expected,
        input_offset=c["offsets"][0],
        output_offset=c["offsets"][1],
    )


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("op", ["depth_to_space", "space_to_depth"])
def test_fuzz_depth_space_valid(device, op, profile):
    @_settings(profile)
    @given(c=depth_space_cases(op))
    def run(c):
        check_depth_space(device, op, c)

    run()


@pytest.mark.parametrize("profile", PROFILES)
def test_fuzz_resample_valid(device, profile):
    @_settings(profile)
    @given(c=resample_cases())
    def run(c):
        check_resample(device, c)

    run()


@pytest.mark.parametrize("profile", PROFILES)
def test_fuzz_convolution_integer_valid(device, profile):
    @_settings(profile)
    @given(c=conv_cases())
    def run(c):
        check_conv(device, c)

    run()


# ------------------------------------------------------------------------------------------------
# Invalid descriptions: one field broken, a DmlValidationError naming it before any GPU work
# ------------------------------------------------------------------------------------------------
def _replace_desc(desc: TensorDesc, **kw) -> TensorDesc:
    fields = {f.name: getattr(desc, f.name) for f in dataclasses.fields(desc)}
    if "sizes" in kw or "strides" in kw or "data_type" in kw:
        fields["total_tensor_size_in_bytes"] = None
    if "sizes" in kw and "strides" not in kw:
        fields["strides"] = None
    fields.update(kw)
    return TensorDesc(**fields)


def _tensor_breaks(name: str, desc: TensorDesc, data_types) -> list[tuple[str, object]]:
    """(field named in the error, function of the op description -> broken description)."""
    wrong_type = next(d for d in DataType if d not in data_types and d != DataType.UNKNOWN)
    return [
        (f"{name}.data_type", lambda d: dataclasses.replace(d, **{name: _replace_desc(desc, data_type=wrong_type)})),
        (f"{name}.data_type", lambda d: dataclasses.replace(d, **{name: _replace_desc(desc, data_type=0)})),
        (
            f"{name}.sizes",  # 9 dimensions: beyond every operator's ranks
            lambda d: dataclasses.replace(d, **{name: _replace_desc(desc, sizes=(1,) * (9 - desc.rank) + desc.sizes)}),
        ),
        (
            f"{name}.sizes[",
            lambda d: dataclasses.replace(d, **{name: _replace_desc(desc, sizes=(0,) + desc.sizes[1:])}),
        ),
        (
            f"{name}.strides",
            lambda d: dataclasses.replace(d, **{name: _replace_desc(desc, strides=(1,) * (desc.rank - 1))}),
        ),
        (
            f"{name}.total_tensor_size_in_bytes",
            lambda d: dataclasses.replace(
                d, **{name: _replace_desc(desc, total_tensor_size_in_bytes=desc.implied_size_in_bytes - 4)}
            ),
        ),
        (
            f"{name}.guaranteed_base_offset_alignment",
            lambda d: dataclasses.replace(d, **{name: _replace_desc(desc, guaranteed_base_offset_alignment=3)}),
        ),
    ]


def _float_break(what: str):
    """TensorDesc fields that must be integers: a float is rejected when the description is made."""

    def build(d):
        desc = getattr(d, what)
        return _replace_desc(desc, sizes=desc.sizes[:-1] + (desc.sizes[-1] + 0.5,))

    return ("TensorDesc.sizes[", build)


def _assert_rejects(device, compile_fn, good, field: str, breaker, **kw) -> None:
    before = device.gpu_calls
    with pytest.raises(DmlValidationError) as e:
        compile_fn(breaker(good), device=device, **kw)
    assert field in str(e.value), f"expected the error to name {field!r}: {e.value}"
    assert device.gpu_calls == before, f"GPU work before the error: {e.value}"


@st.composite
def depth_space_breaks(draw, op: str):
    c = draw(depth_space_cases(op))
    in_desc = strided_desc(c["dt"], c["sizes"], c["ip"])
    if op == "depth_to_space":
        desc_cls, ref = dmlwgsl.DepthToSpaceDesc, ref_d2s.depth_to_space
    else:
        desc_cls, ref = dmlwgsl.SpaceToDepthDesc, ref_s2d.space_to_depth
    out_sizes = ref(np.zeros(c["sizes"], np.uint8), c["b"], c["order"]).shape
    out_desc = strided_desc(c["dt"], out_sizes, c["op"], output=True)
    good = desc_cls(in_desc, out_desc, c["b"], c["order"])
    other = next(d for d in sorted(DEPTH_SPACE_TYPES) if d != c["dt"])
    breaks = _tensor_breaks("input", in_desc, DEPTH_SPACE_TYPES) + _tensor_breaks("output", out_desc, DEPTH_SPACE_TYPES)
    breaks += [
        ("block_size", lambda d: dataclasses.replace(d, block_size=draw(st.sampled_from([0, -1, 2.0, True, "2"])))),
        (
            "output.sizes",
            lambda d: dataclasses.replace(
                d, output=_replace_desc(out_desc, sizes=out_desc.sizes[:3] + (out_desc.sizes[3] + 1,))
            ),
        ),
        ("output.data_type", lambda d: dataclasses.replace(d, output=_replace_desc(out_desc, data_type=other))),
        ("order", lambda d: desc_cls(in_desc, out_desc, c["b"], draw(st.sampled_from(["XYZ", 7, None])))),
        _float_break("input"),
    ]
    if out_desc.element_count > 1:  # all strides 0: two elements at one address
        breaks.append(
            (
                "output.strides",
                lambda d: dataclasses.replace(d, output=_replace_desc(out_desc, strides=(0,) * out_desc.rank)),
            )
        )
    if op == "depth_to_space":
        c1 = c["sizes"][1] + 1 if c["b"] > 1 else None
        if c1:
            breaks.append(
                (
                    "input.sizes[1]",
                    lambda d: dataclasses.replace(
                        d, input=_replace_desc(in_desc, sizes=(c["sizes"][0], c1) + c["sizes"][2:], strides=None)
                    ),
                )
            )
    elif c["b"] > 1:
        h1 = c["sizes"][2] + 1
        breaks.append(
            (
                "input.sizes[2]",
                lambda d: dataclasses.replace(
                    d, input=_replace_desc(in_desc, sizes=c["sizes"][:2] + (h1, c["sizes"][3]), strides=None)
                ),
            )
        )
    return good, draw(st.sampled_from(breaks))


def _maybe_raises(field, breaker, good):
    """Apply ``breaker``; a description that cannot even be built must fail naming the field too."""
    try:
        return breaker(good), None
    except DmlValidationError as e:
        return None, e


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("op", ["depth_to_space", "space_to_depth"])
def test_fuzz_depth_space_invalid(device, op, profile):
    compile_fn = dmlwgsl.compile_depth_to_space if op == "depth_to_space" else dmlwgsl.compile_space_to_depth
    _check_invalid(device, profile, depth_space_breaks(op), compile_fn)


def _check_invalid(device, profile, strategy, compile_fn, **kw):
    @_settings(profile, invalid=True)
    @given(case=strategy)
    def run(case):
        good, (field, breaker) = case
        before = device.gpu_calls
        bad, early = _maybe_raises(field, breaker, good)
        if early is not None:  # rejected while building the TensorDesc / description itself
            assert field.split(".")[-1].split("[")[0] in str(early), f"expected {field!r} named: {early}"
            return
        _assert_rejects(device, compile_fn, good, field, lambda _g: bad, **kw)
        assert device.gpu_calls == before

    run()


@st.composite
def resample_breaks(draw):
    c = draw(resample_cases())
    dt = c["dt"]
    in_desc = strided_desc(dt, c["in_sizes"], c["ip"])
    out_desc = strided_desc(dt, c["out_sizes"], c["op"], output=True)
    good = dmlwgsl.Resample1Desc(in_desc, out_desc, c["mode"], c["scales"], c["in_off"], c["out_off"])
    types = {DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8}
    r = len(c["in_sizes"])
    breaks = _tensor_breaks("input", in_desc, types) + _tensor_breaks("output", out_desc, types)
    breaks += [
        ("scales", lambda d: dataclasses.replace(d, scales=c["scales"][:-1])),
        ("scales", lambda d: dataclasses.replace(d, scales=(0.0,) * r)),
        ("scales", lambda d: dataclasses.replace(d, scales=(-1.0,) * r)),
        ("input_pixel_offsets", lambda d: dataclasses.replace(d, input_pixel_offsets=(float("nan"),) * r)),
        ("output_pixel_offsets", lambda d: dataclasses.replace(d, output_pixel_offsets=(float("inf"),) * r)),
        ("interpolation_mode", lambda d: dataclasses.replace(d, interpolation_mode="cubic")),
        (
            "output.data_type",
            lambda d: dataclasses.replace(
                d, output=_replace_desc(out_desc, data_type=next(t for t in sorted(types) if t != dt))
            ),
        ),
        ("output.sizes", lambda d: dataclasses.replace(d, output=_replace_desc(out_desc, sizes=(1,) * (r + 1)))),
        _float_break("output"),
    ]
    return good, draw(st.sampled_from(breaks))


@pytest.mark.parametrize("profile", PROFILES)
def test_fuzz_resample_invalid(device, profile):
    _check_invalid(device, profile, resample_breaks(), dmlwgsl.compile_resample)


@st.composite
def conv_breaks(draw):
    c = draw(conv_cases())
    rank = len(c["x_sizes"])
    x_desc = strided_desc(c["x_dt"], c["x_sizes"], c["xp"])
    w_desc = strided_desc(c["w_dt"], c["w_sizes"], c["wp"])
    out_sizes = dmlwgsl.convolution_integer_output_sizes(
        c["x_sizes"], c["w_sizes"], c["strides"], c["dil"], c["pads0"], c["pads1"]
    )
    out_desc = strided_desc(DataType.INT32, out_sizes, c["op"], output=True)
    good = dmlwgsl.ConvolutionIntegerDesc(
        x_desc, w_desc, out_desc, None, None, c["strides"], c["dil"], c["pads0"], c["pads1"], c["g"]
    )
    nsp = rank - 2
    types = {DataType.INT8, DataType.UINT8}
    breaks = _tensor_breaks("input", x_desc, types) + _tensor_breaks("filter", w_desc, types)
    breaks += [
        ("strides", lambda d: dataclasses.replace(d, strides=(0,) * nsp)),
        ("strides", lambda d: dataclasses.replace(d, strides=(1.5,) * nsp)),
        ("dilations", lambda d: dataclasses.replace(d, dilations=(0,) * nsp)),
        ("start_padding", lambda d: dataclasses.replace(d, start_padding=(-1,) * nsp)),
        ("end_padding", lambda d: dataclasses.replace(d, end_padding=(0,) * (nsp + 1))),
        ("group_count", lambda d: dataclasses.replace(d, group_count=draw(st.sampled_from([0, 2.0, c["g"] + 7])))),
        (
            "output.sizes",
            lambda d: dataclasses.replace(
                d, output=_replace_desc(out_desc, sizes=out_desc.sizes[:-1] + (out_desc.sizes[-1] + 1,))
            ),
        ),
        ("output.data_type", lambda d: dataclasses.replace(d, output=_replace_desc(out_desc, data_type="int8"))),
        (
            "filter_zero_point",
            lambda d: dataclasses.replace(d, filter_zero_point=TensorDesc(c["w_dt"], (1, 3 + c["w_sizes"][0]))),
        ),
        (
            "input_zero_point",
            lambda d: dataclasses.replace(d, input_zero_point=TensorDesc(DataType.INT32, (1,) * rank)),
        ),
        _float_break("filter"),
    ]
    return good, draw(st.sampled_from(breaks))


@pytest.mark.parametrize("profile", PROFILES)
def test_fuzz_convolution_integer_invalid(device, profile):
    _check_invalid(device, profile, conv_breaks(), dmlwgsl.compile_convolution_integer)

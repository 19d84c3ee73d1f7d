"""ConvolutionInteger: public vectors, onnx node tests, properties against the numpy reference,
extremes, overflow, every kernel (portable, direct, direct_dot4, dot4, dot4_im2col) on every adapter
that compiles it, the split past the binding limit, and one test per validation rule.

Every GPU run goes through run_checked (poisoned output, guard bands, two poisons).
"""

from __future__ import annotations

import dataclasses
import functools
import unittest.mock
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmlwgsl.ops.convolution_integer as convolution_integer_module
from dmlwgsl.ops.convolution_integer import (
    ConvolutionIntegerDesc,
    ConvolutionIntegerOperator,
    _tile_fits,
    compile_convolution_integer,
    convolution_integer,
    dot4_available,
)
from dmlwgsl.plan import Capabilities, PlanError
from dmlwgsl.reference.convolution_integer import convolution_integer as reference
from dmlwgsl.reference.tensors import read_tensor, tensor_bytes
from dmlwgsl.tensor import DataType, DmlValidationError, TensorDesc
from dmlwgsl.testing import random_bytes, run_checked, strided_desc

KERNELS = ("portable", "direct", "direct_dot4", "dot4", "dot4_im2col", "dot4_window")
MIXES = [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.uint8), (np.int8, np.int8)]
U8, I8 = DataType.UINT8, DataType.INT8


def need_kernel(device, kernel):
    """Skip dot4 (and the depthwise kernel, built on it) where the adapter does not compile it
    (portable and direct always run)."""
    if ("dot4" in kernel or kernel == "depthwise") and not dot4_available(device):
        pytest.skip(f"{device.name} does not compile dot4I8Packed")


def tensor_from(values, desc: TensorDesc | None = None):
    """(desc, raw bytes) holding ``values`` (packed unless ``desc`` is given)."""
    values = np.asarray(values)
    desc = desc or TensorDesc(DataType.from_numpy(values.dtype), values.shape)
    return desc, tensor_bytes(desc, values)


def tensor_random(dtype, sizes, pattern, rng):
    """(desc, raw bytes, logical values) of random data laid out as ``pattern``."""
    desc = strided_desc(DataType.from_numpy(dtype), sizes, pattern)
    raw = random_bytes(desc, rng)
    return desc, raw, read_tensor(raw, desc)


def run_op(device, op, x_in, w_in, xz_in, wz_in, out_desc, expected):
    """Run a compiled ConvolutionInteger on (desc, raw) inputs under run_checked (poisoned output,
    guard bands, two poisons) and compare with ``expected``."""

    def run(t, out):
        op(t["input"], t["filter"], out, t["input_zero_point"], t["filter_zero_point"])

    return run_checked(
        device,
        run,
        {"input": x_in, "filter": w_in, "input_zero_point": xz_in, "filter_zero_point": wz_in},
        out_desc,
        np.asarray(expected, np.int32),
    )


def check(
    device,
    kernel,
    x,
    w,
    xz=None,
    wz=None,
    *,
    expected=None,
    x_in=None,
    w_in=None,
    out_pattern="packed",
    ops=None,
    tuning=None,
    **params,
):
    """Run the op on (x, w, zero points) with ``kernel`` under run_checked; compare with
    ``expected`` or the reference. ``x_in``/``w_in`` give (desc, raw) for strided inputs; the
    compiled operator is appended to ``ops`` where given; ``tuning`` (dot4 options) compiles it with
    those."""
    need_kernel(device, kernel)
    x_in = x_in or tensor_from(x)
    w_in = w_in or tensor_from(w)
    rank = x.ndim
    m = w.shape[0]
    xz_in = None if xz is None else tensor_from(np.asarray(xz, x.dtype).reshape((1,) * rank))
    if wz is None:
        wz_in = None
    else:
        wz_arr = np.asarray(wz, w.dtype)
        shape = (1,) * rank if wz_arr.size == 1 else (1, m) + (1,) * (rank - 2)
        wz_in = tensor_from(wz_arr.reshape(shape))
    if expected is None:
        expected = reference(x, w, xz, wz, **params)
    out_desc = strided_desc(DataType.INT32, expected.shape, out_pattern, output=True)
    desc = ConvolutionIntegerDesc(x_in[0], w_in[0], out_desc, xz_in and xz_in[0], wz_in and wz_in[0], **params)
    if tuning:
        op = ConvolutionIntegerOperator(device, desc, kernel, **tuning)
    else:
        op = compile_convolution_integer(desc, device=device, kernel=kernel)
    assert op.kernel == kernel
    if ops is not None:
        ops.append(op)
    return run_op(device, op, x_in, w_in, xz_in, wz_in, out_desc, expected)


def u8(a):
    return np.asarray(a, np.uint8)


# ------------------------------------------------------------------------------------------------
# onnxruntime vectors (spec section 6: onnxruntime/test/providers/cpu/nn/conv_integer_test.cc)
# ------------------------------------------------------------------------------------------------
X33 = u8(np.arange(2, 11).reshape(1, 1, 3, 3))
X77 = u8((np.arange(1, 8)[:, None] * 10 + np.arange(7)[None, :]).reshape(1, 1, 7, 7))
W121 = u8([[1, 2, 1], [2, 3, 2], [1, 2, 1]]).reshape(1, 1, 3, 3)
ORT = {
    "WithoutPadding_2D": (X33, u8(np.ones((1, 1, 2, 2))), 1, {}, [12, 16, 24, 28]),
    "WithPadding_2D": (
        X33,
        u8(np.ones((1, 1, 2, 2))),
        1,
        dict(start_padding=(1, 1), end_padding=(1, 1)),
        [1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9],
    ),
    "WithGroup_2D": (
        u8(np.arange(2, 29).reshape(1, 3, 3, 3)),
        u8([1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 6, 5]).reshape(3, 1, 2, 2),
        1,
        dict(start_padding=(1, 1), end_padding=(1, 1), group_count=3),
        [
            1,
            4,
            7,
            6,
            6,
            18,
            24,
            15,
            15,
            36,
            42,
            24,
            14,
            23,
            26,
            9,
            30,
            73,
            80,
            48,
            79,
            168,
            182,
            96,
            100,
            210,
            224,
            117,
            64,
            116,
            123,
            54,
            95,
            214,
            225,
            126,
            224,
            462,
            484,
            249,
            257,
            528,
            550,
            282,
            150,
            281,
            292,
            135,
        ],
    ),
    "Pointwise_2D": (X33, u8([[[[4]]]]), 1, {}, [4, 8, 12, 16, 20, 24, 28, 32, 36]),
    "WithStride2_2D": (
        X77,
        W121,
        10,
        dict(start_padding=(1, 1), end_padding=(1, 1), strides=(2, 2)),
        [33, 62, 84, 75, 224, 330, 360, 282, 444, 630, 660, 502, 453, 642, 664, 495],
    ),
    "WithStride3_2D": (
        X77,
        W121,
        10,
        dict(start_padding=(2, 2), end_padding=(1, 1), strides=(3, 3)),
        [0, 8, 20, 80, 330, 375, 200, 780, 825],
    ),
}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", sorted(ORT))
def test_onnxruntime_vectors(device, kernel, name):
    x, w, xz, params, want = ORT[name]
    expected = reference(x, w, np.uint8(xz), **params)
    assert expected.ravel().tolist() == want  # the reference agrees with onnxruntime
    check(device, kernel, x, w, np.uint8(xz), expected=expected, **params)


@functools.lru_cache(maxsize=None)
def onnx_cases():
    """onnx's backend node tests for ConvInteger: (name, inputs, attributes, output)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx import helper
        from onnx_node_cases import node_cases

        cases = node_cases("ConvInteger")
    out = []
    for c in cases:
        node = c.model.graph.node[0]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for inputs, outputs in c.data_sets:
            out.append((c.name, dict(zip(node.input, inputs)), attrs, outputs[0]))
    return tuple(out)


@pytest.mark.parametrize("kernel", KERNELS)
def test_onnx_backend_node_cases(device, kernel):
    cases = onnx_cases()
    assert {c[0] for c in cases} >= {"test_convinteger_with_padding", "test_convinteger_without_padding"}
    for _name, inputs, attrs, y in cases:
        x, w = inputs["x"], inputs["w"]
        nsp = x.ndim - 2
        pads = list(attrs.get("pads", [0] * 2 * nsp))
        params = dict(
            strides=tuple(attrs.get("strides", [1] * nsp)),
            dilations=tuple(attrs.get("dilations", [1] * nsp)),
            start_padding=tuple(pads[:nsp]),
            end_padding=tuple(pads[nsp:]),
            group_count=int(attrs.get("group", 1)),
        )
        zpx = inputs.get("x_zero_point")
        zpw = next((v for k, v in inputs.items() if k.startswith("w_zero_point")), None)
        check(device, kernel, x, w, zpx, zpw, expected=y, **params)


# ------------------------------------------------------------------------------------------------
# Properties against the reference
# ------------------------------------------------------------------------------------------------
def random_case(rng, xdt, wdt, *, n=1, c=4, m=4, hw=(5, 5), k=(3, 3), zp="tensor", wzp="channel", **params):
    """Random x, w and zero points of the given mix and zero point modes."""
    g = params.get("group_count", 1)
    xi, wi = np.iinfo(xdt), np.iinfo(wdt)
    x = rng.integers(xi.min, xi.max + 1, (n, c, *hw)).astype(xdt)
    w = rng.integers(wi.min, wi.max + 1, (m, c // g, *k)).astype(wdt)
    xz = None if zp is None else xdt(rng.integers(xi.min, xi.max + 1))
    wz = {
        None: None,
        "tensor": wdt(rng.integers(wi.min, wi.max + 1)),
        "channel": rng.integers(wi.min, wi.max + 1, m).astype(wdt),
    }[wzp]
    return x, w, xz, wz


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("mix", MIXES, ids=lambda d: np.dtype(d).name)
def test_mixes_and_zero_point_modes(device, kernel, mix, rng):
    for zp, wzp in [(None, None), ("tensor", "tensor"), ("tensor", "channel"), (None, "channel")]:
        x, w, xz, wz = random_case(rng, *mix, c=6, m=5, zp=zp, wzp=wzp, start_padding=(1, 0), end_padding=(0, 2))
        check(device, kernel, x, w, xz, wz, start_padding=(1, 0), end_padding=(0, 2))


SHAPES = {
    "grouped": dict(c=8, m=6, group_count=2, start_padding=(1, 1), end_padding=(1, 1)),
    "depthwise": dict(c=6, m=6, group_count=6, start_padding=(1, 1), end_padding=(1, 1)),
    "depthwise_multiplier": dict(c=3, m=6, group_count=3),
    "pointwise_1x1": dict(c=9, m=7, k=(1, 1)),
    "stride_gt_kernel": dict(hw=(9, 8), k=(2, 2), strides=(3, 4)),
    "dilation": dict(hw=(7, 8), dilations=(2, 3), start_padding=(2, 1), end_padding=(0, 3)),
    "asymmetric_pads": dict(hw=(4, 6), k=(3, 2), start_padding=(2, 0), end_padding=(0, 3), strides=(2, 1)),
    "kernel_fills_padded": dict(hw=(2, 3), k=(4, 3), start_padding=(1, 0), end_padding=(1, 0)),
    "many_channels": dict(c=36, m=70, hw=(4, 5)),
    "batch": dict(n=3, c=5, m=3, hw=(3, 4), start_padding=(1, 1)),
}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_shapes(device, kernel, shape, rng):
    p = dict(SHAPES[shape])
    params = {k: p[k] for k in ("strides", "dilations", "start_padding", "end_padding", "group_count") if k in p}
    mix = MIXES[len(shape) % 4]
    x, w, xz, wz = random_case(rng, *mix, **p)
    check(device, kernel, x, w, xz, wz, **params)


@pytest.mark.parametrize("kernel", KERNELS)
def test_one_dimensional(device, kernel, rng):
    x = rng.integers(0, 256, (2, 6, 11)).astype(np.uint8)
    w = rng.integers(-128, 128, (4, 3, 3)).astype(np.int8)
    wz = rng.integers(-128, 128, 4).astype(np.int8)
    params = dict(strides=(2,), dilations=(2,), start_padding=(3,), end_padding=(1,), group_count=2)
    check(device, kernel, x, w, np.uint8(7), wz, **params)
    got = convolution_integer(x, w, 7, wz, device=device, **params)
    np.testing.assert_array_equal(got, reference(x, w, np.uint8(7), wz, **params))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("pattern", ["nhwc", "padded", "broadcast", "window"])
def test_strided_tensors(device, kernel, pattern, rng):
    n, c, m, g = 2, 4, 6, 2
    x_desc, x_raw, x = tensor_random(np.int8, (n, c, 5, 6), pattern, rng)
    w_desc, w_raw, w = tensor_random(np.uint8, (m, c // g, 3, 2), pattern, rng)
    out_pattern = "padded" if pattern == "broadcast" else pattern
    params = dict(start_padding=(1, 0), end_padding=(1, 1), group_count=g)
    check(
        device,
        kernel,
        x,
        w,
        np.int8(-3),
        u8(rng.integers(0, 256, m)),
        x_in=(x_desc, x_raw),
        w_in=(w_desc, w_raw),
        out_pattern=out_pattern,
        **params,
    )


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_property_vs_reference(device, data):
    """Random mixes, zero point modes, groups, geometry and layouts; both kernels."""
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    xdt, wdt = data.draw(st.sampled_from(MIXES), label="mix")
    g = data.draw(st.sampled_from([1, 1, 2, 3]), label="group_count")
    cg, mg = data.draw(st.integers(1, 6), label="cg"), data.draw(st.integers(1, 5), label="mg")
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    sh, sw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    dh, dw = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    pads = [data.draw(st.integers(0, 2)) for _ in range(4)]
    h = data.draw(st.integers(max(1, 1 + (kh - 1) * dh - pads[0] - pads[2]), 7))
    wd = data.draw(st.integers(max(1, 1 + (kw - 1) * dw - pads[1] - pads[3]), 7))
    pattern = data.draw(st.sampled_from(["packed", "nhwc", "padded", "window"]), label="layout")
    zp, wzp = data.draw(st.sampled_from([None, "tensor"])), data.draw(st.sampled_from([None, "tensor", "channel"]))
    params = dict(
        strides=(sh, sw), dilations=(dh, dw), start_padding=tuple(pads[:2]), end_padding=tuple(pads[2:]), group_count=g
    )
    x_desc, x_raw, x = tensor_random(xdt, (2, cg * g, h, wd), pattern, rng)
    w_desc, w_raw, w = tensor_random(wdt, (mg * g, cg, kh, kw), pattern, rng)
    _, _, xz, wz = random_case(rng, xdt, wdt, c=g, m=mg * g, hw=(1, 1), k=(1, 1), zp=zp, wzp=wzp, group_count=g)
    for kernel in KERNELS if dot4_available(device) else ("portable", "direct"):
        check(device, kernel, x, w, xz, wz, x_in=(x_desc, x_raw), w_in=(w_desc, w_raw), out_pattern=pattern, **params)


# ------------------------------------------------------------------------------------------------
# Extremes and overflow
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("mix", MIXES, ids=lambda d: np.dtype(d).name)
def test_extreme_values(device, kernel, mix, rng):
    xdt, wdt = mix
    xi, wi = np.iinfo(xdt), np.iinfo(wdt)
    xv = np.array(sorted({xi.min, xi.max, 0, -1 if xi.min < 0 else 1}), xdt)
    wv = np.array(sorted({wi.min, wi.max, 0, -1 if wi.min < 0 else 1}), wdt)
    x = rng.choice(xv, (1, 8, 4, 4)).astype(xdt)
    w = rng.choice(wv, (6, 8, 2, 2)).astype(wdt)
    for xz, wz in [(xi.min, np.array([wi.max, wi.min, 0, wi.max, wi.min, 0], wdt)), (xi.max, wi.min), (None, wi.max)]:
        check(device, kernel, x, w, None if xz is None else xdt(xz), wz, start_padding=(1, 1), end_padding=(1, 0))


@pytest.mark.parametrize("kernel", KERNELS)
def test_overflow_wraps(device, kernel):
    """Each tap adds (0 - 255) * (-128 - 127) = 65025; 4097 * 9 taps sum to 2_397_666_825 > 2^31 - 1,
    which wraps to a negative int32 (channel 1 stays 0). The direct kernels stage at most 2048
    taps (or words) a filter row and the window kernel what its workgroup memory holds (no sum of
    so few products can overflow), so they refuse this layer by name."""
    c = 4097
    x = np.zeros((1, c, 3, 3), np.uint8)
    w = np.full((2, c, 3, 3), -128, np.int8)
    w[1] = 127
    if kernel.startswith("direct") or kernel == "dot4_window":
        need_kernel(device, kernel)
        desc = ConvolutionIntegerDesc(
            TensorDesc(U8, x.shape), TensorDesc(I8, w.shape), TensorDesc(DataType.INT32, (1, 2, 1, 1))
        )
        row = {
            "direct": "a filter row of C/G\\*KH\\*KW = 36873 taps",
            "direct_dot4": "a filter row of ceil\\(C/G/4\\)\\*KH\\*KW = 9225 words",
            "dot4_window": "the window holds 12292 k words \\(C/G\\*KH\\*KW = 36873 taps\\): its block of 16",
        }[kernel]
        with pytest.raises(PlanError, match=rf"kernel: '{kernel}' cannot run this layer: {row}"):
            compile_convolution_integer(desc, device=device, kernel=kernel)
        return
    got = check(device, kernel, x, w, np.uint8(255), np.int8(127))
    exact = np.array([c * 9 * 65025, 0], np.int64)
    assert exact[0] > 2**31 - 1
    assert got[0, 0, 0, 0] == np.int64(exact[0]).astype(np.int32) == exact[0] - 2**32


@pytest.mark.parametrize("mix", MIXES, ids=lambda m: f"{m[0].__name__}_{m[1].__name__}")
def test_dot4_fast_pack(device, mix, rng):
    """The pack pass's straight-line paths (X_FAST, W_FAST: channels per group a multiple of 16),
    every sign mix, grouped (channel planes of 24 bytes: word aligned), with padding."""
    need_kernel(device, "dot4")
    x, w, xz, wz = random_case(
        rng, *mix, n=2, c=64, m=40, hw=(4, 6), start_padding=(1, 2), end_padding=(1, 0), group_count=2
    )
    check(device, "dot4", x, w, xz, wz, start_padding=(1, 2), end_padding=(1, 0), group_count=2)


@pytest.mark.parametrize(
    "case",
    [
        dict(
            n=2,
            c=6,
            m=12,
            hw=(37, 45),
            k=(3, 3),
            group_count=6,
            strides=(2, 1),
            start_padding=(1, 1),
            end_padding=(1, 1),
        ),
        dict(n=1, c=4, m=4, hw=(61, 70), k=(5, 5), group_count=4, dilations=(2, 1), start_padding=(2, 2)),
        dict(n=1, c=8, m=8, hw=(1, 3000), k=(1, 9), group_count=2, start_padding=(0, 4), end_padding=(0, 4)),
        dict(n=2, c=3, m=20, hw=(30, 33), k=(7, 7), strides=(2, 2), start_padding=(3, 3), end_padding=(3, 3)),
    ],
    ids=["depthwise-x2-s2", "depthwise-5x5-d2", "grouped-k9-wide", "stem"],
)
def test_direct_tiles(device, case, rng):
    """The direct kernel on layers whose tiles hold more pixels than a workgroup has threads (the
    carries through (channel, row, column quad)), partial quads and tiles, several channel
    blocks, a kernel width it does not unroll (9), strides and dilations; the dot4 paths too."""
    p = dict(case)
    params = {k: p.pop(k) for k in ("strides", "dilations", "start_padding", "end_padding", "group_count") if k in p}
    x, w, xz, wz = random_case(rng, np.uint8, np.int8, **p, **params)
    for kernel in ("direct", "direct_dot4", "dot4_im2col", "dot4"):
        if "dot4" in kernel and not dot4_available(device):
            continue
        check(device, kernel, x, w, xz, wz, **params)


@pytest.mark.parametrize("kernel", ["direct", "portable", None])
def test_past_the_binding_limit(device, kernel, rng):
    """A capabilities record with a 2 KiB binding limit: the output (3 x 1296 bytes, padded) and input
    (3 x 324, padded) do not fit one binding, so the plan runs one batch item a step, each binding
    a window of both (a start on the binding alignment, the rest in input_base / output_base);
    bit-exact under run_checked (guard bands around a padded output)."""
    caps = Capabilities.from_device(device)
    tight = caps.with_binding_limit(2048)
    x, w, xz, wz = random_case(
        rng, np.int8, np.uint8, n=3, c=4, m=4, hw=(9, 9), start_padding=(1, 1), end_padding=(1, 1)
    )
    params = dict(start_padding=(1, 1), end_padding=(1, 1))
    x_desc, x_raw, x = tensor_random(np.int8, x.shape, "padded", rng)
    expected = reference(x, w, xz, wz, **params)
    out_desc = strided_desc(DataType.INT32, expected.shape, "padded", output=True)
    w_in, xz_in = tensor_from(w), tensor_from(np.asarray(xz, np.int8).reshape(1, 1, 1, 1))
    wz_in = tensor_from(np.asarray(wz, np.uint8).reshape(1, 4, 1, 1))
    desc = ConvolutionIntegerDesc(x_desc, w_in[0], out_desc, xz_in[0], wz_in[0], **params)
    op = compile_convolution_integer(desc, device=device, kernel=kernel, capabilities=tight)
    assert op.plan.dispatches == 3 and "max-storage-buffer-binding-size (2048 bytes): 3 steps" in op.plan.why
    assert all(s.windows and s.windows[0][1] % tight.binding_alignment == 0 for s in op.plan.steps)
    run_op(device, op, (x_desc, x_raw), w_in, xz_in, wz_in, out_desc, expected)
    if dot4_available(device):
        # The GEMM in chunks of whole batch items: a pack and a GEMM a chunk, windows of both tensors.
        op = compile_convolution_integer(desc, device=device, kernel="dot4", capabilities=tight)
        assert [k.split("[")[0].split("_")[0] for k in op.plan.kernels] == ["pack", "convolution"] * 3
        assert "3 chunks of up to 1 batch items" in op.plan.why
        assert all(s.windows and s.windows[0][1] % tight.binding_alignment == 0 for s in op.plan.steps)
        run_op(device, op, (x_desc, x_raw), w_in, xz_in, wz_in, out_desc, expected)
        # Not even one item fits: a named error.
        tiny = caps.with_binding_limit(1024)
        with pytest.raises(PlanError, match="kernel: 'dot4' binds the whole filter and a chunk of whole batch"):
            compile_convolution_integer(desc, device=device, kernel="dot4", capabilities=tiny)


def tight_capabilities(device, binding_limit: int) -> Capabilities:
    """The device's record with max-storage-buffer-binding-size set to ``binding_limit``."""
    return Capabilities.from_device(device).with_binding_limit(binding_limit)


#: Layers whose single batch item does not fit the binding limit given with them: the plan splits
#: it into bands of output rows (or columns), groups and channels, each binding the input rows its
#: band reads. (mix, zero points, layout, sizes, params, binding limit)
WITHIN_ITEM = {
    "rows-pad-halo": (
        0,
        ("tensor", "channel"),
        "packed",
        dict(c=2, m=2, hw=(23, 19)),
        dict(start_padding=(1, 2), end_padding=(2, 1)),
        512,
    ),
    "stride-dilation": (
        1,
        ("tensor", "tensor"),
        "padded",
        dict(c=3, m=4, hw=(21, 17)),
        dict(strides=(2, 3), dilations=(2, 1), start_padding=(2, 1), end_padding=(1, 2)),
        1024,
    ),
    "channels-summed": (
        2,
        (None, "channel"),
        "packed",
        dict(c=12, m=5, hw=(9, 10)),
        dict(start_padding=(1, 1), end_padding=(1, 1)),
        512,
    ),
    "groups": (
        3,
        ("tensor", None),
        "padded",
        dict(c=8, m=6, hw=(11, 9)),
        dict(group_count=2, start_padding=(0, 1), end_padding=(1, 0)),
        512,
    ),
    "depthwise-nhwc": (
        0,
        (None, None),
        "nhwc",
        dict(n=2, c=6, m=6, hw=(12, 10)),
        dict(group_count=6, strides=(2, 2), start_padding=(1, 1), end_padding=(1, 1)),
        512,
    ),
    "padding-only-bands": (
        1,
        ("tensor", "channel"),
        "packed",
        dict(c=1, m=3, hw=(4, 5), k=(2, 2)),
        dict(start_padding=(5, 1), end_padding=(6, 2)),
        128,
    ),
    "one-dimensional": (
        2,
        ("tensor", "channel"),
        "packed",
        dict(c=4, m=3, hw=(150,), k=(5,)),
        dict(strides=(2,), dilations=(3,), start_padding=(4,), end_padding=(2,), group_count=1),
        256,
    ),
    "filter-past-limit": (
        3,
        ("tensor", "channel"),
        "packed",
        dict(c=24, m=24, hw=(4, 4)),
        dict(start_padding=(1, 1), end_padding=(1, 1)),
        2048,
    ),
}


@pytest.mark.parametrize("kernel", ["portable", "direct", "direct_dot4", None])
@pytest.mark.parametrize("case", sorted(WITHIN_ITEM))
def test_past_the_binding_limit_within_one_item(device, kernel, case, rng):
    """One batch item past the (tightened) binding limit: steps over bands of output rows (with the
    input rows they read, kernel halo included, the padding above the window in the uniforms),
    output-channel and group blocks, and input channels summed over steps (the first storing, the
    others adding); every window starts on the binding alignment. Exact under run_checked (inputs
    and output at residual offsets, guards, poison), against the numpy reference."""
    if kernel is not None:
        need_kernel(device, kernel)
    mix, (zp, wzp), layout, sizes, params, limit = WITHIN_ITEM[case]
    xdt, wdt = MIXES[mix]
    x, w, xz, wz = random_case(rng, xdt, wdt, zp=zp, wzp=wzp, **sizes, **params)
    x_desc, x_raw, x = tensor_random(xdt, x.shape, layout, rng)
    expected = reference(x, w, xz, wz, **params)
    out_desc = strided_desc(DataType.INT32, expected.shape, layout, output=True)
    rank = x.ndim
    w_in = tensor_from(w)
    xz_in = None if xz is None else tensor_from(np.asarray(xz, xdt).reshape((1,) * rank))
    wz_in = (
        None
        if wz is None
        else tensor_from(
            np.asarray(wz, wdt).reshape((1,) * rank if np.ndim(wz) == 0 else (1, w.shape[0]) + (1,) * (rank - 2))
        )
    )
    desc = ConvolutionIntegerDesc(x_desc, w_in[0], out_desc, xz_in and xz_in[0], wz_in and wz_in[0], **params)
    tight = tight_capabilities(device, limit)
    op = compile_convolution_integer(desc, device=device, kernel=kernel, capabilities=tight)
    nn, *_ = dict(op.plan.details)["split_piece"]
    assert nn == 1 and op.plan.dispatches > x.shape[0], op.plan.why
    for s in op.plan.steps:
        assert s.windows and all(start % tight.binding_alignment == 0 for _, start, _ in s.windows)
        assert all(length + tight.binding_alignment <= limit for _, _, length in s.windows)  # + residual < al
    if case == "filter-past-limit":
        assert any(name == "filter" for name, _, _ in op.plan.steps[0].windows)
    run_op(device, op, (x_desc, x_raw), w_in, xz_in, wz_in, out_desc, expected)


def grouped_u8_layer(rng, hw):
    """The dot4 tile and split-K tests' layer: 2 groups of 84 channels (21 words a tap, padded to
    24: steps of 16 words cross taps) and 70 filters, UINT8 input with zero point 77, INT8 filter with a zero
    point per channel, asymmetric padding. (x, w, wz, params, expected)."""
    x = rng.integers(0, 256, (2, 2 * 84, *hw)).astype(np.uint8)
    w = rng.integers(-128, 128, (2 * 70, 84, 3, 3)).astype(np.int8)
    wz = rng.integers(-128, 128, 2 * 70).astype(np.int8)
    params = dict(start_padding=(1, 0), end_padding=(1, 2), group_count=2)
    return x, w, wz, params, reference(x, w, np.uint8(77), wz, **params)


@pytest.mark.parametrize(
    "tile",
    [
        (4, 128, 64),
        (4, 256, 64),
        (8, 128, 64),
        (8, 256, 64),
        (4, 512, 128),
        (8, 512, 128),
        (5, 128, 64),
        (6, 256, 64),
        (7, 512, 128),
        (4, 512, 64),
        (6, 512, 64),
        (7, 512, 64),
        (8, 512, 64),
        (4, 256, 32),
        (4, 128, 32),
    ],
    ids=lambda t: f"{t[0]}px-{t[1]}thr-{t[2]}ch",
)
def test_dot4_tile_shapes(device, tile, rng):
    """Every dot4 GEMM tile shape (pixels per thread, threads a workgroup, channels a tile: 32, 64
    or 128; 512 threads with 64 channels stage only half their channel rows, 32 channels a quarter
    or half; tiles needing more
    workgroup memory than the adapter has are refused with the limit named: 256x64 everywhere, the
    512-thread tiles on GL's 32 KiB) on a layer with several pixel and channel tiles, two channel
    chunks per tap, a partial last chunk, groups and all four zero-point corrections (UINT8 input,
    per-channel filter zero point)."""
    need_kernel(device, "dot4")
    x, w, wz, params, expected = grouped_u8_layer(rng, (9, 10))
    desc = ConvolutionIntegerDesc(
        TensorDesc(U8, x.shape),
        TensorDesc(I8, w.shape),
        TensorDesc(DataType.INT32, expected.shape),
        TensorDesc(U8, (1, 1, 1, 1)),
        TensorDesc(I8, (1, w.shape[0], 1, 1)),
        **params,
    )
    rp, threads, tm = tile
    tp = threads // (tm // 4) * rp
    if not _tile_fits(Capabilities.from_device(device), threads, tp, tm):
        assert (threads == 512 and not _tile_fits(Capabilities.from_device(device), 512, 128, 128)) or tp == 256
        with pytest.raises(DmlValidationError, match="max-compute-workgroup-storage-size"):
            ConvolutionIntegerOperator(device, desc, "dot4", pixels_per_thread=rp, threads=threads, tile_channels=tm)
        return
    op = ConvolutionIntegerOperator(device, desc, "dot4", pixels_per_thread=rp, threads=threads, tile_channels=tm)
    assert op.tile == (tp, tm)
    run_op(
        device,
        op,
        tensor_from(x),
        tensor_from(w),
        tensor_from(np.full((1, 1, 1, 1), 77, np.uint8)),
        tensor_from(wz.reshape(1, -1, 1, 1)),
        desc.output,
        expected,
    )


def split_layer(rng):
    """The grouped UINT8 layer of the split-K and stream-K tests: inputs (tensor_from pairs) with
    an input zero point of 77 and per-channel filter zero points, a padded (strided) output
    description with guard bands, the compiled description and the expected output."""
    x, w, wz, params, expected = grouped_u8_layer(rng, (7, 6))
    x_in, w_in = tensor_from(x), tensor_from(w)
    xz_in = tensor_from(np.full((1, 1, 1, 1), 77, np.uint8))
    wz_in = tensor_from(wz.reshape(1, -1, 1, 1))
    out_desc = strided_desc(DataType.INT32, expected.shape, "padded", output=True)
    desc = ConvolutionIntegerDesc(x_in[0], w_in[0], out_desc, xz_in[0], wz_in[0], **params)
    return x_in, w_in, xz_in, wz_in, out_desc, desc, expected


def test_dot4_pack_quads(device, rng):
    """The dot4 input pack four pixels a thread (X_QUAD: Cg not a multiple of 16, rows of whole
    aligned words): channels past Cg (24 and groups of 20) read as 0 and stay unflipped, groups,
    padding, an input whose rows are padded (H stride 12 for W 8); and the layers it does not take
    (W 7, an NHWC input whose W stride is C, Cg a multiple of 16: X_FAST's vec4 a thread); every
    sign mix; exact."""
    cases = [
        (dict(c=24, m=16, hw=(6, 8), start_padding=(1, 1), end_padding=(1, 1)), None, True),
        (dict(c=40, m=32, hw=(5, 12), group_count=2, start_padding=(0, 1)), None, True),
        (dict(c=24, m=16, hw=(5, 8)), "rows12", True),
        (dict(c=24, m=16, hw=(5, 7), start_padding=(1, 1)), None, False),
        (dict(c=20, m=16, hw=(4, 8)), "nhwc", False),
        (dict(c=32, m=16, hw=(4, 8)), None, False),
    ]
    for i, (case, layout, quad) in enumerate(cases):
        p = dict(case)
        params = {k: p.pop(k) for k in ("start_padding", "end_padding", "group_count") if k in p}
        mix = MIXES[i % len(MIXES)]
        x, w, xz, wz = random_case(rng, *mix, **p, zp="tensor", wzp="channel", **params)
        n, c, h, wd = x.shape
        x_in = None
        if layout == "rows12":
            x_in = tensor_from(x, TensorDesc(DataType.from_numpy(x.dtype), x.shape, (c * h * 12, h * 12, 12, 1)))
        elif layout == "nhwc":
            x_in = tensor_from(x, TensorDesc(DataType.from_numpy(x.dtype), x.shape, (h * wd * c, 1, wd * c, c)))
        ops = []
        check(device, "dot4", x, w, xz, wz, x_in=x_in, ops=ops, **params)
        if ops:
            consts = dict(ops[0].plan.steps[0].constants)
            assert consts.get("X_QUAD", 0) == int(quad), case


def test_dot4_steps_cross_taps(device, rng):
    """The GEMM's k line is the taps' channel-word rows end to end: with Cg/4 padded to 4, 8, 12 or
    16 words a 16-word step holds up to four taps, or the end of one and the start of the next,
    and only the last step is partial (k_steps = ceil(KH*KW*CG4P/16)); with padding, strides,
    dilations, groups, 1-D, every zero-point form and two sign mixes; exact."""
    cases = [
        dict(c=4, m=16, hw=(6, 7), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)),  # 4 taps a step
        dict(c=40, m=32, hw=(7, 6), k=(3, 2), group_count=2, strides=(2, 1), start_padding=(1, 0)),
        dict(c=36, m=20, hw=(9, 8), k=(3, 3), dilations=(2, 1), start_padding=(2, 1), end_padding=(2, 1)),
        dict(c=52, m=24, hw=(5, 6), k=(2, 3), strides=(1, 2), start_padding=(0, 1), end_padding=(1, 1)),
        dict(c=24, m=17, hw=(11,), k=(5,), strides=(2,), dilations=(1,), start_padding=(2,), end_padding=(1,)),
    ]
    zps = [("tensor", "channel"), (None, None), ("tensor", "tensor"), (None, "channel"), ("tensor", "channel")]
    for i, case in enumerate(cases):
        p = dict(case)
        names = ("strides", "dilations", "start_padding", "end_padding", "group_count")
        params = {k: p.pop(k) for k in names if k in p}
        zp, wzp = zps[i]
        mix = MIXES[i % len(MIXES)]
        x, w, xz, wz = random_case(rng, *mix, **p, zp=zp, wzp=wzp, **params)
        ops = []
        check(device, "dot4", x, w, xz, wz, ops=ops, **params)
        if ops:
            cg = w.shape[1]
            cg4p = -(-(-(-cg // 4)) // 4) * 4
            assert ops[0].k_steps == -(-int(np.prod(w.shape[2:])) * cg4p // 16), case


@pytest.mark.parametrize("split", [2, 3, 5, 100, 4], ids=lambda s: f"split{s}")
def test_dot4_split_k(device, split, rng):
    """Split-K (slices of k steps added atomically into the zeroed output): steps that do not
    split evenly (14 steps of the taps' 24-word rows end to end, the last one partial: 2x7, 3 ->
    slices of 5, 5, 4; 5 -> 3, 3, 3, 3, 2; 100 -> 14 slices of 1), slices and steps starting
    mid-tap (a step holds the end of one tap and the start of the next), groups, all four
    zero-point corrections, a strided output with guard bands (run_checked), both tile sizes."""
    need_kernel(device, "dot4")
    x_in, w_in, xz_in, wz_in, out_desc, desc, expected = split_layer(rng)
    rp = 8 if split in (2, 100, 4) else 4
    threads = {3: 128, 4: 512 if _tile_fits(Capabilities.from_device(device), 512, 128, 128) else 256}.get(split, 128)
    op = ConvolutionIntegerOperator(device, desc, "dot4", pixels_per_thread=rp, threads=threads, split_k=split)
    assert op.k_steps == 14 and op.slices == {2: 2, 3: 3, 5: 5, 100: 14, 4: 4}[split] and op.dispatches == 2
    assert not dict(op.plan.details)["zero_linear"]  # a padded output: zeroed through the 4-D index
    run_op(device, op, x_in, w_in, xz_in, wz_in, out_desc, expected)


@pytest.mark.parametrize("per", [5, 13, 1, 11], ids=lambda p: f"steps{p}")
def test_dot4_stream_k(device, per, rng):
    """Stream-K: workgroups of `per` consecutive k steps of the tile-major line of all tiles' steps
    (14 a tile), so most start mid-tile and cross into the next tile (two segments, each adding
    its own corrections; the segment holding a tile's first step adds K zx' zw'), with the
    pixels-a-thread values 5-7 whose tiles leave staging rows unused, a strided output with guard
    bands, groups and all four zero-point corrections."""
    need_kernel(device, "dot4")
    x_in, w_in, xz_in, wz_in, out_desc, desc, expected = split_layer(rng)
    rp, threads = {5: (5, 256), 13: (6, 128), 1: (7, 256), 11: (7, 512)}[per]
    if threads == 512 and not _tile_fits(Capabilities.from_device(device), 512, 128, 128):
        threads = 256
    op = ConvolutionIntegerOperator(
        device, desc, "dot4", pixels_per_thread=rp, threads=threads, steps_per_workgroup=per
    )
    assert op.k_steps == 14 and op.slice_steps == per and op.tiles > 1
    assert op.workgroups == -(-op.tiles * 14 // per)
    run_op(device, op, x_in, w_in, xz_in, wz_in, out_desc, expected)


def test_dot4_split_k_overflow_and_mixes(device, rng):
    """Split-K partial sums that wrap (test_overflow_wraps' layer over 4 slices: wrapping adds are
    exact in any order), an int8 input with a zero point against a uint8 filter, and split_k
    validation."""
    need_kernel(device, "dot4")
    c = 4097
    x0 = np.zeros((1, c, 3, 3), np.uint8)
    w0 = np.full((2, c, 3, 3), -128, np.int8)
    w0[1] = 127
    x1 = rng.integers(-128, 128, (2, 48, 5, 5)).astype(np.int8)
    w1 = rng.integers(0, 256, (20, 48, 3, 3)).astype(np.uint8)
    for xx, ww, xz, wz, pad in ((x0, w0, np.uint8(255), np.int8(127), 0), (x1, w1, np.int8(-3), None, 1)):
        params = dict(start_padding=(pad, pad), end_padding=(pad, pad))
        exp = reference(xx, ww, xz, wz, **params)
        dt = DataType.from_numpy
        desc = ConvolutionIntegerDesc(
            TensorDesc(dt(xx.dtype), xx.shape),
            TensorDesc(dt(ww.dtype), ww.shape),
            TensorDesc(DataType.INT32, exp.shape),
            TensorDesc(dt(xx.dtype), (1, 1, 1, 1)),
            None if wz is None else TensorDesc(dt(ww.dtype), (1, 1, 1, 1)),
            **params,
        )
        op = ConvolutionIntegerOperator(device, desc, "dot4", split_k=4)
        assert op.slices == 4  # 579 steps: 3 x 145 and 144; 7 steps (48 channels): 2, 2, 2, 1
        assert dict(op.plan.details)["zero_linear"]  # packed output: zeroed by linear index
        run_op(
            device,
            op,
            tensor_from(xx),
            tensor_from(ww),
            tensor_from(np.asarray(xz).reshape(1, 1, 1, 1)),
            None if wz is None else tensor_from(np.asarray(wz).reshape(1, 1, 1, 1)),
            desc.output,
            exp,
        )
    assert exp is not None and int(reference(x0, w0, np.uint8(255), np.int8(127))[0, 0, 0, 0]) < 0
    for bad in (0, -1, 1.5, True):
        with pytest.raises(DmlValidationError, match="split_k"):
            ConvolutionIntegerOperator(device, desc, "dot4", split_k=bad)
        with pytest.raises(DmlValidationError, match="steps_per_workgroup"):
            ConvolutionIntegerOperator(device, desc, "dot4", steps_per_workgroup=bad)
    with pytest.raises(DmlValidationError, match="at most one"):
        ConvolutionIntegerOperator(device, desc, "dot4", split_k=2, steps_per_workgroup=3)
    for bad in (3, 9, 4.0, True):
        with pytest.raises(DmlValidationError, match="pixels_per_thread"):
            ConvolutionIntegerOperator(device, desc, "dot4", pixels_per_thread=bad)


def test_gemm_shape_choice():
    """The H100-tuned tile and split choice on the issue's layers (only speed depends on it)."""
    from dmlwgsl.ops.convolution_integer import _gemm_shape

    def mb(n, m, hw):
        return n * m * hw * 4 / 1e6

    # (pixels a thread, threads, channels a tile, k steps a workgroup): the fastest measured on
    # each layer of the 266 + 36 configurations swept (bench/README.md)
    assert _gemm_shape(None, 8 * 56 * 56, 64, 1, 9, mb(8, 64, 3136)) == (6, 512, 64, 9)  # 192x64 tiles: 131 workgroups
    assert _gemm_shape(None, 8 * 28 * 28, 256, 1, 36, mb(8, 256, 784)) == (6, 512, 128, 36)
    assert _gemm_shape(None, 32 * 28 * 28, 128, 1, 18, mb(32, 128, 784)) == (6, 512, 128, 18)
    assert _gemm_shape(None, 8 * 14 * 14, 512, 1, 72, mb(8, 512, 196)) == (7, 512, 128, 31)  # stream-K, 131 workgroups


# ------------------------------------------------------------------------------------------------
# numpy one-liner, kernel choice, cache
# ------------------------------------------------------------------------------------------------
def test_one_liner_zero_point_forms(device, rng):
    x = rng.integers(-128, 128, (1, 4, 5, 5)).astype(np.int8)
    w = rng.integers(0, 256, (3, 4, 3, 3)).astype(np.uint8)
    wz = rng.integers(0, 256, 3).astype(np.uint8)
    want = reference(x, w, np.int8(-5), wz, start_padding=(1, 1), end_padding=(1, 1))
    for xz_form in (-5, np.array(-5, np.int8)):
        for wz_form in (wz, wz.reshape(1, 3, 1, 1)):
            got = convolution_integer(x, w, xz_form, wz_form, start_padding=(1, 1), end_padding=(1, 1), device=device)
            assert got.dtype == np.int32
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(convolution_integer(x, w, device=device), reference(x, w))


def test_auto_kernel_and_cache(device, rng):
    def desc(h, w):
        return ConvolutionIntegerDesc(
            TensorDesc(U8, (1, 16, h, w)),
            TensorDesc(I8, (16, 16, 3, 3)),
            TensorDesc(DataType.INT32, (1, 16, h - 2, w - 2)),
        )

    op = compile_convolution_integer(desc(6, 7), device=device)
    cpu = Capabilities.from_device(device).is_cpu
    # 16 channels: the GEMM (3 k steps, its taps' 4-word rows end to end; im2col would take 3 too) on
    # a GPU, the one-pass window kernel on a CPU adapter (20 output positions); without dot4 the
    # direct kernel, whose 4x5 tile leaves most of its threads idle: on a CPU adapter the portable kernel
    if dot4_available(device):
        assert op.kernel == ("dot4_window" if cpu else "dot4")
    else:
        assert op.kernel == ("portable" if cpu else "direct")
    # the GEMM's pipelines are shared by every shape, the window kernel's by every layer of the same
    # window, and on a CPU adapter direct_dot4's too (it stages into the whole budget there; on a GPU
    # its staging sizes follow the tile)
    kernels = ["dot4", "dot4_im2col", "dot4_window"] + (["direct_dot4"] if cpu else [])
    for kernel in kernels if dot4_available(device) else [None]:
        op = compile_convolution_integer(desc(6, 7), device=device, kernel=kernel)
        misses = device.pipelines.misses
        op2 = compile_convolution_integer(desc(9, 5), device=device, kernel=kernel)
        assert device.pipelines.misses == misses and op2.cache_keys == op.cache_keys, kernel
    small = ConvolutionIntegerDesc(
        TensorDesc(U8, (1, 2, 4, 4)), TensorDesc(I8, (2, 2, 3, 3)), TensorDesc(DataType.INT32, (1, 2, 2, 2))
    )
    # (C = 2 on 4 output positions: a CPU adapter's f32 multiply-adds, see _CPU_GFMA_STEM_POSITIONS)
    assert compile_convolution_integer(small, device=device).kernel == ("grouped_fma" if cpu else "direct")
    with pytest.raises(PlanError, match="kernel: must be one of"):
        compile_convolution_integer(small, device=device, kernel="fast")


def test_dot4_unavailable_raises(device):
    """An adapter without the packed dot product (this one's record without the WGSL feature):
    requesting dot4 is a named error before any GPU work; a dense layer falls back to direct."""
    caps = Capabilities.from_device(device)
    bare = dataclasses.replace(caps, wgsl_features=frozenset(caps.wgsl_features - {"packed_4x8_integer_dot_product"}))
    dense = ConvolutionIntegerDesc(
        TensorDesc(U8, (1, 16, 4, 4)), TensorDesc(I8, (16, 16, 3, 3)), TensorDesc(DataType.INT32, (1, 16, 2, 2))
    )
    with pytest.raises(
        PlanError, match="kernel: 'dot4' needs the WGSL language feature packed_4x8_integer_dot_product"
    ):
        compile_convolution_integer(dense, device=device, kernel="dot4", capabilities=bare)
    op = compile_convolution_integer(dense, device=device, capabilities=bare)
    assert "no packed_4x8_integer_dot_product" in op.plan.why
    if caps.is_cpu:  # a 2x2 tile of 16 channels: 32 of 256 threads busy
        assert op.kernel == "portable" and "CPU adapter" in op.plan.why
    else:
        assert op.kernel == "direct"


# ------------------------------------------------------------------------------------------------
# Validation: one test per rule, before any GPU work (no device needed)
# ------------------------------------------------------------------------------------------------
def make_desc(**over):
    base = dict(
        input=TensorDesc(U8, (1, 4, 5, 5)),
        filter=TensorDesc(I8, (6, 2, 3, 3)),
        output=TensorDesc(DataType.INT32, (1, 6, 3, 3)),
        group_count=2,
    )
    base.update(over)
    return ConvolutionIntegerDesc(**base)


INVALID = {
    "input dtype": (dict(input=TensorDesc(DataType.INT16, (1, 4, 5, 5))), r"input\.data_type: INT16 is not supported"),
    "filter dtype": (dict(filter=TensorDesc(DataType.FLOAT32, (6, 2, 3, 3))), r"filter\.data_type: FLOAT32"),
    "output dtype": (dict(output=TensorDesc(DataType.UINT32, (1, 6, 3, 3))), r"output\.data_type: UINT32"),
    "rank": (dict(input=TensorDesc(U8, (1, 4, 5, 5, 1))), r"input\.sizes: dimension count must be in 3\.\.4"),
    "filter rank": (dict(filter=TensorDesc(I8, (6, 2, 9))), r"filter\.sizes: dimension count must be in \[4\]"),
    "input zp dtype": (
        dict(input_zero_point=TensorDesc(I8, (1, 1, 1, 1))),
        r"input_zero_point\.data_type: must equal input\.data_type \(UINT8\); got INT8",
    ),
    "filter zp dtype": (
        dict(filter_zero_point=TensorDesc(U8, (1, 1, 1, 1))),
        r"filter_zero_point\.data_type: must equal filter\.data_type \(INT8\); got UINT8",
    ),
    "input zp shape": (
        dict(input_zero_point=TensorDesc(U8, (1, 4, 1, 1))),
        r"input_zero_point\.sizes: must be all ones",
    ),
    "filter zp shape": (
        dict(filter_zero_point=TensorDesc(I8, (1, 4, 1, 1))),
        r"filter_zero_point\.sizes: must be all ones \(per tensor\) or \[1, 6, 1, 1\]",
    ),
    "zp ranks differ": (
        dict(input_zero_point=TensorDesc(U8, (1,)), filter_zero_point=TensorDesc(I8, (1, 6, 1, 1))),
        r"the two zero points must have the same dimension count",
    ),
    "C not divisible": (
        dict(group_count=3, filter=TensorDesc(I8, (6, 1, 3, 3))),
        r"input\.sizes\[1\]: channels C \(4\) must be divisible by group_count \(3\)",
    ),
    "M not divisible": (
        dict(filter=TensorDesc(I8, (5, 2, 3, 3)), output=TensorDesc(DataType.INT32, (1, 5, 3, 3))),
        r"filter\.sizes\[0\]: output channels M \(5\) must be divisible by group_count \(2\)",
    ),
    "filter channels": (
        dict(filter=TensorDesc(I8, (6, 4, 3, 3))),
        r"filter\.sizes\[1\]: must equal C/group_count \(2\); got 4",
    ),
    "group_count 0": (dict(group_count=0), r"group_count: must be an integer >= 1"),
    "stride 0": (dict(strides=(1, 0)), r"strides\[1\]: must be >= 1; got 0"),
    "dilation 0": (dict(dilations=(0, 1)), r"dilations\[0\]: must be >= 1; got 0"),
    "param length": (dict(start_padding=(1,)), r"start_padding: must have one entry per spatial dimension \(2\)"),
    "kernel too large": (
        dict(dilations=(3, 1)),
        r"filter\.sizes\[2\]: the dilated kernel \(1 \+ \(3 - 1\) \* 3 = 7\) must not be larger than "
        r"the padded input \(5 \+ 0 \+ 0 = 5\)",
    ),
    "output N": (dict(output=TensorDesc(DataType.INT32, (2, 6, 3, 3))), r"output\.sizes\[0\]: must equal N"),
    "output M": (dict(output=TensorDesc(DataType.INT32, (1, 4, 3, 3))), r"output\.sizes\[1\]: must equal M"),
    "output H": (
        dict(output=TensorDesc(DataType.INT32, (1, 6, 4, 3))),
        r"output\.sizes\[2\]: must equal 1 \+ \(In \+ pads - \(1 \+ \(K-1\)\*dilation\)\) / stride = 3; got 4",
    ),
    "output W": (
        dict(output=TensorDesc(DataType.INT32, (1, 6, 3, 2)), strides=(1, 1)),
        r"output\.sizes\[3\]: must equal 1 \+ .* = 3; got 2",
    ),
    "output overlap": (
        dict(output=TensorDesc(DataType.INT32, (1, 6, 3, 3), (0, 1, 1, 1), 64)),
        r"output\.strides: two elements of an output may not share an address",
    ),
}


@pytest.mark.parametrize("rule", sorted(INVALID))
def test_validation(rule):
    over, message = INVALID[rule]
    with pytest.raises(DmlValidationError, match=message):
        make_desc(**over).validate()


def test_valid_description_passes():
    make_desc(input_zero_point=TensorDesc(U8, (1, 1, 1, 1)), filter_zero_point=TensorDesc(I8, (1, 6, 1, 1))).validate()
    ConvolutionIntegerDesc(
        TensorDesc(U8, (1, 4, 7)),
        TensorDesc(U8, (2, 4, 3)),
        TensorDesc(DataType.INT32, (1, 2, 5)),
        filter_zero_point=TensorDesc(U8, (1, 2, 1)),
        strides=(1,),
        dilations=(1,),
        start_padding=(0,),
        end_padding=(0,),
    ).validate()


def test_one_liner_validates_before_gpu(monkeypatch):
    import dmlwgsl.ops.convolution_integer as mod

    def no_gpu():
        raise AssertionError("GPU touched before validation")

    monkeypatch.setattr(mod, "default_device", no_gpu)
    x = np.zeros((1, 4, 5, 5), np.uint8)
    w = np.zeros((2, 4, 3, 3), np.int8)
    with pytest.raises(DmlValidationError, match=r"strides\[0\]: must be >= 1"):
        convolution_integer(x, w, strides=(0, 1))
    with pytest.raises(DmlValidationError, match=r"input\.data_type: FLOAT32"):
        convolution_integer(x.astype(np.float32), w)
    with pytest.raises(DmlValidationError, match=r"input_zero_point: values must fit the data type uint8"):
        convolution_integer(x, w, 300)
    with pytest.raises(DmlValidationError, match=r"filter_zero_point\.sizes: must be a scalar, \(M,\)"):
        convolution_integer(x, w, None, np.zeros(3, np.int8))
    with pytest.raises(DmlValidationError, match=r"filter\.sizes\[1\]: must equal C/group_count"):
        convolution_integer(x, w, group_count=2)


def test_repeat_calls_take_the_shortcut(device, rng):
    """A compiled op called again on the same GpuTensors replays its recorded dispatches (no
    argument checks); a one-liner repeated on arrays of one layout reuses its description object
    (the operator cache hit by identity), while a bool or float parameter is still rejected."""
    x, w, xz, wz = random_case(rng, np.uint8, np.int8, c=4, m=4, hw=(6, 6))
    params = dict(start_padding=(1, 1), end_padding=(1, 1))
    expected = reference(x, w, xz, wz, **params)
    got = convolution_integer(x, w, int(xz), wz, device=device, **params)
    np.testing.assert_array_equal(got, expected)
    before = len(convolution_integer_module._ONELINER_DESCS)
    got = convolution_integer(x + 0, w, int(xz), wz, device=device, **params)  # a new array, same layout
    np.testing.assert_array_equal(got, expected)
    assert len(convolution_integer_module._ONELINER_DESCS) == before
    with pytest.raises(DmlValidationError, match=r"strides"):
        convolution_integer(x, w, int(xz), wz, device=device, strides=(True, 1), **params)
    with pytest.raises(DmlValidationError, match=r"must be an integer"):
        convolution_integer(x, w, int(xz), wz, device=device, start_padding=(1.0, 1), end_padding=(1, 1))
    desc = ConvolutionIntegerDesc(
        TensorDesc(U8, x.shape), TensorDesc(I8, w.shape), TensorDesc(DataType.INT32, expected.shape), **params
    )
    op = compile_convolution_integer(desc, device=device)
    gx, gw, go = device.upload(x), device.upload(w), device.tensor(desc.output)
    op(gx, gw, go)
    with unittest.mock.patch.object(op, "_check_args", side_effect=AssertionError("checked again")):
        op(gx, gw, go)
    np.testing.assert_array_equal(go.numpy(), reference(x, w, None, None, **params))


@pytest.mark.parametrize("mix", MIXES, ids=lambda m: f"{np.dtype(m[0]).name}_{np.dtype(m[1]).name}")
def test_im2col_word_forms(device, mix, rng):
    """The im2col pack's word gathers: the row form (each kernel row as whole words gathered from
    the input row's words; lanes past KW 0, lanes outside the input the zero point) where it costs
    no k step, and otherwise the dense tap order with each word from two spans of input rows (KW >=
    3) or byte by byte: kernel widths 1-9, rows cut by padding on either side, strides 1-3, H and W
    dilation, groups, 1-D, batch items, every zero-point form; exact."""
    names = ("strides", "dilations", "start_padding", "end_padding", "group_count")
    zps = [(None, None), ("tensor", "tensor"), ("tensor", "channel"), (None, "channel")]
    cases = [
        dict(c=3, m=16, hw=(15, 17), k=(7, 7), strides=(2, 2), start_padding=(3, 3), end_padding=(3, 2)),
        dict(n=2, c=3, m=16, hw=(9, 11), k=(5, 5), start_padding=(2, 2), end_padding=(2, 2)),
        dict(c=4, m=16, hw=(7, 13), k=(3, 8), strides=(1, 3), start_padding=(1, 4), end_padding=(0, 3)),
        dict(c=6, m=32, hw=(8, 9), k=(2, 6), dilations=(2, 1), start_padding=(1, 0), end_padding=(1, 5)),
        dict(c=8, m=32, hw=(6, 7), k=(1, 4), group_count=2, start_padding=(0, 1), end_padding=(0, 2)),
        dict(c=2, m=16, hw=(23,), k=(7,), strides=(2,), dilations=(1,), start_padding=(3,), end_padding=(3,)),
    ]
    for i, case in enumerate(cases):
        p = dict(case)
        params = {k: p.pop(k) for k in names if k in p}
        zp, wzp = zps[i % len(zps)]
        x, w, xz, wz = random_case(rng, *mix, **p, zp=zp, wzp=wzp, **params)
        ops = []
        check(device, "dot4_im2col", x, w, xz, wz, ops=ops, **params)
        assert dict(ops[0].plan.steps[0].constants).get("IM2COL_ROWS") == 1, case
    # where the row form would cost k steps (a 3x3 on 24 channels: 5, not 4), the dense tap order
    # gathers each word from two spans of input rows (KW >= 3); KW < 3 or W dilation: byte gathers
    dense = [
        dict(c=24, m=16, hw=(5, 6), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)),
        dict(n=2, c=20, m=16, hw=(7, 9), k=(5, 5), strides=(2, 1), start_padding=(2, 2), end_padding=(1, 2)),
        dict(c=12, m=16, hw=(6, 20), k=(2, 9), start_padding=(1, 4), end_padding=(0, 4)),
        dict(c=40, m=32, hw=(5, 8), k=(3, 3), group_count=2, dilations=(2, 1), start_padding=(2, 1)),
        dict(c=56, m=16, hw=(31,), k=(3,), strides=(3,), dilations=(1,), start_padding=(1,), end_padding=(2,)),
        dict(c=24, m=16, hw=(6, 7), k=(3, 2), start_padding=(1, 1), end_padding=(1, 0)),  # KW 2: bytes
        dict(c=24, m=16, hw=(6, 9), k=(3, 3), dilations=(1, 2), start_padding=(1, 2)),  # W dilation: bytes
    ]
    for i, case in enumerate(dense):
        p = dict(case)
        params = {k: p.pop(k) for k in names if k in p}
        zp, wzp = zps[(i + 1) % len(zps)]
        x, w, xz, wz = random_case(rng, *mix, **p, zp=zp, wzp=wzp, **params)
        ops = []
        check(device, "dot4_im2col", x, w, xz, wz, ops=ops, **params)
        consts = dict(ops[0].plan.steps[0].constants)
        assert "IM2COL_ROWS" not in consts, case
        assert consts.get("IM2COL_DENSE_ROWS", 0) == int(i < 5), case


@pytest.mark.parametrize("mix", MIXES, ids=lambda m: f"{np.dtype(m[0]).name}_{np.dtype(m[1]).name}")
def test_window_kernel(device, mix, rng):
    """The window kernel (one pixel's whole window a thread against a staged block of filter rows):
    the row walk (kernel rows of 1 and 2 words, rows cut by padding on either side, strides, H
    dilation, 1-D, batch items, 16- and 32-channel blocks with a partial last block, tiles walked
    with a partial last one), on CPU adapters also its tile form (4 pixels of an output row a
    thread, W strides up to 3, output rows not whole quads, 8-channel blocks with a partial
    last), and the four-words-a-time gathers where rows cannot be walked (an NHWC input: byte
    gathers; KW = 9: dense rows; W dilation: bytes); a padded output; every zero-point form;
    exact."""
    names = ("strides", "dilations", "start_padding", "end_padding", "group_count")
    zps = [(None, None), ("tensor", "tensor"), ("tensor", "channel"), (None, "channel")]
    cases = [
        # (case, input pattern, tuning, the entry point's suffix)
        (
            dict(c=3, m=40, hw=(15, 17), k=(7, 7), strides=(2, 2), start_padding=(3, 3), end_padding=(3, 2)),
            "packed",
            {},
            "_rows",
        ),
        (dict(n=2, c=4, m=16, hw=(9, 11), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)), "padded", {}, "_rows"),
        (
            dict(c=2, m=24, hw=(23,), k=(7,), strides=(2,), dilations=(1,), start_padding=(3,), end_padding=(3,)),
            "packed",
            {},
            "_rows",
        ),
        (
            dict(n=3, c=3, m=20, hw=(8, 13), k=(3, 6), dilations=(2, 1), start_padding=(1, 5), end_padding=(2, 4)),
            "packed",
            dict(window_tiles=2, threads=64),
            "_rows",
        ),
        (dict(c=3, m=16, hw=(9, 10), k=(3, 3), strides=(1, 2), start_padding=(1, 1)), "nhwc", {}, ""),
        (dict(c=2, m=16, hw=(5, 21), k=(2, 9), start_padding=(1, 4), end_padding=(0, 4)), "packed", {}, ""),
        (
            dict(c=3, m=24, hw=(6, 11), k=(3, 3), dilations=(1, 2), start_padding=(1, 2)),
            "packed",
            dict(window_channels=16),
            "",
        ),
    ]
    # The row-form cases run twice: as the plan takes them (on CPU adapters the tile form, 4 pixels
    # a thread against 8 channels) and with a channel block requested (the one-pixel row form).
    cpu = Capabilities.from_device(device).is_cpu
    cases += [
        (
            dict(n=2, c=5, m=12, hw=(7, 22), k=(2, 4), strides=(1, 3), start_padding=(1, 3), end_padding=(0, 2)),
            "packed",
            {},
            "_rows",
        ),
        (dict(c=2, m=9, hw=(6, 19), k=(3, 8), start_padding=(1, 7), end_padding=(1, 0)), "padded", {}, "_rows"),
        # grouped (dense groups: the tile form's blocks stay within a group)
        (
            dict(c=32, m=12, hw=(6, 9), k=(3, 3), group_count=2, start_padding=(1, 1), end_padding=(1, 1)),
            "packed",
            {},
            "_rows",
        ),
        # grouped, 2-8 channels a group (GPUs take these where the grouped FMA kernel does not: stride 2,
        # past 258 taps): a group's blocks of 16 channels mostly idle, partial last tiles
        (
            dict(
                c=16, m=8, hw=(9, 11), k=(5, 5), group_count=4, strides=(2, 2), start_padding=(2, 2), end_padding=(2, 2)
            ),
            "packed",
            {},
            "_rows",
        ),
        (
            dict(n=2, c=24, m=48, hw=(7, 10), k=(3, 3), group_count=3, strides=(2, 2), start_padding=(1, 1)),
            "packed",
            {},
            "_rows",
        ),
        (
            dict(
                c=16,
                m=16,
                hw=(29,),
                k=(7,),
                group_count=2,
                strides=(2,),
                dilations=(1,),
                start_padding=(3,),
                end_padding=(3,),
            ),
            "packed",
            {},
            "_rows",
        ),
        # W-dilated rows: the tile form on CPU adapters (its taps gathered from the span a byte at a
        # time), the one-pixel form's byte gathers elsewhere
        (
            dict(c=3, m=10, hw=(7, 13), k=(3, 3), dilations=(1, 2), start_padding=(2, 2), end_padding=(2, 2)),
            "packed",
            {},
            "dil",
        ),
        (
            dict(n=2, c=2, m=17, hw=(5, 23), k=(2, 3), strides=(1, 2), dilations=(2, 2), start_padding=(1, 2)),
            "padded",
            {},
            "dil",
        ),
        (
            dict(c=4, m=8, hw=(4, 19), k=(1, 5), dilations=(1, 3), start_padding=(0, 6), end_padding=(0, 5)),
            "packed",
            {},
            "dil",
        ),
        (dict(c=2, m=8, hw=(3, 30), k=(2, 6), dilations=(1, 2), start_padding=(1, 4)), "packed", {}, "dil"),
    ]
    cases = [
        (case, pattern, tuning, ("_tile" if cpu else "") if entry == "dil" else entry)
        for case, pattern, tuning, entry in cases
    ]
    cases = [
        (case, pattern, t, ("_tile" if cpu and "window_channels" not in t else entry) if entry == "_rows" else entry)
        for case, pattern, tuning, entry in cases
        for t in ([tuning, {**tuning, "window_channels": 16}] if entry == "_rows" else [tuning])
    ]
    for i, (case, pattern, tuning, entry) in enumerate(cases):
        p = dict(case)
        params = {k: p.pop(k) for k in names if k in p}
        zp, wzp = zps[(i + MIXES.index(mix)) % len(zps)]
        x, w, xz, wz = random_case(rng, *mix, **p, zp=zp, wzp=wzp, **params)
        x_desc = strided_desc(DataType.from_numpy(x.dtype), x.shape, pattern)
        ops = []
        check(
            device,
            "dot4_window",
            x,
            w,
            xz,
            wz,
            x_in=(x_desc, tensor_bytes(x_desc, x)),
            out_pattern="padded",
            ops=ops,
            tuning=tuning,
            **params,
        )
        (step,) = ops[0].plan.steps
        assert step.name == "convolution_integer_dot4_window" + entry, case
        u = step.uniforms_dict
        assert u["win_tiles"] == tuning.get("window_tiles", 1) and u["channel_blocks"] == -(
            -(case["m"] // params.get("group_count", 1)) // step.constants_dict["CPT"]
        )


def depthwise_case(device, kernel, mix, rng, case: dict, zps) -> dict:
    """Run one depthwise case (c channels, G = c; its strides, dilations and padding) with random
    data of the mix and zero-point forms ``zps`` on ``kernel``, checked exactly; returns the
    plan's constants."""
    p = dict(case)
    params = {k: p.pop(k) for k in ("strides", "dilations", "start_padding", "end_padding") if k in p}
    params["group_count"] = p["c"]
    zp, wzp = zps
    x, w, xz, wz = random_case(rng, *mix, **p, zp=zp, wzp=wzp, **params)
    ops = []
    check(device, kernel, x, w, xz, wz, ops=ops, **params)
    return dict(ops[0].plan.steps[0].constants)


def fma_nhwc_and_largest_sums(device, kernel, mix, rng, *, c, m, cg, k):
    """An FMA kernel on an NHWC input into a padded output (C/G = cg over c channels), and on the
    largest sums it must hold exactly: every tap (x - zx)(w - zw) = 255 * -255, cg x KH x KW taps
    (two groups)."""
    params = dict(group_count=c // cg, start_padding=(1, 1), end_padding=(1, 1))
    x, w, xz, wz = random_case(rng, *mix, c=c, m=m, hw=(9, 11), **params)
    x_desc = strided_desc(DataType.from_numpy(x.dtype), x.shape, "nhwc")
    check(device, kernel, x, w, xz, wz, x_in=(x_desc, tensor_bytes(x_desc, x)), out_pattern="padded", **params)
    xt, wt = mix
    xi, wi = np.iinfo(xt), np.iinfo(wt)
    x = np.full((1, 2 * cg, *k), xi.max, xt)
    w = np.full((4, cg, *k), wi.min, wt)
    expected = np.full((1, 4, 1, 1), cg * k[0] * k[1] * 255 * -255, np.int32)
    check(device, kernel, x, w, xt(xi.min), wt(wi.max), expected=expected, group_count=2)


def grouped_fma_cases(device, mix, rng, cases: list) -> list:
    """Run each case (channels, kernel, group count and its strides, dilations and padding) on the
    grouped FMA kernel with random data of the mix, the zero-point forms in turn, checked exactly;
    returns the operators."""
    zps = [(None, None), ("tensor", "tensor"), ("tensor", "channel"), (None, "channel")]
    done = []
    for i, case in enumerate(cases):
        p = dict(case)
        params = {
            k: p.pop(k) for k in ("strides", "dilations", "start_padding", "end_padding", "group_count") if k in p
        }
        zp, wzp = zps[i % len(zps)]
        x, w, xz, wz = random_case(rng, *mix, **p, zp=zp, wzp=wzp, **params)
        ops = []
        check(device, "grouped_fma", x, w, xz, wz, ops=ops, **params)
        done.append(ops[0])
    return done


@pytest.mark.parametrize("mix", MIXES, ids=lambda m: f"{np.dtype(m[0]).name}_{np.dtype(m[1]).name}")
def test_grouped_fma_kernel(device, mix, rng):
    """The grouped FMA kernel (f32 sums of at most 258 taps a group): every sign mix and zero-point
    form; groups of 2 to 24 channels, M/G of 2, 5, 6 and 17 (blocks of four channels partly past
    the group's, two channel blocks), W stride 2, H stride 2 with H dilation 2, a 1x1 kernel of
    16 channels a group at stride 2, kernels 1x8 and 7x7, a dense layer (G = 1),
    rows staged a word at a time (W a multiple of 4) and byte by byte, 1-D, an NHWC input and a
    strided output; and the largest sums (|x - zx| = |w - zw| = 255 at all 252 taps) exact."""
    cases = [
        dict(c=16, m=12, hw=(9, 13), k=(3, 3), group_count=2, start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=8, m=8, hw=(10, 24), k=(3, 3), group_count=2, start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=3, m=20, hw=(23, 30), k=(7, 7), group_count=1, strides=(2, 2), start_padding=(3, 3), end_padding=(3, 3)),
        dict(c=6, m=6, hw=(11, 16), k=(5, 3), group_count=3, strides=(1, 2), start_padding=(2, 0), end_padding=(1, 2)),
        dict(c=24, m=17, hw=(8, 12), k=(3, 3), group_count=1, start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=4, m=10, hw=(40, 70), k=(1, 8), group_count=2, start_padding=(0, 3), end_padding=(0, 4)),
        dict(c=8, m=8, hw=(15, 17), k=(3, 3), group_count=4, strides=(2, 1), dilations=(2, 1), start_padding=(2, 3)),
        dict(c=32, m=12, hw=(9, 11), k=(1, 1), group_count=2, strides=(2, 2), start_padding=(0, 0), end_padding=(0, 0)),
        dict(
            c=8,
            m=8,
            hw=(37,),
            k=(5,),
            group_count=4,
            strides=(1,),
            dilations=(1,),
            start_padding=(2,),
            end_padding=(1,),
        ),
    ]
    grouped_fma_cases(device, mix, rng, cases)
    # an NHWC input and a strided output; 6 x 7 x 6 = 252 taps a group at the largest products
    fma_nhwc_and_largest_sums(device, "grouped_fma", mix, rng, c=8, m=6, cg=6, k=(7, 6))


@pytest.mark.parametrize("mix", MIXES, ids=lambda m: f"{np.dtype(m[0]).name}_{np.dtype(m[1]).name}")
def test_grouped_fma_past_258_taps(device, mix, rng):
    """The grouped FMA kernel on groups of more than 258 taps: f32 sums of CCH channels at a time
    (each at most 258 taps, exact), added in i32. C/G = 8 at 7x7 (392 taps, sums of 5 channels:
    two partial), C/G = 13 at 5x5 (325 taps, sums of 10: a partial one of 3), 1-D C/G = 70 at k 5
    (350 taps), every zero-point form; and the largest sums of 9 x 7 x 6 = 378 taps
    (|x - zx| = |w - zw| = 255 everywhere: -24.6 million, past f32's exact integers) exact."""
    cases = [
        dict(c=16, m=12, hw=(11, 13), k=(7, 7), group_count=2, start_padding=(3, 3), end_padding=(3, 3)),
        dict(c=26, m=4, hw=(9, 17), k=(5, 5), group_count=2, start_padding=(2, 1), end_padding=(1, 2)),
        dict(
            c=70,
            m=3,
            hw=(40,),
            k=(5,),
            group_count=1,
            strides=(1,),
            dilations=(1,),
            start_padding=(2,),
            end_padding=(2,),
        ),
        dict(c=24, m=24, hw=(8, 9), k=(7, 7), group_count=3, start_padding=(3, 3), end_padding=(3, 3)),
    ]
    for case, op in zip(cases, grouped_fma_cases(device, mix, rng, cases)):
        cg, taps = case["c"] // case["group_count"], int(np.prod(case["k"]))
        assert op.plan.steps[0].constants_dict["CCH"] == 258 // taps and cg * taps > 258
    fma_nhwc_and_largest_sums(device, "grouped_fma", mix, rng, c=18, m=6, cg=9, k=(7, 6))


@pytest.mark.parametrize("mix", MIXES, ids=lambda m: f"{np.dtype(m[0]).name}_{np.dtype(m[1]).name}")
def test_depthwise_fma_kernel(device, mix, rng, monkeypatch):
    """The depthwise FMA kernel (C/G = 1, f32 sums): every sign mix and zero-point form; strides,
    dilations, a 1x9 and an 8x8 kernel (64 taps, its most), a channel multiplier, planes stacked in
    a workgroup (small planes), rows in several bands and columns in several tiles, 1-D, rows
    staged a word at a time at every byte offset (ALIGN_S), an NHWC input and a strided output;
    and the largest sums (|x - zx| = |w - zw| = 255 at every tap of an 8x8 kernel) exact; with 1,
    2 and 4 output rows a thread."""
    from dmlwgsl.ops import convolution_integer as ci

    zps = [(None, None), ("tensor", "tensor"), ("tensor", "channel"), (None, "channel")]
    cases = [
        dict(c=5, m=5, hw=(9, 13), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=4, m=8, hw=(11, 21), k=(3, 3), strides=(2, 2), start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=2, m=2, hw=(7, 20), k=(3, 3), dilations=(2, 2), start_padding=(2, 2), end_padding=(2, 2)),
        dict(c=3, m=3, hw=(10, 31), k=(3, 3), strides=(3, 3), start_padding=(0, 1), end_padding=(2, 0)),
        dict(c=2, m=2, hw=(6, 25), k=(1, 9), start_padding=(0, 4), end_padding=(0, 4)),
        dict(c=2, m=4, hw=(12, 12), k=(8, 8), start_padding=(3, 4), end_padding=(4, 3)),
        dict(c=7, m=14, hw=(4, 5), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)),  # planes stacked
        dict(c=2, m=2, hw=(70, 150), k=(3, 5), strides=(1, 2), start_padding=(1, 2), end_padding=(1, 2)),
        dict(c=3, m=3, hw=(41,), k=(5,), strides=(1,), dilations=(2,), start_padding=(4,), end_padding=(3,)),
        # rows on 4-byte boundaries (W a multiple of 4): staged a word at a time, ALIGN_S = 3, 2, 1, 0
        dict(c=3, m=3, hw=(10, 24), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=2, m=2, hw=(9, 32), k=(5, 5), strides=(1, 2), start_padding=(0, 2), end_padding=(2, 1)),
        dict(c=2, m=4, hw=(8, 20), k=(3, 7), start_padding=(1, 3), end_padding=(1, 3)),
        dict(c=2, m=2, hw=(12, 28), k=(8, 8), strides=(2, 2), start_padding=(3, 0), end_padding=(4, 0)),
    ]
    aligned, staging = set(), set()
    # (1 and 4 rows a thread on one mix: each shape is a pipeline of its own, compiled cold)
    for qr in (2, 1, 4) if mix == (np.uint8, np.int8) else (2,):
        monkeypatch.setattr(ci, "_FMA_ROWS", qr)
        for i, case in enumerate(cases):
            if qr != 2 and i % 4:
                continue
            c = depthwise_case(device, "depthwise_fma", mix, rng, case, zps[i % len(zps)])
            aligned.add(c["ALIGN_S"])
            staging.add(c["RS"] > 0)
    # every ALIGN_S; word rows staged both by slot columns (RS) and by items
    assert aligned == {0, 1, 2, 3, 4} and staging == {True, False}
    # an NHWC input and a strided output; 8 x 8 = 64 taps at the largest products
    fma_nhwc_and_largest_sums(device, "depthwise_fma", mix, rng, c=4, m=4, cg=1, k=(8, 8))


@pytest.mark.parametrize("mix", MIXES, ids=lambda m: f"{np.dtype(m[0]).name}_{np.dtype(m[1]).name}")
@pytest.mark.parametrize("wg", [None, 64], ids=["wg_plan", "wg64"])
def test_depthwise_kernel(device, mix, wg, rng, monkeypatch):
    """The depthwise kernel (C/G = 1): every sign mix and zero-point form; its fast rows (3x3
    stride 1 and 2, kernel widths 1 and 4, and 5 to 8 with a second word of taps (DW_KW8) at
    strides 1 and 2, a channel multiplier of 2) with the edge taps reading the zero point, partial
    quads, 16-byte stores where rows are whole quads (DW_VEC), and layers that never take the fast
    rows (dilation 2 along W, 9 wide, a 1-D k3 with stride 3, an input whose rows are not
    contiguous); exact, in the plan's workgroups and in the GPU's 64-thread ones (`wg64`)."""
    if wg is not None:
        from dmlwgsl.ops import convolution_integer as ci

        monkeypatch.setitem(ci._DW_WG, "cpu", wg)
    zps = [(None, None), ("tensor", "tensor"), ("tensor", "channel"), (None, "channel")]
    cases = [
        dict(c=5, m=5, hw=(9, 13), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=3, m=3, hw=(7, 16), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)),  # 16-byte stores
        dict(c=4, m=8, hw=(11, 21), k=(3, 3), strides=(2, 2), start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=3, m=3, hw=(6, 19), k=(2, 4), start_padding=(0, 2), end_padding=(1, 1)),
        dict(c=3, m=6, hw=(5, 10), k=(1, 1), strides=(1, 2)),
        dict(c=2, m=2, hw=(12, 17), k=(5, 5), start_padding=(2, 2), end_padding=(2, 2)),  # two words a row
        dict(c=3, m=3, hw=(9, 23), k=(7, 7), start_padding=(3, 3), end_padding=(3, 3)),
        dict(c=2, m=4, hw=(8, 29), k=(3, 8), strides=(1, 2), start_padding=(1, 3), end_padding=(0, 4)),
        dict(c=2, m=2, hw=(5, 30), k=(2, 6), strides=(2, 2)),  # no padding: interior eights, stride 2
        dict(c=2, m=2, hw=(7, 20), k=(3, 3), dilations=(1, 2), start_padding=(1, 2), end_padding=(1, 2)),
        dict(c=2, m=2, hw=(4, 24), k=(1, 9), start_padding=(0, 4), end_padding=(0, 4)),  # 9 wide: a tap at a time
        # rows of whole words (DW_ROWS4 from 5 rows: edge masks once a thread): 7x7, stride-2
        # two-word rows (3 rows: per row), an eight with both edges, rows partly above and below
        dict(c=3, m=3, hw=(9, 20), k=(7, 7), start_padding=(3, 3), end_padding=(3, 3)),
        dict(c=2, m=4, hw=(8, 28), k=(3, 8), strides=(1, 2), start_padding=(1, 3), end_padding=(0, 4)),
        dict(c=2, m=2, hw=(3, 4), k=(5, 5), start_padding=(2, 2), end_padding=(2, 2)),
        dict(c=3, m=3, hw=(6, 12), k=(4, 3), strides=(2, 2), start_padding=(2, 1), end_padding=(1, 0)),
        dict(c=2, m=2, hw=(11, 24), k=(6, 7), strides=(2, 2), start_padding=(3, 3), end_padding=(2, 3)),
        # interior eights (threads first) between edge eights (threads last), and a partial last eight
        dict(c=2, m=2, hw=(5, 64), k=(3, 3), start_padding=(1, 1), end_padding=(1, 1)),
        dict(c=3, m=3, hw=(4, 77), k=(3, 5), strides=(1, 2), start_padding=(1, 9), end_padding=(1, 2)),
    ]
    for i, case in enumerate(cases):
        consts = depthwise_case(device, "depthwise", mix, rng, case, zps[i % len(zps)])
        if i in (0, 1, 11, 12, 13, 15):  # 3x3 rows of whole words stay per row; 5-8 rows take DW_ROWS4
            assert consts.get("DW_ROWS4", 0) == int(i in (11, 13, 15)), case
    # 1-D, stride 3 (the tap-at-a-time path for every row)
    p1 = dict(strides=(3,), dilations=(1,), start_padding=(1,), end_padding=(0,), group_count=4)
    x, w, xz, wz = random_case(rng, *mix, c=4, m=4, hw=(40,), k=(3,), **p1)
    check(device, "depthwise", x, w, xz, wz, **p1)
    # an input whose rows are not contiguous (W stride 2): no fast rows
    x, w, xz, wz = random_case(rng, *mix, c=3, m=3, hw=(6, 9), group_count=3, start_padding=(1, 1))
    wide = np.zeros((*x.shape[:3], 2 * x.shape[3]), x.dtype)
    wide[..., ::2] = x
    desc = TensorDesc(DataType.from_numpy(x.dtype), x.shape, (x.shape[1] * x.shape[2] * 18, x.shape[2] * 18, 18, 2))
    x_in = (desc, tensor_bytes(desc, x))
    check(device, "depthwise", x, w, xz, wz, x_in=x_in, group_count=3, start_padding=(1, 1))
    # a filter whose rows are not contiguous (W stride 2): its taps read a byte at a time
    w_desc = TensorDesc(DataType.from_numpy(w.dtype), w.shape, (18, 18, 6, 2))
    check(
        device, "depthwise", x, w, xz, wz, w_in=(w_desc, tensor_bytes(w_desc, w)), group_count=3, start_padding=(1, 1)
    )

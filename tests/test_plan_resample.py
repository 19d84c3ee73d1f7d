"""Resample plans as values, on the kept capability records (no GPU): which kernel, which grid,
which uniforms, which bytes, which table forms; and the dmlwgsl explain options."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from dmlwgsl.ops.resample import (
    KERNELS,
    Resample1Desc,
    Resample2Desc,
    add_explain_arguments,
    explain_plan,
    plan_resample,
    resample,
)
from dmlwgsl.plan import PROFILES, Capabilities, Placement, PlanError
from dmlwgsl.shader import interface
from dmlwgsl.tensor import DataType, DmlValidationError, TensorDesc

F32, F16, I8, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8


def desc(dt, in_sizes, out_sizes, mode="linear", scales=None, in_off=None, out_off=None, out_strides=None):
    r = len(in_sizes)
    scales = scales or tuple(o / i for o, i in zip(out_sizes, in_sizes))
    return Resample1Desc(
        TensorDesc(dt, in_sizes),
        TensorDesc(dt, out_sizes, out_strides),
        mode,
        scales,
        in_off or (0.5,) * r,
        out_off or (-0.5,) * r,
    )


@pytest.fixture(params=PROFILES)
def caps(request):
    return Capabilities.profile(request.param)


@pytest.mark.parametrize(
    "d, kernel",
    [
        (desc(F16, (2, 8, 64, 64), (2, 8, 128, 128)), "resample_rows_pat"),  # x2: a tap pattern
        (desc(F16, (2, 8, 64, 63), (2, 8, 128, 100)), "resample_rows_half"),  # odd W: no pattern
        (desc(F32, (2, 8, 64, 64), (2, 8, 128, 128)), "resample_rows_pat"),
        # 16-bit nearest, W upsampled: the pattern's raw window (GPUs and, since session 31, CPU adapters)
        (desc(F16, (2, 8, 64, 64), (2, 8, 128, 128), "nearest"), "resample_rows_pat"),
        (desc(F16, (2, 8, 64, 64), (2, 8, 32, 128), "nearest"), "resample_rows_pat"),
        (desc(F16, (2, 8, 64, 64), (2, 8, 32, 32), "nearest"), ("resample_packed", "resample_rows")),
        # float32 nearest, H upsampled: the GPU profile keeps resample_packed, a CPU adapter walks rows
        (desc(F32, (2, 8, 64, 64), (2, 8, 128, 128), "nearest"), ("resample_packed", "resample_rows")),
        # batch interpolated: 2 planes blended
        (desc(F32, (2, 8, 64, 64), (4, 8, 128, 128)), "resample_rows_pat"),
        (desc(U8, (2, 8, 64, 64), (2, 8, 128, 128)), "resample_rows_pat"),  # 8-bit x2: a tap pattern
        (desc(U8, (2, 8, 64, 64), (2, 8, 128, 80)), "resample_rows_byte"),  # x1.25: no pattern
        # 8-bit nearest: the pattern where W grows, on every adapter
        (desc(U8, (2, 8, 64, 64), (2, 8, 128, 128), "nearest"), "resample_rows_pat"),
        (desc(F32, (2, 3, 5), (2, 3, 7), out_strides=(1, 2, 6)), "resample_strided"),
        (desc(I8, (2, 3, 5), (2, 3, 7), out_strides=(1, 2, 6)), "resample_atomic"),
    ],
)
def test_the_plan_chooses(caps, d, kernel):
    p = plan_resample(d, caps)
    if isinstance(kernel, tuple):  # (on a GPU, on a CPU adapter)
        kernel = kernel[caps.is_cpu]
    assert p.kernels == [kernel] and p.dispatches == 1
    assert p.why and p.steps[0].why == p.why
    # every uniform the shader declares has a value (packing fails on a missing or extra name)
    s = p.steps[0]
    interface(s.shader).uniform_layout(s.uniform_var).pack(s.uniforms_dict)
    assert s.bindings_dict["input"] == "input" and s.bindings_dict["table4"] == "table4"


def test_grid_and_uniforms(caps):
    d = desc(F32, (2, 8, 64, 64), (2, 8, 128, 128))
    # a small tensor: on a GPU bands of one row keep the most threads (MIN_ROW_THREADS); a CPU
    # adapter runs a few threads at a time and takes long bands (CPU_BAND)
    assert plan_resample(d, caps).steps[0].uniforms_dict["band_rows"] == (32 if caps.is_cpu else 1)
    big = desc(F32, (2, 32, 256, 256), (2, 32, 512, 512))
    band = plan_resample(big, caps).steps[0].uniforms_dict["band_rows"]
    assert band == (32 if caps.is_cpu else 8)  # CPU_BAND, or ROW_BANDS for float32 linear
    s = plan_resample(d, caps, band_rows=8).steps[0]
    # resample_rows: 4 outputs per thread, bands of 8 rows
    u = s.uniforms_dict
    assert (u["row_blocks"], u["band_rows"], u["row_bands"]) == (32, 8, 16)
    assert s.invocations == u["row_threads"] == 2 * 8 * 16 * 32 and s.grid == (32, 1, 1)
    assert u["count"] == 2 * 8 * 128 * 128 and u["input_base"] == u["output_base"] == 0
    p = plan_resample(d, caps, kernel="resample_packed", placements={"output": Placement(8, True)})
    assert p.steps[0].uniforms_dict["output_base"] == 2
    assert p.steps[0].invocations == -(-(8 + 4 * 2 * 8 * 128 * 128) // 16)  # 16-byte blocks touched


def test_bytes_moved_counts_inputs_the_result_depends_on(caps):
    # x2 linear: every input element is read (once), every output written
    d = desc(F32, (1, 2, 8, 8), (1, 2, 16, 16))
    assert plan_resample(d, caps).bytes_moved == 4 * (2 * 8 * 8 + 2 * 16 * 16)
    # nearest 1/2: one input of four is referenced
    d = desc(F32, (1, 2, 8, 8), (1, 2, 4, 4), "nearest")
    assert plan_resample(d, caps).bytes_moved == 4 * (2 * 4 * 4 + 2 * 4 * 4)
    # linear 1/2 with half-pixel centres: both taps at weight 1/2, every input
    d = desc(U8, (1, 2, 8, 8), (1, 2, 4, 4))
    assert plan_resample(d, caps).bytes_moved == 2 * 8 * 8 + 2 * 4 * 4
    # linear at integer coordinates (offsets 0): w1 = 0 everywhere, the second tap is never read
    d = desc(F32, (6,), (3,), scales=(0.5,), in_off=(0.0,), out_off=(0.0,))
    assert plan_resample(d, caps).bytes_moved == 4 * (3 + 3)


def test_placements_choose_the_path():
    caps = Capabilities.profile("h100")
    d = desc(F16, (2, 8, 64, 64), (2, 8, 128, 128))
    assert plan_resample(d, caps).kernels == ["resample_rows_pat"]
    odd_in = {"input": Placement(2, True)}
    assert plan_resample(d, caps, placements=odd_in).kernels == ["resample_rows_half"]
    off_out = {"output": Placement(2, True)}
    assert plan_resample(d, caps, placements=off_out).kernels == ["resample_packed"]
    unpadded = {"output": Placement(0, False)}
    assert plan_resample(d, caps, placements=unpadded).kernels == ["resample_atomic"]
    # a requested path that the placement rules out: the compiled plan holds it, a call placed
    # otherwise falls back and says why
    p = plan_resample(d, caps, kernel="resample_rows_pat", placements=off_out)
    assert p.kernels == ["resample_packed"] and "resample_rows_pat was requested" in p.why
    # requested with the input off a word: each window word put together from two (PAT_BYTES)
    p = plan_resample(d, caps, kernel="resample_rows_pat", placements=odd_in)
    assert p.kernels == ["resample_rows_pat"] and p.steps[0].constants_dict["PAT_BYTES"] == 1
    assert "off word boundaries" in p.why


@pytest.mark.parametrize(
    "kernel, d, rule",
    [
        ("resample_rows", desc(U8, (2, 8, 4, 16), (2, 8, 8, 32)), "resample_rows stores float32 or float16"),
        ("resample_rows_byte", desc(F16, (2, 8, 4, 16), (2, 8, 8, 32)), "int8 / uint8 linear only"),
        ("resample_rows_pat", desc(F32, (2, 3), (2, 3), out_strides=(1, 2)), "not packed"),
        ("resample_rows_half", desc(F32, (2, 8, 4, 4), (2, 8, 8, 8)), "float16 linear only"),
        ("resample_rows_pat", desc(F16, (2, 8, 4, 16), (2, 8, 8, 37)), "no common pattern"),
        ("resample_strided", desc(F16, (4,), (8,)), "writes whole 32-bit elements"),
        ("resample_atomic", desc(F32, (4,), (8,)), "merges 8- and 16-bit elements"),
        ("resample_packed", desc(F32, (2, 3), (2, 3), out_strides=(1, 2)), "not packed"),
        ("fast", desc(F32, (4,), (8,)), "no path 'fast'"),
    ],
)
def test_impossible_requests_name_the_rule(kernel, d, rule):
    with pytest.raises(PlanError, match=rule):
        plan_resample(d, Capabilities.profile("lavapipe"), kernel=kernel)


def test_every_plan_names_an_entry_point_of_its_shader():
    from dmlwgsl.runtime import load_wgsl

    caps = Capabilities.profile("h100")
    d = desc(F16, (2, 8, 64, 64), (2, 8, 128, 128))
    for k in ("resample_rows_pat", "resample_rows_half", "resample_rows", "resample_packed", "resample_atomic"):
        s = plan_resample(d, caps, kernel=k).steps[0]
        assert f"fn {s.entry_point}(" in load_wgsl(s.shader)
    assert set(KERNELS) >= {"resample_packed", "resample_strided", "resample_atomic"}


def test_tuning_arguments():
    caps = Capabilities.profile("h100")
    d = desc(F16, (2, 8, 64, 64), (2, 8, 128, 128))
    s = plan_resample(d, caps, band_rows=3, pattern_outputs=4).steps[0]
    assert s.constants_dict["PV"] == 4 and s.uniforms_dict["band_rows"] == 3
    assert s.entry_point == "resample_rows_pat"


def test_groups_of_five_words_for_linear_only():
    """W scales whose taps repeat every 5 outputs (5/4, 5/2): linear float32 / float16 take the
    pattern walk with 5 / 10 outputs a thread (5 words); nearest keeps its other paths (measured
    slower there, LINEAR_ONLY_PATTERN_OUTPUTS)."""
    caps = Capabilities.profile("h100")
    for dt, v in ((F32, 5), (F16, 10)):
        for w_out in (320, 640):
            p = plan_resample(desc(dt, (2, 8, 64, 256), (2, 8, 80, w_out)), caps)
            assert p.kernels == ["resample_rows_pat"] and p.steps[0].constants_dict["PV"] == v
            near = plan_resample(desc(dt, (2, 8, 64, 256), (2, 8, 80, w_out), mode="nearest"), caps)
            assert near.steps[0].constants_dict.get("PV") not in (5, 10)


# -- host tables stay small -------------------------------------------------------------------------
@pytest.mark.slow  # counts every input read on a 2^25..8*10^7-element axis: tens of seconds on 2 cores
def test_long_axis_computes_its_coordinates_in_the_shader():
    from dmlwgsl.reference import resample as ref

    caps = Capabilities.profile("lavapipe")
    d = desc(F32, (2**24,), (2**25,))
    p = plan_resample(d, caps)
    assert dict(p.details)["axis_tables"] == ("computed",)
    assert dict(p.host_tables)["axis_table"] <= 64
    u = p.steps[0].uniforms_dict
    assert p.steps[0].constants_dict["COMPUTED"] == 8 and u["in_sizes"][3] == 2**24
    assert u["scales"][3] == 2.0 and u["inv_scales"][3] == 0.5
    # past 2^23 outputs float32 (o + 0.5) rounds to even: some inputs are never read
    i0, i1, _, w1 = ref.linear_taps(ref.input_coordinates(2**25, 2.0, 0.5, -0.5), 2**24)
    assert p.bytes_moved == 4 * (np.union1d(i0, i1[w1 != 0]).size + 2**25)
    # a short axis keeps its table
    d = desc(F32, (4, 2**10), (8, 2**11))
    assert dict(plan_resample(d, caps).details)["axis_tables"] == ("whole", "whole")
    # a long axis whose Scale is out of the shader's range keeps it too (where it fits)
    d = desc(F32, (2**17,), (2**17,), scales=(2.0**40,))
    assert dict(plan_resample(d, caps).details)["axis_tables"] == ("whole",)


def test_table_beyond_the_binding_limit_is_a_named_error():

    caps = Capabilities.profile("lavapipe")
    tight = caps.with_binding_limit(4096)
    d = desc(F32, (700,), (1000,), scales=(1000 / 700,))
    with pytest.raises(PlanError, match="coordinate tables take .* beyond the binding limit 4096"):
        plan_resample(desc(F32, (700,), (1000,), scales=(2.0**40,)), tight)
    assert dict(plan_resample(d, tight).details)["axis_tables"] == ("computed",)


# -- explain ---------------------------------------------------------------------------------------
def explain_args(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--input", type=lambda s: tuple(int(v) for v in s.split(",")))
    p.add_argument("--dtype", default="float32")
    p.add_argument("--kernel")
    add_explain_arguments(p)
    return p.parse_args(argv)


def test_explain_plan():
    caps = Capabilities.profile("h100")
    p = explain_plan(explain_args(["--input", "2,8,64,64", "--scales", "1,1,2,2", "--mode", "linear"]), caps)
    assert p.kernels == ["resample_rows_pat"] and p.to_dict()["bytes_moved"] == p.bytes_moved
    p = explain_plan(
        explain_args(["--input", "8,8", "--dtype", "uint8", "--output", "4,4", "--rounding", "increasing"]), caps
    )
    assert p.kernels == ["resample_packed"]
    with pytest.raises(DmlValidationError, match="give --scales or --output"):
        explain_plan(explain_args(["--input", "8,8"]), caps)
    assert "resample_packed" in p.explain()
    # channels-last inputs: the transpose where the planes grow, channel lanes where they shrink
    nhwc = ["--input", "2,32,64,64", "--input-layout", "nhwc"]
    p = explain_plan(explain_args(nhwc + ["--scales", "1,1,1.5,1.5"]), caps)
    assert p.kernels == ["resample_transpose", "resample_packed"] and "workspace packed_input" in p.explain()
    p = explain_plan(explain_args(nhwc + ["--scales", "1,1,2,2"]), caps)  # float32 x2: channels in the lanes
    assert p.kernels == ["resample_rows_pat"] and "4 channels in a warp's lanes" in p.explain()
    p = explain_plan(explain_args(nhwc + ["--scales", "1,1,0.5,0.5", "--mode", "linear"]), caps)
    assert p.kernels == ["resample_rows"] and p.steps[0].constants_dict["C_LANES"] == 1
    # Resample3 antialias on a GPU: aa_pat where the scales give a tap pattern, else aa_taps where it
    # runs (float32 at 1/4: 8 w slots); nothing to filter (upsampling): Resample2's plan
    aa = ["--input", "8,64,240,240", "--mode", "linear", "--antialias"]
    p = explain_plan(explain_args(aa + ["--scales", "1,1,0.5,0.5"]), caps)
    assert p.kernels == ["aa_pat"] and "windows of 16-byte vectors" in p.explain()
    p = explain_plan(explain_args(aa + ["--scales", "1,1,0.25,0.25"]), caps)
    assert p.kernels == ["aa_taps"] and "aa_pat could not run here: 8 w slots" in p.explain()
    assert explain_plan(explain_args(aa + ["--scales", "1,1,2,2"]), caps).kernels == ["resample_rows_pat"]
    with pytest.raises(DmlValidationError, match="--input-layout nhwc needs 4 dimensions"):
        explain_plan(explain_args(["--input", "8,8", "--scales", "2,2", "--input-layout", "nhwc"]), caps)


def test_resample2_rounding_reaches_the_uniforms():
    caps = Capabilities.profile("gl")
    d = Resample2Desc(TensorDesc(F32, (4,)), TensorDesc(F32, (8,)), "nearest", "increasing", (2,), (0.5,), (-0.5,))
    assert plan_resample(d, caps).steps[0].uniforms_dict["rounding"] == 2


# -- the one-liner's output sizes --------------------------------------------------------------------
@pytest.mark.parametrize(
    "sizes, message",
    [
        ((3.9, 3.9), r"output_sizes\[0\]: must be an integer; got 3.9"),
        ((3, True), r"output_sizes\[1\]: must be an integer; got True"),
        ((3, np.float32(2)), r"output_sizes\[1\]: must be an integer"),
        (3, r"output_sizes: must be a sequence of integers"),
    ],
)
def test_output_sizes_are_integers(sizes, message):
    with pytest.raises(DmlValidationError, match=message):
        resample(np.zeros((2, 2), np.float32), sizes, device=object())


def test_output_sizes_accept_numpy_integers(device):
    y = resample(np.arange(4, dtype=np.float32).reshape(2, 2), (np.int64(4), np.uint8(4)), device=device)
    assert y.shape == (4, 4)


@pytest.mark.slow  # counts every input read on a 2^25..8*10^7-element axis: tens of seconds on 2 cores
def test_past_the_binding_limit_the_plan_splits():
    caps = Capabilities.profile("lavapipe")  # 128 MiB bindings
    n = 40_000_000  # 160 MB of float32 in, 320 MB out
    p = plan_resample(desc(F32, (n,), (2 * n,)), caps)
    assert p.dispatches == 3 and p.kernels == ["resample_packed[0]", "resample_packed[1]", "resample_packed[2]"]
    limit = caps.max_binding_size
    covered = 0
    for s in p.steps:
        u = s.uniforms_dict
        assert u["origin"][3] == covered and u["count"] == u["out_sizes"][3]
        covered += u["count"]
        (iname, istart, ilen), (oname, ostart, olen) = s.windows
        assert (iname, oname) == ("input", "output") and ilen <= limit and olen <= limit
        assert istart % caps.binding_alignment == 0 and ostart % caps.binding_alignment == 0
        assert u["input_base"] == (-istart // 4) % 2**32  # tables hold offsets from the tensor's start
    assert covered == 2 * n
    assert 4 * 2 * n < p.bytes_moved <= 4 * (n + 2 * n)  # (float32 o + 0.5 rounds past 2^23: fewer inputs)
    with pytest.raises(
        PlanError,
        match="resample_rows cannot run this description: the input and output are beyond.*"
        "one .n, c. plane does not fit",
    ):
        plan_resample(desc(F32, (4, n // 4), (4, n // 2)), caps, kernel="resample_rows")
    # Whole (n, c) planes fit: the row walk runs a part per chunk of planes, its threads over them.
    # Parts go along N first (_split_parts): one batch item is 64 MiB of output and two are 128 MiB,
    # past the 128 MiB binding less its 16-byte rounding, so 8 parts of one item (64 planes) each.
    p = plan_resample(desc(F32, (8, 64, 256, 256), (8, 64, 512, 512)), caps, kernel="resample_rows")
    assert p.kernels[0] == "resample_rows[0]" and p.dispatches == 8
    planes = 0
    for s in p.steps:
        u = s.uniforms_dict
        assert list(u["out_sizes"][2:]) == [512, 512] and list(u["origin"][2:]) == [0, 0]
        assert u["row_threads"] == u["out_sizes"][0] * u["out_sizes"][1] * u["row_bands"] * u["row_blocks"]
        assert u["origin"][0] * 64 + u["origin"][1] == planes
        planes += u["out_sizes"][0] * u["out_sizes"][1]
        assert all(length <= caps.max_binding_size for _, _, length in s.windows)
    assert planes == 8 * 64


def test_cpu_adapters_walk_rows_for_8bit_nearest():
    """int8 / uint8 nearest: where W grows, every adapter takes the pattern's raw window (lavapipe
    since session 31); where it shrinks a CPU adapter takes the row walk (16 outputs a thread) and
    the H100 resample_packed; a row of whole words that is not whole 16-element
    groups walks with its last group stored word by word (RAGGED); one that is not whole words
    with its shared end words merged with atomics (ENDS)."""
    cpu, gpu = Capabilities.profile("lavapipe"), Capabilities.profile("h100")
    for dt in (DataType.UINT8, DataType.INT8):
        for out, on_cpu, on_gpu in (
            ((2, 8, 96, 128), "resample_rows_pat", "resample_rows_pat"),
            ((2, 8, 24, 32), "resample_rows", "resample_packed"),
        ):
            d = desc(dt, (2, 8, 48, 64), out, mode="nearest")  # x2 up, x0.5 down
            assert plan_resample(d, cpu).kernels == [on_cpu]
            assert plan_resample(d, gpu).kernels == [on_gpu]
        ragged = plan_resample(desc(dt, (2, 8, 48, 64), (2, 8, 96, 120), mode="nearest"), cpu, kernel="resample_rows")
        assert ragged.kernels == ["resample_rows"] and ragged.steps[0].constants_dict["RAGGED"] == 1
        assert ragged.steps[0].uniforms_dict["row_blocks"] == 8  # 120 = 7 whole groups of 16 and 8 more
        odd = plan_resample(desc(dt, (2, 8, 48, 64), (2, 8, 96, 122), mode="nearest"), cpu)
        assert odd.kernels == ["resample_rows"] and odd.steps[0].constants_dict["ENDS"] == 1
        lin = desc(dt, (2, 8, 48, 64), (2, 8, 96, 128))
        with pytest.raises(PlanError, match="8-bit: nearest only"):
            plan_resample(lin, cpu, kernel="resample_rows")

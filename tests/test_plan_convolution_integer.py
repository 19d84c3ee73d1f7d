"""ConvolutionInteger plans as values, on the kept capability records (no GPU): which path, which
grid, which bytes and operations, which workspace; uniforms packed by name into the WGSL struct;
impossible requests named; ``dmlwgsl explain convolution_integer``."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dmlwgsl.cli import main as cli_main
from dmlwgsl.ops.convolution_integer import (
    ConvolutionIntegerDesc,
    convolution_integer_output_sizes,
    plan_convolution_integer,
)
from dmlwgsl.plan import PROFILES, Capabilities, PlanError
from dmlwgsl.shader import interface
from dmlwgsl.tensor import DataType, DmlValidationError, TensorDesc

U8, I8, I32 = DataType.UINT8, DataType.INT8, DataType.INT32


def layer(n, c, m, hw, k, *, groups=1, stride=1, pad=None, dilation=1, zp="channel", xdt=U8, wdt=I8):
    """A square-kernel layer (1-D where ``hw`` has one entry)."""
    nsp = len(hw)
    pad = k // 2 if pad is None else pad
    xs, ws = (n, c, *hw), (m, c // groups) + (k,) * nsp
    p = (pad,) * nsp
    out = convolution_integer_output_sizes(xs, ws, (stride,) * nsp, (dilation,) * nsp, p, p)
    rank = nsp + 2
    xz = None if zp == "none" else TensorDesc(xdt, (1,) * rank)
    wz = {"none": None, "tensor": TensorDesc(wdt, (1,) * rank), "channel": TensorDesc(wdt, (1, m) + (1,) * nsp)}[zp]
    return ConvolutionIntegerDesc(
        TensorDesc(xdt, xs),
        TensorDesc(wdt, ws),
        TensorDesc(I32, out),
        xz,
        wz,
        (stride,) * nsp,
        (dilation,) * nsp,
        p,
        p,
        groups,
    )


def no_dot4(caps: Capabilities) -> Capabilities:
    """The same adapter without the WGSL packed dot product."""
    return dataclasses.replace(caps, wgsl_features=frozenset(caps.wgsl_features - {"packed_4x8_integer_dot_product"}))


@pytest.mark.parametrize("profile", PROFILES)
def test_dense_layer_runs_the_dot4_gemm(profile):
    caps = Capabilities.profile(profile)
    d = layer(8, 64, 64, (56, 56), 3)
    if caps.is_cpu:  # a CPU adapter: the window kernel's tile form (test_cpu_window_tile_form), the GEMM requested
        plan = plan_convolution_integer(d, caps, kernel="dot4")
    else:
        plan = plan_convolution_integer(d, caps)
        assert "dense layer" in plan.why
    assert plan.kernels == ["pack", "convolution_integer_dot4"]
    assert plan.capabilities == caps.name
    assert plan.ops == 2 * 8 * 64 * 56 * 56 * 64 * 9
    # input + filter + per-channel filter zero points + input zero point read once, int32 output written once
    assert plan.bytes_moved == 8 * 64 * 56 * 56 + 64 * 64 * 9 + 64 + 1 + 4 * 8 * 64 * 56 * 56
    # packed input: one word per 4 channels of each pixel (16 words: 64 channels); filter: 9 taps x 16 words a row
    assert dict(plan.workspace) == {"packed_input": 4 * 8 * 56 * 56 * 16, "packed_filter": 4 * 64 * 9 * 16}
    details = dict(plan.details)
    pack, gemm = plan.steps
    assert pack.invocations == 8 * 56 * 56 * 16 // 4 + 64 * 9 * 16
    assert gemm.workgroup_size == details["threads"] and gemm.invocations == details["workgroups"] * details["threads"]
    if profile == "h100":  # the cost model's measured best: 192x64 tiles in 512 threads, 131 workgroups, one wave
        assert details["tile"] == (192, 64) and details["workgroups"] == 131 and gemm.grid == (131, 1, 1)
    else:  # 32 KiB of workgroup memory: the 512-thread tile does not fit
        assert details["threads"] <= 256
    assert gemm.bindings_dict["packed_input"] == "packed_input_ro"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "kw",
    [dict(k=9), dict(k=3, stride=3), dict(k=3, dilation=2, pad=2)],
    ids=["9x9", "stride3", "dilation2"],
)
def test_depthwise_tap_rows_take_the_fma_kernel_on_a_gpu(profile, kw):
    """Depthwise rows outside the depthwise kernel's fast rows (a kernel wider than 8, W stride above
    2, W dilation): a GPU takes the depthwise FMA kernel where the kernel has at most 64 taps
    (H100: 1.1-2.1x the direct kernel), the direct kernel past that (9x9 = 81 taps); a CPU adapter
    the depthwise kernel (lavapipe: even to 3.3x faster than direct)."""
    caps = Capabilities.profile(profile)
    d = layer(8, 128, 128, (56, 56), groups=128, **kw)
    plan = plan_convolution_integer(d, caps)
    if caps.is_cpu:
        assert plan.kernels == ["convolution_integer_depthwise"]
        assert plan.steps[0].constants_dict["DW_FAST"] == 0
    elif kw["k"] == 9:
        assert plan.kernels == ["convolution_integer_direct"]
    else:
        assert plan.kernels == ["convolution_integer_depthwise_fma"] and "fast rows do not take" in plan.why
        (s,) = plan.steps
        c, u = s.constants_dict, s.uniforms_dict
        # the tiles cover every output once, the window fits the workgroup memory, one thread a
        # 4 x QR block (QR = 1 at stride 2 and above)
        assert c["WG"] == c["TQ"] * c["TR"] * c["TP"] and s.invocations == u["workgroups"] * c["WG"]
        assert c["QR"] == (2 if kw.get("stride", 1) == 1 else 1)
        oh = d.output.sizes[2]
        assert u["tiles_h"] * c["TR"] * c["QR"] >= oh > (u["tiles_h"] - 1) * c["TR"] * c["QR"]
        assert u["fma_planes"] == 8 * 128 and 16 * c["SLOTS"] + 16 * c["WSQ"] <= 16384
        assert (c["XV"], c["XS"]) == ((c["SLOTS"], 1) if c["SLIDE"] else (1, 4 * c["SLOTS"]))


def test_depthwise_fma_reach():
    """The depthwise FMA kernel's limits, as plan errors naming them: at most 64 taps, C/G = 1."""
    caps = Capabilities.profile("h100")
    plan_convolution_integer(layer(2, 8, 8, (20, 20), 8, groups=8), caps, kernel="depthwise_fma")
    with pytest.raises(PlanError, match="81 taps > 64"):
        plan_convolution_integer(layer(2, 8, 8, (20, 20), 9, groups=8), caps, kernel="depthwise_fma")
    with pytest.raises(PlanError, match="C/G = 2, not 1"):
        plan_convolution_integer(layer(2, 8, 8, (20, 20), 3, groups=4), caps, kernel="depthwise_fma")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("k, stride", [(5, 1), (7, 1), (5, 2), (8, 2)])
def test_depthwise_wide_kernels_take_fast_rows(profile, k, stride):
    """Depthwise kernels 5 to 8 wide at W stride 1 or 2: the depthwise kernel's fast rows with a
    second word of taps (DW_KW8), on every adapter with the packed dot product; except on a GPU
    at stride 1 (25 taps and more): the depthwise FMA kernel (H100: 5x5 18.9 -> 14.8 us, 7x7
    35.6 -> 28.4)."""
    caps = Capabilities.profile(profile)
    plan = plan_convolution_integer(layer(8, 128, 128, (56, 56), k, groups=128, stride=stride), caps)
    if not caps.is_cpu and stride == 1:
        assert plan.kernels == ["convolution_integer_depthwise_fma"] and "beats the depthwise kernel's fast" in plan.why
        c = plan.steps[0].constants_dict
        assert c["SLIDE"] == 1 and c["ALIGN_S"] == (-(k // 2)) % 4 and c["VEC"] == 1
        return
    (s,) = plan.steps
    c = s.constants_dict
    assert plan.kernels == ["convolution_integer_depthwise"] and c["DW_FAST"] == 1 and c["DW_KW8"] == 1
    assert c["DW_SW"] == stride and "two packed 4x8 dot products" in s.why
    # 64-thread workgroups on a GPU, 256 on a CPU adapter (the dispatch follows)
    wg = 256 if Capabilities.profile(profile).is_cpu else 64
    assert s.workgroup_size == c["WG"] == wg


def test_split_gemm_zeroes_the_output_in_its_pack():
    plan = plan_convolution_integer(layer(8, 512, 512, (14, 14), 3), Capabilities.profile("h100"))
    assert plan.kernels == ["pack_zero", "convolution_integer_dot4_splitk"]
    details = dict(plan.details)
    assert (details["tile"], details["slice_steps"], details["k_steps"]) == ((112, 128), 31, 72)
    assert plan.steps[1].bindings_dict["output"] == "output_atomic" and "stream-K" in plan.steps[1].why
    assert plan.steps[0].constants_dict["OUT_PACKED"] == 1


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "name, kw",
    [
        ("depthwise", dict(n=8, c=256, m=256, hw=(56, 56), k=3, groups=256)),
        ("grouped", dict(n=8, c=256, m=256, hw=(28, 28), k=3, groups=32)),
        ("stem without dot4", dict(n=8, c=3, m=64, hw=(224, 224), k=7, stride=2)),
        ("1-D depthwise", dict(n=2, c=16, m=16, hw=(4096,), k=3, groups=16)),
    ],
)
def test_few_channels_a_group_run_the_direct_kernel(profile, name, kw):
    caps = Capabilities.profile(profile)
    if "without dot4" in name:
        caps = no_dot4(caps)
    d = layer(**kw)
    plan = plan_convolution_integer(d, caps)
    if name == "depthwise" and not caps.is_cpu:
        # a GPU: the depthwise FMA kernel on 56x56 planes at stride 1 (_FMA_OVER_FAST_PLANE)
        assert plan.kernels == ["convolution_integer_depthwise_fma"] and "output planes" in plan.why
        return
    if "depthwise" in name:
        # an adapter with the packed dot product: the depthwise kernel, eight outputs of a row a thread
        (s,) = plan.steps
        d4 = d.as_4d()
        n, m, oh, ow = d4.output.sizes
        assert plan.kernels == ["convolution_integer_depthwise"] and s.invocations == n * m * oh * -(-ow // 8)
        assert s.uniforms_dict["dw_threads"] == s.invocations
        assert s.constants_dict["DW_FAST"] == 1 and s.constants_dict["DW_VEC"] == int(ow % 4 == 0)
        return
    if name == "grouped" and not caps.is_cpu:
        # a GPU: the grouped FMA kernel (stride 1, 72 taps a group)
        (s,) = plan.steps
        c, u = s.constants_dict, s.uniforms_dict
        assert plan.kernels == ["convolution_integer_grouped_fma"] and "grouped FMA kernel" in plan.why
        assert c["WG"] == c["TQ"] * c["TR"] * c["MT"] and c["MT"] == 2 and u["channel_blocks"] == 1
        assert u["workgroups"] == 8 * 32 * u["tiles_h"] * u["tiles_w"] and s.invocations == u["workgroups"] * c["WG"]
        assert 16 * (c["XV"] + c["WV"]) <= 32768 and c["XV"] == 8 * c["WIN_H"] * c["PQ"]
        return
    # 8 channels a group: four a word on the packed dot product
    words = name == "grouped"
    assert plan.kernels == ["convolution_integer_direct" + ("_dot4" if words else "")] and plan.workspace == ()
    (s,) = plan.steps
    u = s.uniforms_dict
    d4 = d.as_4d()
    th, tw = dict(plan.details)["tile"]
    assert th * tw <= 4096 and (u["tile_h"], u["tile_w"]) == (th, tw)
    # every output pixel and channel block is one workgroup's: the grid covers them once
    oh, ow = d4.output.sizes[2:]
    wgs = d4.input.sizes[0] * d4.group_count * u["channel_blocks"] * -(-oh // th) * -(-ow // tw)
    assert u["workgroups"] == wgs and s.invocations == wgs * 256
    assert u["channel_block"] * u["channel_blocks"] >= d4.filter.sizes[0] // d4.group_count
    # the staged input window and filter block fit the staging slots (XS, WS: workgroup memory)
    cg = -(-d4.filter.sizes[1] // 4) if words else d4.filter.sizes[1]
    consts = s.constants_dict
    assert cg * u["window_h"] * u["window_w"] <= consts["XS"]
    assert u["channel_block"] * cg * d4.filter.sizes[2] * d4.filter.sizes[3] <= consts["WS"]
    assert 4 * (consts["XS"] + consts["WS"]) <= caps.limit("max-compute-workgroup-storage-size")
    assert u["group_count"] == d.group_count and u["group_out_channels"] == d4.filter.sizes[0] // d.group_count


@pytest.mark.parametrize("profile", PROFILES)
def test_small_channel_stem_takes_the_window_kernel(profile):
    """C = 3, 7x7 stride 2: one pass of the window kernel, each thread one pixel's window (21
    kernel rows of 2 words, walked a row at a time: 42 words -> 44 staged) against blocks of 32
    channels' filter rows; no workspace."""
    d = layer(8, 3, 64, (224, 224), 7, stride=2)
    caps = Capabilities.profile(profile)
    plan = plan_convolution_integer(d, caps)
    pixels = 8 * 112 * 112
    if caps.is_cpu:  # the tile form: 4 pixels of an output row a thread, blocks of 8 channels, 64 threads
        assert plan.kernels == ["convolution_integer_dot4_window_tile"] and "whole window is 147 taps" in plan.why
        assert "tile form" in plan.why
        (s,) = plan.steps
        c, u = s.constants_dict, s.uniforms_dict
        assert (c["CPT"], c["KWP"], c["RW"], c["WG"]) == (8, 44, 2, 64)
        quads = 8 * 112 * 28
        assert (u["pixels"], u["channel_blocks"], u["pixel_tiles"]) == (pixels, 8, quads // 64)
        assert u["workgroups"] * u["win_tiles"] >= u["pixel_tiles"] * 8 > (u["workgroups"] - 8) * u["win_tiles"]
        return
    assert plan.kernels == ["convolution_integer_dot4_window_rows"] and "whole window is 147 taps" in plan.why
    assert plan.workspace == ()
    (s,) = plan.steps
    c, u = s.constants_dict, s.uniforms_dict
    assert (c["CPT"], c["KWP"], c["RW"], c["IM2COL_ROWS"], c["WG"]) == (32, 44, 2, 1, 256)
    assert (u["pixels"], u["k_words"], u["taps"], u["channel_blocks"]) == (pixels, 44, 147, 2)
    # 784 workgroups of one tile: about two waves of the ~400 the kernel aims for, so 2 tiles each
    assert u["pixel_tiles"] == pixels // 256 and u["win_tiles"] == 2 and u["workgroups"] == pixels // 256
    assert (u["kernel_h"], u["stride_h"], u["pad_top"], u["in_height"]) == (7, 2, 3, 224)  # the layer's own geometry
    assert s.invocations == u["workgroups"] * 256
    assert plan.ops == 2 * 8 * 64 * 112 * 112 * 147


def test_where_the_window_kernel_is_not_chosen():
    """The window kernel takes im2col-scope layers whose rows it can walk: not grouped layers, not
    NHWC inputs (rows not contiguous: the im2col GEMM), not dense channel counts on GPUs (the
    GEMM), on CPU adapters dense layers of at most 256 output positions; requesting it where its
    filter block does not fit names the rule."""
    caps = Capabilities.profile("h100")
    assert plan_convolution_integer(layer(8, 64, 256, (56, 56), 3, groups=16), caps).kernels[-1] != (
        "convolution_integer_dot4_window_rows"
    )
    nhwc = layer(8, 3, 64, (224, 224), 7, stride=2)
    x = nhwc.input
    nhwc = dataclasses.replace(nhwc, input=TensorDesc(x.data_type, x.sizes, (3 * 224 * 224, 1, 224 * 3, 3)))
    assert plan_convolution_integer(nhwc, caps).kernels[-1] == "convolution_integer_dot4"
    # requested, it runs there on its four-words-a-time gathers
    assert plan_convolution_integer(nhwc, caps, kernel="dot4_window").kernels == ["convolution_integer_dot4_window"]
    assert plan_convolution_integer(layer(8, 64, 64, (56, 56), 3), caps).kernels[-1] == "convolution_integer_dot4"
    # (requested, it runs any window whose filter block fits the workgroup memory)
    assert plan_convolution_integer(layer(8, 64, 64, (56, 56), 3), caps, kernel="dot4_window").kernels == [
        "convolution_integer_dot4_window_rows"
    ]
    with pytest.raises(PlanError, match="dot4_window.*768 k words.*needs 98560 bytes of workgroup memory"):
        plan_convolution_integer(layer(8, 256, 64, (56, 56), 3), caps, kernel="dot4_window")
    cpu = Capabilities.profile("lavapipe")
    # a batch-1 stem: 98 workgroups of 256 pixels, under a GPU's 128 (the GEMM's smaller tiles fill it)
    stem1 = layer(1, 3, 64, (224, 224), 7, stride=2)
    assert plan_convolution_integer(stem1, caps).kernels[-1] == "convolution_integer_dot4"
    assert plan_convolution_integer(stem1, cpu).kernels == ["convolution_integer_dot4_window_tile"]
    tiny, big = layer(1, 64, 64, (8, 8), 3), layer(1, 64, 64, (28, 28), 1)  # 64 and 784 output positions
    assert plan_convolution_integer(tiny, cpu).kernels == ["convolution_integer_dot4_window_tile"]
    assert "64 output positions on a CPU adapter" in plan_convolution_integer(tiny, cpu).why
    # (1x1: row words 1/4 full; past 256 positions the GEMM)
    assert plan_convolution_integer(big, cpu).kernels[-1] == "convolution_integer_dot4"
    gpu_tiny = plan_convolution_integer(layer(1, 64, 64, (8, 8), 3), caps)
    assert gpu_tiny.kernels[-1].startswith("convolution_integer_dot4_splitk")  # a GPU: the GEMM
    with pytest.raises(DmlValidationError, match="window_tiles: must be an integer >= 1"):
        plan_convolution_integer(layer(8, 3, 64, (64, 64), 7), caps, kernel="dot4_window", window_tiles=0)
    with pytest.raises(DmlValidationError, match="threads: the window kernel takes 64, 128, 256 or 512"):
        plan_convolution_integer(layer(8, 3, 64, (64, 64), 7), caps, kernel="dot4_window", threads=96)
    with pytest.raises(DmlValidationError, match="window_channels: must be 16 or 32"):
        plan_convolution_integer(layer(8, 3, 64, (64, 64), 7), caps, kernel="dot4_window", window_channels=64)


def test_cpu_window_tile_form():
    """CPU adapters: the window kernel's tile form (4 pixels of an output row a thread against 8
    staged channels) for dense layers of any size whose kernel rows fill at least 3/4 of their row
    words (KW 3, 4, 6, 7, 8) and W stride + W dilation at most 4, for the others where they have at most 256
    output positions and the one-pixel form's block fits; GPUs keep the one-pixel form and the GEMM.
    A requested channel block (16 or 32) runs the one-pixel form."""
    cpu, gpu = Capabilities.profile("lavapipe"), Capabilities.profile("h100")
    for k in (3, 4, 6, 7):  # (KW = 8 at 64 channels: 1024 k words, the block's 32 KiB do not fit)
        plan = plan_convolution_integer(layer(2, 64, 64, (56, 56), k), cpu)
        assert plan.kernels == ["convolution_integer_dot4_window_tile"], k
        assert f"kernel rows of {k} taps (row words at least 3/4 full)" in plan.why and "tile form" in plan.why
    for k in (1, 2, 5):  # row words 1/4, 1/2, 5/8 full: the GEMM past 256 positions
        assert plan_convolution_integer(layer(2, 64, 64, (56, 56), k), cpu).kernels[-1] == "convolution_integer_dot4"
    five = layer(1, 64, 64, (11, 11), 5)  # 121 positions, but the one-pixel form's block does not fit: the GEMM
    assert plan_convolution_integer(five, cpu).kernels[-1] == "convolution_integer_dot4"
    grouped = plan_convolution_integer(layer(1, 128, 128, (28, 28), 3, groups=2), cpu)  # (was the GEMM)
    assert grouped.kernels == ["convolution_integer_dot4_window_tile"]
    assert grouped.steps[0].uniforms_dict["channel_blocks"] == 8  # 64 channels a group, 8 a block
    dil = plan_convolution_integer(
        layer(2, 64, 64, (28, 28), 3, dilation=2, pad=2), cpu
    )  # W dilation: taps a byte at a time
    assert dil.kernels == ["convolution_integer_dot4_window_tile"] and dil.steps[0].constants_dict["IM2COL_ROWS"] == 1
    wide = layer(1, 64, 64, (28, 28), 3, stride=2, dilation=3, pad=3)  # stride + dilation 5: past one span
    assert plan_convolution_integer(wide, cpu).kernels[-1] != "convolution_integer_dot4_window_tile"
    s4 = layer(1, 64, 64, (28, 28), 3, stride=4)  # W stride 4: a quad's words leave one span, the one-pixel form
    assert plan_convolution_integer(s4, cpu).kernels == ["convolution_integer_dot4_window_rows"]
    on_gpu = plan_convolution_integer(layer(2, 64, 64, (56, 56), 3), gpu)
    assert on_gpu.kernels[-1] != "convolution_integer_dot4_window_tile"
    req = plan_convolution_integer(layer(1, 64, 64, (8, 8), 3), cpu, kernel="dot4_window", window_channels=32)
    assert req.kernels == ["convolution_integer_dot4_window_rows"] and req.steps[0].constants_dict["CPT"] == 32


@pytest.mark.parametrize("profile", PROFILES)
def test_small_channel_stem_as_an_im2col_gemm(profile):
    """C = 3, 7x7 stride 2 on the im2col GEMM (requested): K = 147 taps packed whole (3 k steps of
    16 words) instead of 49 steps of one padded word each; the GEMM sees a 1x1 layer over the OH x
    OW pixels. Its pack takes the row form (each of the 21 kernel rows as 2 whole words: 42 words
    -> 44, still 3 k steps)."""
    d = layer(8, 3, 64, (224, 224), 7, stride=2)
    plan = plan_convolution_integer(d, Capabilities.profile(profile), kernel="dot4_im2col")
    assert plan.kernels == ["pack_im2col", "convolution_integer_dot4"]
    assert dict(plan.details)["k_steps"] == 3
    pixels = 8 * 112 * 112
    assert dict(plan.workspace) == {"packed_input": 4 * pixels * 44, "packed_filter": 4 * 64 * 44}
    assert plan.steps[0].constants_dict.get("IM2COL_ROWS") == 1
    pack, gemm = (s.uniforms_dict for s in plan.steps)
    assert (pack["kernel_h"], pack["stride_h"], pack["pad_top"], pack["in_height"], pack["taps"]) == (7, 2, 3, 224, 147)
    assert (gemm["kernel_h"], gemm["stride_h"], gemm["pad_top"], gemm["in_height"], gemm["taps"]) == (1, 1, 0, 112, 147)
    assert gemm["group_words_padded"] == gemm["k_words"] == 44 and gemm["pixels"] == pixels
    assert plan.steps[0].bindings_dict["input_zero_point"] == "input_zero_point"
    assert plan.ops == 2 * 8 * 64 * 112 * 112 * 147


def test_uniforms_are_named_and_pack_into_the_wgsl_struct():
    """Every step's uniforms are exactly the Conv struct's fields (a missing or extra name would raise)."""
    caps = Capabilities.profile("h100")
    lay = interface("convolution_integer.wgsl").uniform_layout("cv")
    short = layer(1, 4, 4, (5, 5), 3)
    for d in (layer(8, 64, 64, (56, 56), 3), layer(8, 256, 256, (56, 56), 3, groups=256), short):
        for kernel in ("portable", "direct", "direct_dot4", "dot4", "dot4_im2col", "dot4_window"):
            if kernel == "dot4_window" and d is not short:
                continue  # (the window kernel takes short windows only)
            for s in plan_convolution_integer(d, caps, kernel=kernel).steps:
                assert set(s.uniforms_dict) == set(lay.names)
                assert len(lay.pack(s.uniforms_dict)) == lay.size
    assert "group_count" in lay.names and "pad_top" in lay.names and "pads" not in lay.names


def test_placements_reach_the_uniforms():
    from dmlwgsl.plan import Placement

    d = layer(1, 4, 4, (5, 5), 3)
    pl = {"input": Placement(3), "filter": Placement(5), "output": Placement(8), "filter_zero_point": Placement(1)}
    u = plan_convolution_integer(d, Capabilities.profile("gl"), placements=pl).steps[0].uniforms_dict
    assert (u["input_base"], u["filter_base"], u["output_base"], u["filter_zp_base"]) == (3, 5, 2, 1)


def test_without_the_packed_dot_product():
    caps = no_dot4(Capabilities.profile("h100"))
    dense = layer(8, 64, 64, (56, 56), 3)
    plan = plan_convolution_integer(dense, caps)
    assert plan.kernels == ["convolution_integer_direct"] and "no packed_4x8_integer_dot_product" in plan.why
    with pytest.raises(
        PlanError, match=r"kernel: 'dot4' needs the WGSL language feature packed_4x8_integer_dot_product, which"
    ):
        plan_convolution_integer(dense, caps, kernel="dot4")


def test_layers_past_the_direct_staging_fall_back_to_portable():
    """A filter row of C/G*KH*KW taps beyond the staged filter slots: direct cannot run it."""
    caps = no_dot4(Capabilities.profile("lavapipe"))
    big = layer(1, 512, 8, (8, 8), 3)  # 4608 taps a filter row
    plan = plan_convolution_integer(big, caps)
    assert plan.kernels == ["convolution_integer_portable"] and "4608 taps" in plan.why
    with pytest.raises(PlanError, match=r"kernel: 'direct' cannot run this layer: a filter row of C/G\*KH\*KW = 4608"):
        plan_convolution_integer(big, caps, kernel="direct")
    with pytest.raises(
        PlanError,
        match="kernel: must be one of portable, depthwise, depthwise_fma, grouped_fma, direct, direct_dot4, dot4, ",
    ):
        plan_convolution_integer(big, caps, kernel="winograd")


def test_plan_validates_the_description_first():
    d = dataclasses.replace(layer(1, 4, 4, (5, 5), 3), strides=(0, 1))
    with pytest.raises(DmlValidationError, match=r"strides\[0\]: must be >= 1"):
        plan_convolution_integer(d, Capabilities.profile("h100"))


def test_structure_is_in_the_constants():
    caps = Capabilities.profile("h100")
    for xdt, wdt, zp in ((U8, I8, "channel"), (I8, U8, "tensor"), (I8, I8, "none")):
        d = layer(8, 256, 256, (28, 28), 3, groups=32, zp=zp, xdt=xdt, wdt=wdt)
        c = plan_convolution_integer(d, caps).steps[0].constants_dict
        assert (c["X_SIGNED"], c["W_SIGNED"]) == (int(xdt == I8), int(wdt == I8))
        assert (c["XZP"], c["WZP"]) == {"channel": (1, 2), "tensor": (1, 1), "none": (0, 0)}[zp]


def test_explain_cli(capsys):
    argv = ["explain", "convolution_integer", "--input", "8,256,56,56", "--filter", "256,1,3,3", "--groups", "256"]
    argv += ["--pads", "1,1,1,1", "--zero-points", "channel", "--profile", "h100", "--json"]
    assert cli_main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kernels"] == ["convolution_integer_depthwise_fma"] and d["dispatches"] == 1
    assert d["ops"] == 2 * 8 * 256 * 56 * 56 * 9
    assert d["bytes_moved"] == 8 * 256 * 56 * 56 + 256 * 9 + 256 + 1 + 4 * 8 * 256 * 56 * 56
    assert d["steps"][0]["uniforms"]["group_count"] == 256
    argv = ["explain", "convolution_integer", "--input", "8,64,56,56", "--filter", "64,64,3,3", "--pads", "1,1,1,1"]
    assert cli_main(argv + ["--profile", "h100"]) == 0
    text = capsys.readouterr().out
    assert "pack, convolution_integer_dot4" in text and "why: C/G = 64 and M/G = 64" in text
    assert cli_main(argv + ["--profile", "lavapipe"]) == 0
    text = capsys.readouterr().out
    assert "convolution_integer_dot4_window_tile" in text and "why: a CPU adapter and kernel rows of 3 taps" in text
    assert cli_main(argv + ["--profile", "h100", "--kernel", "direct", "--strides", "2,2", "--dilations", "1,1"]) == 0
    assert "kernel 'direct' requested" in capsys.readouterr().out
    assert cli_main(["explain", "convolution_integer", "--input", "1,4,9", "--filter", "2,4,3", "--pads", "1,1"]) == 0
    capsys.readouterr()
    bad = ["explain", "convolution_integer", "--input", "1,4,5,5", "--filter", "2,3,3,3", "--profile", "gl"]
    assert cli_main(bad) == 2
    assert "filter.sizes[1]: must equal C/group_count (4); got 3" in capsys.readouterr().err


def test_past_the_binding_limit_on_lavapipe():
    """An int32 output of 9 x 64 x 256 x 256 = 151 MB past lavapipe's 128 MiB binding: the direct
    kernel runs in steps of whole batch items, each binding windows of the input and output."""
    caps = Capabilities.profile("lavapipe")
    d = layer(9, 64, 64, (256, 256), 3, groups=64)
    plan = plan_convolution_integer(d, caps)
    per = 7  # 7 x 16 MiB of output + alignment slack fit 128 MiB
    assert plan.kernels == ["convolution_integer_direct[0]", "convolution_integer_direct[1]"]
    assert "2 steps of up to 7 batch items" in plan.why
    assert dict(plan.details)["split_steps"] == 2 and dict(plan.details)["split_piece"] == (7, 64, 1, 1, 256, 256)
    s0, s1 = plan.steps
    out_item = 64 * 256 * 256 * 4
    assert s1.windows == (("input", per * 64 * 256 * 256, 2 * 64 * 256 * 256), ("output", per * out_item, 2 * out_item))
    assert s0.windows[1] == ("output", 0, per * out_item)
    total = plan_convolution_integer(d, Capabilities.profile("h100"), kernel="direct").steps[0].uniforms_dict
    assert s0.uniforms_dict["workgroups"] * 9 == total["workgroups"] * per
    check_split(plan, d, caps, elements=False)
    # A dense layer keeps the GEMM: chunks of whole batch items (5 x 16 MiB of output fit 128 MiB),
    # each packed and multiplied on windows of the input and output, one packed workspace.
    dense = layer(9, 64, 64, (256, 256), 3)
    auto = plan_convolution_integer(dense, caps)
    assert auto.kernels == ["pack[0]", "convolution_integer_dot4[0]", "pack[1]", "convolution_integer_dot4[1]"]
    assert "2 chunks of up to 5 batch items" in auto.why
    assert dict(auto.details)["batch_chunk"] == 5
    assert dict(auto.workspace)["packed_input"] == 5 * 4 * 256 * 256 * 16
    p0, g0, p1, g1 = auto.steps
    assert p1.windows == (("input", 5 * 64 * 256 * 256, 4 * 64 * 256 * 256),)
    assert g1.windows == (("output", 5 * out_item, 4 * out_item),)
    assert g0.uniforms_dict["pixels"] == 5 * 256 * 256 and g1.uniforms_dict["pixels"] == 4 * 256 * 256
    assert auto.kernels == plan_convolution_integer(dense, caps, kernel="dot4").kernels
    # One item past the limit: the GEMM cannot run; the plan takes a one-pass kernel (or names why).
    huge = layer(1, 64, 64, (1536, 1536), 3)
    with pytest.raises(PlanError, match="kernel: 'dot4' binds the whole filter and a chunk of whole batch items"):
        plan_convolution_integer(huge, caps, kernel="dot4")
    assert plan_convolution_integer(huge, caps).kernels[0] == "convolution_integer_direct_dot4[0]"


def tight(caps: Capabilities, binding_limit: int) -> Capabilities:
    """``caps`` with max-storage-buffer-binding-size ``binding_limit``."""
    return caps.with_binding_limit(binding_limit)


def check_split(plan, d: ConvolutionIntegerDesc, caps: Capabilities, *, elements: bool = True) -> None:
    """A split plan as a value: every window starts on the binding alignment and, with a residual
    offset below it and rounded to 16, fits one binding; each step's input, filter and output
    reach (from its bases, sizes and strides) stays inside its window; and (``elements``) every
    output element is stored by exactly one step, then added to by the steps of the other input
    channels of its group, whose channel counts sum to C/G."""
    d4 = d.as_4d()
    al, limit = caps.binding_alignment, caps.max_binding_size
    cg = d4.filter.sizes[1]
    stored, added = {}, {}
    for s in plan.steps:
        u = s.uniforms_dict
        win = {name: (start, length) for name, start, length in s.windows}
        for name, start, length in s.windows:
            assert start % al == 0 and (al + length + 15) & ~15 <= limit, (s.name, name)
        reach = {
            "input": (
                d4.input,
                u["input_base"],
                (u["in_stride_n"], u["in_stride_c"], u["in_stride_h"], u["in_stride_w"]),
            ),
            "filter": (
                d4.filter,
                u["filter_base"],
                (u["filter_stride_m"], u["filter_stride_c"], u["filter_stride_h"], u["filter_stride_w"]),
            ),
            "output": (
                d4.output,
                4 * u["output_base"],
                (u["out_stride_n"], u["out_stride_m"], u["out_stride_h"], u["out_stride_w"]),
            ),
        }
        nn = u["output_count"] // (u["out_channels"] * u["out_height"] * u["out_width"])
        counts = {
            "input": (nn, u["in_channels"], u["in_height"], u["in_width"]),
            "filter": (u["out_channels"], u["group_in_channels"], u["kernel_h"], u["kernel_w"]),
            "output": (nn, u["out_channels"], u["out_height"], u["out_width"]),
        }
        for name, (t, base, strides) in reach.items():
            eb = t.data_type.size_in_bytes
            last = base + eb * sum((max(c, 1) - 1) * st for c, st in zip(counts[name], strides)) + eb
            start, length = win.get(name, (0, t.total_tensor_size_in_bytes))
            assert last <= length, (s.name, name, last, length)  # residual 0 here: base is the offset in the window
        if not elements:
            continue
        first = (win.get("output", (0, 0))[0] // 4) + u["output_base"]
        target = added if dict(s.constants).get("ACCUMULATE") else stored
        on, om, oh_, ow_ = counts["output"]
        sn, sm, sh, sw = reach["output"][2]
        for n in range(on):
            for m in range(om):
                for y in range(oh_):
                    for x in range(ow_):
                        e = first + n * sn + m * sm + y * sh + x * sw
                        assert e not in added or target is added, "an add before its store"
                        target[e] = target.get(e, 0) + u["group_in_channels"]
    if elements:
        every = {
            sum(i * st for i, st in zip(idx, d4.output.element_strides))
            for idx in __import__("itertools").product(*map(range, d4.output.sizes))
        }
        assert set(stored) == every and all(v == stored[e] and stored[e] <= cg for e, v in stored.items())
        assert all(stored[e] + added.get(e, 0) == cg for e in every)
        assert len(plan.steps) == sum(1 for _ in plan.steps)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "shape",
    [
        dict(n=2, c=3, m=4, hw=(23, 17), k=3, pad=1, stride=2, dilation=1, limit=512),
        dict(n=1, c=12, m=6, hw=(9, 10), k=3, pad=2, stride=1, dilation=2, limit=512),
        dict(n=1, c=8, m=8, hw=(11, 9), k=3, groups=4, pad=0, stride=1, dilation=1, limit=256),
        dict(n=1, c=4, m=3, hw=(150,), k=5, pad=4, stride=2, dilation=3, limit=256),
        dict(n=1, c=1, m=2, hw=(6, 5), k=2, pad=6, stride=1, dilation=1, limit=128),
    ],
    ids=["bands", "channels-summed", "groups", "one-dimensional", "padding-only-bands"],
)
def test_split_within_one_item_covers_every_output_once(profile, shape):
    """Past a tightened binding limit, on each kept profile and for every one-pass kernel: every
    window fits and is aligned, every step reads and writes inside its windows, every output
    element is stored once and its group's input channels are summed exactly once."""
    p = dict(shape)
    limit = p.pop("limit")
    d = layer(p.pop("n"), p.pop("c"), p.pop("m"), p.pop("hw"), p.pop("k"), **p)
    caps = tight(Capabilities.profile(profile), limit)
    for kernel in ("portable", "direct", "direct_dot4", None):
        plan = plan_convolution_integer(d, caps, kernel=kernel)
        assert dict(plan.details)["split_piece"][0] == 1 and plan.dispatches > d.input.sizes[0]
        check_split(plan, d, caps)


@pytest.mark.parametrize("profile", PROFILES)
def test_one_item_past_the_real_binding_limit(profile):
    """One batch item past the profile's own binding limit and within max-buffer-size: the plan
    splits it and never refuses; the explicit dot4 GEMM is a PlanError naming the rule."""
    caps = Capabilities.profile(profile)
    limit = caps.max_binding_size
    # int32 output of 8 channels of (side x side), just past the limit; a 3x3 filter, C/G = 8
    side = int((limit / 32) ** 0.5) + 64
    d = layer(1, 8, 8, (side, side), 3)
    assert d.output.total_tensor_size_in_bytes > limit and d.output.total_tensor_size_in_bytes <= caps.limit(
        "max-buffer-size"
    )
    plan = plan_convolution_integer(d, caps)
    assert plan.kernels[0] == "convolution_integer_direct_dot4[0]" and "not even one item fits" in plan.why
    piece = dict(plan.details)["split_piece"]
    assert piece[0] == 1 and plan.dispatches == -(-8 // piece[2]) * -(-8 // piece[3]) * -(-side // piece[4])
    check_split(plan, d, caps, elements=False)
    for s in plan.steps:
        assert {name for name, _, _ in s.windows} == {"input", "output"}
    with pytest.raises(
        PlanError,
        match=r"kernel: 'dot4' binds the whole filter and a chunk of whole batch items.*not even one batch item fits",
    ):
        plan_convolution_integer(d, caps, kernel="dot4")
    depthwise = layer(1, 1, 1, (side * 12, side), 3)  # one channel: bands of rows, the halo overlapping
    plan = plan_convolution_integer(depthwise, caps)
    check_split(plan, depthwise, caps, elements=False)
    ins = [dict((n, (a, b)) for n, a, b in s.windows)["input"] for s in plan.steps]
    rows = [s.uniforms_dict["out_height"] for s in plan.steps]
    assert len(rows) > 1 and sum(rows) == side * 12
    for (a0, l0), (a1, _) in zip(ins, ins[1:]):
        assert a1 < a0 + l0  # consecutive input windows overlap by the halo (KH - 1 rows)


def test_cpu_adapters_take_grouped_fma_for_few_channels_a_group_and_1x1():
    """CPU adapters: grouped layers of at most 4 channels a group, or with 1x1 kernels, run on f32
    multiply-adds (grouped_fma) where its sums are exact (at most 258 taps a group); 8-16 channels a
    group with larger kernels and depthwise layers keep their kernels; dense layers take it where
    they are 1x1 of at most _CPU_GFMA_DENSE_MACS multiply-adds or stems of C <= 4 on at most
    _CPU_GFMA_STEM_POSITIONS output positions (lavapipe: 30 unseen random quick rows 0.63-2.86x,
    geometric mean 1.48x); a GPU profile is unchanged."""
    cpu, gpu = Capabilities.profile("lavapipe"), Capabilities.profile("h100")
    for desc, cpu_kernel in [
        (layer(1, 128, 128, (7, 7), 3, groups=64), "grouped_fma"),  # 2 channels a group
        (layer(1, 40, 40, (13, 19), 7, groups=10, stride=2), "grouped_fma"),  # 4 a group, 7x7 stride 2
        (layer(1, 64, 128, (13, 13), 1, groups=2), "grouped_fma"),  # 1x1, 32 a group
        (layer(1, 128, 128, (7, 7), 9, groups=32), "portable"),  # 324 taps: f32 sums not exact
        (layer(1, 128, 128, (7, 7), 3, groups=16), "portable"),  # 8 a group, 3x3
        (layer(1, 128, 128, (8, 8), 3, groups=128), "depthwise"),
        # dense layers (G = 1): 1x1 of at most 2^20 multiply-adds, C <= 4 on at most 100 positions
        (layer(1, 64, 64, (8, 8), 1), "grouped_fma"),  # 262,144 multiply-adds
        (layer(1, 64, 64, (17, 17), 1), "dot4"),  # 1,183,744: the GEMM
        (layer(1, 3, 64, (7, 7), 3), "grouped_fma"),  # a stem on 49 positions
        (layer(1, 3, 64, (13, 13), 3), "dot4_window"),  # 169 positions: the tile form
    ]:
        got = plan_convolution_integer(desc, cpu)
        assert dict(got.details)["kernel"] == cpu_kernel, got.why
        if cpu_kernel == "grouped_fma":
            assert "CPU adapter" in got.why and "exact f32 sums" in got.why
    # (a GPU takes grouped_fma at stride 1 only)
    assert dict(plan_convolution_integer(layer(1, 40, 40, (13, 19), 7, groups=10, stride=2), gpu).details)[
        "kernel"
    ] != ("grouped_fma")


def test_gpu_grouped_fma_and_window_scopes():
    """On a GPU (H200, session 39) the grouped FMA kernel takes G = 1 layers of C < 4 and M < 16 at any stride (stems
    with few outputs: 2.5-5.8x the scalar direct kernel), not C >= 4 (kernel rows of 3+ taps: the window kernel,
    session 41; 1x1: direct_dot4); grouped 1x1 layers of 32+ channels a group take the GEMM (1.5-8x), of 16 the FMA
    kernel; groups past 258 taps keep their kernels (the FMA kernel's sums of a few channels at a time ran 1.6x
    slower: on request only); G = 1 layers of C < 16 and M >= 16 whose whole window packs into fewer k steps take
    the window kernel (C = 8 3x3: 1.1-2.7x direct_dot4), C = 24 the GEMM; grouped layers of 2-15 channels a group
    that the FMA kernel does not take (stride 2, past 258 taps) take the window kernel from 32 taps a group and 128
    of its workgroups (H200, session 40: 0.96-3.2x, geometric mean 1.57x on 25 unseen random rows); a CPU adapter
    keeps its own rules."""
    gpu, cpu = Capabilities.profile("h100"), Capabilities.profile("lavapipe")
    for desc, kernel in [
        (layer(64, 2, 8, (256, 384), 7), "grouped_fma"),  # C=2 7x7 stem, M = 8
        (layer(16, 3, 8, (224, 224), 7, stride=2), "grouped_fma"),  # stride 2
        (layer(64, 2, 8, (4096,), 7), "grouped_fma"),  # 1-D
        (layer(64, 4, 8, (256, 256), 5), "dot4_window"),  # C = 4, rows of 5 taps: the window kernel (session 41)
        (layer(64, 64, 8, (112, 112), 1), "direct_dot4"),
        (layer(16, 3, 64, (224, 224), 7, stride=2), "dot4_window"),  # M = 64: the window kernel
        (layer(1, 256, 512, (224, 336), 1, groups=8), "dot4"),  # 1x1, 32 channels a group, M/G = 64
        (layer(8, 256, 256, (56, 56), 1, groups=4), "dot4"),
        (layer(7, 64, 128, (224, 336), 1, groups=4), "grouped_fma"),  # 1x1, 16 a group
        (layer(37, 512, 1024, (56, 56), 1, groups=64), "grouped_fma"),  # 1x1, 8 a group: not dense
        (layer(8, 192, 192, (57, 57), 7, groups=24), "dot4_window"),  # 392 taps a group: the window kernel
        (layer(64, 384, 384, (56, 84), 3, groups=96, stride=2), "dot4_window"),  # C/G = 4, stride 2
        (layer(64, 128, 128, (13, 13), 7, groups=64, stride=2), "dot4_window"),  # C/G = 2, 98 taps
        (layer(64, 320, 320, (28, 28), 3, groups=160, stride=2), "direct"),  # C/G = 2, 18 taps
        (layer(64, 8, 8, (14, 14), 3, groups=2, stride=2), "direct_dot4"),  # 26 window workgroups
        (layer(8, 256, 256, (28, 28), 3, groups=8), "dot4"),  # 288 taps, dense groups: the GEMM
        (layer(64, 8, 24, (57, 57), 3), "dot4_window"),  # C = 8, M = 24: 2 k steps against 3
        (layer(8, 24, 64, (56, 56), 3), "dot4"),  # C = 24: the GEMM
    ]:
        got = plan_convolution_integer(desc, gpu)
        assert dict(got.details)["kernel"] == kernel, (desc, got.why)
        if kernel == "grouped_fma":
            assert "grouped FMA kernel" in got.why and "exact f32 sums" in got.why
            assert "CCH" not in got.steps[0].constants_dict
    assert "2 GEMM k steps" in plan_convolution_integer(layer(64, 8, 24, (57, 57), 3), gpu).why
    why = plan_convolution_integer(layer(64, 384, 384, (56, 84), 3, groups=96, stride=2), gpu).why
    assert "grouped FMA kernel does not take (stride 2x2)" in why and "M/G = 4 with" in why
    # on request past 258 taps: sums of CCH channels at a time
    req = plan_convolution_integer(layer(8, 192, 192, (57, 57), 7, groups=24), gpu, kernel="grouped_fma")
    assert req.steps[0].constants_dict["CCH"] == 5 and "added in i32" in req.steps[0].why
    # CPU adapters: neither the stem nor the C = 8 layer change kernels, nor grouped layers take the window
    assert dict(plan_convolution_integer(layer(64, 2, 8, (256, 384), 7), cpu).details)["kernel"] != "grouped_fma"
    assert dict(plan_convolution_integer(layer(8, 192, 192, (57, 57), 7, groups=24), cpu).details)["kernel"] == (
        "direct_dot4"
    )


def test_cpu_adapters_take_the_portable_kernel_where_direct_tiles_idle():
    """On a CPU adapter a direct kernel whose tile gives under half its threads work yields to the
    portable kernel (lavapipe runs idle invocations through the staging loops and barriers too);
    a GPU profile takes the grouped FMA kernel for these grouped stride-1 layers, and larger
    planes keep the direct kernels on the CPU too; C/G = 1 takes the depthwise kernel on both
    (lavapipe: 1.6-4.3x the direct kernel), except the GPU's 56x56 planes (the depthwise FMA
    kernel)."""
    cpu, gpu = Capabilities.profile("lavapipe"), Capabilities.profile("h100")
    for desc, cpu_kernel, gpu_kernel in [
        (layer(1, 128, 128, (8, 8), 3, groups=128), "depthwise", "depthwise"),  # depthwise 8x8
        (layer(1, 128, 128, (7, 7), 9, groups=32), "portable", "direct_dot4"),  # 4 channels a group, 9x9: 324 taps
        (layer(1, 128, 128, (56, 56), 3, groups=128), "depthwise", "depthwise_fma"),  # depthwise 56x56
        (layer(1, 256, 256, (14, 14), 3, groups=32), "direct_dot4", "grouped_fma"),  # 8 channels a group: busy
    ]:
        got = plan_convolution_integer(desc, cpu)
        assert dict(got.details)["kernel"] == cpu_kernel, got.why
        assert dict(plan_convolution_integer(desc, gpu).details)["kernel"] == gpu_kernel
        if cpu_kernel == "portable":
            assert "CPU adapter" in got.why and "threads work" in got.why
    # a request is honoured on any adapter
    assert (
        dict(plan_convolution_integer(layer(1, 128, 128, (8, 8), 3, groups=128), cpu, kernel="direct").details)[
            "kernel"
        ]
        == "direct"
    )


def test_depthwise_rows_that_are_not_whole_words_take_the_fma_kernel_on_a_gpu():
    """Depthwise layers at stride 1 or 2 whose input rows are not whole words (odd widths) take the
    depthwise FMA kernel on a GPU from 256 outputs a plane (H100: 1.4-1.6x the fast rows at 3x3),
    and 2-D stride-1 layers from 1024 outputs a plane; small planes, whole-word rows at stride 2
    and 1-D rows of whole words keep the depthwise kernel's fast rows; CPU adapters keep them all."""
    cpu, gpu = Capabilities.profile("lavapipe"), Capabilities.profile("h100")
    for desc, gpu_kernel, why in [
        (layer(8, 128, 128, (57, 57), 3, groups=128), "depthwise_fma", "not whole words"),
        (layer(4, 60, 120, (45, 77), 3, groups=60), "depthwise_fma", "not whole words"),  # M/G = 2
        (layer(8, 96, 96, (57, 57), 3, groups=96, stride=2), "depthwise_fma", "not whole words"),
        (layer(8, 256, 256, (1999,), 3, groups=256), "depthwise_fma", "not whole words"),  # 1-D
        (layer(8, 64, 64, (40, 40), 3, groups=64), "depthwise_fma", "output planes"),
        (layer(8, 1024, 1024, (7, 7), 3, groups=1024), "depthwise", "eight outputs of a row"),  # odd, 49 outputs
        (layer(8, 512, 512, (14, 14), 3, groups=512), "depthwise", "eight outputs of a row"),
        (layer(8, 256, 256, (28, 28), 3, groups=256), "depthwise", "eight outputs of a row"),  # 784 outputs
        (layer(8, 144, 144, (112, 112), 3, groups=144, stride=2), "depthwise", "eight outputs of a row"),
        (layer(8, 512, 512, (2000,), 5, groups=512), "depthwise", "eight outputs of a row"),  # 1-D, whole words
    ]:
        got = plan_convolution_integer(desc, gpu)
        assert dict(got.details)["kernel"] == gpu_kernel and why in got.why, got.why
        assert dict(plan_convolution_integer(desc, cpu).details)["kernel"] == "depthwise"


def test_gemms_of_few_k_steps_take_the_smallest_tiles_on_a_gpu():
    """A GPU's GEMM of at most 3 k steps with at most 64 channels a group (stems, small C) takes
    256-thread tiles of 4 pixels a thread by 64 channels (several workgroups an SM); more k steps,
    more channels, a requested tile and CPU adapters keep their choices."""
    gpu, cpu = Capabilities.profile("h100"), Capabilities.profile("lavapipe")

    def gemm(desc, caps, **tuning):
        plan = plan_convolution_integer(desc, caps, **tuning)
        if plan.kernels[-1].startswith("convolution_integer_dot4_window"):  # (stems: the GEMM, requested)
            plan = plan_convolution_integer(desc, caps, kernel="dot4_im2col", **tuning)
        s = plan.steps[-1]
        return s.constants_dict["RP"], s.workgroup_size, s.constants_dict["TM"], s.uniforms_dict["tile_steps"], s.why

    stem = layer(8, 3, 64, (224, 224), 7, stride=2)  # K = 147: 3 k steps (im2col)
    for desc, steps in [(stem, 3), (layer(8, 3, 32, (224, 224), 3, stride=2), 1), (layer(4, 16, 40, (45, 77), 3), 3)]:
        rp, threads, tm, got_steps, why = gemm(desc, gpu)
        narrow = desc.filter.sizes[0] <= 32  # (at most 32 channels a group: 32-channel tiles)
        assert (rp, threads, tm, got_steps) == (4, 256, 32 if narrow else 64, steps) and "several an SM" in why
        assert ("32-channel tiles" in why) == narrow
        assert gemm(desc, cpu)[1] == 128  # CPU adapters: 128-thread tiles as before
    for desc in (layer(8, 24, 64, (56, 56), 3), layer(8, 3, 96, (224, 224), 4, stride=4, pad=0)):
        # 5 k steps; 96 channels (a 128-channel tile)
        assert gemm(desc, gpu)[:3] != (4, 256, 64) and "cost model" in gemm(desc, gpu)[4]
    assert gemm(stem, gpu, pixels_per_thread=6, threads=512, tile_channels=64)[:3] == (6, 512, 64)  # requested


def test_32_channel_gemm_tiles():
    """The dot4 GEMM's 32-channel tiles (TM = 32: 4 pixels a thread in 128 or 256 threads): a GPU's
    groups of at most 32 output channels take them (H200: 1.06-1.45x at M/G = 16), wider groups
    keep 64 and 128 unless requested, CPU adapters keep theirs; shapes past two staging passes are
    refused with the rule named."""
    gpu = Capabilities.profile("h100")
    d = layer(8, 64, 80, (28, 28), 3)
    for threads in (128, 256):
        s = plan_convolution_integer(d, gpu, kernel="dot4", tile_channels=32, threads=threads).steps[-1]
        assert s.constants_dict["TM"] == 32 and s.constants_dict["RP"] == 4 and s.workgroup_size == threads
    assert plan_convolution_integer(d, gpu, kernel="dot4").steps[-1].constants_dict["TM"] in (64, 128)
    for m, groups, tm in ((16, 1, 32), (32, 1, 32), (48, 1, 64), (64, 2, 32)):
        s = plan_convolution_integer(layer(8, 64, m, (28, 28), 3, groups=groups), gpu, kernel="dot4").steps[-1]
        assert s.constants_dict["TM"] == tm and ("32-channel tiles" in s.why) == (tm == 32), s.why
    cpu = Capabilities.profile("lavapipe")
    assert (
        plan_convolution_integer(layer(8, 64, 16, (28, 28), 3), cpu, kernel="dot4").steps[-1].constants_dict["TM"] == 64
    )
    for tuning in (dict(threads=512), dict(pixels_per_thread=6, threads=256)):
        with pytest.raises(PlanError, match="no 32-channel tile runs"):
            plan_convolution_integer(d, gpu, kernel="dot4", tile_channels=32, **tuning)


@pytest.mark.parametrize(
    "hw, k, fma", [((7, 7), 7, False), ((9, 9), 5, False), ((7, 10), 7, False), ((10, 10), 5, True)]
)
def test_depthwise_small_planes_keep_fast_rows(hw, k, fma):
    """Stride-1 depthwise layers of 25+ taps take the FMA kernel on a GPU only from output planes
    of 100 outputs (_FMA_OVER_FAST_MIN_PLANE): on smaller ones its staged window is mostly halo
    (H200: 7x7 on 8x768x7x7 22.8 -> 12.9 us on the fast rows)."""
    plan = plan_convolution_integer(layer(8, 256, 256, hw, k, groups=256), Capabilities.profile("h100"))
    assert plan.kernels == ["convolution_integer_depthwise_fma" if fma else "convolution_integer_depthwise"]
    if fma:
        assert f"on {hw[0]}x{hw[1]} output planes" in plan.why
    else:
        assert f"from 100 outputs a plane: on {hw[0] * hw[1]} its staged window is mostly halo" in plan.why


@pytest.mark.parametrize("c, k, window", [(16, 3, True), (4, 5, True), (96, 7, True), (512, 1, False), (3, 5, False)])
def test_narrow_dense_layers_take_the_window_kernel_on_a_gpu(c, k, window):
    """Dense layers of M < 16 output channels with C >= 4 and kernel rows of 3+ taps: the window
    kernel on a GPU (_WINDOW_NARROW_MIN_KW; H200: geometric mean 1.42x over direct_dot4 on 24
    random layers), not 1x1 layers (5.7x slower there) nor C < 4 (the grouped FMA kernel); CPU
    adapters keep their plans."""
    x = layer(64, c, 8, (896,) if c == 96 else (56, 56), k, stride=2 if c == 4 else 1)
    plan = plan_convolution_integer(x, Capabilities.profile("h100"))
    assert (plan.kernels[-1].startswith("convolution_integer_dot4_window")) == window, plan.kernels
    if window:
        assert "M = 8 < 16 output channels" in plan.why
    cpu = plan_convolution_integer(x, Capabilities.profile("lavapipe"))
    assert "M = 8 < 16 output channels" not in cpu.why

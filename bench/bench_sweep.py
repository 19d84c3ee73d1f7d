"""The sweep: every operator across its configuration space, one seeded grid, one table.

Each row is one description: timed with GPU timestamps (median of ``--reps`` runs), checked against
the numpy reference under the tests' tolerance (bit-exact except linear resampling), and set
against its roofline measured in the same run: the vec4 copy moving the plan's ``bytes_moved``,
and for ConvolutionInteger the larger of that and the plan's ``ops`` at the in-run dp4a ceiling.
On a CPU adapter, whose speed moves 1-3.5x with the host's scheduling, the roofline is timed again
beside each row in three back-to-back pairs and the median pair gives both (``Bench.paired_ns``).
Where they run, torch's fastest equivalent on CUDA and ONNX Runtime's WebGPU EP are timed beside
it, and the numpy one-liner (``dmlwgsl.depth_to_space(x, ...)`` etc., upload to readback) end to end.
The sweep exits 1 when any row is inexact.

    dmlwgsl bench sweep [--quick] [--op OP] [--json PATH] [--plot PATH] [--max-rows N] [--filter TEXT]
    dmlwgsl bench sweep --random N [--seed S] ...   # N random rows per operator, off the grid

``--quick`` is the small grid (every dimension of the grid, sizes shrunk: minutes on lavapipe);
the full grid is for a GPU. ``--smoke`` is a handful of quick rows, one per kind (CI).
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

import dmlwgsl
from dmlwgsl.benchmark import (
    Bench,
    Progress,
    bench_notes,
    bench_parser,
    compare,
    fmt_time,
    onnx_model,
    open_device,
    open_peers,
    ort_columns,
    plan_facts,
    plot_rows,
    torch_depth_space_fn,
    torch_time_ns,
    wall_ms,
)
from dmlwgsl.plan import PlanError
from dmlwgsl.reference.tensors import read_tensor, tensor_bytes
from dmlwgsl.runtime import AllocationError, GpuTensor
from dmlwgsl.tensor import DataType, TensorDesc
from dmlwgsl.testing import random_bytes, strided_desc

OPS = ("depth_to_space", "space_to_depth", "resample", "convolution_integer")
MAIN_TYPES = ("float32", "float16", "uint8", "int64")
OTHER_TYPES = ("uint32", "uint16", "int32", "int16", "int8", "float64", "uint64")


@dataclass
class Case:
    """One grid row: the operator and its configuration (the JSON ``config``)."""

    op: str
    config: dict
    marks: tuple = ()
    extra: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        """A short human label for tables, progress and plots."""
        c = self.config
        shape = "x".join(map(str, c["input_shape"]))
        if self.op in ("depth_to_space", "space_to_depth"):
            lay = (
                ""
                if (c["input_layout"], c["output_layout"]) == ("packed", "packed")
                else (f" {c['input_layout']}->{c['output_layout']}")
            )
            return f"b{c['block_size']} {c['order']} {c['dtype']} {shape}{lay}"
        if self.op == "resample":
            sc = ",".join(_fmt_scale(s) for s in c["scales"])
            aa = " antialias" if c.get("antialias") else ""
            lay = "" if c["input_layout"] == "packed" else f" {c['input_layout']}"
            return f"{c['mode']}{aa} x[{sc}] {c['dtype']} {shape}{lay}"
        f = "x".join(map(str, c["filter_shape"]))
        return (
            f"{c['name']} {c['dtype'][0]}{c['dtype'][-1]}x{c['filter_dtype'][0]}{c['filter_dtype'][-1]} "
            f"{shape} * {f} G{c['group_count']} zp:{c['zero_points']}"
        )


def _fmt_scale(s: float) -> str:
    f = Fraction(s).limit_denominator(16)
    return str(f) if abs(float(f) - s) < 1e-9 else f"{s:g}"


# ------------------------------------------------------------------------------------------------
# The grid
# ------------------------------------------------------------------------------------------------
def _depth_space_case(op, shape_d2s, dtype, b, order, lin, lout, kind, marks=()) -> Case:
    """A DepthToSpace / SpaceToDepth row from the DepthToSpace input shape ``shape_d2s`` (SpaceToDepth's
    output shape)."""
    n, c, h, w = shape_d2s
    d2s_out = (n, c // (b * b), h * b, w * b)
    in_shape, out_shape = (shape_d2s, d2s_out) if op == "depth_to_space" else (d2s_out, shape_d2s)
    cfg = dict(
        input_shape=list(in_shape),
        output_shape=list(out_shape),
        dtype=dtype,
        input_layout=lin,
        output_layout=lout,
        block_size=b,
        order=order,
        shape_kind=kind,
    )
    return Case(op, cfg, marks)


def _depth_space_cases(op: str, quick: bool) -> list[Case]:
    """Block 2/3/4/8 x DCR/CRD x the main types on large aligned tensors; the other types; odd/prime
    and small sizes; NHWC-strided and broadcast inputs; an output window inside a larger buffer."""
    target = (1 << 20) if quick else (16 << 20)  # input bytes of a "large aligned" row (moves 2x)
    hw = 8 if quick else 64

    def large(b: int, dtype: str) -> tuple:
        k = 4 if quick else 16
        per_item = b * b * k * hw * hw * DataType.parse(dtype).size_in_bytes
        return (max(1, round(target / per_item)), b * b * k, hw, hw)

    cases = []

    def add(shape_d2s, dtype, b, order, lin="packed", lout="packed", kind="large aligned"):
        cases.append(_depth_space_case(op, shape_d2s, dtype, b, order, lin, lout, kind))

    for b in (2, 3, 4, 8):
        for order in ("DCR", "CRD"):
            for dt in MAIN_TYPES:
                add(large(b, dt), dt, b, order)
    for dt in OTHER_TYPES[:2] if quick else OTHER_TYPES:
        add(large(2, dt), dt, 2, "DCR")
    for b in (2, 3):
        for dt in ("float32", "uint8"):
            n = 1 if quick else 8
            add(
                (n, b * b * (3 if quick else 7), 13 if quick else 37, 17 if quick else 41),
                dt,
                b,
                "DCR",
                kind="odd/prime",
            )
    for b in (2, 4):
        for dt in ("float32", "float16"):
            add((1, 16, 32, 32) if b == 2 else (1, 16, 16, 16), dt, b, "CRD", kind="small")
    for lin, lout in (("nhwc", "packed"), ("broadcast", "packed"), ("packed", "window")):
        for b in (2, 3):
            for dt in ("float32", "float16"):
                add(large(b, dt), dt, b, "DCR", lin, lout)
    return cases


def _resample_cases(quick: bool) -> list[Case]:
    """Nearest and linear; scales 1/2, 1/3, 5/4, 3/2, 2, 3 and mixed per axis; resampled axes W,
    H+W, C+H+W, all four; ranks 1-4; float32/float16/int8/uint8; odd sizes; strided input;
    antialias rows at scales 1/2, 1/3, 1/4 (Resample3, where the package has it)."""
    base = (1, 8, 48, 64) if quick else (2, 32, 256, 256)
    odd = (1, 3, 13, 29) if quick else (3, 17, 135, 241)
    cases = []

    def add(shape, scales, mode, dtype="float32", layout="packed", kind="base", antialias=False):
        out = [int(math.floor(s * f)) for s, f in zip(shape, scales)]
        axes = [d for d, f in enumerate(scales) if f != 1.0]
        cfg = dict(
            input_shape=list(shape),
            output_shape=out,
            dtype=dtype,
            input_layout=layout,
            mode=mode,
            scales=[float(f) for f in scales],
            axes=axes,
            antialias=antialias,
            shape_kind=kind,
        )
        cases.append(Case("resample", cfg, ("antialias",) if antialias else ()))

    spatial = lambda f, g=None: (1.0, 1.0, f, f if g is None else g)  # noqa: E731
    for mode in ("nearest", "linear"):
        for f in (0.5, 1 / 3, 1.25, 1.5, 2.0, 3.0):
            add(base, spatial(f), mode)
        add(base, spatial(2.0, 1.5), mode, kind="mixed")
        add(base, spatial(0.5, 3.0), mode, kind="mixed")
        add(base, (1.0, 1.0, 1.0, 2.0), mode, kind="axes W")
        add(base, (1.0, 2.0, 2.0, 2.0), mode, kind="axes C,H,W")
        add(base if quick else (2, 16, 128, 128), (2.0, 2.0, 2.0, 2.0), mode, kind="axes N,C,H,W")
        r1 = (4096,) if quick else (1 << 23,)
        r2 = (48, 64) if quick else (2048, 2048)
        r3 = (4, 24, 32) if quick else (32, 256, 256)
        add(r1, (2.0,), mode, kind="rank 1")
        add(r2, (2.0, 2.0), mode, kind="rank 2")
        add(r3, (1.0, 2.0, 2.0), mode, kind="rank 3")
        for dt in ("float16", "int8", "uint8"):
            for f in (2.0, 0.5):
                add(base, spatial(f), mode, dt)
        for dt in ("float32", "float16"):
            add(odd, spatial(2.0), mode, dt, kind="odd")
        add(base, spatial(2.0), mode, layout="nhwc", kind="strided")
        add(base, spatial(0.5), mode, "float16" if mode == "linear" else "uint8", layout="nhwc", kind="strided")
        add(base, spatial(2.0), mode, layout="padded", kind="strided")
    for f in (0.5, 1 / 3, 0.25):
        for dt in ("float32",) if quick else ("float32", "float16"):
            add(base, spatial(f), "linear", dt, kind="antialias", antialias=True)
    return cases


def _conv_cases(quick: bool) -> list[Case]:
    """The ConvolutionInteger issue's layers: the four of bench/, a 7x7 stride-2 stem (C=3), depthwise
    3x3, grouped G=32 and G=2, 1x1, 3x3 u8 x u8 C=96, 1-D k3, dilation 2, i8 x i8 per-tensor, 3x3
    stride 2, 5x5, C=24, depthwise 3x3 stride 2 / 5x5 / 7x7, all four sign mixes, per-tensor /
    per-channel / no zero points."""
    rows = [
        # name, (N, C, H, W) or (N, C, W), M, (KH, KW) or (K,), G, strides, dilations, pads (begin), x, w, zp
        ("layer1", (8, 64, 56, 56), 64, (3, 3), 1, (1, 1), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("layer2", (8, 256, 28, 28), 256, (3, 3), 1, (1, 1), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("layer3", (32, 128, 28, 28), 128, (3, 3), 1, (1, 1), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("layer4", (8, 512, 14, 14), 512, (3, 3), 1, (1, 1), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("stem7x7s2", (8, 3, 224, 224), 64, (7, 7), 1, (2, 2), (1, 1), (3, 3), "uint8", "int8", "per-channel"),
        ("depthwise", (8, 256, 56, 56), 256, (3, 3), 256, (1, 1), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("grouped32", (8, 256, 28, 28), 256, (3, 3), 32, (1, 1), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("grouped2", (8, 128, 28, 28), 128, (3, 3), 2, (1, 1), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("1x1", (8, 256, 28, 28), 512, (1, 1), 1, (1, 1), (1, 1), (0, 0), "uint8", "int8", "per-channel"),
        ("u8u8-C96", (8, 96, 56, 56), 96, (3, 3), 1, (1, 1), (1, 1), (1, 1), "uint8", "uint8", "per-channel"),
        ("1d-k3", (8, 256, 4096), 256, (3,), 1, (1,), (1,), (1,), "uint8", "int8", "per-channel"),
        ("dilation2", (8, 256, 28, 28), 256, (3, 3), 1, (1, 1), (2, 2), (2, 2), "uint8", "int8", "per-channel"),
        ("i8i8-per-tensor", (8, 256, 28, 28), 256, (3, 3), 1, (1, 1), (1, 1), (1, 1), "int8", "int8", "per-tensor"),
        ("i8u8", (8, 256, 28, 28), 256, (3, 3), 1, (1, 1), (1, 1), (1, 1), "int8", "uint8", "per-channel"),
        ("no-zp", (8, 256, 28, 28), 256, (3, 3), 1, (1, 1), (1, 1), (1, 1), "uint8", "int8", "none"),
        ("3x3s2", (8, 128, 56, 56), 256, (3, 3), 1, (2, 2), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("5x5", (8, 64, 56, 56), 64, (5, 5), 1, (1, 1), (1, 1), (2, 2), "uint8", "int8", "per-channel"),
        ("C24", (8, 24, 56, 56), 64, (3, 3), 1, (1, 1), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        # depthwise beyond 3x3 stride 1: MobileNet's stride-2 3x3, EfficientNet's 5x5, ConvNeXt's 7x7
        ("dw3x3s2", (8, 144, 112, 112), 144, (3, 3), 144, (2, 2), (1, 1), (1, 1), "uint8", "int8", "per-channel"),
        ("dw5x5", (8, 240, 28, 28), 240, (5, 5), 240, (1, 1), (1, 1), (2, 2), "uint8", "int8", "per-channel"),
        ("dw7x7", (8, 128, 56, 56), 128, (7, 7), 128, (1, 1), (1, 1), (3, 3), "uint8", "int8", "per-channel"),
    ]
    cases = []
    for name, xs, m, k, g, st, dil, pad, xt, wt, zp in rows:
        if quick:
            # Same structure, shrunk: batch 1, spatial sizes /7 (at least the kernel's reach), channels
            # capped at 64 (kept where they define the row: C=3, C=24, depthwise = C).
            c = xs[1] if xs[1] in (3, 24) else min(xs[1], 64)
            m = c if g == xs[1] else min(m, 64)
            g = c if g == xs[1] else min(g, c)
            sp = tuple(max(2 * kk + 1, s // 7) for s, kk in zip(xs[2:], k))
            if name == "1d-k3":
                sp = (64,)
            xs = (1, c) + sp
        cfg = _conv_config(name, xs, m, k, g, st, dil, pad, xt, wt, zp)
        cases.append(Case("convolution_integer", cfg))
    return cases


def _conv_config(name, xs, m, k, g, st, dil, pad, xt, wt, zp) -> dict:
    outs = [(s + 2 * p - dd * (kk - 1) - 1) // ss + 1 for s, p, dd, kk, ss in zip(xs[2:], pad, dil, k, st)]
    return dict(
        name=name,
        input_shape=list(xs),
        output_shape=[xs[0], m] + outs,
        dtype=xt,
        input_layout="packed",
        filter_shape=[m, xs[1] // g] + list(k),
        filter_dtype=wt,
        group_count=g,
        strides=list(st),
        dilations=list(dil),
        pads=list(pad) * 2,
        zero_points=zp,
    )


def grid(quick: bool, ops=OPS) -> list[Case]:
    """The seeded grid (deterministic: the same rows in the same order on every run)."""
    cases = []
    for op in ops:
        if op in ("depth_to_space", "space_to_depth"):
            cases += _depth_space_cases(op, quick)
        elif op == "resample":
            cases += _resample_cases(quick)
        else:
            cases += _conv_cases(quick)
    return cases


# ------------------------------------------------------------------------------------------------
# Random rows off the grid (--random N): the plan must not be fast only on the grid's shapes
# ------------------------------------------------------------------------------------------------
ALL_TYPES = MAIN_TYPES + OTHER_TYPES
_RANDOM_SCALES = (0.25, 1 / 3, 0.4, 0.5, 2 / 3, 0.75, 0.8, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0)


def _loguniform(rng, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _random_depth_space(op: str, rng, quick: bool) -> Case:
    """Block 2-8 (5, 6 and 7 too), either order, any of the 11 types, H and W anywhere in 3-200
    (odd and prime sizes as likely as even ones), every layout pair of the grid and padded inputs;
    the batch sized so the input holds 2-128 MiB (16 KiB-1 MiB with ``quick``)."""
    b = int(rng.choice([2, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8]))
    dt = str(rng.choice(MAIN_TYPES)) if rng.random() < 0.6 else str(rng.choice(ALL_TYPES))
    esize = DataType.parse(dt).size_in_bytes
    lin, lout = [
        ("packed", "packed"),
        ("nhwc", "packed"),
        ("broadcast", "packed"),
        ("packed", "window"),
        ("padded", "packed"),
        ("nhwc", "window"),
    ][int(rng.choice(6, p=[0.45, 0.15, 0.1, 0.12, 0.1, 0.08]))]
    big = _loguniform(rng, 1 << 14, 1 << 20) if quick else _loguniform(rng, 2 << 20, 128 << 20)
    small_hw = 40 if quick else 200
    h, w = (int(rng.integers(3, small_hw + 1)) for _ in range(2))
    k = int(rng.integers(1, 9 if quick else 97))  # channels of the DepthToSpace output
    while b * b * k * h * w * esize * 64 < big and k < 4096:  # more channels before a batch past 64
        k *= 2
    n = max(1, round(big / (b * b * k * h * w * esize)))
    order = str(rng.choice(["DCR", "CRD"]))
    return _depth_space_case(op, (n, b * b * k, h, w), dt, b, order, lin, lout, "random", ("random",))


def _random_resample(rng, quick: bool) -> Case:
    """Rank 1-4, nearest or linear (antialiased linear downscales too), any of the four types, a
    scale per resampled axis from 1/4 to 4 (a third of them drawn uniformly, not from the grid's
    list), the resampled axes any trailing set (W, H+W, C+H+W, all), odd sizes, packed / NHWC /
    padded inputs; sized so that input + output hold 2-128 MiB (16 KiB-1 MiB with ``quick``)."""
    rank = int(rng.choice([1, 2, 3, 4, 4, 4]))
    dt = str(rng.choice(["float32", "float16", "int8", "uint8"]))
    mode = str(rng.choice(["nearest", "linear"]))
    antialias = mode == "linear" and rank >= 2 and rng.random() < 0.2
    n_axes = rank if rank <= 2 else int(rng.choice([1, 2, 2, 2, 3, 4][: rank + 2]))  # (at most rank)

    def scale(down: bool) -> float:
        if rng.random() < 0.33:
            return float(rng.uniform(0.25, 0.95)) if down else float(rng.uniform(0.25, 4.0))
        pool = [s for s in _RANDOM_SCALES if s < 1] if down else list(_RANDOM_SCALES)
        return float(rng.choice(pool))

    scales = [1.0] * rank
    first = scale(antialias)
    for i, d in enumerate(range(rank - n_axes, rank)):
        scales[d] = first if (i > 0 and rng.random() < 0.5) else scale(antialias)
        if scales[d] == 1.0:
            scales[d] = 2.0
    budget = _loguniform(rng, 1 << 14, 1 << 20) if quick else _loguniform(rng, 2 << 20, 128 << 20)
    esize = DataType.parse(dt).size_in_bytes
    per = esize * (1 + math.prod(scales))  # bytes per input element, input + output
    elems = budget / per
    # spatial sizes odd or even, 5-400 (trailing axes), then leading axes from what is left
    shape = [1] * rank
    rest = elems
    for d in reversed(range(rank)):
        if d == 0:
            shape[d] = max(1, round(rest))
        elif d >= rank - 2:
            shape[d] = int(min(max(2, round(rest)), rng.integers(5, 401)))
        else:
            shape[d] = int(min(max(1, round(rest)), rng.integers(1, 65)))
        rest = max(1.0, rest / shape[d])
    out = [max(1, int(math.floor(s * f))) for s, f in zip(shape, scales)]
    layout = "packed" if rank == 1 else str(rng.choice(["packed", "packed", "packed", "nhwc", "padded"]))
    cfg = dict(
        input_shape=shape,
        output_shape=out,
        dtype=dt,
        input_layout=layout,
        mode=mode,
        scales=scales,
        axes=[d for d, f in enumerate(scales) if f != 1.0],
        antialias=bool(antialias),
        shape_kind="random",
    )
    return Case("resample", cfg, ("random", "antialias") if antialias else ("random",))


def _random_conv(rng, quick: bool) -> Case:
    """A layer as networks have them: dense (any C and M, 1x1 to 7x7), depthwise, grouped, a stem
    (C 1-4); 1-D a fifth of the time; stride 2, dilation 2 and asymmetric spatial sizes sometimes;
    any sign mix and zero-point form; the batch sized to 0.2-20 G operations (dense) or 4-64 MiB
    (depthwise); ``quick`` shrinks everything to lavapipe's scale."""
    kind = str(rng.choice(["dense", "dense", "depthwise", "grouped", "stem"]))
    one_d = rng.random() < 0.2
    chans = [8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512]
    c = int(rng.choice(chans if not quick else chans[:7]))
    if kind == "stem":
        c = int(rng.integers(1, 5))
    k = int(rng.choice([1, 3, 3, 3, 5, 7])) if kind in ("dense", "grouped") else int(rng.choice([3, 3, 5, 7]))
    if one_d:
        k = int(rng.choice([1, 3, 5, 7, 9]))
    if kind == "depthwise":
        g, m = c, c * int(rng.choice([1, 1, 1, 2]))
    elif kind == "grouped":
        cg = int(rng.choice([2, 4, 8, 16, 32]))
        c = max(c, 2 * cg) // cg * cg
        g, m = c // cg, c * int(rng.choice([1, 1, 2]))
    else:
        g, m = 1, int(rng.choice(chans if not quick else chans[:7]))
    st = int(rng.choice([1, 1, 1, 2])) if kind != "stem" else int(rng.choice([1, 2, 2, 4]))
    dil = 2 if (k > 1 and rng.random() < 0.1) else 1
    pad = (k - 1) // 2 * dil
    side = int(rng.choice([7, 13, 14, 27, 28, 56, 57, 112, 224] if not quick else [7, 9, 13, 14, 17]))
    if kind == "stem" and not quick:
        side = int(rng.choice([112, 160, 224, 256]))
    sp = (
        (side * int(rng.choice([8, 16, 32])),)
        if one_d
        else (side, int(max(k, side * rng.choice([1, 1, 1, 0.75, 1.5]))))
    )
    outs = [(s + 2 * pad - dil * (k - 1) - 1) // st + 1 for s in sp]
    per_item = 2 * m * math.prod(outs) * (c // g) * k ** len(sp)
    per_bytes = c * math.prod(sp) + 4 * m * math.prod(outs)
    if quick:
        n = 1
    elif kind == "depthwise":
        n = max(1, min(64, round(_loguniform(rng, 4 << 20, 64 << 20) / per_bytes)))
    else:
        n = max(1, min(64, round(_loguniform(rng, 2e8, 2e10) / per_item)))
        n = max(1, min(n, (512 << 20) // per_bytes))  # few operations an output (1x1, grouped): bytes cap it
    xt, wt = (str(rng.choice(["uint8", "int8"])) for _ in range(2))
    if rng.random() < 0.5:
        xt, wt = "uint8", "int8"  # the common quantized mix, half the time
    zp = str(rng.choice(["per-channel", "per-channel", "per-tensor", "none"]))
    xs = (n, c) + sp
    cfg = _conv_config(
        f"random-{kind}", xs, m, (k,) * len(sp), g, (st,) * len(sp), (dil,) * len(sp), (pad,) * len(sp), xt, wt, zp
    )
    return Case("convolution_integer", cfg, ("random",))


def random_grid(n: int, seed: int, quick: bool, ops=OPS) -> list[Case]:
    """``n`` random rows per operator, drawn from ``seed`` (the same rows for the same seed): shapes,
    types, layouts, scales and layers the grid does not list, sized like the grid's rows."""
    rng = np.random.default_rng(seed)
    cases = []
    for op in OPS:  # every operator's rows drawn, then those asked for kept: --op does not change them
        for _ in range(n):
            if op in ("depth_to_space", "space_to_depth"):
                cases.append(_random_depth_space(op, rng, quick))
            elif op == "resample":
                cases.append(_random_resample(rng, quick))
            else:
                cases.append(_random_conv(rng, quick))
    return [c for c in cases if c.op in ops]


def smoke_grid() -> list[Case]:
    """A few quick rows, one of each kind (CI: seconds on lavapipe)."""
    q = grid(True)
    pick = []
    for op in OPS:
        rows = [c for c in q if c.op == op]
        pick += rows[:1]
        pick += [c for c in rows if c.config.get("input_layout") not in (None, "packed")][:1]
    pick += [c for c in q if c.op == "resample" and c.config["mode"] == "linear"][:1]
    pick += [c for c in q if "antialias" in c.marks][:1]
    return pick


# ------------------------------------------------------------------------------------------------
# Measuring one row
# ------------------------------------------------------------------------------------------------
class Ctx:
    """What every row's measurement shares: device, bench, peers, options, a seeded generator."""

    def __init__(self, device, bench, torch, ort, args):
        self.device, self.bench, self.torch, self.ort, self.args = device, bench, torch, ort, args
        self.rng = np.random.default_rng(2026)
        self.e2e_reps = 1  # the one-liner's pipelines are cached by then: one run is its steady-state time
        self.kernel = None  # --kernel: the path requested by name for the rows of this pass
        self.peers = not getattr(args, "kernel", None)  # a kernel comparison times our paths only

    def compile_kwargs(self) -> dict:
        return {"kernel": self.kernel} if self.kernel else {}


def _values(dt: DataType, shape, rng) -> np.ndarray:
    if dt.numpy_dtype.kind == "f":
        return rng.standard_normal(shape).astype(dt.numpy_dtype)
    info = np.iinfo(dt.numpy_dtype)
    return rng.integers(max(info.min, -(1 << 30)), min(info.max, 1 << 30), size=shape, endpoint=True).astype(
        dt.numpy_dtype
    )


def _upload(device, desc: TensorDesc, raw: np.ndarray) -> GpuTensor:
    buf = device.create_buffer(max(16, len(raw)), "sweep.in")
    device.write(buf, 0, np.ascontiguousarray(raw, dtype=np.uint8))
    return GpuTensor(device, desc, buf, 0)


def _in_bytes(desc: TensorDesc) -> int:
    """Distinct input bytes (a broadcast input reads fewer than its logical size)."""
    return min(desc.total_tensor_size_in_bytes, desc.implied_size_in_bytes)


def measure(case: Case, ctx: Ctx) -> dict:
    """Run, time and check one row; returns the JSON row."""
    fn = {
        "depth_to_space": _measure_depth_space,
        "space_to_depth": _measure_depth_space,
        "resample": _measure_resample,
        "convolution_integer": _measure_conv,
    }[case.op]
    return fn(case, ctx)


def _finish_row(case, ctx, op, run, got, want, *, linear=False, fallback_bytes, fallback_ops=None) -> dict:
    """Time ``run``, compare ``got()`` with ``want``, fill the roofline columns."""
    kernel, moved, ops = plan_facts(op, bytes_moved=fallback_bytes, ops=fallback_ops)
    ns, roof = ctx.bench.paired_ns(run, moved, ops)
    ok, note = compare(got(), want, linear=linear)
    row = dict(
        op=case.op,
        config=case.config,
        kernel=kernel,
        gpu_ms=ns / 1e6,
        bytes_moved=moved,
        pct_of_roofline=100 * roof / ns,
        exact=ok,
        check=note,
    )
    if ops is not None:
        row["ops"] = ops
        tops = ctx.bench.dp4a_tops()
        row["roofline"] = "dp4a" if tops and ops / (tops * 1e3) >= ctx.bench.copy_ns(moved) else "copy"
    if case.marks:
        row["marks"] = list(case.marks)
    return row


@contextlib.contextmanager
def _peer(row: dict, name: str):
    """A peer's columns: a failure there is noted in the row (``<name>_note``), never fatal."""
    try:
        yield
    except Exception as e:
        row[f"{name}_note"] = f"{name} failed: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"


def _torch_cols(ctx, row, fn, peer: str) -> None:
    if ctx.torch is None or fn is None:
        return
    try:
        tns = torch_time_ns(fn, reps=ctx.args.reps)
    except Exception as e:  # a dtype or shape torch cannot run: say so in the row
        row["torch_peer"] = f"{peer}: failed ({str(e).splitlines()[0][:80]})"
        return
    row["torch_peer"] = peer
    row["torch_ms"] = tns / 1e6
    row["vs_torch"] = tns / 1e6 / row["gpu_ms"]


def _ort_cols(ctx, row, model_fn, feeds, ours, *, linear=False) -> None:
    if ctx.ort is None or model_fn is None:
        return
    try:
        model = model_fn()
    except Exception as e:
        row["ort_note"] = f"no ONNX model: {e}"
        return
    row.update(ort_columns(ctx.ort.measure(model, feeds, reps=ctx.args.reps), ours, linear=linear))
    if row.get("ort_ms") is not None:
        row["vs_ort"] = row["ort_ms"] / row["gpu_ms"]


def _measure_depth_space(case: Case, ctx: Ctx) -> dict:
    from dmlwgsl.ops.depth_to_space import DepthToSpaceDesc, compile_depth_to_space
    from dmlwgsl.ops.space_to_depth import SpaceToDepthDesc, compile_space_to_depth
    from dmlwgsl.reference.depth_to_space import depth_to_space as ref_d2s
    from dmlwgsl.reference.space_to_depth import space_to_depth as ref_s2d

    c, dev = case.config, ctx.device
    dt = DataType.parse(c["dtype"])
    b, order = c["block_size"], c["order"]
    ind = strided_desc(dt, c["input_shape"], c["input_layout"])
    outd = strided_desc(dt, c["output_shape"], c["output_layout"], output=True)
    raw = random_bytes(ind, ctx.rng)
    x = read_tensor(raw, ind)
    d2s = case.op == "depth_to_space"
    want = ref_d2s(x, b, order) if d2s else ref_s2d(x, b, order)
    ctx.bench.copy_gbps((_in_bytes(ind) + outd.implied_size_in_bytes) // 2)  # before the op's buffers exist
    xt = _upload(dev, ind, raw)
    yt = dev.tensor(outd, label="sweep.out")
    desc = (DepthToSpaceDesc if d2s else SpaceToDepthDesc)(ind, outd, b, order)
    op = (compile_depth_to_space if d2s else compile_space_to_depth)(desc, device=dev, **ctx.compile_kwargs())
    row = _finish_row(
        case,
        ctx,
        op,
        lambda: op(xt, yt),
        yt.numpy,
        want,
        fallback_bytes=_in_bytes(ind) + outd.implied_size_in_bytes,
    )
    xt.buffer.destroy()
    yt.buffer.destroy()
    if not ctx.peers:
        return row
    one_liner = dmlwgsl.depth_to_space if d2s else dmlwgsl.space_to_depth
    row["numpy_e2e_ms"] = wall_ms(lambda: one_liner(x, b, order=order, device=dev), reps=ctx.e2e_reps)
    tname = dt.numpy_dtype.name
    with _peer(row, "torch"):
        if ctx.torch is not None and hasattr(ctx.torch, tname):
            tx = ctx.torch.zeros(tuple(c["input_shape"]), dtype=getattr(ctx.torch, tname), device="cuda")
            peer = ("pixel_shuffle" if d2s else "pixel_unshuffle") if order == "CRD" else "view+permute+contiguous"
            _torch_cols(ctx, row, torch_depth_space_fn(ctx.torch, case.op, tx, b, order), peer)
            del tx
    if (c["input_layout"], c["output_layout"]) == ("packed", "packed") and (d2s or order == "DCR"):
        attrs = {"blocksize": b, **({"mode": order} if d2s else {})}
        onnx_op = "DepthToSpace" if d2s else "SpaceToDepth"
        model_fn = lambda: onnx_model(  # noqa: E731
            onnx_op, [("x", x.dtype, x.shape)], ("y", x.dtype, want.shape), attrs, opset=13
        )
        with _peer(row, "ort"):
            _ort_cols(ctx, row, model_fn, {"x": np.ascontiguousarray(x)}, want)
    return row


def _measure_resample(case: Case, ctx: Ctx) -> dict:
    from dmlwgsl.ops import resample as rs
    from dmlwgsl.reference import resample as ref

    c, dev = case.config, ctx.device
    dt = DataType.parse(c["dtype"])
    shape, out_shape, scales = tuple(c["input_shape"]), tuple(c["output_shape"]), tuple(c["scales"])
    r = len(shape)
    io, oo = (0.5,) * r, (-0.5,) * r
    ind = strided_desc(dt, shape, c["input_layout"])
    outd = TensorDesc(dt, out_shape)
    x = _values(dt, shape, ctx.rng)
    mode = rs.InterpolationMode.parse(c["mode"])
    if c.get("antialias"):
        desc3 = getattr(rs, "Resample3Desc", None)
        ref_aa = getattr(ref, "resample_antialias", None)
        if desc3 is None or ref_aa is None:
            raise _Unavailable("Resample3 (antialias) is not in this build of dmlwgsl")
        desc = desc3(ind, outd, mode, rs.AxisDirection.DECREASING, scales, io, oo, True)
        want = ref_aa(x, out_shape, scales, io, oo)
    else:
        desc = rs.Resample1Desc(ind, outd, mode, scales, io, oo)
        want = ref.resample(x, out_shape, c["mode"], scales, io, oo, "half_up")
    raw = tensor_bytes(ind, x)
    ctx.bench.copy_gbps((ind.implied_size_in_bytes + outd.implied_size_in_bytes) // 2)
    xt = _upload(dev, ind, raw)
    yt = dev.tensor(outd, label="sweep.out")
    op = rs.compile_resample(desc, device=dev, **ctx.compile_kwargs())
    row = _finish_row(
        case,
        ctx,
        op,
        lambda: op(xt, yt),
        yt.numpy,
        want,
        linear=c["mode"] == "linear",
        fallback_bytes=ind.implied_size_in_bytes + outd.implied_size_in_bytes,
    )
    xt.buffer.destroy()
    yt.buffer.destroy()
    if not ctx.peers:
        return row
    kw = {"antialias": True} if c.get("antialias") else {}
    row["numpy_e2e_ms"] = wall_ms(
        lambda: dmlwgsl.resample(x, out_shape, mode=c["mode"], scales=scales, device=dev, **kw), reps=ctx.e2e_reps
    )
    with _peer(row, "torch"):
        _torch_cols(ctx, row, *_torch_resample(ctx.torch, x, c))
    aa = {"antialias": 1} if c.get("antialias") else {}
    attrs = {"mode": c["mode"], "coordinate_transformation_mode": "half_pixel", **aa}
    if c["mode"] == "nearest":
        attrs["nearest_mode"] = "round_prefer_ceil"  # Resample1's floor(x + 0.5)
    sc = np.asarray(scales, np.float32)
    model_fn = lambda: onnx_model(  # noqa: E731
        "Resize",
        [("x", x.dtype, x.shape), "", ("scales", np.float32, sc.shape)],
        ("y", x.dtype, out_shape),
        attrs,
        initializers=[("scales", sc)],
    )
    with _peer(row, "ort"):
        _ort_cols(ctx, row, model_fn, {"x": np.ascontiguousarray(x)}, want, linear=c["mode"] == "linear")
    return row


def _torch_resample(torch, x: np.ndarray, c: dict):
    """(fn, peer name) of F.interpolate with the same coordinates (half-pixel; nearest-exact is
    floor(x + 0.5)), on a view whose trailing 1-3 spatial axes are the resampled ones; (None, ..)
    where torch cannot express the row."""
    if torch is None:
        return None, ""
    axes, r = c["axes"], x.ndim
    if not axes:
        return None, ""
    # torch resamples the trailing 1-3 axes of (N, C, *spatial): take as spatial the axes from the
    # first resampled one (or the last two of a rank-4 tensor, which torch runs fastest as (N, C, H, W));
    # an unresampled spatial axis gets scale 1, which half-pixel coordinates map onto itself.
    start = min(min(axes), max(r - 2, 0))
    k = r - start
    if k > 3:
        return None, ""
    lead = x.shape[:start]
    nc = lead if len(lead) == 2 else ((1,) + lead if len(lead) == 1 else (1, 1))
    F = torch.nn.functional
    tx = torch.from_numpy(np.ascontiguousarray(x)).cuda().reshape(nc + x.shape[start:])
    axes = list(range(start, r))
    sf = tuple(c["scales"][d] for d in axes)
    if c["mode"] == "nearest":
        mode = "nearest-exact"
    else:
        mode = {1: "linear", 2: "bilinear", 3: "trilinear"}[k]
    kw = {} if c["mode"] == "nearest" else {"align_corners": False}
    if c.get("antialias"):
        if k != 2:
            return None, ""
        kw["antialias"] = True
    name = f"F.interpolate({mode}{', antialias' if c.get('antialias') else ''})"
    return (lambda: F.interpolate(tx, scale_factor=sf, mode=mode, recompute_scale_factor=False, **kw)), name


@dataclass
class ConvCase:
    """A ConvolutionInteger row's description and random data (zero points: x's 0-d, w's flat)."""

    desc: object
    x: np.ndarray
    w: np.ndarray
    xz: np.ndarray | None
    wz: np.ndarray | None
    kw: dict

    def upload(self, dev) -> list:
        """(input, filter, output, input zero point, filter zero point) as GPU tensors."""
        d = self.desc
        return [
            dev.upload(self.x),
            dev.upload(self.w),
            dev.tensor(d.output),
            dev.upload(self.xz.reshape(d.input_zero_point.sizes)) if self.xz is not None else None,
            dev.upload(self.wz.reshape(d.filter_zero_point.sizes)) if self.wz is not None else None,
        ]


def conv_case(c: dict, rng) -> ConvCase:
    """The description and seeded data of a ConvolutionInteger grid row ``c`` (its config)."""
    from dmlwgsl.ops.convolution_integer import ConvolutionIntegerDesc

    xt_, wt_ = DataType.parse(c["dtype"]), DataType.parse(c["filter_dtype"])
    xs, ws, m, g = tuple(c["input_shape"]), tuple(c["filter_shape"]), c["filter_shape"][0], c["group_count"]
    nd = len(xs) - 2
    x = _values(xt_, xs, rng)
    w = _values(wt_, ws, rng)
    pads = tuple(c["pads"][:nd])
    xz = wz = None
    if c["zero_points"] != "none":
        xz = np.array(7 if xt_ == DataType.UINT8 else -3, dtype=xt_.numpy_dtype)
        wz = _values(wt_, (m,) if c["zero_points"] == "per-channel" else (1,), rng)
    kw = dict(strides=tuple(c["strides"]), dilations=tuple(c["dilations"]), start_padding=pads, end_padding=pads)
    one = (1,) * len(xs)
    zshape = list(one)
    zshape[1] = m
    xzd = TensorDesc(xt_, one) if xz is not None else None
    wzd = TensorDesc(wt_, tuple(zshape) if c["zero_points"] == "per-channel" else one) if wz is not None else None
    out = TensorDesc(DataType.INT32, tuple(c["output_shape"]))
    desc = ConvolutionIntegerDesc(TensorDesc(xt_, xs), TensorDesc(wt_, ws), out, xzd, wzd, group_count=g, **kw)
    return ConvCase(desc, x, w, xz, wz, kw)


def _measure_conv(case: Case, ctx: Ctx) -> dict:
    from dmlwgsl.ops.convolution_integer import compile_convolution_integer
    from dmlwgsl.reference.convolution_integer import convolution_integer as reference

    c, dev = case.config, ctx.device
    cc = conv_case(c, ctx.rng)
    desc, x, w, xz, wz, kw = cc.desc, cc.x, cc.w, cc.xz, cc.wz, cc.kw
    g, xs, ws = c["group_count"], tuple(c["input_shape"]), tuple(c["filter_shape"])
    want = _exact_conv(ctx.torch, x, w, xz, wz, g, kw) if ctx.torch is not None else None
    if want is None:
        want = reference(x, w, xz, wz, group_count=g, **kw)
    fallback_ops = 2 * int(np.prod(want.shape)) * int(np.prod(ws[1:]))
    fallback_bytes = x.nbytes + w.nbytes + 4 * want.size + (wz.nbytes if wz is not None else 0)
    ctx.bench.copy_gbps(fallback_bytes // 2)
    xg, wg, out, xzg, wzg = cc.upload(dev)
    op = compile_convolution_integer(desc, device=dev, **ctx.compile_kwargs())
    row = _finish_row(
        case,
        ctx,
        op,
        lambda: op(xg, wg, out, xzg, wzg),
        out.numpy,
        want,
        fallback_bytes=fallback_bytes,
        fallback_ops=fallback_ops,
    )
    for t in (xg, wg, xzg, wzg, out):
        if t is not None:
            t.buffer.destroy()
    if not ctx.peers:
        return row
    zp = dict(
        x_zero_point=None if xz is None else int(xz),
        w_zero_point=None if wz is None else (wz if wz.size > 1 else int(wz[0])),
    )
    row["numpy_e2e_ms"] = wall_ms(
        lambda: dmlwgsl.convolution_integer(x, w, group_count=g, device=dev, **zp, **kw), reps=ctx.e2e_reps
    )
    with _peer(row, "torch"):
        _torch_cols(ctx, row, *_torch_conv(ctx.torch, c, want.shape))
    if c["zero_points"] != "per-channel":  # ORT's ConvInteger takes a per-tensor filter zero point only
        names = [("x", x.dtype, xs), ("w", w.dtype, ws)]
        inits = [("w", w)]
        if xz is not None:
            names += [("xz", x.dtype, ()), ("wz", w.dtype, ())]
            inits += [("xz", xz), ("wz", wz.reshape(()))]
        pads = list(kw["start_padding"]) * 2
        attrs = dict(group=g, strides=list(c["strides"]), dilations=list(c["dilations"]), pads=pads)
        model_fn = lambda: onnx_model(  # noqa: E731
            "ConvInteger", names, ("y", np.int32, want.shape), attrs, opset=10, initializers=inits
        )
        with _peer(row, "ort"):
            _ort_cols(ctx, row, model_fn, {"x": x}, want)
    elif ctx.ort is not None:
        row["ort_note"] = "ORT ConvInteger: per-channel filter zero point not supported"
    return row


def _exact_conv(torch, x, w, xz, wz, g, kw):
    """The exact int32 result from a float64 convolution on CUDA (every sum < 2^53: exact)."""
    nd = x.ndim - 2
    xf = x.astype(np.float64) - (0 if xz is None else float(xz))
    wf = w.astype(np.float64) - (0 if wz is None else wz.astype(np.float64).reshape((-1,) + (1,) * (w.ndim - 1)))
    # Padding holds the input zero point, i.e. 0 after subtracting it: torch's zero padding.
    conv = torch.nn.functional.conv2d if nd == 2 else torch.nn.functional.conv1d
    y = conv(
        torch.from_numpy(xf).cuda(),
        torch.from_numpy(np.ascontiguousarray(wf)).cuda(),
        stride=kw["strides"],
        padding=kw["start_padding"],
        dilation=kw["dilations"],
        groups=g,
    )
    return y.cpu().numpy().astype(np.int64).astype(np.int32)


def _torch_conv(torch, c: dict, out_shape):
    """torch._int_mm on the im2col GEMM for dense layers (GEMM only, im2col not counted); fp16
    conv2d/conv1d (cuDNN) for grouped, depthwise and stem layers, and where _int_mm cannot run."""
    if torch is None:
        return None, ""
    xs, ws, g = c["input_shape"], c["filter_shape"], c["group_count"]
    nd = len(xs) - 2
    rows = int(np.prod([out_shape[0]] + list(out_shape[2:])))
    kdim = int(np.prod(ws[1:]))
    if g == 1 and xs[1] >= 16 and rows > 16 and kdim % 8 == 0 and ws[0] % 8 == 0:
        a = torch.randint(-128, 128, (rows, kdim), dtype=torch.int8, device="cuda")
        b = torch.randint(-128, 128, (kdim, ws[0]), dtype=torch.int8, device="cuda")
        return (lambda: torch._int_mm(a, b)), "torch._int_mm (im2col GEMM)"
    xf = torch.randn(tuple(xs), dtype=torch.float16, device="cuda")
    wf = torch.randn(tuple(ws), dtype=torch.float16, device="cuda")
    conv = torch.nn.functional.conv2d if nd == 2 else torch.nn.functional.conv1d
    pads = tuple(c["pads"][:nd])
    return (
        lambda: conv(xf, wf, stride=tuple(c["strides"]), padding=pads, dilation=tuple(c["dilations"]), groups=g)
    ), f"F.conv{nd}d fp16"


class _Unavailable(Exception):
    """A row this build cannot run (e.g. Resample3 absent): reported, not counted as measured."""


# ------------------------------------------------------------------------------------------------
# Summary, table, main
# ------------------------------------------------------------------------------------------------
def summary(rows: list[dict]) -> dict:
    """Worst row and geometric mean of % of roofline (per op and overall), rows slower than torch."""
    out: dict = {}
    for op in [None] + list(OPS):
        sel = [r for r in rows if (op is None or r["op"] == op) and r.get("pct_of_roofline")]
        if not sel:
            continue
        worst = min(sel, key=lambda r: r["pct_of_roofline"])
        gm = math.exp(sum(math.log(r["pct_of_roofline"]) for r in sel) / len(sel))
        out[op or "all"] = {
            "rows": len(sel),
            "geomean_pct": gm,
            "worst_pct": worst["pct_of_roofline"],
            "worst_row": f"{worst['op']} {Case(worst['op'], worst['config']).label}",
        }
    out["slower_than_torch"] = [
        f"{r['op']} {Case(r['op'], r['config']).label}: {r['gpu_ms']:.4f} ms vs {r['torch_ms']:.4f} ms "
        f"({r['torch_peer']})"
        for r in rows
        if r.get("vs_torch") is not None and r["vs_torch"] < 1
    ]
    out["inexact"] = [f"{r['op']} {Case(r['op'], r['config']).label}: {r['check']}" for r in rows if not r["exact"]]
    return out


def print_rows(rows: list[dict], adapter: str, clock: str) -> None:
    """The sweep's table on stdout."""
    print(f"\nsweep on {adapter}; clock: {clock}")
    head = [
        "op",
        "row",
        "kernel",
        "time",
        "% roof",
        "exact",
        "torch",
        "vs torch",
        "numpy e2e",
        "ort",
        "vs ort",
        "ort nodes",
    ]
    lines = [head]
    for r in rows:
        lines.append(
            [
                r["op"],
                Case(r["op"], r["config"], tuple(r.get("marks", ()))).label,
                r["kernel"],
                fmt_time(r["gpu_ms"]),
                f"{r['pct_of_roofline']:.1f}%",
                "yes" if r["exact"] else "NO",
                fmt_time(r.get("torch_ms")),
                f"{r['vs_torch']:.2f}x" if r.get("vs_torch") else "",
                fmt_time(r.get("numpy_e2e_ms")),
                fmt_time(r["ort_ms"]) if r.get("ort_ms") is not None else (r.get("ort_note") or "")[:30],
                f"{r['vs_ort']:.2f}x" if r.get("vs_ort") else "",
                r.get("ort_nodes", ""),
            ]
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    for line in lines:
        print("  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip())


def parser():
    """Command-line options."""
    p = bench_parser("dmlwgsl bench sweep", __doc__.splitlines()[0], reps=10, json_path=True)
    p.add_argument("--op", action="append", choices=OPS, help="only this operator (repeatable)")
    p.add_argument("--smoke", action="store_true", help="a few quick rows, one of each kind (CI)")
    p.add_argument(
        "--random",
        type=int,
        metavar="N",
        help="instead of the grid, N random rows per operator off the grid (shapes, types, layouts, scales, "
        "layers; sized like the grid's rows, shrunk with --quick)",
    )
    p.add_argument("--seed", type=int, default=1, help="the seed of --random's rows (default 1)")
    p.add_argument("--filter", action="append", help="only rows whose label contains TEXT (repeatable: any of them)")
    p.add_argument("--max-rows", type=int, help="stop after N rows")
    p.add_argument(
        "--kernel",
        action="append",
        metavar="NAME",
        help="compare paths: time every row once per named path (compile_*'s kernel=, 'auto' = the plan's "
        "choice), ours only (no peers, no one-liner); a path that cannot run a row is noted (repeatable)",
    )
    p.add_argument("--list", action="store_true", help="print the grid's rows and exit (no GPU)")
    p.add_argument(
        "--from-json", metavar="PATH", help="no GPU: print the table, summary and --plot of a saved --json run"
    )
    return p


def main(argv=None) -> int:
    """Run the sweep; exit 1 on an inexact row."""
    args = parser().parse_args(argv)
    ops = tuple(args.op or OPS)
    if args.smoke:
        cases = smoke_grid()
    elif args.random:
        cases = random_grid(args.random, args.seed, args.quick, ops)
    else:
        cases = grid(args.quick, ops)
    cases = [c for c in cases if c.op in ops]
    if args.filter:
        cases = [c for c in cases if any(f in f"{c.op} {c.label}" for f in args.filter)]
    if args.max_rows:
        cases = cases[: args.max_rows]
    if args.from_json:
        return _replay(args)
    if args.list:
        for c in cases:
            print(f"{c.op:20s} {c.label}")
        print(f"{len(cases)} rows")
        return 0
    device = open_device(args)
    bench = Bench(device, reps=args.reps, warmup=2)
    notes = []
    if args.kernel:
        args.no_ort = True  # a path comparison times ours only (torch stays: its CUDA context holds the clocks)
    torch, ort = open_peers(device, args, notes)
    ctx = Ctx(device, bench, torch, ort, args)
    prog = Progress(len(cases), "sweep", quiet=args.quiet)
    for n in notes:
        prog.note(n)
    rows = []
    kernels = args.kernel or [None]
    if args.kernel:
        prog = Progress(len(cases) * len(kernels), "sweep", quiet=args.quiet)
    for case, kernel in ((c, k) for c in cases for k in kernels):
        ctx.kernel = None if kernel == "auto" else kernel
        try:
            row = measure(case, ctx)
        except (_Unavailable, PlanError, AllocationError) as e:
            prog.step(f"{case.op} {case.label}: not run: {e}")
            if not args.kernel:
                notes.append(f"not run: {case.op} {case.label}: {e}")
            continue
        if kernel:
            row["requested_kernel"] = kernel
        row["adapter"] = device.name
        row["driver"] = device.driver
        rows.append(row)
        if args.json and args.json != "-":  # written after every row: a run cut short keeps its rows
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1, default=_jsonable)
        prog.step(
            f"{case.op} {case.label}: {fmt_time(row['gpu_ms'])} {row['pct_of_roofline']:.1f}% "
            f"{'exact' if row['exact'] else 'INEXACT'}"
        )
    return report(rows, args, device.name, bench.clock, notes + bench_notes(bench))


def report(rows: list[dict], args, adapter: str, clock: str, notes=()) -> int:
    """Table (or JSON), summary, notes and plot of a run; the exit status (1 on an inexact row)."""
    summ = summary(rows)
    if args.json == "-":
        print(json.dumps(rows, indent=1, default=_jsonable))
    else:
        print_rows(rows, adapter, clock)
        if args.json and not args.from_json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1, default=_jsonable)
    out = sys.stderr if args.json == "-" else sys.stdout
    print(f"\nsummary ({adapter}):", file=out)
    for k, v in summ.items():
        if isinstance(v, dict):
            print(
                f"  {k}: {v['rows']} rows, geometric mean {v['geomean_pct']:.1f}% of roofline, "
                f"worst {v['worst_pct']:.1f}% ({v['worst_row']})",
                file=out,
            )
    print(f"  slower than torch: {len(summ['slower_than_torch'])}", file=out)
    for s in summ["slower_than_torch"]:
        print(f"    {s}", file=out)
    for n in notes:
        print(n, file=out)
    if args.plot:
        plot_rows(
            [Case(r["op"], r["config"]).label for r in rows],
            [r["pct_of_roofline"] for r in rows],
            [r["op"] for r in rows],
            args.plot,
            title=f"dmlwgsl sweep: % of the in-run roofline\n{adapter}",
        )
        print(f"plot: {args.plot}", file=out)
    for s in summ["inexact"]:
        print(f"INEXACT: {s}", file=sys.stderr)
    return 1 if summ["inexact"] else 0


def _replay(args) -> int:
    with open(args.from_json) as f:
        doc = json.load(f)
    rows = doc["rows"] if isinstance(doc, dict) else doc
    adapter = doc.get("adapter", "?") if isinstance(doc, dict) else (rows[0].get("adapter", "?") if rows else "?")
    return report(rows, args, adapter, "gpu-timestamps (saved run)")


def _jsonable(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return str(v)


if __name__ == "__main__":
    sys.exit(main())

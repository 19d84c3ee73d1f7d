"""The cases behind ``dmlwgsl check``: every implemented operator x data type x a few shapes on one
adapter, each run under poison and guard bands (:func:`dmlwgsl.testing.run_checked`) and compared
with the numpy reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from .reference.tensors import read_tensor, tensor_bytes
from .runtime import Device
from .tensor import DataType, TensorDesc
from .testing import random_bytes, run_checked, strided_desc


class Skipped(Exception):
    """A case this adapter cannot run; the message is the reason (``dmlwgsl check`` counts it apart)."""


@dataclass
class Case:
    """One check: ``run(device)`` raises AssertionError on a mismatch, :class:`Skipped` (with the
    reason) where the adapter cannot run the case."""

    op: str
    dtype: str
    name: str
    run: Callable[[Device], None]


#: The WGSL language feature the ConvolutionInteger dot4 kernel needs.
DOT4_FEATURE = "packed_4x8_integer_dot_product"


def _depth_space_cases() -> Iterator[Case]:
    from .ops.depth_to_space import DEPTH_SPACE_TYPES, DepthToSpaceDesc, compile_depth_to_space
    from .ops.space_to_depth import SpaceToDepthDesc, compile_space_to_depth
    from .reference.depth_to_space import depth_to_space as ref_d2s
    from .reference.space_to_depth import space_to_depth as ref_s2d

    shapes = {  # (input shape, block, input layout, output layout)
        "depth_to_space": [((2, 8, 4, 32), 2, "packed", "packed"), ((1, 18, 3, 5), 3, "nhwc", "window")],
        "space_to_depth": [((2, 2, 8, 64), 2, "packed", "packed"), ((1, 2, 6, 9), 3, "padded", "nhwc")],
    }
    for op, compile_fn, desc_cls, ref in (
        ("depth_to_space", compile_depth_to_space, DepthToSpaceDesc, ref_d2s),
        ("space_to_depth", compile_space_to_depth, SpaceToDepthDesc, ref_s2d),
    ):
        for dt in sorted(DEPTH_SPACE_TYPES, key=int):
            for shape, b, lin, lout in shapes[op]:
                for order in ("DCR", "CRD"):

                    def run(
                        device,
                        dt=dt,
                        shape=shape,
                        b=b,
                        lin=lin,
                        lout=lout,
                        order=order,
                        op=op,
                        compile_fn=compile_fn,
                        desc_cls=desc_cls,
                        ref=ref,
                    ):
                        n, c, h, w = shape
                        out_shape = (
                            (n, c // (b * b), h * b, w * b)
                            if op == "depth_to_space"
                            else (n, c * b * b, h // b, w // b)
                        )
                        ind, outd = strided_desc(dt, shape, lin), strided_desc(dt, out_shape, lout, output=True)
                        raw = random_bytes(ind, np.random.default_rng(1))
                        k = compile_fn(desc_cls(ind, outd, b, order), device=device)
                        run_checked(
                            device,
                            lambda ins, out: k(ins["input"], out),
                            {"input": (ind, raw)},
                            outd,
                            ref(read_tensor(raw, ind), b, order),
                        )

                    yield Case(op, dt.name.lower(), f"{'x'.join(map(str, shape))} b{b} {order} {lin}->{lout}", run)


def _convolution_cases() -> Iterator[Case]:
    from .ops.convolution_integer import ConvolutionIntegerDesc, compile_convolution_integer
    from .plan import Capabilities
    from .reference.convolution_integer import convolution_integer as ref

    geoms = [  # (x shape, w shape, strides, dilations, start pad, end pad, groups, per-channel filter zp)
        ((2, 16, 9, 9), (16, 16, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1, True),
        ((1, 6, 7, 8), (6, 2, 3, 2), (2, 1), (1, 2), (2, 0), (1, 1), 3, False),
        ((1, 8, 10, 11), (8, 1, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 8, True),  # depthwise
        ((1, 3, 19, 17), (8, 3, 7, 7), (2, 2), (1, 1), (3, 3), (3, 3), 1, True),  # a C=3 7x7 stride-2 stem
    ]
    #: Every kernel the plan can choose, each requested by name; those on the packed 4x8 dot product
    #: are skipped (with the reason) where the adapter lacks it.
    kernels = ("portable", "direct", "dot4", "direct_dot4", "dot4_im2col", "dot4_window")
    for xt in (DataType.UINT8, DataType.INT8):
        for wt in (DataType.UINT8, DataType.INT8):
            for gi, (xs, ws, st, dil, sp, ep, g, per_ch) in enumerate(geoms):
                for kernel in kernels:

                    def run(
                        device,
                        xt=xt,
                        wt=wt,
                        xs=xs,
                        ws=ws,
                        st=st,
                        dil=dil,
                        sp=sp,
                        ep=ep,
                        g=g,
                        per_ch=per_ch,
                        kernel=kernel,
                    ):
                        if "dot4" in kernel and not Capabilities.from_device(device).has(DOT4_FEATURE):
                            raise Skipped(f"{kernel} kernel: the adapter lacks the WGSL feature {DOT4_FEATURE}")
                        rng = np.random.default_rng(2)
                        xd, wd = TensorDesc(xt, xs), TensorDesc(wt, ws)
                        xr, wr = random_bytes(xd, rng), random_bytes(wd, rng)
                        x, w = read_tensor(xr, xd), read_tensor(wr, wd)
                        m = ws[0]
                        xz = np.array([7 if xt == DataType.UINT8 else -3], dtype=xt.numpy_dtype)
                        wz = rng.integers(0, 100, size=m if per_ch else 1).astype(wt.numpy_dtype)
                        xzd = TensorDesc(xt, (1, 1, 1, 1))
                        wzd = TensorDesc(wt, (1, m, 1, 1) if per_ch else (1, 1, 1, 1))
                        want = ref(
                            x, w, xz, wz, strides=st, dilations=dil, start_padding=sp, end_padding=ep, group_count=g
                        )
                        outd = TensorDesc(DataType.INT32, want.shape)
                        desc = ConvolutionIntegerDesc(xd, wd, outd, xzd, wzd, st, dil, sp, ep, g)
                        k = compile_convolution_integer(desc, device=device, kernel=kernel)
                        ins = {
                            "input": (xd, xr),
                            "filter": (wd, wr),
                            "input_zero_point": (xzd, tensor_bytes(xzd, xz)),
                            "filter_zero_point": (wzd, tensor_bytes(wzd, wz)),
                        }
                        run_checked(
                            device,
                            lambda t, out: k(
                                t["input"], t["filter"], out, t["input_zero_point"], t["filter_zero_point"]
                            ),
                            ins,
                            outd,
                            want,
                        )

                    yield Case(
                        "convolution_integer", f"{xt.name.lower()}x{wt.name.lower()}", f"geometry {gi} {kernel}", run
                    )


def _resample_cases() -> Iterator[Case]:
    from .ops.resample import (
        LINEAR_TOLERANCE,
        RESAMPLE_TYPES,
        AxisDirection,
        InterpolationMode,
        Resample1Desc,
        Resample2Desc,
        compile_resample,
    )
    from .reference.resample import resample as ref

    configs = [  # (in shape, out shape, mode, rounding direction or None, layout)
        ((2, 3, 8, 12), (2, 3, 16, 24), "nearest", None, "packed"),
        ((1, 2, 9, 7), (1, 2, 4, 11), "nearest", "increasing", "nhwc"),
        ((2, 3, 8, 12), (2, 3, 12, 18), "linear", None, "packed"),
        ((3, 10), (5, 7), "linear", None, "padded"),
    ]
    for dt in sorted(RESAMPLE_TYPES, key=int):
        for ci, (si, so, mode, rd, layout) in enumerate(configs):

            def run(device, dt=dt, si=si, so=so, mode=mode, rd=rd, layout=layout):
                rng = np.random.default_rng(3)
                ind = strided_desc(dt, si, layout)
                outd = TensorDesc(dt, so)
                if dt in (DataType.FLOAT32, DataType.FLOAT16):
                    x = rng.standard_normal(si).astype(dt.numpy_dtype)
                else:
                    x = rng.integers(np.iinfo(dt.numpy_dtype).min, np.iinfo(dt.numpy_dtype).max + 1, size=si).astype(
                        dt.numpy_dtype
                    )
                raw = tensor_bytes(ind, x)
                scales = tuple(o / i for o, i in zip(so, si))
                io, oo = (0.5,) * len(si), (-0.5,) * len(si)
                m = InterpolationMode.parse(mode)
                if rd is None:
                    desc, rule = Resample1Desc(ind, outd, m, scales, io, oo), "half_up"
                else:
                    desc = Resample2Desc(ind, outd, m, AxisDirection.parse(rd), scales, io, oo)
                    rule = desc.nearest_rule
                want = ref(x, so, mode, scales, io, oo, rule)
                k = compile_resample(desc, device=device)
                tol = {}
                if mode == "linear":
                    atol, why = LINEAR_TOLERANCE[dt]
                    tol = dict(atol=atol, why=why)
                run_checked(device, lambda ins, out: k(ins["input"], out), {"input": (ind, raw)}, outd, want, **tol)

            yield Case(
                "resample",
                dt.name.lower(),
                f"{'x'.join(map(str, si))}->{'x'.join(map(str, so))} {mode} {rd or 'resample1'} {layout}",
                run,
            )


#: Operator name -> generator of its cases.
OPERATORS: dict[str, Callable[[], Iterator[Case]]] = {
    "depth_to_space": lambda: (c for c in _depth_space_cases() if c.op == "depth_to_space"),
    "space_to_depth": lambda: (c for c in _depth_space_cases() if c.op == "space_to_depth"),
    "convolution_integer": _convolution_cases,
    "resample": _resample_cases,
}


def supported_types() -> dict[str, list[str]]:
    """Data types per operator (for ``dmlwgsl info`` and the README table)."""
    from .ops.convolution_integer import INTEGER_TYPES
    from .ops.depth_to_space import DEPTH_SPACE_TYPES
    from .ops.resample import RESAMPLE_TYPES

    names = lambda ts: [t.name for t in sorted(ts, key=int)]  # noqa: E731
    return {
        "depth_to_space (v0, 1)": names(DEPTH_SPACE_TYPES),
        "space_to_depth (v0, 1)": names(DEPTH_SPACE_TYPES),
        "convolution_integer": names(INTEGER_TYPES) + ["-> INT32"],
        "resample (v0, 1, 2)": names(RESAMPLE_TYPES),
    }

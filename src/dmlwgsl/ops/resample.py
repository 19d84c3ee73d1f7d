"""Resample (v0), Resample1 and Resample2 (spec section 4), plus the ONNX Resize bridge.

Coordinate contract (every dimension, batch and channel too, 1 to 4 dimensions):
    x = (OutputX - OutputPixelOffset) / Scale - InputPixelOffset        (float32, division)
Indices are clamped to [0, size - 1]: no constant fill, ever. Scales need not equal
output/input (the output is cropped, or its edges repeat the last input pixel).

Nearest-neighbour rounding:
  * Resample (v0) and Resample1: ``floor(x + 0.5)`` — halves round up. Resample v0 is Resample1
    with InputPixelOffsets 0.5 and OutputPixelOffsets -0.5.
  * Resample2: RoundingDirection DECREASING = ``floor(x)``, INCREASING = ``ceil(x)``.
Linear: per axis x0 = floor(x), x1 = x0 + 1 (both clamped), weight x - x0; the separable product
over the interpolated axes (up to 16 taps), in float32 for float32 and float16 tensors. INT8 and
UINT8 (feature level 6.2): nearest is exact; linear rounds the float32 result half to even and
saturates (DirectML does not document its rounding; this is our choice).

Documented contradictions about Resample/Resample1 nearest rounding (spec 4.3), kept in view
here because our choice of ``floor(x + 0.5)`` is the best-supported reading, not a certainty:
  (a) ORT's QueryResize comment says "DML's nearest neighbor mode uses half pixels rounded down";
  (b) the DML_RESAMPLE_GRAD page's example (2x2 -> 1x3, scales W 1.5, H 0.5) only matches ties
      rounded DOWN;
  (c) the RESAMPLE2 remark says Resample1 == Resample2 DECREASING with *Output*PixelOffsets
      adjusted by -0.5, which equals floor(x + 0.5) only for Scale 1 (probably a slip for Input).
Evidence for ties UP: ORT's RESAMPLE1-era code ("round-halves-up ... via floor(input.x + 0.5)")
and Chromium WebNN's DML output (4x6 -> 2x3 picks the bottom-right element of each 2x2 block).
The tie-case tests are marked DML-unconfirmed.

Indices equal the reference's on every adapter: the host computes per-axis tables (index, or
index pair and weights) with :mod:`dmlwgsl.reference.resample`'s own float32 arithmetic and the
shader only adds table entries.

Kernels (chosen by :func:`plan_resample`; ``dmlwgsl explain resample`` prints the choice): the row
walks (resample_rows, _half, _byte, _pat: an input row interpolated along W serves every output
row that uses it; with the batch or channel interpolated each of an output's 2 or 4 input planes
is walked beside the others, or in resample_rows_pat their windows are blended first, ROW_PLANES),
the reference kernels (resample_packed, _strided,
_atomic), and for channels-fastest inputs on a GPU either channel lanes (C_LANES: the row walk's
threads along the channels, where the planes do not grow) or resample_transpose (the input moved
to a packed workspace by a tile transpose first, where they grow). Resample3's antialiasing
filter has its own kernels (:mod:`dmlwgsl.ops._resample_antialias`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping

import numpy as np
import numpy.typing as npt

from .. import oneshot
from ..operator import Operator
from ..plan import ALIGNED, Capabilities, KernelStep, Placement, Plan, PlanError, placement_of, step
from ..reference import resample as ref
from ..runtime import Device, GpuTensor, default_device
from ..tensor import DataType, DmlEnum, DmlValidationError, TensorDesc, desc_for_array, integers
from ._permute import transpose_step

__all__ = [
    "InterpolationMode",
    "AxisDirection",
    "ResampleDesc",
    "Resample1Desc",
    "Resample2Desc",
    "Resample3Desc",
    "ResampleOperator",
    "plan_resample",
    "add_explain_arguments",
    "explain_plan",
    "KERNELS",
    "compile_resample",
    "resample",
    "OnnxResizeParams",
    "OnnxResizeUnsupported",
    "onnx_resize_to_resample",
    "RESAMPLE_TYPES",
    "LINEAR_TOLERANCE",
]

#: Data types of the Resample family at feature level 6.2 (spec 4.6).
RESAMPLE_TYPES = frozenset({DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8})
_DTYPE_CLASS = {DataType.FLOAT32: 0, DataType.FLOAT16: 1, DataType.INT8: 2, DataType.UINT8: 3}
RANKS = frozenset({1, 2, 3, 4})
#: Accuracy of LINEAR against :mod:`dmlwgsl.reference.resample`, by data type: (absolute
#: tolerance, reason). For values of magnitude below 8; nearest is always bit-exact.
LINEAR_TOLERANCE = {
    DataType.FLOAT32: (
        1e-5,
        "float32 linear: a fused multiply-add on the GPU rounds once where the reference rounds twice",
    ),
    DataType.FLOAT16: (
        2**-8,
        "float16 linear: one float16 ulp at |v| < 8 (fused multiply-add, pack2x16float rounding)",
    ),
    DataType.INT8: (1, "int8 linear: an f32 result within an ulp of .5 may round to either neighbour"),
    DataType.UINT8: (1, "uint8 linear: an f32 result within an ulp of .5 may round to either neighbour"),
}


class InterpolationMode(DmlEnum):
    """DML_INTERPOLATION_MODE; also accepts "nearest" and "linear"."""

    NEAREST_NEIGHBOR = 0
    LINEAR = 1

    @classmethod
    def aliases(cls) -> dict:
        """The short names."""
        return {"NEAREST": "NEAREST_NEIGHBOR"}

    @classmethod
    def dml_prefix(cls) -> str:
        """DML_INTERPOLATION_MODE_."""
        return "DML_INTERPOLATION_MODE_"

    @classmethod
    def describe(cls) -> tuple[str, str, str]:
        """For the error message."""
        return ("interpolation_mode", "mode", "'nearest', 'linear' or InterpolationMode")


class AxisDirection(DmlEnum):
    """DML_AXIS_DIRECTION: Resample2's nearest rounding (INCREASING = ceil, DECREASING = floor)."""

    INCREASING = 0
    DECREASING = 1

    @classmethod
    def dml_prefix(cls) -> str:
        """DML_AXIS_DIRECTION_."""
        return "DML_AXIS_DIRECTION_"

    @classmethod
    def describe(cls) -> tuple[str, str, str]:
        """For the error message."""
        return ("rounding_direction", "direction", "'increasing', 'decreasing' or AxisDirection")


def _float_array(name: str, values, rank: int, *, positive: bool = False) -> tuple[float, ...]:
    """One float32-representable finite value per dimension (``positive``: each > 0)."""
    if values is None:
        raise DmlValidationError(f"{name}: required (one value per dimension, {rank})")
    try:
        vals = [float(v) for v in values]
    except (TypeError, ValueError):
        raise DmlValidationError(f"{name}: must be a sequence of numbers; got {values!r}") from None
    if len(vals) != rank:
        raise DmlValidationError(f"{name}: must have one entry per dimension (dimension count {rank}); got {len(vals)}")
    for d, v in enumerate(vals):
        with np.errstate(over="ignore"):
            f = np.float32(v)
        if not np.isfinite(f):
            raise DmlValidationError(f"{name}[{d}]: must be finite in float32 (no NaN or inf); got {v}")
        if positive and not f > 0:
            raise DmlValidationError(f"{name}[{d}]: must be > 0; got {v}")
    return tuple(vals)


def _validate_tensors(input: TensorDesc, output: TensorDesc) -> None:
    input.validate("input", ranks=RANKS, data_types=RESAMPLE_TYPES)
    output.validate("output", ranks=RANKS, data_types=RESAMPLE_TYPES)
    if output.data_type != input.data_type:
        raise DmlValidationError(
            f"output.data_type: must equal input.data_type ({input.data_type.name}); got {output.data_type.name}"
        )
    if output.rank != input.rank:
        raise DmlValidationError(
            f"output.sizes: dimension count must equal the input's ({input.rank}); got {output.rank}"
        )
    output.check_no_overlap("output")


@dataclass(frozen=True)
class Resample2Desc:
    """DML_RESAMPLE2_OPERATOR_DESC.

    Nearest rounds ``x`` per ``rounding_direction``: DECREASING = floor(x), INCREASING = ceil(x)
    (ignored by LINEAR). ``scales``, ``input_pixel_offsets``, ``output_pixel_offsets`` have one
    entry per dimension (DimensionCount is the tensors' rank).
    """

    input: TensorDesc
    output: TensorDesc
    interpolation_mode: InterpolationMode
    rounding_direction: AxisDirection
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]

    def validate(self) -> None:
        """Raise :class:`DmlValidationError` naming the field and the rule a description breaks."""
        InterpolationMode.parse(self.interpolation_mode)
        AxisDirection.parse(self.rounding_direction)
        _validate_common(self)

    @property
    def nearest_rule(self) -> str:
        """The reference's rounding rule: "floor" (DECREASING) or "ceil" (INCREASING)."""
        return "floor" if AxisDirection.parse(self.rounding_direction) == AxisDirection.DECREASING else "ceil"


@dataclass(frozen=True)
class Resample3Desc(Resample2Desc):
    """DML_RESAMPLE3_OPERATOR_DESC: Resample2's fields and ``antialiased``.

    With ``antialiased`` and LINEAR, the filter is stretched by max(1, 1/Scale) per axis (ONNX
    Resize-18 ``antialias=1``; the weights are in :mod:`dmlwgsl.ops._resample_antialias`). Without
    it, or with NEAREST_NEIGHBOR, it is Resample2; so is antialiased LINEAR where no Scale is < 1.
    """

    antialiased: bool = False

    def validate(self) -> None:
        """Raise :class:`DmlValidationError` naming the field and the rule a description breaks."""
        if not isinstance(self.antialiased, (bool, np.bool_)):
            raise DmlValidationError(f"antialiased: must be a bool; got {self.antialiased!r}")
        self.as_resample2().validate()

    def as_resample2(self) -> Resample2Desc:
        """The same description without ``antialiased``."""
        return Resample2Desc(
            self.input,
            self.output,
            self.interpolation_mode,
            self.rounding_direction,
            self.scales,
            self.input_pixel_offsets,
            self.output_pixel_offsets,
        )

    @property
    def filters(self) -> bool:
        """Whether the antialiasing filter applies: antialiased, LINEAR, and some Scale < 1."""
        return (
            bool(self.antialiased)
            and InterpolationMode.parse(self.interpolation_mode) == InterpolationMode.LINEAR
            and any(np.float32(s) < 1 for s in self.scales)
        )


@dataclass(frozen=True)
class Resample1Desc:
    """DML_RESAMPLE1_OPERATOR_DESC. Nearest rounds ``floor(x + 0.5)`` (halves up; see the module
    docstring for the documented contradictions)."""

    input: TensorDesc
    output: TensorDesc
    interpolation_mode: InterpolationMode
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]

    def validate(self) -> None:
        """Raise :class:`DmlValidationError` naming the field and the rule a description breaks."""
        InterpolationMode.parse(self.interpolation_mode)
        _validate_common(self)

    nearest_rule = "half_up"


@dataclass(frozen=True)
class ResampleDesc:
    """DML_RESAMPLE_OPERATOR_DESC: Resample1 with InputPixelOffsets 0.5 and OutputPixelOffsets -0.5
    (pixel centres, ONNX half_pixel); nearest rounds ``floor(x + 0.5)``."""

    input: TensorDesc
    output: TensorDesc
    interpolation_mode: InterpolationMode
    scales: tuple[float, ...]

    def validate(self) -> None:
        """Raise :class:`DmlValidationError` naming the field and the rule a description breaks."""
        InterpolationMode.parse(self.interpolation_mode)
        _validate_common(self)

    @property
    def input_pixel_offsets(self) -> tuple[float, ...]:
        """0.5 per dimension."""
        return (0.5,) * self.input.rank

    @property
    def output_pixel_offsets(self) -> tuple[float, ...]:
        """-0.5 per dimension."""
        return (-0.5,) * self.input.rank

    nearest_rule = "half_up"


def _validate_common(desc) -> None:
    _validate_tensors(desc.input, desc.output)
    r = desc.input.rank
    _float_array("scales", desc.scales, r, positive=True)
    _float_array("input_pixel_offsets", desc.input_pixel_offsets, r)
    _float_array("output_pixel_offsets", desc.output_pixel_offsets, r)


AnyResampleDesc = ResampleDesc | Resample1Desc | Resample2Desc


# ------------------------------------------------------------------------------------------------
# Coordinate tables (see wgsl/resample.wgsl's header for the three forms an axis takes)
# ------------------------------------------------------------------------------------------------
#: An axis whose whole table is larger than this computes its coordinates in the shader (where
#: the ranges allow it, see _computable): beyond the caches, reading a table entry per output
#: costs as much as the output itself (a 1-D resample reads 16 bytes of linear table per output).
AXIS_TABLE_CACHE_BYTES = 1 << 20


@dataclass
class _Axis:
    """One axis (of the 4, padded in front) as the shader sees it."""

    in_size: int
    out_size: int
    stride: int
    scale: float
    in_off: float
    out_off: float
    form: str  # "whole" or "computed"
    words: np.ndarray  # table words bound for this axis (uint32; linear: 4 per entry)
    taps: int  # linear: 2 where interpolated
    used: int  # distinct input indices the result depends on
    linear: bool = False
    #: A computed linear W axis: resample_rows_pat's W weights compressed to runs of repeating
    #: threads, by outputs a thread (see _weight_runs); {} where none compresses.
    w_runs: dict = field(default_factory=dict)


def _entries(desc, d_in, out_size, scale, in_off, out_off, linear: bool):
    """(indices i0, i1, weights w0, w1) of one axis as the reference computes them (nearest: i0
    only, i1 = i0, weights 1 and 0)."""
    x = ref.input_coordinates(out_size, scale, in_off, out_off)
    if not linear:
        i = ref.nearest_indices(x, d_in, desc.nearest_rule)
        return i, i, np.ones(out_size, np.float32), np.zeros(out_size, np.float32)
    return ref.linear_taps(x, d_in)


def _words(i0, i1, w0, w1, stride: int, linear: bool) -> np.ndarray:
    """Table words of entries: nearest one word (index * stride), padded to a multiple of 4 words
    (each axis starts on a vec4); linear (i0 * stride, i1 * stride, bits(w0), bits(w1))."""
    if not linear:
        words = (i0 * stride).astype(np.uint32)
        return np.concatenate([words, np.zeros(-words.size % 4, np.uint32)])
    return np.stack(
        [(i0 * stride).astype(np.uint32), (i1 * stride).astype(np.uint32), w0.view(np.uint32), w1.view(np.uint32)],
        axis=1,
    ).reshape(-1)


def _exact_inverse(scale: float) -> float:
    """1 / float32(scale) where it is exact (a power of two), else 0 (the shader divides)."""
    m, e = math.frexp(float(np.float32(scale)))
    return 2.0 ** (1 - e) if m == 0.5 else 0.0


def _significand_reciprocal(scale: float) -> float:
    """2^23 / ms rounded to float32, ms = float32(scale)'s 24-bit significand (an integer in
    [2^23, 2^24)): wgsl/resample.wgsl's div_rn estimates its quotients with it."""
    ms = (int(np.float32(scale).view(np.uint32)) & 0x7FFFFF) | 0x800000
    return float(np.float32(2.0**23) / np.float32(ms))


def _computable(scale: float, in_off: float, out_off: float, in_size: int, out_size: int) -> bool:
    """Whether the shader's coordinate() gives the reference's x on this axis: Scale and the
    offsets in ranges where every step stays a normal float32 (div_rn needs a normal quotient)."""
    lo, hi = 2.0**-32, 2.0**32
    return (
        lo <= float(np.float32(scale)) <= hi
        and all(v == 0 or lo <= abs(float(np.float32(v))) <= hi for v in (in_off, out_off))
        and in_size < 2**31
        and out_size < 2**32
    )


def _axes(desc, binding_limit: int, axis_table_bytes: int) -> tuple[_Axis, ...]:
    """The four axes with their table forms: whole tables, except where an axis's whole table is
    larger than ``axis_table_bytes`` or all of them together than the binding limit; then the
    largest such axes compute their coordinates in the shader (exactly: see wgsl/resample.wgsl)."""
    linear = InterpolationMode.parse(desc.interpolation_mode) == InterpolationMode.LINEAR
    r = desc.input.rank
    pad = 4 - r
    in_sizes = (1,) * pad + desc.input.sizes
    out_sizes = (1,) * pad + desc.output.sizes
    strides = (0,) * pad + desc.input.element_strides
    scales = (1.0,) * pad + tuple(desc.scales)
    in_off = (0.5,) * pad + tuple(desc.input_pixel_offsets)
    out_off = (-0.5,) * pad + tuple(desc.output_pixel_offsets)
    axes, entries = [], []
    for d in range(4):
        i0, i1, w0, w1 = _entries(desc, in_sizes[d], out_sizes[d], scales[d], in_off[d], out_off[d], linear)
        entries.append((w0, w1))
        taps = 2 if linear and np.any(w1 != 0) else 1
        # distinct input indices read, marked in a mask of the input axis (np.union1d sorted or hashed
        # them: 12 of the 16.8 s a 2^23 -> 2^24 plan took on this machine's CPU)
        seen = np.zeros(in_sizes[d], bool)
        seen[i0] = True
        if taps == 2:
            seen[i1[w1 != 0]] = True
        used = int(np.count_nonzero(seen))
        words = _words(i0, i1, w0, w1, strides[d], linear)
        axes.append(
            _Axis(
                in_sizes[d],
                out_sizes[d],
                strides[d],
                scales[d],
                in_off[d],
                out_off[d],
                "whole",
                words,
                taps,
                used,
                linear=linear,
            )
        )
    total = sum(a.words.nbytes for a in axes)
    for d in sorted(range(4), key=lambda d: -axes[d].words.nbytes):
        a = axes[d]
        if a.words.nbytes <= axis_table_bytes and total <= binding_limit:
            break
        if _computable(a.scale, a.in_off, a.out_off, a.in_size, a.out_size):
            total -= a.words.nbytes
            a.form, a.words = "computed", np.zeros(0, np.uint32)
            if linear and d == 3:
                a.w_runs = {v: r for v in W_RUN_OUTPUTS if (r := _weight_runs(*entries[d], v)) is not None}
    if total > binding_limit:
        raise PlanError(
            f"resample: the coordinate tables take {total} bytes, beyond the binding limit {binding_limit}, and "
            "the long axes have a Scale or offsets outside [2^-32, 2^32] (coordinates not computable in the shader)"
        )
    return tuple(axes)


#: resample_rows_pat on a computed W axis: outputs a thread for which the host compresses the W
#: weights (_weight_runs), at most this many runs, of threads repeating every 1 .. W_RUN_PERIOD.
W_RUN_OUTPUTS = (8,)
MAX_W_RUNS = 8
W_RUN_PERIOD = 8


def _weight_runs(w0: np.ndarray, w1: np.ndarray, v: int) -> tuple[tuple[tuple[int, int, int], ...], np.ndarray] | None:
    """A long W axis's weights for threads of ``v`` outputs (thread g: outputs gv .. gv + v - 1,
    zeros past the row), as at most MAX_W_RUNS runs of threads whose weights repeat every T <=
    W_RUN_PERIOD threads: ((g0, T, vec4 offset) per run, table words), or None. The table: a vec4
    (g0, T, off, 0) a run, then in run (g0, T, off) thread g's outputs 2m, 2m + 1 have (w0, w1, w0,
    w1) at vec4 (runs) + off + m * T + (g - g0) % T. The reference's weights are compared bit for
    bit, so a run's table gives exactly what the shader's computed_linear would: a power-of-two
    Scale repeats every Scale outputs while its coordinates are exact (x2 on 2^24 outputs: runs of
    period 2 below 2^23, of period 1 above, where o + 0.5 rounds; the row's ends one thread each);
    a Scale of correctly rounded quotients rarely repeats (None)."""
    g = -(-w0.size // v)
    keys = np.zeros(g * v, np.uint64)
    keys[: w0.size] = (w0.view(np.uint32).astype(np.uint64) << np.uint64(32)) | w1.view(np.uint32)
    rows = keys.reshape(g, v)

    def reach(at: int, t: int, n: int) -> int:
        """Threads from ``at`` (at most n past the first period) that repeat every t threads."""
        a = rows[at + t : at + t + n]
        b = rows[at : at + len(a)]
        eq = np.all(a == b, axis=1) if a.size else np.zeros(0, bool)
        return t + (int(np.argmin(eq)) if eq.size and not eq.all() else eq.size)

    runs, at = [], 0
    while at < g:
        # the period that repeats furthest over a window of threads, then its run followed to its end
        ts = range(1, min(W_RUN_PERIOD, g - at) + 1)
        t = max(ts, key=lambda t: (reach(at, t, 4096 - t), -t))  # (the same window for every t)
        runs.append((at, t))
        at += reach(at, t, g)
        if len(runs) > MAX_W_RUNS:
            return None
    words, placed, off = [], [], 0  # (the table: the runs' (g0, T, off, 0), then their weights)
    for g0, t in runs:
        w = rows[g0 : g0 + t]  # (t, v) keys of the run's first period
        hi, lo = (w >> np.uint64(32)).astype(np.uint32), (w & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        pairs = np.stack([hi, lo], axis=2)
        words.append(np.ascontiguousarray(pairs.reshape(t, v // 2, 4).transpose(1, 0, 2)).reshape(-1))
        placed.append((g0, t, off))
        off += t * (v // 2)
    head = np.array([x for r in placed for x in (*r, 0)], np.uint32)
    return tuple(placed), np.concatenate([head] + words).astype(np.uint32)


_AXES_CACHE: dict = {}


def _axes_cached(desc, binding_limit: int, axis_table_bytes: int | None = None) -> tuple[_Axis, ...]:
    """:func:`_axes`, computed once per description (a plan is made per placement and profile)."""
    key = (
        desc.input,
        desc.output,
        int(InterpolationMode.parse(desc.interpolation_mode)),
        desc.nearest_rule,
        tuple(float(v) for v in desc.scales),
        tuple(float(v) for v in desc.input_pixel_offsets),
        tuple(float(v) for v in desc.output_pixel_offsets),
        binding_limit,
        AXIS_TABLE_CACHE_BYTES if axis_table_bytes is None else axis_table_bytes,
    )
    hit = _AXES_CACHE.get(key)
    if hit is None:
        if len(_AXES_CACHE) > 64:
            _AXES_CACHE.pop(next(iter(_AXES_CACHE)))
        hit = _AXES_CACHE[key] = _axes(desc, binding_limit, key[-1])
    return hit


def _table_words(axes) -> tuple[np.ndarray, list[int]]:
    """All axes' words in one table, and each axis's first entry (nearest: words; linear: vec4s).
    The table ends with a whole vec4 of zeros past the last whole vec4 that holds an entry:
    resample_packed reads a block's W entries as the aligned vec4s that hold them, which may
    reach one past the last entry's."""
    starts, at, parts = [], 0, []
    for a in axes:
        starts.append(at // (4 if a.linear else 1))
        parts.append(a.words)
        at += a.words.size
    parts.append(np.zeros(-at % 4 + 4, np.uint32))
    return np.concatenate(parts).astype(np.uint32), starts


def _pattern_weights(axes, v: int) -> np.ndarray:
    """resample_rows_pat's W weights (words), appended to the table after the axes' entries (from
    a whole vec4): for outputs 2m and 2m + 1 of the thread of block column g (``v`` outputs a
    thread), (w0, w1, w0, w1) at vec4 m * groups + g, so that a warp's loads are contiguous."""
    w = axes[3].words.reshape(-1, 4)[:, 2:4]  # (w0, w1) bits of every output column
    w = np.concatenate([w, np.zeros((-len(w) % v, 2), w.dtype)])  # a partial last group: zeros past the row
    w = w.reshape(-1, v, 2)
    if v % 2:  # an odd group (5 outputs): a zero pair after its last output
        w = np.concatenate([w, np.zeros((len(w), 1, 2), w.dtype)], axis=1)
    return np.ascontiguousarray(w.reshape(len(w), -1, 4).transpose(1, 0, 2)).reshape(-1).astype(np.uint32)


# ------------------------------------------------------------------------------------------------
# The plan: which kernel runs, and why
# ------------------------------------------------------------------------------------------------
#: Kernel paths by name: the reference kernels (wgsl/resample.wgsl) and the fast paths, each in
#: its own file beside it.
SHADERS = {
    "resample_packed": "resample.wgsl",
    "resample_strided": "resample.wgsl",
    "resample_atomic": "resample.wgsl",
    "resample_rows": "resample_rows.wgsl",
    "resample_rows_half": "resample_rows.wgsl",
    "resample_rows_byte": "resample_rows.wgsl",
    "resample_rows_pat": "resample_pattern.wgsl",
    # the layout step: the input transposed to a packed workspace, then the plan's kernel for it
    "resample_transpose": "resample_transpose.wgsl",
}
KERNELS = tuple(SHADERS)
#: The workspace of resample_transpose (the input, packed).
TRANSPOSED_INPUT = "packed_input"
#: The row walks that take channel lanes (resample_rows_pat does not: it loads input words along W).
_ROW_WALKS = ("resample_rows", "resample_rows_half", "resample_rows_byte")
#: Channels a row walk needs, at least, to put them in the lanes for a channels-fastest input (GPU).
C_LANES_MIN = 8
#: resample_rows rows per band by (mode, element size) where the plan takes a row walk unasked.
#: Measured on the H100 (8x64x256x256, x2 and x1.5 up): float32 linear 8, float16 linear 32 (with
#: 4 outputs per thread, resample_rows_half), float16 nearest 2; float32 nearest stays on
#: resample_packed (already at the copy's speed), and nearest takes it only where H is upsampled
#: (no row to share otherwise). int8 / uint8 linear (resample_rows_byte, 4 outputs per thread): 8.
#: (CPU adapters walk rows for nearest of every type at every scale: see plan_resample.)
ROW_BANDS: dict = {(1, 4): 8, (1, 2): 32, (0, 2): 2, (1, 1): 8}
#: Rows per band of a row walk requested where ROW_BANDS has no entry.
DEFAULT_BAND = 8
#: Rows per band of every row walk on a CPU adapter (a few threads run at a time, so longer bands
#: only add reuse): lavapipe, bands of 2-64 rows over float32/float16/uint8 linear and float32
#: nearest x2 up, 32 was fastest or within noise of it (8 -> 32: 0-25% faster).
CPU_BAND = 32
#: resample_rows_pat (linear with one W tap pattern): outputs per thread by element size, tried in
#: this order. Measured on the H100 (8x64x256x256): float16 x2 up takes 8, x1.5 up 12 (it has no
#: pattern with 8); 8-bit: 16 outputs (one 16-byte store) where the pattern has them.
PATTERN_OUTPUTS = {4: (4, 8, 6, 5), 2: (8, 12, 16, 6, 4, 10), 1: (16, 12, 8, 4)}
#: Groups of 5 words a thread (float32 5 outputs, float16 10: W scales of period 5 outputs, 5/4 and
#: 5/2, that no other group size has; stored word by word), linear only. H200, session 42, random
#: rows of seeds 31-150 whose plan they moved: linear 33 rows 0.71-1.40x the row walk, geometric
#: mean 1.11x (grid float32 x5/4 2x32x256x256 21.6 -> 19.6 us; slower: x4 in H with x5/4 in W
#: 22.5 -> 31.9, where stores of 5 words dominate); nearest 0.68-1.58x on 7 rows, so nearest keeps
#: its paths.
LINEAR_ONLY_PATTERN_OUTPUTS = (5, 10)
#: resample_rows_pat on a channels-fastest float32 input: channels in a warp's lanes (the rest of
#: the warp: block columns), so that loads are runs of channels and stores runs of columns. H100,
#: NHWC 2x32x256x256 x2 with 4 / 8 / 16 channels: linear 44.3 / 45.3 / 46.3 us, nearest 38.7 /
#: 39.2 / 39.7; x1.5 with 16: 1.5x slower.
PATTERN_C_LANES = 4
#: resample_rows_pat's rows per band for nearest: H100, 2x32x256x256 x2 uint8 bands of 2 / 8 / 32
#: rows 10.8 / 11.0 / 14.1 us, 8x64x256x256 64.6 / 77.1 / 70.4, float16 19.7 / 20.2 / 25.6.
NEAREST_PATTERN_BAND = 2
#: The most outputs a thread where the W axis computes its weights (a long axis): H100, 2^23 ->
#: 2^24 uint8 x2 with 16 outputs 74.8 us, with 8 51.2 (each thread computes its outputs'
#: coordinates; float32 and float16 take 4 and 8 as above).
COMPUTED_PATTERN_OUTPUTS = 8
#: resample_rows_pat's rows per band for 8/16-bit linear with at least 8 outputs a thread (others:
#: ROW_BANDS); H100, 8x64x256x256 float16 (bench/EXPERIMENTS.md).
PATTERN_BAND = 64


def _channels_fastest(pd) -> bool:
    """Whether a padded description's input has its channels as its fastest dimension (NHWC-like)."""
    return pd["in_strides"][1] == 1 and pd["in_strides"][3] > 1


def _lanes_fit(pd, v: int) -> bool:
    """Whether resample_rows_pat's channel lanes (PATTERN_C_LANES channels x 32 / PATTERN_C_LANES
    block columns of ``v`` outputs a warp) fill whole warps: the output channels and a row's block
    columns divide evenly (the shader's condition)."""
    blocks = -(-pd["out_sizes"][3] // v)
    return pd["out_sizes"][1] % PATTERN_C_LANES == 0 and blocks % (32 // PATTERN_C_LANES) == 0


def _padded(desc) -> dict:
    pad = 4 - desc.output.rank
    return {
        "in_sizes": (1,) * pad + desc.input.sizes,
        "in_strides": (0,) * pad + desc.input.element_strides,
        "out_sizes": (1,) * pad + desc.output.sizes,
        "out_strides": (0,) * pad + desc.output.element_strides,
    }


#: A row walk with the measured rows per band keeps at least this many threads: shorter bands
#: where the tensor is small. Measured on the H100: 2x32x256x256 float16 x2 up with 64-row bands
#: ran 32,768 threads (48.4 us; 27.6 us with 2^17 threads), but 2^17 made 8x64x256x256 x1.5 up
#: (98,304 threads) 19 % slower: 2^16. Not on CPU adapters: lavapipe (2 cores) ran float16 linear
#: x2 up (1,16,128,128) 3x slower with the bands shortened to 2 rows than with the measured 32.
MIN_ROW_THREADS = 1 << 16
#: resample_rows_pat's floor, from when its W weights are read thread-fastest (a warp's loads
#: contiguous, so a short band's setup is cheap). H100, 2x32x256x256 x2 up, bands of 8 / 16 / 32
#: rows: float16 24.6 / 24.8 / 32.0 us, uint8 23.8 / 22.8 / 29.4; 8x64x256x256 float16 x1.5 up:
#: 64 rows (98,304 threads) 92.7 us, 32 rows 95.5.
PATTERN_MIN_THREADS = 1 << 17
#: The threads a split part's row walk keeps where the whole plan had more: shorter bands, up to
#: this many threads. H100, 8x64x256x256 split at a 128 MiB binding limit (% of copy at 2^16 /
#: 2^17 / 2^18 / 2^20): float16 linear x2 in three parts 61.8 / 68.1 / 63.7 / 63.5, x1.5 in two
#: 63.8 / 69.5 / 69.2 / 69.2, float32 linear x2 in eight - / 68.4 / 68.3 / 66.8; keeping all of
#: the whole's 4 M threads there (bands of one row) ran 2.4x slower.
FILL_ROW_THREADS = 1 << 17


def _rows_shape(pd, v: int, band: int, *, fill: bool = False, ragged: bool = False, floor: int = MIN_ROW_THREADS):
    """(threads, block columns per row, bands per (n, c), rows per band) of a row walk with ``v``
    outputs per thread, or None where the output rows are not whole groups of ``v`` (``ragged``:
    a row's last group may be partial, its thread storing the words inside the row). Rows per
    band: long enough that the input rows a band shares (upsampling along H) are interpolated
    along W once (and the W taps read once), short enough for many threads (``fill``: shortened
    to keep ``floor`` threads)."""
    n, c, h, w = pd["out_sizes"]
    if w % v and not ragged:
        return None
    blocks, band = -(-w // v), min(h, band)
    if fill:  # shorter bands where the default ones leave the GPU short of threads
        band = max(1, min(band, n * c * blocks * h // floor))
    bands = -(-h // band)
    threads = n * c * bands * blocks
    return None if threads >= 2**32 else (threads, blocks, bands, band)


#: _tap_pattern checks a long axis's threads this many outputs at a time (bounded host memory).
_PATTERN_CHECK_CHUNK = 1 << 20


def _tap_pattern(desc, axes, outputs, bytes_ok: bool = False) -> tuple[int, int, int, int, int, int] | None:
    """resample_rows_pat's structure where output columns (linear, or nearest: one tap), taken V
    at a time, all find their W taps at the same places of an NW-word window of their input row,
    the window of thread g starting at word k0 + g * step (window words outside the row read as its
    edge element repeated, which is what the clamped taps there read; a row's last group may be
    partial where rows are whole words). (V, NW, tap-0 elements, tap-1 elements (4 bits per output:
    the window holds at most 16 elements), step, k0), or None. Row starts must be whole words and a
    thread's V outputs whole words; every thread is checked against the reference's taps (a long
    axis in parts). ``bytes_ok``: 8/16-bit rows may start anywhere and end inside a word (the
    shader's PAT_BYTES words, "word" k being elements k * epw .. k * epw + epw - 1 of the row)."""
    pd = _padded(desc)
    esize = desc.input.data_type.size_in_bytes
    epw = 4 // esize  # elements a word
    w_in, w_out, strides = pd["in_sizes"][3], pd["out_sizes"][3], pd["in_strides"]
    if (strides[3] != 1 and epw > 1) or w_in < 2 * epw:  # (float32: any W stride)
        return None
    if not bytes_ok and _rows_off_words(pd, 0, esize):
        return None
    a = axes[3]

    def taps(start: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        x = ref.input_coordinates(count, a.scale, a.in_off, a.out_off, start)
        if not a.linear:  # nearest: its one tap
            i = ref.nearest_indices(x, w_in, desc.nearest_rule)
            return i, i
        i0, i1, _, _ = ref.linear_taps(x, w_in)
        return i0, (i0 if a.taps == 1 else i1)  # not interpolated along W: tap 0 only

    for v in outputs:
        groups = -(-w_out // v)  # a row's last group may be partial: its thread stores the words inside
        if v % epw or groups < 3 or (w_out % v and (w_out * esize) % 4 and not bytes_ok):
            continue  # (rows of whole words, or byte stores: PAT_RAGGED_BYTES)
        mid = groups // 2  # an interior thread (no clamped taps) defines the pattern
        i0, i1 = taps(mid * v, 2 * v)
        k_mid = int(min(i0[:v].min(), i1[:v].min())) // epw
        step_ = int(min(i0[v:].min(), i1[v:].min())) // epw - k_mid
        d0, d1 = i0[:v] - epw * k_mid, i1[:v] - epw * k_mid
        nw = int(max(d0.max(), d1.max())) // epw + 1
        if d0.min() < 0 or d1.min() < 0 or nw > 6 or nw * epw > 16 or step_ < 0:
            continue
        k0 = k_mid - step_ * mid  # (window words outside the row read its edge element: the shader)
        per = max(1, _PATTERN_CHECK_CHUNK // v)  # groups a part
        for g in range(0, groups, per):
            n = min(per, groups - g)
            m = min(n * v, w_out - g * v)  # the part's outputs inside the row
            i0, i1 = taps(g * v, m)
            k = k0 + step_ * np.arange(g, g + n)
            e0, e1 = epw * k[:, None] + d0, epw * k[:, None] + d1
            if not (
                np.array_equal(np.clip(e0, 0, w_in - 1).reshape(-1)[:m], i0)
                and np.array_equal(np.clip(e1, 0, w_in - 1).reshape(-1)[:m], i1)
            ):
                break
        else:

            def pack(dj):
                return sum(int(h) << (4 * j) for j, h in enumerate(dj))

            return v, nw, pack(d0), pack(d1), step_, k0
    return None


def _rows_off_words(pd, residual: int, esize: int) -> bool:
    """Whether some input row of 8/16-bit elements does not start on a word boundary or is not a
    whole number of words (odd W, an odd row stride, the input placed ``residual`` bytes into its
    binding, off a word); never for float32."""
    epw = 4 // esize
    strides, sizes = pd["in_strides"], pd["in_sizes"]
    return bool(residual % 4 or sizes[3] % epw or any(strides[d] % epw for d in range(3) if sizes[d] > 1))


def plan_resample(
    desc: AnyResampleDesc,
    caps: Capabilities,
    *,
    kernel: str | None = None,
    placements: Mapping[str, Placement] | None = None,
    band_rows: int | None = None,
    pattern_outputs: int | None = None,
    axis_table_bytes: int | None = None,
) -> Plan:
    """The plan of a validated Resample / Resample1 / Resample2 description on an adapter with
    capabilities ``caps``: the one place that decides which kernel runs.

    Paths: resample_rows_pat (the row walk where the W taps of every thread follow one pattern:
    linear of every type, nearest of 8/16-bit types where W does not shrink (every adapter), 8/16-bit
    rows off word boundaries with each window word put together from two (PAT_BYTES; on a GPU after
    the other row walks), the batch or channel
    interpolated (planes blended), channels-fastest float32 with channels in the lanes, taken on
    a GPU instead of the transpose where it has 4 outputs a thread), resample_rows_half (float16
    linear row walk, 4 outputs per thread), resample_rows_byte (its int8 / uint8 form; output rows
    that are not whole words with their shared end words merged by atomics), resample_rows (row
    walk, float32 / float16), every row walk on any axis forms (long axes compute their
    coordinates in the shader; resample_rows_pat reads a long W axis's weights from a few runs of
    a table where they repeat bit for bit, _weight_runs), and
    the reference kernels resample_packed (packed output), resample_strided (4-byte elements, any
    output strides) and resample_atomic (1- and 2-byte elements, any output strides), tried in
    that order unless ``kernel`` names one (an impossible request raises :class:`PlanError`
    naming the rule). ``band_rows`` (output rows a row-walk thread walks) and ``pattern_outputs``
    (resample_rows_pat's outputs per thread) override the measured tuning; an axis whose table
    would take more than ``axis_table_bytes`` (default AXIS_TABLE_CACHE_BYTES) computes its
    coordinates in the shader where it can.
    """
    if kernel is not None and kernel not in SHADERS:
        raise PlanError(f"kernel: no path {kernel!r} for resample (choose from {', '.join(KERNELS)})")
    tuning = {"band_rows": band_rows, "pattern_outputs": pattern_outputs, "axis_table_bytes": axis_table_bytes}
    lanes = kernel is None and _lanes_pattern(desc, caps, axis_table_bytes)
    if kernel in (None, "resample_transpose") and not lanes:
        why_tp = _transpose_rule(desc, caps, requested=kernel is not None)
        if why_tp is None:
            return _transposed_plan(desc, caps, placements, tuning)
        if kernel is not None:
            raise PlanError(f"kernel: resample_transpose cannot run this description: {why_tp}")
    mode = InterpolationMode.parse(desc.interpolation_mode)
    linear = mode == InterpolationMode.LINEAR
    dt = desc.input.data_type
    esize = dt.size_in_bytes
    axes = _axes_cached(desc, caps.max_binding_size, axis_table_bytes)
    words, starts = _table_words(axes)
    pd = _padded(desc)
    in_pl, out_pl = placement_of(placements, "input"), placement_of(placements, "output")
    count = desc.output.element_count
    taps = tuple(a.taps for a in axes)

    # Each path's rule; None = it can run, else the reason it cannot.
    vec4_out = None
    if not desc.output.is_packed:
        vec4_out = "the output is not packed"
    elif not out_pl.padded:
        vec4_out = "the output's buffer is not padded to 16 bytes (vec4 stores)"
    row_rule = vec4_out
    if row_rule is None and out_pl.residual % 16:
        row_rule = "the output does not start on a 16-byte boundary (row stores are whole 16-byte blocks)"
    split = _too_large(desc, caps)
    plane_parts = None
    if row_rule is None and split:
        plane_parts = _split_parts(desc, caps, in_pl.residual, out_pl.residual, esize, planes=True)
        if plane_parts is None:
            verb = "are" if " and " in split else "is"
            row_rule = f"the {split} {verb} beyond the binding limit and one (n, c) plane does not fit one binding"
    # the row walks take every axis form: a computed axis's entries come from coordinate() in the
    # shader (resample_rows_pat: a computed W axis's weights; its taps are the pattern)
    why_not = {
        "resample_packed": vec4_out,
        "resample_strided": None if esize == 4 else f"{dt.name}: resample_strided writes whole 32-bit elements",
        "resample_atomic": None if esize < 4 else "resample_atomic merges 8- and 16-bit elements into words",
        "resample_rows": row_rule
        or (
            None
            if esize in (2, 4) or not linear
            else f"{dt.name}: resample_rows stores float32 or float16 (8-bit: nearest only)"
        ),
        "resample_rows_half": row_rule or (None if linear and esize == 2 else "float16 linear only"),
        "resample_rows_byte": row_rule or (None if linear and esize == 1 else "int8 / uint8 linear only"),
        "resample_rows_pat": row_rule,
    }
    # 8/16-bit rows that are not whole words from a word boundary: the pattern's words put together
    # from the words they straddle (PAT_BYTES)
    pat_bytes = esize < 4 and _rows_off_words(pd, in_pl.residual, esize)
    pat = None
    if why_not["resample_rows_pat"] is None:
        tries = (pattern_outputs,) if pattern_outputs else PATTERN_OUTPUTS[esize]
        if not linear and not pattern_outputs:
            tries = tuple(v for v in tries if v not in LINEAR_ONLY_PATTERN_OUTPUTS)
        if axes[3].form != "whole" and not pattern_outputs:  # weights computed a thread: at most 8
            tries = tuple(v for v in tries if v <= COMPUTED_PATTERN_OUTPUTS)
            # widths whose weights come from runs of a table (no per-output coordinates) first
            # (H200, 1-D float32 2^23 x2: 4 outputs 53.0 us, 8 42.5; computed: 61.2 / 62.7)
            tries = tuple(sorted(tries, key=lambda v: v not in axes[3].w_runs))
        pat = _tap_pattern(desc, axes, tries, bytes_ok=esize < 4)
        if pat is None:
            why_not["resample_rows_pat"] = "the W taps of the output columns follow no common pattern"
    # A channels-fastest input (NHWC) whose (h, w) planes do not grow, on a GPU: the row walks put the
    # channels in the lanes (C_LANES), so that a warp's loads are runs of channels, not one element
    # every C; its stores then go to C planes. H100, 2x32x256x256: x1/2 uint8 nearest 7.9 us against
    # resample_packed's 14.6, float16 linear 13.3 against 39.7; where the planes grow (x2) the
    # scattered stores cost more than the loads save (nearest float32 148 us against 84, linear 114
    # against ~120 without). (The pattern kernel, which loads input words along W, does not apply;
    # any adapter takes channel lanes where a row walk is requested, at any scale: unmeasured on CPUs.)
    shrinks = pd["out_sizes"][2] * pd["out_sizes"][3] <= pd["in_sizes"][2] * pd["in_sizes"][3]
    c_lanes = (
        _channels_fastest(pd)
        and pd["out_sizes"][1] >= C_LANES_MIN
        and (kernel in _ROW_WALKS or (shrinks and not caps.is_cpu))
    )
    if c_lanes and why_not["resample_rows_pat"] is None and kernel != "resample_rows_pat":
        # (a request for the pattern walk is honoured: it puts PATTERN_C_LANES channels in the lanes)
        why_not["resample_rows_pat"] = "the input's channels are its fastest dimension (row walks take channel lanes)"
    # a channels-fastest float32 input: the pattern walk puts PATTERN_C_LANES channels in a warp's lanes
    chan_fast = _channels_fastest(pd) and pd["in_sizes"][1] > 1
    # geometry of the row walks (a CPU adapter runs a few threads at a time: its bands stay long)
    shapes = {}
    fill = band_rows is None and not caps.is_cpu
    # rows of whole words but not whole groups: resample_rows and resample_rows_half store the
    # last group of a row word by word (RAGGED)
    ragged_ok = (pd["out_sizes"][3] * esize) % 4 == 0
    ragged = {}
    # The row walks on 8/16-bit output rows that are not whole words store their outputs where they
    # lie, merging the words they share with atomics (ENDS), on every adapter. resample_rows_byte
    # against resample_packed, the same bits: lavapipe (Mesa 25.0.7), 8 int8/uint8 linear
    # descriptions of 9-203-element rows, one process, best of 3, 1.37-3.47x (geometric mean 2.71x);
    # H200, the 19 such random rows of seeds 7, 11, 13, 17, 19 with whole tables, one process, best
    # of 2, 0.86-4.88x (2.24x; the two slower ones channels-fastest inputs, as are four faster ones).
    # resample_rows (nearest 8/16-bit, float16 linear) and resample_rows_half likewise (session 38).
    ends = (pd["out_sizes"][3] * esize) % 4 != 0
    for name, v in (("resample_rows", 16 // esize), ("resample_rows_half", 4), ("resample_rows_byte", 4)):
        if why_not[name] is None:
            band = band_rows or (CPU_BAND if caps.is_cpu else ROW_BANDS.get((int(mode), esize), DEFAULT_BAND))
            ragged[name] = pd["out_sizes"][3] % v != 0 and ragged_ok and name != "resample_rows_byte"
            shapes[name] = _rows_shape(pd, v, band, fill=fill, ragged=ragged[name] or ends)
            if shapes[name] is None:
                why_not[name] = f"the output rows are not whole groups of {v} elements (nor of words)"
    if ends and not linear and not caps.is_cpu and kernel is None and why_not["resample_rows"] is None:
        # nearest rows off words on a GPU: resample_packed (H200, float16 nearest x[2,1/2,3,5/4]
        # 12x8x349x115: 41.5 us against ENDS's 59.5; after a transpose 138 against 202); requested,
        # and on CPU adapters, the walk takes them
        why_not["resample_rows"] = "nearest output rows not whole words: measured slower than resample_packed on a GPU"
    pat_ragged_bytes = pat is not None and pd["out_sizes"][3] % pat[0] != 0 and (pd["out_sizes"][3] * esize) % 4 != 0
    if pat is not None:
        tuned = PATTERN_BAND if esize < 4 and pat[0] >= 8 else ROW_BANDS[(1, esize)]
        if not linear:
            tuned = NEAREST_PATTERN_BAND
        band = band_rows or (CPU_BAND if caps.is_cpu else tuned)
        ragged["resample_rows_pat"] = pd["out_sizes"][3] % pat[0] != 0
        shapes["resample_rows_pat"] = _rows_shape(
            pd, pat[0], band, fill=fill, floor=PATTERN_MIN_THREADS, ragged=ragged["resample_rows_pat"]
        )
        if shapes["resample_rows_pat"] is None:
            why_not["resample_rows_pat"] = f"the output rows are not whole groups of {pat[0]} elements"
        elif pat_ragged_bytes and not caps.is_cpu and kernel is None:
            # H200, int8 linear rows not whole words, us, this / resample_rows_byte: 260.2 / 161.3,
            # 125.2 / 98.4, 12.0 / 10.0, 11.6 / 12.4 (one process, best of 2)
            why_not["resample_rows_pat"] = (
                "the output rows are not whole words (its stores with atomic ends: on a GPU measured only on "
                "8-bit rows, slower there than resample_rows_byte's; requested there)"
            )
        elif chan_fast and not _lanes_fit(pd, pat[0]):
            why_not["resample_rows_pat"] = (
                f"the input's channels are its fastest dimension and the channels are not a multiple of "
                f"{PATTERN_C_LANES} or the row's {pat[0]}-element groups not of {32 // PATTERN_C_LANES}"
            )

    fallback = ""
    if kernel is not None and why_not[kernel] is not None and placements:
        # the request holds for the compiled placement; a call with tensors placed otherwise
        # gets the path that can run there
        fallback = f" ({kernel} was requested, but at this placement {why_not[kernel]})"
        kernel = None
    if kernel is not None:
        if why_not[kernel] is not None:
            raise PlanError(f"kernel: {kernel} cannot run this description: {why_not[kernel]}")
        name, why = kernel, f"{kernel}: requested"
    else:
        # The measured order on the H100; a row walk is taken unasked only where ROW_BANDS has
        # its (mode, element size), and for nearest only where H is upsampled. A CPU adapter also
        # walks rows for nearest of every type at every scale (lavapipe, Mesa 25, against
        # resample_packed: float32 / float16 x0.5, x1/3, W-only x2 and x0.5-by-2 1.5-3.0x faster;
        # int8 / uint8 x2, x3, x1.5-by-2 and x0.5 1.3-3.4x faster).
        h_up = pd["out_sizes"][2] > pd["in_sizes"][2]
        auto_rows = ((int(mode), esize) in ROW_BANDS and (linear or h_up)) or (caps.is_cpu and not linear) or c_lanes
        candidates = []
        if linear and esize == 4:
            # faster than resample_rows on every float32 pattern measured: H100 (PATTERN_OUTPUTS);
            # lavapipe (Mesa 25, the best of 5 alternations, 1x8x48x64): x2 230 -> 165 us, 4-axis
            # x2 2191 -> 1280, C,H,W x2 1129 -> 649, x0.5-by-3 265 -> 157; 1-D 4096 x2 144 -> 86
            candidates.append("resample_rows_pat")
        w_up = pd["out_sizes"][3] >= pd["in_sizes"][3]
        if linear and esize == 2:
            candidates += ["resample_rows_pat", "resample_rows_half"]
        elif linear and esize == 1:
            candidates += ["resample_rows_pat", "resample_rows_byte"]
        elif lanes:  # float32 nearest, channels fastest: the pattern with channels in the lanes
            candidates.append("resample_rows_pat")
        elif esize < 4 and w_up:
            # nearest, 8/16-bit, W not shrunk: raw bits from the pattern's window (H100 x2:
            # 2x32x256x256 uint8 20.5 -> 10.8 us, 8x64x256x256 118 -> 64.6, float16 20.6 -> 20.0;
            # float32 stays on resample_packed, as fast at x2 and faster at x3 and x1.5). lavapipe
            # (Mesa 25.0.7, session 31, median of 7 alternations against the row walk, us): uint8
            # 1x8x48x64 x2 68 -> 47, x3 100 -> 75, x1.5 50 -> 32, W x2 H x1/2 35 -> 22, int8
            # 2x16x64x64 x2 246 -> 122, float16 x2 56 -> 44, W x3 79 -> 44; rows off words
            # (PAT_BYTES) uint8 243 -> 972 1028 -> 243, float16 x2 795 -> 499
            candidates += ["resample_rows_pat"] + (["resample_rows"] if auto_rows else [])
        elif auto_rows:
            candidates.append("resample_rows")
        if pat_bytes and not caps.is_cpu and "resample_rows_pat" in candidates:
            # rows off word boundaries (PAT_BYTES) on a GPU: after the other row walks, which were
            # measured there (the pattern's two-word assembly was not, on a GPU: session 31 had no
            # device time left), before resample_packed. lavapipe keeps the pattern first: uint8
            # linear 1x8x75x131 x4 1036 us against resample_rows_byte's 1682 (resample_packed
            # 7760), float16 linear 1x8x75x243 x2 948 against resample_rows_half's 1342-1716
            candidates.remove("resample_rows_pat")
            candidates.append("resample_rows_pat")
        candidates += ["resample_packed", "resample_strided" if esize == 4 else "resample_atomic"]
        if ragged.get("resample_rows_pat") and (esize == 4 or pat[0] * esize % 16):
            # a partial last group a row, unasked, only where a thread stores whole 16-byte vectors of
            # 8/16-bit outputs (H100, 3x17x135xW x2: float16 21.8 -> 17.4 us against resample_rows_half,
            # uint8 20.2 -> 17.4 against _byte, nearest uint8 40.4 -> 10.0 against resample_packed);
            # float32 (x2 equal to resample_rows, x1.5 with 6 outputs a thread 20.0 -> 30.0) keeps the rows
            why_not["resample_rows_pat"] = (
                "a partial last group a row, measured slower for float32 and for stores under 16 bytes a thread"
            )
        name = next(k for k in candidates if why_not[k] is None)
        skipped = [f"{k}: {why_not[k]}" for k in candidates[: candidates.index(name)]]
        why = {
            "resample_rows_pat": f"{dt.name.lower()} {'linear' if linear else 'nearest'} with one W tap pattern: "
            "each thread loads its input window "
            "once and picks its taps with constants",
            "resample_rows_half": "float16 linear row walk: an input row interpolated along W serves the output "
            "rows that share it",
            "resample_rows_byte": "int8 / uint8 linear row walk: an input row interpolated along W serves the "
            "output rows that share it",
            "resample_rows": "row walk: an input row interpolated along W (or gathered) once serves the output "
            "rows that share it",
            "resample_packed": "packed output: one thread builds one 16-byte block",
            "resample_strided": "strided output of 4-byte elements: one thread per element",
            "resample_atomic": "strided output of 8- or 16-bit elements: merged into words with atomics",
        }[name]
        if skipped:
            why += " (not " + "; not ".join(skipped) + ")"
        if caps.is_cpu and band_rows is None and name.startswith("resample_rows"):
            why += f"; bands of {CPU_BAND} rows on a CPU adapter"
        why += fallback

    in_res, out_res = in_pl.residual, out_pl.residual
    uniforms = {
        "out_sizes": pd["out_sizes"],
        "origin": (0, 0, 0, 0),
        "out_strides": pd["out_strides"],
        "table_start": starts,
        "taps": taps,
        "shifts": [s.bit_length() - 1 if s & (s - 1) == 0 else 32 for s in pd["out_sizes"]],
        "in_sizes": pd["in_sizes"],
        "in_strides": pd["in_strides"],
        "scales": [float(np.float32(a.scale)) for a in axes],
        "inv_scales": [_exact_inverse(a.scale) if a.form == "computed" else 0.0 for a in axes],
        "sig_rcps": [_significand_reciprocal(a.scale) for a in axes],
        "in_offsets": [float(np.float32(a.in_off)) for a in axes],
        "out_offsets": [float(np.float32(a.out_off)) for a in axes],
        "count": count,
        "input_base": in_res // esize,
        "output_base": out_res // esize,
        "rounding": {"half_up": 0, "floor": 1, "ceil": 2}[desc.nearest_rule],
        "row_threads": 0,
        "row_blocks": 0,
        "row_bands": 0,
        "band_rows": 0,
        "pat_row_words": 0,
        "pat_step": 0,
        "pat_k0": 0,
        "pat_w_start": 0,
    }
    constants = {"MODE": int(mode), "DTYPE": _DTYPE_CLASS[dt]}
    details, table_bytes = (), 16 * -(-words.size // 4)
    computed = sum(1 << d for d, a in enumerate(axes) if a.form == "computed")
    if computed:  # (absent otherwise: the cache keys of whole-table pipelines stay as they were)
        constants["COMPUTED"] = computed
    wg, entry, out_var = 256, name, {"resample_packed": "output4", "resample_strided": "output"}.get(name)
    if name == "resample_atomic":
        out_var = "output_atomic"
        invocations = count
    elif name == "resample_strided":
        invocations = count
    elif name == "resample_packed":
        invocations = -(-(out_res + count * esize) // 16) - out_res // 16
    else:
        threads, blocks, bands, band = shapes[name]
        invocations = threads
        uniforms.update(row_threads=threads, row_blocks=blocks, row_bands=bands, band_rows=band)
        # resample_rows and resample_rows_half name all four output views (RAGGED stores words; ENDS
        # merges shared words with atomics: the shaders name output_atomic whatever the form)
        if name in _ROW_WALKS:
            if name == "resample_rows_byte":
                constants["HALF"], out_var = 1, ("output", "output_atomic")
            else:
                constants["HALF"] = int(name == "resample_rows_half")
                out_var = ("output", "output2", "output4", "output_atomic")
            if ends:  # (absent otherwise: the cache keys of whole-word rows stay as they were)
                constants["ENDS"] = 1
                why += "; output rows not whole words: a thread's shared end words merged with atomics"
        else:
            v, nw, d0, d1, pstep, k0 = pat
            # (all three output views: a thread's words stored whole 16-byte, 8-byte or word at a time,
            # and a partial last group, RAGGED, by its alignment)
            # (output_atomic too: PAT_RAGGED_BYTES merges the words rows share; the shader names it
            # whatever the form, so every pattern pipeline binds it)
            out_var = ("output", "output2", "output4", "output_atomic")
            constants.update(PV=v, NW=nw)
            if pat_bytes:  # (absent otherwise: the cache keys of word-aligned rows stay as they were)
                constants["PAT_BYTES"] = 1
                why += "; input rows off word boundaries: each window word from the two it straddles"
            if chan_fast:
                constants["PAT_CL"] = PATTERN_C_LANES
                why += f"; {PATTERN_C_LANES} channels in a warp's lanes (the input's channels are its fastest "
                why += "dimension)"
                if lanes:
                    why += ", not a transpose to a packed workspace first (4 outputs a thread: whole 16-byte stores)"
            for t, dt_ in (("TAP0", d0), ("TAP1", d1)):
                constants.update({f"{t}_{q}": (dt_ >> (16 * i)) & 0xFFFF for i, q in enumerate("ABCD")})
            uniforms.update(pat_row_words=pd["in_sizes"][3] * esize // 4, pat_step=pstep, pat_k0=k0)
            if linear and axes[3].form == "whole":  # its W weights follow the axes' entries (else computed)
                uniforms["pat_w_start"] = -(-words.size // 4)
                details += (("pattern_outputs", v),)
                table_bytes += _pattern_weights(axes, v).nbytes
            elif linear and v in axes[3].w_runs:
                # a computed W axis whose weights come in a few runs of repeating threads: each run's
                # first period in the table (every thread reads its weights, none computes them)
                runs, wt = axes[3].w_runs[v]
                constants["W_RUNS"] = len(runs)
                uniforms["pat_w_start"] = -(-words.size // 4)
                details += (("pattern_outputs", v), ("w_runs", len(runs)))
                table_bytes += wt.nbytes
                why += (
                    f"; the W weights (a computed axis) in {len(runs)} run(s) of threads repeating every "
                    f"{'/'.join(str(r[1]) for r in runs)} thread(s), read from the table"
                )
    if ragged.get(name):  # (absent otherwise: the cache keys of whole-group rows stay as they were)
        constants["RAGGED"] = 1
    if name == "resample_rows_pat" and pat_ragged_bytes:
        constants["PAT_RAGGED_BYTES"] = 1
        why += "; output rows not whole words: a thread's shared end words merged with atomics"
    if linear and name.startswith("resample_rows") and taps[:2] != (1, 1):
        # the batch and/or channel interpolated: 2 or 4 input planes an output row (absent otherwise:
        # the cache keys of one-plane walks stay as they were)
        constants["ROW_PLANES"] = 4 if taps[:2] == (2, 2) else 2
        how = "each walked with its own row cache"
        if name == "resample_rows_pat":
            how = "their windows blended before the W taps"
        why += f"; {constants['ROW_PLANES']} input planes an output row, {how}"
    if c_lanes and name in _ROW_WALKS:
        constants["C_LANES"] = 1
        why += "; channels in the lanes (the input's channels are its fastest dimension)"
    used = 1
    for a in axes:
        used *= a.used
    forms = tuple(a.form for a in axes[4 - desc.input.rank :])
    s = step(
        name,
        SHADERS[name],
        why,
        invocations,
        entry_point=entry,
        workgroup_size=wg,
        constants=constants,
        uniforms=uniforms,
        bindings={"input": "input", "output": out_var, "table": "table", "table4": "table4"},
        uniform_var="p",
    )
    steps = (s,)
    if split:
        rows = name.startswith("resample_rows")
        parts = plane_parts if rows else _split_parts(desc, caps, in_res, out_res, esize)
        steps = _split_steps(s, parts, esize, fill)
        verb = "are" if " and " in split else "is"
        why += f"; the {split} {verb} beyond the binding limit: {len(steps)} parts, each binding windows of both"
    return Plan(
        "resample",
        steps,
        why,
        (used + count) * esize,
        caps.name,
        host_tables=(("axis_table", int(table_bytes)),),
        details=(("axis_tables", forms), ("taps", taps[4 - desc.input.rank :])) + details,
    )


def _lanes_pattern(desc, caps: Capabilities, axis_table_bytes: int | None) -> bool:
    """Whether a channels-fastest float32 input on a GPU takes resample_rows_pat with channels in
    the lanes (PAT_CL) rather than the transpose to a packed workspace: where the W taps have a
    pattern with 4 outputs a thread (one 16-byte store a row) and the lanes fill whole warps.
    H100, NHWC 2x32x256x256 x2 (transpose + kernel -> lanes): linear 56.6 -> 44.3 us, nearest
    54.5 -> 38.7; 8x64x128x128 x2 linear 101 -> 78.8, nearest 96 -> 68.4. With 6 outputs a thread
    (x1.5) the lanes ran no faster (linear 46.3 against 47.1 us, nearest 42.5 against 46.1)."""
    pd = _padded(desc)
    c = pd["in_sizes"][1]
    if desc.input.data_type.size_in_bytes != 4 or caps.is_cpu or not (c > 1 and _channels_fastest(pd)):
        return False
    if c % PATTERN_C_LANES or not _lanes_fit(pd, 4):
        return False
    axes = _axes_cached(desc, caps.max_binding_size, axis_table_bytes)
    if any(a.form != "whole" for a in axes[:3]) or _too_large(desc, caps):
        return False
    return _tap_pattern(desc, axes, (4,)) is not None


def _transpose_rule(desc, caps: Capabilities, *, requested: bool) -> str | None:
    """Why the plan does not transpose a channels-fastest input to a packed workspace first, or None.
    Unasked it does so on a GPU where the output's (h, w) planes are larger than the input's: the
    row walks' gathers with a stride of C elements (or, with channel lanes, their stores to C
    planes) cost more there than the extra pass (H100, 2x32x256x256 NHWC float32 x2)."""
    pd = _padded(desc)
    n, c, h, w = pd["in_sizes"]
    esize = desc.input.data_type.size_in_bytes
    if not (c > 1 and _channels_fastest(pd)):
        return "the input's channels are not its fastest dimension"
    if not requested and caps.is_cpu:
        return "a CPU adapter (unmeasured there)"
    if not requested and pd["out_sizes"][2] * pd["out_sizes"][3] <= h * w:
        return "the output's planes are no larger than the input's (channel lanes instead)"
    if (w * esize) % 4 and not requested:
        # (requested, the transpose stores such rows with atomic ends; unasked it ran slower than
        # the channel-lanes walk: H200, uint8 linear NHWC 26x42x57x89 x[1,3,1/2,4] 207 against 185 us)
        return "the packed input's rows would not be whole 32-bit words"
    if _too_large(desc, caps) or n * c * h * w * esize > caps.max_binding_size - caps.binding_alignment - 16:
        return "a tensor or the workspace is beyond the binding limit"
    return None


def _packed_input(desc):
    """``desc`` with its input packed: the description resample_transpose's second step runs."""
    return replace(desc, input=TensorDesc(desc.input.data_type, desc.input.sizes))


def _transposed_plan(desc, caps: Capabilities, placements, tuning) -> Plan:
    """resample_transpose: the input moved to a packed workspace (common/transpose.wgsl: planes
    (n, h), rows along w, runs of channels), then the plan for a packed input, reading it."""
    pd = _padded(desc)
    dt = desc.input.data_type
    esize = dt.size_in_bytes
    n, c, h, w = pd["in_sizes"]
    sn, _, sh, sw = pd["in_strides"]
    in_pl = placement_of(placements, "input")
    inner = plan_resample(
        _packed_input(desc),
        caps,
        placements={**(placements or {}), "input": ALIGNED},
        **tuning,
    )
    tp = transpose_step(
        "resample_transpose",
        SHADERS["resample_transpose"],
        esize,
        planes=(n, h, 1, 1),
        ins=(sn, sh, 0, 0),
        outs=(c * h * w, w, 0, 0),
        r_len=w,
        interleave=1,
        in_r=(0, sw),
        k=(c, 1, h * w),
        bases=(in_pl.residual // esize, 0),
        aligned=in_pl.residual % 16 == 0 and in_pl.padded,
        names=("input", TRANSPOSED_INPUT),
        ragged=(w * esize) % 4 != 0,  # rows inside words: transpose_ragged_entry
    )
    steps = (tp,) + tuple(
        replace(s, bindings=tuple((TRANSPOSED_INPUT if k == "input" else k, v) for k, v in s.bindings))
        for s in inner.steps
    )
    why = (
        "the input's channels are its fastest dimension: transposed to a packed workspace (runs of channels "
        f"loaded, rows stored), then {inner.why}"
    )
    return replace(
        inner,
        steps=steps,
        why=why,
        workspace=((TRANSPOSED_INPUT, n * c * h * w * esize),),
        details=inner.details + (("table_input", "packed"),),
    )


def _too_large(desc, caps: Capabilities) -> str:
    """Which tensor ("input", "output", or "input and output") is beyond the binding limit ("" if none)."""
    room = caps.max_binding_size - caps.binding_alignment - 16
    big = [n for n in ("input", "output") if getattr(desc, n).total_tensor_size_in_bytes > room]
    return " and ".join(big)


def _index_ranges(desc) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per axis (4, padded in front) and output index: the lowest and highest input index the
    kernels read (linear: both taps of an interpolated axis, whatever their weights)."""
    linear = InterpolationMode.parse(desc.interpolation_mode) == InterpolationMode.LINEAR
    pd = _padded(desc)
    r = desc.input.rank
    pad = 4 - r
    scales = (1.0,) * pad + tuple(desc.scales)
    io = (0.5,) * pad + tuple(desc.input_pixel_offsets)
    oo = (-0.5,) * pad + tuple(desc.output_pixel_offsets)
    out = []
    for d in range(4):
        i0, i1, _, w1 = _entries(desc, pd["in_sizes"][d], pd["out_sizes"][d], scales[d], io[d], oo[d], linear)
        if linear and np.any(w1 != 0):
            out.append((np.minimum(i0, i1), np.maximum(i0, i1)))
        else:
            out.append((i0, i0))
    return out


def _split_parts(desc, caps: Capabilities, in_res: int, out_res: int, esize: int, planes: bool = False):
    """The output split into parts that each bind a window of the input and of the output within
    the binding limit: along the outermost axis the output has, or, where one slice of it is too
    large, along the next one, slice by slice, and so on (so a packed output's part stays
    contiguous). ``planes``: along N and C only (whole (n, c) planes: the row walks), None where one
    plane does not fit. A list of ((origin, sizes), (input window, output window)) where a window
    is (start relative to the tensor, length, base element)."""
    pd = _padded(desc)
    al, room = caps.binding_alignment, caps.max_binding_size - 16
    ranges = _index_ranges(desc)
    lo_all = [int(lo.min()) for lo, _ in ranges]
    hi_all = [int(hi.max()) for _, hi in ranges]
    ins, outs = pd["in_strides"], pd["out_strides"]

    def windows(origin, sizes):
        """(input window, output window): (start relative to the tensor, length, base element)."""
        lo, hi = list(lo_all), list(hi_all)
        for d in range(4):
            if sizes[d] != pd["out_sizes"][d]:
                lo[d] = int(ranges[d][0][origin[d] : origin[d] + sizes[d]].min())
                hi[d] = int(ranges[d][1][origin[d] : origin[d] + sizes[d]].max())
        res = []
        for res_, first, last in (
            (in_res, sum(l * t for l, t in zip(lo, ins)), sum(h * t for h, t in zip(hi, ins))),
            (
                out_res,
                sum(o * t for o, t in zip(origin, outs)),
                sum((o + n - 1) * t for o, n, t in zip(origin, sizes, outs)),
            ),
        ):
            start = (res_ + first * esize) // al * al - res_  # the window's binding offset is aligned
            res.append((start, (last + 1) * esize - start, first - start // esize))
        # the tables hold input offsets from the tensor's start (not from the window's first element)
        res[0] = (res[0][0], res[0][1], -(res[0][0] // esize))
        return res

    def fits(origin, sizes):
        return all(length <= room for _, length, _ in windows(origin, sizes))

    def box_at(d, fixed, start, k):
        """(origin, sizes): k slices along axis d from ``start``, the axes before it at ``fixed``."""
        origin = tuple(fixed[i] if i < d else (start if i == d else 0) for i in range(4))
        sizes = tuple(1 if i < d else (k if i == d else pd["out_sizes"][i]) for i in range(4))
        return origin, sizes

    def parts_along(d, fixed):
        """Ranges along axis d (the axes before it at ``fixed``, those after it whole)."""
        n, parts, start = pd["out_sizes"][d], [], 0
        while start < n:

            def box(k):
                return box_at(d, fixed, start, k)

            if not fits(*box(1)):
                return None
            k = 1
            while start + k < n and fits(*box(min(2 * k, n - start))):
                k = min(2 * k, n - start)
            step_ = k
            while step_ > 1:  # grow by halving steps up to the largest part that fits
                step_ //= 2
                if start + k + step_ <= n and fits(*box(k + step_)):
                    k += step_
            parts.append(box(k))
            start += k
        # as many parts, of even sizes where they fit (a last part of one slice would run a
        # dispatch of few threads as long as the others)
        even = -(-n // len(parts))
        evened = [box_at(d, fixed, a, min(even, n - a)) for a in range(0, n, even)]
        if len(evened) == len(parts) and all(fits(*b) for b in evened):
            parts = evened
        return parts

    outer = [d for d in range(4) if pd["out_sizes"][d] > 1] or [3]
    if planes:
        outer = [d for d in outer if d < 2] or [0]

    def split(level, fixed):
        d = outer[level]
        got = parts_along(d, fixed)
        if got is None and level + 1 < len(outer):
            got = []
            for i in range(pd["out_sizes"][d]):
                sub = split(level + 1, tuple(i if k == d else fixed[k] for k in range(4)))
                if sub is None:
                    return None
                got += sub
        return got

    parts = split(0, (0, 0, 0, 0))
    if parts is None:
        if planes:
            return None
        raise PlanError(
            f"resample: no split of the output binds windows within the binding limit {caps.max_binding_size} "
            "(the input rows one output element needs are larger)"
        )
    return [(part, windows(*part)) for part in parts]


def _split_steps(s: KernelStep, parts, esize: int, fill: bool = False) -> tuple:
    """``s`` as one step a part of :func:`_split_parts`, each binding its windows; its uniforms
    give the part's sizes, origin and window bases (a row walk: its threads over the part's planes)."""
    steps = []
    u0 = s.uniforms_dict
    for i, ((origin, sizes), ((is_, il, ib), (os_, ol, ob))) in enumerate(parts):
        count = int(np.prod(sizes))
        u = dict(
            u0,
            out_sizes=sizes,
            origin=origin,
            shifts=[v.bit_length() - 1 if v & (v - 1) == 0 else 32 for v in sizes],
            count=count,
            input_base=ib % 2**32,
            output_base=ob,
        )
        if s.name == "resample_packed":
            invocations = -(-(ob * esize + count * esize) // 16) - ob * esize // 16
        elif u0["row_threads"]:  # a row walk over whole (n, c) planes
            band, h = u0["band_rows"], sizes[2]
            if fill:  # a part has fewer planes than the whole: shorter bands keep the whole's
                # threads, up to FILL_ROW_THREADS (more only shortens the bands)
                want = max(MIN_ROW_THREADS, min(u0["row_threads"], FILL_ROW_THREADS))
                band = max(1, min(band, sizes[0] * sizes[1] * u0["row_blocks"] * h // want))
            bands = -(-h // band)
            invocations = sizes[0] * sizes[1] * bands * u0["row_blocks"]
            u.update(row_threads=invocations, row_bands=bands, band_rows=band)
        else:
            invocations = count
        why = f"part {i}: outputs from {origin} of sizes {sizes}"
        windows = (("input", is_, il), ("output", os_, ol))
        steps.append(s.part(i, why, uniforms=u, windows=windows, invocations=invocations))
    return tuple(steps)


class ResampleOperator(Operator):
    """A compiled Resample / Resample1 / Resample2: call it with (input, output) GPU tensors.

    Its plan (:func:`plan_resample`) names the kernel; the pipeline is shared through the
    device's cache by every operator of the same path, mode and data type, whatever the shapes;
    the per-axis table is uploaded once.
    """

    op = "resample"

    def __init__(
        self,
        device: Device,
        desc,
        *,
        kernel: str | None = None,
        capabilities: Capabilities | None = None,
        band_rows: int | None = None,
        pattern_outputs: int | None = None,
        axis_table_bytes: int | None = None,
    ):
        self.band_rows = band_rows
        self.axis_table_bytes = axis_table_bytes
        self.pattern_outputs = pattern_outputs
        self._tables: dict[tuple, GpuTensor] = {}  # by (packed input, pattern outputs)
        super().__init__(device, desc, kernel=kernel, capabilities=capabilities)

    def make_plan(self, placements):
        """The plan for this description and device (see :func:`plan_resample`)."""
        return plan_resample(
            self.desc,
            self.capabilities,
            kernel=self.kernel_request,
            placements=placements,
            band_rows=self.band_rows,
            pattern_outputs=self.pattern_outputs,
            axis_table_bytes=self.axis_table_bytes,
        )

    def host_tensors(self, plan: Plan) -> Mapping[str, GpuTensor]:
        """The per-axis table (bound twice: as words and as vec4 words), uploaded once per input
        layout it indexes (the description's, or a packed workspace's: resample_transpose), and
        the plan's workspace."""
        details = dict(plan.details)
        packed, v = details.get("table_input") == "packed", details.get("pattern_outputs")
        table = self._tables.get((packed, v))
        if table is None:
            desc = _packed_input(self.desc) if packed else self.desc
            axes = _axes_cached(desc, self.capabilities.max_binding_size, self.axis_table_bytes)
            words, _ = _table_words(axes)
            if v:  # resample_rows_pat's W weights, from the next whole vec4
                w = axes[3].w_runs[v][1] if details.get("w_runs") else _pattern_weights(axes, v)
                words = np.concatenate([words, np.zeros(-words.size % 4, np.uint32), w])
            tdesc = TensorDesc(DataType.UINT32, (words.size,))
            buf = self.device.create_buffer(tdesc.total_tensor_size_in_bytes, "resample.table")
            self.device.write(buf, 0, words.view(np.uint8))
            table = self._tables[(packed, v)] = GpuTensor(self.device, tdesc, buf)
        return {"table": table, "table4": table, **self.workspace_tensors(plan)}


def compile_resample(
    desc: AnyResampleDesc,
    *,
    device: Device | None = None,
    kernel: str | None = None,
    band_rows: int | None = None,
    pattern_outputs: int | None = None,
    capabilities: Capabilities | None = None,
) -> ResampleOperator:
    """Validate a :class:`ResampleDesc`, :class:`Resample1Desc`, :class:`Resample2Desc` or
    :class:`Resample3Desc` and build the operator once; call the result with (input, output) GPU
    tensors as often as needed. ``kernel`` requests a path by name (see :func:`plan_resample`;
    an impossible request raises :class:`PlanError`); ``band_rows`` and ``pattern_outputs`` tune
    the row walks; ``capabilities`` replaces the device's record for planning (tighter only, e.g. a
    smaller binding limit)."""
    if isinstance(desc, Resample3Desc):  # the antialiasing filter, else Resample2
        from ._resample_antialias import compile_resample3

        return compile_resample3(desc, device=device, kernel=kernel, capabilities=capabilities)
    if not isinstance(desc, (ResampleDesc, Resample1Desc, Resample2Desc)):
        raise DmlValidationError(
            f"desc: expected ResampleDesc, Resample1Desc or Resample2Desc; got {type(desc).__name__}"
        )
    desc.validate()
    return ResampleOperator(
        device or default_device(),
        desc,
        kernel=kernel,
        band_rows=band_rows,
        pattern_outputs=pattern_outputs,
        capabilities=capabilities,
    )


def add_explain_arguments(parser) -> None:
    """``dmlwgsl explain resample`` options: --scales, --mode, --output, --input-offsets,
    --output-offsets, --rounding, --input-layout, --antialias."""
    from ..cli import parse_floats, parse_ints

    parser.add_argument("--scales", type=parse_floats, help="Scale per axis, e.g. 1,1,2,2 (default: output/input)")
    parser.add_argument("--mode", default="nearest", help="nearest or linear")
    parser.add_argument("--output", type=parse_ints, help="output sizes (default: floor(input * scale))")
    parser.add_argument("--input-offsets", type=parse_floats, help="InputPixelOffsets (default 0.5 per axis)")
    parser.add_argument("--output-offsets", type=parse_floats, help="OutputPixelOffsets (default -0.5 per axis)")
    parser.add_argument(
        "--rounding", help="Resample2's nearest rounding: decreasing or increasing (default: Resample1)"
    )
    parser.add_argument(
        "--input-layout",
        default="packed",
        choices=["packed", "nhwc"],
        help="packed (default) or nhwc (channels-last strides; 4-D inputs)",
    )
    parser.add_argument(
        "--antialias", action="store_true", help="Resample3 with Antialiased (linear downsampling filters)"
    )


def explain_plan(args, caps: Capabilities) -> Plan:
    """The plan of the description ``dmlwgsl explain resample``'s options give."""
    from ..testing import strided_desc

    in_sizes = tuple(args.input)
    r = len(in_sizes)
    if args.scales is None and args.output is None:
        raise DmlValidationError("scales: give --scales or --output (or both)")
    out = args.output or tuple(int(math.floor(np.float32(s) * i)) for s, i in zip(args.scales, in_sizes))
    dt = DataType.parse(args.dtype)
    scales = args.scales or tuple(o / i for o, i in zip(out, in_sizes))
    io = args.input_offsets or (0.5,) * r
    oo = args.output_offsets or (-0.5,) * r
    layout = args.input_layout
    if layout == "nhwc" and r != 4:
        raise DmlValidationError(f"input.sizes: --input-layout nhwc needs 4 dimensions; got {r} ({list(in_sizes)})")
    ind, outd = strided_desc(dt, in_sizes, layout), TensorDesc(dt, out)
    if args.antialias:
        from ._resample_antialias import plan_resample_antialias

        desc3 = Resample3Desc(ind, outd, args.mode, args.rounding or "decreasing", scales, io, oo, True)
        desc3.validate()
        if desc3.filters:
            return plan_resample_antialias(desc3, caps, kernel=args.kernel)
        desc = desc3.as_resample2()  # (nothing to filter: Resample2's plan)
    elif args.rounding is None:
        desc = Resample1Desc(ind, outd, args.mode, scales, io, oo)
    else:
        desc = Resample2Desc(ind, outd, args.mode, args.rounding, scales, io, oo)
    desc.validate()
    return plan_resample(desc, caps, kernel=args.kernel)


def _per_axis(value, rank: int, default) -> tuple:
    """``value`` per axis: None = ``default``, a scalar = the same for every axis."""
    if value is None:
        return tuple(default)
    if np.isscalar(value):
        return (float(value),) * rank
    return tuple(value)


def resample(
    x: npt.ArrayLike,
    output_sizes,
    *,
    mode="nearest",
    scales=None,
    input_pixel_offsets=None,
    output_pixel_offsets=None,
    rounding_direction=None,
    antialias: bool = False,
    device: Device | None = None,
) -> np.ndarray:
    """Resample a numpy array (rank 1-4; float32, float16, int8 or uint8) to ``output_sizes``.

    ``mode``: "nearest" / "linear" or :class:`InterpolationMode`. ``scales`` default to
    output/input per axis (float division); ``input_pixel_offsets`` to 0.5 and
    ``output_pixel_offsets`` to -0.5 per axis (a scalar applies to every axis).
    ``rounding_direction=None`` is Resample1's nearest rule ``floor(x + 0.5)``; "decreasing"
    (floor(x)) or "increasing" (ceil(x)) select Resample2. ``antialias=True`` is Resample3's
    Antialiased: linear downsampling stretches the filter by 1/scale (ONNX Resize ``antialias``;
    no effect on nearest). Any numpy view with non-negative strides is used as it lies (no host
    copy).
    """
    a = oneshot.as_input(x, "x", "an array of rank 1 to 4")
    out_sizes = integers("output_sizes", output_sizes)
    if len(out_sizes) != a.ndim:
        raise DmlValidationError(
            f"output.sizes: dimension count must equal the input's ({a.ndim}); got {len(out_sizes)}"
        )
    if any(s < 0 for s in out_sizes):
        raise DmlValidationError(f"output.sizes: a negative size is invalid; got {list(out_sizes)}")
    if a.size == 0 or 0 in out_sizes:
        if 0 not in out_sizes:
            d = a.shape.index(0)
            raise DmlValidationError(f"x.sizes[{d}]: a size-0 axis cannot be resampled to {out_sizes[d]} elements")
        return oneshot.empty_result(out_sizes, a.dtype)
    in_desc, _ = desc_for_array(a)
    r = in_desc.rank
    m = InterpolationMode.parse(mode)
    sc = _per_axis(scales, r, (o / i for o, i in zip(out_sizes, in_desc.sizes)))
    io = _per_axis(input_pixel_offsets, r, (0.5,) * r)
    oo = _per_axis(output_pixel_offsets, r, (-0.5,) * r)
    out_desc = TensorDesc(in_desc.data_type, out_sizes)
    if antialias and m == InterpolationMode.LINEAR:
        direction = AxisDirection.parse(rounding_direction or AxisDirection.DECREASING)  # ignored by linear
        desc = Resample3Desc(in_desc, out_desc, m, direction, sc, io, oo, True)
    elif rounding_direction is None:
        desc = Resample1Desc(in_desc, out_desc, m, sc, io, oo)
    else:
        desc = Resample2Desc(in_desc, out_desc, m, AxisDirection.parse(rounding_direction), sc, io, oo)
    return oneshot.run(compile_resample, desc, [a, oneshot.OUTPUT], device=device)  # validates before GPU work


# ------------------------------------------------------------------------------------------------
# ONNX Resize bridge (spec 4.7)
# ------------------------------------------------------------------------------------------------
class OnnxResizeUnsupported(DmlValidationError):
    """An ONNX Resize that DirectML's Resample2 cannot express; the message says why."""


@dataclass(frozen=True)
class OnnxResizeParams:
    """Resample2 parameters for one ONNX Resize (same rank as the ONNX tensor); Resample3 with
    ``antialiased`` for ONNX's ``antialias=1`` with mode linear."""

    output_sizes: tuple[int, ...]
    interpolation_mode: InterpolationMode
    rounding_direction: AxisDirection
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]
    antialiased: bool = False

    def desc(self, input: TensorDesc, output: TensorDesc | None = None) -> Resample2Desc | Resample3Desc:
        """The Resample2 (Resample3 when antialiased) description for ``input`` (output packed
        unless given)."""
        if output is None:
            output = TensorDesc(input.data_type, self.output_sizes)
        if self.antialiased:
            return Resample3Desc(
                input,
                output,
                self.interpolation_mode,
                self.rounding_direction,
                self.scales,
                self.input_pixel_offsets,
                self.output_pixel_offsets,
                True,
            )
        return Resample2Desc(
            input,
            output,
            self.interpolation_mode,
            self.rounding_direction,
            self.scales,
            self.input_pixel_offsets,
            self.output_pixel_offsets,
        )

    def kwargs(self) -> dict:
        """Keyword arguments for :func:`resample` (after ``x, output_sizes``)."""
        return {
            "mode": self.interpolation_mode,
            "scales": self.scales,
            "input_pixel_offsets": self.input_pixel_offsets,
            "output_pixel_offsets": self.output_pixel_offsets,
            "rounding_direction": self.rounding_direction,
            "antialias": self.antialiased,
        }


_FLT_MAX = float(np.finfo(np.float32).max)
_NEAREST_MODES = {  # ONNX nearest_mode -> (RoundingDirection, InputPixelOffset adjustment), spec 4.3
    "round_prefer_floor": (AxisDirection.INCREASING, 0.5),  # ceil(x - 0.5): ties down
    "round_prefer_ceil": (AxisDirection.DECREASING, -0.5),  # floor(x + 0.5): ties up
    "floor": (AxisDirection.DECREASING, 0.0),
    "ceil": (AxisDirection.INCREASING, 0.0),
}


def _as_str(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def onnx_resize_to_resample(
    input_shape,
    *,
    scales=None,
    sizes=None,
    roi=None,
    mode="nearest",
    coordinate_transformation_mode="half_pixel",
    nearest_mode="round_prefer_floor",
    exclude_outside=0,
    extrapolation_value=0.0,
    antialias=0,
    axes=None,
    keep_aspect_ratio_policy="stretch",
    cubic_coeff_a=-0.75,
) -> OnnxResizeParams:
    """Map ONNX Resize (opset 10-19) attributes and inputs to Resample2 parameters, as ORT's DML
    execution provider does (``ComputePixelOffsetsAndScales``, spec 4.7), with the output size
    ONNX's reference computes (floor(in * scale) for scales; keep_aspect_ratio_policy for sizes).

    ``antialias=1`` with mode linear maps to Resample3's Antialiased (ignored by nearest, as in
    ORT). Raises :class:`OnnxResizeUnsupported` for what DirectML cannot express: mode "cubic",
    exclude_outside, tf_crop_and_resize that samples outside the input (ONNX writes
    extrapolation_value there, DirectML clamps), antialias where DML's Scale is not ONNX's scale
    factor on a downsampled axis (align_corners, tf_crop_and_resize: ONNX stretches the filter by
    1/scale factor, DirectML by 1/Scale), rank > 4.
    ``cubic_coeff_a`` is accepted and unused (cubic is refused).
    """
    del cubic_coeff_a
    shape = tuple(int(s) for s in input_shape)
    r = len(shape)
    mode = _as_str(mode)
    ctm = _as_str(coordinate_transformation_mode)
    nearest_mode = _as_str(nearest_mode)
    policy = _as_str(keep_aspect_ratio_policy)
    if mode == "cubic":
        raise OnnxResizeUnsupported("mode: 'cubic' has no DirectML Resample equivalent (nearest and linear only)")
    if mode not in ("nearest", "linear"):
        raise OnnxResizeUnsupported(f"mode: unknown ONNX Resize mode {mode!r}")
    if int(exclude_outside):
        raise OnnxResizeUnsupported(
            "exclude_outside: DirectML always clamps to the edge; exclude_outside=1 cannot be expressed"
        )
    if r < 1 or r > 4:
        raise OnnxResizeUnsupported(f"input rank: DirectML Resample takes 1 to 4 dimensions; got {r}")
    if nearest_mode not in _NEAREST_MODES:
        raise OnnxResizeUnsupported(f"nearest_mode: unknown {nearest_mode!r}")
    ax = list(range(r)) if axes is None or len(axes) == 0 else [int(a) % r for a in axes]
    scales = None if scales is None or len(scales) == 0 else [float(s) for s in scales]
    sizes = None if sizes is None or len(sizes) == 0 else [int(s) for s in sizes]
    roi = None if roi is None or len(roi) == 0 else [float(v) for v in roi]
    if roi is not None and len(roi) == 2 * len(ax) and len(ax) != r:
        full = [0.0] * r + [1.0] * r
        for i, d in enumerate(ax):
            full[d], full[r + d] = roi[i], roi[len(ax) + i]
        roi = full
    if sizes is not None:
        out = list(shape)
        for i, d in enumerate(ax):
            out[d] = sizes[i]
        sc = [out[d] / shape[d] for d in range(r)]
        if policy != "stretch":
            if policy not in ("not_larger", "not_smaller"):
                raise OnnxResizeUnsupported(f"keep_aspect_ratio_policy: unknown {policy!r}")
            pick = min if policy == "not_larger" else max
            s = pick(sc[d] for d in ax)
            sc = [s if d in ax else 1.0 for d in range(r)]
            out = [int(s * shape[d] + 0.5) if d in ax else shape[d] for d in range(r)]
    elif scales is not None:
        sc = [1.0] * r
        for i, d in enumerate(ax):
            sc[d] = float(np.float32(scales[i]))
        out = [int(math.floor(sc[d] * shape[d])) for d in range(r)]
    else:
        raise OnnxResizeUnsupported("scales/sizes: one of them is required")
    if any(o < 1 for o in out):
        raise OnnxResizeUnsupported(f"output sizes: must all be >= 1; got {out}")
    in_off, out_off, dml_sc = [], [], []
    for d in range(r):
        i_dim, o_dim, s = shape[d], out[d], sc[d]
        # ONNX's align_corners and tf_crop_and_resize divide by (length_resized - 1) with the
        # *unrounded* length scale * in when scales are given; ORT's DML EP uses the integer output
        # size there. We follow ONNX (it is expressible: only the Scale changes).
        o_len = s * i_dim if sizes is None else float(o_dim)
        if ctm == "half_pixel":
            io, oo = 0.5, -0.5
        elif ctm == "half_pixel_symmetric":
            io, oo = 0.5 - (i_dim / 2) * (1 - o_dim / (s * i_dim)), -0.5
        elif ctm == "pytorch_half_pixel":
            # ONNX: x = -0.5 where the resized length is 1 (ORT's DML EP tests the input length
            # instead, spec 4.7; we follow ONNX: x = (0 - 0) / FLT_MAX - 0.5).
            if o_len == 1:
                io, oo, s = 0.5, 0.0, _FLT_MAX
            else:
                io, oo = 0.5, -0.5
        elif ctm == "align_corners":
            io, oo = 0.0, 0.0
            s = _FLT_MAX if o_dim <= 1 or i_dim <= 1 else (o_len - 1) / (i_dim - 1)
        elif ctm == "asymmetric":
            io, oo = 0.0, 0.0
        elif ctm == "tf_half_pixel_for_nn":
            io, oo = 0.0, -0.5
        elif ctm == "tf_crop_and_resize":
            if roi is None or len(roi) != 2 * r:
                raise OnnxResizeUnsupported("roi: tf_crop_and_resize needs a roi of 2 * rank values")
            start, end = roi[d], roi[r + d]
            if i_dim > 1:
                io, oo = -(start * (i_dim - 1)), 0.0
                # ORT's DML EP divides by max(span, 1), which is wrong for a ROI narrower than one
                # input step (the ONNX tests have one); the ONNX formula is (len - 1) / span.
                span = (end - start) * (i_dim - 1)
                s = (o_len - 1) / span if span > 0 and o_len > 1 else _FLT_MAX
            else:
                io, oo, s = -0.5 * (start + end) * (i_dim - 1), 0.0, 1.0
            # ONNX writes extrapolation_value where x leaves [0, in - 1]; DirectML clamps instead.
            if o_dim > 1:
                xs = [start * (i_dim - 1) + y * (end - start) * (i_dim - 1) / (o_len - 1) for y in (0, o_dim - 1)]
            else:
                xs = [0.5 * (start + end) * (i_dim - 1)]
            if any(x < 0 or x > i_dim - 1 for x in xs):
                raise OnnxResizeUnsupported(
                    f"roi: tf_crop_and_resize samples outside the input on axis {d} (ONNX writes "
                    f"extrapolation_value {float(extrapolation_value)} there; DirectML clamps to the edge)"
                )
        else:
            raise OnnxResizeUnsupported(f"coordinate_transformation_mode: unknown {ctm!r}")
        if mode == "nearest":
            direction, adj = _NEAREST_MODES[nearest_mode]
            io += adj
        else:
            direction = AxisDirection.DECREASING  # ignored by LINEAR; ORT passes DECREASING
        if int(antialias) and mode == "linear" and min(np.float32(s), 1) != min(np.float32(sc[d]), 1):
            raise OnnxResizeUnsupported(
                f"antialias: with coordinate_transformation_mode {ctm!r} ONNX stretches the filter on axis {d} "
                f"by 1/{sc[d]:g} (its scale factor), DirectML by 1/Scale = 1/{s:g}; not expressible"
            )
        in_off.append(io)
        out_off.append(oo)
        dml_sc.append(s)
    return OnnxResizeParams(
        tuple(out),
        InterpolationMode.LINEAR if mode == "linear" else InterpolationMode.NEAREST_NEIGHBOR,
        direction if mode == "nearest" else AxisDirection.DECREASING,
        tuple(dml_sc),
        tuple(in_off),
        tuple(out_off),
        bool(int(antialias)) and mode == "linear",
    )

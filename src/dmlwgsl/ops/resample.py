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
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import oneshot
from ..reference import resample as ref
from ..runtime import Device, GpuTensor, Kernel, default_device
from ..tensor import DataType, DmlEnum, DmlValidationError, TensorDesc, desc_for_array, integers

__all__ = [
    "InterpolationMode",
    "AxisDirection",
    "ResampleDesc",
    "Resample1Desc",
    "Resample2Desc",
    "Resample3Desc",
    "ResampleOperator",
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
#: resample_rows: rows per band by (mode, element size); a pair not listed does not use it.
#: Measured on the H100 (8x64x256x256, x2 and x1.5 up): float32 linear 8, float16 linear 32 (with
#: 4 outputs per thread), float16 nearest 2; float32 nearest stays on resample_packed (already at
#: the copy's speed), and nearest uses it only where H is upsampled (no row to share otherwise).
_ROW_WALK_BAND: dict = {(1, 4): 8, (1, 2): 32, (0, 2): 2}
_ROW_WALK_NEAREST_ANY_H = False
_ROW_WALK_HALF = True
#: resample_rows_pat (float16 linear with one W tap pattern): outputs per thread, tried in this
#: order, and (rows per band, workgroup size) by outputs per thread (others: _ROW_WALK_BAND, 256).
#: Measured on the H100 (8x64x256x256): x2 up takes 8, x1.5 up 12 (it has no pattern with 8).
_PATTERN_V = (8, 12, 16, 6, 4)
_PATTERN_TUNING: dict = {8: (64, 256), 12: (64, 256), 16: (64, 256)}


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
class Resample3Desc:
    """DML_RESAMPLE3_OPERATOR_DESC: Resample2's fields and ``antialiased``.

    With ``antialiased`` and LINEAR, the filter is stretched by max(1, 1/Scale) per axis (ONNX
    Resize-18 ``antialias=1``; the weights are in :mod:`dmlwgsl.ops._resample_antialias`). Without
    it, or with NEAREST_NEIGHBOR, it is Resample2; so is antialiased LINEAR where no Scale is < 1.
    """

    input: TensorDesc
    output: TensorDesc
    interpolation_mode: InterpolationMode
    rounding_direction: AxisDirection
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]
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

    @property
    def nearest_rule(self) -> str:
        """The reference's rounding rule: "floor" (DECREASING) or "ceil" (INCREASING)."""
        return self.as_resample2().nearest_rule


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


def _axis_tables(desc) -> tuple[np.ndarray, list[int], list[int]]:
    """Per-axis tables for the shader (see wgsl/resample.wgsl), padded to 4 axes in front:
    (words, first entry of each axis, taps per axis). Nearest entries are one word (each axis
    starts on a multiple of 4 words, so the shader can load four as a vec4); linear entries are
    four words, and their first entries count vec4 words."""
    mode = InterpolationMode.parse(desc.interpolation_mode)
    r = desc.input.rank
    pad = 4 - r
    in_sizes = (1,) * pad + desc.input.sizes
    out_sizes = (1,) * pad + desc.output.sizes
    strides = (0,) * pad + desc.input.element_strides
    scales = (1.0,) * pad + tuple(desc.scales)
    in_off = (0.5,) * pad + tuple(desc.input_pixel_offsets)
    out_off = (-0.5,) * pad + tuple(desc.output_pixel_offsets)
    parts, starts, taps, at = [], [], [], 0
    for d in range(4):
        x = ref.input_coordinates(out_sizes[d], scales[d], in_off[d], out_off[d])
        if mode == InterpolationMode.NEAREST_NEIGHBOR:
            words = (ref.nearest_indices(x, in_sizes[d], desc.nearest_rule) * strides[d]).astype(np.uint32)
            words = np.concatenate([words, np.zeros(-words.size % 4, np.uint32)])
            taps.append(1)
        else:
            i0, i1, w0, w1 = ref.linear_taps(x, in_sizes[d])
            words = np.stack(
                [
                    (i0 * strides[d]).astype(np.uint32),
                    (i1 * strides[d]).astype(np.uint32),
                    w0.view(np.uint32),
                    w1.view(np.uint32),
                ],
                axis=1,
            ).reshape(-1)
            taps.append(2 if np.any(w1 != 0) else 1)
        parts.append(words)
        starts.append(at if mode == InterpolationMode.NEAREST_NEIGHBOR else at // 4)
        at += words.size
    return np.concatenate(parts).astype(np.uint32), starts, taps


class ResampleOperator:
    """A compiled Resample / Resample1 / Resample2: call it with (input, output) GPU tensors.

    Holds the pipeline (shared through the device's cache by every operator of the same mode,
    data type and output layout, whatever the shapes), the per-axis tables on the GPU and the
    uniforms.
    """

    def __init__(self, device: Device, desc):
        self.device = device
        self.desc = desc
        self.input_desc = desc.input
        self.output_desc = desc.output
        self.mode = InterpolationMode.parse(desc.interpolation_mode)
        self.esize = desc.input.data_type.size_in_bytes
        device.check_binding_size("resample", "input", desc.input.total_tensor_size_in_bytes)
        device.check_binding_size("resample", "output", desc.output.total_tensor_size_in_bytes)
        words, starts, taps = _axis_tables(desc)
        self.taps = tuple(taps)
        tdesc = TensorDesc(DataType.UINT32, (words.size,))
        self.table = GpuTensor(device, tdesc, device.create_buffer(tdesc.total_tensor_size_in_bytes, "resample.table"))
        device.write(self.table.buffer, 0, words.view(np.uint8))
        pad = 4 - desc.output.rank
        self._out_sizes = (1,) * pad + desc.output.sizes
        self._out_strides = (0,) * pad + desc.output.element_strides
        self._starts = tuple(starts)
        self.count = desc.output.element_count
        self._constants = {"MODE": int(self.mode), "DTYPE": _DTYPE_CLASS[desc.input.data_type]}
        self._kernels: dict[str, Kernel] = {}
        self._layout = "packed" if desc.output.is_packed else ("strided" if self.esize == 4 else "atomic")
        # resample_rows with float16 linear: 4 outputs (8 bytes) per thread, which keeps half the
        # W taps in registers (the 8-output form measured slower on the H100)
        self._half = int(self.mode == InterpolationMode.LINEAR and self.esize == 2 and _ROW_WALK_HALF)
        # Row-walk geometry by layout: resample_rows (or _half), and resample_rows_pat for float16
        # linear where every thread's W taps follow one pattern (resample_rows_half stands in for
        # it on inputs at an odd element offset).
        self._rows = {"rows": self._row_walk_shape()}
        if self._rows["rows"] is not None:
            self._layout = "rows"
        self._pat = self._tap_pattern() if self._half else None
        if self._pat is not None:
            self._rows["pattern"] = self._row_walk_shape(self._pat[0], _PATTERN_TUNING.get(self._pat[0], (None,))[0])
            if self._rows["pattern"] is None:
                self._pat = None
            else:
                self._layout = "pattern"
        # Uniform packers by layout (each one bound object, so bind groups cache by its identity):
        # they differ only in the row-walk geometry they write.
        self._packs = {
            lay: functools.partial(self._pack_uniforms, rows=self._rows.get(lay))
            for lay in ("rows", "pattern", "packed", "strided", "atomic")
        }
        self.kernel(self._layout)  # compile now: errors surface at compile time, not at first call

    def _row_walk_shape(self, v: int | None = None, band: int | None = None) -> tuple[int, int, int, int] | None:
        """(threads, blocks per row, bands per (n, c), rows per band) of resample_rows, or None
        where it does not apply: packed float32/float16 output whose rows are whole 16-byte blocks,
        and (linear) batch and channel axes not interpolated. ``v``: outputs per thread where the
        entry point is not the layout's default (resample_rows_pat), ``band`` its rows per band."""
        band = band or _ROW_WALK_BAND.get((int(self.mode), self.esize))
        if band is None or not self.output_desc.is_packed:
            return None
        n, c, h, w = self._out_sizes
        if (
            self.mode == InterpolationMode.NEAREST_NEIGHBOR
            and not _ROW_WALK_NEAREST_ANY_H
            and h <= ((1,) * 4 + self.input_desc.sizes)[-2]
        ):
            return None
        v = v or (4 if self._half else 16 // self.esize)
        if w % v or (self.mode == InterpolationMode.LINEAR and self.taps[:2] != (1, 1)):
            return None
        blocks = w // v
        # Rows per band: long enough that the input rows a band shares (upsampling along H) are
        # interpolated along W once (and the W taps are read once), short enough for many threads.
        band = min(h, band)
        bands = -(-h // band)
        threads = n * c * bands * blocks
        if threads >= 2**32:
            return None
        return threads, blocks, bands, band

    def _tap_pattern(self) -> tuple[int, int, int, int, int, int] | None:
        """resample_rows_pat's structure where float16 linear output columns, taken V at a time,
        all find their W taps at the same places of an NW-word window of their input row, the
        window of thread g starting at word k0 + g * step (k0 may be -1, and the last window may
        end one word past the row: those virtual words repeat the edge element, which is what the
        clamped taps there read). (V, NW, tap-0 halves, tap-1 halves (4 bits per output), step,
        k0), or None. Row starts must be whole words; every thread is checked against the table."""
        pad = 4 - self.input_desc.rank
        in_sizes = (1,) * pad + self.input_desc.sizes
        strides = (0,) * pad + self.input_desc.element_strides
        w_in, w_out = in_sizes[3], self._out_sizes[3]
        if strides[3] != 1 or w_in % 2 or w_in < 4 or any(strides[d] % 2 for d in range(3) if in_sizes[d] > 1):
            return None
        d = self.desc
        x = ref.input_coordinates(
            w_out,
            ((1.0,) * pad + tuple(d.scales))[3],
            ((0.5,) * pad + tuple(d.input_pixel_offsets))[3],
            ((-0.5,) * pad + tuple(d.output_pixel_offsets))[3],
        )
        i0, i1, _, _ = ref.linear_taps(x, w_in)
        if self.taps[3] == 1:
            i1 = i0  # not interpolated along W: tap 0 only
        for v in _PATTERN_V:
            groups = w_out // v
            if w_out % v or groups < 3:
                continue
            g0, g1 = i0.reshape(groups, v), i1.reshape(groups, v)
            mid = groups // 2  # an interior thread (no clamped taps) defines the pattern
            k_mid = int(min(g0[mid].min(), g1[mid].min())) >> 1
            step = (int(min(g0[mid + 1].min(), g1[mid + 1].min())) >> 1) - k_mid
            d0, d1 = g0[mid] - 2 * k_mid, g1[mid] - 2 * k_mid
            nw = int(max(d0.max(), d1.max())) // 2 + 1
            if d0.min() < 0 or d1.min() < 0 or nw > 6 or step < 0:
                continue
            k = k_mid + step * (np.arange(groups) - mid)
            e0, e1 = 2 * k[:, None] + d0, 2 * k[:, None] + d1
            if (
                k.min() >= -1
                and (k + nw - 1).max() <= w_in // 2
                and np.array_equal(np.clip(e0, 0, w_in - 1), g0)
                and np.array_equal(np.clip(e1, 0, w_in - 1), g1)
            ):
                pack = lambda dj: sum(int(h) << (4 * j) for j, h in enumerate(dj))  # noqa: E731
                return v, nw, pack(d0), pack(d1), step, int(k[0])
        return None

    def kernel(self, layout: str) -> Kernel:
        """The kernel for one output layout: rows, pattern, packed, strided or atomic."""
        if layout not in self._kernels:
            binding = {"rows": 7 if self._half else 2, "packed": 2, "strided": 1, "atomic": 3}.get(layout)
            constants = dict(self._constants, HALF=self._half) if layout == "rows" else self._constants
            entry = "resample_rows_half" if layout == "rows" and self._half else f"resample_{layout}"
            wg = 256
            if layout == "pattern":
                v, nw, d0, d1 = self._pat[:4]
                words = {4: 2, 6: 1, 8: 4, 12: 2, 16: 4}[v]  # store width of the entry point
                entry, binding = f"resample_rows_pat_v{words}", {1: 1, 2: 7, 4: 2}[words]
                wg = _PATTERN_TUNING.get(v, (None, 256))[1]
                constants = dict(self._constants, PV=v, NW=nw)
                for t, dt in (("TAP0", d0), ("TAP1", d1)):
                    constants.update({f"{t}_{q}": (dt >> (16 * i)) & 0xFFFF for i, q in enumerate("ABCD")})
            self._kernels[layout] = Kernel(
                self.device,
                op="resample",
                shader="resample.wgsl",
                entry_point=entry,
                workgroup_size=wg,
                bindings={"input": 0, "output": binding, "table": 5, "table4": 6},
                uniform_binding=4,
                constants=constants,
                vec4_bindings=frozenset({"output"}) if layout in ("rows", "pattern", "packed") else frozenset(),
            )
        return self._kernels[layout]

    def _pack_uniforms(self, residual: dict, rows=None) -> bytes:
        """The Params uniforms; ``rows``: the row-walk geometry of the layout dispatched (or None)."""
        u = np.zeros((8, 4), dtype=np.uint32)
        u[0] = self._out_sizes
        u[1] = self._out_strides
        u[2] = self._starts
        u[3] = self.taps
        u[4] = [s.bit_length() - 1 if s & (s - 1) == 0 else 32 for s in self._out_sizes]
        u[5] = [self.count, residual["input"] // self.esize, residual["output"] // self.esize, 0]
        u[6] = rows or (0, 0, 0, 0)
        if self._pat is not None:
            row_words = ((1,) * 4 + self.input_desc.sizes)[-1] // 2
            u[7] = [row_words, self._pat[4], np.int32(self._pat[5]).view(np.uint32), 0]
        return u.tobytes()

    def _blocks(self, residual: dict) -> int:
        base = residual["output"]
        return -(-(base + self.count * self.esize) // 16) - base // 16

    def __call__(self, input: GpuTensor, output: GpuTensor) -> GpuTensor:
        """Run the operator: read ``input``, write ``output`` (recorded into an open batch)."""
        if input.desc != self.input_desc:
            raise DmlValidationError("resample: input description differs from the compiled one")
        if output.desc != self.output_desc:
            raise DmlValidationError("resample: output description differs from the compiled one")
        input.check("input")
        output.check("output")
        layout = self._layout
        if layout == "pattern" and (input.offset // 2) % 2:  # resample_rows_pat needs rows of whole words
            layout = "rows" if self._rows["rows"] else "packed"
        if layout in ("rows", "pattern") and output.offset % 16:
            layout = "packed"  # resample_rows stores whole 16-byte blocks of whole rows
        if layout in ("rows", "pattern", "packed") and output.buffer.size % 16:
            layout = "strided" if self.esize == 4 else "atomic"  # a foreign buffer not padded to 16
        k = self.kernel(layout)
        tensors = {"input": input, "output": output, "table": self.table, "table4": self.table}
        invocations = (
            self._rows[layout][0]
            if layout in ("rows", "pattern")
            else (self._blocks if layout == "packed" else self.count)
        )
        k.dispatch(tensors, self._packs[layout], invocations)
        return output

    @property
    def cache_keys(self) -> list[str]:
        """The pipeline cache keys this operator uses."""
        return [k.key for k in self._kernels.values()]


def compile_resample(desc: AnyResampleDesc, *, device: Device | None = None) -> ResampleOperator:
    """Validate a :class:`ResampleDesc`, :class:`Resample1Desc`, :class:`Resample2Desc` or
    :class:`Resample3Desc` and build the operator once; call the result with (input, output) GPU
    tensors as often as needed."""
    if isinstance(desc, Resample3Desc):  # the antialiasing filter, else Resample2
        from ._resample_antialias import compile_resample3

        return compile_resample3(desc, device=device)
    if not isinstance(desc, (ResampleDesc, Resample1Desc, Resample2Desc)):
        raise DmlValidationError(
            f"desc: expected ResampleDesc, Resample1Desc or Resample2Desc; got {type(desc).__name__}"
        )
    desc.validate()
    return ResampleOperator(device or default_device(), desc)


def _per_axis(value, rank: int, default) -> tuple:
    """``value`` per axis: None = ``default``, a scalar = the same for every axis."""
    if value is None:
        return tuple(default)
    if np.isscalar(value):
        return (float(value),) * rank
    return tuple(value)


def resample(
    x,
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

"""ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER, spec section 3).

y[n, m, oh, ow] = sum_{c<C/G, kh, kw} (X'[n, g*C/G + c, oh*sH + kh*dH - padTop, ow*sW + kw*dW - padLeft] - xzp)
                                    * (W[m, c, kh, kw] - wzp[m])
with g = m // (M/G). Padding holds the input zero point, so padded taps contribute exactly 0.
Sums accumulate in 32-bit two's complement: a sum that overflows wraps around (as the int64
reference wrapped to int32 does); nothing saturates.

Two kernels compute it bit-exactly:

* ``portable`` (wgsl/convolution_integer.wgsl): one thread per output, core WGSL only;
* ``dot4`` (wgsl/convolution_integer_dot4.wgsl): packs input and filter into signed 4x8 words
  (one pass into scratch buffers owned by the compiled op), then a tiled implicit GEMM on
  ``dot4I8Packed``: double-buffered workgroup memory, output tiles of 16*RP pixels (8*RP with
  128 threads) by 64 or 128 channels, RP = 4..8 pixels by 4 channels a thread in named vec4
  accumulators; the k steps may be shared over workgroups that add atomically into the output,
  which the pack pass then zeroes (split-K in stream-K form: a workgroup's steps may cross tiles;
  see _gemm_shape). Used where the adapter compiles it.

1-D convolution takes 3-D tensors {N, C, W}; it runs as {N, C, 1, W}.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from .. import oneshot
from ..runtime import Device, GpuError, GpuTensor, Kernel, default_device
from ..tensor import DataType, DmlValidationError, TensorDesc, desc_for_array, integers

__all__ = [
    "ConvolutionIntegerDesc",
    "ConvolutionIntegerOperator",
    "compile_convolution_integer",
    "convolution_integer",
    "convolution_integer_output_sizes",
    "dot4_available",
]

OP = "convolution_integer"
INTEGER_TYPES = frozenset({DataType.INT8, DataType.UINT8})
KERNELS = ("auto", "portable", "dot4")
_WG = 256
_KC = 16  # k words per step of the dot4 kernel (KC in the WGSL)


def _is_count(v) -> bool:
    """Whether ``v`` is an integer >= 1 (bool excluded)."""
    return not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= 1


def _pair(name: str, value, count: int) -> tuple[int, ...]:
    """A tuple of ``count`` non-negative ints, or a named error."""
    t = integers(name, value)  # 1.5 or True is an error naming the entry, never truncated
    if len(t) != count:
        raise DmlValidationError(
            f"{name}: must have one entry per spatial dimension ({count}); got {len(t)} ({list(t)})"
        )
    for i, v in enumerate(t):
        if v < 0:
            raise DmlValidationError(f"{name}[{i}]: must be >= 0; got {v}")
    return t


def convolution_integer_output_sizes(
    input_sizes, filter_sizes, strides, dilations, start_padding, end_padding
) -> tuple[int, ...]:
    """{N, M, 1 + (In + pads - (1 + (K-1)*dilation)) // stride per spatial dim} (spec 3.3)."""
    spatial = tuple(
        1 + (i + p0 + p1 - (1 + (k - 1) * d)) // s
        for i, k, s, d, p0, p1 in zip(input_sizes[2:], filter_sizes[2:], strides, dilations, start_padding, end_padding)
    )
    return (input_sizes[0], filter_sizes[0]) + spatial


@dataclass(frozen=True)
class ConvolutionIntegerDesc:
    """DML_CONVOLUTION_INTEGER_OPERATOR_DESC.

    ``input`` {N, C, H, W} or {N, C, W}, ``filter`` {M, C/G, KH, KW} or {M, C/G, KW} (INT8 or
    UINT8, any mix), ``output`` {N, M, OH, OW} or {N, M, OW} INT32. ``input_zero_point`` is per
    tensor (all sizes 1, e.g. {1,1,1,1}); ``filter_zero_point`` per tensor or per output channel
    ({1,M,1,1}; at lower ranks M sits at index 1, or 0 for rank 1). Each zero point has its
    tensor's data type; None means 0. ``strides``, ``dilations``, ``start_padding`` and
    ``end_padding`` have one entry per spatial dimension (DimensionCount = rank - 2).
    """

    input: TensorDesc
    filter: TensorDesc
    output: TensorDesc
    input_zero_point: TensorDesc | None = None
    filter_zero_point: TensorDesc | None = None
    strides: tuple[int, ...] = (1, 1)
    dilations: tuple[int, ...] = (1, 1)
    start_padding: tuple[int, ...] = (0, 0)
    end_padding: tuple[int, ...] = (0, 0)
    group_count: int = 1

    @property
    def dimension_count(self) -> int:
        """DimensionCount: the number of spatial dimensions (1 or 2)."""
        return self.input.rank - 2

    def validate(self) -> None:
        """Raise :class:`DmlValidationError` naming the field and rule that a description breaks."""
        self.input.validate("input", ranks={3, 4}, data_types=INTEGER_TYPES)
        r = self.input.rank
        self.filter.validate("filter", ranks={r}, data_types=INTEGER_TYPES)
        self.output.validate("output", ranks={r}, data_types={DataType.INT32})
        nsp = r - 2
        strides = _pair("strides", self.strides, nsp)
        dilations = _pair("dilations", self.dilations, nsp)
        start = _pair("start_padding", self.start_padding, nsp)
        end = _pair("end_padding", self.end_padding, nsp)
        for name, vals in (("strides", strides), ("dilations", dilations)):
            for i, v in enumerate(vals):
                if v == 0:
                    raise DmlValidationError(f"{name}[{i}]: must be >= 1; got 0")
        g = self.group_count
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1:
            raise DmlValidationError(f"group_count: must be an integer >= 1; got {g!r}")
        n, c = self.input.sizes[:2]
        m, cg = self.filter.sizes[:2]
        if c % g:
            raise DmlValidationError(f"input.sizes[1]: channels C ({c}) must be divisible by group_count ({g})")
        if m % g:
            raise DmlValidationError(f"filter.sizes[0]: output channels M ({m}) must be divisible by group_count ({g})")
        if cg != c // g:
            raise DmlValidationError(f"filter.sizes[1]: must equal C/group_count ({c // g}); got {cg}")
        for d in range(nsp):
            size, k = self.input.sizes[2 + d], self.filter.sizes[2 + d]
            kernel, padded = 1 + (k - 1) * dilations[d], size + start[d] + end[d]
            if kernel > padded:
                raise DmlValidationError(
                    f"filter.sizes[{2 + d}]: the dilated kernel (1 + ({k} - 1) * {dilations[d]} = {kernel}) "
                    f"must not be larger than the padded input ({size} + {start[d]} + {end[d]} = {padded})"
                )
        self._validate_zero_points(m)
        expected = convolution_integer_output_sizes(self.input.sizes, self.filter.sizes, strides, dilations, start, end)
        rules = ["N (input.sizes[0])", "M (filter.sizes[0])"] + [
            "1 + (In + pads - (1 + (K-1)*dilation)) / stride"
        ] * nsp
        for d, (got, want) in enumerate(zip(self.output.sizes, expected)):
            if got != want:
                raise DmlValidationError(f"output.sizes[{d}]: must equal {rules[d]} = {want}; got {got}")
        self.output.check_no_overlap("output")

    def _validate_zero_points(self, m: int) -> None:
        xz, wz = self.input_zero_point, self.filter_zero_point
        if xz is not None:
            xz.validate("input_zero_point", ranks={1, 2, 3, 4})
            if xz.data_type != self.input.data_type:
                raise DmlValidationError(
                    f"input_zero_point.data_type: must equal input.data_type "
                    f"({self.input.data_type.name}); got {xz.data_type.name}"
                )
            if any(s != 1 for s in xz.sizes):
                raise DmlValidationError(
                    f"input_zero_point.sizes: must be all ones (per tensor, e.g. [1, 1, 1, 1]); got {list(xz.sizes)}"
                )
        if wz is not None:
            wz.validate("filter_zero_point", ranks={1, 2, 3, 4})
            if wz.data_type != self.filter.data_type:
                raise DmlValidationError(
                    f"filter_zero_point.data_type: must equal filter.data_type "
                    f"({self.filter.data_type.name}); got {wz.data_type.name}"
                )
            axis = min(1, wz.rank - 1)
            per_channel = tuple(m if d == axis else 1 for d in range(wz.rank))
            if any(s != 1 for s in wz.sizes) and tuple(wz.sizes) != per_channel:
                raise DmlValidationError(
                    f"filter_zero_point.sizes: must be all ones (per tensor) or {list(per_channel)} "
                    f"(per output channel, M = {m}); got {list(wz.sizes)}"
                )
        if xz is not None and wz is not None and xz.rank != wz.rank:
            raise DmlValidationError(
                f"filter_zero_point.sizes: the two zero points must have the same dimension "
                f"count; input_zero_point has {xz.rank}, filter_zero_point {wz.rank}"
            )

    # -- the 4-D view every kernel works on ---------------------------------------------------
    def as_4d(self) -> "ConvolutionIntegerDesc":
        """The same convolution on 4-D tensors: a 1-D one becomes {N, C, 1, W} (ORT's mapping)."""
        if self.input.rank == 4:
            return self
        return ConvolutionIntegerDesc(
            _insert_h(self.input),
            _insert_h(self.filter),
            _insert_h(self.output),
            self.input_zero_point,
            self.filter_zero_point,
            (1, *self.strides),
            (1, *self.dilations),
            (0, *self.start_padding),
            (0, *self.end_padding),
            self.group_count,
        )


def _insert_h(d: TensorDesc) -> TensorDesc:
    """{A, B, W} -> {A, B, 1, W} with the same element addresses (stride 0 on the new axis)."""
    s = d.element_strides
    return TensorDesc(
        d.data_type,
        (d.sizes[0], d.sizes[1], 1, d.sizes[2]),
        (s[0], s[1], 0, s[2]),
        d.total_tensor_size_in_bytes,
        d.guaranteed_base_offset_alignment,
    )


# ------------------------------------------------------------------------------------------------
# Fast-path availability (per device, decided once by compiling the kernel)
# ------------------------------------------------------------------------------------------------
_dot4_ok: "weakref.WeakKeyDictionary[Device, bool]" = weakref.WeakKeyDictionary()


def dot4_available(device: Device | None = None) -> bool:
    """Whether ``device`` compiles the dot4I8Packed kernels (decided once per device)."""
    dev = device or default_device()
    if dev not in _dot4_ok:
        try:
            for entry in ("pack", "convolution_integer_dot4"):
                _dot4_kernel(dev, entry, {"X_SIGNED": 0, "W_SIGNED": 1, "XZP": 0, "WZP": 0})
            _dot4_ok[dev] = True
        except GpuError:
            _dot4_ok[dev] = False
    return _dot4_ok[dev]


_BINDINGS = {
    "input": 0,
    "filter": 1,
    "input_zero_point": 2,
    "filter_zero_point": 3,
    "output": 4,
    "packed_input": 6,
    "packed_filter": 7,
    "packed_input_ro": 8,
    "packed_filter_ro": 9,
}


def _dot4_kernel(device: Device, entry: str, constants: dict, workgroup_size: int = _WG) -> Kernel:
    gemm = ("input_zero_point", "filter_zero_point", "output", "packed_input_ro", "packed_filter_ro")
    uses = {
        "pack": ("input", "filter", "packed_input", "packed_filter"),
        "pack_zero": ("input", "filter", "packed_input", "packed_filter", "output"),
        "convolution_integer_dot4": gemm,
        "convolution_integer_dot4_splitk": gemm,
        "dot4_ceiling": ("output",),
    }[entry]
    outputs = {"pack": ("packed_input", "packed_filter"), "pack_zero": ("packed_input", "packed_filter", "output")}.get(
        entry, ("output",)
    )
    bindings = {k: _BINDINGS[k] for k in uses}
    if entry == "convolution_integer_dot4_splitk":
        bindings["output"] = 10  # the output as array<atomic<i32>>
    return Kernel(
        device,
        op=OP,
        shader="convolution_integer_dot4.wgsl",
        entry_point=entry,
        bindings=bindings,
        uniform_binding=5,
        constants=constants,
        workgroup_size=workgroup_size,
        outputs=outputs,
    )


_WAVE = 132  # workgroups of the dot4 GEMM resident at once on the H100 (one per SM)
#: The cost model, fitted on the H100 (Vulkan) over 266 tile / split configurations of the four
#: benchmark layers (per configuration: median of 20 runs): a wave of workgroups costs
#: (k steps a workgroup * step time + _WAVE_OVERHEAD_US), plus _WAVE_OVERHEAD_US for each further
#: tile segment a workgroup runs, plus the zeroing in the pack pass when split. Step time of a
#: 128-channel tile (512 threads) with RP pixels a thread: _STEP_US_A + _STEP_US_B * RP; a
#: 64-channel tile (256 threads): _STEP_US_256 times that.
_STEP_US_A, _STEP_US_B, _STEP_US_256 = 0.37, 0.355, 0.6
_WAVE_OVERHEAD_US = 5.3
_ZERO_US, _ZERO_US_PER_MB = 1.2, 0.22


def _tile_pixels(threads: int, tm: int, rp: int) -> int:
    """Pixels of a GEMM tile: threads / (tm / 4) threads along the pixels, rp pixels each."""
    return threads // (tm // 4) * rp


def _tile_fits(device: Device | None, threads: int, tp: int, tm: int) -> bool:
    """Whether ``device`` runs a tp x tm tile in workgroups of ``threads`` (workgroup memory: two
    A and two B buffers of 5 vec4s a row; invocations a workgroup)."""
    if device is None:
        return tp * tm <= 128 * 128
    lim = device.limits
    return (
        lim.get("max-compute-workgroup-storage-size", 0) >= 2 * (tp + tm) * 5 * 16
        and lim.get("max-compute-invocations-per-workgroup", 0) >= threads
        and lim.get("max-compute-workgroup-size-x", 0) >= threads
    )


def _gemm_shape(
    device: Device | None,
    pixels: int,
    mg: int,
    groups: int,
    k_steps: int = 1,
    out_mb: float = 0.0,
    rp: int | None = None,
    threads: int | None = None,
    tm: int | None = None,
) -> tuple[int, int, int, int]:
    """(pixels per thread, threads per workgroup, channels a tile, k steps per workgroup) of the
    dot4 GEMM, chosen by a cost model fitted on the H100 (Vulkan; see _STEP_US_A). Every tile
    holds one workgroup per SM there, so workgroups run in waves of _WAVE and a partial last wave
    costs a whole one. Candidates: RP = 4..8 pixels a thread in 64-channel tiles of 256 threads
    (16*RP pixels) or 512 threads (32*RP) or 128-channel tiles of 512 threads (16*RP), where the
    adapter has the workgroup memory; each unsplit or split-K in stream-K form (the k steps of
    all tiles shared evenly over 1-4 waves of workgroups, or each tile split in 2-4). The cheapest
    wins; a split choice must be 3% cheaper than an unsplit one. Any choice is exact; this one only
    decides speed. ``rp``, ``threads`` and ``tm``, where given, fix those (128 threads: 8*RP
    pixels by 64 channels, costed as the 256-thread tile)."""
    shapes = [
        (nt, c)
        for nt, c in ((256, 64), (512, 128), (512, 64), (128, 64))
        if (threads or nt) == nt and (tm or c) == c and (threads == 128 or nt != 128)
    ]
    best = None
    for nt, c in shapes:
        for r in (rp,) if rp else range(4, 9):
            tp = _tile_pixels(nt, c, r)
            if not _tile_fits(device, nt, tp, c) and not (rp and threads):
                continue
            r128 = tp * c / (16 * 128)  # the RP of a 128-channel tile of the same size
            step = _STEP_US_A + _STEP_US_B * r128 if nt == 512 else _STEP_US_256 * (_STEP_US_A + _STEP_US_B * 2 * r128)
            tiles = -(-pixels // tp) * -(-mg // c) * groups
            line = tiles * k_steps
            pers = {k_steps} | {-(-k_steps // s) for s in (2, 3, 4)}
            if line < 2**31:
                pers |= {min(k_steps, -(-line // (j * _WAVE))) for j in (1, 2, 3, 4)}
            for per in sorted(pers, reverse=True):
                wgs = -(-line // per)
                waves = -(-wgs // _WAVE)
                segments = 1 if k_steps % per == 0 else 2
                cost = waves * (per * step + _WAVE_OVERHEAD_US) + (segments - 1) * _WAVE_OVERHEAD_US
                if per < k_steps:
                    if line >= 2**31:
                        continue
                    cost = 1.03 * (cost + _ZERO_US + _ZERO_US_PER_MB * out_mb)
                if best is None or cost < best[0]:
                    best = (cost, r, nt, c, per)
    if best is None:
        raise DmlValidationError(f"tile_channels: {tm} channels a tile need 512 threads; got threads {threads}")
    return best[1:]


def ceiling_kernel(device: Device) -> Kernel:
    """The benchmark's dot4I8Packed-from-registers kernel (16 chains of ``steps`` dot products per
    thread, ``steps`` a multiple of 4; uniforms: gemm.x = steps, bases.w = threads that store)."""
    return _dot4_kernel(device, "dot4_ceiling", {})


# ------------------------------------------------------------------------------------------------
# Compiled operator
# ------------------------------------------------------------------------------------------------
class ConvolutionIntegerOperator:
    """A compiled ConvolutionInteger; call it as ``op(input, filter, output, input_zero_point=None,
    filter_zero_point=None)`` with :class:`GpuTensor` objects whose descriptions equal the
    compiled ones (zero points exactly when the description has them). Returns ``output``.

    ``kernel`` is "portable" or "dot4" (the one chosen at compile time); ``dispatches`` is the
    number of GPU dispatches per call (1 portable, 2 dot4: pack input and filter, GEMM).
    ``pixels_per_thread`` (4 to 8), ``threads`` (128, 256 or 512 a workgroup), ``tile_channels``
    (64, or 128 with 512 threads; a tile has threads / (tile_channels / 4) * pixels_per_thread
    pixels; ``tile`` is (pixels, channels)) and either ``split_k`` (cut each tile's k steps into
    that many slices, >= 1; capped at the step count, and fewer where the steps per slice cover
    them) or ``steps_per_workgroup`` (stream-K: each workgroup runs that many consecutive k steps
    of the tile-major line of all tiles' steps, crossing tile boundaries) override the dot4 tile and split choice (for
    benchmarks and tests). ``slice_steps`` is the k steps a workgroup runs, ``k_steps`` those of a
    tile, ``slices`` the most segments a tile is cut into (1: unsplit) and ``workgroups`` the GEMM's
    workgroup count.
    """

    def __init__(
        self,
        device: Device,
        desc: ConvolutionIntegerDesc,
        kernel: str,
        *,
        pixels_per_thread=None,
        threads=None,
        tile_channels=None,
        split_k=None,
        steps_per_workgroup=None,
    ):
        self.device = device
        self.desc = desc
        self.kernel = kernel
        d = desc.as_4d()
        self._d4 = d
        n, c, h, w = d.input.sizes
        m, cg, kh, kw = d.filter.sizes
        g = d.group_count
        self.mg, self.cg4 = m // g, -(-cg // 4)
        self.cg4p = -(-self.cg4 // 4) * 4  # channel words of a pixel / tap, padded to whole vec4s
        self.pixels = n * d.output.sizes[2] * d.output.sizes[3]
        self.k_words = kh * kw * self.cg4p
        wz = d.filter_zero_point
        self.wzp_mode = 0 if wz is None else (2 if wz.element_count > 1 else 1)
        x_signed = d.input.data_type == DataType.INT8
        w_signed = d.filter.data_type == DataType.INT8
        consts = {
            "X_SIGNED": int(x_signed),
            "W_SIGNED": int(w_signed),
            "XZP": int(d.input_zero_point is not None),
            "WZP": self.wzp_mode,
        }
        # Dummy tensors stand in for absent zero points (the shader never reads them).
        self._dummy = {}
        for name, ref in (("input_zero_point", d.input), ("filter_zero_point", d.filter)):
            if getattr(d, name) is None:
                self._dummy[name] = GpuTensor(
                    device, TensorDesc(ref.data_type, (1, 1, 1, 1)), device.create_buffer(16, f"{OP}.{name}.absent"), 0
                )
        if kernel == "portable":
            self._main = Kernel(
                device,
                op=OP,
                shader="convolution_integer.wgsl",
                entry_point="convolution_integer_portable",
                bindings={
                    k: _BINDINGS[k] for k in ("input", "filter", "input_zero_point", "filter_zero_point", "output")
                },
                uniform_binding=5,
                constants=consts,
                workgroup_size=_WG,
            )
            self.dispatches = 1
        else:
            # RP pixels x 4 channels a thread; workgroups of 128 or 256 threads (8 or 16 along the
            # pixels, 16 along the channels: tiles of (threads/16)*RP pixels by 64 channels) or of
            # 512 (16 along the pixels, 32 along the channels: 16*RP pixels by 128 channels).
            need_sx = self.wzp_mode != 0 or not w_signed
            need_sw = d.input_zero_point is not None or not x_signed
            fast = {"X_FAST": int(d.input.element_strides[1] % 4 == 0 and cg % 16 == 0), "W_FAST": int(cg % 16 == 0)}
            if pixels_per_thread is not None and (not _is_count(pixels_per_thread) or not 4 <= pixels_per_thread <= 8):
                raise DmlValidationError(
                    f"pixels_per_thread: must be an integer from 4 to 8; got {pixels_per_thread!r}"
                )
            if threads is not None and (not _is_count(threads) or threads not in (128, 256, 512)):
                raise DmlValidationError(f"threads: must be 128, 256 or 512; got {threads!r}")
            self.k_steps = kh * kw * -(-self.cg4p // _KC)
            if tile_channels not in (None, 64, 128) or isinstance(tile_channels, bool):
                raise DmlValidationError(f"tile_channels: must be 64 or 128; got {tile_channels!r}")
            self.rp, self.threads, tm, auto_steps = _gemm_shape(
                device,
                self.pixels,
                self.mg,
                g,
                self.k_steps,
                d.output.element_count * 4 / 1e6,
                pixels_per_thread,
                threads,
                tile_channels,
            )
            tp = _tile_pixels(self.threads, tm, self.rp)
            self.tile = (tp, tm)
            if not _tile_fits(device, self.threads, tp, tm):
                raise DmlValidationError(
                    f"threads, pixels_per_thread, tile_channels: the {tp}x{tm} tile in {self.threads}-thread "
                    f"workgroups needs {2 * (tp + tm) * 80} bytes of workgroup memory; this adapter has "
                    f"max-compute-workgroup-storage-size {device.limits.get('max-compute-workgroup-storage-size')} "
                    f"and max-compute-invocations-per-workgroup "
                    f"{device.limits.get('max-compute-invocations-per-workgroup')}"
                )
            self.ptiles = -(-self.pixels // tp)
            self.mtiles = -(-self.mg // tm)
            self.tiles = self.ptiles * self.mtiles * g
            # Split-K in stream-K form: the k steps of all tiles in one line, each workgroup running
            # `slice_steps` consecutive steps of it (crossing into the next tile where they do not
            # divide a tile's steps); `slices` is the most segments a tile is cut into.
            if split_k is not None and steps_per_workgroup is not None:
                raise DmlValidationError("split_k, steps_per_workgroup: give at most one of them")
            if steps_per_workgroup is not None:
                if not _is_count(steps_per_workgroup):
                    raise DmlValidationError(
                        f"steps_per_workgroup: must be an integer >= 1; got {steps_per_workgroup!r}"
                    )
                self.slice_steps = min(int(steps_per_workgroup), self.k_steps)
            elif split_k is not None:
                if not _is_count(split_k):
                    raise DmlValidationError(f"split_k: must be an integer >= 1; got {split_k!r}")
                self.slice_steps = -(-self.k_steps // min(int(split_k), self.k_steps))
            else:
                self.slice_steps = auto_steps
            self.slices = -(-self.k_steps // self.slice_steps)
            line = self.tiles * self.k_steps
            if self.slices > 1 and line >= 2**31:
                raise DmlValidationError(f"split_k: tiles x k steps ({line}) must stay below 2**31 to split")
            self.workgroups = -(-line // self.slice_steps)
            split = self.slices > 1
            # zw' = zw - 128 for UINT8 filters, zx' = zx - 128 for UINT8 inputs (see the WGSL header).
            self._zero_linear = split and desc.output.is_packed
            if split:
                fast["OUT_PACKED"] = int(self._zero_linear)
            self._pack_xw = _dot4_kernel(device, "pack_zero" if split else "pack", {**consts, **fast})
            self._main = _dot4_kernel(
                device,
                "convolution_integer_dot4_splitk" if split else "convolution_integer_dot4",
                {**consts, "RP": self.rp, "TM": tm, "NEED_SX": int(need_sx), "NEED_SW": int(need_sw)},
                self.threads,
            )
            self.x_words = n * h * w * g * self.cg4p
            self.w_words = m * self.k_words
            self._packed_input = GpuTensor(
                device,
                TensorDesc(DataType.UINT32, (self.x_words,)),
                device.create_buffer(4 * self.x_words, f"{OP}.packed_input"),
                0,
            )
            self._packed_filter = GpuTensor(
                device,
                TensorDesc(DataType.UINT32, (self.w_words,)),
                device.create_buffer(4 * self.w_words, f"{OP}.packed_filter"),
                0,
            )
            self.dispatches = 2
        self._pack = self._pack_uniforms  # one bound method: bind groups cache by its identity

    def _pack_uniforms(self, residual: dict) -> bytes:
        d = self._d4
        u = np.zeros((13, 4), dtype=np.uint32)
        zs = d.filter_zero_point.element_strides[min(1, d.filter_zero_point.rank - 1)] if self.wzp_mode == 2 else 0
        cg, kh, kw = d.filter.sizes[1:]
        u[0], u[1] = d.input.sizes, d.input.element_strides
        u[2], u[3] = d.filter.sizes, d.filter.element_strides
        u[4], u[5] = d.output.sizes, d.output.element_strides
        u[6] = [*d.strides, *d.dilations]
        u[7] = [*d.start_padding, d.group_count, self.mg]
        u[8] = [
            residual.get("input", 0),
            residual.get("filter", 0),
            residual.get("output", 0) // 4,
            d.output.element_count,
        ]
        u[9] = [residual.get("input_zero_point", 0), residual.get("filter_zero_point", 0), zs, self.cg4]
        if self.kernel == "dot4":
            u[10] = [self.pixels, self.k_words, self.cg4p, self.ptiles]
            u[11] = [self.mtiles, (cg * kh * kw) % 2**32, self.x_words, self.workgroups]
            u[12] = [self.k_steps, self.slice_steps, 0, self.tiles]
        return u.tobytes()

    def __call__(
        self,
        input: GpuTensor,
        filter: GpuTensor,
        output: GpuTensor,
        input_zero_point: GpuTensor | None = None,
        filter_zero_point: GpuTensor | None = None,
    ) -> GpuTensor:
        """Run the convolution (recorded into an open ``device.batch()`` if there is one)."""
        d = self.desc
        given = {
            "input": input,
            "filter": filter,
            "output": output,
            "input_zero_point": input_zero_point,
            "filter_zero_point": filter_zero_point,
        }
        for name, t in given.items():
            want = getattr(d, name)
            if (t is None) != (want is None):
                raise DmlValidationError(
                    f"{OP}: {name} is {'missing' if t is None else 'given'} but the compiled "
                    f"description {'has' if want is not None else 'has none'}"
                )
            if t is not None:
                if t.desc != want:
                    raise DmlValidationError(f"{OP}: {name} description differs from the compiled one")
                t.check(name)
        # Kernels see 1-D tensors as 4-D: same buffer and offset, description with a 0-stride axis.
        if d.input.rank == 3:
            input, filter, output = (
                GpuTensor(t.device, _insert_h(t.desc), t.buffer, t.offset) for t in (input, filter, output)
            )
        zps = {
            "input_zero_point": input_zero_point or self._dummy.get("input_zero_point"),
            "filter_zero_point": filter_zero_point or self._dummy.get("filter_zero_point"),
        }
        if self.kernel == "portable":
            self._main.dispatch(
                {"input": input, "filter": filter, **zps, "output": output}, self._pack, d.output.element_count
            )
            return output
        with self.device.batch():
            packs = {
                "input": input,
                "filter": filter,
                "packed_input": self._packed_input,
                "packed_filter": self._packed_filter,
            }
            n_pack = self.x_words // 4 + self.w_words
            if self.slices > 1:  # the pack also zeroes the output the slices add into
                packs["output"] = output
                n_pack += d.output.element_count
            self._pack_xw.dispatch(packs, self._pack, n_pack)
            self._main.dispatch(
                {
                    **zps,
                    "output": output,
                    "packed_input_ro": self._packed_input,
                    "packed_filter_ro": self._packed_filter,
                },
                self._pack,
                self.workgroups * self.threads,
            )
        return output

    @property
    def cache_keys(self) -> list[str]:
        """The pipeline cache keys this operator uses."""
        ks = [self._main]
        if self.kernel == "dot4":
            ks = [self._pack_xw, self._main]
        return [k.key for k in ks]


def compile_convolution_integer(
    desc: ConvolutionIntegerDesc, *, device: Device | None = None, kernel: str = "auto"
) -> ConvolutionIntegerOperator:
    """Validate ``desc`` and build the operator once; call the result with GPU tensors (see
    :class:`ConvolutionIntegerOperator`). ``kernel``: "portable", "dot4" (raises
    :class:`GpuError` where the adapter cannot compile it) or "auto" (dot4 where it compiles and
    the layer is a dense one: at least 16 channels per group in and out; portable otherwise)."""
    if kernel not in KERNELS:
        raise DmlValidationError(f"kernel: must be one of {', '.join(KERNELS)}; got {kernel!r}")
    desc.validate()
    dev = device or default_device()
    if kernel == "auto":
        m, cg = desc.filter.sizes[:2]
        dense = cg >= 16 and m // desc.group_count >= 16
        kernel = "dot4" if dense and dot4_available(dev) else "portable"
    elif kernel == "dot4" and not dot4_available(dev):
        raise GpuError(f"{OP}: {dev.name} does not compile the dot4I8Packed kernel; use kernel='portable'")
    return ConvolutionIntegerOperator(dev, desc, kernel)


# ------------------------------------------------------------------------------------------------
# numpy one-liner
# ------------------------------------------------------------------------------------------------
def _zero_point_array(name: str, zp, dtype: np.dtype, m: int | None, rank: int) -> np.ndarray | None:
    """A zero point (int, 0-d array, (M,) or (1, M, 1, 1) array) as a DML-shaped array of ``dtype``."""
    if zp is None:
        return None
    a = np.asarray(zp)
    if a.dtype.kind not in "iu":
        raise DmlValidationError(f"{name}: must be an integer or integer array; got dtype {a.dtype}")
    info = np.iinfo(dtype)
    if a.size and (a.min() < info.min or a.max() > info.max):
        raise DmlValidationError(
            f"{name}: values must fit the data type {np.dtype(dtype).name} "
            f"[{info.min}, {info.max}]; got {a.min()}..{a.max()}"
        )
    if a.dtype != dtype and a.dtype.itemsize == 1:
        raise DmlValidationError(
            f"{name}.data_type: must equal its tensor's data type ({np.dtype(dtype).name}); got {a.dtype.name}"
        )
    if a.size == 1:
        return a.astype(dtype).reshape((1,) * rank)
    if m is not None and a.size == m and a.shape in ((m,), (1, m, 1, 1), (1, m, 1)):
        return a.astype(dtype).reshape((1, m) + (1,) * (rank - 2))
    raise DmlValidationError(
        f"{name}.sizes: must be a scalar"
        + (f", (M,) or (1, M, 1, 1) with M = {m}" if m else "")
        + f"; got shape {a.shape}"
    )


def convolution_integer(
    x,
    w,
    x_zero_point=None,
    w_zero_point=None,
    *,
    strides=(1, 1),
    dilations=(1, 1),
    start_padding=(0, 0),
    end_padding=(0, 0),
    group_count=1,
    device: Device | None = None,
) -> np.ndarray:
    """ConvolutionInteger on numpy arrays; returns the int32 output.

    2-D: ``x`` {N, C, H, W}, ``w`` {M, C/G, KH, KW}; 1-D: ``x`` {N, C, W}, ``w`` {M, C/G, K} with
    length-1 tuples. int8 or uint8 each (any mix). Zero points are ints, 0-d arrays, or per output
    channel arrays of shape (M,) / (1, M, 1, 1) for ``w_zero_point``; their values must fit their
    tensor's type. Padding holds the input zero point; sums wrap in 32 bits. Validation happens
    before any GPU work.
    """
    xa = oneshot.as_input(x, "x", "a 3-D {N, C, W} or 4-D {N, C, H, W} array")
    wa = oneshot.as_input(w, "w", "a 3-D {M, C/G, K} or 4-D {M, C/G, KH, KW} array")
    if xa.size == 0 or wa.size == 0:
        out_sizes = convolution_integer_output_sizes(
            xa.shape, wa.shape, tuple(strides), tuple(dilations), tuple(start_padding), tuple(end_padding)
        )
        if 0 not in out_sizes:
            raise DmlValidationError(f"x, w: shapes {xa.shape} and {wa.shape}: a size-0 axis yields no output")
        return oneshot.empty_result(out_sizes, np.int32)
    xd, _ = desc_for_array(xa)
    wd, _ = desc_for_array(wa)
    if (
        xa.ndim == 3
        and tuple(strides) == (1, 1)
        and tuple(dilations) == (1, 1)
        and tuple(start_padding) == (0, 0)
        and tuple(end_padding) == (0, 0)
    ):
        strides, dilations, start_padding, end_padding = (1,), (1,), (0,), (0,)
    rank = xa.ndim if xa.ndim in (3, 4) else 4
    xz = wz = None
    if xa.dtype in (np.int8, np.uint8):
        xz = _zero_point_array("input_zero_point", x_zero_point, xa.dtype, None, rank)
    elif x_zero_point is not None:
        xz = np.asarray(x_zero_point)
    if wa.dtype in (np.int8, np.uint8) and wa.ndim >= 1:
        wz = _zero_point_array("filter_zero_point", w_zero_point, wa.dtype, wa.shape[0], rank)
    elif w_zero_point is not None:
        wz = np.asarray(w_zero_point)
    xzd = desc_for_array(xz)[0] if xz is not None else None
    wzd = desc_for_array(wz)[0] if wz is not None else None
    nsp = max(xa.ndim - 2, 0)
    try:
        out_sizes = convolution_integer_output_sizes(
            xa.shape, wa.shape, tuple(strides), tuple(dilations), tuple(start_padding), tuple(end_padding)
        )
    except (TypeError, ZeroDivisionError, ValueError):
        out_sizes = xa.shape
    if len(out_sizes) != xa.ndim or any(s <= 0 for s in out_sizes) or nsp not in (1, 2):
        out_sizes = xa.shape  # let validate() name the broken rule
    desc = ConvolutionIntegerDesc(
        xd,
        wd,
        TensorDesc(DataType.INT32, out_sizes),
        xzd,
        wzd,
        tuple(strides),
        tuple(dilations),
        tuple(start_padding),
        tuple(end_padding),
        group_count,
    )
    out = oneshot.OUTPUT
    return oneshot.run(compile_convolution_integer, desc, [xa, wa, out, xz, wz], device=device)  # validates first

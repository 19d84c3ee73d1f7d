"""ConvolutionInteger (DML_OPERATOR_CONVOLUTION_INTEGER, spec section 3).

y[n, m, oh, ow] = sum_{c<C/G, kh, kw} (X'[n, g*C/G + c, oh*sH + kh*dH - padTop, ow*sW + kw*dW - padLeft] - xzp)
                                    * (W[m, c, kh, kw] - wzp[m])
with g = m // (M/G). Padding holds the input zero point, so padded taps contribute exactly 0.
Sums accumulate in 32-bit two's complement: a sum that overflows wraps around (as the int64
reference wrapped to int32 does); nothing saturates.

Nine kernels compute it bit-exactly; :func:`plan_convolution_integer` chooses one from the
description and the adapter's capabilities (``dmlwgsl explain convolution_integer`` prints the
choice and why):

* ``portable`` (wgsl/convolution_integer.wgsl): one thread per output, core WGSL only; the
  reference every fast path is tested against;
* ``depthwise`` (wgsl/convolution_integer_depthwise.wgsl): one input channel per group (C/G = 1)
  on adapters with the packed dot product: eight neighbouring outputs of a row a thread, no
  workgroup memory; rows of at most 8 taps (contiguous input rows, W stride 1 or 2, no W
  dilation) as one or two packed 4x8 dot products an output, taps outside the input reading the
  zero point (the row's raw words masked at the input's edges), kernels of 5-8 rows as a loop of
  constant count; other layers a tap at a time (binds whole tensors: not past the binding limit);
* ``depthwise_fma`` (wgsl/convolution_integer_fma.wgsl): C/G = 1 layers of at most 64
  taps on GPUs where the depthwise kernel's fast rows do not apply (W dilation, W stride above 2,
  kernels wider than 8, input rows that are not contiguous, no packed dot product), stride-1
  layers of 25 taps and more or of 2-D planes of 1024 outputs and more, and input rows that are not
  whole words (odd widths) from 256 outputs a plane: the input window and taps staged in workgroup
  memory as f32 (x - zx, w - zw), each thread four outputs of QR rows (neighbours where W stride is 1 or 2 without W
  dilation, else TQ columns apart) on f32 fused multiply-adds (sums of at most 258 products of
  8-bit differences are integers below 2^24: exact);
* ``grouped_fma`` (same file): on GPUs grouped stride-1 layers (G > 1) of at most 258 taps a
  group (C/G x KH x KW; 1x1 layers of 32+ channels a group excepted) and G = 1 layers of C < 4 and
  M < 16 at any stride (stems with few outputs); W stride 1 or 2, no W dilation, kernels at most 8
  wide: the group's input window and a block of 4-16 output channels' taps staged as f32, each
  thread four neighbouring outputs for four channels (on request past 258 taps: f32 sums of a few
  channels at a time, each exact, added in i32);
* ``direct`` (wgsl/convolution_integer_direct.wgsl): few channels per group (depthwise, small
  groups, small-channel stems without the packed dot product): the input window of a tile of
  outputs and a block of filters staged once in workgroup memory as i32 values, then four output
  columns a thread of plain multiply-adds;
* ``direct_dot4`` (wgsl/convolution_integer_direct_dot4.wgsl): the same tiling with four channels
  a staged word on ``dot4I8Packed`` (4 <= C/G, e.g. ResNeXt's groups of 8);
* ``dot4`` (wgsl/convolution_integer_dot4.wgsl): dense layers (at least 16 channels per group in
  and out) on adapters with the packed 4x8 dot product: a pack pass (input and filter into signed
  4x8 words, in workspace buffers), then a tiled implicit GEMM on ``dot4I8Packed`` (output tiles
  of 16*RP pixels by 64 or 128 channels, RP = 4..8, or 128 pixels by 32 channels for groups of at
  most 32 output channels on GPUs; split-K in stream-K form where a wave of
  workgroups would otherwise be partial; see _gemm_shape); its K is the taps' channel words (each
  tap's padded to whole vec4s) end to end in steps of 16 words, so 96 channels 3x3 take 14 steps;
* ``dot4_im2col`` (same file): the GEMM with a pixel's whole C/G x KH x KW window as its K, four
  taps a word (a C = 3 7x7 stem is 3 k steps, not 13 of one padded word a tap), where that saves
  over 40 % of the k steps; its pack writes the im2col rows, gathering words from contiguous input
  rows: each kernel row as whole words where that padding costs no k step (the stem), else each
  word from at most two 4-byte spans (KW >= 3), else byte by byte. On CPU adapters grouped layers
  and layers of at most 2048 output positions take direct_dot4 instead (one pass);
* ``dot4_window`` (wgsl/convolution_integer_dot4_window.wgsl): the layers the im2col GEMM would
  take (G = 1; on GPUs also C/G < 16, M/G >= 16 where the whole window packs into fewer k steps,
  e.g. C = 8 3x3, and grouped layers of 2-15 channels a group that the grouped FMA kernel does not
  take, from 32 taps a group) whose input rows it can walk (contiguous rows, no W dilation, KW <= 8), on GPUs and
  CPU adapters: one pass, each thread one output pixel's whole window (kernel rows of 1 or 2 words
  from 2-3 word loads and funnel shifts, the lanes outside the input the zero point) against a
  block of 16 or 32 output channels' filter rows staged in workgroup memory, every thread reading
  the same staged words (broadcast); no packed copy, no 16-word k steps; workgroups walk several
  pixel tiles past about 400 of them. On CPU adapters also dense layers (G = 1) of at most 256
  output positions. Any window whose filter block fits the workgroup memory (requested, it also
  gathers four words at a time where rows cannot be walked).

Past the binding limit the one-pass kernels (portable, direct, direct_dot4) run in steps, each
binding windows of the input and output (and filter): whole batch items where one fits, else
bands of output rows (columns, channels, groups) of one item, with the input rows the band reads.

1-D convolution takes 3-D tensors {N, C, W}; it runs as {N, C, 1, W}.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from .. import oneshot
from ..operator import Operator
from ..plan import Capabilities, Plan, PlanError, placement_of, step
from ..runtime import Device, GpuTensor, Kernel, default_device
from ..shader import interface
from ..tensor import DataType, DmlValidationError, TensorDesc, desc_for_array, integers

__all__ = [
    "ConvolutionIntegerDesc",
    "ConvolutionIntegerOperator",
    "add_explain_arguments",
    "ceiling_kernel",
    "ceiling_uniforms",
    "compile_convolution_integer",
    "convolution_integer",
    "convolution_integer_output_sizes",
    "dot4_available",
    "explain_plan",
    "plan_convolution_integer",
]

OP = "convolution_integer"
INTEGER_TYPES = frozenset({DataType.INT8, DataType.UINT8})
KERNELS = (
    "portable",
    "depthwise",
    "depthwise_fma",
    "grouped_fma",
    "direct",
    "direct_dot4",
    "dot4",
    "dot4_im2col",
    "dot4_window",
)
#: On a CPU adapter, layers im2col would take if each tap filled whole 16-word k steps (the scope
#: measured before the GEMM ran the taps end to end) run on direct_dot4 instead of a GEMM where
#: they are grouped (G > 1) or have at most this many output positions (N x OH x OW). lavapipe,
#: Mesa 25, interleaved three times, direct_dot4 against the im2col GEMM: grouped G=2 2.51x (7x7),
#: 1.67x (28x28), 1.51x (4x64x56x56); C=3 7x7 stride-2 stems 1.68x (256 positions), 1.85x (1024),
#: C=24 on 8x8 1.35x; but a C=3 stem of 25,088 positions 0.78x and C=32 on 2x56x56 (6,272) 0.87x.
#: (Dense layers on the channel-padded GEMM keep it: 1.0-1.7x faster than direct_dot4 on 1x1 and
#: 3x3 layers of 49 to 6,272 positions; 3x3 layers of 16-64 positions were 1.05-1.84x faster on
#: direct_dot4, left for a later rule.)
_CPU_DIRECT_POSITIONS = 2048
#: CPU adapters: grouped layers of at most this many channels a group (or 1x1 kernels) take
#: grouped_fma (see plan_convolution_integer).
_CPU_GFMA_CHANNELS = 4
#: CPU adapters: dense layers (G = 1) take grouped_fma where they are 1x1 of at most this many
#: multiply-adds (C x M x output positions), or of C <= _CPU_GFMA_CHANNELS on at most
#: _CPU_GFMA_STEM_POSITIONS output positions. lavapipe (Mesa 25), 30 random quick rows whose plan
#: a first rule (every 1x1 and C <= 4 dense layer) moved, best of two runs a tree: 0.71-2.86x,
#: geometric mean 1.38x; it lost on C <= 4 stems of 117-425 positions against the tile form
#: (0.84-0.93x) and on a 1x1 of 1.2 M multiply-adds against the GEMM (0.71x), which this rule keeps
#: on their kernels. Checked on 30 random quick rows of seeds 960-1019 it moves: 0.63-2.86x,
#: geometric mean 1.48x, 27 faster (bench/EXPERIMENTS.md, session 43).
_CPU_GFMA_DENSE_MACS = 1 << 20
_CPU_GFMA_STEM_POSITIONS = 100


def _cpu_gfma_dense(c: int, m: int, taps: int, positions: int) -> bool:
    """Whether a dense layer (G = 1) on a CPU adapter takes grouped_fma (see _CPU_GFMA_DENSE_MACS)."""
    if taps == 1:
        return c * m * positions <= _CPU_GFMA_DENSE_MACS
    return c <= _CPU_GFMA_CHANNELS and positions <= _CPU_GFMA_STEM_POSITIONS


DOT4_FEATURE = "packed_4x8_integer_dot_product"  # the WGSL language feature the dot4 path needs
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

    def __hash__(self) -> int:
        # A description keys the device's operator cache on every one-liner call: hash it once.
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", h)
        return h

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
# The dot4 GEMM's cost model (tile and split choice)
# ------------------------------------------------------------------------------------------------
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


#: GEMMs of at most this many k steps and at most 64 output channels a group (stems, small C) take
#: _FEW_STEPS_TILE on a GPU: the cost model's one-workgroup-an-SM waves overcharge small tiles,
#: which share SMs. H100, same call (us, the model's 512 x 6 x 64 / 256 x 4 x 64): C=3 7x7 stride 2
#: (8x3x224x224 -> 64, 3 steps) 87.3 / 80.9, C=3 3x3 stride 2 (-> 32, 1 step) 43.8 / 39.2, C=3 3x3
#: 112x112 42.5 / 38.7, C=16 4x16x45x77 -> 40 (3 steps; the model's 256 x 7) 21.5 / 20.5; at 5 steps
#: (C=24 3x3) 29.7 / 30.0, 13 (C=32 5x5) 50.9 / 52.7; 96 channels (a 4x4 stride-4 patch stem, 1
#: step) take a 128-channel tile: 22.8 against 24.1.
_FEW_STEPS, _FEW_STEPS_TILE = 3, (4, 256, 64)


#: A GPU's GEMM of at most this many output channels a group takes 32-channel tiles (TM = 32). H200,
#: session 39, 30 random rows, same call (us, the 64/128-channel tile / 32): M/G = 16 1.06-1.45x
#: faster (G=12 C/G=8 5x5 3287 -> 2266, G=24 C/G=16 5x5 325 -> 237, dense C=80 1x1 346 -> 315),
#: M/G = 24-32 0.97-1.32x (C=64 3x3 100 -> 78, C=48 5x5 160 -> 121; small planes even); from M/G = 80
#: up 0.76-0.91x (a third tile row of 32 costs more than the 64-channel tile's padding).
_NARROW_TILE_CHANNELS = 32


def _few_steps(k_steps: int, mg: int) -> bool:
    """Whether a GPU's GEMM takes _FEW_STEPS_TILE (few k steps, at most 64 channels a group)."""
    return k_steps <= _FEW_STEPS and mg <= 64


def _tile_pixels(threads: int, tm: int, rp: int) -> int:
    """Pixels of a GEMM tile: threads / (tm / 4) threads along the pixels, rp pixels each."""
    return threads // (tm // 4) * rp


def _tile_bytes(tp: int, tm: int) -> int:
    """Workgroup memory of a tp x tm GEMM tile: the double-buffered staging rows (5 vec4s each) and
    each pixel row's output offset."""
    return 2 * (tp + tm) * 5 * 16 + 4 * tp


def _tile_fits(caps: Capabilities | None, threads: int, tp: int, tm: int) -> bool:
    """Whether the adapter of ``caps`` runs a tp x tm tile in workgroups of ``threads`` (workgroup
    memory: two A and two B buffers of 5 vec4s a row and a word a pixel row; invocations a
    workgroup). ``None``: the 128x128 bound the cost model was fitted under."""
    if caps is None:
        return tp * tm <= 128 * 128
    return (
        caps.limit("max-compute-workgroup-storage-size") >= _tile_bytes(tp, tm)
        and caps.limit("max-compute-invocations-per-workgroup") >= threads
        and caps.limit("max-compute-workgroup-size-x") >= threads
    )


def _gemm_shape(
    caps: Capabilities | None,
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
    adapter has the workgroup memory (``tm`` = 32: 32-channel tiles of 128 or 256 threads, 4 pixels
    a thread; no tile holds more pixel rows than two staging passes of threads / 4); each unsplit
    or split-K in stream-K form (the k steps of
    all tiles shared evenly over 1-4 waves of workgroups, or each tile split in 2-4). The cheapest
    wins; a split choice must be 3% cheaper than an unsplit one. Any choice is exact; this one only
    decides speed. ``rp``, ``threads`` and ``tm``, where given, fix those (128 threads: 8*RP
    pixels by 64 channels, costed as the 256-thread tile)."""
    shapes = [
        (nt, c)
        for nt, c in ((256, 64), (512, 128), (512, 64), (128, 64), (256, 32), (128, 32))
        if (threads or nt) == nt and (tm or c) == c and (threads == 128 or nt != 128) and (c != 32 or tm == 32)
    ]
    best = None
    for nt, c in shapes:
        for r in (rp,) if rp else range(4, 9):
            tp = _tile_pixels(nt, c, r)
            if tp > nt // 2:  # two staging passes of nt / 4 pixel rows at most
                continue
            if not _tile_fits(caps, nt, tp, c) and not (rp and threads):
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
        raise PlanError(
            f"tile_channels, threads, pixels_per_thread: no {tm}-channel tile runs in {threads}-thread workgroups "
            f"with {rp} pixels a thread (128 channels need 512 threads; 32 channels 128 or 256 threads and 4 pixels)"
        )
    return best[1:]


# ------------------------------------------------------------------------------------------------
# Planning: the path, its grid and its named uniforms, from the description and capabilities only
# ------------------------------------------------------------------------------------------------
_DIRECT_MAX_BYTES = 32768  # workgroup memory the direct kernel stages into (lavapipe/GL have 32 KiB)


def _uniform_fields() -> tuple[str, ...]:
    """The fields of the Conv struct, read from wgsl/convolution_integer.wgsl."""
    return interface("convolution_integer.wgsl").uniform_layout("cv").names


def _common_uniforms(d: ConvolutionIntegerDesc, placements) -> dict:
    """The Conv fields every kernel reads (4-D view ``d``); the others are 0."""
    u = dict.fromkeys(_uniform_fields(), 0)
    _, c, h, w = d.input.sizes
    m, cg, kh, kw = d.filter.sizes
    wz = d.filter_zero_point
    zs = wz.element_strides[min(1, wz.rank - 1)] if wz is not None and wz.element_count > 1 else 0

    def res(name):
        return placement_of(placements, name).residual

    u.update(
        in_channels=c,
        in_height=h,
        in_width=w,
        out_channels=m,
        group_in_channels=cg,
        kernel_h=kh,
        kernel_w=kw,
        out_height=d.output.sizes[2],
        out_width=d.output.sizes[3],
        stride_h=d.strides[0],
        stride_w=d.strides[1],
        dilation_h=d.dilations[0],
        dilation_w=d.dilations[1],
        pad_top=d.start_padding[0],
        pad_left=d.start_padding[1],
        group_count=d.group_count,
        group_out_channels=m // d.group_count,
        input_base=res("input"),
        filter_base=res("filter"),
        output_base=res("output") // 4,
        output_count=d.output.element_count,
        input_zp_base=res("input_zero_point"),
        filter_zp_base=res("filter_zero_point"),
        filter_zp_stride=zs,
        group_words=-(-cg // 4),
    )
    for prefix, t, axes in (
        ("in_stride_", d.input, "nchw"),
        ("filter_stride_", d.filter, "mchw"),
        ("out_stride_", d.output, "nmhw"),
    ):
        u.update({prefix + axis: s for axis, s in zip(axes, t.element_strides)})
    return u


def _structure(d: ConvolutionIntegerDesc) -> dict:
    """Override constants every kernel takes: the sign of each tensor and which zero points exist."""
    wz = d.filter_zero_point
    return {
        "X_SIGNED": int(d.input.data_type == DataType.INT8),
        "W_SIGNED": int(d.filter.data_type == DataType.INT8),
        "XZP": int(d.input_zero_point is not None),
        "WZP": 0 if wz is None else (2 if wz.element_count > 1 else 1),
    }


def _needs_sums(structure: dict) -> tuple[bool, bool]:
    """(NEED_SX, NEED_SW) of the packed-dot-product kernels: zw' can be nonzero (a filter zero
    point, or UINT8 filter bytes flipped by 0x80), so the per-pixel sums of x' are needed; zx' can
    be nonzero, so the per-channel sums of w' are."""
    return (
        structure["WZP"] != 0 or not structure["W_SIGNED"],
        structure["XZP"] != 0 or not structure["X_SIGNED"],
    )


_TENSOR_VARS = {
    "input": "input",
    "filter": "filter_weights",
    "input_zero_point": "input_zero_point",
    "filter_zero_point": "filter_zero_point",
    "output": "output",
}


def _bytes_moved(d: ConvolutionIntegerDesc) -> int:
    """Input, filter and zero points read once, the output written once."""
    n = d.input.element_count + d.filter.element_count + 4 * d.output.element_count
    for z in (d.input_zero_point, d.filter_zero_point):
        n += 0 if z is None else z.element_count
    return n


def _direct_budget(caps: Capabilities) -> tuple[int, int]:
    """(input slots, filter slots) of i32 the direct kernel may stage at most, powers of two:
    1/2 and 1/4 of min(32 KiB, the adapter's workgroup memory) rounded down to a power of two."""
    nbytes = min(_DIRECT_MAX_BYTES, caps.limit("max-compute-workgroup-storage-size"))
    slots = 1 << (nbytes // 4).bit_length() - 1
    return slots // 2, slots // 4


def _pow2(n: int, least: int = 64) -> int:
    """The power of two >= max(n, least)."""
    return max(least, 1 << (int(n) - 1).bit_length())


#: Most output pixels a direct tile holds (4 a thread at 256 threads): larger tiles amortise the
#: per-workgroup setup (index arithmetic, staging, WGSL's zero-fill of workgroup memory).
_DIRECT_MAX_TILE = 4096
#: Kernel widths the direct kernel unrolls (KW_FIXED: one pipeline per width; wider ones loop).
_DIRECT_UNROLLED_WIDTHS = range(1, 8)


def _direct_shape(d: ConvolutionIntegerDesc, caps: Capabilities, wg: int = _WG, words: bool = False):
    """The direct kernel's shape ((tile_h, tile_w, channel block, blocks, XS, WS), why), or (None,
    reason) where even a one-pixel tile or a one-channel filter block does not fit the staging
    memory. ``words``: the direct_dot4 form, which stages ceil(C/G / 4) words a position and tap
    instead of C/G values.

    Candidates: tile widths min(OW, 4096) and the powers of two below it, each with the most rows
    that keep tile_h * tile_w <= 4096 and the input window within the staging budget; XS and WS
    are the powers of two holding the window and the filter block. Cost (instructions a thread,
    a rough count) per workgroup: ~400 of setup (index arithmetic with divisions), the zero-fill of
    XS + WS slots, staging Cg * window / WG elements at ~8 each, and a thread's share of the block's
    outputs (runs of four columns) at ~10 a tap plus the stores (dearer in rows of fewer than 8
    outputs: partial 32-byte sectors); the cheapest total wins."""
    xs_max, ws_max = _direct_budget(caps)
    n = d.input.sizes[0]
    m, cg, kh, kw = d.filter.sizes
    if words:
        cg = -(-cg // 4)
    g = d.group_count
    mg = m // g
    oh, ow = d.output.sizes[2:]
    (sh, sw), (dh, dw) = d.strides, d.dilations
    taps = cg * kh * kw
    if taps > ws_max:
        what = f"ceil(C/G/4)*KH*KW = {taps} words" if words else f"C/G*KH*KW = {taps} taps"
        return None, f"a filter row of {what} exceeds the {ws_max} staged filter slots"
    cb = min(mg, ws_max // taps)
    blocks = -(-mg // cb)
    cb = -(-mg // blocks)
    ws = _pow2(cb * taps)
    wmax = min(ow, _DIRECT_MAX_TILE)
    widths = {wmax} | {1 << i for i in range(13) if (1 << i) < wmax}
    best = None
    for tw in sorted(widths, reverse=True):
        th = min(oh, max(1, _DIRECT_MAX_TILE // tw))
        while th >= 1:
            win = ((th - 1) * sh + (kh - 1) * dh + 1) * ((tw - 1) * sw + (kw - 1) * dw + 1)
            if cg * win <= xs_max:
                break
            th -= 1 if th <= 4 else th // 2
        if th < 1:
            continue
        xs = _pow2(cg * win)
        wgs = n * g * blocks * -(-oh // th) * -(-ow // tw)
        quads = -(-cb * th * -(-tw // 4) // wg)  # a thread's runs of four outputs
        cost = wgs * (400 + (xs + ws) // 16 + 8 * -(-cg * win // wg) + quads * (10 * taps + 16 * max(1, 8 // tw)))
        if best is None or cost < best[0]:
            best = (cost, th, tw, win, xs)
    if best is None:
        return None, f"the input window of one output pixel (C/G = {cg} channels) exceeds the {xs_max} staged slots"
    _, th, tw, win, xs = best
    unit = "words" if words else "values"
    return (th, tw, cb, blocks, xs, ws), (
        f"tiles of {th}x{tw} output pixels (input window of {cg}x{win} {unit} staged), blocks of {cb} of the "
        f"group's {mg} output channels"
    )


def _plan_portable(d, caps, placements, why_choice):
    u = _common_uniforms(d, placements)
    s = step(
        "convolution_integer_portable",
        "convolution_integer.wgsl",
        "one thread per output element: core WGSL only, the reference kernel",
        d.output.element_count,
        constants=_structure(d),
        uniforms=u,
        bindings=_TENSOR_VARS,
        uniform_var="cv",
    )
    return (s,), why_choice, (), (("kernel", "portable"),)


# Fast rows written out as a loop of constant count (DW_KH) from this kernel height to the cap.
# H200, same run (us, run-time loop / DW_KH): 7x7 47.4 / 44.4, 5x5 24.0 / 22.7, but 3x3 32.0 / 32.9
# and 3x3 stride 2 25.0 / 25.1, so short kernels keep the run-time loop.
_DW_KH_MIN = 5
_DW_KH_CAP = 8


#: Threads a workgroup of the depthwise kernel, on a GPU / a CPU adapter. H200, same run (us, 256 / 64
#: threads): 3x3 28.2 / 27.9, 3x3 stride 2 22.3 / 22.0, 5x5 19.5 / 18.7, 7x7 35.3 / 35.3; H100, two
#: rounds: 5x5 19.5-19.7 / 18.7-18.9, the others equal; 512 was slower (3x3 35.6 against 31.0). CPU
#: adapters keep 256 (unmeasured there).
_DW_WG = {"gpu": 64, "cpu": 256}


def _outer_strides_4(t) -> bool:
    """Whether every stride of the 4-D view's N, C and H axes (those longer than 1) is a multiple of
    4 elements: with W stride 1 and an aligned start, every row starts on a word (bytes) or a
    16-byte vector (32-bit elements)."""
    return all(st % 4 == 0 for st, n in zip(t.element_strides[:3], t.sizes[:3]) if n > 1)


def _depthwise_fast(d) -> bool:
    """Whether the depthwise kernel runs its fast rows (DW_FAST): contiguous input rows, a kernel at
    most 8 wide (two words of taps past 4), no W dilation, W stride 1 or 2."""
    kw = d.filter.sizes[3]
    return d.input.element_strides[3] == 1 and kw <= 8 and d.dilations[1] == 1 and d.strides[1] in (1, 2)


def _plan_depthwise(d, caps, placements, why_choice):
    """The depthwise kernel (C/G = 1): a thread eight neighbouring outputs of a row; its fast rows
    (DW_FAST) where the input's rows are contiguous, the kernel is at most 8 wide, W is not dilated
    and its stride is 1 or 2."""
    n, m, oh, ow = d.output.sizes
    threads = n * m * oh * -(-ow // 8)
    u = _common_uniforms(d, placements)
    u["dw_threads"] = threads
    # The eights of a row with no tap outside the input (the kernel's `edge` test false): their
    # threads come first, the edge eights' after them, so edge masking splits no warp.
    sw, pl, kw_, w_in = d.strides[1], d.start_padding[1], d.filter.sizes[3], d.input.sizes[3]
    octs = -(-ow // 8)
    q_lo = min(octs, -(-pl // (8 * sw)))
    q_hi = min(octs - 1, (w_in + pl - 7 * sw - kw_) // (8 * sw))  # (negative: no interior eight)
    u["dw_rows"] = n * m * oh
    u["dw_q_lo"] = q_lo
    u["dw_interior"] = max(0, q_hi - q_lo + 1)
    fast = _depthwise_fast(d)
    kw = d.filter.sizes[3]
    vec = _vec_output(d, placements)
    consts = {**_structure(d), "DW_FAST": int(fast), "DW_SW": d.strides[1] if fast else 1, "DW_VEC": int(vec)}
    if fast and kw > 4:  # (absent otherwise: the cache keys of narrower kernels stay as they were)
        consts["DW_KW8"] = 1
    kh = d.filter.sizes[2]
    if fast and _DW_KH_MIN <= kh <= _DW_KH_CAP:
        consts["DW_KH"] = kh  # the rows as a loop of constant count: every row's loads in flight
        if d.input.element_strides[2] % 4 == 0:
            # every row of a thread aligned alike: its edge masks computed once, applied without a
            # branch. H200, same run (us, per-row masks / once): 7x7 42.2 / 36.1, 5x5 21.8 / 19.8,
            # but 3x3 31.0 / 34.0 (three rows do not repay the masks)
            consts["DW_ROWS4"] = 1
    s = step(
        "convolution_integer_depthwise",
        "convolution_integer_depthwise.wgsl",
        "one thread eight neighbouring outputs of a row"
        + (
            f", each interior row of taps {'two packed 4x8 dot products' if kw > 4 else 'one packed 4x8 dot product'}"
            + (f", the {kh} rows a loop of constant count (all rows' loads in flight)" if "DW_KH" in consts else "")
            if fast
            else ", a tap at a time"
        ),
        threads,
        workgroup_size=_DW_WG["cpu" if caps.is_cpu else "gpu"],
        constants=consts,
        uniforms=u,
        bindings={**_TENSOR_VARS, "output": ("output", "output4")},
        uniform_var="cv",
    )
    return (s,), why_choice, (), (("kernel", "depthwise"),)


#: The depthwise FMA kernel's reach, as tested and measured (8x8 kernels; a thread's window row at
#: most 8 vec4s): the kernel itself needs only KH*KW <= 258 for exact f32 sums (its taps and window
#: live in workgroup memory).
_FMA_MAX_TAPS = 64
_FMA_MAX_SLOTS = 8
#: On a GPU, dense layers (G = 1) of M < 16 output channels and C >= 4 (fewer: the grouped FMA
#: kernel) whose kernel rows hold at least this many taps run on the window kernel, not direct_dot4.
#: H200, session 41: three of five M = 8 rows of a path matrix (random seed 31) drew it (1-D k7 C=32
#: 38.1 -> 26.9 us, C=96 74.2 -> 64.8, C=4 5x5 stem 150.9 -> 108.2; a 1x1 C=512 layer ran 5.7x slower
#: on the window kernel, hence the kernel width), then 24 unseen random plans of seeds 33-120 that
#: moved, both trees in one call: 0.66-3.56x, geometric mean 1.42x (C=256 1-D k7 stride 2 1810 ->
#: 509, C=4 7x7 stride 4 123 -> 45), slower on 4 (C=32 7x7 1x32x224x224 139 -> 210, C=48 3x3
#: 64x28x28 50.9 -> 67.1, C=80 3x3 3x80x224x168 154 -> 194, C=8 5x5 187 -> 196).
_WINDOW_NARROW_MIN_KW = 3
#: Threads a workgroup of the FMA kernels at most.
_FMA_WG = 256
#: Workgroup memory a tile stages at most (more would cut the workgroups an SM holds).
_FMA_MAX_BYTES = 16384
#: Output rows a thread of the depthwise FMA kernel (at most 4).
_FMA_ROWS = 2
#: Threads a depthwise FMA workgroup aims for at least (planes stacked where one plane's tile has fewer).
_FMA_MIN_WG = 64


def _fma_window(d: ConvolutionIntegerDesc, tq: int, rows: int, nvq: int) -> dict:
    """The window constants both FMA kernels take, for a tile of ``rows`` output rows by 4 ``tq``
    columns: its rows (WIN_H) of PQ vec4 slots, NVQ of them a thread's row."""
    kh, kw = d.filter.sizes[2:]
    sh, sw = d.strides
    dh = d.dilations[0]
    win_h = (rows - 1) * sh + (kh - 1) * dh + 1
    return dict(KH=kh, KW=kw, SH=sh, SW=sw, DH=dh, TQ=tq, NVQ=nvq, PQ=(tq - 1) * sw + nvq, WIN_H=win_h)


def _fma_kwp(kw: int) -> int:
    """Taps a row of the depthwise FMA kernel's staged taps: KW rounded up to whole vec4s (a SLIDE
    row's taps are one or two 16-byte loads)."""
    return 4 * -(-kw // 4)


def _fma_bands(rows: int, tr_max: int, nbytes, budget: int):
    """(bands, thread rows a band): the rows in as few even bands of at most ``tr_max`` as fit
    ``budget`` bytes of workgroup memory (``nbytes(tr)``), or None where one row does not."""
    bands = -(-rows // max(1, tr_max))
    tr = -(-rows // bands)
    while tr > 1 and nbytes(tr) > budget:
        bands += 1
        tr = -(-rows // bands)
    return (bands, tr) if nbytes(tr) <= budget else None


def _fma_shape(d: ConvolutionIntegerDesc, caps: Capabilities, x_res: int = 0):
    """The depthwise FMA kernel's shape: (constants, (tiles_h, tiles_w, plane groups), why), or
    (None, None, reason) where it cannot run the layer. A thread computes 4 output columns of QR
    rows (QR = 2 at H stride 1, else 1; fewer for short planes); a tile row is TQ quads (the
    plane's width up to 16 quads, else the columns split evenly into tiles of at most 16), TR
    threads down it (the plane's height in as few even bands of at most 256 / TQ threads as fit),
    TP planes a workgroup where one plane's tile has under 64 threads (to 128 threads); the window
    (TP x WIN_H rows of PQ vec4s) and taps must fit 16 KiB of workgroup memory, else the bands
    shrink."""
    kh, kw = d.filter.sizes[2:]
    sh, sw = d.strides
    dh, dw = d.dilations
    if kh * kw > _FMA_MAX_TAPS:
        return None, None, f"{kh}x{kw} = {kh * kw} taps > {_FMA_MAX_TAPS}"
    slide = sw <= 2 and dw == 1 and kw <= 8
    # window rows from a 4-byte boundary of the input where they can be: staged a word at a time
    align, nvq = _fma_align(d, x_res, slide, sw, kw)
    if nvq > _FMA_MAX_SLOTS:
        return None, None, f"a thread's window row ({3 * sw + (kw - 1) * dw + 1} columns) past {4 * _FMA_MAX_SLOTS}"
    n, m, oh, ow = d.output.sizes
    qw = -(-ow // 4)
    tq = -(-qw // -(-qw // 16))
    qr = min(_FMA_ROWS if sh == 1 else 1, oh)
    rows = -(-oh // qr)  # thread rows a plane
    budget = min(_FMA_MAX_BYTES, caps.limit("max-compute-workgroup-storage-size"))

    def window_bytes(tr, tp=1):
        w = _fma_window(d, tq, qr * tr, nvq)
        return 16 * tp * w["WIN_H"] * w["PQ"] + 4 * tp * kh * _fma_kwp(kw)

    fit = _fma_bands(rows, _FMA_WG // tq, window_bytes, budget)
    if fit is None:
        return None, None, f"one row of threads' window is {window_bytes(1)} bytes of workgroup memory > {budget}"
    bands, tr = fit
    tp = 1
    if bands == 1 and tq * tr < _FMA_MIN_WG:
        tp = max(1, min(_FMA_WG // (tq * tr), -(-2 * _FMA_MIN_WG // (tq * tr)), n * m))
        while tp > 1 and window_bytes(tr, tp) > budget:
            tp -= 1
    win = _fma_window(d, tq, qr * tr, nvq)
    win_h, pq = win["WIN_H"], win["PQ"]
    consts = dict(
        **win,
        DW=dw,
        QR=qr,
        TR=tr,
        TP=tp,
        SLOTS=tp * win_h * pq,
        XV=tp * win_h * pq if slide else 1,
        XS=1 if slide else 4 * tp * win_h * pq,
        WSQ=tp * kh * _fma_kwp(kw) // 4,
        WG=tq * tr * tp,
        **_fma_staging(tp * win_h, pq, tq * tr * tp, align),
        SLIDE=int(slide),
        ALIGN_S=align,
    )
    grid = (bands, -(-qw // tq), -(-(n * m) // tp))
    why = (
        f"tiles of {qr * tr}x{4 * tq} outputs ({tr}x{tq} threads of 4 columns x {qr} rows) x {tp} plane(s), "
        f"a {win_h}x{4 * pq} input window staged as f32 ({window_bytes(tr, tp)} bytes)"
    )
    return consts, grid, why


#: f32 sums of 8-bit differences stay exact up to this many products (258 * 255 * 255 < 2^24).
_FMA_EXACT_TAPS = 258
#: Workgroup memory the grouped FMA kernel stages at most (window and taps).
_GROUPED_FMA_MAX_BYTES = 32768


def _fma_staging(rows: int, pq: int, wg: int, align: int) -> dict:
    """How depthwise_fma's threads stage a window of ``rows`` rows of ``pq`` vec4 slots: where
    rows are staged a word an item (ALIGN_S < 4) and a workgroup covers a row, each thread keeps
    one slot column of rows RS apart (RS = WG / PQ rows a pass: its column mask and addresses
    worked out once; H100, same call, two rounds: 3x3 8x256x56x56 28.8 -> 28.0 us, 7x7
    8x128x56x56 28.5 -> 27.6, 3x3 8x32x112x112 17.3 -> 16.6); else item i = l + k WG. STAGE:
    the items a thread."""
    rs = wg // pq if align < 4 else 0
    if rs:
        return dict(RS=rs, STAGE=-(-rows // rs))
    return dict(RS=0, STAGE=-(-(rows * pq) // wg))


def _fma_align(d: ConvolutionIntegerDesc, x_res: int, slide: bool, sw: int, kw: int):
    """(ALIGN_S, NVQ) of the FMA kernels' window: ALIGN_S = the window's first byte within its
    word where rows are contiguous and on 4-byte boundaries (4: not so), NVQ = the vec4 slots a
    thread reads of a window row."""
    dw = d.dilations[1]
    align = (x_res - d.start_padding[1]) % 4
    if slide and d.input.element_strides[3] == 1 and _outer_strides_4(d.input):
        nvq = (align + 3 * sw + kw - 1) // 4 + 1
        if nvq <= 4:
            return align, nvq
    return 4, -(-(3 * sw + (kw - 1) * dw + 1) // 4)


def _grouped_fma_shape(d: ConvolutionIntegerDesc, caps: Capabilities, x_res: int = 0):
    """The grouped FMA kernel's shape: (constants, (tiles_h, tiles_w, channel blocks), why), or
    (None, None, reason). A thread computes four neighbouring outputs of one row for four output
    channels; a tile row is TQ quads (as the depthwise FMA kernel's), MT blocks of four channels
    a workgroup (the group's M/G up to 16), TR rows (the height in as few even bands of at most
    256 / (TQ MT) threads as fit the workgroup memory: the window of the group's C/G channels and
    the block's taps)."""
    m, cg, kh, kw = d.filter.sizes
    sh, sw = d.strides
    dh, dw = d.dilations
    if kh * kw > _FMA_EXACT_TAPS:
        return None, None, f"KH x KW = {kh * kw} taps > {_FMA_EXACT_TAPS} (a channel's f32 sum would not be exact)"
    if not (sw <= 2 and dw == 1 and kw <= 8):
        return None, None, "W stride above 2, W dilation or a kernel wider than 8"
    align, nvq = _fma_align(d, x_res, True, sw, kw)
    if nvq > 4:
        return None, None, f"a thread's window row ({3 * sw + kw} columns) past 16"
    n, _, oh, ow = d.output.sizes
    mg = m // d.group_count
    mt = min(-(-mg // 4), 4)
    blocks = -(-mg // (4 * mt))
    qw = -(-ow // 4)
    tq = -(-qw // -(-qw // 16))
    budget = min(_GROUPED_FMA_MAX_BYTES, caps.limit("max-compute-workgroup-storage-size"))

    def nbytes(tr):
        w = _fma_window(d, tq, tr, nvq)
        return 16 * (cg * w["WIN_H"] * w["PQ"] + mt * cg * kh * kw)

    fit = _fma_bands(oh, _FMA_WG // (tq * mt), nbytes, budget)
    if fit is None:
        return None, None, f"one row's window and taps take {nbytes(1)} bytes of workgroup memory > {budget}"
    bands, tr = fit
    win = _fma_window(d, tq, tr, nvq)
    win_h, pq = win["WIN_H"], win["PQ"]
    xv = cg * win_h * pq
    wg = tq * tr * mt
    consts = dict(
        **win,
        TR=tr,
        MT=mt,
        SLOTS=xv,
        XV=xv,
        WV=mt * cg * kh * kw,
        WG=wg,
        # (slot columns down the rows, RS, ran 2-7 % slower here on the H100: items)
        STAGE=-(-xv // wg),
        ALIGN_S=align,
    )
    why = (
        f"tiles of {tr}x{4 * tq} outputs x {4 * mt} channels ({tr}x{tq}x{mt} threads of 4 columns x 4 channels), "
        f"a {cg}x{win_h}x{4 * pq} input window staged as f32 ({nbytes(tr)} bytes with the taps)"
    )
    if cg * kh * kw > _FMA_EXACT_TAPS:
        # f32 sums of CCH channels at a time (each exact), added up in i32
        consts["CCH"] = _FMA_EXACT_TAPS // (kh * kw)
        why += f"; {cg * kh * kw} taps a group: f32 sums of {consts['CCH']} channels at a time, added in i32"
    return consts, (bands, -(-qw // tq), blocks), why


#: On a GPU the depthwise FMA kernel takes stride-1 layers of at least this many taps from the
#: depthwise kernel's fast rows. H100, same run (us, fast rows / FMA): 5x5 18.9 / 14.8, 7x7 35.6 /
#: 28.4; 3x3 stride 2 23.6 / 42.8 (each output row's window rows read anew, and the window is four
#: times the outputs), 5x5 stride 2 19.2 / 29.7.
_FMA_OVER_FAST_TAPS = 25
#: ... from output planes of this many outputs: on smaller planes the FMA kernel's staged window is
#: mostly halo (a 7x7 plane under a 7x7 kernel stages 13x13 for 49 outputs). H200, same call (us,
#: FMA / fast rows): 7x7 kernels on 7x7 planes 8x768 22.8 / 12.9, 32x384 31.7 / 16.5, 64x160 23.8 /
#: 14.2, 1x768 12.5 / 10.5; 5x5 on 7x7 8x1152 17.9 / 12.5, 8x672 12.3 / 11.3; 9x9 planes 16x512 5x5
#: 17.7 / 17.2, 7x7 26.8 / 20.7; but 10x10 planes 11.3 / 12.0 (5x5), 12.3 / 12.8 (7x7), and mixed
#: from there to 14x14 (0.86-1.15x).
_FMA_OVER_FAST_MIN_PLANE = 100
#: ... and 2-D stride-1 layers whose output planes have at least this many outputs. H100, two
#: rounds (us, fast rows / FMA): 3x3 on 8x256x56x56 29.7 / 28.9, 8x32x112x112 17.9 / 17.4,
#: 4x60x45x76 11.0 / 9.6, M/G = 2 4x60x45x76 14.1 / 13.1, 8x128x56x56 29.2 / 28.3, 8x256x28x28 19.6 /
#: 19.5; but 8x512x14x14 13.8 / 14.3, 8x1024x7x7 10.2 / 11.5, and 1-D k5 (W 2000) 32.5 / 34.8.
_FMA_OVER_FAST_PLANE = 1024
#: ... and layers (stride 1 or 2) whose input rows are not whole words, from this many outputs a
#: plane: on 7x7 planes (W 7) the fast rows stay ahead, 10.2 / 11.5 us (8x1024x7x7), and 13.8 /
#: 14.3 on 8x512x14x14 (W 14).
_FMA_UNALIGNED_PLANE = 256


def _fma_small_plane(d) -> bool:
    """Whether a stride-1 layer has the taps the FMA kernel would take over the fast rows
    (_FMA_OVER_FAST_TAPS) but output planes too small for it (_FMA_OVER_FAST_MIN_PLANE)."""
    kh, kw = d.filter.sizes[2:]
    oh, ow = d.output.sizes[2:]
    return d.strides == (1, 1) and kh * kw >= _FMA_OVER_FAST_TAPS and oh * ow < _FMA_OVER_FAST_MIN_PLANE


def _fma_over_fast_rows(d) -> str | None:
    """Why a GPU takes the depthwise FMA kernel over the depthwise kernel's fast rows (None: it
    does not). Input rows that are not whole words (odd widths) cost the fast rows a byte shift
    per row word: H100, two rounds (us, fast rows / FMA), 3x3: 8x128x57x57 46.7 / 28.5, 8x32x113x113
    43.4 / 27.9, 8x256x27x27 24.8 / 17.8, M/G = 2 4x60x45x77 27.4 / 19.2, M/G = 4 4x32x45x77 28.8 /
    19.5, 1-D k3 W 1999 49.7 / 30.1; stride 2: 8x96x57x57 15.7 / 14.6, 4x60x45x77 12.9 / 12.0."""
    kh, kw = d.filter.sizes[2:]
    oh, ow = d.output.sizes[2:]
    if max(d.strides) <= 2 and not _outer_strides_4(d.input) and oh * ow >= _FMA_UNALIGNED_PLANE:
        return (
            "with input rows that are not whole words (the depthwise kernel's fast rows shift every word: H100, "
            "3x3 8x128x57x57 46.7 -> 28.5 us, 1-D k3 W 1999 49.7 -> 30.1)"
        )
    if d.strides != (1, 1):
        return None
    if kh * kw >= _FMA_OVER_FAST_TAPS and not _fma_small_plane(d):
        return (
            f"of {kh * kw} taps at stride 1 on {oh}x{ow} output planes, where it beats the depthwise kernel's fast "
            "rows (H100: 5x5 18.9 -> 14.8 us, 7x7 35.6 -> 28.4; from 100 outputs a plane)"
        )
    if kh > 1 and oh * ow >= _FMA_OVER_FAST_PLANE:
        return (
            f"at stride 1 with {oh}x{ow} output planes (>= {_FMA_OVER_FAST_PLANE} outputs), where it edges out the "
            "depthwise kernel's fast rows (H100, 3x3: 56x56 29.7 -> 28.9 us, 45x76 11.0 -> 9.6; behind them on "
            "14x14 and 7x7 planes)"
        )
    return None


def _vec_output(d, placements) -> bool:
    """Whether the output's rows are contiguous whole quads on 16-byte boundaries (16-byte stores)."""
    out_res = placement_of(placements, "output").residual
    ow = d.output.sizes[3]
    return ow % 4 == 0 and out_res % 16 == 0 and d.output.element_strides[3] == 1 and _outer_strides_4(d.output)


def _plan_fma(d, caps, placements, why_choice, shape, grouped: bool):
    """The FMA kernels (f32 sums, exact: see the shader): depthwise_fma (C/G = 1, at most 64
    taps; input window and taps staged in workgroup memory, each thread 4 x QR outputs) or
    grouped_fma (at most 258 taps a group, SLIDE rows; the group's window and a block's taps
    staged, each thread 4 columns x 4 channels)."""
    consts, (bands, tiles_w, blocks), why_tile = shape
    n, m = d.output.sizes[:2]
    u = _common_uniforms(d, placements)
    if grouped:
        wgs = bands * tiles_w * blocks * d.group_count * n
        u.update(channel_blocks=blocks)
        consts = {**consts, "SLIDE": 1}
    else:
        wgs = bands * tiles_w * blocks  # blocks: groups of TP planes
        u.update(fma_planes=n * m)
    u.update(tiles_h=bands, tiles_w=tiles_w, workgroups=wgs)
    consts = {**_structure(d), **consts, "VEC": int(bool(consts["SLIDE"]) and _vec_output(d, placements))}
    name = "grouped_fma" if grouped else "depthwise_fma"
    s = step(
        f"convolution_integer_{name}",
        "convolution_integer_fma.wgsl",
        why_tile,
        wgs * consts["WG"],
        workgroup_size=consts["WG"],
        constants=consts,
        uniforms=u,
        bindings={**_TENSOR_VARS, "output": ("output", "output4")},
        uniform_var="cv",
    )
    return (s,), why_choice, (), (("kernel", name), ("workgroups", wgs))


def _window_rows(d: ConvolutionIntegerDesc) -> bool:
    """Whether the window kernel walks the row form (each kernel row's taps as 4 * ceil(KW/4)
    neighbouring bytes of one input row): contiguous input rows, no W dilation, KW <= 8."""
    return d.input.element_strides[3] == 1 and d.dilations[1] == 1 and d.filter.sizes[3] <= 8


def _window_form(d: ConvolutionIntegerDesc) -> tuple[str, int]:
    """The window kernel's im2col form and its k words (a multiple of 4): the row form where it
    applies (walked a kernel row at a time: RW + 1 word loads and funnel shifts a row, measured
    faster than the dense order on every layer even where it takes more words: the H100, C=4 5x5
    40 words 23.3 us against 28 dense words 30.7), else dense rows (two 4-byte spans a word) where
    rows are contiguous and KW >= 3, else byte gathers."""
    _m, cg, kh, kw = d.filter.sizes
    if _window_rows(d):
        return "rows", _pad4(cg * kh * -(-kw // 4))
    return ("dense" if _im2col_dense_rows(d) else "bytes"), _pad4(-(-cg * kh * kw // 4))


#: On CPU adapters, dense layers (C/G >= 16) of at most this many output positions (N x OH x OW)
#: take the window kernel where it fits. lavapipe (Mesa 25.0.7), same process, window / the GEMM
#: (us): the quick sweep's 3x3 layers of 49-64 positions 300-400 / 370-700 (1.1-1.9x), a 1x1 of
#: 16 178 / 202, C=128 3x3 at 14x14 (196) 3312 / 5794; but C=64 at 28x28 (784) 2918 / 2457, C=32
#: at 56x56 5942 / 5741, 2x64x56x56 22627 / 18195.
_CPU_WINDOW_POSITIONS = 256
#: Workgroups the window kernel aims for: about one wave of resident workgroups on the H100 (132
#: SMs x 3 of 256 threads); past it each workgroup walks several pixel tiles, staging its filter
#: block once. H100, same run, tiles walked 1 / 2 / 3 / 4 / 8: the C=3 7x7 stem (784 workgroups at
#: 1) 62.7 / 55.0 / 55.8 / 69.9 / 82.9 us, the same to 128 channels (1568) 124 / 108 / 116 / 100 /
#: 129; layers of at most 392 workgroups ran fastest at 1 (3x3 stem 17.9 / 21.2 / 22.8 / 26.6).
_WINDOW_WORKGROUPS = 400
#: GPUs: grouped layers of C/G < 16 that the grouped FMA kernel does not take (stride 2, or more than
#: 258 taps a group) run on the window kernel where a group's window holds at least this many taps
#: (C/G x KH x KW). H200, session 40, random rows of seeds 11-16 against the plan's kernel before
#: (direct_dot4, direct or the im2col GEMM; us): C/G = 4 5x5 stride 2 35.6 -> 22.9, C/G = 2 5x5 22.3
#: -> 11.0, C/G = 2 7x7 52.7 -> 33.0, C/G = 8 1-D k7 90.4 -> 55.3, C/G = 8 7x7 118.5 -> 79.7 and 118.8
#: -> 48.9, C/G = 4 3x3 stride 2 907 -> 603, C/G = 8 5x5 123.1 -> 86.0, C/G = 4 7x7 M/G = 8 47.2 ->
#: 23.8, C/G = 4 7x7 and 5x5 at M/G = 4 even (82.3 / 82.3, 127.6 / 129.0); below it the window
#: lost: C/G = 2 3x3 126.5 -> 203.8, 1-D k9 40.1 -> 47.6, 1-D k7 42.5 -> 48.4 (a C/G = 8 1x1, 8 taps,
#: won 56.1 -> 43.6 but stays out).
_WINDOW_GROUP_TAPS = 32
#: GPUs keep the im2col GEMM for layers the window kernel would run in fewer workgroups than this
#: (it has no smaller tile: 128 or 64 threads a workgroup ran 0-50 % slower than 256 on every layer
#: measured). H100, same run, window / GEMM (us): a batch-1 7x7 stem (98 workgroups) 23.0 / 19.7;
#: from 192 workgroups on even or better (batch 2 27.6 / 26.6, C=4 5x5 26.4 / 25.1, 3x3 stride-2
#: batch 1 13.3 / 14.1, C=2 6x8 15.9 / 16.4), larger layers 1.4-2.1x faster.
_WINDOW_MIN_WORKGROUPS = 128


#: The window kernel's tile form (CPU adapters): threads a workgroup. lavapipe (Mesa 25.0.7), same
#: process, the quick sweep's layers: 32 / 64 / 128 threads within 5 % of each other (layer1 201.5 /
#: 205.2 / 210.6 us, the C=3 stem 238.9 / 199.1 / 210.8).
_TILE_WG = 64


def _tile_form(d: ConvolutionIntegerDesc) -> bool:
    """Whether the window kernel's tile form (4 pixels of an output row a thread) takes ``d``:
    contiguous input rows, KW <= 8, W stride + W dilation at most 4 (a quad's 4 row words lie in
    one span of 4 input words; W-dilated rows are gathered from it a byte at a time)."""
    return d.input.element_strides[3] == 1 and d.filter.sizes[3] <= 8 and d.strides[1] + d.dilations[1] <= 4


def _tile_full_rows(d: ConvolutionIntegerDesc) -> bool:
    """Whether the tile form takes ``d`` with its row words at least 3/4 full (KW = 3, 4, 6, 7 or 8):
    on CPU adapters it then runs dense layers of any size. lavapipe (Mesa 25.0.7), same process,
    tile form against the plan's kernel before it (us): 3x3 2x64x56x56 13491 / 16429 (GEMM),
    1x128x14x14 2755 / 2783, 1x256x7x7 2639-2931 / 2789-2956, 1x64x28x28 1757 / 2025; but 5x5
    (5/8 full) 1x64x11x11 1423 / 1245 and 1x64x28x28 7163 / 6973, 1x1 1x64x56x56 2693 / 1723."""
    kw = d.filter.sizes[3]
    return _tile_form(d) and 4 * kw >= 3 * 4 * -(-kw // 4)


def _window_shape(d: ConvolutionIntegerDesc, caps: Capabilities, cpt_req=None, wg_req=None, tile=False):
    """(constants, (channel blocks, pixel tiles, tiles a workgroup walks), why) of the window kernel,
    or (None, None, why not); ``cpt_req`` / ``wg_req`` request channels a thread (16 or 32) and
    threads a workgroup (64 to 512). Blocks of 32 channels (16 where M/G <= 16) and 256 threads:
    on the H100 32 channels ran 1.0-1.9x faster than 64 and 16 (64 needs 64 accumulators a
    thread), 256 threads within 10 % of the best of 128/256/512 on the six layers measured."""
    m, cg, kh, kw = d.filter.sizes
    g = d.group_count
    mg = m // g
    if cpt_req is not None and (isinstance(cpt_req, bool) or cpt_req not in (16, 32)):
        raise DmlValidationError(f"window_channels: must be 16 or 32; got {cpt_req!r}")
    if wg_req is not None and (isinstance(wg_req, bool) or wg_req not in (64, 128, 256, 512)):
        raise DmlValidationError(f"threads: the window kernel takes 64, 128, 256 or 512; got {wg_req!r}")
    tile = tile and cpt_req is None and _tile_form(d)
    form, words = ("rows", _pad4(cg * kh * -(-kw // 4))) if tile else _window_form(d)
    cpt = 8 if tile else cpt_req or (32 if mg > 16 else 16)
    need = 4 * (words * cpt + 2 * cpt)
    have = caps.limit("max-compute-workgroup-storage-size")
    if need > have:
        return (
            None,
            None,
            (
                f"the window holds {words} k words (C/G*KH*KW = {cg * kh * kw} taps): its block of {cpt} channels' "
                f"filter rows needs {need} bytes of workgroup memory; {caps.name} has {have}"
            ),
        )
    wg = wg_req or (_TILE_WG if tile else _WG)
    if wg > caps.limit("max-compute-invocations-per-workgroup"):
        return None, None, f"{wg} threads a workgroup exceed {caps.name}'s max-compute-invocations-per-workgroup"
    n, _c, oh, ow = d.output.sizes
    tiles = -(-n * oh * (-(-ow // 4) if tile else ow) // wg)  # (the tile form: quads of an output row)
    blocks = -(-mg // cpt)
    walk = max(1, (tiles * blocks * g + _WINDOW_WORKGROUPS // 2) // _WINDOW_WORKGROUPS)
    consts = {"CPT": cpt, "KWP": words, "WG": wg}
    if form == "rows":
        consts.update(IM2COL_ROWS=1, RW=-(-kw // 4))
    elif form == "dense":
        consts["IM2COL_DENSE_ROWS"] = 1
    if tile:
        consts["TILE_FORM"] = 1  # (selects the entry point; not a shader constant)
    how = "kernel row by kernel row" if form == "rows" else f"{form} gathers, four words at a time"
    if tile:
        why = (
            f"tile form: each thread 4 neighbouring pixels of an output row (their row words from one span of 4 "
            f"input words), {words} k words kernel row by kernel row, against a staged block of {cpt} channels' "
            f"filter rows, each staged vec4 feeding 16 dot products ({caps.name} is a CPU adapter, whose every "
            f"lane's load is a gather), {walk} tile(s) of {wg} quads a workgroup"
        )
    else:
        why = (
            f"each thread one output pixel's window of {words} k words ({how}) against a staged block of {cpt} "
            f"channels' filter rows, {walk} tile(s) of {wg} pixels a workgroup"
        )
    return consts, (blocks, tiles, walk), why


def _window_workgroups(shape) -> int:
    """Workgroups of the window kernel's shape at one pixel tile each (0 where it cannot run)."""
    if shape[0] is None:
        return 0
    blocks, tiles, _walk = shape[1]
    return blocks * tiles


def _plan_window(d, caps, placements, why_choice, shape, tuning):
    """The window kernel (convolution_integer_dot4_window.wgsl): one pass, no packed input."""
    consts, (blocks, tiles, walk), why_tile = shape
    req = tuning.get("window_tiles")
    if req is not None:
        if not _is_count(req):
            raise DmlValidationError(f"window_tiles: must be an integer >= 1; got {req!r}")
        walk = int(req)
    chunks = -(-tiles // walk)
    wgs = chunks * blocks * d.group_count
    n, _m, oh, ow = d.output.sizes
    u = _common_uniforms(d, placements)
    u.update(
        pixels=n * oh * ow,
        k_words=consts["KWP"],  # (the window's words, as staged)
        taps=(d.filter.sizes[1] * d.filter.sizes[2] * d.filter.sizes[3]) % 2**32,
        pixel_tiles=tiles,
        channel_blocks=blocks,
        win_tiles=walk,
        workgroups=wgs,
    )
    structure = _structure(d)
    need_sx, _ = _needs_sums(structure)  # (sum w' is summed once a block, whatever zx')
    s = step(
        "convolution_integer_dot4_window" + ("_tile" if "TILE_FORM" in consts else "_rows" if "RW" in consts else ""),
        "convolution_integer_dot4_window.wgsl",
        why_tile,
        wgs * consts["WG"],
        workgroup_size=consts["WG"],
        constants={**structure, **{k: v for k, v in consts.items() if k != "TILE_FORM"}, "NEED_SX": int(need_sx)},
        uniforms=u,
        bindings=dict(_TENSOR_VARS),
        uniform_var="cv",
    )
    return (s,), why_choice, (), (("kernel", "dot4_window"), ("workgroups", wgs), ("window_tiles", walk))


def _plan_direct(d, caps, placements, why_choice, shape, words=False):
    (th, tw, cb, blocks, xs, ws), why_tile = shape
    n = d.input.sizes[0]
    oh, ow = d.output.sizes[2:]
    kh, kw = d.filter.sizes[2:]
    tiles_h, tiles_w = -(-oh // th), -(-ow // tw)
    wgs = n * d.group_count * blocks * tiles_h * tiles_w
    u = _common_uniforms(d, placements)
    u.update(
        tile_h=th,
        tile_w=tw,
        window_h=(th - 1) * d.strides[0] + (kh - 1) * d.dilations[0] + 1,
        window_w=(tw - 1) * d.strides[1] + (kw - 1) * d.dilations[1] + 1,
        tiles_h=tiles_h,
        tiles_w=tiles_w,
        channel_block=cb,
        channel_blocks=blocks,
        workgroups=wgs,
    )
    structure = _structure(d)
    if words and caps.is_cpu:
        # A CPU adapter stages into the whole budget whatever the tile: one pipeline per sign mix,
        # zero-point form and kernel width serves every layer (each XS/WS pair was a pipeline of its
        # own, compiled cold at 1-4 s on lavapipe), for a larger zero-fill of workgroup memory.
        xs, ws = _direct_budget(caps)
    consts = {**structure, "XS": xs, "WS": ws, "KW_FIXED": kw if kw in _DIRECT_UNROLLED_WIDTHS else 0}
    if not words:
        consts["ROW_WORDS"] = int(d.input.element_strides[3] == 1)  # contiguous rows: staged a word at a time
    if words:
        u["taps"] = (d.filter.sizes[1] * kh * kw) % 2**32
        need_sx, need_sw = _needs_sums(structure)
        consts.update(NEED_SX=int(need_sx), NEED_SW=int(need_sw))
    name = "convolution_integer_direct_dot4" if words else "convolution_integer_direct"
    s = step(
        name,
        f"{name}.wgsl",
        why_tile + ("; four channels a word, dot4I8Packed" if words else ""),
        wgs * _WG,
        constants=consts,
        uniforms=u,
        bindings=_TENSOR_VARS,
        uniform_var="cv",
    )
    details = (("kernel", "direct_dot4" if words else "direct"), ("tile", (th, tw)), ("channel_block", cb))
    details += (("workgroups", wgs),)
    return (s,), why_choice, (), details


def _k_steps(cg: int, kh: int, kw: int, im2col: bool) -> int:
    """k steps (16 words each) of a dot4 GEMM tile: the taps' rows of ceil(Cg/4) words, each padded
    to whole vec4s, end to end; in im2col form the whole window, ceil(Cg*KH*KW/4) words padded to
    whole vec4s."""
    if im2col:
        return -(-_pad4(-(-cg * kh * kw // 4)) // _KC)
    return -(-kh * kw * _pad4(-(-cg // 4)) // _KC)


def _pad4(words: int) -> int:
    return -(-words // 4) * 4


def _im2col_dense_rows(d: ConvolutionIntegerDesc) -> bool:
    """Whether the im2col pack, in the dense tap order, gathers each word from at most two 4-byte
    spans of input rows (IM2COL_DENSE_ROWS): W stride 1 in the input, no W dilation, KW >= 3 (so
    that a word's taps lie in at most two kernel rows). H100, same run, the pack against byte
    gathers: C=24 3x3 18.9 -> 16.5 us, C=64 3x3 38.0 -> 31.7, C=96 3x3 54.3 -> 45.8, C=64 5x5 93.7 ->
    76.0."""
    kw = d.filter.sizes[3]
    return d.input.element_strides[3] == 1 and d.dilations[1] == 1 and kw >= 3


def _im2col_rows(d: ConvolutionIntegerDesc) -> bool:
    """Whether the im2col pack takes its row form (IM2COL_ROWS): each kernel row in whole words,
    gathered as words from contiguous input rows. It needs W stride 1 in the input, no W dilation,
    KW <= 8, and it must cost the GEMM no k step (its K is Cg*KH*ceil(KW/4)*4 instead of
    Cg*KH*KW: a 7x7 stem on 3 channels keeps 3 steps, a 3x3 on 24 channels would take 5, not 4).
    H200, the 7x7 stride-2 stem (8,3,224,224): its pack 39.4 -> 22.9 us (bench/EXPERIMENTS.md)."""
    _m, cg, kh, kw = d.filter.sizes
    if d.input.element_strides[3] != 1 or d.dilations[1] != 1 or kw > 8:
        return False
    return -(-_pad4(cg * kh * -(-kw // 4)) // _KC) == _k_steps(cg, kh, kw, True)


def _plan_dot4(d, caps, placements, why_choice, tuning, im2col=False):
    n, c, h, w = d.input.sizes
    m, cg, kh, kw = d.filter.sizes
    g = d.group_count
    mg = m // g
    oh, ow = d.output.sizes[2:]
    pixels = n * oh * ow
    # words of a pixel's group row: channel words a tap, or the whole window's (im2col)
    cg4p = _pad4(-(-cg * kh * kw // 4)) if im2col else _pad4(-(-cg // 4))
    rows = im2col and _im2col_rows(d)
    dense_rows = im2col and not rows and _im2col_dense_rows(d)
    if rows:
        cg4p = _pad4(cg * kh * -(-kw // 4))
    k_words = cg4p if im2col else kh * kw * cg4p
    structure = _structure(d)
    need_sx, need_sw = _needs_sums(structure)
    fast = {"X_FAST": int(d.input.element_strides[1] % 4 == 0 and cg % 16 == 0), "W_FAST": int(cg % 16 == 0)}
    # The input pack four pixels a thread where Cg is not a multiple of 16 (no X_FAST) and the rows
    # are whole, aligned words (absent otherwise, so other layers keep their cache keys). H100, same
    # run: C=24 pack 9.0 -> 7.2-7.7 us; on X_FAST layers it was slower (8.2 -> 9.2 us: a quarter of the
    # threads, each storing four vec4s far apart), so those keep a vec4 a thread.
    quad = (
        not im2col
        and not fast["X_FAST"]
        and w % 4 == 0
        and d.input.element_strides[3] == 1
        and placement_of(placements, "input").residual % 4 == 0
        and _outer_strides_4(d.input)
    )
    if quad:
        fast["X_QUAD"] = 1
    rp_req, threads_req, tm_req = tuning.get("pixels_per_thread"), tuning.get("threads"), tuning.get("tile_channels")
    split_k, per_req = tuning.get("split_k"), tuning.get("steps_per_workgroup")
    if rp_req is not None and (not _is_count(rp_req) or not 4 <= rp_req <= 8):
        raise DmlValidationError(f"pixels_per_thread: must be an integer from 4 to 8; got {rp_req!r}")
    if threads_req is not None and (not _is_count(threads_req) or threads_req not in (128, 256, 512)):
        raise DmlValidationError(f"threads: must be 128, 256 or 512; got {threads_req!r}")
    if tm_req not in (None, 32, 64, 128) or isinstance(tm_req, bool):
        raise DmlValidationError(f"tile_channels: must be 32, 64 or 128; got {tm_req!r}")
    k_steps = _k_steps(cg, kh, kw, im2col)
    out_mb = d.output.element_count * 4 / 1e6
    # A CPU adapter (lavapipe, llvmpipe) runs a workgroup on one core: the split-K that fills an
    # H100's SMs only adds atomics and a zeroing pass there, and 128-thread tiles ran fastest
    # (lavapipe, 8 layers of the quick sweep: 1.0-2.1x faster than 256 threads with split-K).
    cpu = caps.is_cpu and threads_req is None and split_k is None and per_req is None
    if cpu:
        threads_req = 128 if tm_req in (None, 64) else None
    untuned = (rp_req, threads_req, tm_req, split_k, per_req) == (None,) * 5
    few = not cpu and _few_steps(k_steps, mg) and untuned
    if few:
        rp_req, threads_req, tm_req = _FEW_STEPS_TILE
    # A GPU's groups of at most 32 output channels take 32-channel tiles (a 64-channel tile at most
    # half full; see _NARROW_TILE_CHANNELS)
    narrow = not cpu and mg <= _NARROW_TILE_CHANNELS and untuned  # (few GEMMs too: `few` implies untuned)
    if narrow:
        tm_req = 32
    rp, threads, tm, auto_steps = _gemm_shape(caps, pixels, mg, g, k_steps, out_mb, rp_req, threads_req, tm_req)
    if cpu:
        auto_steps = k_steps
    tp = _tile_pixels(threads, tm, rp)
    if not _tile_fits(caps, threads, tp, tm):
        raise PlanError(
            f"threads, pixels_per_thread, tile_channels: the {tp}x{tm} tile in {threads}-thread workgroups needs "
            f"{_tile_bytes(tp, tm)} bytes of workgroup memory; {caps.name} has max-compute-workgroup-storage-size "
            f"{caps.limit('max-compute-workgroup-storage-size')} and max-compute-invocations-per-workgroup "
            f"{caps.limit('max-compute-invocations-per-workgroup')}"
        )
    ptiles, mtiles = -(-pixels // tp), -(-mg // tm)
    tiles = ptiles * mtiles * g
    # Split-K in stream-K form: the k steps of all tiles in one line, each workgroup running
    # `slice_steps` consecutive steps of it (crossing into the next tile where they do not divide
    # a tile's steps); `slices` is the most segments a tile is cut into.
    if split_k is not None and per_req is not None:
        raise DmlValidationError("split_k, steps_per_workgroup: give at most one of them")
    if per_req is not None:
        if not _is_count(per_req):
            raise DmlValidationError(f"steps_per_workgroup: must be an integer >= 1; got {per_req!r}")
        slice_steps = min(int(per_req), k_steps)
    elif split_k is not None:
        if not _is_count(split_k):
            raise DmlValidationError(f"split_k: must be an integer >= 1; got {split_k!r}")
        slice_steps = -(-k_steps // min(int(split_k), k_steps))
    else:
        slice_steps = auto_steps
    slices = -(-k_steps // slice_steps)
    line = tiles * k_steps
    if slices > 1 and line >= 2**31:
        raise DmlValidationError(f"split_k: tiles x k steps ({line}) must stay below 2**31 to split")
    workgroups = -(-line // slice_steps)
    split = slices > 1
    zero_linear = split and d.output.is_packed
    x_words = (pixels if im2col else n * h * w) * g * cg4p
    w_words = m * k_words
    if 4 * x_words > caps.max_binding_size:
        raise PlanError(
            f"kernel: the packed input of the {'dot4_im2col' if im2col else 'dot4'} path ({4 * x_words} bytes) "
            f"exceeds {caps.name}'s max-storage-buffer-binding-size {caps.max_binding_size}"
        )
    u = _common_uniforms(d, placements)
    u.update(
        pixels=pixels,
        k_words=k_words,
        group_words_padded=cg4p,
        pixel_tiles=ptiles,
        channel_tiles=mtiles,
        taps=(cg * kh * kw) % 2**32,
        packed_input_words=x_words,
        workgroups=workgroups,
        tile_steps=k_steps,
        workgroup_steps=slice_steps,
        tiles=tiles,
    )
    pack_consts = {**structure, **fast}
    if rows:
        pack_consts["IM2COL_ROWS"] = 1
    elif dense_rows:
        pack_consts["IM2COL_DENSE_ROWS"] = 1
    pack_bind = {"input": "input", "filter": "filter_weights", "packed_input": "packed_input"}
    pack_bind["packed_filter"] = "packed_filter"
    n_pack = x_words // (16 if quad else 4) + w_words
    if split:  # the pack also zeroes the output the slices add into
        pack_consts["OUT_PACKED"] = int(zero_linear)
        pack_bind["output"] = "output"
        n_pack += d.output.element_count
    if im2col:
        pack_bind["input_zero_point"] = "input_zero_point"  # taps outside the input hold it
        pack_u = dict(u, packed_input_words=x_words)
        # The GEMM sees a 1x1 convolution over the OH x OW output pixels, one row of words each.
        u.update(in_height=oh, in_width=ow, kernel_h=1, kernel_w=1, stride_h=1, stride_w=1, pad_top=0, pad_left=0)
        u.update(dilation_h=1, dilation_w=1)
    pack = step(
        ("pack_im2col" if im2col else "pack") + ("_zero" if split else ""),
        "convolution_integer_dot4.wgsl",
        (
            f"each output pixel's window of Cg*KH*KW = {cg * kh * kw} taps into {cg4p} signed 4x8 words "
            "(UINT8 flipped by 0x80; outside the input: the zero point), and the filter rows in the same order"
            + (
                f"; each kernel row as {-(-kw // 4)} whole word(s) gathered from the input row's words (no k step more)"
                if rows
                else ("; each word from at most two 4-byte spans of input rows" if dense_rows else "")
            )
            if im2col
            else "input and filter into signed 4x8 words (UINT8 flipped by 0x80), 16 channels a thread"
            + ("; zero the output the split GEMM adds into" if split else "")
        ),
        n_pack,
        constants=pack_consts,
        uniforms=pack_u if im2col else u,
        bindings=pack_bind,
        uniform_var="cv",
    )
    gemm_bind = {
        "input_zero_point": "input_zero_point",
        "filter_zero_point": "filter_zero_point",
        "output": "output_atomic" if split else "output",
        "packed_input": "packed_input_ro",
        "packed_filter": "packed_filter_ro",
    }
    how = (
        f"stream-K: {workgroups} workgroups of {slice_steps} of a tile's {k_steps} k steps, adding atomically"
        if split
        else f"{workgroups} workgroups, {k_steps} k steps a tile"
        + ("; no split-K and 128-thread tiles on a CPU adapter" if cpu else "")
    )
    gemm = step(
        "convolution_integer_dot4_splitk" if split else "convolution_integer_dot4",
        "convolution_integer_dot4.wgsl",
        f"implicit GEMM on dot4I8Packed: {tp}x{tm} tiles ({rp}x4 outputs a thread, {threads} threads), {how}"
        + (
            ""
            if cpu
            else f" (at most {_FEW_STEPS} k steps and {mg} <= 64 channels a group: the smallest tiles, several an SM)"
            if few
            else " (the H100-fitted cost model's cheapest)"
        )
        + (f"; {mg} <= {_NARROW_TILE_CHANNELS} channels a group: 32-channel tiles" if narrow else ""),
        workgroups * threads,
        workgroup_size=threads,
        constants={
            **structure,
            "RP": rp,
            "TM": tm,
            "NEED_SX": int(need_sx),
            "NEED_SW": int(need_sw),
            # the taps' rows cross k steps (absent otherwise: aligned layers keep their cache keys)
            **({"K_CROSS": 1} if cg4p % _KC else {}),
        },
        uniforms=u,
        bindings=gemm_bind,
        uniform_var="cv",
    )
    details = (
        ("kernel", "dot4_im2col" if im2col else "dot4"),
        ("tile", (tp, tm)),
        ("pixels_per_thread", rp),
        ("threads", threads),
        ("k_steps", k_steps),
        ("slice_steps", slice_steps),
        ("slices", slices),
        ("tiles", tiles),
        ("workgroups", workgroups),
        ("zero_linear", zero_linear),
    )
    workspace = (("packed_input", 4 * x_words), ("packed_filter", 4 * w_words))
    return (pack, gemm), why_choice, workspace, details


def plan_convolution_integer(
    desc: ConvolutionIntegerDesc,
    caps: Capabilities,
    *,
    kernel: str | None = None,
    placements=None,
    pixels_per_thread=None,
    threads=None,
    tile_channels=None,
    split_k=None,
    steps_per_workgroup=None,
    window_tiles=None,
    window_channels=None,
) -> Plan:
    """The execution plan of ``desc`` on an adapter with capabilities ``caps`` (no device needed).

    ``kernel`` requests a path (one of KERNELS: "portable", "depthwise", "depthwise_fma", "grouped_fma",
    "direct", "direct_dot4", "dot4", "dot4_im2col", "dot4_window"; None or "auto": choose); an impossible
    request raises
    :class:`PlanError` naming the rule. Where no path is requested: dot4 for dense layers (C/G
    and M/G >= 16) on adapters with the WGSL feature packed_4x8_integer_dot_product (where a
    pixel's whole window saves k steps, G = 1 and the input rows can be walked: the window kernel,
    else the im2col GEMM; on CPU adapters the window kernel also for dense layers of at most 256
    output positions, and in its tile form (4 pixels of an output row a thread, see
    ``_tile_form``) for dense layers of any size and group count whose kernel rows fill at least
    3/4 of their row words; on GPUs also for G = 1 layers of C/G < 16 and M/G >= 16 whose whole
    window packs into fewer GEMM k steps than tap by tap, and for grouped layers of 2-15 channels a
    group that the grouped FMA kernel does not take (stride 2, past 258 taps) whose group windows
    hold at least _WINDOW_GROUP_TAPS taps), the depthwise kernel for C/G = 1 there
    where its fast rows apply and win (and on CPU adapters), the depthwise FMA kernel for the other
    C/G = 1 layers on GPUs (see ``_fma_over_fast_rows``), the grouped FMA kernel on GPUs for
    grouped stride-1 layers of at most 258 taps a group (but 1x1 layers of 32+ channels a group
    and M/G >= 16: the GEMM) and for G = 1 layers of C < 4 and M < 16 at any stride, else direct
    where its tile fits the staging memory, else portable. On GPUs the GEMM takes 32-channel tiles
    for groups of at most 32 output channels. ``placements`` give the tensors' residual byte offsets
    (uniforms). The dot4 tuning options (``pixels_per_thread`` 4-8, ``threads`` 128/256/512,
    ``tile_channels`` 32/64/128, and
    ``split_k`` or ``steps_per_workgroup``) override the cost model's choice (benchmarks, tests);
    for dot4_window, ``window_channels`` (16 or 32 a block), ``window_tiles`` (pixel tiles a
    workgroup walks) and ``threads`` (64-512) override its shape.
    """
    desc.validate()
    if kernel == "auto":
        kernel = None
    if kernel is not None and kernel not in KERNELS:
        raise PlanError(f"kernel: must be one of {', '.join(KERNELS)} (or auto); got {kernel!r}")
    d = desc.as_4d()
    m, cg, kh, kw = d.filter.sizes
    mg = m // d.group_count
    has_dot4 = caps.has(DOT4_FEATURE)
    dense = cg >= 16 and mg >= 16
    direct = _direct_shape(d, caps)
    direct4 = _direct_shape(d, caps, words=True)
    x_res = placement_of(placements, "input").residual
    fma = _fma_shape(d, caps, x_res) if cg == 1 else (None, None, f"C/G = {cg}, not 1")
    gfma = _grouped_fma_shape(d, caps, x_res) if cg > 1 else (None, None, "C/G = 1: depthwise_fma")
    window = _window_shape(d, caps, window_channels, threads if kernel == "dot4_window" else None)
    tile_full = caps.is_cpu and _tile_full_rows(d)
    if caps.is_cpu and (window[0] is not None or tile_full):
        # CPU adapters: the tile form where the pixel form fits, or where its row words are at
        # least 3/4 full (elsewhere, e.g. 64 channels 5x5, the GEMM ran faster: 1245 against 1423 us)
        tile_shape = _window_shape(d, caps, window_channels, threads if kernel == "dot4_window" else None, tile=True)
        window = tile_shape if tile_shape[0] is not None else window
    # im2col packs a pixel's whole window as the GEMM's K: worth its larger packed input where
    # padding each tap's channels to whole vec4s wastes over 40 % of the steps (Cg = 3: 13 steps -> 3;
    # measured on the H100 when each tap took whole steps: 96 channels 3x3, 18 -> 14 steps, and 5x5,
    # 50 -> 38, ran 15-20 % slower with the pack)
    steps, steps_im2col = _k_steps(cg, kh, kw, False), _k_steps(cg, kh, kw, True)
    limit = caps.max_binding_size
    x_im2col = 4 * d.input.sizes[0] * d.output.sizes[2] * d.output.sizes[3] * d.group_count * 16 * steps_im2col
    im2col = mg >= 16 and steps_im2col <= 0.6 * steps
    # (the CPU rule below keeps the scope it was measured on: the layers im2col took while each tap
    # took whole 16-word steps)
    cpu_direct_scope = mg >= 16 and steps_im2col <= 0.6 * kh * kw * _k_steps(cg, 1, 1, False)
    # Past the binding limit (input, filter or output larger than one storage binding) the
    # one-pass kernels run in steps that each bind windows (_split_windows); the dot4 paths bind
    # whole tensors and their packed workspace, so the plan does not choose them there.
    past_limit = any(
        _binding_bytes(t, placement_of(placements, name).residual) > limit
        for name, t in (("input", d.input), ("filter", d.filter), ("output", d.output))
    )
    x_dot4 = 4 * d.input.sizes[0] * d.input.sizes[2] * d.input.sizes[3] * d.group_count * _pad4(-(-cg // 4))
    # Past the limit the GEMM still runs where a chunk of whole batch items fits: its windows of
    # the input and output and its packed input each fit one binding (the filter is bound whole).
    gemm_chunk = (
        _gemm_batch_chunk(d, caps, placements, kernel == "dot4_im2col" or (kernel is None and im2col))
        if past_limit or x_dot4 > limit or x_im2col > limit
        else d.input.sizes[0]
    )
    if past_limit and kernel is not None and kernel.startswith("dot4") and not gemm_chunk:
        raise PlanError(
            f"kernel: {kernel!r} binds the whole filter and a chunk of whole batch items of the input and output "
            f"(and their packed input); past {caps.name}'s max-storage-buffer-binding-size ({limit}) not even one "
            f"batch item fits: use 'direct', 'direct_dot4' or 'portable', which split into smaller windows"
        )
    if kernel is None:
        # The GEMM paths bind whole tensors and their packed input: past the binding limit the
        # plan takes a one-pass kernel, which splits into windows.
        gemm_off = (
            f"the dot4 GEMM binds the whole filter and chunks of whole batch items, and not even one item fits "
            f"{caps.name}'s max-storage-buffer-binding-size ({limit}) here, while the one-pass kernels split into "
            "smaller windows: "
            if not gemm_chunk
            else ""
        )
        gemm_ok = has_dot4 and not gemm_off
        # GPU scopes, H200 session 39 (bench/EXPERIMENTS.md, same call, every result exact): the grouped
        # FMA kernel takes grouped stride-1 layers of exact f32 sums except 1x1 layers of at least 32
        # channels a group and M/G >= 16 (the GEMM: C/G = 32, M/G = 64 at 224x336 619 -> 207 us, C/G =
        # 64 351 -> 43, C/G = 32 M/G = 32 411 -> 221; at C/G = 16 the GEMM ran 1.6-2.5x slower), and G = 1
        # layers of C < 4 and M < 16 (stems with few outputs, which only the scalar direct kernel took:
        # 1858 -> 323, 145 -> 58, 72 -> 26 us; from C = 4 on direct_dot4 held its own: C=4 5x5 M=8 244 ->
        # 268, C=64 1x1 M=8 115 -> 1032). Its sums of a few channels at a time (groups past 258 taps)
        # only on request: C/G = 8 at 7x7 ran 1.6x slower than direct_dot4. The window kernel takes
        # G = 1 layers of C < 16, M >= 16 whose whole window has fewer k steps than its taps one by
        # one (C = 8 3x3: 2 against 3; against direct_dot4 93.7 -> 56.8, 229 -> 85, 44.8 -> 22.5, 53.2
        # -> 28.9, 88.2 -> 41.0, 433 -> 295, 1-D k9 27.0 -> 23.9; 14.8 -> 17.2 on 7x7 planes); C = 24 and
        # 40 keep the GEMM (the window kernel took 0.59-5.2x its time, mostly more).
        exact_f32 = cg * kh * kw <= _FMA_EXACT_TAPS  # (else sums of a few channels at a time, added in i32)
        dense_gemm = dense and gemm_ok and kh * kw == 1 and cg >= 32
        gfma_grouped = d.group_count > 1 and d.strides == (1, 1) and exact_f32 and not dense_gemm
        gfma_few = d.group_count == 1 and mg < 16 and cg < 4 and exact_f32
        window_saves_steps = not caps.is_cpu and d.group_count == 1 and not dense and mg >= 16 and steps_im2col < steps
        # grouped layers of C/G < 16 that the grouped FMA kernel does not take (stride 2, or more than
        # 258 taps a group), whose group windows hold at least _WINDOW_GROUP_TAPS taps
        window_grouped = (
            not caps.is_cpu
            and d.group_count > 1
            and 2 <= cg < 16
            and cg * kh * kw >= _WINDOW_GROUP_TAPS
            and not (gfma_grouped and gfma[0] is not None)
        )
        # dense layers of fewer than 16 output channels, which direct_dot4 took: _WINDOW_NARROW_MIN_KW
        window_narrow = not caps.is_cpu and d.group_count == 1 and mg < 16 and cg >= 4 and kw >= _WINDOW_NARROW_MIN_KW
        positions = d.output.sizes[0] * int(np.prod(d.output.sizes[2:]))
        window_scope = (
            (im2col or window_saves_steps or window_grouped or window_narrow)
            and (caps.is_cpu or _window_workgroups(window) * d.group_count >= _WINDOW_MIN_WORKGROUPS)
        ) or (caps.is_cpu and dense and (positions <= _CPU_WINDOW_POSITIONS or tile_full))
        if (
            caps.is_cpu
            and (d.group_count > 1 or _cpu_gfma_dense(cg, mg, kh * kw, positions))
            and not past_limit
            and gfma[0] is not None
            and exact_f32
            and (cg <= _CPU_GFMA_CHANNELS or kh * kw == 1)
        ):
            # A CPU adapter's packed dot product unpacks its bytes lane by lane; f32 multiply-adds
            # need no unpacking. lavapipe, --random quick rows of seeds 3-7 (plan before -> grouped_fma,
            # us): C/G <= 4 against portable 245 -> 130, 219 -> 107, 1022 -> 426, 264 -> 82, 760 -> 232,
            # 204 -> 170, 71 -> 67, but 69 -> 96 and 64 -> 78 (stride 2, a few dozen outputs); against
            # direct_dot4 1293 -> 491, 244 -> 167, 489 -> 204 (direct); 1x1 with C/G 8-32 against the GEMM,
            # the tile form and direct_dot4 461 -> 132, 562 -> 347, 115 -> 67, 114 -> 88, 121 -> 109.
            # Not taken: C/G 8-16 with 3x3 / 5x5 kernels (0.41-1.39x against the tile form and direct_dot4).
            kernel = "grouped_fma"
            why = (
                f"C/G = {cg}, M/G = {mg}, G = {d.group_count}, a {kh}x{kw} kernel on a CPU adapter: the grouped FMA "
                f"kernel (C/G x KH x KW = {cg * kh * kw} <= {_FMA_EXACT_TAPS} taps: exact f32 sums; f32 "
                "multiply-adds need none of the packed dot product's byte unpacking, which a CPU adapter does "
                "lane by lane)"
            )
        elif (
            gemm_ok
            and window_scope
            and (d.group_count == 1 or window_grouped or "TILE_FORM" in (window[0] or {}))
            and not past_limit
            and window[0] is not None
            and (_window_rows(d) or "TILE_FORM" in window[0])
        ):
            # (H100, same run, every result exact, against the im2col GEMM: C=3 7x7 stride-2 stem
            # 79.9 -> 54.5 us, the same to 128 channels 122 -> 100, C=3 3x3 stride 2 38.7 -> 17.7,
            # C=2 1-D k7 18.9 -> 12.0, 4x4 stride-4 patches 22.8 -> 19.5, batch-32 stem 275 -> 184,
            # 5x5 stride-2 stem 73.5 -> 35.6; C=4 5x5 25.1 -> 26.4, batch-2 stem 26.6 -> 27.6.
            # lavapipe, same process, against the im2col GEMM / direct_dot4: stems 7x7 stride 2 at
            # 2x224x224 20.4 / 26.9 / 36.4 ms, 1x64x64 0.90 / 1.46 / 1.53, 1x32x32 0.28 / 0.52 / 0.45,
            # 3x3 stride 2 2x112x112 1.03 / 2.95 / 1.32, C=4 5x5 1x32x32 0.91 / 1.14 / 1.63, C=2 1-D
            # k7 0.36 / 0.66 / 0.68. Grouped layers take it on CPU adapters in the tile form only:
            # lavapipe G=2 203 -> 150 us, 1x128x28x28 G2 4732 -> 3757 against direct_dot4 / the GEMM.)
            # (H200, session 40: grouped layers of C/G < 16 the grouped FMA kernel does not take, see
            # _WINDOW_GROUP_TAPS.)
            kernel = "dot4_window"
            gfma_off = (
                "stride " + "x".join(map(str, d.strides)) if d.strides != (1, 1) else f"{cg * kh * kw} taps a group"
            )
            small = (
                f"G = {d.group_count} groups of C/G = {cg} < 16 channels that the grouped FMA kernel does not take "
                f"({gfma_off}): "
                if window_grouped
                else f"M = {mg} < 16 output channels and kernel rows of {kw} taps (>= {_WINDOW_NARROW_MIN_KW}) "
                "on a GPU: "
                "the window kernel, not direct_dot4 (H200: 0.66-3.56x, geometric mean 1.42x on 24 random layers); "
                if window_narrow and not im2col
                else ""
                if im2col
                else f"C/G = {cg} < 16: a pixel's whole window packs into {steps_im2col} GEMM k steps of 16 words, "
                f"tap by tap into {steps}; "
                if window_saves_steps
                else f"{positions} output positions on a CPU adapter (at most {_CPU_WINDOW_POSITIONS}): "
                if positions <= _CPU_WINDOW_POSITIONS
                else f"a CPU adapter and kernel rows of {d.filter.sizes[3]} taps (row words at least 3/4 full): "
            )
            who = (
                "the tile form: each thread multiplies 4 neighbouring pixels' windows of an output row (a lane's "
                "every load is a gather on a CPU adapter: each staged filter vec4 feeds 16 dot products)"
                if "TILE_FORM" in window[0]
                else "each thread multiplies its own pixel's window"
            )
            why = small + (
                f"M/G = {mg}{' >= 16' if mg >= 16 else ''} with C/G = {cg}: a pixel's whole window is {cg * kh * kw} "
                f"taps, so {who}, "
                "gathered from the input a kernel row at a time, against a staged block of filter rows, in one "
                f"pass (no packed im2col copy, no 16-word k steps), on the packed 4x8 dot product ({caps.name} has "
                f"{DOT4_FEATURE})"
            )
        elif (
            gemm_ok
            and cpu_direct_scope
            and caps.is_cpu
            and direct4[0] is not None
            and (d.group_count > 1 or positions <= _CPU_DIRECT_POSITIONS)
        ):
            # A CPU adapter: the one-pass direct_dot4 kernel instead of packing an im2col copy and
            # multiplying it, for grouped layers and small ones (see _CPU_DIRECT_POSITIONS)
            kernel = "direct_dot4"
            why = (
                f"C/G = {cg}, M/G = {mg}, G = {d.group_count}, {positions} output positions on a CPU adapter: the "
                "direct kernel, four channels a word on the packed 4x8 dot product, in one pass (the im2col GEMM's "
                "packing pass and per-group tiles cost more there)"
            )
        elif not caps.is_cpu and not past_limit and gfma[0] is not None and (gfma_grouped or gfma_few):
            # (H100, same run, every result exact, against the plan's choice before: G=32 C/G=8 at
            # 28x28 32.3 -> 23.0 us (direct_dot4), G=32 C/G=16 at 14x14 40.2 -> 29.4 (dot4), G=64
            # C/G=4 at 56x56 84.5 -> 54.8, 1-D G=8 C/G=8 k5 39.7 -> 17.2; but at stride 2 (G=32
            # C/G=4) 24.3 -> 34.8 and on dense layers (C=24 3x3, C=16, the C=3 stem) 1.4-9x slower.
            # H200, session 39: grouped 1x1 layers of 32+ channels a group take the GEMM; layers of
            # G = 1 with C < 4 and fewer than 16 output channels take this kernel at any stride (against
            # the direct kernel: C=2 7x7 M=8 at 64x256x384 1858 -> 326 us, C=3 7x7 stride 2 136 -> 42, C=2
            # 3x3 52 -> 16, C=3 7x7 M=6 98 -> 28, 1-D C=2 k7 23 -> 11; see above))
            kernel = "grouped_fma"
            scope = (
                f"G = {d.group_count}, stride 1"
                if gfma_grouped
                else f"G = 1 with C = {cg} < 4 and M = {mg} < 16 output channels (a GEMM tile or a 16-channel "
                "block mostly idle, and too few channels for four a word)"
            )
            why = gemm_off + (
                f"C/G = {cg}, M/G = {mg}, {scope}: the grouped FMA kernel (the group's input window and a block's "
                f"taps staged as f32 in workgroup memory, C/G x KH x KW = {cg * kh * kw} <= {_FMA_EXACT_TAPS} taps: "
                "exact f32 sums), 1.4-5.7x the direct and GEMM kernels on the H100/H200"
            )
        elif gemm_ok and im2col:
            kernel = "dot4_im2col"
            why = (
                f"M/G = {mg} >= 16 with C/G = {cg}: a GEMM with K = C/G*KH*KW = {cg * kh * kw} taps packed whole "
                f"({steps_im2col} k steps of 16 words, not {steps} with each tap's channels padded), on the packed "
                f"4x8 dot product ({caps.name} has {DOT4_FEATURE})"
            )
        elif dense and gemm_ok:
            kernel = "dot4"
            why = (
                f"C/G = {cg} and M/G = {mg} (>= 16): a dense layer, run as an implicit GEMM on the packed 4x8 dot "
                f"product ({caps.name} has {DOT4_FEATURE})"
            )
        elif (
            has_dot4
            and cg == 1
            and not past_limit
            and (caps.is_cpu or _depthwise_fast(d) or direct[0] is None)
            and not (not caps.is_cpu and fma[0] is not None and _fma_over_fast_rows(d))
        ):
            # (lavapipe too: 3x3 depthwise 1.6-4.3x the direct kernel and 2.4-7x the portable one
            # at 28x28 to 112x112, no workgroup memory and no barrier; its tap-at-a-time rows too:
            # 5x5 stride 2, 3x3 dilation 2 and stride 3 ran 1.5-3.3x the direct kernel there, 5x5 and
            # 7x7 stride 1 even. On the H100 those rows ran 2.3-2.7x slower than direct: a GPU takes
            # direct for them, below)
            kernel = "depthwise"
            why = gemm_off + (
                f"C/G = 1 (depthwise), M/G = {mg}: the depthwise kernel, eight outputs of a row a thread, a row of "
                f"taps one or two packed 4x8 dot products ({caps.name} has {DOT4_FEATURE})"
            )
            if not caps.is_cpu and _fma_small_plane(d):
                plane = d.output.sizes[2] * d.output.sizes[3]
                why += (
                    f"; not the depthwise FMA kernel, which takes {kh * kw} taps from {_FMA_OVER_FAST_MIN_PLANE} "
                    f"outputs a plane: on {plane} its staged window is mostly halo (H200: 7x7 on 8x768x7x7 22.8 -> "
                    "12.9 us)"
                )
        elif cg == 1 and not caps.is_cpu and not past_limit and fma[0] is not None:
            # (H100, same run, against direct, every result exact: 3x3 dilation 2 80.4 -> 38.9 us,
            # stride 3 74.2 -> 38.7, 1x9 41.7 -> 23.6, 5x5 dilation 2 34.3 -> 23.0, NHWC input 3x3
            # 99.8 -> 69.1, 7x7 99.1 -> 90.9, 3x3 stride 2 130.6 -> 113.4, 1-D k9 dilation 2 37.1 ->
            # 29.4; over the depthwise kernel's fast rows only where _fma_over_fast_rows says so)
            kernel = "depthwise_fma"
            if has_dot4 and _depthwise_fast(d):
                reason = _fma_over_fast_rows(d)
            elif has_dot4:
                reason = (
                    "the depthwise kernel's fast rows do not take (a kernel wider than 8, W dilation, W stride above "
                    "2 or input rows that are not contiguous), 1.1-2.1x the direct kernel on the H100"
                )
            else:
                reason = f"on {caps.name} without {DOT4_FEATURE}, 1.1-2.1x the direct kernel on the H100"
            why = gemm_off + (
                f"C/G = 1 (depthwise), M/G = {mg}: the depthwise FMA kernel (input window staged as f32 in "
                f"workgroup memory, exact f32 sums of at most 64 taps), a layer {reason}"
            )
        elif has_dot4 and cg >= 4 and direct4[0] is not None:
            kernel = "direct_dot4"
            why = gemm_off + (
                f"C/G = {cg}, M/G = {mg}: the direct kernel (input window and filter block staged once in workgroup "
                f"memory), four channels a word on the packed 4x8 dot product"
            )
        elif direct[0] is not None:
            kernel = "direct"
            if has_dot4 and cg == 1 and not past_limit:
                gemm_off += (
                    "the depthwise kernel's rows here would take a tap at a time (a kernel wider than 8, W dilation "
                    "or W stride above 2), measured 2.3-2.7x slower than direct on the H100 (5x5, 7x7 before their "
                    "fast rows); "
                )
            why = gemm_off + (
                (f"C/G = {cg}, M/G = {mg}: " if not dense or gemm_off else f"no {DOT4_FEATURE} on {caps.name}: ")
                + "the direct kernel (input window and filter block staged once in workgroup memory)"
                + ("; a GEMM would pad its channels and leave its tiles mostly idle" if not dense else "")
            )
        else:
            kernel = "portable"
            why = gemm_off + f"the direct kernel does not fit: {direct[1]}; one thread an output"
        if caps.is_cpu and kernel in ("direct", "direct_dot4"):
            # A CPU adapter runs every invocation of a workgroup, busy or not, through its staging
            # loops and barriers: where the tile leaves most threads without outputs, the portable
            # kernel (one thread an output, no staging) ran 2.0-4.3x faster (lavapipe, Mesa 25:
            # depthwise 8x8-16x16, G=64 7x7, depthwise 3x3 stride 2 at 28x28); from half the threads
            # busy up the direct kernels were even (depthwise 28x28) or faster (2.2x at 56x56).
            th, tw, cb = (direct4 if kernel == "direct_dot4" else direct)[0][:3]
            busy = cb * th * -(-tw // 4)
            if busy < _WG // 2:
                why = (
                    f"{why}; but its {th}x{tw} tile of {cb} channel(s) gives {busy} of its {_WG} threads work (runs "
                    f"of four outputs), under half, and {caps.name} is a CPU adapter, which runs idle invocations "
                    "too: the portable kernel instead, one thread an output"
                )
                kernel = "portable"
    else:
        why = f"kernel {kernel!r} requested"
        if kernel == "depthwise" and cg != 1:
            raise PlanError(f"kernel: 'depthwise' needs one input channel per group (C/G = 1); got C/G = {cg}")
        if kernel == "depthwise" and past_limit:
            raise PlanError(
                f"kernel: 'depthwise' binds whole tensors; past {caps.name}'s max-storage-buffer-binding-size "
                f"({limit}) use 'direct' or 'portable', which split into smaller windows"
            )
        if ("dot4" in kernel or kernel == "depthwise") and not has_dot4:
            raise PlanError(
                f"kernel: {kernel!r} needs the WGSL language feature {DOT4_FEATURE}, which {caps.name} "
                f"({caps.backend}) lacks; use 'direct' or 'portable'"
            )
        if kernel == "direct" and direct[0] is None:
            raise PlanError(f"kernel: 'direct' cannot run this layer: {direct[1]}")
        if kernel == "grouped_fma" and (gfma[0] is None or past_limit):
            why_not = gfma[2] if gfma[0] is None else f"it binds whole tensors, past {caps.name}'s binding limit"
            raise PlanError(f"kernel: 'grouped_fma' cannot run this layer: {why_not}")
        if kernel == "depthwise_fma" and (fma[0] is None or past_limit):
            why_not = fma[2] if fma[0] is None else f"it binds whole tensors, past {caps.name}'s binding limit"
            raise PlanError(f"kernel: 'depthwise_fma' cannot run this layer: {why_not}")
        if kernel == "direct_dot4" and direct4[0] is None:
            raise PlanError(f"kernel: 'direct_dot4' cannot run this layer: {direct4[1]}")
        if kernel == "dot4_window" and (window[0] is None or past_limit):
            why_not = window[2] if window[0] is None else f"it binds whole tensors, past {caps.name}'s binding limit"
            raise PlanError(f"kernel: 'dot4_window' cannot run this layer: {why_not}")
    if kernel == "dot4_window":
        steps, why, workspace, details = _plan_window(d, caps, placements, why, window, {"window_tiles": window_tiles})
    elif kernel.startswith("dot4"):
        tuning = dict(
            pixels_per_thread=pixels_per_thread,
            threads=threads,
            tile_channels=tile_channels,
            split_k=split_k,
            steps_per_workgroup=steps_per_workgroup,
        )
        im = kernel == "dot4_im2col"
        if gemm_chunk < d.input.sizes[0]:
            steps, why, workspace, details = _split_dot4(d, caps, placements, why, tuning, im, gemm_chunk)
        else:
            steps, why, workspace, details = _plan_dot4(d, caps, placements, why, tuning, im)
    elif kernel == "depthwise":
        steps, why, workspace, details = _plan_depthwise(d, caps, placements, why)
    elif kernel == "depthwise_fma":
        steps, why, workspace, details = _plan_fma(d, caps, placements, why, fma, grouped=False)
    elif kernel == "grouped_fma":
        steps, why, workspace, details = _plan_fma(d, caps, placements, why, gfma, grouped=True)
    elif kernel == "direct":
        steps, why, workspace, details = _plan_direct(d, caps, placements, why, direct)
    elif kernel == "direct_dot4":
        steps, why, workspace, details = _plan_direct(d, caps, placements, why, direct4, words=True)
    else:
        steps, why, workspace, details = _plan_portable(d, caps, placements, why)
    if past_limit and not kernel.startswith("dot4"):
        tile = None
        if kernel.startswith("direct"):
            info = dict(details)
            tile = (*info["tile"], info["channel_block"])
        steps, split_why, shape = _split_windows(d, caps, placements, steps[0], tile)
        why += f"; {split_why}"
        details += (("split_steps", len(steps)), ("split_piece", _piece_sizes(shape)))
    n = d.input.sizes[0]
    ops = 2 * n * m * d.output.sizes[2] * d.output.sizes[3] * cg * d.filter.sizes[2] * d.filter.sizes[3]
    return Plan(
        OP,
        steps,
        why,
        _bytes_moved(d),
        caps.name,
        ops=ops,
        workspace=workspace,
        details=details,
    )


def _binding_bytes(t: TensorDesc, residual: int) -> int:
    """Bytes a binding of the whole tensor ``t`` takes (its residual offset, rounded to 16)."""
    return (residual + t.total_tensor_size_in_bytes + 15) & ~15


@dataclass(frozen=True)
class _Piece:
    """One window step past the binding limit: batch items [n0, n0 + nn); groups [g0, g0 + gp),
    and in each, output channels [ml0, ml0 + mc) and input channels [c0, c0 + cc) (a part of a
    group only where gp == 1); output rows [oh0, oh0 + oh) and columns [ow0, ow0 + ow)."""

    n0: int
    nn: int
    g0: int
    gp: int
    ml0: int
    mc: int
    c0: int
    cc: int
    oh0: int
    oh: int
    ow0: int
    ow: int


def _halo(o0: int, count: int, stride: int, dilation: int, k: int, pad: int, size: int) -> tuple[int, int, int, int]:
    """The input rows (or columns) ``count`` output rows from ``o0`` read, clamped to the input:
    (first row, rows to bind, rows the shader sees, its start padding). Padded rows are virtual
    (the shaders skip taps outside the input), so a band's top padding is the distance from its
    first tap to the first bound row. A band wholly in the padding binds one row and sees none."""
    lo = o0 * stride - pad
    hi = (o0 + count - 1) * stride + (k - 1) * dilation - pad + 1
    r0, r1 = max(lo, 0), min(hi, size)
    if r1 <= r0:
        return min(r0, size - 1), 1, 0, 0
    return r0, r1 - r0, r1 - r0, r0 - lo


def _window(t: TensorDesc, starts, counts) -> tuple[int, int]:
    """(byte offset of the first element, bytes to the end of the last one) of the box of ``t``
    with ``counts`` elements from ``starts`` along each axis."""
    st = t.element_strides
    eb = t.data_type.size_in_bytes
    at = sum(a * s for a, s in zip(starts, st))
    span = sum((c - 1) * s for c, s in zip(counts, st)) + 1
    return at * eb, span * eb


def _piece_windows(d: ConvolutionIntegerDesc, p: _Piece):
    """{tensor name: (byte offset, span)} of piece ``p``, and the shader's view of its input rows
    and columns ((rows, top padding), (columns, left padding))."""
    _, _, h, w = d.input.sizes
    m, cg, kh, kw = d.filter.sizes
    mg = m // d.group_count
    (sh, sw), (dh, dw) = d.strides, d.dilations
    (pt, pl) = d.start_padding
    r0, rows, rows_seen, pad_t = _halo(p.oh0, p.oh, sh, dh, kh, pt, h)
    q0, cols, cols_seen, pad_l = _halo(p.ow0, p.ow, sw, dw, kw, pl, w)
    cin = (p.gp - 1) * cg + p.cc
    mout = (p.gp - 1) * mg + p.mc
    m0 = p.g0 * mg + p.ml0
    spans = {
        "input": _window(d.input, (p.n0, p.g0 * cg + p.c0, r0, q0), (p.nn, cin, rows, cols)),
        "filter": _window(d.filter, (m0, p.c0, 0, 0), (mout, p.cc, kh, kw)),
        "output": _window(d.output, (p.n0, m0, p.oh0, p.ow0), (p.nn, mout, p.oh, p.ow)),
    }
    return spans, (rows_seen, pad_t), (cols_seen, pad_l)


def _halvings(n: int) -> list[int]:
    """n, ceil(n/2), ceil(n/4), ..., 1 (the chunk sizes the window search tries)."""
    out = [n]
    while out[-1] > 1:
        out.append(-(-out[-1] // 2))
    return out


def _piece_sizes(p: _Piece) -> tuple[int, ...]:
    """A step's box as (batch items, groups, output channels a group, input channels a group,
    output rows, output columns)."""
    return (p.nn, p.gp, p.mc, p.cc, p.oh, p.ow)


def _choose_pieces(d: ConvolutionIntegerDesc, caps: Capabilities, windowed: tuple[str, ...], tile_rows: int):
    """The largest piece shape (a _Piece at the origin) whose windows of the ``windowed`` tensors
    each fit one binding (span + twice the alignment, for the residual and the window's start,
    rounded to 16), or None.

    Whole batch items first (no halo, no split reduction); else one batch item with the fewest
    steps over: groups a step (halving), or in one group output and input channels a step
    (halving each; a split of the input channels adds into the output), and the most output rows
    a step (as few bands as that gives, balanced, in whole tiles of the direct kernel where they
    fit), or one row and the most columns. Ties go to fewer input-channel splits."""
    al, limit = caps.binding_alignment, caps.max_binding_size
    n, _, oh_all, ow_all = d.output.sizes
    m, cg, _, _ = d.filter.sizes
    g = d.group_count
    mg = m // g

    def fits(p: _Piece) -> bool:
        spans = _piece_windows(d, p)[0]
        # a window starts up to al - 1 bytes before its data, after a residual below al; bound rounded to 16
        return all((spans[name][1] + 2 * al + 15) & ~15 <= limit for name in windowed)

    def most(lo_fits, n_max) -> int:
        """The largest k in 1..n_max with lo_fits(k) (monotone), or 0."""
        if not lo_fits(1):
            return 0
        a, b = 1, n_max
        while a < b:
            mid = (a + b + 1) // 2
            a, b = (mid, b) if lo_fits(mid) else (a, mid - 1)
        return a

    per = most(lambda k: fits(_Piece(0, k, 0, g, 0, mg, 0, cg, 0, oh_all, 0, ow_all)), n)
    if per:
        return _Piece(0, per, 0, g, 0, mg, 0, cg, 0, oh_all, 0, ow_all)
    shapes = [(gp, mg, cg) for gp in _halvings(g)]
    shapes += [(1, mc, cc) for mc in _halvings(mg) for cc in _halvings(cg) if (mc, cc) != (mg, cg)]
    best = None
    for gp, mc, cc in shapes:
        rows = most(lambda k: fits(_Piece(0, 1, 0, gp, 0, mc, 0, cc, 0, k, 0, ow_all)), oh_all)
        cols = ow_all
        if rows == 0:
            rows = 1
            cols = most(lambda k: fits(_Piece(0, 1, 0, gp, 0, mc, 0, cc, 0, 1, 0, k)), ow_all)
            if cols == 0:
                continue
        else:  # the same number of bands, balanced, a whole number of the direct kernel's tile rows where it can
            bands = -(-oh_all // rows)
            even = -(-oh_all // bands)
            rows = min(rows, -(-even // tile_rows) * tile_rows) if even > tile_rows else even
        csplit = -(-cg // cc)
        steps = n * -(-g // gp) * -(-mg // mc) * csplit * -(-oh_all // rows) * -(-ow_all // cols)
        if best is None or (steps, csplit) < best[0]:
            best = ((steps, csplit), _Piece(0, 1, 0, gp, 0, mc, 0, cc, 0, rows, 0, cols))
    return None if best is None else best[1]


def _batch_desc(d: ConvolutionIntegerDesc, nn: int) -> ConvolutionIntegerDesc:
    """``d`` cut to its first ``nn`` batch items (the same strides: a window of each tensor)."""

    def cut(t: TensorDesc) -> TensorDesc:
        return TensorDesc(t.data_type, (nn,) + tuple(t.sizes[1:]), t.element_strides)

    return replace(d, input=cut(d.input), output=cut(d.output))


def _gemm_batch_chunk(d: ConvolutionIntegerDesc, caps: Capabilities, placements, im2col: bool) -> int:
    """The most whole batch items whose input and output windows (from any item, so a window's
    start rounded down to the binding alignment) and packed input each fit one binding, with the
    whole filter; 0 where not even one does."""
    al, limit = caps.binding_alignment, caps.max_binding_size
    n, c, h, w = d.input.sizes
    m, cg, kh, kw = d.filter.sizes
    oh, ow = d.output.sizes[2:]
    g = d.group_count
    if _binding_bytes(d.filter, placement_of(placements, "filter").residual) > limit:
        return 0
    steps_im2col = _k_steps(cg, kh, kw, True)
    per_item = 4 * oh * ow * g * 16 * steps_im2col if im2col else 4 * h * w * g * _pad4(-(-cg // 4))
    for nn in _halvings(n):
        _, x_span = _window(d.input, (0, 0, 0, 0), (nn, c, h, w))
        _, o_span = _window(d.output, (0, 0, 0, 0), (nn, m, oh, ow))
        if x_span + 2 * al <= limit and o_span + 2 * al <= limit and nn * per_item <= limit:
            return nn
    return 0


def _split_dot4(d, caps, placements, why, tuning, im2col, chunk):
    """The dot4 GEMM (pack, then GEMM) over chunks of ``chunk`` whole batch items, each pair of
    steps binding windows of the input and output and reusing one packed workspace (steps run in
    order: a chunk's pack follows the previous chunk's GEMM)."""
    n = d.input.sizes[0]
    al = caps.binding_alignment
    sub = {}
    steps = []
    for n0 in range(0, n, chunk):
        nn = min(chunk, n - n0)
        if nn not in sub:
            sub[nn] = _plan_dot4(_batch_desc(d, nn), caps, placements, why, tuning, im2col)
        (pack, gemm), _, _, details = sub[nn]
        windows, bases = [], {}
        for name, t in (("input", d.input), ("output", d.output)):
            r = placement_of(placements, name).residual
            at, span = _window(t, (n0, 0, 0, 0), (nn,) + tuple(t.sizes[1:]))
            at += r
            start = at // al * al
            windows.append((name, start, at - start + span))
            bases[name] = at - start
        for s in (pack, gemm):
            u = dict(s.uniforms_dict, input_base=bases["input"], output_base=bases["output"] // 4)
            mine = [w for w in windows if w[0] in s.bindings_dict]  # the pack binds the input, the GEMM the output
            steps.append(s.part(n0 // chunk, f"batch items {n0}..{n0 + nn - 1}: {s.why}", uniforms=u, windows=mine))
    _, _, workspace, details = sub[min(chunk, n)]
    parts = -(-n // chunk)
    why += (
        f"; input or output past {caps.name}'s max-storage-buffer-binding-size ({caps.max_binding_size} bytes): "
        f"{parts} chunks of up to {chunk} batch items, each packed and multiplied on windows of both"
    )
    return tuple(steps), why, workspace, details + (("batch_chunks", parts), ("batch_chunk", chunk))


def _split_windows(d: ConvolutionIntegerDesc, caps: Capabilities, placements, s, tile=None):
    """``s`` (a one-pass step over the whole convolution) as steps that each bind windows of the
    input and output (and filter, where it is past the limit too) that fit the binding limit.

    Each step is the convolution of a box of the output: whole batch items where one fits, else
    one item's groups, output channels, output rows (and columns) in bands. Its input window
    holds the rows its band reads, the kernel's halo included (strides and dilations), clamped
    to the input; the padding above and left of the window is virtual (in_height / pad_top and
    in_width / pad_left of the step). A group's input channels may be split too: the first step
    stores, the others add into the output (ACCUMULATE). Windows start on the binding alignment;
    the rest of each start goes into the step's input_base / filter_base / output_base, as the
    residual offsets do. ``tile``: the direct kernel's (rows, cols, channel block)."""
    al, limit = caps.binding_alignment, caps.max_binding_size
    n, _, oh_all, ow_all = d.output.sizes
    m, cg, kh, kw = d.filter.sizes
    g = d.group_count
    mg = m // g
    windowed = ("input", "output")
    if _binding_bytes(d.filter, placement_of(placements, "filter").residual) > limit:
        windowed += ("filter",)
    shape = _choose_pieces(d, caps, windowed, tile[0] if tile else 1)
    if shape is None:
        raise PlanError(
            f"input, filter, output: no window of one output row segment fits {caps.name}'s "
            f"max-storage-buffer-binding-size ({limit} bytes): a filter row of C/G*KH*KW = {cg * kh * kw} "
            f"taps and its input window must fit one binding"
        )
    batch_only = shape.nn > 1 or (shape.gp == g and shape.oh == oh_all and shape.ow == ow_all)
    u0 = s.uniforms_dict
    wz = d.filter_zero_point
    zp_step = u0["filter_zp_stride"] if wz is not None and wz.element_count > 1 else 0
    steps = []
    for n0 in range(0, n, shape.nn):
        for g0 in range(0, g, shape.gp):
            for ml0 in range(0, mg, shape.mc):
                for oh0 in range(0, oh_all, shape.oh):
                    for ow0 in range(0, ow_all, shape.ow):
                        for c0 in range(0, cg, shape.cc):  # innermost: the storing step precedes the adding ones
                            p = _Piece(
                                n0,
                                min(shape.nn, n - n0),
                                g0,
                                min(shape.gp, g - g0),
                                ml0,
                                min(shape.mc, mg - ml0),
                                c0,
                                min(shape.cc, cg - c0),
                                oh0,
                                min(shape.oh, oh_all - oh0),
                                ow0,
                                min(shape.ow, ow_all - ow0),
                            )
                            steps.append(_piece_step(d, placements, s, u0, p, windowed, al, zp_step, tile, len(steps)))
    if batch_only:
        what = f"{len(steps)} steps of up to {shape.nn} batch items, each binding a window of both"
    else:
        what = (
            f"{len(steps)} steps, each one batch item, {shape.gp} group(s), {shape.mc} output and {shape.cc} input "
            f"channels a group, {shape.oh} output rows x {shape.ow} columns, binding the input window its band "
            f"reads (kernel halo included, padding virtual)"
            + (f"; the group's {cg} input channels summed over {-(-cg // shape.cc)} steps" if shape.cc < cg else "")
        )
    return tuple(steps), f"input or output past max-storage-buffer-binding-size ({limit} bytes): {what}", shape


def _piece_step(d, placements, s, u0, p: _Piece, windowed, al, zp_step, tile, index):
    """The step of piece ``p``: step ``s`` with the piece's sizes, bases and windows."""
    spans, (rows, pad_t), (cols, pad_l) = _piece_windows(d, p)
    m, cg, kh, kw = d.filter.sizes
    mg = m // d.group_count
    mout = (p.gp - 1) * mg + p.mc
    u = dict(u0)
    u.update(
        in_channels=(p.gp - 1) * cg + p.cc,
        in_height=rows,
        in_width=cols,
        pad_top=pad_t,
        pad_left=pad_l,
        out_channels=mout,
        group_in_channels=p.cc,
        group_out_channels=p.mc,
        group_count=p.gp,
        group_words=-(-p.cc // 4),
        out_height=p.oh,
        out_width=p.ow,
        output_count=p.nn * mout * p.oh * p.ow,
    )
    if u0["taps"]:
        u["taps"] = (p.cc * kh * kw) % 2**32
    u["filter_zp_base"] += (p.g0 * mg + p.ml0) * zp_step
    windows = []
    for name, base in (("input", "input_base"), ("filter", "filter_base"), ("output", "output_base")):
        at, span = spans[name]
        r = placement_of(placements, name).residual
        start = at // al * al if name in windowed else 0
        if name in windowed:
            windows.append((name, start, at - start + span))
        off = r + at - start
        u[base] = off // 4 if name == "output" else off
    if tile:
        th, tw, cb = tile
        blocks = -(-p.mc // cb)
        u.update(
            tiles_h=-(-p.oh // th),
            tiles_w=-(-p.ow // tw),
            channel_block=-(-p.mc // blocks),
            channel_blocks=blocks,
        )
        u["workgroups"] = p.nn * p.gp * blocks * u["tiles_h"] * u["tiles_w"]
        invocations = u["workgroups"] * s.workgroup_size
    else:
        invocations = u["output_count"]
    consts = s.constants_dict
    if p.c0:
        consts["ACCUMULATE"] = 1
    where = f"batch items {p.n0}..{p.n0 + p.nn - 1}"
    if p.gp < d.group_count or p.mc < mg or p.oh < d.output.sizes[2] or p.ow < d.output.sizes[3]:
        m0 = p.g0 * mg + p.ml0
        where += (
            f", output channels {m0}..{m0 + mout - 1}, rows {p.oh0}..{p.oh0 + p.oh - 1}, "
            f"columns {p.ow0}..{p.ow0 + p.ow - 1}"
        )
    if p.cc < cg:
        where += f", input channels {p.c0}..{p.c0 + p.cc - 1} of the group" + (" (added)" if p.c0 else "")
    return s.part(index, where, uniforms=u, windows=windows, invocations=invocations, constants=consts)


def dot4_available(device: Device | None = None) -> bool:
    """Whether ``device`` compiles WGSL's packed 4x8 dot product (the dot4 path's need)."""
    return Capabilities.from_device(device or default_device()).has(DOT4_FEATURE)


def ceiling_kernel(device: Device) -> Kernel:
    """The benchmark's dot4I8Packed-from-registers kernel (wgsl/convolution_integer_ceiling.wgsl):
    binding ``output``; uniforms from :func:`ceiling_uniforms`."""
    return Kernel(
        device,
        op=OP,
        shader="convolution_integer_ceiling.wgsl",
        entry_point="dot4_ceiling",
        bindings={"output": "output"},
        uniform_binding="ceiling",
        workgroup_size=256,
    )


def ceiling_uniforms(steps: int, threads: int, operand: int = 0x01FF7F80) -> bytes:
    """The ceiling kernel's uniforms: ``steps`` dot products a chain (a multiple of 4), ``threads``
    that store their result (all of them: the compiler must keep every chain)."""
    lay = interface("convolution_integer_ceiling.wgsl").uniform_layout("ceiling")
    return lay.pack({"steps": steps, "operand": operand, "threads": threads})


# ------------------------------------------------------------------------------------------------
# Compiled operator
# ------------------------------------------------------------------------------------------------
class ConvolutionIntegerOperator(Operator):
    """A compiled ConvolutionInteger; call it as ``op(input, filter, output, input_zero_point=None,
    filter_zero_point=None)`` with :class:`GpuTensor` objects whose descriptions equal the
    compiled ones (zero points exactly when the description has them). Returns ``output``.

    ``kernel`` requests a path (see :func:`plan_convolution_integer`; None chooses); the dot4
    tuning options ``pixels_per_thread``, ``threads``, ``tile_channels``, ``split_k`` and
    ``steps_per_workgroup`` (and the window kernel's ``window_channels`` and ``window_tiles``) are
    passed to it. ``plan`` is the execution plan; ``kernel``,
    ``dispatches``, and for dot4 ``tile`` (pixels, channels), ``rp``, ``threads``, ``k_steps``,
    ``slice_steps``, ``slices``, ``tiles`` and ``workgroups`` read from it.
    """

    op = OP
    tensors = ("input", "filter", "output", "input_zero_point", "filter_zero_point")
    optional = frozenset({"input_zero_point", "filter_zero_point"})
    outputs = ("output",)

    def __init__(
        self,
        device: Device,
        desc: ConvolutionIntegerDesc,
        kernel: str | None = None,
        *,
        capabilities: Capabilities | None = None,
        pixels_per_thread=None,
        threads=None,
        tile_channels=None,
        split_k=None,
        steps_per_workgroup=None,
        window_tiles=None,
        window_channels=None,
    ):
        self._tuning = dict(
            pixels_per_thread=pixels_per_thread,
            threads=threads,
            tile_channels=tile_channels,
            split_k=split_k,
            steps_per_workgroup=steps_per_workgroup,
            window_tiles=window_tiles,
            window_channels=window_channels,
        )
        super().__init__(device, desc, kernel=kernel, capabilities=capabilities)

    def make_plan(self, placements) -> Plan:
        """:func:`plan_convolution_integer` for this description, device and placement."""
        return plan_convolution_integer(
            self.desc, self.capabilities, kernel=self.kernel_request, placements=placements, **self._tuning
        )

    def host_tensors(self, plan: Plan):
        """The plan's workspace (packed input and filter words) and stand-ins for absent zero
        points (bound, never read: the shader's XZP / WZP say so)."""
        dev = self.device
        out = self.workspace_tensors(plan)
        bound = {n for s in plan.steps for n in s.bindings_dict}
        for name, ref in (("input_zero_point", self.desc.input), ("filter_zero_point", self.desc.filter)):
            if getattr(self.desc, name) is None and name in bound:
                out[name] = GpuTensor(
                    dev, TensorDesc(ref.data_type, (1, 1, 1, 1)), dev.create_buffer(16, f"{OP}.{name}.absent"), 0
                )
        return out

    def __call__(self, input, filter, output, input_zero_point=None, filter_zero_point=None) -> GpuTensor:
        """Run the convolution (recorded into an open ``device.batch()`` if there is one)."""
        return super().__call__(input, filter, output, input_zero_point, filter_zero_point)

    def _detail(self, key: str):
        return dict(self.plan.details).get(key)

    @property
    def kernel(self) -> str:
        """The path the plan runs: "portable", "direct" or "dot4"."""
        return self._detail("kernel")

    @property
    def dispatches(self) -> int:
        """Dispatches per call."""
        return self.plan.dispatches

    tile = property(lambda self: self._detail("tile"), doc="dot4: (pixels, channels) of a tile; direct: (rows, cols)")
    rp = property(lambda self: self._detail("pixels_per_thread"), doc="dot4: output pixels a thread")
    threads = property(lambda self: self._detail("threads"), doc="dot4: threads a workgroup")
    k_steps = property(lambda self: self._detail("k_steps"), doc="dot4: k steps of a tile")
    slice_steps = property(lambda self: self._detail("slice_steps"), doc="dot4: k steps a workgroup runs")
    slices = property(lambda self: self._detail("slices"), doc="dot4: most segments a tile is cut into")
    tiles = property(lambda self: self._detail("tiles"), doc="dot4: output tiles")
    workgroups = property(lambda self: self._detail("workgroups"), doc="workgroups of the main dispatch")


def compile_convolution_integer(
    desc: ConvolutionIntegerDesc,
    *,
    device: Device | None = None,
    kernel: str | None = None,
    capabilities: Capabilities | None = None,
) -> ConvolutionIntegerOperator:
    """Validate ``desc`` and build the operator once; call the result with GPU tensors (see
    :class:`ConvolutionIntegerOperator`). ``kernel``: one of KERNELS ("portable", "depthwise",
    "depthwise_fma", "grouped_fma", "direct", "direct_dot4", "dot4", "dot4_im2col", "dot4_window") or
    None / "auto" (the plan chooses; see
    :func:`plan_convolution_integer`); an impossible request raises
    :class:`PlanError`. ``capabilities`` replaces the device's record for planning (tighter only)."""
    desc.validate()
    dev = device or default_device()
    return ConvolutionIntegerOperator(dev, desc, kernel, capabilities=capabilities)


# ------------------------------------------------------------------------------------------------
# dmlwgsl explain convolution_integer
# ------------------------------------------------------------------------------------------------
def add_explain_arguments(parser) -> None:
    """``dmlwgsl explain convolution_integer`` options (besides --input and --dtype, default uint8)."""
    from ..cli import parse_ints

    parser.set_defaults(dtype="uint8")
    parser.add_argument("--filter", type=parse_ints, required=True, help="filter sizes M,C/G,KH,KW (1-D: M,C/G,K)")
    parser.add_argument("--filter-dtype", default="int8", help="filter data type: int8 or uint8")
    parser.add_argument("--pads", type=parse_ints, help="top,left,bottom,right (1-D: left,right); default 0")
    parser.add_argument("--strides", type=parse_ints, help="one per spatial dimension; default 1")
    parser.add_argument("--dilations", type=parse_ints, help="one per spatial dimension; default 1")
    parser.add_argument("--groups", type=int, default=1, help="group count")
    parser.add_argument(
        "--zero-points",
        choices=("none", "tensor", "channel"),
        default="none",
        help="none; tensor: both per tensor; channel: input per tensor, filter per output channel",
    )


def explain_plan(args, caps: Capabilities) -> Plan:
    """The plan of the description the explain options give (validated first)."""
    x = TensorDesc(DataType.parse(args.dtype), args.input)
    w = TensorDesc(DataType.parse(args.filter_dtype), args.filter)
    nsp = max(len(args.input) - 2, 0)
    pads = tuple(args.pads) if args.pads else (0,) * 2 * nsp
    if len(pads) != 2 * nsp:
        raise DmlValidationError(
            f"pads: must have {2 * nsp} entries (start then end per spatial dimension); got {len(pads)}"
        )
    strides = tuple(args.strides) if args.strides else (1,) * nsp
    dilations = tuple(args.dilations) if args.dilations else (1,) * nsp
    try:
        out = convolution_integer_output_sizes(x.sizes, w.sizes, strides, dilations, pads[:nsp], pads[nsp:])
    except ZeroDivisionError:
        out = x.sizes  # validate() names the zero stride
    zp = args.zero_points
    rank = len(args.input)
    m = args.filter[0] if args.filter else 1
    xz = None if zp == "none" else TensorDesc(x.data_type, (1,) * rank)
    wz = (
        None if zp == "none" else TensorDesc(w.data_type, (1,) * rank if zp == "tensor" else (1, m) + (1,) * (rank - 2))
    )
    desc = ConvolutionIntegerDesc(
        x, w, TensorDesc(DataType.INT32, out), xz, wz, strides, dilations, pads[:nsp], pads[nsp:], args.groups
    )
    return plan_convolution_integer(desc, caps, kernel=args.kernel)


# ------------------------------------------------------------------------------------------------
# numpy one-liner
# ------------------------------------------------------------------------------------------------
_INT8_RANGES = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255)}


def _zero_point_array(name: str, zp, dtype: np.dtype, m: int | None, rank: int) -> np.ndarray | None:
    """A zero point (int, 0-d array, (M,) or (1, M, 1, 1) array) as a DML-shaped array of ``dtype``."""
    if zp is None:
        return None
    if type(zp) is int:  # the common case: a Python int, range-checked without numpy reductions
        lo, hi = _INT8_RANGES[np.dtype(dtype)]
        if not lo <= zp <= hi:
            raise DmlValidationError(
                f"{name}: values must fit the data type {np.dtype(dtype).name} [{lo}, {hi}]; got {zp}..{zp}"
            )
        return np.full((1,) * rank, zp, dtype)
    a = np.asarray(zp)
    if a.dtype.kind not in "iu":
        raise DmlValidationError(f"{name}: must be an integer or integer array; got dtype {a.dtype}")
    if a.dtype != dtype:  # values of the tensor's own type fit it by construction
        info = np.iinfo(dtype)
        if a.size and (a.min() < info.min or a.max() > info.max):
            raise DmlValidationError(
                f"{name}: values must fit the data type {np.dtype(dtype).name} "
                f"[{info.min}, {info.max}]; got {a.min()}..{a.max()}"
            )
        if a.dtype.itemsize == 1:
            raise DmlValidationError(
                f"{name}.data_type: must equal its tensor's data type ({np.dtype(dtype).name}); got {a.dtype.name}"
            )
    if a.size == 1:
        return a.astype(dtype, copy=False).reshape((1,) * rank)
    if m is not None and a.size == m and a.shape in ((m,), (1, m, 1, 1), (1, m, 1)):
        return a.astype(dtype, copy=False).reshape((1, m) + (1,) * (rank - 2))
    raise DmlValidationError(
        f"{name}.sizes: must be a scalar"
        + (f", (M,) or (1, M, 1, 1) with M = {m}" if m else "")
        + f"; got shape {a.shape}"
    )


#: One-liner descriptions by layout (array shapes, strides and types, zero point shapes, the
#: convolution's parameters as plain ints): a repeated call reuses the description object, so the
#: device's operator cache finds it by identity (its hash is kept) without building or validating
#: anything. Bounded: cleared when full.
_ONELINER_DESCS: dict = {}
_ONELINER_DESCS_MAX = 256


def _plain_ints(v) -> tuple | None:
    """``v`` as a tuple when it is a tuple or list of Python ints (not bools), else None (the slow
    path then validates it and names the field)."""
    if type(v) is tuple or type(v) is list:
        for i in v:
            if type(i) is not int:
                return None
        return tuple(v)
    return None


def _oneliner_desc(xa, wa, xz, wz, strides, dilations, start_padding, end_padding, group_count):
    """The description of a one-liner call (validated later, by the compile on a cache miss)."""
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
    return ConvolutionIntegerDesc(
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
    rank = xa.ndim if xa.ndim in (3, 4) else 4
    xz = wz = None
    if xa.dtype in _INT8_RANGES:
        xz = _zero_point_array("input_zero_point", x_zero_point, xa.dtype, None, rank)
    elif x_zero_point is not None:
        xz = np.asarray(x_zero_point)
    if wa.dtype in _INT8_RANGES and wa.ndim >= 1:
        wz = _zero_point_array("filter_zero_point", w_zero_point, wa.dtype, wa.shape[0], rank)
    elif w_zero_point is not None:
        wz = np.asarray(w_zero_point)
    params = tuple(_plain_ints(v) for v in (strides, dilations, start_padding, end_padding))
    key = None
    if None not in params and type(group_count) is int:
        key = (
            (xa.shape, xa.strides, xa.dtype, wa.shape, wa.strides, wa.dtype),
            None if xz is None else (xz.shape, xz.dtype),
            None if wz is None else (wz.shape, wz.dtype),
            params,
            group_count,
        )
        desc = _ONELINER_DESCS.get(key)
    if key is None or desc is None:
        desc = _oneliner_desc(xa, wa, xz, wz, strides, dilations, start_padding, end_padding, group_count)
        if key is None:
            # a bool or float parameter equals an int one (True == 1): the operator cache would
            # accept it, so the description is validated here, naming the field
            desc.validate()
        else:
            if len(_ONELINER_DESCS) >= _ONELINER_DESCS_MAX:
                _ONELINER_DESCS.clear()
            _ONELINER_DESCS[key] = desc
    return oneshot.run(compile_convolution_integer, desc, [xa, wa, oneshot.OUTPUT, xz, wz], device=device)

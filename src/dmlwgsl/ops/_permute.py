"""Planning and operator shared by DepthToSpace and SpaceToDepth (the block (de)interleaves).

An operator module describes one validated description as a :class:`DepthSpaceLayout`: the spec
formula as a 6-D strided gather in output order (:class:`IterationSpace`), which of those
dimensions are the (n, c, h) "boxes" the work may be split into, and the geometry of the fast
paths (:class:`TiledSpace`, :class:`RowSpace`). :func:`plan_depth_space` turns it into a
:class:`~dmlwgsl.plan.Plan`:

* ``<op>_zip`` / ``<op>_tiled`` / ``<op>_tiled_staged`` (wgsl/common/tiles.wgsl): rows of whole
  16-byte vectors on both sides, block 2 (zip, DepthToSpace) or 2, 3, 4 and 8 (tiled); 16-byte
  loads and stores; the staged form stores a tile's output vectors through workgroup memory
  (DepthToSpace: in output order, so that the stores of a warp are contiguous; SpaceToDepth, into
  output rows off 16-byte boundaries: each thread its own vectors' pieces, after every load of the
  workgroup).
* ``<op>_rows`` (+ ``<op>_row_edges``; wgsl/common/rows.wgsl): any block size, element size, row
  length, row alignment and input strides, for an output whose w stride is 1: one thread builds
  whole 16-byte blocks of an output row; the few elements outside a row's whole blocks (unaligned
  rows) go in a second, small dispatch with atomics.
* ``<op>_row_words`` / ``<op>_row_words_shared`` (wgsl/common/rows.wgsl; the path "row_words"):
  the row kernel storing word by word from each row's first element, so rows may start and end
  anywhere with no second dispatch: plain stores for 4- and 8-byte elements; for 1- and 2-byte
  elements whole words plus atomic merges of a row's two shared end words (the plan's choice on
  CPU adapters where the row kernel would need its edge pass; see _choose).
* ``<op>_staged`` (wgsl/common/rows.wgsl): input rows contiguous, output rows contiguous: a
  workgroup stages whole input words of a few rows (or of a chunk of one) in workgroup memory with
  coalesced loads, then writes every output word of them, so that each input and output word is
  one global access whatever the element size or block size (see _staging).
* ``<op>_packed`` / ``<op>_strided`` / ``<op>_atomic`` (wgsl/common/permute.wgsl): the strided
  gather for every other layout.

Past the binding-size limit, the work is split into boxes of (n, c, h) whose input and output
spans each fit one binding; every box is one step (per kernel) that binds windows of the tensors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from ..operator import Operator
from ..plan import Capabilities, Placement, Plan, PlanError, magic_uniforms, placement_of, step
from ..tensor import DmlValidationError, TensorDesc

MAX_DIMS = 8
ELEMENTS_PER_THREAD = 4  # EPT in common/permute.wgsl (its default)
WORKGROUP = 256
#: Words of a row outside its whole 16-byte blocks: at most 4 before and 4 after them, or 9 for a
#: row of fewer than 32 bytes (which may have no whole block).
EDGE_WORDS = 9
#: Rows of 1- or 2-byte elements shorter than this (bytes) that are off 16-byte boundaries take the
#: word-store row kernel on a CPU adapter (see _choose).
SHORT_ROW_BYTES = 128
#: A GPU plan whose output rows are off 16-byte boundaries and shorter than this (bytes) takes the
#: word-store row kernel first: such a row holds at most one whole 16-byte block, so the row kernel
#: leaves (nearly) all of it to its atomic edge pass, and the staged kernel's units are a few bytes.
#: H200 (session 31, random rows of the sweep, % of copy, row kernel + edges / staged / word-store):
#: SpaceToDepth b4 uint8 6-byte rows 4 / 1 / 10, b2 uint32 24-byte rows 23 / 9 / 40, b3 int16
#: 30-byte rows 16 / 7 / 19 (tensors of 92-174 MiB moved); from 85-element rows up the row kernel
#: was as fast or faster. Tensors under STAGED_MAX_BYTES keep their paths (unmeasured there).
GPU_SHORT_ROW_BYTES = 32
#: rows_body takes a split of a row's blocks among its threads other than the word-store kernels'
#: only where it has fewer thread slots than this fraction of theirs (see _row_threads).
ROW_SLOTS_GAIN = 0.85
#: A GPU plan of 1- or 2-byte DepthToSpace rows off 16-byte boundaries keeps the one-pass staged
#: kernel below this many bytes moved instead of the tiled row kernel + edge pass (H200: 0.6 and
#: 1.5 MiB grid rows 7.4 / 9.6 us and 9.0 / 10.4; 2.8 and 3.1 MiB random rows 11.9 / 10.2 and
#: 12.2 / 10.5).
ROWS_TILED_MIN_BYTES = 2 << 20
#: depth_to_space_rows_tiled runs the edge pass of rows off 16-byte boundaries in its own dispatch
#: (threads past the regions) below this many bytes moved, as a second pass from it up. H200, the
#: 29 rows of random seeds 1-4 the plan gives the kernel (session 33; fused / second pass, us):
#: 2.8 and 3.1 MiB 7.9 / 10.4 and 7.4 / 10.5, 14-25 MiB 1.00-1.17x faster fused but an 18 MiB
#: tensor of 76-byte rows 40.2 / 22.3, and from 30 MiB up fused 0.42-1.02x (its atomic merges
#: run beside the other workgroups' stores).
ROWS_TILED_FUSE_BYTES = 8 << 20
#: A GPU plan of rows under GPU_SHORT_ROW_BYTES (off 16-byte boundaries, STAGED_MAX_BYTES moved
#: and more) into a packed output takes packed_rows_body (whole 16-byte blocks across rows, no
#: atomics) before the word-store kernel on rows longer than this (bytes), elements of 1-4 bytes.
#: H200, the 24 such rows of random seeds 1-12 (session 33; word-store / packed rows, us): rows of
#: 11-31 bytes 1.07-1.95x faster (SpaceToDepth b2 uint8 11-byte rows 288.5 / 158.5, DepthToSpace
#: b2 uint8 28-byte 508.4 / 260.6, b2 float32 28-byte 56.2 / 41.1); rows of 4-8 bytes went either
#: way (b4 uint8 4-byte 185.5 / 386.0, float16 8-byte 63.5 / 117.2, b2 uint8 5-byte 649.0 / 428.3),
#: where a 16-byte block spans 2-4 rows and the word-store kernel stores whole words plainly.
ROWS_PACKED_MIN_BYTES = 8
#: The same kernel also takes, on a GPU, 8/16-bit rows of any length off 16-byte boundaries into a
#: packed output where the plan would take the staged kernel (under STAGED_MAX_BYTES), and
#: DepthToSpace rows with contiguous input rows where it would take the row kernel and its atomic
#: edge pass (blocks 5-7, and 3/4/8 where the tiled kernels do not run). H200, session 40: the
#: sweep's random rows under 30 % of copy of seeds 11-12, every path timed (us, plan / rows_packed):
#: DepthToSpace b7 uint8 63-byte rows 27.9 / 23.3, b7 int8 217-byte 96.0 / 76.4, b6 int8 72-byte
#: 47.5 / 37.1, b5 int8 780-byte 123.9 / 98.7 (eight such rows 1.11-1.28x); SpaceToDepth b4
#: float16 broadcast input (staged) 98.9 / 14.1, b6 uint8 (staged) 21.8 / 18.9. Then 46 rows of
#: seeds 13-22 whose plan a first rule (every row-kernel row) moved, both trees in one call: the
#: staged rows 0.97-5.49x (the grid's b2/b3 uint8 8x28x37x41 0.97 / 1.01), DepthToSpace with
#: contiguous input rows 1.03-1.52x (15 rows); left out, SpaceToDepth's row-kernel rows (0.43-1.53x,
#: geometric mean 0.88: b7/b8 rows of 150+ bytes lost most) and NHWC inputs (b2 0.65-1.01x, b7/b8
#: 1.10-1.38x). (The tiled kernels, the tiled row kernel and the transpose keep their rows:
#: rows_packed 0.75-0.87x there.)
#: The paths a caller may request with ``kernel=`` (the kernel name with or without the op prefix).
PATHS = (
    "zip",
    "tiled_staged",
    "tiled",
    "transpose",
    "staged",
    "rows_tiled",
    "rows",
    "rows_packed",
    "row_words",
    "packed",
    "strided",
    "atomic",
)
#: A GPU plan whose rows would need the row kernel's edge pass (rows off 16-byte boundaries) takes
#: the one-pass staged kernel below this many bytes moved (input + output elements). Measured on
#: the H100 (bench/EXPERIMENTS.md): at 1-6 MiB (odd widths 37-123) staged ran 1.13-1.76x faster
#: than rows + edges, whose second dispatch is a fixed cost; at 32 MiB (output windows) the row
#: kernel's faster gather won by 1.02-1.23x.
STAGED_MAX_BYTES = 8 << 20
#: Block sizes of the tiled kernels (common/tiles.wgsl writes each one out word by word).
TILED_BLOCKS = (2, 3, 4, 8)
#: Threads of a transpose workgroup (common/transpose.wgsl): its tile of 2048 staged words takes
#: 4-8 elements a thread (128 threads measured slower on the H100: 52.6% of copy against 62.5%).
TRANSPOSE_WORKGROUP = 256
#: Output vectors a workgroup of <op>_tiled_staged stages (TR_VECTORS in
#: common/tiles.wgsl), which sets its workgroup size: the largest power of two up to 256 with
#: workgroup size x block size <= STAGED_TILE_VECTORS.
STAGED_TILE_VECTORS = 512
#: staged_body's workgroup memory for input words (common/rows.wgsl)
STAGE_WORDS = 2048
#: Words a transpose tile stages (TP_WORDS in common/transpose.wgsl) for 4- and 8-byte elements;
#: 8/16-bit elements staged packed take as many elements (4 / esize fewer words) where rows interleave
#: at most 2 lanes (see transpose_step). H100, the sweep's NHWC rows: 1024 / 2048 / 4096 words for
#: float32, b2 60.6 / 66.1 / 38.1-39.4 % of copy (bench/EXPERIMENTS.md).
TRANSPOSE_TILE_WORDS = 2048
#: Fit a transpose tile's row elements to the row (split evenly over its tiles) instead of the
#: whole TRANSPOSE_TILE_WORDS, which left most of a tile idle on rows just past a tile or shorter.
TRANSPOSE_FIT_ROWS = True
#: A transpose merges output rows that follow each other in the output (TP_MERGE: r runs over
#: them, its input address split by a division) where its tile along the rows has at most this many
#: elements, or where the merged rows take 16-byte vectors that the rows alone cannot.
TRANSPOSE_MERGE_MAX_TILE_ROW = 20
#: 8/16-bit transposes whose runs of channels and rows are whole words but not whole vectors load
#: words along the channels, staged packed (TP_WPACK), instead of one element a load.
TRANSPOSE_WORD_PACK = True


def coalesce(sizes, src_strides, dst_strides):
    """Drop size-1 dimensions and merge each dimension into the next inner one where both sides
    stay contiguous across the pair (outermost first in and out)."""
    dims = [(s, a, b) for s, a, b in zip(sizes, src_strides, dst_strides) if s != 1]
    merged: list[list[int]] = []
    for s, a, b in reversed(dims):  # innermost first
        if merged:
            ps, pa, pb = merged[-1]
            if a == ps * pa and b == ps * pb:
                merged[-1] = [s * ps, pa, pb]
                continue
        merged.append([s, a, b])
    merged.reverse()
    if not merged:
        merged = [[1, 0, 0]]
    return [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged]


@dataclass(frozen=True)
class IterationSpace:
    """A gather: output[dst . i] = input[src . i] over ``sizes`` (outermost first, elements)."""

    sizes: tuple[int, ...]
    src_strides: tuple[int, ...]
    dst_strides: tuple[int, ...]


@dataclass(frozen=True)
class TiledSpace:
    """The block (de)interleave of wgsl/common/tiles.wgsl, for ops whose rows are contiguous:
    ``channels`` and ``height`` of the row space (rows (n, c, h, i)), ``row_len`` = elements a row
    has in the chunked (last) dimension, ``chan`` = (per i, per j, per c) steps of the channel map,
    strides (n, c, h) in elements, and the last-dimension strides (the path needs both to be 1)."""

    block: int
    channels: int
    height: int
    row_len: int
    chan: tuple[int, int, int]
    in_strides: tuple[int, int, int]
    out_strides: tuple[int, int, int]
    in_w_stride: int
    out_w_stride: int
    zip: bool = False  # DepthToSpace with block 2: one thread per output vector (depth_to_space_zip)

    def usable(self, esize: int, ragged_out: bool = False, half: bool = False) -> str | None:
        """None when the path's structural conditions hold for this element size, else the rule
        broken. ``ragged_out``: output rows need only start on 4-byte boundaries (OUT_RAGGED);
        ``half``: rows and strides need only be whole 8-byte halves (TILE_HALF)."""
        v = (8 if half else 16) // esize
        if self.block not in TILED_BLOCKS:
            return f"block_size {self.block} is not one of {', '.join(map(str, TILED_BLOCKS))}"
        if self.in_w_stride != 1 or self.out_w_stride != 1:
            return "the w strides of input and output must be 1"
        if self.row_len % v or any(s % v for s in self.in_strides):
            return "rows and strides must be whole 16-byte vectors"
        if any(s % (max(1, 4 // esize) if ragged_out else v) for s in self.out_strides):
            if ragged_out:
                return "output rows must start on 4-byte boundaries"
            return "rows and strides must be whole 16-byte vectors"
        return None


@dataclass(frozen=True)
class RowSpace:
    """The general row path of wgsl/common/rows.wgsl: output rows of ``row_len`` elements,
    ``rows_per_unit`` rows per (n, c, h) unit of the row space (b for DepthToSpace's (i), b*b for
    SpaceToDepth's (i, j)); element q of a row is input ``(q % interleave) * stride_j +
    (q // interleave) * stride_w`` from the row's start."""

    block: int
    interleave: int
    rows_per_unit: int
    row_len: int
    stride_j: int
    stride_w: int
    chan: tuple[int, int, int]
    in_strides: tuple[int, int, int, int]
    out_strides: tuple[int, int, int, int]

    def usable(self) -> str | None:
        """None when the output rows are contiguous (the path's one structural condition)."""
        if self.out_strides[3] != 1 and self.row_len > 1:
            return "the output's w stride must be 1"
        return None


@dataclass(frozen=True)
class DepthSpaceLayout:
    """Everything the planner needs of one DepthToSpace/SpaceToDepth description."""

    op: str
    shader: str
    input: TensorDesc
    output: TensorDesc
    block: int
    space: IterationSpace
    box_dims: tuple[int, int, int]  # positions of n, c, h in ``space``
    tiled: TiledSpace
    rows: RowSpace


@dataclass(frozen=True)
class _Box:
    """A box of (n, c, h) units: its extents and its input/output element offsets."""

    extents: tuple[int, int, int]
    src: int
    dst: int
    src_span: tuple[int, int]  # first and one-past-last input element it reads
    dst_span: tuple[int, int]  # first and one-past-last output element it writes


def _span(sizes, strides, offset: int) -> tuple[int, int]:
    return offset, offset + sum((s - 1) * t for s, t in zip(sizes, strides)) + 1


def _boxes(lay: DepthSpaceLayout, limit_in: int, limit_out: int) -> list[_Box]:
    """Split (n, c, h) into boxes whose input and output spans each fit in the element limits:
    whole batches while they fit, else channels of one batch, else rows of one channel."""
    sizes, src, dst = lay.space.sizes, lay.space.src_strides, lay.space.dst_strides
    full = [sizes[d] for d in lay.box_dims]

    def make(lo, ext) -> _Box:
        sz = list(sizes)
        off_s = off_d = 0
        for k, d in enumerate(lay.box_dims):
            sz[d] = ext[k]
            off_s += lo[k] * src[d]
            off_d += lo[k] * dst[d]
        return _Box(tuple(ext), off_s, off_d, _span(sz, src, off_s), _span(sz, dst, off_d))

    def fits(b: _Box) -> bool:
        return b.src_span[1] - b.src_span[0] <= limit_in and b.dst_span[1] - b.dst_span[0] <= limit_out

    whole = make((0, 0, 0), full)
    if fits(whole):
        return [whole]
    out = []

    def split(level: int, lo: list[int]):
        # the largest run of units along dimension `level` (the outer ones fixed at lo) that fits
        n = full[level]
        ext = [1] * level + [n] + full[level + 1 :]
        one = list(ext)
        one[level] = 1
        if not fits(make(lo, one)):
            if level == 2:
                raise PlanError(
                    f"{lay.op}: one row group (n, c, h) spans more than max-storage-buffer-binding-size; "
                    f"no split of this description fits one binding"
                )
            for i in range(n):
                split(level + 1, lo[:level] + [i] + [0] * (2 - level))
            return
        # the most units that fit (spans grow with the count): fewest dispatches, whole units each
        good, bad = 1, n + 1
        while bad - good > 1:
            mid = (good + bad) // 2
            if fits(make(lo, ext[:level] + [mid] + ext[level + 1 :])):
                good = mid
            else:
                bad = mid
        step_units = good
        for i in range(0, n, step_units):
            k = min(step_units, n - i)
            out.append(make(lo[:level] + [i] + lo[level + 1 :], ext[:level] + [k] + ext[level + 1 :]))

    split(0, [0, 0, 0])
    return out


def _named(prefix: str, values, axes: str) -> dict:
    """Uniform fields ``prefix + axis`` for the first ``len(axes)`` values, e.g. in_stride_n, in_stride_c."""
    return {prefix + a: v for a, v in zip(axes, values)}


def _name(op: str, path: str) -> str:
    return f"{op}_{path}"


def _requested(op: str, kernel: str | None) -> str | None:
    if kernel is None:
        return None
    path = kernel[len(op) + 1 :] if kernel.startswith(op + "_") else kernel
    if path not in PATHS:
        raise PlanError(f"kernel: no path {kernel!r} for {op} (choose from {', '.join(_name(op, p) for p in PATHS)})")
    return path


def plan_depth_space(
    lay: DepthSpaceLayout,
    caps: Capabilities,
    *,
    kernel: str | None = None,
    placements: Mapping[str, Placement] | None = None,
) -> Plan:
    """The plan of one DepthToSpace/SpaceToDepth layout (see the module docstring)."""
    op, esize = lay.op, lay.input.data_type.size_in_bytes
    want = _requested(op, kernel)
    pin, pout = placement_of(placements, "input"), placement_of(placements, "output")
    for name, d in (("input", lay.input), ("output", lay.output)):
        if d.total_tensor_size_in_bytes > caps.limit("max-buffer-size"):
            raise PlanError(
                f"{op}: {name} is {d.total_tensor_size_in_bytes} bytes, beyond max-buffer-size "
                f"{caps.limit('max-buffer-size')} ({caps.name})"
            )
    # Elements a binding may span: the limit less the residual offset, a window start rounded down
    # to the binding alignment, and the 16-byte rounding of the binding's size.
    limit = caps.max_binding_size - caps.binding_alignment - 16
    boxes = _boxes(lay, (limit - pin.residual) // esize, (limit - pout.residual) // esize)
    split = len(boxes) > 1

    # Why each path can or cannot run, in order of preference.
    aligned = pin.residual % 16 == 0 and pout.residual % 16 == 0 and pin.padded and pout.padded
    reasons: dict[str, str | None] = {}
    t_rule = lay.tiled.usable(esize)
    a_rule = None if aligned else "tensors must start 16-byte aligned in padded buffers"
    out_ragged = False
    if t_rule or a_rule:
        # output rows on 4-byte boundaries only (a window of a larger buffer): the tiled paths
        # store each vector in pieces by its alignment (OUT_RAGGED)
        in_ok = pin.residual % 16 == 0 and pin.padded
        r_rule = lay.tiled.usable(esize, ragged_out=True)
        if r_rule is None and in_ok and pout.residual % 4 == 0:
            t_rule = a_rule = None
            out_ragged = True
    half = False
    if (t_rule or a_rule) and caps.is_cpu and esize < 8:
        # rows of whole 8-byte halves: the tiled kernel a half a row a thread (TILE_HALF; measured
        # on lavapipe only, so CPU plans only; 8-byte elements gain nothing, a half holding one)
        h_rule = lay.tiled.usable(esize, half=True)
        half = h_rule is None and pin.residual % 8 == 0 and pout.residual % 8 == 0
    if not lay.tiled.zip:
        reasons["zip"] = "only DepthToSpace with block_size 2 has the zip kernel"
    else:
        reasons["zip"] = t_rule or a_rule
    reasons["tiled"] = None if half else (t_rule or a_rule)
    reasons["tiled_staged"] = t_rule or a_rule
    r_rule = lay.rows.usable()
    reasons["rows"] = r_rule or (None if pout.padded else "the output buffer must be padded to 16 bytes")
    if lay.block not in TILED_BLOCKS:
        reasons["rows_tiled"] = f"block_size {lay.block} is not one of {', '.join(map(str, TILED_BLOCKS))}"
    elif lay.rows.in_strides[3] != 1:
        reasons["rows_tiled"] = "the input's w stride must be 1"
    else:
        reasons["rows_tiled"] = reasons["rows"]
    reasons["row_words"] = r_rule
    reasons["rows_packed"] = (
        "the output must be packed in a buffer padded to 16 bytes"
        if not (lay.output.is_packed and pout.padded)
        else "the tensors must fit one binding"
        if split
        else None
    )
    runs, _, sw = _stage_shape(lay.rows)
    if lay.rows.stride_w != sw:
        reasons["staged"] = r_rule or "the input's w stride must be 1"
    elif runs * (-(-sw * esize // 4) + 3) > STAGE_WORDS:
        reasons["staged"] = r_rule or f"block_size {lay.block}: one column of its runs exceeds the staging memory"
    else:
        reasons["staged"] = r_rule
    # (the transpose runs every layout the row kernel runs: its ragged entry point takes 8/16-bit
    # output rows that do not start and end on word boundaries, see _transpose_ragged)
    reasons["transpose"] = r_rule
    out_packed = lay.output.is_packed
    reasons["packed"] = (
        None if out_packed and pout.padded else "the output must be packed in a buffer padded to 16 bytes"
    )
    reasons["strided"] = None if esize >= 4 else "element size below 4 bytes (use the atomic gather)"
    reasons["atomic"] = None if esize < 4 else "element size of 4 bytes or more (use the strided gather)"

    if want is not None:
        if reasons[want]:
            raise PlanError(f"kernel: {_name(op, want)} cannot run this description: {reasons[want]}")
        path, why = want, f"{_name(op, want)} requested"
    else:
        moved_from = None
        aligned_rows = _rows_aligned(lay, pout, esize, 0)
        path = _choose(lay, esize, reasons, cpu=caps.is_cpu, rows_aligned=aligned_rows, out_ragged=out_ragged)
        if path in ("rows", "rows_tiled") and not caps.is_cpu and reasons["staged"] is None and not split:
            below = STAGED_MAX_BYTES if path == "rows" else ROWS_TILED_MIN_BYTES if lay.op == "depth_to_space" else 0
            if not aligned_rows and _moved_bytes(lay, esize) < below:
                path = "staged"
        if (
            (path == "staged" or (path == "rows" and lay.op == "depth_to_space" and lay.input.element_strides[-1] == 1))
            and not caps.is_cpu
            and esize <= 2
            and reasons["rows_packed"] is None
            and not aligned_rows
        ):
            # 8/16-bit rows off 16-byte boundaries into a packed output, on a GPU: whole blocks
            # across rows (packed_rows_body), not the staged kernel, nor DepthToSpace's row kernel
            # with its atomic edge pass where the input rows are contiguous (see ROWS_PACKED_MIN_BYTES)
            moved_from = path
            path = "rows_packed"
        why = _WHY[path] + ("; the order measured on CPU adapters" if caps.is_cpu else "")
        if moved_from:
            why += (
                f"; 8/16-bit rows off 16-byte boundaries on a GPU: not the {_name(op, moved_from)} kernel"
                + (" and its atomic edge pass" if moved_from == "rows" else "")
                + " (measured slower there, ROWS_PACKED_MIN_BYTES)"
            )
        if path == "row_words" and not caps.is_cpu:
            why += (
                f"; output rows of {lay.rows.row_len * esize} bytes off 16-byte boundaries (under "
                f"{GPU_SHORT_ROW_BYTES}: the row kernel would leave them to its atomic edge pass)"
            )
    if path == "tiled" and half:
        why += "; the rows are whole 8-byte halves, not 16-byte vectors: a half of each row a thread (TILE_HALF)"
    elif out_ragged and path in ("zip", "tiled", "tiled_staged"):
        why += "; output rows off 16-byte boundaries: each vector stored in aligned pieces (OUT_RAGGED)"
    # the tiled kernels' store/load form, decided above: OUT_RAGGED, TILE_HALF (tiled only) or neither
    tile_consts = {"TILE_HALF": 1} if path == "tiled" and half else ({"OUT_RAGGED": 1} if out_ragged else {})
    if out_ragged and path in OUT_PIECES_PATHS["cpu" if caps.is_cpu else "gpu"]:
        # The staged store phase's warps span output rows of different alignments (a branch on each
        # vector's alignment takes every path): every vector as 16 / (the rows' common alignment:
        # residual and outer strides) pieces, alike in every thread. H200, two rounds, 12 window
        # rows: 0.99-1.09x (32 MiB b2 float32 12.3 -> 11.3 us); 38 unseen ones 0.99-1.40x, geometric
        # mean 1.07x. (SpaceToDepth's unstaged tiled kernel split alike ran 0.63-1.07x on 18 rows.)
        align = _row_starts_align(lay, pout, esize)
        if align < 16:
            tile_consts["OUT_PIECES"] = 16 // align
            why += f" as {16 // align} pieces of {align} bytes in every thread (the rows' common alignment: OUT_PIECES)"
    steps = []
    for k, box in enumerate(boxes):
        steps.extend(_steps(lay, path, box, pin, pout, caps, esize, split, k, tile_consts, aligned))
    plan_why = why + (f"; split into {len(boxes)} boxes of (n, c, h) that each fit one binding" if split else "")
    nbytes = (lay.input.element_count + lay.output.element_count) * esize
    if _broadcast(lay.input):
        # a broadcast input is read once per distinct element
        nbytes = (_distinct(lay.input) + lay.output.element_count) * esize
    details = (("path", path), ("block_size", lay.block), ("boxes", len(boxes)))
    return Plan(op, tuple(steps), plan_why, nbytes, caps.name, details=details)


#: The paths whose OUT_RAGGED stores split every vector by the rows' common alignment (OUT_PIECES),
#: on a GPU / a CPU adapter (no warps there: each vector's own alignment is the cheaper split).
OUT_PIECES_PATHS = {"gpu": ("tiled_staged",), "cpu": ()}


def _broadcast(d: TensorDesc) -> bool:
    return any(s > 1 and t == 0 for s, t in zip(d.sizes, d.element_strides))


def _distinct(d: TensorDesc) -> int:
    return math.prod(s for s, t in zip(d.sizes, d.element_strides) if t != 0)


_WHY = {
    "zip": "block 2 with rows of whole 16-byte vectors: one thread per output vector from two 8-byte loads "
    "(loads and stores of a warp contiguous)",
    "tiled": "rows of whole 16-byte vectors and block 2, 3, 4 or 8: 16-byte loads and stores, interleaved in registers",
    "tiled_staged": "rows of whole 16-byte vectors and block 2, 3, 4 or 8: the tiled kernel with its output vectors "
    "staged in workgroup memory and stored by the workgroup in order (every warp load and store contiguous)",
    "rows_tiled": "contiguous input and output rows of any length and alignment, block 2, 3, 4 or 8: 16-byte input "
    "runs loaded from any alignment (word loads funnel-shifted) and (de)interleaved in registers as the tiled "
    "kernels do (DepthToSpace: block whole 16-byte blocks a thread, stores staged; SpaceToDepth: lane 0 of block "
    "runs a 16-byte block); unaligned row ends by an atomic edge pass",
    "rows": "contiguous output rows: whole 16-byte output blocks built per thread (any block size, element size, "
    "row length and input strides); unaligned row ends in a small atomic pass",
    "rows_packed": "a packed output: one thread per 16-byte output block across the rows it spans (rows in "
    "memory order, each element gathered from its row), stored whole (no atomic merges)",
    "row_words": "contiguous output rows: 16 bytes of a row per thread from the row's first element, stored word "
    "by word (no alignment needed, no edge pass; 1- and 2-byte elements merge a row's shared end words with "
    "atomics)",
    "staged": "contiguous input and output rows off 16-byte boundaries, under STAGED_MAX_BYTES: whole input words "
    "staged in workgroup memory by coalesced loads, every output word built from there in one pass (the row "
    "kernel's edge pass is a second dispatch)",
    "transpose": "channels the input's fastest dimension (NHWC): tiles of channels x row elements loaded along the "
    "channels, staged in workgroup memory and stored along the rows (short rows that follow each other as one "
    "run; 8/16-bit rows inside words: their shared words merged with atomics)",
    "packed": "packed output: one thread per 16-byte output block through the strided gather",
    "strided": "strided output of 4- or 8-byte elements: the strided gather",
    "atomic": "strided output of 1- or 2-byte elements: the gather merges bytes into words with atomics",
}


def _moved_bytes(lay: DepthSpaceLayout, esize: int) -> int:
    """Bytes of every input and output element (the size rule of the staged and short-row choices)."""
    return (lay.input.element_count + lay.output.element_count) * esize


def _choose(
    lay: DepthSpaceLayout,
    esize: int,
    reasons: Mapping[str, str | None],
    cpu: bool = False,
    rows_aligned: bool = True,
    out_ragged: bool = False,
) -> str:
    """The preferred runnable path. On a GPU (measured on the H100, bench/EXPERIMENTS.md):

    * block 2: zip (DepthToSpace), the tiled kernel (SpaceToDepth), both written out word by word.
    * SpaceToDepth, blocks 3, 4 and 8: the tiled kernel (its deinterleave written out word by
      word; 73-100% of copy against the row kernel's 30-90%, whose gather is one global load per
      element).
    * DepthToSpace, blocks 3, 4 and 8 with a tile row (block x element size) of at most 16 bytes:
      the tiled kernel with staged stores (58-77% against the row kernel's 23-68%; without staging
      its strided stores held it to 41-58%); past 16 bytes the row kernel's wide loads win (b3 and
      b4 int64 85-93% against 76-77%, b8 float32 68-76% against 63-65%).
    * otherwise (the other blocks) the row kernel, then the tiled kernel, the gather.
    * DepthToSpace with 1- and 2-byte elements, blocks 2-8, rows that are not whole 16-byte
      vectors and contiguous input rows: the tiled row kernel before the row kernel and the
      word-store kernel (H200, session 33: 28 fresh random rows 0.98-2.18x faster, geometric mean
      1.57x, 13 more 1.21-2.16x; the row kernel's per-element gather was 60-80 % of its time); 4- and 8-byte elements
      keep the row kernel (rows_tiled 0.77-1.09x there). Under ROWS_TILED_MIN_BYTES moved the
      one-pass staged kernel stays ahead where rows need the edge pass. SpaceToDepth likewise
      where block x element size <= 8 (the 23 of 26 fresh rows the rule gives it 0.92-1.92x,
      geometric mean 1.38x; it keeps the row kernel for 2-byte b8 and the word-store kernel for rows
      under 32 bytes, where the 3 others ran 0.70-0.80x); see _tiled_rows_first.
    * rows under GPU_SHORT_ROW_BYTES into a packed output: whole blocks across rows
      (packed_rows_body) before the word-store kernel on rows over ROWS_PACKED_MIN_BYTES (H200,
      session 33: 19 rows of 11-31 bytes 1.07-1.95x; measured on the rows the rule was drawn from).
    * output rows on 4-byte but not 16-byte boundaries (windows of a larger buffer): the tiled
      paths store each vector in aligned pieces (OUT_RAGGED), with staged stores first at every
      block they have (DepthToSpace b2 f32 / f16 74.1 / 70.2% against zip's 66.7 / 59.7%, the row
      kernel + edge pass 48.8 / 31.8%; SpaceToDepth, H200 session 42, 44 window rows against the
      unstaged tiled kernel: 0.95-2.24x, geometric mean 1.18x, b2 float16 32 MiB 16.1 -> 13.3 us;
      each vector's pieces spread over neighbouring threads instead, so that a warp's stores are
      one run, gave 1.07x there and 0.58-1.00x for DepthToSpace).
    * an input whose channels are its fastest dimension (NHWC) takes the tile transpose first
      (f32 54.8-63.1% of copy, f16 30.8-39.8%, against the row kernel's 25.6-32.5% and 15.7-23.0%,
      whose gather reads the input with its w stride), 8/16-bit output rows that start or end
      inside words included (its ragged entry point; H200, session 38: SpaceToDepth b8 float16
      1x91x1528x904 into a window 2972 -> 557 us, uint8 b4 399 -> 222, DepthToSpace b3 float16
      19x432x172x13 150 -> 128). DepthToSpace CRD is not channels-fastest (its channel runs have a
      stride of b*b) and keeps the row kernel, which ran it 1.1-2.2x faster than the transpose.
      Short output rows that follow each other run as one (TP_MERGE, H200 session 43: 45 random
      rows 1.05-4.63x) and 8/16-bit runs of whole words load words (TP_WPACK, 98 random rows
      1.05-3.43x); see transpose_step.

    A CPU adapter (``cpu``) takes the tiled kernel before zip where a tensor is not packed (a
    broadcast input, an output window), keeps the row kernel for NHWC inputs (lavapipe, the quick grid's small
    planes of 4-16 channels: the transpose's tiles ran at 0.2-1.3% of copy), takes the tiled
    kernel before the row kernel at every block size it has (lavapipe, blocks 3-4, uint8 to
    int64: 1.3-2.2x faster), and 8-bit SpaceToDepth the packed
    gather before the row kernel where the input's rows are contiguous (lavapipe, blocks 2-8:
    1.6-2.9x faster; with an NHWC input the row kernel was faster in 2 of 3 shapes). Where the
    row kernel would need its atomic edge pass (rows not on 16-byte boundaries: odd widths, output
    windows) and the tiled paths cannot run, a CPU adapter takes the word-store row kernel: for 4-
    and 8-byte elements always (lavapipe: 1.9-4.7x faster), for 1- and 2-byte elements on rows
    under SHORT_ROW_BYTES (a GPU: rows under GPU_SHORT_ROW_BYTES, every element size, in tensors
    of STAGED_MAX_BYTES moved and more), where the
    edge pass's per-row cost outweighs the row kernel's whole-block stores (lavapipe: 8-123-byte
    rows 1.4-8.5x faster; from 255 bytes up it went either way, 0.5-1.3x; EXPERIMENTS.md)."""
    if cpu:
        s2d_bytes = lay.op == "space_to_depth" and esize == 1 and lay.input.element_strides[-1] == 1
        order = ("zip", "tiled", "packed", "rows") if s2d_bytes else ("zip", "tiled", "rows", "packed")
        if not rows_aligned and (esize >= 4 or lay.rows.row_len * esize < SHORT_ROW_BYTES):
            # after the tiled paths where they run (rows of whole vectors stored in aligned pieces:
            # lavapipe window rows 29-67% of copy against the word-store row kernel's 10-39%)
            order = ("zip", "tiled", "row_words") + order[2:]
        if not (lay.input.is_packed and lay.output.is_packed):
            # a broadcast input or an output window: the tiled kernel before zip (lavapipe, b2 on
            # 8x8 planes, float32 / float16: 509-635 us against zip's 807-933 us; packed tensors
            # went either way, so zip stays first there)
            order = ("tiled", "zip") + tuple(p for p in order if p not in ("tiled", "zip"))
    elif lay.block == 2 or (lay.op == "space_to_depth" and lay.block in TILED_BLOCKS):
        order = ("zip", "tiled", "rows", "packed")
    elif lay.block in TILED_BLOCKS and lay.block * esize <= 16:
        order = ("tiled_staged", "rows", "tiled", "packed")
    else:
        order = ("rows", "tiled", "packed")
    if not cpu and _tiled_rows_first(lay, esize):
        order = tuple(p for q in order for p in (("rows_tiled", q) if q == "rows" else (q,)))
    if not cpu and out_ragged and lay.block in TILED_BLOCKS:
        order = ("tiled_staged",) + order
    row_bytes = lay.rows.row_len * esize
    if (
        not cpu
        and not rows_aligned
        and row_bytes < GPU_SHORT_ROW_BYTES
        and _moved_bytes(lay, esize) >= STAGED_MAX_BYTES
    ):
        # (after the tiled paths where they run: their rows are whole vectors; smaller tensors keep
        # the staged kernel, measured faster there on rows of 37-123 elements, or the row kernel)
        at = order.index("rows") if "rows" in order else len(order)
        first = ("rows_packed",) if row_bytes > ROWS_PACKED_MIN_BYTES and esize <= 4 else ()
        order = order[:at] + first + ("row_words",) + order[at:]
    if not cpu and _channels_fastest(lay):
        order = ("transpose",) + order
    for path in order:
        if reasons[path] is None:
            return path
    return "strided" if esize >= 4 else "atomic"


def _steps(lay, path, box: _Box, pin, pout, caps, esize, split: bool, k: int, tile_consts, aligned) -> list:
    """The kernel step(s) of one box; ``tile_consts`` the tiled kernels' form (OUT_RAGGED or
    TILE_HALF, as the plan chose), ``aligned`` whether both tensors start 16-byte aligned in
    padded buffers."""
    al = caps.binding_alignment
    windows = []
    src_base = pin.residual // esize + box.src
    dst_base = pout.residual // esize + box.dst
    if split:
        ws_in = (box.src_span[0] * esize // al) * al
        ws_out = (box.dst_span[0] * esize // al) * al
        windows = [
            ("input", ws_in, min(box.src_span[1] * esize, lay.input.total_tensor_size_in_bytes) - ws_in),
            ("output", ws_out, min(box.dst_span[1] * esize, lay.output.total_tensor_size_in_bytes) - ws_out),
        ]
        src_base -= ws_in // esize
        dst_base -= ws_out // esize
    suffix = f"[{k}]" if split else ""
    nb, cb, hb = box.extents
    consts = {"ELEM_BYTES": esize}
    op = lay.op
    if path in ("zip", "tiled", "tiled_staged"):
        t = lay.tiled
        half = "TILE_HALF" in tile_consts
        # columns a thread covers: one 8-byte half vector per input row (zip), a 16-byte vector (tiled)
        chunks = t.row_len // ((8 if path == "zip" or half else 16) // esize)
        threads = nb * cb * hb * t.block * chunks
        u = {
            **_named("in_stride_", t.in_strides, "nch"),
            **_named("out_stride_", t.out_strides, "nch"),
            "channels": cb,
            "height": hb,
            "chunks": chunks,
            **_named("chan_", t.chan, "ijc"),
            "threads": threads,
            "src_base": src_base,
            "dst_base": dst_base,
            **magic_uniforms(chunks=chunks, height=hb, channels=cb),
        }
        name = _name(op, path)
        return [
            step(
                name + suffix,
                lay.shader,
                _WHY[path],
                threads,
                entry_point=name,
                workgroup_size=_staged_tile_workgroup(t.block) if path == "tiled_staged" else WORKGROUP,
                constants=dict(consts, BLOCK=t.block, **tile_consts),
                uniforms=u,
                bindings={
                    "input": "input2" if path == "zip" else ("input2", "input4"),
                    "output": ("output4", "output2", "output"),
                },
                uniform_var="tl",
                windows=windows,
            )
        ]
    if path == "transpose":
        ragged = _transpose_ragged(lay, pout, esize)
        return [_transpose_step(lay, box, esize, src_base, dst_base, windows, suffix, aligned, ragged)]
    if path in ("rows", "rows_tiled", "rows_packed", "row_words", "staged"):
        # the slot-saving split (_row_threads): GPUs, elements of at most 4 bytes, input rows contiguous
        fit = path == "rows" and not caps.is_cpu and esize <= 4 and lay.rows.in_strides[3] == 1
        return _row_steps(lay, box, esize, src_base, dst_base, windows, suffix, pout, kind=path, fit=fit)
    # the strided gather over the box's sub-space
    sizes = list(lay.space.sizes)
    for kk, d in enumerate(lay.box_dims):
        sizes[d] = box.extents[kk]
    sz, src, dst = coalesce(sizes, lay.space.src_strides, lay.space.dst_strides)
    if len(sz) > MAX_DIMS:
        raise DmlValidationError(f"{op}: iteration space of {len(sz)} dimensions exceeds {MAX_DIMS}")
    count = math.prod(sz)
    n = len(sz)
    shifts = [(s.bit_length() - 1) if s & (s - 1) == 0 else 32 for s in _innermost_first(sz, 1)]
    if path == "packed":
        base = dst_base * esize
        invocations = -(-(base + count * esize) // 16) - base // 16
    else:
        invocations = -(-count // ELEMENTS_PER_THREAD)
    name = _name(op, path)
    return [
        step(
            name + suffix,
            lay.shader,
            _WHY[path],
            invocations,
            entry_point=name,
            constants=consts,
            uniforms={
                "sizes": _innermost_first(sz, 1),
                "src_strides": _innermost_first(src, 0),
                "dst_strides": _innermost_first(dst, 0),
                "shifts": shifts,
                "count": count,
                "src_base": src_base % 2**32,
                "dst_base": dst_base % 2**32,
                "rank": n,
            },
            bindings={
                "input": "input",
                "output": {"packed": "output4", "strided": "output", "atomic": "output_atomic"}[path],
            },
            uniform_var="pm",
            windows=windows,
        )
    ]


def _channels_fastest(lay: DepthSpaceLayout) -> bool:
    """The input's channels are its fastest dimension (stride 1) and its rows are not (NHWC), with
    more than one channel to a run (DepthToSpace's output channels, SpaceToDepth's input ones)."""
    r = lay.rows
    d2s = lay.op == "depth_to_space"
    k_stride = r.chan[2] * r.in_strides[1] if d2s else r.in_strides[1]
    k_len = lay.output.sizes[1] if d2s else lay.input.sizes[1]
    return k_stride == 1 and r.stride_w > 1 and k_len > 1


def _transpose_ragged(lay: DepthSpaceLayout, pout: Placement, esize: int) -> bool:
    """Whether some output row of the transpose starts or ends inside a 32-bit word (8/16-bit
    elements: odd row lengths, windows at odd offsets): transpose_ragged_entry, which merges the
    words rows share with atomics."""
    if esize >= 4:
        return False
    pw = 4 // esize
    r = lay.rows
    strides = [t for t, n in zip(r.out_strides[:3], lay.output.sizes[:3]) if n > 1]
    return bool(pout.residual % 4 or r.row_len % pw or any(t % pw for t in strides))


def _transpose_step(
    lay: DepthSpaceLayout, box: _Box, esize: int, src_base, dst_base, windows, suffix, aligned, ragged: bool
):
    """transpose_entry over the box (common/transpose.wgsl): planes (n, h, i, j), rows r, channels
    k; 16-byte vectors on both sides where every run and row allows (``aligned``: the tensors'
    placements); transpose_ragged_entry where ``ragged`` (output rows inside words)."""
    r, b = lay.rows, lay.block
    nb, cb, hb = box.extents
    in_n, in_c, in_h, in_w = r.in_strides
    out_n, out_c, out_h, _ = r.out_strides
    chan_i, chan_j, chan_c = r.chan
    if lay.op == "depth_to_space":  # planes (n, h, i), r = w*b + j, k = c'
        plane = (hb, b, 1)
        ins, outs = (in_n, in_h, chan_i * in_c, 0), (out_n, b * out_h, out_h, 0)
        in_r0, in_k, out_k = r.stride_j, chan_c * in_c, out_c
    else:  # planes (n, h, i, j), r = w, k = c
        plane = (hb, b, b)
        ins, outs = (in_n, b * in_h, in_h, in_w), (out_n, out_h, chan_i * out_c, chan_j * out_c)
        in_r0, in_k, out_k = 0, in_c, chan_c * out_c
        if in_w == cb * in_c and chan_j == cb * chan_c:
            # NHWC with DCR and every channel in the box: (j, c) is one run of b*C channels in the
            # input and of b*C output channels: one plane a (n, h, i), b times the channels
            plane, cb = (hb, b, 1), b * cb
    return transpose_step(
        _name(lay.op, "transpose") + suffix,
        lay.shader,
        esize,
        planes=(nb, *plane),
        ins=ins,
        outs=outs,
        r_len=r.row_len,
        interleave=r.interleave,
        in_r=(in_r0, r.stride_w),
        k=(cb, in_k, out_k),
        bases=(src_base, dst_base),
        aligned=aligned,
        windows=windows,
        ragged=ragged,
    )


def _transpose_form(esize, ins, outs, r_len, interleave, in_r, k, bases, aligned, ragged):
    """(vec, TP_K, staged words, tile row elements, tiles along rows, tiles along channels, word
    loads staged packed: TP_WPACK) of a transpose with plane strides ``ins`` / ``outs``, rows of
    ``r_len`` (input strides ``in_r``: of r % interleave, of r / interleave, and with merged rows of
    r / r_w) and rows inside words where ``ragged``."""
    cb, in_k, out_k = k
    src_base, dst_base = bases
    v = 16 // esize
    strides = (*ins, *outs, in_r[0] if interleave > 1 else 0, *in_r[1:], out_k, src_base, dst_base)
    vec = not ragged and aligned and in_k == 1 and cb % v == 0 and r_len % v == 0 and all(x % v == 0 for x in strides)
    # 8/16-bit runs and rows of whole words (not vectors): word loads staged packed (TP_WPACK)
    pw = max(1, 4 // esize)
    wpack = TRANSPOSE_WORD_PACK and esize < 4 and not (vec or ragged) and in_k == 1
    wpack = wpack and all(x % pw == 0 for x in strides)
    # TP_K: the channels rounded up to a power of two (2 to 32; at least a vector's with TP_VEC);
    # the tile stages TRANSPOSE_TILE_WORDS words
    tile_k = min(32, max(2, v if vec else pw if wpack else 2, 1 << (cb - 1).bit_length()))
    # 8/16-bit elements stage packed on the vector path (4 / esize of a channel's row elements a
    # word). Where rows interleave at most 2 lanes (SpaceToDepth, DepthToSpace b2) their tile holds as
    # many elements as a 4-byte type's (1024 / 512 words): faster on the H100 than as many words
    # (DepthToSpace b2: float16 19.2 -> 15.0 us, uint8 35.2 -> 22.9; SpaceToDepth b3: float16 23.6 ->
    # 17.3, uint8 43.2 -> 27.1); DepthToSpace b3 ran slower that way (float16 16.6 -> 18.2, uint8 26.5
    # -> 28.2), so b >= 3 keeps 2048 words (bench/EXPERIMENTS.md)
    packed = (vec or wpack) and esize < 4
    words = TRANSPOSE_TILE_WORDS * esize // 4 if packed and interleave <= 2 else TRANSPOSE_TILE_WORDS
    tile_r = words // tile_k // max(1, esize // 4) * (4 // esize if packed else 1)
    tiles_r, tiles_k = -(-r_len // tile_r), -(-cb // tile_k)
    if TRANSPOSE_FIT_ROWS:
        # the row split evenly over its tiles, each a whole number of stored units (vectors on the
        # vector path; on the word path whole words, and an even number of staged words a row so
        # that its pitch (one spare word) stays odd: an even pitch put the column reads of a tile
        # on one bank, H200 float32 SpaceToDepth 13.8 -> 21.0 us), the staged words shrunk to match
        unit = v if vec else 2 * pw if wpack else (1 if esize == 8 else max(2, 4 // esize))
        fit = -(-(-(-r_len // tiles_r)) // unit) * unit
        if fit < tile_r:
            words = words * fit // tile_r
            tile_r = fit
    return vec, tile_k, words, tile_r, tiles_r, tiles_k, wpack


def _merge_dim(plane, outs, r_len: int):
    """The plane dimension (0-2 of (h, i, j)) whose output stride is the row's length (its rows
    follow each other in the output) and that has more than one row, or None."""
    for d in range(3):
        if plane[d] > 1 and outs[1 + d] == r_len:
            return d
    return None


def transpose_step(
    name: str,
    shader: str,
    esize: int,
    *,
    planes,
    ins,
    outs,
    r_len: int,
    interleave: int,
    in_r,
    k,
    bases,
    aligned: bool,
    windows=(),
    names=("input", "output"),
    ragged: bool = False,
):
    """A step of common/transpose.wgsl's transpose_entry (``shader`` includes it): ``planes`` =
    (n, h, i, j) counts, ``ins`` / ``outs`` their strides (elements), rows of ``r_len`` elements
    (input strides ``in_r`` = (of r % interleave, of r / interleave)), ``k`` = (channels, their input
    stride, their output stride), ``bases`` = (src, dst) element offsets in the bindings; 16-byte
    vectors on both sides where every run and row allows (``aligned``: the tensors' placements).
    ``names``: the operator's tensors bound as the kernel's input and output. ``ragged``: some
    output row starts or ends inside a word (8/16-bit elements): transpose_ragged_entry, words of
    one element a staged word, the words rows share merged with atomics."""
    nb, *plane = planes
    cb, in_k, out_k = k
    src_base, dst_base = bases
    merge = None
    form = _transpose_form(esize, ins, outs, r_len, interleave, in_r, k, bases, aligned, ragged)
    d = _merge_dim(plane, outs, r_len)
    if d is not None:
        # rows merged along the plane dimension whose output rows follow each other (TP_MERGE)
        m_plane, m_ins, m_outs = list(plane), list(ins), list(outs)
        m_len, in_r2 = r_len * plane[d], ins[1 + d]
        m_plane[d], m_ins[1 + d], m_outs[1 + d] = 1, 0, 0
        m_ragged = ragged
        if ragged:  # rows inside words only where the merged runs still are
            pw = 4 // esize
            spans = (nb, *m_plane, cb)
            m_ragged = bool(
                dst_base % pw or m_len % pw or any(t % pw for t, n in zip((*m_outs, out_k), spans) if n > 1)
            )
        m_in_r = (*in_r, in_r2)
        merged = _transpose_form(esize, m_ins, m_outs, m_len, interleave, m_in_r, k, bases, aligned, m_ragged)
        if (merged[0] and not form[0]) or form[3] <= TRANSPOSE_MERGE_MAX_TILE_ROW:
            form, merge = merged, (r_len, in_r2)
            plane, ins, outs, r_len, ragged = m_plane, m_ins, m_outs, m_len, m_ragged
    vec, tile_k, words, tile_r, tiles_r, tiles_k, wpack = form
    r_w, in_r2 = merge or (r_len, 0)
    workgroups = nb * math.prod(plane) * tiles_r * tiles_k
    u = {
        "workgroups": workgroups,
        "tiles_r": tiles_r,
        "tiles_k": tiles_k,
        **_named("plane_", plane, "hij"),
        **_named("in_", ins, "nhij"),
        **_named("out_", outs, "nhij"),
        "r_len": r_len,
        "in_r0": in_r[0],
        "in_r1": in_r[1],
        "k_len": cb,
        "in_k": in_k,
        "out_k": out_k,
        "src_base": src_base % 2**32,
        "dst_base": dst_base % 2**32,
        **magic_uniforms(tiles_k=tiles_k, tiles_r=tiles_r, plane_j=plane[2], plane_i=plane[1], plane_h=plane[0]),
        "r_w": r_w,
        "in_r2": in_r2,
        **magic_uniforms(r_w=r_w),
    }
    return step(
        name,
        shader,
        f"{workgroups} tiles of {tile_k} channels x {tile_r} row elements"
        + (f" (rows of {r_w} merged: {r_len // r_w} a run)" if merge else "")
        + (", 16-byte vectors on both sides" if vec else ", words staged packed" if wpack else ", words")
        + (" (rows inside words: their shared words merged with atomics)" if ragged else ""),
        workgroups * TRANSPOSE_WORKGROUP,
        entry_point="transpose_ragged_entry" if ragged else "transpose_entry",
        workgroup_size=TRANSPOSE_WORKGROUP,
        constants={
            "ELEM_BYTES": esize,
            "TP_DIV": interleave,
            "TP_K": tile_k,
            "TP_VEC": int(vec),
            **({"TP_MERGE": 1} if merge is not None else {}),
            **({"TP_WPACK": 1} if wpack else {}),
            **({"TP_WORDS": words} if words != 2048 else {}),  # (2048: the shader's default)
        },
        uniforms=u,
        bindings={names[0]: "input", names[1]: ("output", "output_atomic")}
        if ragged
        else {names[0]: ("input", "input4"), names[1]: ("output", "output4")},
        uniform_var="tp",
        windows=windows,
    )


def _staged_tile_workgroup(block: int) -> int:
    wg = WORKGROUP
    while wg * block > STAGED_TILE_VECTORS:
        wg //= 2
    return wg


def _innermost_first(values, fill: int) -> list[int]:
    """The gather's per-dimension uniforms: innermost dimension first, padded to MAX_DIMS."""
    n = len(values)
    return [values[n - 1 - d] if d < n else fill for d in range(MAX_DIMS)]


def _row_starts_align(lay, pout, esize) -> int:
    """The alignment (1-16 bytes) every output row start shares: the residual offset and the
    N, C and H strides' bytes."""
    d = lay.output
    return math.gcd(16, pout.residual, *(t * esize for t, n in zip(d.element_strides[:3], d.sizes[:3]) if n > 1))


def _rows_aligned(lay, pout, esize, dst) -> bool:
    """Every output row starts and ends on a 16-byte boundary (``dst``: the box's first output
    element), so the row kernel needs no edge pass."""
    row_bytes = lay.rows.row_len * esize
    return _row_starts_align(lay, pout, esize) == 16 and row_bytes % 16 == 0 and (dst * esize) % 16 == 0


def _stage_shape(r: RowSpace) -> tuple[int, int, int]:
    """staged_body's (input runs a unit, output segments a unit, input elements a column of a
    run): DepthToSpace's output row reads b input rows (interleave b); SpaceToDepth's input row
    feeds b output rows, reading every b-th element for each (interleave 1)."""
    segs = r.block // r.interleave
    return r.interleave, segs, segs


def _staging(r: RowSpace, esize: int, rows: int) -> dict:
    """staged_body's uniforms. A unit is a team of 2^unit_shift threads (32 to 256) with
    STAGE_WORDS / (units a workgroup) words of workgroup memory: the smallest team whose memory
    holds a whole group's runs; where even 256 threads' memory does not, chunks of columns that fit
    it, each a multiple of 16 bytes of run."""
    runs, segs, sw = _stage_shape(r)
    cols = r.row_len // r.interleave

    def run_words(tw):  # a spare word for a run starting inside one; odd, against bank conflicts
        n = -(-tw * sw * esize // 4) + 1
        return n + 1 - n % 2

    shift = 5
    while shift < 8 and runs * run_words(cols) > STAGE_WORDS >> (8 - shift):
        shift += 1
    cap = STAGE_WORDS >> (8 - shift)
    if runs * run_words(cols) <= cap:
        tw = cols
    else:
        raw = ((cap // runs - 2) * 4) // (sw * esize)
        tw = raw - raw % max(1, 16 // (sw * esize)) or max(1, raw)
    chunks = -(-cols // tw) if cols else 1
    return {
        "units": (rows // segs) * chunks,
        "upw": 1 << (8 - shift),
        "unit_shift": shift,
        "cols": cols,
        "tw": tw,
        "chunks": chunks,
        "unit_cap": cap,
        "run_words": run_words(tw),
        "run_stride": r.stride_j if runs > 1 else 0,
        "seg_stride": r.chan[1] * r.out_strides[1] if segs > 1 else 0,
    }


def _row_threads_words(max_blocks: int) -> tuple[int, int]:
    """The word-store row kernels' (blocks a thread, log2 threads a row): enough threads a row
    for a warp's stores to stay contiguous (>= 32 threads a row), up to 8 blocks a thread to
    spread the row index arithmetic; a power of two threads a row, so that the shader splits its
    thread id with a shift."""
    bpt = max(1, min(8, max_blocks // 32))
    return bpt, _row_shift(max_blocks, bpt)


def _row_shift(max_blocks: int, bpt: int) -> int:
    """log2 of the threads a row needs at ``bpt`` blocks a thread (a power of two)."""
    return max(0, (-(-max_blocks // bpt) - 1).bit_length())


def _row_threads(max_blocks: int) -> tuple[int, int]:
    """rows_body's (blocks a thread, log2 threads a row): of 1-8 blocks a thread and a power of two
    threads a row (at least 2 where a row has 2 blocks or more), the fewest thread slots a row
    (blocks a thread x threads a row), the fewer blocks a thread on a tie. Slots past a row's
    blocks are threads that only compute their row: the rule above (_row_threads_words) left up
    to half of them idle (a row of 17 blocks: 32 slots; here 5 blocks x 4 threads = 20). H200,
    random rows of the sweep (bench/EXPERIMENTS.md, session 32): DepthToSpace uint8 b2 / b3 / b8
    1.44 / 1.30 / 1.20x faster, float16 b3 / b4 1.13 / 1.15x, SpaceToDepth uint8 b4 / b3 window
    1.67 / 1.35x, float32 b8 1.15x; 13 blocks (14 slots against 16) within 2 %, hence the old
    split unless the slots drop below ROW_SLOTS_GAIN of its; one thread a row was 1.27x slower
    (SpaceToDepth uint8 b8, 7 blocks: 7 x 1 against 1 x 8), hence at least 2 threads a row. On 60
    fresh rows (seeds 2 and 3): 1- and 2-byte elements 0.93-1.50x (geometric mean 1.20x), 4-byte
    0.98-1.12x (1.02x); NHWC inputs (a gather along the channels) 0.51-1.16x (0.81x) and 8-byte
    elements 0.92-1.16x (1.00x), so the plan keeps the old split for those (and on CPU adapters:
    unmeasured)."""

    first = _row_threads_words(max_blocks)
    fits = [b for b in range(1, 9) if max_blocks < 2 or _row_shift(max_blocks, b) >= 1]
    bpt = min(fits, key=lambda b: (b << _row_shift(max_blocks, b), b))
    if bpt << _row_shift(max_blocks, bpt) > ROW_SLOTS_GAIN * (first[0] << first[1]):
        return first
    return bpt, _row_shift(max_blocks, bpt)


def _tiled_rows_first(lay: DepthSpaceLayout, esize: int) -> bool:
    """A GPU plan tries the tiled row kernel before the row kernel: 1- and 2-byte elements on rows
    of GPU_SHORT_ROW_BYTES or more (shorter rows hold at most one whole block: the word-store or
    the staged kernel stays), for SpaceToDepth where a block's input run is at most 8 bytes a
    column (block x element size; a thread loads `block` 16-byte runs for each block it stores).
    H200, session 33 (bench/EXPERIMENTS.md; before / after, us): DepthToSpace 41 fresh rows
    0.98-2.18x; SpaceToDepth 23 fresh rows 0.92-1.92x, and on rows of 4-24 bytes 0.16-0.86x
    against the word-store kernel (49x128x652x16 b4 uint8 185.6 / 1190.3, 42x38x84x72 b3 uint8
    30.2 / 42.2); 2-byte b8 went either way (int16 186.2 / 265.2, float16 21.2 / 22.0 and 29.6 /
    23.8)."""
    if esize > 2 or lay.rows.row_len * esize < GPU_SHORT_ROW_BYTES:
        return False
    return lay.op == "depth_to_space" or lay.block * esize <= 8


def _s2d_tiled_blocks(block: int, row_bytes: int) -> int:
    """space_to_depth_rows_tiled's blocks a thread (BPT): 2 at block 8, and at block 4 on rows of 9
    blocks (144 bytes) or more, else 1. H200, 70 8/16-bit rows of the sweep (session 33; us, one
    block / two): block 8 uint8 119-byte rows 25.1 / 21.0, 69-byte 44.3 / 41.9, float16 244-byte 30.5 /
    22.0, int8 149-byte 262.4 / 197.5 (45-byte broadcast rows 117.1 / 125.7); block 4 float16 348 and
    386-byte rows 67.6 / 48.9 and 101.8 / 74.1, 190-byte 48.6 / 42.6, but 90-byte 171.5 / 204.4,
    uint8 131-byte 168.2 / 186.8 and 77-byte 177.3 / 212.0; blocks 2 and 3 one block a thread
    (uint8 b3 135.8 / 155.1, float16 b2 87.9 / 102.9; long float16 rows within 7 %)."""
    return 2 if block == 8 or (block == 4 and row_bytes >= 144) else 1


def _row_steps(
    lay, box: _Box, esize, src_base, dst_base, windows, suffix, pout, kind: str = "rows", fit: bool = False
) -> list:
    """rows_body over the box's rows, and row_edges_body where some row is not 16-byte aligned;
    row_words_body or staged_body alone for those paths (``kind``); ``fit``: rows_body splits a
    row's blocks by _row_threads (else as the word-store kernels)."""
    r = lay.rows
    nb, cb, hb = box.extents
    rows = nb * cb * hb * r.rows_per_unit
    words = kind == "row_words"
    row_bytes = r.row_len * esize
    # 1- and 2-byte elements (row_words_shared) walk 4-word chunks from the word holding a row's
    # first byte: a row may start up to 3 bytes into that word and end up to 3 before its last
    # word ends, so its words span up to 6 bytes more than the row
    shared = words and esize < 4
    max_blocks = max(1, -(-(row_bytes + (6 if shared else 0)) // 16))
    bpt, shift = _row_threads(max_blocks) if fit else _row_threads_words(max_blocks)
    tpr = 1 << shift
    aligned = kind not in ("rows", "rows_tiled") or _rows_aligned(lay, pout, esize, box.dst)
    staging = _staging(r, esize, rows)
    # rows_tiled: regions of a row's interior (at most row_bytes // 16 blocks): DepthToSpace's of
    # block whole blocks, SpaceToDepth's of 1 or 2 (_s2d_tiled_blocks, strided by the regions)
    d2s = lay.op == "depth_to_space"
    per = r.block if d2s else _s2d_tiled_blocks(r.block, row_bytes)
    regions = max(1, -(-(row_bytes // 16) // per)) if kind == "rows_tiled" else 1
    out_channels = cb * (1 if d2s else r.block * r.block)  # (packed_rows_body's row_at_out)
    u = {
        "rows": rows,
        "row_len": r.row_len,
        "row_shift": shift,
        "edge_slots": EDGE_WORDS,
        "stride_j": r.stride_j,
        "stride_w": r.stride_w,
        "channels": cb,
        "height": hb,
        **_named("in_stride_", r.in_strides, "nchw"),
        **_named("out_stride_", r.out_strides, "nch"),
        **_named("chan_", r.chan, "ijc"),
        "src_base": src_base % 2**32,
        "dst_base": dst_base % 2**32,
        **staging,
        **magic_uniforms(height=hb, channels=cb),
        "regions": regions,
        **magic_uniforms(regions=regions, row_len=r.row_len),
        "out_channels": out_channels,
        **magic_uniforms(out_channels=out_channels),
    }
    consts = {"ELEM_BYTES": esize, "BLOCK": r.block, "ILV": r.interleave}
    if kind == "staged":
        runs, segs, sw = _stage_shape(r)
        name = _name(lay.op, "staged")
        s = staging
        return [
            step(
                name + suffix,
                lay.shader,
                f"{s['units']} units of {s['tw']} columns ({s['chunks']} a group of {rows // segs}), {s['upw']} a "
                f"workgroup, {runs} input run(s) and {segs} output segment(s) each",
                -(-s["units"] // s["upw"]) * WORKGROUP,
                entry_point="staged_entry",
                constants=dict(consts, STAGE_RUNS=runs, STAGE_SEGS=segs, STAGE_SW=sw),
                uniforms=u,
                bindings={"input": "input", "output": ("output", "output_atomic")},
                uniform_var="rw",
                windows=windows,
            )
        ]
    # the main step: (entry point, what a thread does, invocations, workgroup size, constants, output variable(s))
    wg = WORKGROUP
    if kind == "rows_packed":
        first = dst_base * esize // 16
        blocks = -(-(dst_base + rows * r.row_len) * esize // 16) - first
        entry, how, count = (
            "packed_rows_entry",
            f" in memory order: {blocks} 16-byte output blocks, one a thread",
            blocks,
        )
        kconsts, out_var = consts, "output4"
    elif kind == "rows_tiled":
        # small tensors: the edge pass folded into the same dispatch (ROW_EDGES)
        fuse = not aligned and _moved_bytes(lay, esize) < ROWS_TILED_FUSE_BYTES
        entry, count = _name(lay.op, kind), rows * regions + (rows * EDGE_WORDS if fuse else 0)
        how = f": {regions} thread(s) a row, {per} 16-byte block(s) a thread" + (
            f", then {EDGE_WORDS} a row for the words off the blocks (atomic merges)" if fuse else ""
        )
        wg = _staged_tile_workgroup(r.block) if d2s else WORKGROUP
        kconsts = dict(consts, ROW_EDGES=int(fuse), **({} if d2s else {"BPT": per}))
        out_var = ("output4", "output_atomic")
        aligned = aligned or fuse
    else:
        if not words:  # (kernel, the output's variable(s), what a thread's unit is)
            kind, out_var, unit = "rows", "output4", "16-byte block(s)"
        elif shared:  # whole words stored plainly, shared end words merged with atomics
            kind, out_var, unit = "row_words_shared", ("output", "output_atomic"), "16-byte chunk(s) stored as words"
        else:
            kind, out_var, unit = "row_words", "output", "16-byte chunk(s) stored as words"
        entry, how, count = f"{kind}_entry", f": {tpr} threads a row, {bpt} {unit} a thread", rows * tpr
        kconsts = dict(consts, BPT=bpt)
    steps = [
        step(
            _name(lay.op, kind) + suffix,
            lay.shader,
            f"{rows} rows of {r.row_len} elements{how}",
            count,
            entry_point=entry,
            workgroup_size=wg,
            constants=kconsts,
            uniforms=u,
            bindings={"input": "input", "output": out_var},
            uniform_var="rw",
            windows=windows,
        )
    ]
    if not aligned:
        edge = _name(lay.op, "row_edges")
        steps.append(
            step(
                edge + suffix,
                lay.shader,
                "rows do not all start and end on 16-byte boundaries: the elements outside their whole "
                "blocks, merged into their words with atomics",
                rows * EDGE_WORDS,
                entry_point="row_edges_entry",
                constants=consts,
                uniforms=u,
                bindings={"input": "input", "output": "output_atomic"},
                uniform_var="rw",
                windows=windows,
            )
        )
    return steps


class PermuteOperator(Operator):
    """A compiled DepthToSpace or SpaceToDepth: call it with (input, output) GPU tensors.

    Created by the operator module's ``compile_*`` function; ``plan`` shows the kernels it runs.
    """

    def __init__(self, device, desc, plan_fn, op: str, *, kernel=None, capabilities=None):
        self.op = op
        self._plan_fn = plan_fn
        super().__init__(device, desc, kernel=kernel, capabilities=capabilities)

    def make_plan(self, placements):
        """The module's planning function on this description and device."""
        return self._plan_fn(self.desc, self.capabilities, kernel=self.kernel_request, placements=placements)

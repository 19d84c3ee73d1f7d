"""Resample3 LINEAR with Antialiased = TRUE (DML_RESAMPLE3_OPERATOR_DESC, spec 4.5).

Contract (DirectML documents the stretch, not the weights; onnxruntime maps ONNX Resize-18
``antialias=1`` onto it, so the weights follow ONNX's definition):

* Source coordinates as Resample2, per axis: ``x = (o - OutputPixelOffset) / Scale - InputPixelOffset``
  (float32).
* Along an axis with Scale < 1 the linear (triangle) filter is stretched by 1/Scale: source pixel i
  weighs ``max(0, 1 - |i - x| * Scale)``; the weights are normalised to sum 1; pixels outside the
  input are the edge pixel (no exclude_outside, no fill). Along an axis with Scale >= 1 the filter
  is not stretched: plain linear (Resample2's taps), so antialiased upsampling is linear upsampling.
  (DML's page says the filter is active where "1/Scales > 2"; we follow ONNX, which stretches for
  every Scale < 1.)
* Separable, in float32: the last axis first, then outwards, each sum in ascending tap order;
  float16 rounds to nearest even, int8/uint8 round half to even and saturate (as linear Resample).
  Accuracy: :data:`LINEAR_TOLERANCE` of :mod:`dmlwgsl.ops.resample` against
  :func:`dmlwgsl.reference.resample.resample_antialias`.

The host builds, per axis, a tap table (first pixels, tap counts, normalised weights; output-fastest)
with the reference's own float32 arithmetic (:func:`dmlwgsl.reference.resample.antialias_taps`); the
shader only sums (wgsl/resample_antialias.wgsl). Tables are O(sum over axes of output length x taps).

Paths (``kernel=``):
  aa_pat (the default where n and c are not filtered and the H and W scales give one tap
    pattern: rational scales of a small period such as 1/2, 1/3, 2/3, 0.4; wgsl/resample_antialias_pat.wgsl):
    a thread owns PV (4 or 8) output columns of RB (1 or 2) output rows; along W its window of input
    words (16-byte vectors where rows are whole vectors) moves by a whole number of words from one
    thread to the next and its outputs' taps sit at the same window slots in every thread (override
    constants), so each window word is loaded and converted once and feeds every tap on it; along H the
    band's input rows are each filtered along W once and added into the output rows they feed.
    Slot weights come from host tables (the reference's weights, zero where it has no tap); 8/16-bit
    rows run along w stride 1, at any offset and length: input rows that do not start on a word are
    read across words (IA: two loads a window word, shifted by the row's own offset), output rows
    that are not whole words take a thread's outputs shifted into place, the words they fill stored
    and the (at most two) words shared with a neighbour merged with atomics (OA). lavapipe, against
    aa_element_atomic (interleaved rounds, min / median): int8 [60, 91, 121] padded [1, 2/3, 1/4]
    3298 -> 890 us (3.7x), int8 [53, 20, 87, 66] x0.4 along w 38.6 -> 11.3 ms (3.4x), float16
    [1, 8, 256, 256] 1/3 1934 -> 502 us (3.9x); aa_taps' GW form 1.0-1.7x on the same rows. (The IA and
    OA forms are not measured on a GPU: there they run on request, and aa_taps' GW form, measured on
    the H200, by default.) Requested, and on CPU adapters, a thread may own 6 columns and
    a band 3 rows where 4 and 8 columns or 2 and 1 rows give no pattern (scales of a period of 3
    outputs, e.g. 3/4); lavapipe, int8 [2000, 386] x0.75 against aa_element_atomic 5.3x (16857 ->
    3154 us min) and aa_taps 2.5x, float16 5.3x / 2.3x, uint8 [2000, 384] against aa_rows 2.9x,
    float32 against aa_taps 1.9x. On GPUs float32 rows whole 16-byte vectors with at
    most 6 W slots an output (other float32 forms measured slower than aa_taps there). H100, 8x64x240x240,
    against aa_taps in the same call: float32 at 1/2 74.0 -> 65.8 us (74 -> 83 % of the in-run copy),
    float16 68.4 -> 47.6 (44 -> 63 %), uint8 57.3 -> 35.1 (24 -> 39 %); float16 and uint8 at 1/3 and
    1/4 1.5-1.6x faster. CPU adapters take it in every form (words and 4 or 8 columns for every type)
    with the tallest band: lavapipe, 1x8x64x64 and 2x8x128x128 at 1/2, 1/3, 1/4, 1.0-3.5x faster than
    aa_taps / aa_rows (float32 1/2 1749 -> 1588 us, float16 4430 -> 1452, uint8 3495 -> 1364).
  aa_taps (the default where aa_pat does not run and at most 8 taps along w; CPU adapters keep aa_rows
    for 8/16-bit outputs of whole words): one thread owns
    one output word (1, 2 or 4 columns) of RB output rows (1, 2, 4 or 8: the most that leave 2**19
    threads, _taps_band), taking the rows in turn with the columns' W taps read once. Its columns'
    table entries are one load per field (the table is output-fastest); the taps are written-out
    code (up to 8 rows x 8 taps, the rows and tap groups chosen by overrides TH, TW), every tap
    loaded unconditionally and added as select(0, w * x, tap < count), so a thread's loads are all
    in flight together. Stores are written out (no vector indexed by a variable: the loop form cost
    15-30 us of index-and-store skeleton on the H100). H100 (session 25), 8x64x240x240 at 1/2, 1/3,
    1/4: float32 55-73 % of the in-run copy, 2.2-2.6x torch's F.interpolate(antialias=True); float16
    34-45 %, uint8 17-22 % (every type runs 55-86 us there: the bound is per output, not per byte).
    8/16-bit output rows that are not whole words (odd lengths, row strides or offsets; w stride 1)
    take its GW form: thread g of a row owns the row's g-th output word (its columns shift by the
    row's head, the first element's place in its word), stores the words the row fills and merges
    the row's (at most two) shared end words with atomics. A filtered n or c axis (NC) sums its taps
    around each output row's h-w sums. H200 (session 38, against aa_element_atomic): int8 [211843, 386]
    x0.75 824 -> 309 us, int8 6258x91x121 padded [1, 2/3, 1/4] 381 -> 168, int8 530x20x87x66 x0.4
    along w 318 -> 166, float16 4017x7x375 padded [1/2, 1/4, 1/4] (NC) 58.1 -> 29.4, float16
    2x32x256x256 x1/3 23.8 -> 17.4. lavapipe, against aa_element_atomic (min / median of
    interleaved rounds): int8 [2000, 386] x0.75 2.2-2.4x, int8 [60, 91, 121] padded [1, 2/3, 1/4]
    1.6-2.1x, int8 [53, 20, 87, 66] x0.4 along w 1.3x, float16 [40, 7, 375] padded [0.5, 0.25, 0.25]
    (NC) 1.0-1.3x, float16 [1, 8, 256, 256] 1/3 1.2-1.3x.
    Tried and not kept: loops of override-constant length over private arrays (2.4-4x slower than
    aa_element: the arrays live in local memory), two or four float32 columns a thread (up to 3.3x
    slower: registers), and (H200, session 25) a band walk with the last rows' W sums in a shift
    register of named registers (each input row W-filtered once a band: within +-15 % of aa_taps, no
    faster on the 8x64x240x240 rows), see bench/EXPERIMENTS.md.
  aa_rows (the default for 8/16-bit elements on CPU adapters where aa_pat does not run; elsewhere on
    request only: measured
    2.5-5x slower than aa_element on the H100, 8x64x240x240 at 1/2, 1/3, 1/4, every band and
    column choice; see bench/README.md): the row walk. n and c unfiltered; one thread owns
    one output word (1 to 4 output columns) of a band of output rows of one (n, c) plane, holds its
    columns' W taps in registers and walks the input rows under the band once, in ascending order:
    each input row is filtered along W once and added into every output row whose H taps cover it
    (a sliding window of KA accumulators, KA computed on the host), instead of once per output row
    as aa_element does (at scale 1/2 an output row costs 2 + 2/band W-filtered input rows, not 4).
    8/16-bit outputs are stored as whole words, no atomics. Needs at most 12 W taps (scale >= ~1/5.5),
    at most 8 output rows sharing an input row, H taps whose first and last pixels grow with the
    output row, and for 8/16-bit outputs rows of whole words; the sums run in aa_element's order.
  aa_element (the default for 4-byte elements where aa_taps cannot run): one thread per output sums
    its taps, any strides;
  aa_element_words (on CPU adapters the default for 8/16-bit elements where aa_pat, aa_taps and
    aa_rows cannot run: more than 8 taps along w, or output rows not along w stride 1, and the
    output has an axis of stride 1; on GPUs on request): the output as rows of contiguous
    elements (the stride-1 axis, then each axis whose stride is the product of the sizes before
    it: a packed output in any axis order, NHWC included, is one row); thread g of a row owns its
    g-th output word, sums each of its elements' taps as aa_element does, stores the words the row
    fills and merges the row's shared end words with atomics. lavapipe: as fast as
    aa_element_atomic (0.96-1.04x: there the sums, not the atomics, take the time); H200: 1.1-2.7x
    slower than aa_element_atomic on ten random rows (a thread sums its word's elements one after
    another: a quarter of the threads for 8-bit outputs).
  aa_element_atomic (the default for 8/16-bit elements where none of the above runs: on GPUs, and
    on CPU adapters where the output has no axis of stride 1): the same as aa_element, merged
    into words with atomics.
  aa_tile (on request only): a workgroup stages the input region under a tile of outputs of one
    (n, c) plane in workgroup memory (each input element read once per tile), filters along W,
    then along H. Needs n and c unfiltered, the region to fit 10 KiB, and for 8/16-bit outputs
    rows of whole words. Measured slower than aa_element on the H100 (8x64x240x240 float32 at 1/2:
    0.30 ms against 0.18 ms; float16 and uint8 alike): its time grows with the number of
    workgroups, a fixed cost per workgroup (workgroup-memory zero-initialisation is the suspect),
    so it is not chosen by default.
"""

from __future__ import annotations

import functools
from typing import Mapping

import numpy as np

from ..operator import Operator
from ..plan import Capabilities, Plan, PlanError, div_magic, placement_of, step
from ..reference import resample as ref
from ..runtime import GpuTensor
from ..tensor import DataType, TensorDesc

__all__ = ["ResampleAntialiasOperator", "plan_resample_antialias", "compile_resample3", "antialias_tables", "KERNELS"]

SHADER = "resample_antialias.wgsl"
KERNELS = ("aa_pat", "aa_taps", "aa_rows", "aa_tile", "aa_element", "aa_element_words", "aa_element_atomic")
#: aa_pat's shader (it includes SHADER).
PAT_SHADER = "resample_antialias_pat.wgsl"
#: The Params fields of each path's geometry (zero where another path runs).
_TILE = ("tile_w", "tile_h", "tiles_per_row", "tiles_per_plane", "tile_workgroups", "tile_planes_c")
_WALK = ("column_groups", "bands", "band_rows", "walk_threads")
_DTYPE_CLASS = {DataType.FLOAT32: 0, DataType.FLOAT16: 1, DataType.INT8: 2, DataType.UINT8: 3}
#: Workgroup-memory arrays of aa_tile (f32 elements), as declared in the shader.
_SRC_N = 2560
_MID_N = 1536
_TILE_BYTES = 4 * (_SRC_N + _MID_N)
_WG = 256
#: aa_tile shapes tried (output columns, output rows); the one with the least input staged per
#: output wins (halo rows and columns are read by two tiles), ties going to the larger tile.
_TILE_W = (128, 64, 32, 16, 8, 4)
_TILE_H = (32, 16, 8, 4, 2, 1)
#: aa_rows: W taps per column held in registers, and its most accumulated output rows (as the shader's
#: TW_CAP and KA_CAP).
_TW_CAP = 12
_KA_CAP = 8
#: aa_taps: W taps per column held in registers (the shader's TAP_CAP), and the most H taps it writes
#: out (TH_CAP; more run in a loop).
_TAP_CAP = 8
_TH_CAP = 8
#: aa_taps: output rows a thread (RB) tried, most first: the most that still leaves _TAPS_THREADS
#: threads (fewer threads read each column's W taps once for more rows; too few leave the GPU
#: idle). H200, 8x64x240x240 and 4x24x301x417 at 1/2, 1/3, 1/4 and 2/3, every type: the rule's
#: choice was the fastest of 1, 2, 4 and 8 or within 2 % (float32 at 1/2 98.8 -> 79.4 us, 2/3
#: 152.8 -> 110.3 us; uint8 within 5 % either way); see bench/EXPERIMENTS.md.
_TAPS_BANDS = (8, 4, 2, 1)
_TAPS_THREADS = 1 << 19
#: aa_pat: output columns a thread (PV) tried by element size, in this order, and output rows a
#: band (RB), most first: the most that leave _PAT_THREADS threads. H100, 8x64x240x240 at 1/2, 1/3
#: and 2/3, PV x RB of (4, 8) x (1, 2) (4 rows, with their accumulators live through the row loop,
#: ran 10-30 % slower everywhere: float32 at 1/2 79.6 us against 68.9 with 2): two rows were
#: fastest or within 3 % except float32 at 1/3 (70.7 us against 63.0 with one row). Float32 takes 4
#: columns with windows of 16-byte vectors and at most _PAT_F32_SLOTS slots only: with 8 columns
#: (80.9 us at 1/2), windows of words (94.5 us; 54.3 against aa_taps' 41.2 at 2/3 on 4x24x301x416,
#: whose 4 columns step by 6 elements, not whole vectors) or the 8 slots of 1/4 (87.0 us against
#: 84.7) it ran slower than aa_taps (74.0 at 1/2).
_PAT_OUTPUTS = {4: (4,), 2: (4, 8), 1: (8, 4)}
#: aa_pat requested (and on CPU adapters): the columns a thread tried for every type. 6 columns give
#: a pattern where 4 and 8 do not at scales of a period of 3 outputs (3/4, 3/8: 6 outputs step by
#: whole words); a thread's 8-bit outputs are then not whole words (OA). lavapipe, against
#: aa_taps' GW form: int8 [2000, 386] x0.75 (see the module docstring).
_PAT_ANY = (4, 8, 6)
_PAT_BANDS = (2, 1)
#: aa_pat requested (and on CPU adapters): a band of 3 rows where 2 and 1 give no pattern along h
#: (a period of 3 output rows: 3/4, 3/8).
_PAT_BAND_LAST = 3
_PAT_THREADS = 1 << 18
_PAT_F32_SLOTS = 6
#: aa_pat's limits (the shader's): taps an output along an axis, window words (NWD); a first slot
#: must fit a byte.
_PAT_TAPS = 8
_PAT_WINDOW = 24
#: aa_rows: band heights tried, tallest first; the tallest that still gives _ROWS_THREADS threads wins
#: (a taller band filters the input rows shared by neighbouring bands fewer times, but the GPU needs
#: enough threads in flight to cover load latency). A description too small to reach it at any
#: height takes _ROWS_SMALL_BAND rows (it cannot fill the GPU either way; fewer loads).
_BANDS = (16, 8, 4, 2)
_ROWS_THREADS = 1 << 17
_ROWS_SMALL_BAND = 8
#: aa_rows: output columns per thread (the shader's CW), at least one output word: one word, so that
#: a warp's load of one tap touches the fewest cache sectors (neighbouring threads read neighbouring
#: input columns; with 4 float32 columns per thread a tap's load spans 4x the sectors at 1/2).
_ROWS_COLS = 1


def _padded(desc) -> dict:
    """The description padded to 4 axes in front (n, c, h, w), as the shader sees it."""
    r = desc.input.rank
    pad = 4 - r
    return {
        "in_sizes": (1,) * pad + desc.input.sizes,
        "out_sizes": (1,) * pad + desc.output.sizes,
        "in_strides": (0,) * pad + desc.input.element_strides,
        "out_strides": (0,) * pad + desc.output.element_strides,
        "scales": (1.0,) * pad + tuple(desc.scales),
        "in_off": (0.5,) * pad + tuple(desc.input_pixel_offsets),
        "out_off": (-0.5,) * pad + tuple(desc.output_pixel_offsets),
    }


@functools.lru_cache(maxsize=64)
def _axis_taps(desc) -> tuple:
    """The reference's (first, count, weights) of every axis (padded to 4, outermost first):
    the tap table's and aa_pat's slot tables' one source."""
    pd = _padded(desc)
    out = []
    for d in range(4):
        x = ref.input_coordinates(pd["out_sizes"][d], pd["scales"][d], pd["in_off"][d], pd["out_off"][d])
        out.append(ref.antialias_taps(x, pd["in_sizes"][d], pd["scales"][d]))
    return tuple(out)


@functools.lru_cache(maxsize=64)
def antialias_tables(desc) -> tuple[np.ndarray, tuple, tuple, tuple, tuple]:
    """The shader's tap table for ``desc``: (u32 words, head offsets, weight offsets,
    padded entries per axis, per-axis (first, count) arrays). Per axis d (padded to 4), with E[d] its
    output length rounded up to 4: first pixels at ``head[d] + o``, tap counts at ``head[d] + E[d] + o``,
    weight j at ``weight[d] + j * E[d] + o`` (zeros past the count, and rows up to a multiple of 4).
    Output-fastest, so neighbouring threads read neighbouring words and four columns are one 16-byte
    load; every offset is a multiple of 4 words."""
    parts, heads, weights, entries, taps, at = [], [], [], [], [], 0
    for first, count, w in _axis_taps(desc):
        e = -(-first.size // 4) * 4
        pad = np.zeros(e - first.size, dtype=np.uint32)
        heads.append(at)
        parts += [first.astype(np.uint32), pad, count.astype(np.uint32), pad]
        at += 2 * e
        weights.append(at)
        # weight rows rounded up to a multiple of 4 (at least 4): aa_taps reads TW = 4 or 8 rows of
        # every column, and an integer input's taps past the count then add 0 * x without a select
        rows = max(4, -(-w.shape[1] // 4) * 4)
        wt = np.zeros((rows, e), dtype=np.float32)
        wt[: w.shape[1], : first.size] = w.T
        parts.append(wt.view(np.uint32).reshape(-1))
        at += wt.size
        entries.append(e)
        taps.append((first, count))
    return (
        np.concatenate(parts).astype(np.uint32),
        tuple(heads),
        tuple(weights),
        tuple(entries),
        tuple(taps),
    )


def _spans(first: np.ndarray, count: np.ndarray, tile: int) -> int:
    """Largest input span under ``tile`` consecutive outputs of an axis (firsts grow with o)."""
    n = first.size
    starts = np.arange(0, n, tile)
    ends = np.minimum(starts + tile, n) - 1
    return int(np.max(first[ends] + count[ends] - first[starts]))


def _choose_tile(taps, pw: int) -> tuple[int, int, int] | None:
    """(tile width, tile height, staged elements) of aa_tile, or None when no tile fits."""
    (fh, ch), (fw, cw) = taps[2], taps[3]
    oh, ow = fh.size, fw.size
    best = None
    for tw in _TILE_W:
        if tw % pw or (tw > ow and tw // 2 >= max(ow, pw)):
            continue  # a tile wider than the row only wastes threads
        cols = _spans(fw, cw, tw)
        for th in _TILE_H:
            if th > oh and th // 2 >= oh:
                continue
            rows = _spans(fh, ch, th)
            if rows * cols > _SRC_N or rows * tw > _MID_N:
                continue
            area = min(tw, ow) * min(th, oh)
            score = (rows * cols / area, -area)
            if best is None or score < best[0]:
                best = (score, tw, th, rows * cols)
    return None if best is None else best[1:]


def _walk_window(first: np.ndarray, count: np.ndarray) -> int | None:
    """aa_rows' accumulators along H: the most output rows whose taps share one input row, or None
    when the first or last pixels of the taps do not grow with the output row (the walk needs both)."""
    last = first + count - 1
    if np.any(np.diff(first) < 0) or np.any(np.diff(last) < 0):
        return None
    rows = np.arange(int(first[0]), int(last[-1]) + 1)
    # rows covering r: those with first <= r, less those with last < r (both sorted)
    live = np.searchsorted(first, rows, side="right") - np.searchsorted(last, rows, side="left")
    return int(live.max())


def _rows_rules(desc, pd, taps, out_res: int) -> tuple[str | None, int]:
    """(why aa_rows cannot run or None, its accumulator count KA)."""
    if (why := _outer_rule(taps, "aa_rows")) is not None:
        return why, 0
    if int(taps[3][1].max()) > _TW_CAP:
        return f"more than {_TW_CAP} taps along w (aa_rows holds them in registers)", 0
    ka = _walk_window(*taps[2])
    if ka is None:
        return "the h taps' first or last pixels do not grow with the output row", 0
    if ka > _KA_CAP:
        return f"{ka} output rows share an input row (aa_rows accumulates at most {_KA_CAP})", 0
    return _word_rows_rule(desc, pd, out_res), ka


def _outer_rule(taps, path: str) -> str | None:
    """Why ``path`` (aa_taps, aa_rows, aa_tile: they filter h and w only) cannot run where the n or c
    axis is filtered, or None."""
    if any(int(c.max()) != 1 for _, c in taps[:2]):
        return f"the n or c axis is filtered ({path} filters h and w only)"
    return None


def _word_rows_rule(desc, pd, out_res: int) -> str | None:
    """Why 8/16-bit outputs cannot be stored as whole words by a thread owning a row's word
    (aa_taps, aa_rows, aa_tile), or None."""
    esize = desc.input.data_type.size_in_bytes
    pw = 4 // esize
    if esize < 4 and (
        pd["out_strides"][3] != 1 or any(s % pw for s in pd["out_strides"][:3]) or (out_res // esize) % pw
    ):
        return (
            f"{desc.input.data_type.name} output rows are not whole 32-bit words "
            "(w stride 1, other strides and offset in words)"
        )
    return None


def _taps_rule(desc, pd, taps, out_res: int) -> str | None:
    """Why aa_taps cannot run, or None (8/16-bit rows that are not whole words take its GW form)."""
    if int(taps[3][1].max()) > _TAP_CAP:
        return f"{int(taps[3][1].max())} taps along w (aa_taps holds at most {_TAP_CAP} in registers)"
    return _any_rows_rule(desc, pd)


def _any_rows_rule(desc, pd) -> str | None:
    """Why 8/16-bit outputs cannot be stored a word at a time at any row offset (the GW forms: whole
    words plainly, a row's shared end words with atomics), or None: the rows must run along w stride 1."""
    if desc.input.data_type.size_in_bytes < 4 and pd["out_strides"][3] != 1 and pd["out_sizes"][3] > 1:
        return f"{desc.input.data_type.name} output rows do not run along w stride 1"
    return None


def _taps_band(rows: int) -> int:
    """aa_taps' output rows a thread (RB) for ``rows`` (output rows x column groups, all planes)."""
    return next((b for b in _TAPS_BANDS if rows // b >= _TAPS_THREADS), 1)


def _slot_pattern(first, count, weights, n_in: int, v: int, step_: int, align: int):
    """One axis's tap pattern for aa_pat: outputs taken ``v`` at a time (group q = o // v, j = o % v),
    group q's window starting at input element q * step_ + base (base a multiple of ``align``), output
    j's taps in slots d[j] .. d[j] + k - 1 of it. Returns (base, d, k, slot weights (outputs rounded
    up to v, k), safe): the slot weights are the reference's (zero in a slot it has no tap in; its
    taps always lie inside the slots, by construction: d and k are the smallest that hold every
    output's), ``safe`` whether no slot on a real input element weighs 0 (see the shader's SAFE)."""
    n = first.size
    o = np.arange(n)
    q, j = o // v, o % v
    rel = first.astype(np.int64) - q * step_
    base = (int(rel.min()) // align) * align
    last = rel + count.astype(np.int64) - 1
    d = np.zeros(v, dtype=np.int64)
    end = np.zeros(v, dtype=np.int64)
    for jj in range(min(v, n)):
        d[jj] = int(rel[jj::v].min()) - base
        end[jj] = int(last[jj::v].max()) - base
    k = int((end - d + 1)[: min(v, n)].max())
    start = q * step_ + base + d[j]  # each output's first slot (an input element)
    groups = -(-n // v)
    slots = np.zeros((groups * v, k), dtype=np.float32)
    off = first.astype(np.int64) - start
    for i in range(int(count.max())):
        m = i < count
        slots[o[m], off[m] + i] = weights[m, i]
    pix = start[:, None] + np.arange(k)[None, :]
    safe = not bool(np.any((pix >= 0) & (pix < n_in) & (slots[:n] == 0)))
    return base, tuple(int(x) for x in d), k, slots, safe


@functools.lru_cache(maxsize=64)
def _pat_shape(desc, pv: int, rb: int, vec: bool):
    """aa_pat's structure for ``desc`` with ``pv`` output columns and ``rb`` output rows a thread,
    windows of 16-byte vectors (``vec``) or of words, or the reason it has none: a dict of the
    shader's overrides (PV, NWD, VW, KW, DW_A, DW_B, RB, KH, DH_A, NR, SAFE), the uniforms'
    values (steps, first window word and band row, row words, last word's mask) and the slot weights
    (W then H, as the shader reads them)."""
    pd = _padded(desc)
    esize = desc.input.data_type.size_in_bytes
    epw = 4 // esize
    align = 16 // esize if vec else epw
    (fh, ch, wh), (fw, cw, ww) = _axis_taps(desc)[2:]
    hin, win = pd["in_sizes"][2], pd["in_sizes"][3]
    step_w = round(pv / float(pd["scales"][3]))
    step_h = round(rb / float(pd["scales"][2]))
    unit = "16-byte vectors" if vec else "words"
    if step_w % align or step_w <= 0 or step_h <= 0:
        return f"{pv} output columns do not step by whole input {unit} ({pv} / scale = {pv / float(pd['scales'][3]):g})"
    bw, dw, kw, sw, safe_w = _slot_pattern(fw, cw, ww, win, pv, step_w, align)
    bh, dh, kh, sh, safe_h = _slot_pattern(fh, ch, wh, hin, rb, step_h, 1)
    elems = max(dw) + kw
    if kw > _PAT_TAPS or kh > _PAT_TAPS:
        return f"{kw} taps along w and {kh} along h in the pattern (aa_pat: at most {_PAT_TAPS})"
    nwd = -(-elems // align) * align // epw
    if nwd > _PAT_WINDOW:
        return f"a window of {nwd} {unit[:-1] if vec else 'word'}s (aa_pat: at most {_PAT_WINDOW} words)"
    if max(dw) > 255:
        return f"a first tap {max(dw)} elements into the window (aa_pat: at most 255)"
    if max(dh) > 255:
        return f"a first tap {max(dh)} rows into the band (aa_pat: at most 255)"

    def pack(d, lo):
        return sum(x << (8 * i) for i, x in enumerate(d[lo : lo + 4]))

    groups = sw.shape[0] // pv
    tail = win % epw
    return {
        "constants": {
            "PV": pv,
            "NWD": nwd,
            "VW": int(vec),
            "KW": kw,
            "DW_A": pack(dw, 0),
            "DW_B": pack(dw, 4),
            "RB": rb,
            "KH": kh,
            "DH_A": pack(dh, 0),
            "NR": max(dh) + kh,
            "SAFE": int(safe_w and safe_h),
            "CW": 4,
        },  # fmt: skip
        "steps": (step_w // epw, bw // epw, step_h, bh),
        "row_words": -(-win // epw),
        "last_mask": 0xFFFFFFFF if tail == 0 else (1 << (tail * 32 // epw)) - 1,
        "groups": groups,
        "slot_rows": sh.shape[0],
        "w_words": np.ascontiguousarray(sw.reshape(groups, pv, kw).transpose(1, 2, 0)).view(np.uint32).reshape(-1),
        "h_words": np.ascontiguousarray(sh.T).view(np.uint32).reshape(-1),
    }


def _rows_on(strides, sizes, res: int, esize: int, align: int) -> bool:
    """Whether every row of a padded tensor (strides and sizes n, c, h, w; ``res`` its residual byte
    offset) starts on an ``align``-byte boundary and runs along W stride 1 (dimensions of size 1
    exempt)."""
    return (
        (strides[3] == 1 or sizes[3] == 1)
        and res % align == 0
        and all(strides[d] * esize % align == 0 for d in range(3) if sizes[d] > 1)
    )


def _pat_rule(desc, pd, taps, placements) -> str | None:
    """Why aa_pat cannot run whatever its pattern, or None."""
    if (why := _outer_rule(taps, "aa_pat")) is not None:
        return why
    if not (placement_of(placements, "input").padded and placement_of(placements, "output").padded):
        return "the input's or output's buffer is not a multiple of 16 bytes (aa_pat binds both as vectors)"
    esize = desc.input.data_type.size_in_bytes
    if esize < 4 and pd["in_strides"][3] != 1 and pd["in_sizes"][3] > 1:
        return f"{desc.input.data_type.name} input rows do not run along w stride 1"
    return _any_rows_rule(desc, pd)


def _pat_any(desc, pd, placements) -> tuple[int, int]:
    """aa_pat's (IA, OA): 1 where 8/16-bit input or output rows do not all start on a word boundary
    (read across words; stored shifted, shared words merged with atomics)."""
    esize = desc.input.data_type.size_in_bytes
    if esize == 4:
        return 0, 0
    in_res = placement_of(placements, "input").residual
    out_res = placement_of(placements, "output").residual
    ia = not _rows_on(pd["in_strides"], pd["in_sizes"], in_res, esize, 4)
    return int(ia), int(_word_rows_rule(desc, pd, out_res) is not None)


def _vector_rows(desc, pd, in_res: int) -> bool:
    """Whether the input's rows are whole 16-byte vectors from a vector boundary (W stride 1)."""
    esize = desc.input.data_type.size_in_bytes
    return (pd["in_sizes"][3] * esize) % 16 == 0 and _rows_on(pd["in_strides"], pd["in_sizes"], in_res, esize, 16)


def _vector_stores(desc, pd, out_res: int, pv: int) -> bool:
    """Whether aa_pat can store a thread's ``pv`` outputs of a row as vectors (see the shader's SV)."""
    esize = desc.input.data_type.size_in_bytes
    return _rows_on(pd["out_strides"], pd["out_sizes"], out_res, esize, min(16, pv * esize))


def _pat_choice(desc, pd, in_res: int, requested: bool, cpu: bool) -> tuple[dict | None, str]:
    """aa_pat's (structure, note) with the first of _PAT_OUTPUTS that has a pattern (windows of 16-byte
    vectors where the rows allow, else of words) and the most rows a band of _PAT_BANDS that leave
    _PAT_THREADS threads (else the fewest rows with a pattern); or (None, why not). ``requested`` or
    ``cpu`` (a CPU adapter): every form (4 or 8 columns, vectors or words) for every type; ``cpu``:
    the tallest band (a few threads run at a time: longer bands only add reuse)."""
    requested = requested or cpu
    n, c, oh, ow = pd["out_sizes"]
    why = "no pattern"
    esize = desc.input.data_type.size_in_bytes
    forms = (True, False) if _vector_rows(desc, pd, in_res) else (False,)
    outputs = _PAT_OUTPUTS[esize]
    if requested:
        outputs = _PAT_ANY
    elif esize == 4 and not forms[0]:
        forms = ()
        why = "float32 rows that are not whole 16-byte vectors from a vector boundary (float32 takes only those)"
    elif esize == 4:
        forms = forms[:1]
    for vec, pv in ((v, p) for v in forms for p in outputs):
        found = None
        for rb in _PAT_BANDS + ((_PAT_BAND_LAST,) if requested else ()):
            if rb == _PAT_BAND_LAST and found is not None:
                break
            shape = _pat_shape(desc, pv, rb, vec)
            slots = 0 if isinstance(shape, str) else shape["constants"]["KW"]
            if not requested and esize == 4 and slots > _PAT_F32_SLOTS:
                shape = f"{slots} w slots an output (float32 takes at most {_PAT_F32_SLOTS})"
            if isinstance(shape, str):
                why = shape
                continue
            found = shape
            if cpu or n * c * -(-oh // rb) * shape["groups"] >= _PAT_THREADS:
                break
        if found is not None:
            unit = "16-byte vectors" if vec else "words"
            return found, f"{pv} output columns x {found['constants']['RB']} output rows a thread, windows of {unit}"
    return None, why


def _rows_grid(pd, cw: int) -> tuple[int, int, int, int]:
    """aa_rows' (column groups per row, bands per plane, rows per band, threads)."""
    n, c, oh, ow = pd["out_sizes"]
    groups = -(-ow // cw)
    fits = [b for b in _BANDS if n * c * groups * -(-oh // b) >= _ROWS_THREADS]
    band = fits[0] if fits else _ROWS_SMALL_BAND
    return groups, -(-oh // band), band, n * c * groups * -(-oh // band)


def plan_resample_antialias(
    desc, caps: Capabilities, *, kernel: str | None = None, placements: Mapping | None = None
) -> Plan:
    """The plan of a validated antialiased-linear :class:`~dmlwgsl.ops.resample.Resample3Desc`
    on an adapter with capabilities ``caps`` (see the module docstring for the paths)."""
    if kernel is not None and kernel not in KERNELS:
        raise PlanError(f"kernel: no path {kernel!r} for resample_antialias (choose from {', '.join(KERNELS)})")
    pd = _padded(desc)
    dt = desc.input.data_type
    esize = dt.size_in_bytes
    pw = 4 // esize
    words, heads, wofs, entries, taps = antialias_tables(desc)
    in_res = placement_of(placements, "input").residual
    out_res = placement_of(placements, "output").residual
    count = desc.output.element_count
    depends = 1
    for first, cnt in taps:
        used = np.zeros(int(max(first + cnt)), dtype=bool)
        for f, c in zip(first.tolist(), cnt.tolist()):
            used[f : f + c] = True
        depends *= int(used.sum())
    bytes_moved = depends * esize + count * esize
    uniforms = {
        "out_sizes": pd["out_sizes"],
        "out_strides": pd["out_strides"],
        "in_strides": pd["in_strides"],
        "head": heads,
        "weight": wofs,
        "entries": entries,
        "count": count,
        "input_base": in_res // esize,
        "output_base": out_res // esize,
        "div_w": div_magic(pd["out_sizes"][3]),
        "div_h": div_magic(pd["out_sizes"][2]),
        "div_c": div_magic(pd["out_sizes"][1]),
        "div_groups": div_magic(1),
        "div_bands": div_magic(1),
        "pat_w": (0, 0, 0, 0),
        "pat_h": (0, 0, 0, 0),
        "pat_last": 0,
        "pat_rows": 0,
        "ew_order": (3, 2, 1, 0),
        "ew_merged": 0,
        "ew_len": 0,
    }
    words_row = _words_row(pd, esize)
    # 8/16-bit elements: aa_element_words on CPU adapters (lavapipe 0.96-1.04x aa_element_atomic), the
    # atomic form on GPUs (H200, session 39, ten random antialias rows: aa_element_words 1.1-2.7x
    # slower, e.g. int8 [211843, 386] x3/4 960 against 824 us; a thread's four sums one after another
    # cost more than the atomics it saves)
    ew = words_row is not None and caps.is_cpu
    element = "aa_element" if esize == 4 else "aa_element_words" if ew else "aa_element_atomic"
    # aa_tile's rules, each with the reason it declines
    why_not = _outer_rule(taps, "aa_tile")
    if why_not is None and caps.limit("max-compute-workgroup-storage-size") < _TILE_BYTES:
        why_not = f"the adapter offers less than {_TILE_BYTES} bytes of workgroup memory"
    if why_not is None:
        why_not = _word_rows_rule(desc, pd, out_res)
    tile = None
    if why_not is None:
        tile = _choose_tile(taps, pw)
        if tile is None:
            why_not = f"no tile's input region fits {_SRC_N} elements of workgroup memory (too many taps)"
    if kernel == "aa_tile" and why_not is not None:
        raise PlanError(f"kernel: aa_tile cannot run this description: {why_not}")
    if kernel == "aa_element_atomic" and esize == 4:
        raise PlanError("kernel: aa_element_atomic is for 8- and 16-bit elements; this is FLOAT32")
    if kernel == "aa_element" and esize < 4:
        raise PlanError(f"kernel: aa_element writes whole 32-bit words; {dt.name} needs aa_element_atomic")
    if kernel == "aa_element_words" and (esize == 4 or words_row is None):
        raise PlanError(
            "kernel: aa_element_words is for 8- and 16-bit elements with an output axis of stride 1; "
            + (f"this is {dt.name}" if esize == 4 else "this output has none")
        )
    rows_not, ka = _rows_rules(desc, pd, taps, out_res)
    if kernel == "aa_rows" and rows_not is not None:
        raise PlanError(f"kernel: aa_rows cannot run this description: {rows_not}")
    constants = {"DTYPE": _DTYPE_CLASS[dt]}
    bindings = {"input": "input", "table": "table"}
    taps_note = f"taps per output: h {int(taps[2][1].max())}, w {int(taps[3][1].max())}"
    uniforms.update(dict.fromkeys(_WALK, 0))
    taps_not = _taps_rule(desc, pd, taps, out_res)
    if kernel == "aa_taps" and taps_not is not None:
        raise PlanError(f"kernel: aa_taps cannot run this description: {taps_not}")
    # aa_pat where the scales give a tap pattern (every adapter; a CPU adapter in every form)
    pat_not = _pat_rule(desc, pd, taps, placements)
    ia, oa = _pat_any(desc, pd, placements)
    if pat_not is None and kernel is None and not caps.is_cpu and (ia or oa):
        # GPUs: aa_taps' GW form is measured there (H200, session 38: 1.9-2.7x aa_element_atomic on
        # such rows); aa_pat's IA / OA forms only on CPU adapters so far (on request on GPUs)
        pat_not = (
            f"{dt.name} rows that are not whole words from a word boundary: aa_pat's forms for them (IA, OA) "
            "run by default on CPU adapters only (not yet measured on a GPU; on request)"
        )
    pat = None
    if pat_not is None and kernel in (None, "aa_pat"):
        pat, pat_note = _pat_choice(desc, pd, in_res, kernel == "aa_pat", caps.is_cpu)
        if pat is None:
            pat_not = pat_note
    if kernel == "aa_pat" and pat_not is not None:
        raise PlanError(f"kernel: aa_pat cannot run this description: {pat_not}")
    chosen = kernel or ("aa_pat" if pat is not None else "aa_taps" if taps_not is None else element)
    # A CPU adapter pays for every atomic: 8/16-bit outputs take aa_rows where it runs (lavapipe,
    # float16 and uint8 at scales 1/2 and 1/4: 1.3-2.3x faster than aa_element_atomic).
    cpu_rows = kernel is None and caps.is_cpu and esize < 4 and rows_not is None and pat is None
    if cpu_rows:
        chosen = "aa_rows"
    details = ()
    if chosen == "aa_pat":
        n, c, oh, ow = pd["out_sizes"]
        k = pat["constants"]
        rb, groups = k["RB"], pat["groups"]
        bands = -(-oh // rb)
        threads = n * c * bands * groups
        at = -(-words.size // 4) * 4  # the slot weights follow the tap table
        sw, bw, sh, bh = pat["steps"]
        uniforms.update(dict.fromkeys(_TILE, 0))
        uniforms.update(
            zip(_WALK, (groups, bands, rb, threads)),
            div_groups=div_magic(groups),
            div_bands=div_magic(bands),
            pat_w=(at, sw, bw & 0xFFFFFFFF, pat["row_words"]),
            pat_h=(at + pat["w_words"].size, sh, bh & 0xFFFFFFFF, pat["slot_rows"]),
            pat_last=pat["last_mask"],
            pat_rows=pd["in_sizes"][2],
        )
        s = step(
            "aa_pat",
            PAT_SHADER,
            f"{pat_note}: along w a window of {k['NWD']} input words a row, {k['KW']} tap slots an output; "
            f"along h {k['NR']} input rows a band, each filtered along w once, {k['KH']} tap slots an output row"
            + ("" if k["SAFE"] or dt in (DataType.INT8, DataType.UINT8) else "; float taps of weight 0 selected out")
            + f"; {taps_note}",
            threads,
            constants=dict(
                constants,
                **k,
                SV=int(k["PV"] in (4, 8) and _vector_stores(desc, pd, out_res, k["PV"])),
                IA=ia,
                OA=int(oa or (k["PV"] * esize) % 4 != 0),
            ),
            uniforms=uniforms,
            bindings=dict(
                bindings, input=("input", "input4"), output=("output", "output2", "output4", "output_atomic")
            ),
            uniform_var="p",
        )
        details = (("pattern", (k["PV"], rb, bool(k["VW"]))),)
        why = "aa_pat: " + (
            "requested"
            if kernel
            else "n and c are not filtered and the w and h scales give one tap pattern: each input word a thread "
            "loads is converted once and feeds every tap on it, each input row filtered along w once a band"
        )
    elif chosen == "aa_taps":
        n, c, oh, ow = pd["out_sizes"]
        cw = pw  # one output word a thread (two or four float32 columns ran up to 3.3x slower)
        # GW: rows that are not whole words; a row then touches up to ceil((ow + cw - 1) / cw) words
        gw = int(_word_rows_rule(desc, pd, out_res) is not None)
        nc = int(_outer_rule(taps, "aa_taps") is not None)
        groups = -(-(ow + gw * (cw - 1)) // cw)
        rb = _taps_band(n * c * oh * groups)
        bands = -(-oh // rb)
        threads = n * c * bands * groups
        uniforms.update(dict.fromkeys(_TILE, 0))
        uniforms.update(
            zip(_WALK, (groups, bands, rb, threads)), div_groups=div_magic(groups), div_bands=div_magic(bands)
        )
        th, tw = int(taps[2][1].max()), int(taps[3][1].max())
        s = step(
            "aa_taps",
            SHADER,
            (
                f"a thread owns one output word of each of {rb} output row(s) (the most of {_TAPS_BANDS} that "
                f"leave {_TAPS_THREADS} threads), a row's words it fills stored, its shared end words merged "
                "with atomics (rows not whole words)"
                if gw
                else f"a thread owns {cw} output column(s) of {rb} output row(s) (the most of {_TAPS_BANDS} that "
                f"leave {_TAPS_THREADS} threads)"
            )
            + " and sums their taps in written-out code, "
            + ("every load independent" if th <= _TH_CAP else f"row by row ({th} rows: more than {_TH_CAP})")
            + ("; the n and c taps summed around each row" if nc else "")
            + f"; {taps_note}",
            threads,
            constants=dict(
                constants, CW=cw, TH=th if th <= _TH_CAP else 0, TW=4 if tw <= 4 else 8, RB=rb, GW=gw, NC=nc
            ),
            uniforms=uniforms,
            bindings=dict(
                bindings,
                output=("output", "output_atomic"),  # (the GW branch names output_atomic in every form)
                table=("table", "table2", "table4"),
            ),
            uniform_var="p",
        )
        why = "aa_taps: " + (
            "requested"
            if kernel
            else f"at most {_TAP_CAP} taps along w: every tap's load is independent (written-out code)"
            + f"; aa_pat could not run here: {pat_not}"
        )
    elif chosen == "aa_rows":
        cw = max(_ROWS_COLS, pw)
        groups, bands, band, threads = _rows_grid(pd, cw)
        uniforms.update(dict.fromkeys(_TILE, 0))
        uniforms.update(zip(_WALK, (groups, bands, band, threads)))
        s = step(
            "aa_rows",
            SHADER,
            f"a thread owns {cw} output column(s) and walks bands of {band} output rows, filtering each input "
            f"row along w once for up to {ka} output rows; {taps_note}",
            threads,
            constants=dict(constants, CW=cw, KA=ka),
            uniforms=uniforms,
            bindings=dict(bindings, output="output"),
            uniform_var="p",
        )
        why = (
            "aa_rows: on a CPU adapter, where aa_element_atomic's atomics cost more than aa_rows' walk; "
            f"aa_pat could not run here: {pat_not}"
            if cpu_rows
            else "aa_rows: requested"
        )
    elif kernel == "aa_tile":
        tw, th, staged = tile
        oh, ow = pd["out_sizes"][2], pd["out_sizes"][3]
        per_row, per_plane = -(-ow // tw), -(-oh // th)
        groups = pd["out_sizes"][0] * pd["out_sizes"][1] * per_row * per_plane
        uniforms.update(zip(_TILE, (tw, th, per_row, per_row * per_plane, groups, pd["out_sizes"][1])))
        s = step(
            "aa_tile",
            SHADER,
            f"tiles of {th}x{tw} outputs stage at most {staged} input elements in workgroup memory; {taps_note}",
            groups * _WG,
            workgroup_size=_WG,
            constants=constants,
            uniforms=uniforms,
            bindings=dict(bindings, output="output"),
            uniform_var="p",
        )
        why = "aa_tile: requested; each input element is read once per tile, filtered along w, then h"
    elif chosen == "aa_element_words":
        order, merged, size = words_row
        rows = count // size
        aligned = (out_res // esize) % pw == 0 and all(
            pd["out_strides"][a] % pw == 0 for a in order[merged:] if pd["out_sizes"][a] > 1
        )
        groups = -(-(size + (0 if aligned else pw - 1)) // pw)
        threads = rows * groups
        uniforms.update(dict.fromkeys(_TILE, 0))
        uniforms.update(zip(_WALK, (groups, 0, 0, threads)), div_groups=div_magic(groups))
        uniforms.update(ew_order=order, ew_merged=merged, ew_len=size)
        axes = ", ".join(str(a - (4 - desc.output.rank)) for a in order[:merged])
        s = step(
            "aa_element_words",
            SHADER,
            f"one thread per output word of {rows} row(s) of {size} contiguous elements (output axes {axes}): "
            f"it sums each of its elements' taps, stores the words a row fills and merges a row's shared end "
            f"words with atomics; {taps_note}",
            threads,
            constants=constants,
            uniforms=uniforms,
            bindings=dict(bindings, output=("output", "output_atomic")),
            uniform_var="p",
        )
        why = "aa_element_words: " + (
            "requested"
            if kernel
            else "aa_taps cannot run here: "
            + str(taps_not)
            + ("" if pat_not is None else f"; aa_pat could not run here: {pat_not}")
        )
    else:
        uniforms.update(dict.fromkeys(_TILE, 0))
        name = chosen
        s = step(
            name,
            SHADER,
            f"one thread per output sums its taps; {taps_note}",
            count,
            constants=constants,
            uniforms=uniforms,
            bindings=dict(bindings, output="output_atomic" if name == "aa_element_atomic" else "output"),
            uniform_var="p",
        )
        why = f"{name}: " + (
            "requested"
            if kernel
            else "aa_taps cannot run here: "
            + str(taps_not)
            + ("" if pat_not is None else f"; aa_pat could not run here: {pat_not}")
            + ("" if why_not is None else f"; aa_tile could not run here either: {why_not}")
            + ("" if rows_not is None else f"; aa_rows could not run here either: {rows_not}")
        )
    return Plan(
        "resample_antialias",
        (s,),
        why,
        bytes_moved,
        caps.name,
        host_tables=(("taps", int(words.nbytes) + _pat_bytes(pat)),),
        details=(("taps_per_axis", tuple(int(c.max()) for _, c in taps)), *details),
    )


def _words_row(pd, esize: int) -> tuple[tuple, int, int] | None:
    """aa_element_words' rows for 8/16-bit elements: (padded output axes, the stride-1 axis first,
    then by stride; how many of them lie contiguous in memory, each axis's stride the product of the
    sizes before it; the row's elements), or None (float32, or no output axis of stride 1 and size > 1
    while some size is > 1)."""
    if esize == 4:
        return None
    sizes, strides = pd["out_sizes"], pd["out_strides"]
    ones = [d for d in range(4) if strides[d] == 1 and sizes[d] > 1]
    if not ones and any(s > 1 for s in sizes):
        return None
    first = ones[-1] if ones else 3
    rest = sorted((d for d in range(4) if d != first), key=lambda d: (sizes[d] == 1, strides[d], -d))
    order = (first, *rest)
    merged, size = 1, sizes[first]
    while merged < 4 and sizes[order[merged]] > 1 and strides[order[merged]] == size:
        size *= sizes[order[merged]]
        merged += 1
    return order, merged, size


def _pat_bytes(pat) -> int:
    """Bytes aa_pat's slot weights add to the table (0 without aa_pat)."""
    return 0 if pat is None else 4 * (-pat["w_words"].size % 4 + pat["w_words"].size + pat["h_words"].size)


def _pat_table(desc, words: np.ndarray, pattern) -> np.ndarray:
    """The table with aa_pat's slot weights for ``pattern`` = (PV, RB, vectors) after it, from a whole vec4."""
    pat = _pat_shape(desc, *pattern)
    return np.concatenate([words, np.zeros(-words.size % 4, np.uint32), pat["w_words"], pat["h_words"]])


class ResampleAntialiasOperator(Operator):
    """A compiled antialiased-linear Resample3: call it with (input, output) GPU tensors."""

    op = "resample_antialias"

    def make_plan(self, placements):
        """The plan for this description and device (see :func:`plan_resample_antialias`)."""
        return plan_resample_antialias(self.desc, self.capabilities, kernel=self.kernel_request, placements=placements)

    def host_tensors(self, plan: Plan) -> Mapping[str, GpuTensor]:
        """The tap table, uploaded once per operator."""
        pattern = dict(plan.details).get("pattern")
        tables = self.__dict__.setdefault("_tables", {})  # by aa_pat's (PV, RB, vectors), or None
        table = tables.get(pattern)
        if table is None:
            words = antialias_tables(self.desc)[0]
            if pattern is not None:
                words = _pat_table(self.desc, words, pattern)
            table = tables[pattern] = self.device.upload(words, label="resample_antialias.taps")
        return {"table": table}

    def tensor_desc(self, name: str) -> TensorDesc | None:
        """The compiled description of ``input`` or ``output``."""
        return getattr(self.desc, name)


def compile_resample3(desc, *, device=None, kernel: str | None = None, capabilities=None):
    """Validate a :class:`~dmlwgsl.ops.resample.Resample3Desc` and build its operator: the
    antialiasing filter where it applies, else Resample2's operator (``kernel`` names a path of the
    one chosen).
    ``capabilities`` replaces the device's record for planning (tighter only)."""
    from ..runtime import default_device
    from .resample import compile_resample

    desc.validate()
    if desc.filters:
        return ResampleAntialiasOperator(device or default_device(), desc, kernel=kernel, capabilities=capabilities)
    if kernel is not None and kernel.startswith("aa_"):
        raise PlanError(f"kernel: {kernel!r} is an antialiasing path; this description does not filter")
    return compile_resample(desc.as_resample2(), device=device, kernel=kernel, capabilities=capabilities)

"""Resample / Resample1 / Resample2 in numpy, straight from spec section 4.

Every dimension is mapped on its own (batch and channel too):
    x = (OutputX - OutputPixelOffset) / Scale - InputPixelOffset          (float32, spec 4.2)
Nearest picks one index per axis (``rule``: "half_up" = floor(x + 0.5) for Resample/Resample1,
"floor" = Resample2 DECREASING, "ceil" = Resample2 INCREASING), clamped to [0, size-1].
Linear takes x0 = floor(x), x1 = x0 + 1, both clamped, weight x - x0 (spec 4.4), and sums the
separable product of the weights over the axes that are interpolated, in float32.

The host side of the operator builds its per-axis tables with :func:`nearest_indices` and
:func:`linear_taps`, so the GPU's indices are these, bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["input_coordinates", "nearest_indices", "linear_taps", "resample"]

NEAREST_RULES = ("half_up", "floor", "ceil")


def input_coordinates(
    out_size: int, scale: float, input_pixel_offset: float, output_pixel_offset: float, start: int = 0
) -> np.ndarray:
    """Map output indices to source coordinates: (xo - OutputPixelOffset) / Scale - InputPixelOffset
    in float32, division (not multiplication by 1/Scale), as ORT's CPU kernel does (spec 4.3).
    ``start``: the coordinates of outputs start .. start + out_size - 1 (a part of a long axis);
    each index is rounded to float32 to nearest even, as arange in float32 gives it."""
    xo = np.arange(start, start + out_size).astype(np.float32) if start else np.arange(out_size, dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        return (xo - np.float32(output_pixel_offset)) / np.float32(scale) - np.float32(input_pixel_offset)


def _clip_coordinates(x: np.ndarray, in_size: int) -> np.ndarray:
    """Bring huge or infinite coordinates into [-2, in_size + 1]; every index they give is clamped
    to the same edge either way, so this only keeps the integer conversions defined."""
    return np.clip(x, np.float32(-2), np.float32(in_size + 1))


def nearest_indices(x: np.ndarray, in_size: int, rule: str) -> np.ndarray:
    """Nearest-neighbour source index per coordinate, clamped to [0, in_size - 1].

    "half_up": floor(x + 0.5) (x + 0.5 in float32) — Resample and Resample1;
    "floor": floor(x) — Resample2 DECREASING; "ceil": ceil(x) — Resample2 INCREASING.
    """
    x = _clip_coordinates(np.asarray(x, dtype=np.float32), in_size)
    if rule == "half_up":
        i = np.floor(x + np.float32(0.5))
    elif rule == "floor":
        i = np.floor(x)
    elif rule == "ceil":
        i = np.ceil(x)
    else:
        raise ValueError(f"rule: {rule!r} is not one of {NEAREST_RULES}")
    return np.clip(i.astype(np.int64), 0, in_size - 1)


def linear_taps(x: np.ndarray, in_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(i0, i1, w0, w1) per coordinate: i0 = clamp(floor(x)), i1 = clamp(floor(x) + 1),
    w1 = x - floor(x) and w0 = 1 - w1 in float32. Where both taps clamp to the same pixel the
    weights become (1, 0): the same value in exact arithmetic, and exact in float32."""
    x = _clip_coordinates(np.asarray(x, dtype=np.float32), in_size)
    f = np.floor(x)
    w1 = (x - f).astype(np.float32)
    fi = f.astype(np.int64)
    i0 = np.clip(fi, 0, in_size - 1)
    i1 = np.clip(fi + 1, 0, in_size - 1)
    w1 = np.where(i0 == i1, np.float32(0), w1).astype(np.float32)
    w0 = (np.float32(1) - w1).astype(np.float32)
    return i0, i1, w0, w1


def _store(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float32 results to the tensor's type: float16 rounds to nearest even; int8/uint8 round half
    to even and saturate."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return values.astype(dtype)
    info = np.iinfo(dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(dtype)


def resample(
    x: np.ndarray, output_sizes, mode: str, scales, input_pixel_offsets, output_pixel_offsets, rule: str = "half_up"
) -> np.ndarray:
    """Resample ``x`` (float32/float16/int8/uint8, rank 1-4) to ``output_sizes``.

    ``mode`` is "nearest" or "linear"; ``rule`` is the nearest rounding ("half_up", "floor", "ceil").
    Linear sums, over the combinations of taps of the interpolated outer axes (axis 0 first, tap 0
    first), wc * v with wc the float32 product of the outer weights (axis 0 first) and
    v = w0 * a + w1 * b along the last axis (v = a if the last axis is not interpolated).
    An axis is interpolated when any of its weights w1 is non-zero.
    """
    x = np.asarray(x)
    r = x.ndim
    out = tuple(int(s) for s in output_sizes)
    coords = [input_coordinates(out[d], scales[d], input_pixel_offsets[d], output_pixel_offsets[d]) for d in range(r)]
    if mode == "nearest":
        idx = [nearest_indices(coords[d], x.shape[d], rule) for d in range(r)]
        return x[np.ix_(*idx)]
    if mode != "linear":
        raise ValueError(f"mode: {mode!r} is not 'nearest' or 'linear'")
    taps = [linear_taps(coords[d], x.shape[d]) for d in range(r)]
    xf = x.astype(np.float32)
    interp = [bool(np.any(t[3] != 0)) for t in taps]
    acc = np.zeros(out, dtype=np.float32)
    outer = [(0, 1) if interp[d] else (0,) for d in range(r - 1)]
    i0x, i1x, w0x, w1x = taps[r - 1]
    bshape = (1,) * (r - 1) + (out[r - 1],)
    for combo in itertools.product(*outer):
        idx, wc = [], np.ones((1,) * r, dtype=np.float32)
        for d, k in enumerate(combo):
            shape = [1] * r
            shape[d] = out[d]
            idx.append(taps[d][k])
            wc = (wc * taps[d][2 + k].reshape(shape)).astype(np.float32)
        a = xf[np.ix_(*idx, i0x)]
        if interp[r - 1]:
            b = xf[np.ix_(*idx, i1x)]
            v = w0x.reshape(bshape) * a + w1x.reshape(bshape) * b
        else:
            v = a
        acc = (acc + wc * v).astype(np.float32)
    return _store(acc, x.dtype)


# ------------------------------------------------------------------------------------------------
# Resample3 with Antialiased = TRUE (spec 4.5), after ONNX Resize-18's ``antialias`` definition
# ------------------------------------------------------------------------------------------------
def antialias_taps(x: np.ndarray, in_size: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Antialiased linear taps per source coordinate: (first, count, weights[out, T]).

    The triangle filter is stretched by max(1, 1/scale) (ONNX Resize ``antialias=1``):
    with s = min(scale, 1) in float32, source pixel i weighs max(0, 1 - |i - x| * s) (float32,
    ``i - x`` rounded once), the weights are normalised by their float32 sum (ascending i) and
    divided one by one; pixels outside [0, in_size - 1] are the edge pixel (ONNX pads with the edge),
    so their normalised weights are added to the edge's (ascending i). Zero weights at either end
    are dropped; output o reads pixels ``first[o] .. first[o] + count[o] - 1`` with
    ``weights[o, :count[o]]`` (the rest of the row is 0). A single remaining tap weighs exactly 1.
    With s == 1 (no downsampling along the axis) the taps are :func:`linear_taps`' (plain linear).
    """
    x = _clip_coordinates(np.asarray(x, dtype=np.float32), in_size)
    n = x.size
    with np.errstate(over="ignore"):
        s = np.float32(min(np.float32(scale), np.float32(1)))
    if s >= 1:
        i0, i1, w0, w1 = linear_taps(x, in_size)
        count = np.where(w1 != 0, 2, 1)
        return i0, count, np.stack([w0, w1], axis=1).astype(np.float32)
    radius = float(1 / np.float64(s))
    lo = np.floor(x.astype(np.float64) - radius).astype(np.int64) - 1
    span = int(np.ceil(2 * radius)) + 3  # every pixel of (x - radius, x + radius), and a zero or two
    idx = lo[:, None] + np.arange(span)[None, :]
    d = (idx.astype(np.float32) - x[:, None]).astype(np.float32)
    w = np.maximum(np.float32(0), np.float32(1) - (np.abs(d) * s).astype(np.float32)).astype(np.float32)
    total = np.zeros(n, dtype=np.float32)
    for j in range(span):
        total = (total + w[:, j]).astype(np.float32)
    w = (w / total[:, None]).astype(np.float32)
    clamped = np.clip(idx, 0, in_size - 1)
    first = np.empty(n, dtype=np.int64)
    count = np.empty(n, dtype=np.int64)
    rows = []
    for o in range(n):
        nz = np.nonzero(w[o])[0]
        pix = clamped[o, nz]
        a, b = int(pix.min()), int(pix.max())
        folded = np.zeros(b - a + 1, dtype=np.float32)
        for k, p in zip(nz, pix):
            folded[p - a] = np.float32(folded[p - a] + w[o, k])
        keep = np.nonzero(folded)[0]
        folded = folded[keep[0] : keep[-1] + 1]
        if folded.size == 1:
            folded[0] = np.float32(1)
        first[o], count[o] = a + keep[0], folded.size
        rows.append(folded)
    weights = np.zeros((n, int(count.max())), dtype=np.float32)
    for o, r in enumerate(rows):
        weights[o, : r.size] = r
    return first, count, weights


def resample_antialias(x: np.ndarray, output_sizes, scales, input_pixel_offsets, output_pixel_offsets) -> np.ndarray:
    """Resample3 LINEAR with Antialiased = TRUE: ``x`` (float32/float16/int8/uint8, rank 1-4) to
    ``output_sizes``, source coordinates as :func:`input_coordinates`, taps as
    :func:`antialias_taps` (scale = the axis's Scale).

    Separable, in float32: the last axis first, then each axis outwards; along an axis every
    output is ``acc = 0; acc = acc + w[j] * v[first + j]`` for ascending j (each product and sum
    rounded to float32). Stored as :func:`resample`'s linear results (float16 to nearest even;
    int8/uint8 half to even, saturated).
    """
    x = np.asarray(x)
    r = x.ndim
    out = tuple(int(s) for s in output_sizes)
    acc = x.astype(np.float32)
    for d in reversed(range(r)):
        xs = input_coordinates(out[d], scales[d], input_pixel_offsets[d], output_pixel_offsets[d])
        first, count, weights = antialias_taps(xs, x.shape[d], scales[d])
        a = np.moveaxis(acc, d, -1)
        res = np.zeros(a.shape[:-1] + (out[d],), dtype=np.float32)
        for j in range(weights.shape[1]):
            live = count > j
            src = np.where(live, first + j, 0)
            with np.errstate(invalid="ignore", over="ignore"):  # 0 * inf past a count: discarded below
                term = (weights[:, j] * a[..., src]).astype(np.float32)
                res = np.where(live, (res + term).astype(np.float32), res)
        acc = np.moveaxis(res, -1, d)
    return _store(acc, x.dtype)

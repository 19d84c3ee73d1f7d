"""SpaceToDepth / SpaceToDepth1 in numpy, straight from spec 2.3 (output {N, C*b*b, H/b, W/b})."""

from __future__ import annotations

import numpy as np

from ..tensor import TensorDesc
from .tensors import apply_strided


def space_to_depth(x: np.ndarray, block_size: int, order: str = "DCR") -> np.ndarray:
    """For every input (n, c, ih, iw) with i = ih % b, j = iw % b:
    out[n, out_c, ih // b, iw // b] = x[n, c, ih, iw], out_c = (i*b + j)*C + c for "DCR" or
    c*b*b + i*b + j for "CRD"."""
    n, c, h, w = x.shape
    b = block_size
    out = np.empty((n, c * b * b, h // b, w // b), dtype=x.dtype)
    nn, cc, ih, iw = np.meshgrid(np.arange(n), np.arange(c), np.arange(h), np.arange(w), indexing="ij")
    i, j = ih % b, iw % b
    if order == "DCR":
        out_c = (i * b + j) * c + cc
    elif order == "CRD":
        out_c = cc * b * b + i * b + j
    else:
        raise ValueError(f"order: {order!r}")
    out[nn, out_c, ih // b, iw // b] = x
    return out


def space_to_depth_buffers(
    src: np.ndarray, in_desc: TensorDesc, dst: np.ndarray, out_desc: TensorDesc, block_size: int, order: str = "DCR"
) -> np.ndarray:
    """The same on byte buffers with DML strides on both sides (see :func:`.tensors.apply_strided`)."""
    return apply_strided(lambda x: space_to_depth(x, block_size, order), src, in_desc, dst, out_desc)

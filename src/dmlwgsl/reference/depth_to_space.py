"""DepthToSpace / DepthToSpace1 in numpy, straight from spec 2.3."""

from __future__ import annotations

import numpy as np

from ..tensor import TensorDesc
from .tensors import apply_strided


def depth_to_space(x: np.ndarray, block_size: int, order: str = "DCR") -> np.ndarray:
    """out[n, c, oh, ow] = x[n, in_c, oh // b, ow // b] with i = oh % b, j = ow % b and
    in_c = (i*b + j)*C' + c for "DCR" (DEPTH_COLUMN_ROW) or c*b*b + i*b + j for "CRD"."""
    n, c, h, w = x.shape
    b = block_size
    cq = c // (b * b)
    on, oc, oh, ow = np.meshgrid(np.arange(n), np.arange(cq), np.arange(h * b), np.arange(w * b), indexing="ij")
    i, j = oh % b, ow % b
    if order == "DCR":
        in_c = (i * b + j) * cq + oc
    elif order == "CRD":
        in_c = oc * b * b + i * b + j
    else:
        raise ValueError(f"order: {order!r}")
    return x[on, in_c, oh // b, ow // b]


def depth_to_space_buffers(
    src: np.ndarray, in_desc: TensorDesc, dst: np.ndarray, out_desc: TensorDesc, block_size: int, order: str = "DCR"
) -> np.ndarray:
    """The same on byte buffers with DML strides on both sides (see :func:`.tensors.apply_strided`)."""
    return apply_strided(lambda x: depth_to_space(x, block_size, order), src, in_desc, dst, out_desc)

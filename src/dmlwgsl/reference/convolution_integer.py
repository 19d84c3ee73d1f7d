"""ConvolutionInteger in numpy, straight from spec 3.3 (no GPU imports).

y[n, m, oh, ow] = sum over c < C/G, kh, kw of
    (X'[n, g*C/G + c, oh*sH + kh*dH - padTop, ow*sW + kw*dW - padLeft] - xzp) * (W[m, c, kh, kw] - wzp[m])
with g = m // (M/G), X' = xzp outside the input (padded taps contribute exactly 0), accumulated in
int64 and wrapped to int32 (DirectML accumulates in 32-bit two's complement, so overflow wraps).
"""

from __future__ import annotations

import numpy as np


def _zero_point(zp, count: int) -> np.ndarray:
    """A zero point (None, scalar, or one value per output channel) as int64 of shape (count,)."""
    if zp is None:
        return np.zeros(count, dtype=np.int64)
    z = np.asarray(zp).astype(np.int64).reshape(-1)
    return np.broadcast_to(z, (count,)) if z.size == 1 else z


def _output_size(size: int, k: int, stride: int, dilation: int, pad0: int, pad1: int) -> int:
    """1 + (In + pads - (1 + (K - 1) * dilation)) // stride."""
    return 1 + (size + pad0 + pad1 - (1 + (k - 1) * dilation)) // stride


def convolution_integer(
    x: np.ndarray,
    w: np.ndarray,
    x_zero_point=None,
    w_zero_point=None,
    *,
    strides=(1, 1),
    dilations=(1, 1),
    start_padding=(0, 0),
    end_padding=(0, 0),
    group_count: int = 1,
) -> np.ndarray:
    """2-D (x {N,C,H,W}, w {M,C/G,KH,KW}) or 1-D (x {N,C,W}, w {M,C/G,K}) integer convolution;
    returns int32 {N, M, OH, OW} (or {N, M, OW})."""
    one_d = x.ndim == 3
    if one_d:
        x, w = x[:, :, None, :], w[:, :, None, :]
        strides, dilations = (1, *strides), (1, *dilations)
        start_padding, end_padding = (0, *start_padding), (0, *end_padding)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    g = group_count
    mg = m // g
    xz = int(_zero_point(x_zero_point, 1)[0])
    wz = _zero_point(w_zero_point, m)
    oh = _output_size(h, kh, strides[0], dilations[0], start_padding[0], end_padding[0])
    ow = _output_size(wd, kw, strides[1], dilations[1], start_padding[1], end_padding[1])
    # Pad with the zero point, then subtract it: padded taps become exactly 0.
    xp = np.full(
        (n, c, h + start_padding[0] + end_padding[0], wd + start_padding[1] + end_padding[1]), xz, dtype=np.int64
    )
    xp[:, :, start_padding[0] : start_padding[0] + h, start_padding[1] : start_padding[1] + wd] = x
    xp -= xz
    wf = w.astype(np.int64) - wz[:, None, None, None]
    y = np.zeros((n, m, oh, ow), dtype=np.int64)
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dilations[0], j * dilations[1]
            win = xp[
                :, :, r0 : r0 + (oh - 1) * strides[0] + 1 : strides[0], c0 : c0 + (ow - 1) * strides[1] + 1 : strides[1]
            ]
            for gi in range(g):
                xs = win[:, gi * cg : (gi + 1) * cg]  # {N, Cg, OH, OW}
                ws = wf[gi * mg : (gi + 1) * mg, :, i, j]  # {Mg, Cg}
                y[:, gi * mg : (gi + 1) * mg] += np.einsum("nchw,mc->nmhw", xs, ws)
    y = y.astype(np.int32)  # wrap to 32 bits (two's complement)
    return y[:, :, 0, :] if one_d else y

"""SpaceToDepth (v0) and SpaceToDepth1 (spec section 2).

Mind the documentation bug (spec 2.4): the output is {N, C*b*b, H/b, W/b}, as the docs' own
example and DirectMLX compute, not the {N, C/(b*b), H*b, W*b} that the pages state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime import Device, default_device
from ..tensor import DmlValidationError
from ._permute import IterationSpace, PermuteOperator, TiledSpace
from .depth_to_space import DepthSpaceDesc, DepthSpaceOrder, run_on_array

__all__ = ["SpaceToDepthDesc", "compile_space_to_depth", "space_to_depth", "space_to_depth_output_sizes"]


def space_to_depth_output_sizes(sizes, block_size: int) -> tuple[int, int, int, int]:
    """{N, C*b*b, H/b, W/b}."""
    n, c, h, w = sizes
    b = block_size
    return (n, c * b * b, h // b, w // b)


@dataclass(frozen=True)
class SpaceToDepthDesc(DepthSpaceDesc):
    """DML_SPACE_TO_DEPTH1_OPERATOR_DESC (v0 is ``order=DEPTH_COLUMN_ROW``)."""

    OUTPUT_RULE = "[N, C*b*b, H/b, W/b]"

    def check_input(self, b: int) -> None:
        """Height and width must divide by b."""
        _, _, h, w = self.input.sizes
        if h % b:
            raise DmlValidationError(f"input.sizes[2]: height ({h}) must be divisible by block_size ({b})")
        if w % b:
            raise DmlValidationError(f"input.sizes[3]: width ({w}) must be divisible by block_size ({b})")

    output_sizes = staticmethod(space_to_depth_output_sizes)

    def iteration_space(self) -> IterationSpace:
        """The spec 2.3 formula as a 6-D strided gather in output order."""
        b = self.block_size
        n, c, h, w = self.input.sizes
        sn, sc, sh, sw = self.input.element_strides
        on, oc, oh, ow = self.output.element_strides
        if self.order == DepthSpaceOrder.DEPTH_COLUMN_ROW:
            # out_c = (i*b + j)*C + c: dimensions (n, i, j, c, h, w)
            sizes = (n, b, b, c, h // b, w // b)
            src = (sn, sh, sw, sc, b * sh, b * sw)
            dst = (on, b * c * oc, c * oc, oc, oh, ow)
        else:
            # out_c = c*b*b + i*b + j: dimensions (n, c, i, j, h, w)
            sizes = (n, c, b, b, h // b, w // b)
            src = (sn, sc, sh, sw, b * sh, b * sw)
            dst = (on, b * b * oc, b * oc, oc, oh, ow)
        return IterationSpace(sizes, src, dst)

    def tiled_space(self) -> TiledSpace:
        """The same formula as input rows (n, c, h, i) each deinterleaved into b output rows."""
        b = self.block_size
        n, c, h, w = self.input.sizes
        chan = (b * c, c, 1) if self.order == DepthSpaceOrder.DEPTH_COLUMN_ROW else (b, 1, b * b)
        sn, sc, sh, sw = self.input.element_strides
        on, oc, oh, ow = self.output.element_strides
        return TiledSpace(b, (n, c, h // b), w // b, chan, (sn, sc, sh), (on, oc, oh), sw, ow)


def compile_space_to_depth(desc: SpaceToDepthDesc, *, device: Device | None = None) -> PermuteOperator:
    """Validate ``desc`` and build the operator once; call the result with (input, output)
    GPU tensors as many times as needed."""
    desc.validate()
    return PermuteOperator(
        device or default_device(),
        "space_to_depth",
        "space_to_depth.wgsl",
        desc.input,
        desc.output,
        desc.iteration_space(),
        desc.tiled_space(),
    )


def space_to_depth(x, block_size: int, order="DCR", *, device: Device | None = None) -> np.ndarray:
    """SpaceToDepth1 on a 4-D numpy array {N, C, H, W}; returns {N, C*b*b, H/b, W/b}.

    ``order`` is "DCR" (DEPTH_COLUMN_ROW, the v0 behaviour) or "CRD" (COLUMN_ROW_DEPTH), or the
    enum. Any numpy view with non-negative strides is used as it lies (no host copy).
    """
    return run_on_array(SpaceToDepthDesc, compile_space_to_depth, x, block_size, order, device)

"""SpaceToDepth (v0) and SpaceToDepth1 (spec section 2).

Mind the documentation bug (spec 2.4): the output is {N, C*b*b, H/b, W/b}, as the docs' own
example and DirectMLX compute, not the {N, C/(b*b), H*b, W*b} that the pages state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy.typing as npt

from ..plan import Capabilities, Placement, Plan
from ..runtime import Device, default_device
from ..tensor import DmlValidationError
from ._permute import DepthSpaceLayout, IterationSpace, PermuteOperator, RowSpace, TiledSpace, plan_depth_space
from .depth_to_space import (
    DepthSpaceDesc,
    DepthSpaceOrder,
    add_depth_space_arguments,
    explain_desc,
    run_on_array,
)

__all__ = [
    "SpaceToDepthDesc",
    "compile_space_to_depth",
    "plan_space_to_depth",
    "space_to_depth",
    "space_to_depth_output_sizes",
]


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

    def box_dims(self) -> tuple[int, int, int]:
        """Positions of n, c and h (output rows) in :meth:`iteration_space`."""
        return (0, 3, 4) if self.order == DepthSpaceOrder.DEPTH_COLUMN_ROW else (0, 1, 4)

    def layout(self) -> DepthSpaceLayout:
        """The same formula as input rows (n, c, h*b + i), each deinterleaved into the b output
        rows of channels out_c(i, j, c), j = 0..b-1 (the fast paths' view), plus the gather's space."""
        b = self.block_size
        n, c, h, w = self.input.sizes
        chan = (b * c, c, 1) if self.order == DepthSpaceOrder.DEPTH_COLUMN_ROW else (b, 1, b * b)
        sn, sc, sh, sw = self.input.element_strides
        on, oc, oh, ow = self.output.element_strides
        tiled = TiledSpace(b, c, h // b, w // b, chan, (sn, sc, sh), (on, oc, oh), sw, ow)
        rows = RowSpace(b, 1, b * b, w // b, 0, b * sw, chan, (sn, sc, sh, sw), (on, oc, oh, ow))
        return DepthSpaceLayout(
            "space_to_depth",
            "space_to_depth.wgsl",
            self.input,
            self.output,
            b,
            self.iteration_space(),
            self.box_dims(),
            tiled,
            rows,
        )


def plan_space_to_depth(
    desc: SpaceToDepthDesc,
    caps: Capabilities,
    *,
    kernel: str | None = None,
    placements: Mapping[str, Placement] | None = None,
) -> Plan:
    """The execution plan of a validated description on an adapter with capabilities ``caps``
    (no device needed). ``kernel`` requests a path by name (``space_to_depth_rows``, ``_tiled``,
    ``_tiled_staged``, ``_staged``, ``_row_words``, ``_packed``, ``_strided``, ``_atomic``; an impossible
    request raises PlanError);
    ``placements`` says how the tensors lie in their buffers (default: aligned, padded)."""
    return plan_depth_space(desc.layout(), caps, kernel=kernel, placements=placements)


def compile_space_to_depth(
    desc: SpaceToDepthDesc, *, device: Device | None = None, kernel: str | None = None, capabilities=None
) -> PermuteOperator:
    """Validate ``desc`` and build the operator once; call the result with (input, output)
    GPU tensors as many times as needed. ``kernel`` requests a path (see
    :func:`plan_space_to_depth`); ``capabilities`` replaces the device's record for planning."""
    desc.validate()
    return PermuteOperator(
        device or default_device(),
        desc,
        plan_space_to_depth,
        "space_to_depth",
        kernel=kernel,
        capabilities=capabilities,
    )


def add_explain_arguments(parser) -> None:
    """``dmlwgsl explain space_to_depth`` options: --block-size, --order, --input-layout."""
    add_depth_space_arguments(parser)


def explain_plan(args, caps: Capabilities) -> Plan:
    """The plan ``dmlwgsl explain space_to_depth`` prints."""
    return plan_space_to_depth(explain_desc(SpaceToDepthDesc, args), caps, kernel=args.kernel)


def space_to_depth(x: npt.ArrayLike, block_size: int, order="DCR", *, device: Device | None = None) -> npt.NDArray:
    """SpaceToDepth1 on a 4-D numpy array {N, C, H, W}; returns {N, C*b*b, H/b, W/b}.

    ``order`` is "DCR" (DEPTH_COLUMN_ROW, the v0 behaviour) or "CRD" (COLUMN_ROW_DEPTH), or the
    enum. Any numpy view with non-negative strides is used as it lies (no host copy).
    """
    return run_on_array(SpaceToDepthDesc, compile_space_to_depth, x, block_size, order, device)

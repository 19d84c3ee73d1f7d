"""DepthToSpace (v0) and DepthToSpace1 (spec section 2).

DepthToSpace1 with Order = DEPTH_COLUMN_ROW is DepthToSpace v0, so one description serves both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import numpy.typing as npt

from .. import oneshot
from ..plan import Capabilities, Placement, Plan
from ..runtime import Device, default_device
from ..tensor import DataType, DmlEnum, DmlValidationError, TensorDesc, desc_for_array
from ._permute import DepthSpaceLayout, IterationSpace, PermuteOperator, RowSpace, TiledSpace, plan_depth_space

__all__ = [
    "DepthSpaceOrder",
    "DepthToSpaceDesc",
    "compile_depth_to_space",
    "depth_to_space",
    "depth_to_space_output_sizes",
    "plan_depth_to_space",
]

#: Every data type the DepthToSpace/SpaceToDepth family takes at feature level 5.0 (spec 2.5).
DEPTH_SPACE_TYPES = frozenset(
    {
        DataType.FLOAT32,
        DataType.FLOAT16,
        DataType.UINT32,
        DataType.UINT16,
        DataType.UINT8,
        DataType.INT32,
        DataType.INT16,
        DataType.INT8,
        DataType.FLOAT64,
        DataType.UINT64,
        DataType.INT64,
    }
)


class DepthSpaceOrder(DmlEnum):
    """DML_DEPTH_SPACE_ORDER. DEPTH_COLUMN_ROW is ONNX "DCR", COLUMN_ROW_DEPTH is ONNX "CRD"."""

    DEPTH_COLUMN_ROW = 0
    COLUMN_ROW_DEPTH = 1

    @classmethod
    def aliases(cls) -> dict:
        """The ONNX mode strings."""
        return {"DCR": "DEPTH_COLUMN_ROW", "CRD": "COLUMN_ROW_DEPTH"}

    @classmethod
    def dml_prefix(cls) -> str:
        """DML_DEPTH_SPACE_ORDER_."""
        return "DML_DEPTH_SPACE_ORDER_"

    @classmethod
    def describe(cls) -> tuple[str, str, str]:
        """For the error message."""
        return ("order", "order", "'DCR', 'CRD' or DepthSpaceOrder.DEPTH_COLUMN_ROW/COLUMN_ROW_DEPTH")


def depth_to_space_output_sizes(sizes, block_size: int) -> tuple[int, int, int, int]:
    """{N, C/(b*b), H*b, W*b}."""
    n, c, h, w = sizes
    b = block_size
    return (n, c // (b * b), h * b, w * b)


def check_block_size(block_size) -> int:
    """BlockSize must be a positive integer."""
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise DmlValidationError(f"block_size: must be an integer >= 1; got {block_size!r}")
    return int(block_size)


@dataclass(frozen=True)
class DepthSpaceDesc:
    """Fields and checks shared by the DepthToSpace1 and SpaceToDepth1 descriptions."""

    input: TensorDesc
    output: TensorDesc
    block_size: int
    order: DepthSpaceOrder = DepthSpaceOrder.DEPTH_COLUMN_ROW

    #: The output-size rule, as the error message states it.
    OUTPUT_RULE = ""

    def __post_init__(self):
        object.__setattr__(self, "order", DepthSpaceOrder.parse(self.order))

    def validate(self) -> None:
        """Raise :class:`DmlValidationError` naming the field and rule that a description breaks."""
        b = check_block_size(self.block_size)
        self.input.validate("input", ranks={4}, data_types=DEPTH_SPACE_TYPES)
        self.check_input(b)
        self.output.validate("output", ranks={4}, data_types=DEPTH_SPACE_TYPES)
        if self.output.data_type != self.input.data_type:
            raise DmlValidationError(
                f"output.data_type: must equal input.data_type ({self.input.data_type.name}); "
                f"got {self.output.data_type.name}"
            )
        expected = self.output_sizes(self.input.sizes, b)
        if tuple(self.output.sizes) != tuple(expected):
            raise DmlValidationError(
                f"output.sizes: must be {self.OUTPUT_RULE} = {list(expected)} for input {list(self.input.sizes)} "
                f"and block_size {b}; got {list(self.output.sizes)}"
            )
        self.output.check_no_overlap("output")

    def check_input(self, b: int) -> None:
        """The operator's divisibility rule on the input sizes."""
        raise NotImplementedError

    @staticmethod
    def output_sizes(sizes, block_size: int) -> tuple[int, int, int, int]:
        """The output sizes the operator produces for input ``sizes``."""
        raise NotImplementedError


@dataclass(frozen=True)
class DepthToSpaceDesc(DepthSpaceDesc):
    """DML_DEPTH_TO_SPACE1_OPERATOR_DESC (v0 is ``order=DEPTH_COLUMN_ROW``)."""

    OUTPUT_RULE = "[N, C/(b*b), H*b, W*b]"

    def check_input(self, b: int) -> None:
        """Channels must divide by b*b."""
        c = self.input.sizes[1]
        if c % (b * b):
            raise DmlValidationError(f"input.sizes[1]: channels ({c}) must be divisible by block_size^2 ({b * b})")

    output_sizes = staticmethod(depth_to_space_output_sizes)

    def iteration_space(self) -> IterationSpace:
        """The spec 2.3 formula as a 6-D strided gather over (n, c, h, i, w, j) in output order."""
        b = self.block_size
        n, c, h, w = self.input.sizes
        cq = c // (b * b)
        sn, sc, sh, sw = self.input.element_strides
        on, oc, oh, ow = self.output.element_strides
        if self.order == DepthSpaceOrder.DEPTH_COLUMN_ROW:  # in_c = (i*b + j)*C' + c
            src = (sn, sc, sh, b * cq * sc, sw, cq * sc)
        else:  # in_c = c*b*b + i*b + j
            src = (sn, b * b * sc, sh, b * sc, sw, sc)
        dst = (on, oc, b * oh, oh, b * ow, ow)
        return IterationSpace((n, cq, h, b, w, b), src, dst)

    def layout(self) -> DepthSpaceLayout:
        """The same formula as output rows (n, c, h*b + i), each interleaving the b input rows of
        channels in_c(i, j, c), j = 0..b-1 (the fast paths' view), plus the gather's space."""
        b = self.block_size
        n, c, h, w = self.input.sizes
        cq = c // (b * b)
        chan = (b * cq, cq, 1) if self.order == DepthSpaceOrder.DEPTH_COLUMN_ROW else (b, 1, b * b)
        sn, sc, sh, sw = self.input.element_strides
        on, oc, oh, ow = self.output.element_strides
        tiled = TiledSpace(b, cq, h, w, chan, (sn, sc, sh), (on, oc, oh), sw, ow, zip=(b == 2))
        rows = RowSpace(b, b, b, w * b, chan[1] * sc, sw, chan, (sn, sc, sh, sw), (on, oc, oh, ow))
        return DepthSpaceLayout(
            "depth_to_space",
            "depth_to_space.wgsl",
            self.input,
            self.output,
            b,
            self.iteration_space(),
            (0, 1, 2),
            tiled,
            rows,
        )


def plan_depth_to_space(
    desc: DepthToSpaceDesc,
    caps: Capabilities,
    *,
    kernel: str | None = None,
    placements: Mapping[str, Placement] | None = None,
) -> Plan:
    """The execution plan of a validated description on an adapter with capabilities ``caps``
    (no device needed). ``kernel`` requests a path by name (``depth_to_space_rows``, ``_zip``,
    ``_tiled``, ``_tiled_staged``, ``_staged``, ``_row_words``, ``_packed``, ``_strided``, ``_atomic``;
    an impossible request raises PlanError);
    ``placements`` says how the tensors lie in their buffers (default: aligned, padded)."""
    return plan_depth_space(desc.layout(), caps, kernel=kernel, placements=placements)


def compile_depth_to_space(
    desc: DepthToSpaceDesc, *, device: Device | None = None, kernel: str | None = None, capabilities=None
) -> PermuteOperator:
    """Validate ``desc`` and build the operator once; call the result with (input, output)
    GPU tensors as many times as needed. ``kernel`` requests a path (see
    :func:`plan_depth_to_space`); ``capabilities`` replaces the device's record for planning (a
    tighter one, e.g. a smaller binding limit)."""
    desc.validate()
    return PermuteOperator(
        device or default_device(),
        desc,
        plan_depth_to_space,
        "depth_to_space",
        kernel=kernel,
        capabilities=capabilities,
    )


def add_explain_arguments(parser) -> None:
    """``dmlwgsl explain depth_to_space`` options: --block-size, --order, --input-layout."""
    add_depth_space_arguments(parser)


def add_depth_space_arguments(parser) -> None:
    """The explain options shared by DepthToSpace and SpaceToDepth."""
    parser.add_argument("--block-size", type=int, default=2, help="block size b (default 2)")
    parser.add_argument("--order", default="DCR", help="DCR (default) or CRD")
    parser.add_argument(
        "--input-layout",
        default="packed",
        choices=["packed", "nhwc"],
        help="packed (NCHW, default) or nhwc (channels-last strides)",
    )


def explain_desc(desc_cls, args):
    """Build and validate the description the explain options describe."""
    from ..testing import strided_desc

    dt = DataType.parse(args.dtype)
    b = check_block_size(args.block_size)
    sizes = tuple(args.input)
    if len(sizes) != 4:
        raise DmlValidationError(f"input.sizes: dimension count must be in [4]; got {len(sizes)} ({list(sizes)})")
    in_desc = strided_desc(dt, sizes, args.input_layout)
    desc = desc_cls(in_desc, TensorDesc(dt, desc_cls.output_sizes(sizes, b)), b, args.order)
    desc.validate()
    return desc


def explain_plan(args, caps: Capabilities) -> Plan:
    """The plan ``dmlwgsl explain depth_to_space`` prints."""
    return plan_depth_to_space(explain_desc(DepthToSpaceDesc, args), caps, kernel=args.kernel)


def run_on_array(desc_cls, compile_fn, x, block_size, order, device: Device | None) -> npt.NDArray:
    """Shared body of the DepthToSpace/SpaceToDepth numpy one-liners: describe ``x`` in place
    (numpy strides become DML strides), build and validate the description, upload, run, read back."""
    order = DepthSpaceOrder.parse(order)
    b = check_block_size(block_size)
    a = oneshot.as_input(x, "x", "a 4-D array {N, C, H, W}")
    if a.size == 0 and a.ndim == 4:
        return oneshot.empty_result(desc_cls.output_sizes(a.shape, b), a.dtype)
    in_desc, _ = desc_for_array(a)
    out_sizes = desc_cls.output_sizes(in_desc.sizes, b) if in_desc.rank == 4 else in_desc.sizes
    desc = desc_cls(in_desc, TensorDesc(in_desc.data_type, out_sizes), b, order)
    return oneshot.run(compile_fn, desc, [a, oneshot.OUTPUT], device=device)  # validates before GPU work


def depth_to_space(x: npt.ArrayLike, block_size: int, order="DCR", *, device: Device | None = None) -> npt.NDArray:
    """DepthToSpace1 on a 4-D numpy array {N, C, H, W}; returns {N, C/(b*b), H*b, W*b}.

    ``order`` is "DCR" (DEPTH_COLUMN_ROW, the v0 behaviour) or "CRD" (COLUMN_ROW_DEPTH), or the
    enum. Any numpy view with non-negative strides is used as it lies (no host copy).
    """
    return run_on_array(DepthToSpaceDesc, compile_depth_to_space, x, block_size, order, device)

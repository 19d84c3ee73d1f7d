"""Shared test machinery for the DepthToSpace and SpaceToDepth test files."""

from __future__ import annotations

import numpy as np

from dmlwgsl import DepthToSpaceDesc, SpaceToDepthDesc
from dmlwgsl.ops.depth_to_space import DEPTH_SPACE_TYPES, compile_depth_to_space
from dmlwgsl.ops.space_to_depth import compile_space_to_depth
from dmlwgsl.reference.depth_to_space import depth_to_space as ref_depth_to_space
from dmlwgsl.reference.space_to_depth import space_to_depth as ref_space_to_depth
from dmlwgsl.reference.tensors import read_tensor
from dmlwgsl.testing import random_bytes, run_checked, strided_desc

ALL_TYPES = sorted(DEPTH_SPACE_TYPES, key=int)


#: (input, output) stride patterns of the every-type-and-layout tests (dmlwgsl.testing.strided_desc).
LAYOUTS = [
    ("packed", "packed"),
    ("nhwc", "packed"),
    ("padded", "padded"),
    ("broadcast", "window"),
    ("packed", "nhwc"),
    ("window", "padded"),
]


#: Per operator: (compile function, description class, numpy reference, output shape of an input shape).
OPS = {
    "depth_to_space": (
        compile_depth_to_space,
        DepthToSpaceDesc,
        ref_depth_to_space,
        lambda s, b: (s[0], s[1] // (b * b), s[2] * b, s[3] * b),
    ),
    "space_to_depth": (
        compile_space_to_depth,
        SpaceToDepthDesc,
        ref_space_to_depth,
        lambda s, b: (s[0], s[1] * b * b, s[2] // b, s[3] // b),
    ),
}


def check_op(
    device,
    op_name,
    dtype,
    shape,
    block_size,
    order,
    rng,
    *,
    lin="packed",
    lout="packed",
    kernel=None,
    capabilities=None,
    input_offset=16,
    output_offset=64,
):
    """Run ``op_name`` ("depth_to_space" or "space_to_depth") on an input of ``shape`` in stride
    pattern ``lin`` (dmlwgsl.testing.strided_desc) into an output in pattern ``lout``, on the GPU
    under poison and guards, and compare with the numpy reference; returns the compiled operator
    (``kernel`` requests a path; ``capabilities`` replaces the device's record for planning)."""
    compile_fn, desc_cls, reference, out_shape = OPS[op_name]
    in_desc = strided_desc(dtype, shape, lin)
    out_desc = strided_desc(dtype, out_shape(shape, block_size), lout, output=True)
    raw = random_bytes(in_desc, rng)
    x = read_tensor(raw, in_desc)
    expected = reference(x, block_size, order)
    op = compile_fn(
        desc_cls(in_desc, out_desc, block_size, order), device=device, kernel=kernel, capabilities=capabilities
    )
    run_checked(
        device,
        lambda ins, out: op(ins["input"], out),
        {"input": (in_desc, raw)},
        out_desc,
        expected,
        input_offset=input_offset,
        output_offset=output_offset,
    )
    return op


def onnx_cases(prefix: str, op_type: str):
    """(name, block size, mode, input, expected) for the onnx backend node tests named prefix*."""
    import glob
    import os

    from onnx import numpy_helper

    out = []
    from onnx_node_cases import node_cases

    for case in node_cases(op_type):
        if not case.name.startswith(prefix):
            continue
        node = case.model.graph.node[0]
        attrs = {a.name: a for a in node.attribute}
        b = attrs["blocksize"].i
        mode = attrs["mode"].s.decode() if "mode" in attrs else "DCR"
        if case.data_sets:
            for inputs, outputs in case.data_sets:
                out.append((case.name, b, mode, np.asarray(inputs[0]), np.asarray(outputs[0])))
        else:
            for d in sorted(glob.glob(os.path.join(case.data_dir or "", "test_data_set_*"))):
                t_in = numpy_helper.to_array(_load(os.path.join(d, "input_0.pb")))
                t_out = numpy_helper.to_array(_load(os.path.join(d, "output_0.pb")))
                out.append((case.name, b, mode, t_in, t_out))
    return out


def _load(path):
    import onnx

    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


__all__ = ["ALL_TYPES", "OPS", "check_op", "onnx_cases", "strided_desc"]


def check_row_cases(device, rng, op_name, dtype, cases, kernel, tight):
    """Run ``cases`` (DepthToSpace input shape, block size, input layout, output layout, output
    offset in bytes, split) through ``op_name`` on path ``kernel`` with :func:`check_op`: DCR on the
    device's record, CRD on ``tight`` where the case says split. SpaceToDepth takes the
    DepthToSpace outputs as its inputs; offsets are rounded down to the element size. Returns the
    compiled operators."""
    ops = []
    for shape, b, lin, lout, offset, split in cases:
        if op_name == "space_to_depth":
            shape = (shape[0], shape[1] // (b * b), shape[2] * b, shape[3] * b)
        for order, capabilities in (("DCR", None), ("CRD", tight if split else None)):
            ops.append(
                check_op(
                    device,
                    op_name,
                    dtype,
                    shape,
                    b,
                    order,
                    rng,
                    lin=lin,
                    lout=lout,
                    output_offset=offset - offset % dtype.size_in_bytes,
                    kernel=kernel,
                    capabilities=capabilities,
                )
            )
    return ops

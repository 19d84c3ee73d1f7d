"""Shared test machinery for the DepthToSpace and SpaceToDepth test files."""

from __future__ import annotations

import numpy as np

from dmlwgsl.ops.depth_to_space import DEPTH_SPACE_TYPES
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


def check_op(
    device,
    compile_fn,
    desc_cls,
    reference,
    in_desc,
    out_desc,
    block_size,
    order,
    rng,
    *,
    kernel=None,
    capabilities=None,
    input_offset=16,
    output_offset=64,
):
    """Run one case on the GPU under poison and guards and compare with the numpy reference
    (``kernel`` requests a path; ``capabilities`` replaces the device's record for planning)."""
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


__all__ = ["ALL_TYPES", "check_op", "onnx_cases", "strided_desc"]

"""dmlwgsl as an ONNX backend (``onnx.backend.base``): run ONNX graphs of DirectML's operators.

    import onnx, dmlwgsl.onnx_backend as backend
    rep = backend.prepare(onnx.load("model.onnx"), device="vulkan")
    (y,) = rep.run([x])                       # or backend.run_model(model, [x])

and ``onnx.backend.test.BackendTest(dmlwgsl.onnx_backend, __name__)`` runs onnx's own node tests.

Graphs may hold DepthToSpace, SpaceToDepth, ConvInteger, Resize (opsets 10-19) and Upsample
(opsets 7-9), plus Constant nodes for their parameters. Each node maps onto a DirectML
description the way onnxruntime's DirectML execution provider maps it (spec 2, 3, 4.7):
DepthToSpace/SpaceToDepth -> DEPTH_TO_SPACE1/SPACE_TO_DEPTH1 (``mode`` -> order), ConvInteger ->
CONVOLUTION_INTEGER (``auto_pad`` resolved to explicit padding), Resize ->
RESAMPLE2, or RESAMPLE3 with Antialiased for ``antialias=1``
(:func:`dmlwgsl.ops.resample.onnx_resize_to_resample`); Upsample and Resize-10 -> Resample2 with
x = y / scale (asymmetric, as onnxruntime maps both) and nearest floor (ONNX's Upsample definition:
integer scales repeat; onnxruntime's CPU kernel rounds up instead on downsampled axes of Resize-10,
which one RoundingDirection for all axes cannot follow where axes differ). What DirectML cannot express raises
:class:`OnnxUnsupported` (or its subclass :class:`~dmlwgsl.ops.resample.OnnxResizeUnsupported`)
naming the attribute: Resize ``mode="cubic"``, ``exclude_outside``, a tf_crop_and_resize ROI that
samples outside the input (ONNX writes ``extrapolation_value`` there; DirectML clamps).

Execution: graph inputs and initializers are uploaded once per run, every node's output stays
on the GPU as the next node's input, all dispatches of a run are recorded into one submission,
and each graph output is read back once. Scales, sizes, roi and zero points must be constants
(initializers, Constant nodes or graph inputs): they shape the descriptions.

Devices: ``device`` is a :class:`dmlwgsl.Device`, or a string: a wgpu backend name ("vulkan",
"gl", "metal", "dx12"), optionally with ":adapter substring" (e.g. "vulkan:llvmpipe"), or onnx's
default "CPU", which means dmlwgsl's default device (the environment variables DMLWGSL_BACKEND and
DMLWGSL_ADAPTER choose it; ONNX's CPU/CUDA names say nothing about wgpu adapters). "CUDA" is not
supported. :func:`bound` makes a backend whose every call runs on one given device (the test
suite runs onnx's BackendTest once per adapter with it).
"""

from __future__ import annotations

import functools
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .ops.convolution_integer import (
    ConvolutionIntegerDesc,
    compile_convolution_integer,
    convolution_integer_output_sizes,
)
from .ops.depth_to_space import DepthSpaceOrder, DepthToSpaceDesc, compile_depth_to_space
from .ops.resample import OnnxResizeUnsupported, compile_resample, onnx_resize_to_resample
from .ops.space_to_depth import SpaceToDepthDesc, compile_space_to_depth
from .runtime import Device, GpuTensor, default_device
from .tensor import DataType, DmlValidationError, TensorDesc

__all__ = [
    "OnnxUnsupported",
    "OnnxResizeUnsupported",
    "DmlwgslRep",
    "prepare",
    "run_model",
    "run_node",
    "supports_device",
    "is_compatible",
    "bound",
    "SUPPORTED_OPS",
]

#: ONNX operators this backend runs (default domain), with the opsets it accepts.
SUPPORTED_OPS = {
    "DepthToSpace": range(1, 100),
    "SpaceToDepth": range(1, 100),
    "ConvInteger": range(10, 100),
    "Resize": range(10, 100),  # Resize-10, -11, -13, -18, -19 (the latest definition)
    "Upsample": range(7, 10),
    "Constant": range(1, 100),
}
_CPU_NAMES = ("", "CPU")


class OnnxUnsupported(DmlValidationError):
    """An ONNX model, node or attribute that DirectML (and so this backend) cannot run; the message
    names the operator and the attribute."""


# ------------------------------------------------------------------------------------------------
# devices
# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _named_device(name: str) -> Device:
    backend, _, adapter = name.partition(":")
    return Device(backend=backend, adapter=adapter or None)


def _device(device) -> Device:
    """The dmlwgsl Device for a backend ``device`` argument (see the module docstring)."""
    if isinstance(device, Device):
        return device
    name = str(device or "").strip()
    if name.upper() in _CPU_NAMES:
        return default_device()
    if name.split(":")[0].upper() == "CUDA":
        raise OnnxUnsupported(
            "device: 'CUDA' is not a wgpu adapter; use 'CPU' (dmlwgsl's default device), a backend name "
            "('vulkan', 'gl', 'metal', 'dx12', optionally ':adapter substring') or a dmlwgsl.Device"
        )
    try:
        return _named_device(name.lower() if ":" not in name else name)
    except ValueError as e:
        raise OnnxUnsupported(f"device: {e}") from None


def supports_device(device: str) -> bool:
    """Whether ``device`` names something this backend can run on: "CPU" (dmlwgsl's default
    device) or a wgpu backend present on this machine; "CUDA" is not."""
    if isinstance(device, Device):
        return True
    name = str(device or "").strip()
    if name.upper() in _CPU_NAMES:
        return True
    if name.split(":")[0].upper() == "CUDA":
        return False
    try:
        _device(name)
    except Exception:
        return False
    return True


# ------------------------------------------------------------------------------------------------
# graph
# ------------------------------------------------------------------------------------------------
def _attrs(node) -> dict:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _opset(model) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return 1


def _check_node(node, opset: int) -> None:
    """Raise :class:`OnnxUnsupported` for a node this backend cannot run, before any GPU work."""
    if node.domain not in ("", "ai.onnx") or node.op_type not in SUPPORTED_OPS:
        raise OnnxUnsupported(
            f"{node.op_type} (node {node.name or node.output[0]!r}): not an operator of this backend "
            f"({', '.join(sorted(SUPPORTED_OPS))})"
        )
    if opset not in SUPPORTED_OPS[node.op_type]:
        r = SUPPORTED_OPS[node.op_type]
        raise OnnxUnsupported(f"{node.op_type}: opset {opset} is outside the supported {r.start}-{r.stop - 1}")
    a = _attrs(node)
    if node.op_type in ("Resize", "Upsample"):
        mode = _text(a.get("mode", "nearest"))
        if mode == "cubic":
            raise OnnxResizeUnsupported(
                f"{node.op_type}.mode: 'cubic' has no DirectML Resample equivalent (nearest and linear only)"
            )
        if mode not in ("nearest", "linear", "bilinear"):
            raise OnnxUnsupported(f"{node.op_type}.mode: unknown {mode!r}")
        if int(a.get("exclude_outside", 0)):
            raise OnnxResizeUnsupported(
                "Resize.exclude_outside: DirectML always clamps to the edge; exclude_outside=1 cannot be expressed"
            )


@dataclass
class _Step:
    """One compiled node: the operator, its GPU arguments by value name (None = absent) and output."""

    op: Any
    args: tuple
    output: str


def _const(values: Mapping, name: str, what: str):
    """The host value of a parameter input (scales, sizes, roi, zero points), or None if absent.
    Its name is noted in ``values[_PARAMS]``: a compiled graph is reused only while they stay."""
    if not name:
        return None
    values.setdefault(_PARAMS, set()).add(name)
    v = values.get(name)
    if isinstance(v, _Pending):
        raise OnnxUnsupported(
            f"{what} ({name!r}): must be a constant (initializer, Constant node or graph input), "
            f"not computed on the GPU"
        )
    if v is None:
        raise OnnxUnsupported(f"{what} ({name!r}): no such value in the graph")
    return np.asarray(v)


_PARAMS = "#params"


class _Pending:
    """A node output: lives on the GPU (``desc`` known at compile time)."""

    def __init__(self, desc: TensorDesc):
        self.desc = desc


def _desc_of(v) -> TensorDesc:
    if isinstance(v, _Pending):
        return v.desc
    a = np.asarray(v)
    try:
        dt = DataType.from_numpy(a.dtype)
    except Exception:
        raise OnnxUnsupported(f"input data type: {a.dtype} has no DirectML tensor type") from None
    return TensorDesc(dt, a.shape if a.ndim else (1,))


def _resize_params(node, values: Mapping, opset: int, shape):
    """ONNX Resize/Upsample -> the Resample parameters (ORT's DML mapping, spec 4.7)."""
    a = _attrs(node)
    ins = list(node.input) + [""] * 4
    mode = _text(a.get("mode", "nearest"))
    if mode == "bilinear":  # Upsample-7's spelling
        mode = "linear"
    if node.op_type == "Upsample" or opset == 10:
        # Upsample and Resize-10: x = y / scale (asymmetric); nearest takes floor(x)
        scales = a.get("scales") if (node.op_type == "Upsample" and opset < 9) else _const(values, ins[1], "scales")
        return onnx_resize_to_resample(
            shape,
            scales=np.asarray(scales, dtype=np.float32),
            mode=mode,
            coordinate_transformation_mode="asymmetric",
            nearest_mode="floor",
        )
    kwargs = {
        k: a[k]
        for k in (
            "coordinate_transformation_mode",
            "nearest_mode",
            "exclude_outside",
            "extrapolation_value",
            "antialias",
            "axes",
            "keep_aspect_ratio_policy",
            "cubic_coeff_a",
        )
        if k in a
    }
    return onnx_resize_to_resample(
        shape,
        roi=_const(values, ins[1], "roi"),
        scales=_const(values, ins[2], "scales"),
        sizes=_const(values, ins[3], "sizes"),
        mode=mode,
        **kwargs,
    )


def _conv_pads(a: dict, x_shape, w_shape) -> tuple[tuple, tuple, tuple, tuple]:
    """(strides, dilations, start padding, end padding) of an ONNX ConvInteger, auto_pad resolved."""
    nsp = len(x_shape) - 2
    strides = tuple(int(s) for s in a.get("strides", [1] * nsp))
    dil = tuple(int(d) for d in a.get("dilations", [1] * nsp))
    auto = _text(a.get("auto_pad", "NOTSET"))
    if auto == "NOTSET":
        pads = [int(p) for p in a.get("pads", [0] * 2 * nsp)]
        return strides, dil, tuple(pads[:nsp]), tuple(pads[nsp:])
    if auto == "VALID":
        return strides, dil, (0,) * nsp, (0,) * nsp
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise OnnxUnsupported(f"ConvInteger.auto_pad: unknown {auto!r}")
    start, end = [], []
    for i, k, s, d in zip(x_shape[2:], w_shape[2:], strides, dil):
        out = -(-i // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - i)
        small, big = total // 2, total - total // 2
        start.append(small if auto == "SAME_UPPER" else big)
        end.append(big if auto == "SAME_UPPER" else small)
    return strides, dil, tuple(start), tuple(end)


def _zero_point(values, name: str, dtype: DataType, m: int | None, rank: int, what: str):
    """A ConvInteger zero point as a DML-shaped host array (per tensor, or per output channel)."""
    z = _const(values, name, what)
    if z is None:
        return None
    if z.size == 1:
        return z.reshape((1,) * rank)
    if m is not None and z.size == m:
        return z.reshape((1, m) + (1,) * (rank - 2))
    raise OnnxUnsupported(f"ConvInteger.{what}: must be a scalar or one value per output channel; got {z.shape}")


def _compile_node(node, values: dict, opset: int, device: Device) -> tuple[_Step, dict]:
    """Build the DirectML operator for ``node``; returns the step and host arrays to upload."""
    a = _attrs(node)
    x_name = node.input[0]
    xd = _desc_of(values[x_name])
    uploads: dict = {}
    op_type = node.op_type
    if op_type in ("DepthToSpace", "SpaceToDepth"):
        b = int(a["blocksize"])
        order = DepthSpaceOrder.parse(_text(a.get("mode", "DCR")))
        if op_type == "DepthToSpace":
            n, c, h, w = xd.sizes
            out = TensorDesc(xd.data_type, (n, c // (b * b), h * b, w * b))
            op = compile_depth_to_space(DepthToSpaceDesc(xd, out, b, order), device=device)
        else:
            n, c, h, w = xd.sizes
            out = TensorDesc(xd.data_type, (n, c * b * b, h // b, w // b))
            op = compile_space_to_depth(SpaceToDepthDesc(xd, out, b, order), device=device)
        return _Step(op, (x_name, node.output[0]), node.output[0]), {"out": out}
    if op_type == "ConvInteger":
        w_name = node.input[1]
        wd = _desc_of(values[w_name])
        ins = list(node.input) + ["", ""]
        strides, dil, p0, p1 = _conv_pads(a, xd.sizes, wd.sizes)
        if int(a.get("group", 1)) < 1:
            raise OnnxUnsupported(f"ConvInteger.group: must be >= 1; got {a.get('group')}")
        rank = xd.rank
        xz = _zero_point(values, ins[2], xd.data_type, None, rank, "x_zero_point")
        wz = _zero_point(values, ins[3], wd.data_type, wd.sizes[0], rank, "w_zero_point")
        out_sizes = convolution_integer_output_sizes(xd.sizes, wd.sizes, strides, dil, p0, p1)
        out = TensorDesc(DataType.INT32, out_sizes)
        names = [x_name, w_name, node.output[0], None, None]
        zds = [None, None]
        for k, (z, nm) in enumerate(((xz, ins[2]), (wz, ins[3]))):
            if z is not None:
                key = f"{nm}#dml"
                uploads[key] = z
                names[3 + k] = key
                zds[k] = _desc_of(z)
        desc = ConvolutionIntegerDesc(xd, wd, out, zds[0], zds[1], strides, dil, p0, p1, int(a.get("group", 1)))
        op = compile_convolution_integer(desc, device=device)
        return _Step(op, tuple(names), node.output[0]), dict(uploads, out=out)
    # Resize / Upsample
    params = _resize_params(node, values, opset, xd.sizes)
    desc = params.desc(xd)
    op = compile_resample(desc, device=device)
    return _Step(op, (x_name, node.output[0]), node.output[0]), {"out": desc.output}


class DmlwgslRep:
    """A prepared ONNX model (:class:`onnx.backend.base.BackendRep`): :meth:`run` it on inputs.

    Operators are compiled on the first run for the inputs' shapes, data types and parameter
    values, and reused while those stay the same.
    """

    def __init__(self, model, device: Device):
        self.model = model
        self.device = device
        self.graph = model.graph
        self.opset = _opset(model)
        for node in self.graph.node:
            _check_node(node, self.opset)
        from onnx import numpy_helper

        self.initializers = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        self.input_names = [i.name for i in self.graph.input if i.name not in self.initializers]
        self.output_names = [o.name for o in self.graph.output]
        self._programs: dict = {}

    def _values(self, inputs) -> dict:
        if isinstance(inputs, Mapping):
            given = {k: np.asarray(v) for k, v in inputs.items()}
            missing = [n for n in self.input_names if n not in given]
            if missing:
                raise OnnxUnsupported(f"inputs: missing {', '.join(missing)}")
        else:
            seq = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            if len(seq) != len(self.input_names):
                raise OnnxUnsupported(
                    f"inputs: the graph takes {len(self.input_names)} ({', '.join(self.input_names)}); got {len(seq)}"
                )
            given = {n: np.asarray(v) for n, v in zip(self.input_names, seq)}
        values = dict(self.initializers)
        values.update(given)
        return values

    def _compile(self, values: dict):
        """Compile every node for these inputs: (steps, host arrays to upload, output descs)."""
        from onnx import numpy_helper

        values = dict(values)
        values[_PARAMS] = set()
        steps, uploads, outs = [], {}, {}
        for node in self.graph.node:
            if node.op_type == "Constant":
                values[node.output[0]] = numpy_helper.to_array(_attrs(node)["value"])
                continue
            step, extra = _compile_node(node, values, self.opset, self.device)
            out = extra.pop("out")
            uploads.update(extra)
            values[step.output] = _Pending(out)
            outs[step.output] = out
            steps.append(step)
        return steps, uploads, outs, values

    @staticmethod
    def _shapes(values: dict) -> tuple:
        return tuple((n, v.dtype.str, v.shape) for n, v in sorted(values.items()))

    @staticmethod
    def _params(values: dict, names) -> tuple:
        return tuple((n, values[n].tobytes()) for n in sorted(names) if n in values)

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        """Run the graph on ``inputs`` (a list in graph-input order, or a dict by name); returns
        the graph outputs as numpy arrays, in order (a namedtuple, also indexable by name)."""
        values = self._values(inputs)
        key = self._shapes(values)
        prog = self._programs.get(key)
        if prog is None or self._params(values, prog[3][_PARAMS]) != prog[4]:
            compiled = self._compile(values)
            prog = compiled + (self._params(values, compiled[3][_PARAMS]),)
            self._programs = {key: prog}  # the last shapes only: a model rarely alternates
        steps, host_uploads, outs, consts, _ = prog
        dev = self.device
        gpu: dict[str, GpuTensor] = {}
        # Uploads and allocations before the batch (a partial-word upload reads its buffer back).
        for step in steps:
            for name in step.args:
                if name is None or name in gpu:
                    continue
                if name in outs:
                    gpu[name] = dev.tensor(outs[name], label=name)
                elif name in host_uploads:
                    gpu[name] = dev.upload(host_uploads[name], label=name)
                else:
                    v = values.get(name, consts.get(name))
                    gpu[name] = dev.upload(np.asarray(v), label=name)
        with dev.batch():
            for step in steps:
                step.op(*(None if n is None else gpu[n] for n in step.args))
        results = []
        for name in self.output_names:
            if name in gpu:
                results.append(gpu[name].numpy())
            else:
                v = values.get(name, consts.get(name))
                if v is None or isinstance(v, _Pending):
                    raise OnnxUnsupported(f"output {name!r}: not produced by the graph")
                results.append(np.array(v, copy=True))
        fields = namedtuple("Outputs", self.output_names, rename=True)
        return fields(*results)


# ------------------------------------------------------------------------------------------------
# onnx.backend.base.Backend interface (module-level functions, so the module itself is a backend)
# ------------------------------------------------------------------------------------------------
def is_compatible(model, device: str = "CPU", **kwargs: Any) -> bool:
    """Whether every node of ``model`` is one this backend runs."""
    try:
        opset = _opset(model)
        for node in model.graph.node:
            _check_node(node, opset)
    except OnnxUnsupported:
        return False
    return True


def prepare(model, device: Any = "CPU", **kwargs: Any) -> DmlwgslRep:
    """Check ``model`` (onnx's checker, then this backend's operator and attribute rules) and
    return a :class:`DmlwgslRep` on ``device`` (see the module docstring)."""
    import onnx.checker

    onnx.checker.check_model(model)
    return DmlwgslRep(model, _device(device))


def run_model(model, inputs: Any, device: Any = "CPU", **kwargs: Any) -> tuple:
    """``prepare(model, device).run(inputs)``."""
    return prepare(model, device, **kwargs).run(inputs)


def run_node(node, inputs: Any, device: Any = "CPU", outputs_info: Sequence | None = None, **kwargs: Any) -> tuple:
    """Run one node on ``inputs`` (a list in the node's input order, absent inputs skipped as in
    ``node.input``'s empty names, or a dict by name). ``opset_version`` (keyword) sets the opset
    (default: the newest this backend supports for the operator)."""
    from onnx import TensorProto, helper

    names = [n for n in node.input if n]
    if isinstance(inputs, Mapping):
        arrays = {k: np.asarray(v) for k, v in inputs.items()}
    else:
        arrays = {n: np.asarray(v) for n, v in zip(names, inputs)}
    r = SUPPORTED_OPS.get(node.op_type, range(1, 20))
    opset = int(kwargs.get("opset_version", min(r.stop - 1, 19)))
    graph = helper.make_graph(
        [node],
        "run_node",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in arrays.items()
        ],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in node.output],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    rep = DmlwgslRep(model, _device(device))
    return rep.run(arrays)


class _Bound:
    """A backend whose every call runs on one device (see :func:`bound`)."""

    def __init__(self, device: Device):
        self.device = device

    def is_compatible(self, model, device: str = "CPU", **kwargs: Any) -> bool:
        """As :func:`is_compatible`."""
        return is_compatible(model)

    def prepare(self, model, device: Any = "CPU", **kwargs: Any) -> DmlwgslRep:
        """As :func:`prepare`, on the bound device."""
        return prepare(model, self.device)

    def run_model(self, model, inputs: Any, device: Any = "CPU", **kwargs: Any) -> tuple:
        """As :func:`run_model`, on the bound device."""
        return run_model(model, inputs, self.device)

    def run_node(self, node, inputs: Any, device: Any = "CPU", outputs_info=None, **kwargs: Any) -> tuple:
        """As :func:`run_node`, on the bound device."""
        return run_node(node, inputs, self.device, outputs_info, **kwargs)

    def supports_device(self, device: str) -> bool:
        """Only onnx's default "CPU" (which stands for the bound device)."""
        return str(device).upper() in _CPU_NAMES


def bound(device: Device) -> _Bound:
    """A backend (for ``onnx.backend.test.BackendTest``) that runs everything on ``device``,
    whatever device name onnx passes; it supports onnx's "CPU" only, so each test runs once."""
    return _Bound(device)

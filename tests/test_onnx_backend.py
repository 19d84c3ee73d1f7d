"""dmlwgsl.onnx_backend: onnx's own BackendTest for DepthToSpace, SpaceToDepth, ConvInteger, Resize
and Upsample on every adapter, graphs whose intermediates stay on the GPU, and the named refusals."""

import re

import numpy as np
import onnx
import pytest
from conftest import BACKENDS, get_device
from onnx import TensorProto, helper, numpy_helper
from onnx_node_cases import EXCLUDED, INCLUDE, backend_test_cases

from dmlwgsl import onnx_backend
from dmlwgsl.onnx_backend import OnnxResizeUnsupported, OnnxUnsupported
from dmlwgsl.ops.resample import LINEAR_TOLERANCE
from dmlwgsl.reference.depth_to_space import depth_to_space as ref_depth_to_space
from dmlwgsl.reference.resample import resample_antialias
from dmlwgsl.reference.space_to_depth import space_to_depth as ref_space_to_depth
from dmlwgsl.tensor import DataType
from dmlwgsl.testing import assert_matches

# onnx's node tests, once per adapter: OnnxBackendNodeModelTest_vulkan, ..._gl
for _backend in BACKENDS:
    globals().update(backend_test_cases(get_device(_backend), _backend, __name__))


def test_the_node_tests_are_all_there():
    """36 node tests run per adapter, 12 are excluded with their reason, no other test is in."""
    cls = globals()[f"OnnxBackendNodeModelTest_{BACKENDS[0]}"]
    names = sorted(a for a in vars(cls) if a.startswith("test_"))
    assert all(INCLUDE.search(n) for n in names)
    excluded = [n for n in names if any(re.search(p, n) for p in EXCLUDED)]
    ran = [n for n in names if n not in excluded]
    if onnx.__version__.startswith("1.23."):  # the counts of the onnx release this was written for
        assert len(excluded) == 12, excluded
        assert len(ran) == 36, ran
    for must in (
        "test_resize_downsample_scales_linear_antialias_cpu",
        "test_resize_downsample_sizes_linear_antialias_cpu",
        "test_resize_tf_crop_and_resize_cpu",
        "test_resize_tf_crop_and_resize_axes_2_3_cpu",
        "test_resize_upsample_sizes_nearest_not_larger_cpu",
        "test_resize_downsample_sizes_nearest_not_smaller_cpu",
        "test_upsample_nearest_cpu",
        "test_convinteger_with_padding_cpu",
        "test_spacetodepth_crd_mode_example_cpu",
        "test_spacetodepth_cpu",
    ):
        assert must in ran


def _model(nodes, inputs, outputs, initializers=(), opset=19):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def test_graph_keeps_intermediates_on_the_gpu(device, rng, monkeypatch):
    """SpaceToDepth -> DepthToSpace (CRD) -> antialiased Resize: one readback, for the one output."""
    x = rng.standard_normal((1, 2, 8, 12)).astype(np.float32)
    scales = numpy_helper.from_array(np.array([1, 1, 0.5, 1 / 3], np.float32), "scales")
    model = _model(
        [
            helper.make_node("SpaceToDepth", ["x"], ["a"], blocksize=2),
            helper.make_node("DepthToSpace", ["a"], ["b"], blocksize=2, mode="CRD"),
            helper.make_node("Resize", ["b", "", "scales"], ["y"], mode="linear", antialias=1),
        ],
        [_vi("x", TensorProto.FLOAT, x.shape)],
        [_vi("y", TensorProto.FLOAT, (1, 2, 4, 4))],
        [scales],
    )
    rep = onnx_backend.prepare(model, device)
    reads = []
    for name in ("read", "read_into"):  # every readback path of the Device
        real = getattr(device, name)
        monkeypatch.setattr(device, name, lambda *a, real=real, **k: reads.append(a) or real(*a, **k))
    (y,) = rep.run([x])
    assert len(reads) == 1
    b = ref_depth_to_space(ref_space_to_depth(x, 2, "DCR"), 2, "CRD")
    want = resample_antialias(b, (1, 2, 4, 4), (1, 1, 0.5, np.float32(1 / 3)), (0.5,) * 4, (-0.5,) * 4)
    atol, why = LINEAR_TOLERANCE[DataType.FLOAT32]
    assert_matches(y, want, atol=atol, why=why)
    (y2,) = rep.run({"x": x})  # compiled once, run again
    assert_matches(y2, y)


def test_run_node_and_module_backend(device):
    node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="DCR")
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)
    (y,) = onnx_backend.run_node(node, [x], device=device)
    assert_matches(y, ref_depth_to_space(x, 2, "DCR"))
    assert onnx_backend.supports_device("CPU") and not onnx_backend.supports_device("CUDA")


def _resize_model(**attrs):
    return _model(
        [helper.make_node("Resize", ["x", "roi", "scales"], ["y"], **attrs)],
        [_vi("x", TensorProto.FLOAT, (1, 1, 4, 4))],
        [_vi("y", TensorProto.FLOAT, (1, 1, 2, 2))],
        [
            numpy_helper.from_array(np.array([0, 0, -0.5, -0.5, 1, 1, 1.5, 1.5], np.float32), "roi"),
            numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], np.float32), "scales"),
        ],
    )


def test_what_directml_cannot_express_is_named(device):
    with pytest.raises(OnnxResizeUnsupported, match="Resize.mode: 'cubic'"):
        onnx_backend.prepare(_resize_model(mode="cubic"), device)
    with pytest.raises(OnnxResizeUnsupported, match="exclude_outside"):
        onnx_backend.prepare(_resize_model(mode="linear", exclude_outside=1), device)
    rep = onnx_backend.prepare(
        _resize_model(mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0),
        device,
    )
    with pytest.raises(OnnxResizeUnsupported, match="extrapolation_value"):
        rep.run([np.zeros((1, 1, 4, 4), np.float32)])
    relu = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [_vi("x", TensorProto.FLOAT, (2,))],
        [_vi("y", TensorProto.FLOAT, (2,))],
    )
    with pytest.raises(OnnxUnsupported, match="Relu"):
        onnx_backend.prepare(relu, device)
    assert not onnx_backend.is_compatible(relu)
    with pytest.raises(OnnxUnsupported, match="device: 'CUDA'"):
        onnx_backend.prepare(_resize_model(mode="linear"), "CUDA")


@pytest.mark.parametrize(
    "op, opset, attrs, extra_inputs",
    [
        ("Resize", 10, {"mode": "nearest"}, {"scales": np.array([1, 1, 2, 1.5], np.float32)}),
        ("Resize", 10, {"mode": "linear"}, {"scales": np.array([1, 1, 0.5, 2], np.float32)}),
        ("Upsample", 7, {"mode": "nearest", "scales": [1.0, 1.0, 2.0, 3.0]}, {}),
        ("Upsample", 9, {"mode": "nearest"}, {"scales": np.array([1, 1, 3, 2], np.float32)}),
        (
            "Resize",
            19,
            {"mode": "nearest", "coordinate_transformation_mode": "half_pixel_symmetric", "axes": [3, 2]},
            {"roi": np.zeros(0, np.float32), "scales": np.array([0.6, 1.7], np.float32)},
        ),
        (
            "Resize",
            19,
            {"mode": "linear", "antialias": 1, "keep_aspect_ratio_policy": "not_larger", "axes": [2, 3]},
            {"roi": np.zeros(0, np.float32), "scales": np.zeros(0, np.float32), "sizes": np.array([3, 5], np.int64)},
        ),
    ],
    ids=["resize10-nearest", "resize10-linear", "upsample7", "upsample9", "resize19-symmetric-axes", "antialias-axes"],
)
def test_older_opsets_and_attributes_match_onnx_reference(device, rng, op, opset, attrs, extra_inputs):
    """Resize-10 and Upsample (x = y / scale, nearest floor) and Resize-19 attributes against onnx's
    ReferenceEvaluator; parameters given as initializers."""
    from onnx.reference import ReferenceEvaluator

    x = (rng.integers(-512, 512, size=(1, 2, 6, 8)) / 64).astype(np.float32)
    names = list(extra_inputs)
    inits = [numpy_helper.from_array(v, k) for k, v in extra_inputs.items()]
    node = helper.make_node(op, ["x"] + names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [_vi("x", TensorProto.FLOAT, x.shape)], [helper.make_tensor_value_info("y", 1, None)], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    ref_model = model
    if op == "Resize" and opset == 10:
        # onnx's reference evaluates Resize-11+: the backend's Resize-10 is Resize-11 with x = y / scale
        # (asymmetric, as onnxruntime) and, for nearest, floor (Upsample's definition)
        from onnx import version_converter

        ref_model = version_converter.convert_version(model, 11)
        resize = next(n for n in ref_model.graph.node if n.op_type == "Resize")
        resize.attribute.append(helper.make_attribute("coordinate_transformation_mode", "asymmetric"))
        resize.attribute.append(helper.make_attribute("nearest_mode", "floor"))
    if op == "Upsample":  # onnx's reference has no Upsample-7; its definition: integer scales repeat
        want = x
        for axis, f in enumerate(attrs.get("scales", extra_inputs.get("scales"))):
            want = np.repeat(want, int(f), axis=axis)
    else:
        (want,) = ReferenceEvaluator(ref_model).run(None, {"x": x})
    (got,) = onnx_backend.DmlwgslRep(model, device).run([x])
    if attrs["mode"] == "nearest":
        assert_matches(got, want)
    else:
        assert_matches(got, want.astype(np.float32), atol=2e-5, why="float32 against onnx's float64, |values| < 8")


def test_convinteger_auto_pad_matches_onnx_reference(device, rng):
    from onnx.reference import ReferenceEvaluator

    x = rng.integers(0, 256, size=(1, 3, 7, 6), dtype=np.uint8)
    w = rng.integers(0, 256, size=(4, 3, 3, 2), dtype=np.uint8)
    for auto_pad in ("SAME_UPPER", "SAME_LOWER", "VALID"):
        node = helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], auto_pad=auto_pad, strides=[2, 1])
        model = _model(
            [node],
            [_vi("x", TensorProto.UINT8, x.shape), _vi("w", TensorProto.UINT8, w.shape)],
            [helper.make_tensor_value_info("y", TensorProto.INT32, ["n", "m", "h", "w"])],
            [numpy_helper.from_array(np.array(7, np.uint8), "xz")],
        )
        (want,) = ReferenceEvaluator(model).run(None, {"x": x, "w": w})
        (got,) = onnx_backend.prepare(model, device).run([x, w])
        assert_matches(got, want)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float16])
def test_antialias_other_types_match_onnx_reference(device, rng, dtype):
    """Resize-19 linear antialias on 8/16-bit tensors against onnx's ReferenceEvaluator (which
    rounds integers half to even and saturates, as the contract says)."""
    from onnx.reference import ReferenceEvaluator

    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
    if info is not None:
        x = rng.integers(info.min, info.max + 1, size=(1, 2, 12, 18)).astype(dtype)
    else:
        x = (rng.integers(-512, 512, size=(1, 2, 12, 18)) / 64).astype(dtype)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _model(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear", antialias=1)],
        [_vi("x", elem, x.shape)],
        [_vi("y", elem, (1, 2, 6, 6))],
        [numpy_helper.from_array(np.array([1, 1, 0.5, 1 / 3], np.float32), "scales")],
    )
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = onnx_backend.prepare(model, device).run([x])
    atol, why = LINEAR_TOLERANCE[DataType.from_numpy(np.dtype(dtype))]
    assert_matches(got, want, atol=atol, why=why)

"""SpaceToDepth / SpaceToDepth1 on every adapter: the documented examples (inverse of DepthToSpace's),
onnxruntime and onnx vectors, every data type x layout x order against the numpy reference
(exact, poisoned outputs, guard bands), the output-size doc bug, and every validation rule."""

import numpy as np
import pytest
from depth_space_cases import ALL_TYPES, LAYOUTS, check_op, onnx_cases
from test_depth_to_space import DOC_CRD, DOC_DCR, DOC_INPUT

import dmlwgsl
from dmlwgsl import DataType, DmlValidationError, SpaceToDepthDesc, TensorDesc
from dmlwgsl.ops.space_to_depth import compile_space_to_depth
from dmlwgsl.plan import Capabilities
from dmlwgsl.reference.space_to_depth import space_to_depth as ref
from dmlwgsl.testing import assert_matches, strided_desc


@pytest.mark.parametrize("order,space", [("DCR", DOC_DCR), ("CRD", DOC_CRD)])
def test_documented_example(device, order, space):
    # The docs' SpaceToDepth(1) examples are the exact inverse of the DepthToSpace ones, and
    # {1,2,4,6} -> {1,8,2,3} shows the real output rule {N, C*b*b, H/b, W/b} (spec 2.4).
    assert_matches(dmlwgsl.space_to_depth(space, 2, order, device=device), DOC_INPUT)
    assert_matches(ref(space, 2, order), DOC_INPUT)


def test_onnxruntime_block3_vector(device):
    # onnxruntime SpaceToDepthTest_2: N=2, C=3, H=3, W=6 arange, block 3 -> {2, 27, 1, 2}
    x = np.arange(2 * 3 * 3 * 6, dtype=np.float32).reshape(2, 3, 3, 6)
    n, c, h, w = x.shape
    want = x.reshape(n, c, h // 3, 3, w // 3, 3).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * 9, h // 3, w // 3)
    got = dmlwgsl.space_to_depth(x, 3, device=device)
    assert got.shape == (2, 27, 1, 2)
    assert_matches(got, want)


@pytest.mark.parametrize("case", onnx_cases("test_spacetodepth", "SpaceToDepth"), ids=lambda c: c[0])
def test_onnx_node(device, case):
    _, b, mode, x, want = case
    assert_matches(dmlwgsl.space_to_depth(x, b, mode, device=device), want)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda d: d.name.lower())
@pytest.mark.parametrize("order", ["DCR", "CRD"])
def test_every_type_and_layout(device, rng, dtype, order):
    for (lin, lout), (shape, b) in zip(
        LAYOUTS,
        [
            ((2, 2, 6, 32), 2),
            ((1, 2, 6, 9), 3),
            ((2, 3, 4, 6), 2),
            ((1, 1, 8, 16), 4),
            ((3, 2, 4, 64), 2),
            ((1, 3, 2, 10), 2),
        ],
    ):
        check_op(device, "space_to_depth", dtype, shape, b, order, rng, lin=lin, lout=lout)


@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32, DataType.INT64], ids=lambda d: d.name.lower()
)
@pytest.mark.parametrize("b", [2, 3, 4, 8])
def test_fast_path_shapes(device, rng, dtype, b):
    """Rows of whole 16-byte vectors: the plan's choice (the tiled kernel at every block it has), the
    tiled kernel and the row kernel at an odd output offset, each requested by name; exact."""
    shape = (2, 2, 3 * b, 32 * b)
    for order in ("DCR", "CRD"):
        for kernel, offsets in ((None, (16, 64)), ("tiled", (16, 64)), ("rows", (16, 72))):
            op = check_op(
                device,
                "space_to_depth",
                dtype,
                shape,
                b,
                order,
                rng,
                kernel=kernel,
                input_offset=offsets[0],
                output_offset=offsets[1],
            )
            # measured (plan_depth_space's _choose): GPU and CPU adapters alike take the tiled kernel
            default = "tiled"
            assert op.plan.kernels[0] == f"space_to_depth_{kernel or default}"


@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.INT16, DataType.UINT32, DataType.INT64], ids=lambda d: d.name.lower()
)
def test_row_kernel_long_and_odd_rows(device, rng, dtype):
    """The row kernel with long rows, odd and prime widths, block sizes 3, 5 and 8, NHWC and
    broadcast inputs, window outputs; and the split past a tight binding limit."""

    caps = Capabilities.from_device(device)
    limit = 8192 * dtype.size_in_bytes
    tight = caps.with_binding_limit(limit)
    cases = [
        ((4, 1, 6, 603), 3, "packed", "packed"),
        ((2, 3, 5, 35), 5, "nhwc", "window"),
        ((2, 2, 8, 296), 8, "broadcast", "packed"),
    ]
    for shape, b, lin, lout in cases:
        for order in ("DCR", "CRD"):
            for capabilities in (None, tight):
                op = check_op(
                    device,
                    "space_to_depth",
                    dtype,
                    shape,
                    b,
                    order,
                    rng,
                    lin=lin,
                    lout=lout,
                    capabilities=capabilities,
                    kernel="rows",  # (a CPU adapter's plan would take the packed gather for 8-bit rows)
                )
                assert op.plan.kernels[0].startswith("space_to_depth_rows")


def test_hypothesis_shapes(device):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=12, deadline=None, derandomize=True)
    @given(
        n=st.integers(1, 2),
        c=st.integers(1, 3),
        h=st.integers(1, 3),
        w=st.integers(1, 5),
        b=st.integers(1, 4),
        order=st.sampled_from(["DCR", "CRD"]),
        dtype=st.sampled_from(ALL_TYPES),
        pattern=st.sampled_from(["packed", "nhwc", "padded", "broadcast"]),
    )
    def run(n, c, h, w, b, order, dtype, pattern):
        rng = np.random.default_rng(n * 1000 + c * 100 + h * 10 + w)
        check_op(device, "space_to_depth", dtype, (n, c, h * b, w * b), b, order, rng, lin=pattern)

    run()


F32 = DataType.FLOAT32


@pytest.mark.parametrize(
    "inp,out,b,message",
    [
        (
            TensorDesc(F32, (1, 2, 3, 6)),
            TensorDesc(F32, (1, 8, 1, 3)),
            2,
            "input.sizes[2]: height (3) must be divisible by block_size (2)",
        ),
        (
            TensorDesc(F32, (1, 2, 4, 5)),
            TensorDesc(F32, (1, 8, 2, 2)),
            2,
            "input.sizes[3]: width (5) must be divisible by block_size (2)",
        ),
        # the documented (buggy) DepthToSpace-style output shape is refused with the real rule
        (
            TensorDesc(F32, (1, 8, 4, 6)),
            TensorDesc(F32, (1, 2, 8, 12)),
            2,
            "output.sizes: must be [N, C*b*b, H/b, W/b] = [1, 32, 2, 3]",
        ),
        (
            TensorDesc(F32, (1, 2, 4, 6)),
            TensorDesc(DataType.INT32, (1, 8, 2, 3)),
            2,
            "output.data_type: must equal input.data_type",
        ),
        (TensorDesc(F32, (1, 2, 4, 6)), TensorDesc(F32, (1, 8, 2, 3)), -1, "block_size: must be an integer >= 1"),
        (TensorDesc(F32, (2, 4, 6)), TensorDesc(F32, (8, 2, 3)), 2, "input.sizes: dimension count must be in [4]"),
    ],
)
def test_validation(inp, out, b, message):
    with pytest.raises(DmlValidationError) as e:
        compile_space_to_depth(SpaceToDepthDesc(inp, out, b))
    assert message in str(e.value)


def test_whole_output_buffer_equals_strided_reference(device, rng):
    from dmlwgsl.reference.space_to_depth import space_to_depth_buffers
    from dmlwgsl.testing import random_bytes

    for dtype in (DataType.INT8, DataType.UINT16, DataType.FLOAT32):
        ind = strided_desc(dtype, (2, 2, 6, 4), "padded")
        outd = strided_desc(dtype, (2, 8, 3, 2), "nhwc", output=True)
        src = random_bytes(ind, rng)
        op = compile_space_to_depth(SpaceToDepthDesc(ind, outd, 2, "DCR"), device=device)
        buf = device.create_buffer(outd.total_tensor_size_in_bytes)
        device.fill(buf, b"\xa5")
        op(dmlwgsl.GpuTensor(device, ind, device.upload(src).buffer, 0), dmlwgsl.GpuTensor(device, outd, buf, 0))
        got = np.frombuffer(device.read(buf, 0, outd.total_tensor_size_in_bytes), np.uint8)
        want = space_to_depth_buffers(
            src, ind, np.full(outd.total_tensor_size_in_bytes, 0xA5, np.uint8), outd, 2, "DCR"
        )
        assert_matches(got, want)

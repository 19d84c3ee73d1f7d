"""DepthToSpace / DepthToSpace1 on every adapter: documented examples, onnxruntime and onnx
vectors, every data type x layout x order against the numpy reference (exact, poisoned outputs,
guard bands), batching and GPU-resident chains, the pipeline cache, and every validation rule."""

import numpy as np
import pytest
from depth_space_cases import ALL_TYPES, LAYOUTS, check_op, check_row_cases, onnx_cases

import dmlwgsl
from dmlwgsl import DataType, DepthSpaceOrder, DepthToSpaceDesc, DmlValidationError, TensorDesc
from dmlwgsl.ops.depth_to_space import compile_depth_to_space
from dmlwgsl.plan import Capabilities, PlanError
from dmlwgsl.reference.depth_to_space import depth_to_space as ref
from dmlwgsl.testing import assert_matches, strided_desc

# Spec 2.6: the documented {1,8,2,3} UINT32 example, block size 2.
DOC_INPUT = np.array(
    [
        [
            [[0, 1, 2], [3, 4, 5]],
            [[9, 10, 11], [12, 13, 14]],
            [[18, 19, 20], [21, 22, 23]],
            [[27, 28, 29], [30, 31, 32]],
            [[36, 37, 38], [39, 40, 41]],
            [[45, 46, 47], [48, 49, 50]],
            [[54, 55, 56], [57, 58, 59]],
            [[63, 64, 65], [66, 67, 68]],
        ]
    ],
    dtype=np.uint32,
)
DOC_DCR = np.array(
    [
        [
            [[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56], [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
            [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65], [12, 30, 13, 31, 14, 32], [48, 66, 49, 67, 50, 68]],
        ]
    ],
    dtype=np.uint32,
)
DOC_CRD = np.array(
    [
        [
            [[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29], [3, 12, 4, 13, 5, 14], [21, 30, 22, 31, 23, 32]],
            [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65], [39, 48, 40, 49, 41, 50], [57, 66, 58, 67, 59, 68]],
        ]
    ],
    dtype=np.uint32,
)


@pytest.mark.parametrize("order,expected", [("DCR", DOC_DCR), ("CRD", DOC_CRD)])
def test_documented_example(device, order, expected):
    assert_matches(dmlwgsl.depth_to_space(DOC_INPUT, 2, order, device=device), expected)
    assert_matches(ref(DOC_INPUT, 2, order), expected)


def test_onnxruntime_crd_vector(device):
    # onnxruntime DepthToSpaceTest_5 (spec section 6)
    x = np.array(
        [0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 13, 14, 18, 19, 20, 21, 22, 23, 27, 28, 29, 30, 31, 32], dtype=np.float32
    ).reshape(1, 4, 2, 3)
    want = np.array(
        [0, 9, 1, 10, 2, 11, 18, 27, 19, 28, 20, 29, 3, 12, 4, 13, 5, 14, 21, 30, 22, 31, 23, 32], dtype=np.float32
    ).reshape(1, 1, 4, 6)
    assert_matches(dmlwgsl.depth_to_space(x, 2, "CRD", device=device), want)


def test_onnx_definition_block3(device, rng):
    # ONNX's own definition (reshape/transpose), block size 3, both modes, double precision.
    x = rng.standard_normal((2, 18, 3, 4))
    n, c, h, w = x.shape
    dcr = x.reshape(n, 3, 3, c // 9, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // 9, h * 3, w * 3)
    crd = x.reshape(n, c // 9, 3, 3, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // 9, h * 3, w * 3)
    assert_matches(dmlwgsl.depth_to_space(x, 3, "DCR", device=device), dcr)
    assert_matches(dmlwgsl.depth_to_space(x, 3, "CRD", device=device), crd)


@pytest.mark.parametrize("case", onnx_cases("test_depthtospace", "DepthToSpace"), ids=lambda c: c[0])
def test_onnx_node(device, case):
    _, b, mode, x, want = case
    assert_matches(dmlwgsl.depth_to_space(x, b, mode, device=device), want)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda d: d.name.lower())
@pytest.mark.parametrize("order", ["DCR", "CRD"])
def test_every_type_and_layout(device, rng, dtype, order):
    """Every data type x order through every stride pattern (packed, NHWC, padded, broadcast input,
    output window), on shapes that take the fast path and shapes that do not."""
    for (lin, lout), (shape, b) in zip(
        LAYOUTS,
        [
            ((2, 8, 3, 16), 2),
            ((1, 18, 2, 5), 3),
            ((2, 4, 3, 7), 2),
            ((1, 16, 2, 4), 4),
            ((3, 4, 2, 32), 2),
            ((1, 8, 5, 3), 2),
        ],
    ):
        check_op(device, "depth_to_space", dtype, shape, b, order, rng, lin=lin, lout=lout)


@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32, DataType.INT64], ids=lambda d: d.name.lower()
)
@pytest.mark.parametrize("b", [2, 3, 4, 8])
def test_fast_path_shapes(device, rng, dtype, b):
    """Rows of whole 16-byte vectors: the plan's choice, the tiled kernel, the tiled kernel with
    staged stores and the row kernel, each requested by name; results stay exact. Tensors placed
    at 16-byte offsets keep the aligned paths; the row kernel also runs at an odd offset."""
    shape = (2, 2 * b * b, 3, 32)
    for order in ("DCR", "CRD"):
        for kernel, offsets in (
            (None, (16, 64)),
            ("tiled", (16, 64)),
            ("tiled_staged", (16, 64)),
            ("rows", (16, 64)),
            ("rows", (16, 72)),
        ):
            op = check_op(
                device,
                "depth_to_space",
                dtype,
                shape,
                b,
                order,
                rng,
                kernel=kernel,
                input_offset=offsets[0],
                output_offset=offsets[1],
            )
            # unasked (_choose, measured): zip at block 2; a CPU adapter the tiled kernel; a GPU
            # the staged tiled kernel for tiles of at most 16 bytes a row, else rows
            if b == 2:
                auto = "zip"
            elif Capabilities.from_device(device).is_cpu:
                auto = "tiled"
            else:
                auto = "tiled_staged" if b * dtype.size_in_bytes <= 16 else "rows"
            assert op.plan.kernels == [f"depth_to_space_{kernel or auto}"]


@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.UINT16, DataType.FLOAT32, DataType.FLOAT64], ids=lambda d: d.name.lower()
)
def test_row_kernel_long_and_odd_rows(device, rng, dtype):
    """The row kernel with several 16-byte blocks a thread (long rows), odd and prime widths
    (unaligned rows: the edge pass), block sizes 3, 5 and 8, and NHWC / broadcast inputs."""
    cases = [
        ((1, 9, 2, 401), 3, "packed", "packed"),
        ((2, 25, 3, 7), 5, "nhwc", "window"),
        ((1, 64, 2, 37), 8, "broadcast", "packed"),
    ]
    for shape, b, lin, lout in cases:
        for order in ("DCR", "CRD"):
            op = check_op(device, "depth_to_space", dtype, shape, b, order, rng, lin=lin, lout=lout, kernel="rows")
            assert op.plan.kernels[0] == "depth_to_space_rows"


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize("dtype", [DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32], ids=lambda d: d.name.lower())
def test_row_kernel_gpu_splits(device, rng, op_name, dtype):
    """The row kernel as a GPU plans it (h100 record, planned here and run on this adapter): rows
    of 9-66 blocks split by thread slots (_row_threads: 2-16 threads a row, 3-7 blocks a thread),
    odd widths (edge pass), output windows, both orders; exact against the reference."""
    caps = Capabilities.profile("h100")
    eb = dtype.size_in_bytes
    rows = ((9, 2, "packed"), (17, 3, "window"), (24, 4, "packed"), (33, 2, "window"), (66, 3, "packed"))
    for blocks, b, lout in rows:
        out_w = (blocks * 16 - 5) // eb // b * b  # an output row of ~blocks 16-byte blocks, a multiple of b
        shape = (1, 2 * b * b, 3, out_w // b) if op_name == "depth_to_space" else (1, 2, 3 * b, out_w * b)
        for order in ("DCR", "CRD"):
            op = check_op(device, op_name, dtype, shape, b, order, rng, lout=lout, kernel="rows", capabilities=caps)
            assert op.plan.steps[0].constants_dict["BPT"] > 1 or blocks < 9


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32, DataType.INT64], ids=lambda d: d.name.lower()
)
def test_rows_packed_kernel(device, rng, op_name, dtype):
    """packed_rows_body (a packed output's rows in memory order, one thread per 16-byte block across
    the rows it spans, stored whole): rows of 1-13 elements at blocks 2, 3, 5 and 8, packed,
    broadcast, NHWC and padded inputs, outputs at offsets that leave the tensor's first and last
    blocks partial (their other bytes kept), both orders; exact under poison and guards. GPU plans
    take it for rows of 9-31 bytes into packed outputs, and 8/16-bit rows of any length that would
    take the staged kernel or DepthToSpace's row kernel and edge pass; a window output is refused by name (a split
    in tests/test_plan_depth_space.py)."""
    eb = dtype.size_in_bytes
    cases = [((2, 12, 3, 1), 2, "packed"), ((1, 18, 5, 3), 3, "broadcast"), ((2, 50, 2, 2), 5, "nhwc")]
    cases += [((1, 64, 3, 5), 8, "padded"), ((3, 8, 2, 13), 2, "packed"), ((1, 27, 4, 7), 3, "nhwc")]
    # rows of 45-63 elements at blocks 5 and 7 (GPU plans take it for 8/16-bit DepthToSpace rows of
    # any length off 16-byte boundaries, and where they would take the staged kernel)
    cases += [((1, 49, 2, 9), 7, "packed"), ((2, 25, 3, 9), 5, "broadcast")]
    ops = []
    for shape, b, lin in cases:
        if op_name == "space_to_depth":
            shape = (shape[0], shape[1] // (b * b), shape[2] * b, shape[3] * b)
        for order, offset in (("DCR", 37), ("CRD", 16)):
            off = offset - offset % eb
            ops.append(
                check_op(device, op_name, dtype, shape, b, order, rng, lin=lin, output_offset=off, kernel="rows_packed")
            )
    assert all(op.plan.kernels == [f"{op_name}_rows_packed"] for op in ops)
    shape = (1, 8, 2, 5) if op_name == "depth_to_space" else (1, 2, 4, 10)
    with pytest.raises(PlanError, match="the output must be packed"):
        check_op(device, op_name, dtype, shape, 2, "DCR", rng, lout="window", kernel="rows_packed")


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize("fused", [True, False], ids=["edges_fused", "edges_pass"])
@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32, DataType.INT64], ids=lambda d: d.name.lower()
)
def test_rows_tiled_kernel(device, rng, monkeypatch, op_name, dtype, fused):
    """The tiled row kernels (16-byte input runs loaded at any alignment: DepthToSpace's threads
    interleave `block` of them into `block` whole output blocks, stored through workgroup memory;
    SpaceToDepth's take lane 0 of their deinterleave for one or two blocks, strided by the row's
    threads) at blocks 2, 3, 4 and 8: odd and prime widths, rows shorter than a block, output
    windows at odd offsets, broadcast and padded inputs, long rows over several workgroups, rows of
    whole vectors (no edges), and the split past a tight binding limit; the edge pass in the same
    dispatch (ROW_EDGES, under ROWS_TILED_FUSE_BYTES) or as a second one; both orders, exact under
    poison and guards. GPU plans take them for 1- and 2-byte elements; every element size runs them
    when requested."""
    import dmlwgsl.ops._permute as permute

    monkeypatch.setattr(permute, "ROWS_TILED_FUSE_BYTES", 1 << 40 if fused else 0)
    caps = Capabilities.from_device(device)
    tight = caps.with_binding_limit(2048 * dtype.size_in_bytes)
    cases = [  # DepthToSpace input shapes (SpaceToDepth's outputs), block, layouts, output offset in bytes, split
        ((2, 8, 5, 29), 2, "packed", "window", 67, True),
        ((1, 18, 4, 67), 3, "broadcast", "packed", 41, False),
        ((2, 32, 3, 13), 4, "padded", "packed", 13, False),
        ((1, 128, 2, 7), 8, "packed", "window", 35, False),
        ((1, 64, 2, 41), 8, "packed", "packed", 9, False),  # SpaceToDepth: two blocks a thread (b8)
        ((1, 4, 2, 5), 2, "packed", "packed", 9, False),  # rows of 5-10 elements: no whole block for 1 byte
        ((1, 9, 1, 16 * 70 + 3), 3, "packed", "packed", 16, False),  # one row over several workgroups
        ((1, 16, 3, 32), 4, "packed", "packed", 64, False),  # rows of whole vectors: no edges
    ]
    ops = check_row_cases(device, rng, op_name, dtype, cases, "rows_tiled", tight)
    kernels = {k.split("[")[0] for op in ops for k in op.plan.kernels}
    assert kernels == ({f"{op_name}_rows_tiled"} | (set() if fused else {f"{op_name}_row_edges"}))
    assert any(op.plan.steps[0].constants_dict["ROW_EDGES"] == int(fused) for op in ops)
    assert any(k.endswith("[1]") for op in ops for k in op.plan.kernels)  # the tight record splits the first case
    if op_name == "space_to_depth":
        assert {op.plan.steps[0].constants_dict["BPT"] for op in ops} == {1, 2}


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize(
    "dtype",
    [
        DataType.UINT8,
        DataType.FLOAT16,
        DataType.INT16,
        DataType.FLOAT32,
        DataType.INT32,
        DataType.FLOAT64,
        DataType.INT64,
    ],
    ids=lambda d: d.name.lower(),
)
def test_row_words_kernel(device, rng, op_name, dtype):
    """The word-store row kernel (plain word stores for 4- and 8-byte elements; whole words and
    atomically merged end words for 1- and 2-byte ones) on rows that start and end anywhere: odd
    and prime widths, output windows, NHWC and broadcast inputs, block sizes 2-8, an output at an
    8-byte offset, long rows (several chunks a thread), and the split past a tight binding limit;
    exact under poison and guards. Its automatic choice: CPU adapters, rows off 16-byte boundaries
    (1- and 2-byte elements: rows shorter than SHORT_ROW_BYTES)."""

    caps = Capabilities.from_device(device)
    tight = caps.with_binding_limit(1024 * dtype.size_in_bytes)
    d2s = op_name == "depth_to_space"
    entry = f"{op_name}_row_words" + ("_shared" if dtype.size_in_bytes < 4 else "")
    cases = [  # DepthToSpace input shapes; SpaceToDepth takes their DepthToSpace outputs as input
        ((4, 4, 6, 29), 2, "packed", "window", 64, True),
        ((2, 9, 5, 27), 3, "nhwc", "packed", 72, False),
        ((2, 16, 2, 5), 4, "broadcast", "padded", 64, False),
        ((2, 64, 3, 3), 8, "packed", "window", 64, False),
        ((1, 4, 2, 301), 2, "packed", "packed", 72, False),  # long rows: several chunks a thread
    ]
    ops = check_row_cases(device, rng, op_name, dtype, cases, "row_words", tight)
    assert all({k.split("[")[0] for k in op.plan.kernels} == {entry} for op in ops)
    assert any(op.plan.dispatches > 1 for op in ops)  # the tight record splits the first case into windowed steps
    # chosen unasked on a CPU adapter where the rows are off 16-byte boundaries (rows of 15 and 7
    # elements: off them for 4- and 8-byte elements alike)
    auto_shape, auto_b = ((2, 9, 3, 5), 3) if d2s else ((2, 1, 6, 14), 2)
    op = check_op(device, op_name, dtype, auto_shape, auto_b, "DCR", rng)
    want = [entry] if caps.is_cpu else [f"{op_name}_rows", f"{op_name}_row_edges"]
    assert op.plan.kernels == want


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize(
    "dtype",
    [DataType.UINT8, DataType.FLOAT16, DataType.INT16, DataType.FLOAT32, DataType.INT32, DataType.INT64],
    ids=lambda d: d.name.lower(),
)
def test_staged_kernel(device, rng, op_name, dtype):
    """The staged row kernel (input words staged in workgroup memory, output words built from
    there): many groups a workgroup (short rows), rows chunked across workgroups (long rows, each
    chunk a multiple of 16 bytes of run), odd and prime widths, output windows and odd output
    offsets (end words merged with atomics), broadcast inputs, block sizes 2-8, and the split past a
    tight binding limit; exact under poison and guards. An NHWC input is refused by name."""

    from dmlwgsl.plan import PlanError

    caps = Capabilities.from_device(device)
    tight = caps.with_binding_limit(1024 * dtype.size_in_bytes)
    d2s = op_name == "depth_to_space"
    cases = [  # DepthToSpace input shapes; SpaceToDepth takes their DepthToSpace outputs as input
        ((4, 4, 6, 29), 2, "packed", "window", 64, True),
        ((2, 9, 5, 27), 3, "broadcast", "packed", 73, False),
        ((2, 16, 2, 5), 4, "packed", "padded", 66, False),
        ((2, 64, 3, 3), 8, "packed", "window", 64, False),
        ((1, 4, 1, 9001), 2, "packed", "packed", 72, False),  # long rows: chunks of one row
        ((1, 25, 1, 700), 5, "packed", "window", 61, False),
    ]
    ops = check_row_cases(device, rng, op_name, dtype, cases, "staged", tight)
    assert all({k.split("[")[0] for k in op.plan.kernels} == {f"{op_name}_staged"} for op in ops)
    assert any(op.plan.dispatches > 1 for op in ops)
    assert any(op.plan.steps[0].uniforms_dict["chunks"] > 1 for op in ops)
    with pytest.raises(PlanError, match="w stride must be 1"):
        shape = (2, 9, 5, 27) if d2s else (2, 2, 15, 81)
        check_op(device, op_name, dtype, shape, 3, "DCR", rng, lin="nhwc", kernel="staged")


def test_hypothesis_shapes(device):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=12, deadline=None, derandomize=True)
    @given(
        n=st.integers(1, 2),
        cq=st.integers(1, 3),
        h=st.integers(1, 4),
        w=st.integers(1, 9),
        b=st.integers(1, 4),
        order=st.sampled_from(["DCR", "CRD"]),
        dtype=st.sampled_from(ALL_TYPES),
        pattern=st.sampled_from(["packed", "nhwc", "padded", "broadcast"]),
    )
    def run(n, cq, h, w, b, order, dtype, pattern):
        rng = np.random.default_rng(n * 1000 + cq * 100 + h * 10 + w)
        shape = (n, cq * b * b, h, w)
        check_op(device, "depth_to_space", dtype, shape, b, order, rng, lin=pattern)

    run()


def test_numpy_views_without_copy(device, rng):
    """Non-contiguous numpy views (transposes, slices, broadcasts) go in as DML strides."""
    base = rng.standard_normal((2, 5, 9, 16)).astype(np.float32)
    nhwc = np.ascontiguousarray(base.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)[:, :4]  # (2,4,9,16)
    for view in (nhwc, base[:, 1:5, ::2, :], np.broadcast_to(base[:1, :4], (3, 4, 9, 16))):
        assert_matches(dmlwgsl.depth_to_space(view, 2, device=device), ref(np.ascontiguousarray(view), 2, "DCR"))


def test_round_trip_on_gpu_in_one_batch(device, rng):
    """SpaceToDepth(DepthToSpace(x)) == x with GPU-resident tensors and one submission."""
    x = rng.integers(-(2**15), 2**15, size=(2, 16, 6, 8)).astype(np.int16)
    for order in ("DCR", "CRD"):
        xt = device.upload(x)
        d2s = dmlwgsl.compile_depth_to_space(
            DepthToSpaceDesc(xt.desc, TensorDesc(DataType.INT16, (2, 4, 12, 16)), 2, order), device=device
        )
        s2d = dmlwgsl.compile_space_to_depth(
            dmlwgsl.SpaceToDepthDesc(d2s.output_desc, xt.desc, 2, order), device=device
        )
        mid, back = device.tensor(d2s.output_desc), device.tensor(xt.desc)
        device.fill(mid.buffer, b"\xa5")
        device.fill(back.buffer, b"\x5a")
        with device.batch():
            d2s(xt, mid)
            s2d(mid, back)
        assert_matches(back.numpy(), x)
        assert_matches(mid.numpy(), ref(x, 2, order))


def test_two_shapes_compile_once(device):
    f32 = DataType.FLOAT32
    before = device.pipelines.misses
    ops = [
        compile_depth_to_space(
            DepthToSpaceDesc(TensorDesc(f32, s), TensorDesc(f32, (s[0], s[1] // 4, s[2] * 2, s[3] * 2)), 2),
            device=device,
        )
        for s in [(1, 4, 3, 5), (2, 8, 7, 3), (3, 12, 1, 9)]
    ]
    # every shape has unaligned rows: the row kernel and its edge pass (on a CPU adapter the
    # word-store row kernel alone), compiled once for all three
    cpu = Capabilities.from_device(device).is_cpu
    want = ["depth_to_space_row_words"] if cpu else ["depth_to_space_rows", "depth_to_space_row_edges"]
    assert all(op.plan.kernels == want for op in ops)
    assert device.pipelines.misses - before <= len(want)
    assert len({k for op in ops for k in op.cache_keys}) == len(want)
    assert "depth_to_space" in ops[0].cache_keys[0] and "ELEM_BYTES=4" in ops[0].cache_keys[0]


def test_order_accepts_enum_and_strings(device):
    x = DOC_INPUT
    for o in (DepthSpaceOrder.COLUMN_ROW_DEPTH, 1, "crd", "COLUMN_ROW_DEPTH"):
        assert_matches(dmlwgsl.depth_to_space(x, 2, o, device=device), DOC_CRD)


# ---- validation: one test per rule, each naming the field -------------------------------------
F32, U8 = DataType.FLOAT32, DataType.UINT8


def _compile(inp, out, b=2, order="DCR", device=None):
    return compile_depth_to_space(DepthToSpaceDesc(inp, out, b, order), device=device)


@pytest.mark.parametrize(
    "inp,out,b,order,message",
    [
        (
            TensorDesc(F32, (1, 8, 2, 3)),
            TensorDesc(U8, (1, 2, 4, 6)),
            2,
            "DCR",
            "output.data_type: must equal input.data_type",
        ),
        (
            TensorDesc(F32, (8, 2, 3)),
            TensorDesc(F32, (2, 4, 6)),
            2,
            "DCR",
            "input.sizes: dimension count must be in [4]",
        ),
        (TensorDesc(F32, (1, 8, 2, 3)), TensorDesc(F32, (1, 2, 4, 6)), 0, "DCR", "block_size: must be an integer >= 1"),
        (
            TensorDesc(F32, (1, 6, 2, 3)),
            TensorDesc(F32, (1, 1, 4, 6)),
            2,
            "DCR",
            "input.sizes[1]: channels (6) must be divisible by block_size^2 (4)",
        ),
        (
            TensorDesc(F32, (1, 8, 2, 3)),
            TensorDesc(F32, (1, 2, 4, 7)),
            2,
            "DCR",
            "output.sizes: must be [N, C/(b*b), H*b, W*b] = [1, 2, 4, 6]",
        ),
        (
            TensorDesc(F32, (1, 8, 2, 3), (48, 6, 3, 1), total_tensor_size_in_bytes=64),
            TensorDesc(F32, (1, 2, 4, 6)),
            2,
            "DCR",
            "input.total_tensor_size_in_bytes: must be >= the implied size 192",
        ),
        (TensorDesc(F32, (1, 8, 2, 3)), TensorDesc(F32, (1, 2, 4, 6)), 2, "XYZ", "order: unknown order 'XYZ'"),
        (
            TensorDesc(F32, (1, 8, 2, 3)),
            TensorDesc(F32, (1, 2, 4, 6), (48, 0, 6, 1)),
            2,
            "DCR",
            "output.strides: two elements of an output may not share an address",
        ),
        (TensorDesc(F32, (1, 8, 0, 3)), TensorDesc(F32, (1, 2, 0, 6)), 2, "DCR", "input.sizes[2]: a size of zero"),
        (
            TensorDesc(F32, (1, 8, 2, 3), total_tensor_size_in_bytes=194),
            TensorDesc(F32, (1, 2, 4, 6)),
            2,
            "DCR",
            "input.total_tensor_size_in_bytes: must be a multiple of 4",
        ),
        (
            TensorDesc(DataType.UINT4, (1, 8, 2, 4)),
            TensorDesc(DataType.UINT4, (1, 2, 4, 8)),
            2,
            "DCR",
            "input.data_type: UINT4 is not supported",
        ),
    ],
)
def test_validation(inp, out, b, order, message):
    with pytest.raises(DmlValidationError) as e:
        _compile(inp, out, b, order)
    assert message in str(e.value)


def test_validation_binding_beyond_buffer(device):
    op = _compile(TensorDesc(F32, (1, 8, 2, 3)), TensorDesc(F32, (1, 2, 4, 6)), device=device)
    small = dmlwgsl.GpuTensor(device, op.input_desc, device.create_buffer(64), 0)
    with pytest.raises(
        DmlValidationError, match=r"input: offset 0 \+ total_tensor_size_in_bytes 192 lies beyond the bound buffer"
    ):
        op(small, device.tensor(op.output_desc))


def test_validation_shared_buffer(device):
    op = _compile(TensorDesc(F32, (1, 8, 2, 3)), TensorDesc(F32, (1, 2, 4, 6)), device=device)
    buf = device.create_buffer(1024)
    with pytest.raises(DmlValidationError, match="output shares a wgpu buffer"):
        op(dmlwgsl.GpuTensor(device, op.input_desc, buf, 0), dmlwgsl.GpuTensor(device, op.output_desc, buf, 512))


def test_past_the_binding_limit(device, rng):
    """A tighter binding limit than the device's (a capabilities record): the plan splits the work
    into boxes of (n, c, h) that bind windows of the tensors; results stay exact on every path."""

    tight = Capabilities.from_device(device).with_binding_limit(4096)
    for dtype, shape, b, lin, lout, kernel in [
        (DataType.FLOAT32, (4, 8, 4, 32), 2, "packed", "packed", None),
        (DataType.UINT8, (3, 18, 5, 33), 3, "packed", "window", None),
        (DataType.FLOAT16, (2, 8, 6, 40), 2, "nhwc", "packed", None),
        (DataType.INT64, (2, 8, 3, 16), 2, "packed", "packed", "tiled"),
        (DataType.INT16, (4, 8, 6, 40), 2, "packed", "nhwc", None),
    ]:
        for order in ("DCR", "CRD"):
            op = check_op(
                device,
                "depth_to_space",
                dtype,
                shape,
                b,
                order,
                rng,
                lin=lin,
                lout=lout,
                kernel=kernel,
                capabilities=tight,
            )
            assert op.plan.dispatches > 1 and all(s.windows for s in op.plan.steps)
            assert all(length <= 4096 for s in op.plan.steps for _, _, length in s.windows)


def test_one_liner_validates_before_gpu_work():
    with pytest.raises(DmlValidationError, match="channels"):
        dmlwgsl.depth_to_space(np.zeros((1, 3, 2, 2), np.float32), 2, device=object())


def test_whole_output_buffer_equals_strided_reference(device, rng):
    """Strided input and a strided output window: the GPU's entire output buffer, gaps included,
    equals the buffer the numpy reference writes into the same poisoned bytes."""
    from dmlwgsl.reference.depth_to_space import depth_to_space_buffers
    from dmlwgsl.testing import random_bytes

    for dtype in (DataType.UINT8, DataType.FLOAT16, DataType.INT64):
        ind = strided_desc(dtype, (2, 8, 3, 5), "nhwc")
        outd = strided_desc(dtype, (2, 2, 6, 10), "window", output=True)
        src = random_bytes(ind, rng)
        op = compile_depth_to_space(DepthToSpaceDesc(ind, outd, 2, "CRD"), device=device)
        buf = device.create_buffer(outd.total_tensor_size_in_bytes)
        device.fill(buf, b"\x5a")
        op(dmlwgsl.GpuTensor(device, ind, device.upload(src).buffer, 0), dmlwgsl.GpuTensor(device, outd, buf, 0))
        got = np.frombuffer(device.read(buf, 0, outd.total_tensor_size_in_bytes), np.uint8)
        want = depth_to_space_buffers(
            src, ind, np.full(outd.total_tensor_size_in_bytes, 0x5A, np.uint8), outd, 2, "CRD"
        )
        assert_matches(got, want)


@pytest.mark.slow
def test_tensor_past_the_real_binding_limit(device, rng):
    """An input and output 16 MiB larger than the adapter's binding limit (lavapipe, GL: 128 MiB):
    the one-liners split the work into windows. Checked against the reference on crops spread over
    the whole tensor (DepthToSpace commutes with spatial crops), and exactly by the round trip."""
    limit = device.max_binding_size
    if limit > 256 << 20:
        pytest.skip(f"binding limit {limit} bytes: a tensor past it is too large for a test")
    n = -(-(limit + (16 << 20)) // (16 << 20))
    x = rng.integers(0, 256, size=(n, 4, 2048, 2048), dtype=np.uint8)
    y = dmlwgsl.depth_to_space(x, 2, "CRD", device=device)
    assert y.shape == (n, 1, 4096, 4096)
    for k in range(n):
        h0, w0 = rng.integers(0, 2048 - 16, size=2)
        crop = x[k : k + 1, :, h0 : h0 + 16, w0 : w0 + 16]
        assert_matches(y[k : k + 1, :, 2 * h0 : 2 * h0 + 32, 2 * w0 : 2 * w0 + 32], ref(crop, 2, "CRD"))
    assert_matches(dmlwgsl.space_to_depth(y, 2, "CRD", device=device), x)


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32, DataType.INT64], ids=lambda d: d.name.lower()
)
def test_tiled_blocks_3_4_and_8(device, rng, op_name, dtype):
    """The word-by-word tiles of blocks 3, 4 and 8: DepthToSpace's tiled kernel with staged stores
    (workgroups of 512 / b threads spanning several rows, a partial last workgroup, long rows of
    several workgroups) and SpaceToDepth's tiled kernel, with broadcast inputs and the split past a
    tight binding limit; exact under poison and guards."""
    caps = Capabilities.from_device(device)
    tight = caps.with_binding_limit(8192 * dtype.size_in_bytes)
    cases = [  # DepthToSpace input shapes; SpaceToDepth takes their DepthToSpace outputs as input
        ((2, 16, 5, 48), 4, "broadcast", "packed", 64, True),
        ((3, 64, 3, 32), 8, "packed", "packed", 16, True),
        ((1, 16, 1, 16 * 70), 4, "packed", "packed", 48, False),  # one row over several workgroups
        ((1, 128, 7, 16), 8, "broadcast", "packed", 32, False),
        ((2, 27, 5, 32), 3, "packed", "packed", 80, True),
        ((1, 9, 2, 16 * 45), 3, "broadcast", "packed", 16, False),
    ]
    for kernel in ("tiled_staged",) if op_name == "depth_to_space" else ("tiled", "tiled_staged"):
        ops = check_row_cases(device, rng, op_name, dtype, cases, kernel, tight)
        assert all({k.split("[")[0] for k in op.plan.kernels} == {f"{op_name}_{kernel}"} for op in ops)
        assert any(op.plan.dispatches > 1 for op in ops)


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32, DataType.INT64], ids=lambda d: d.name.lower()
)
def test_transpose_kernel(device, rng, op_name, dtype):
    """The tile transpose for NHWC inputs: 16-byte vectors on both sides where runs and rows are
    16-byte aligned, 8/16-bit runs and rows of whole words loaded as words and staged packed
    (TP_WPACK), words otherwise (a padded output, channel counts off whole vectors), partial
    tiles along rows and channels, blocks 2-4, and the split past a tight binding limit; exact
    under poison and guards."""
    caps = Capabilities.from_device(device)
    tight = caps.with_binding_limit(4096 * dtype.size_in_bytes)
    cases = [  # DepthToSpace input shapes; SpaceToDepth takes their DepthToSpace outputs as input
        ((2, 64, 3, 16), 2, "nhwc", "packed", 64, True),
        ((1, 9 * 40, 2, 12), 3, "nhwc", "packed", 16, False),  # 40 channels: two tiles of 32
        ((2, 16 * 3, 3, 8), 4, "nhwc", "packed", 48, False),  # 3 channels: words
        ((1, 4 * 16, 4, 72), 2, "nhwc", "packed", 32, False),  # rows over several tiles
        ((1, 4 * 32, 2, 160), 2, "nhwc", "packed", 32, False),  # 8-bit rows past a packed tile's 256
        ((1, 4 * 8, 3, 6), 2, "nhwc", "packed", 16, False),  # 8/16-bit runs of whole words: TP_WPACK
        ((2, 4 * 16, 4, 10), 2, "nhwc", "packed", 32, True),
    ]
    ops = check_row_cases(device, rng, op_name, dtype, cases, "transpose", tight)
    assert all({k.split("[")[0] for k in op.plan.kernels} == {f"{op_name}_transpose"} for op in ops)
    assert any(op.plan.dispatches > 1 for op in ops)
    vec = {op.plan.steps[0].constants_dict["TP_VEC"] for op in ops}
    assert vec == {0, 1}
    wpack = [op for op in ops if op.plan.steps[0].constants_dict.get("TP_WPACK")]
    assert bool(wpack) == (dtype.size_in_bytes < 4)


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize("dtype", [DataType.UINT8, DataType.FLOAT16], ids=lambda d: d.name.lower())
def test_transpose_ragged_rows(device, rng, op_name, dtype):
    """8/16-bit output rows that start or end inside a word (odd widths, output windows at odd
    element offsets, blocks 2-8, rows over several tiles, channels past a tile, the split past a
    tight binding limit): transpose_ragged_entry, the words rows share merged with atomics; exact
    under poison and guards (the bytes of the window's buffer outside the tensor kept)."""
    caps = Capabilities.from_device(device)
    es = dtype.size_in_bytes
    tight = caps.with_binding_limit(4096 * es)
    cases = [  # DepthToSpace input shapes (odd widths: every output row ends inside a word)
        ((4, 9 * 4, 9, 11), 3, "nhwc", "window", es, True),
        ((1, 9 * 37, 2, 13), 3, "nhwc", "packed", 16, False),  # 37 channels: two tiles
        ((2, 16 * 3, 3, 7), 4, "nhwc", "window", 48 + es, False),  # a window at an odd element
        ((1, 4 * 5, 3, 101), 2, "nhwc", "padded", 16 + es, False),  # rows over several tiles
        ((1, 25 * 6, 2, 9), 5, "nhwc", "packed", 4, False),
        ((2, 64 * 3, 5, 7), 8, "nhwc", "window", 3 * es, True),
    ]
    ops = check_row_cases(device, rng, op_name, dtype, cases, "transpose", tight)
    assert all({k.split("[")[0] for k in op.plan.kernels} == {f"{op_name}_transpose"} for op in ops)
    ragged = [op for op in ops if op.plan.steps[0].entry_point == "transpose_ragged_entry"]
    assert len(ragged) >= len(ops) // 2 and any(op.plan.dispatches > 1 for op in ragged)


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize(
    "dtype", [DataType.UINT8, DataType.INT16, DataType.FLOAT32, DataType.INT64], ids=lambda d: d.name.lower()
)
def test_transpose_merged_rows(device, rng, op_name, dtype, monkeypatch):
    """The transpose with output rows merged along the plane dimension whose rows follow each other
    in the output (TP_MERGE: DepthToSpace the b rows of a block row, SpaceToDepth a plane's rows;
    the input address of r split by a division): rows of 2-26 elements, runs over several tiles,
    merged runs that end on words or vectors where the rows do not, runs that stay inside words
    (atomic ends), channels past a tile, the split past a tight binding limit; an output window
    keeps its rows (their stride is not their length). Forced on every shape (the rule's tile
    threshold raised); exact under poison and guards."""
    from dmlwgsl.ops import _permute

    monkeypatch.setattr(_permute, "TRANSPOSE_MERGE_MAX_TILE_ROW", 1 << 20)
    caps = Capabilities.from_device(device)
    tight = caps.with_binding_limit(4096 * dtype.size_in_bytes)
    cases = [  # DepthToSpace input shapes; SpaceToDepth takes their DepthToSpace outputs as input
        ((2, 4 * 16, 3, 3), 2, "nhwc", "packed", 16, False),
        ((1, 9 * 37, 5, 5), 3, "nhwc", "packed", 0, True),  # 37 channels: two tiles
        ((2, 16 * 4, 7, 2), 4, "nhwc", "packed", 48, False),
        ((3, 4 * 8, 9, 13), 2, "nhwc", "packed", 4 * dtype.size_in_bytes + dtype.size_in_bytes, False),
        ((1, 64 * 2, 2, 3), 8, "nhwc", "packed", 32, False),
        ((2, 4 * 5, 3, 7), 2, "nhwc", "window", 16, False),
    ]
    ops = check_row_cases(device, rng, op_name, dtype, cases, "transpose", tight)
    assert all({k.split("[")[0] for k in op.plan.kernels} == {f"{op_name}_transpose"} for op in ops)
    merged = [op for op in ops if op.plan.steps[0].constants_dict.get("TP_MERGE")]
    assert len(merged) == len(ops) - 2 and any(op.plan.dispatches > 1 for op in merged)
    assert all(op.plan.steps[0].uniforms_dict["r_w"] < op.plan.steps[0].uniforms_dict["r_len"] for op in merged)


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize("dtype", [DataType.FLOAT16, DataType.FLOAT32, DataType.INT64], ids=lambda d: d.name.lower())
def test_tiled_ragged_output_rows(device, rng, op_name, dtype, monkeypatch):
    """Output rows on 4-byte but not 16-byte boundaries (windows, odd offsets): the tiled paths
    store each vector as 16-, 8- or 4-byte pieces by its alignment (OUT_RAGGED), and both operators'
    staged kernels as 4 or 2 pieces alike by the rows' common alignment (OUT_PIECES, a GPU's form,
    forced here; also split into boxes past a tight binding limit), exact under poison and
    guards, at blocks 2, 3, 4 and 8; 8-bit rows off 4-byte boundaries are refused."""
    from dmlwgsl.ops import _permute
    from dmlwgsl.plan import PlanError

    monkeypatch.setitem(_permute.OUT_PIECES_PATHS, "cpu", ("tiled_staged",))
    monkeypatch.setitem(_permute.OUT_PIECES_PATHS, "gpu", ("tiled_staged",))
    pieces = set()

    kernels = ("zip", "tiled", "tiled_staged") if op_name == "depth_to_space" else ("tiled", "tiled_staged")
    offsets = (68, 72) if dtype.size_in_bytes < 8 else (72, 80)
    ragged = 0
    for b in (2, 3, 4, 8):
        shape = (2, b * b * 2, 3, 32)
        if op_name == "space_to_depth":
            shape = (2, 2, 3 * b, 32 * b)
        for kernel in kernels:
            if kernel == "zip" and b != 2:
                continue
            for off in offsets:
                op = check_op(
                    device, op_name, dtype, shape, b, "DCR", rng, kernel=kernel, lout="window", output_offset=off
                )
                # (int64 windows stay on 16-byte rows: the call's offset of 72 or 80 bytes makes them ragged)
                ragged += any("OUT_RAGGED=1" in k for k in op.cache_keys)
                pieces |= {p for k in op.cache_keys for p in (2, 4) if f"OUT_PIECES={p}" in k}
                assert (kernel == "tiled_staged") == any("OUT_PIECES" in k for k in op.cache_keys) or (
                    not any("OUT_RAGGED=1" in k for k in op.cache_keys)
                )
    assert ragged > 0
    if dtype.size_in_bytes < 8:
        # (2-byte rows of 32b + 2 elements start 4 bytes apart: 4 pieces only)
        assert pieces == ({2, 4} if dtype.size_in_bytes == 4 else {4})
        # split into boxes past a tight binding limit: each box's rows keep the common alignment
        tight = Capabilities.from_device(device).with_binding_limit(4096 * dtype.size_in_bytes)
        op = check_op(
            device,
            op_name,
            dtype,
            (2, 16, 6, 32) if op_name == "depth_to_space" else (2, 4, 12, 64),
            2,
            "DCR",
            rng,
            kernel="tiled_staged",
            lout="window",
            output_offset=offsets[0],
            capabilities=tight,
        )
        assert op.plan.dispatches > 1 and any("OUT_PIECES" in k for k in op.cache_keys)
    with pytest.raises(PlanError, match="16-byte"):
        shape = (2, 8, 3, 32) if op_name == "depth_to_space" else (2, 2, 6, 64)
        check_op(device, op_name, DataType.UINT8, shape, 2, "DCR", rng, kernel="tiled", lout="window", output_offset=66)


@pytest.mark.parametrize("op_name", ["depth_to_space", "space_to_depth"])
@pytest.mark.parametrize("dtype", [DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32], ids=lambda d: d.name.lower())
def test_tiled_half_rows(device, rng, op_name, dtype):
    """CPU adapters: the tiled kernel on rows of whole 8-byte halves that are not whole 16-byte
    vectors (TILE_HALF; SpaceToDepth's output rows are the DepthToSpace input rows here), at blocks
    2, 3, 4 and 8, with broadcast inputs, several halves a row, and the split past a tight binding
    limit; exact under poison and guards."""
    caps = Capabilities.from_device(device)
    if not caps.is_cpu:
        pytest.skip("TILE_HALF is a CPU adapter's path (measured on lavapipe only)")
    tight = caps.with_binding_limit(512)
    w = 8 // dtype.size_in_bytes  # elements of an 8-byte half: DepthToSpace input rows of 1 and 3 halves
    cases = [  # DepthToSpace input shapes; SpaceToDepth takes their DepthToSpace outputs as input
        ((2, 16, 3, w), 2, "packed", "packed", 64, True),
        ((1, 9, 4, 3 * w), 3, "broadcast", "packed", 16, False),
        ((2, 16, 2, w), 4, "packed", "packed", 48, False),
        ((1, 64, 3, 3 * w), 8, "packed", "packed", 32, False),
    ]
    ops = check_row_cases(device, rng, op_name, dtype, cases, "tiled", tight)
    assert all(op.plan.steps[0].constants_dict.get("TILE_HALF") == 1 for op in ops)
    assert any(op.plan.dispatches > 1 for op in ops)

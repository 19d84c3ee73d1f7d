"""DepthToSpace / SpaceToDepth plans as values, on the kept capability records (no GPU): which
kernels, which grid, which uniforms, which bytes; the split past the binding limit; requests by
name; and ``dmlwgsl explain``."""

import json

import pytest

from dmlwgsl import DataType, DepthToSpaceDesc, SpaceToDepthDesc, TensorDesc
from dmlwgsl.cli import main as cli_main
from dmlwgsl.ops._permute import ROW_SLOTS_GAIN, _row_threads, _row_threads_words
from dmlwgsl.ops.depth_to_space import plan_depth_to_space
from dmlwgsl.ops.space_to_depth import plan_space_to_depth
from dmlwgsl.plan import PROFILES, Capabilities, Placement, PlanError
from dmlwgsl.testing import strided_desc

F32, F16, U8, I64 = DataType.FLOAT32, DataType.FLOAT16, DataType.UINT8, DataType.INT64


def d2s(shape, dtype=F32, b=2, order="DCR", lin="packed", lout="packed"):
    out = (shape[0], shape[1] // (b * b), shape[2] * b, shape[3] * b)
    return DepthToSpaceDesc(strided_desc(dtype, shape, lin), strided_desc(dtype, out, lout, output=True), b, order)


def s2d(shape, dtype=F32, b=2, order="DCR", lin="packed", lout="packed"):
    out = (shape[0], shape[1] * b * b, shape[2] // b, shape[3] // b)
    return SpaceToDepthDesc(strided_desc(dtype, shape, lin), strided_desc(dtype, out, lout, output=True), b, order)


def tight(profile: str, binding: int) -> Capabilities:
    return Capabilities.profile(profile).with_binding_limit(binding)


@pytest.mark.parametrize("profile", PROFILES)
def test_block2_aligned_rows_take_the_zip_kernel(profile):
    desc = d2s((8, 256, 56, 56))
    plan = plan_depth_to_space(desc, Capabilities.profile(profile))
    assert plan.kernels == ["depth_to_space_zip"] and plan.dispatches == 1
    (s,) = plan.steps
    # one thread per 16-byte output vector: 8*64*112*112 f32 / 4
    assert s.invocations == 8 * 64 * 112 * 112 // 4 and s.grid == (6272, 1, 1)
    u = s.uniforms_dict
    assert (u["channels"], u["height"], u["chunks"]) == (64, 56, 28)
    assert (u["chan_i"], u["chan_j"], u["chan_c"]) == (128, 64, 1)  # DCR: in_c = (i*2 + j)*64 + c
    assert (u["src_base"], u["dst_base"]) == (0, 0)
    assert s.constants_dict == {"BLOCK": 2, "ELEM_BYTES": 4, "WG": 256}
    assert plan.bytes_moved == 2 * 8 * 256 * 56 * 56 * 4
    assert plan.capabilities == Capabilities.profile(profile).name


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("b", [3, 4, 8])
def test_larger_blocks_take_their_measured_kernel(profile, b):
    """Blocks 3, 4 and 8 on rows of whole 16-byte vectors: a CPU adapter takes the tiled kernel; a
    GPU the tiled kernel with staged stores (8-bit tiles of 3, 4 and 8 bytes a row), with one
    workgroup of 512 / b threads (rounded down to a power of two) staging their output vectors."""
    caps = Capabilities.profile(profile)
    plan = plan_depth_to_space(d2s((2, 64 * b * b // 4 * 4, 16, 16), U8, b, "CRD"), caps)
    if caps.is_cpu:  # a CPU adapter takes the tiled kernel first (see _choose)
        assert plan.kernels == ["depth_to_space_tiled"]
        return
    s = plan.steps[0]
    assert plan.kernels == ["depth_to_space_tiled_staged"]
    assert s.workgroup_size == {3: 128, 4: 128, 8: 64}[b] and s.constants_dict["WG"] == s.workgroup_size
    # one thread a 16-byte vector of each of the b input rows of a tile
    assert s.invocations == 2 * (64 * b * b // 4 * 4 // (b * b)) * 16 * b * (16 // 16)


@pytest.mark.parametrize(
    "dtype, b, d2s_kernel, s2d_kernel",
    [
        (DataType.FLOAT32, 4, "tiled_staged", "tiled"),  # 16-byte tiles a row: staged stores
        (DataType.INT64, 4, "rows", "tiled"),  # 32 bytes: the row kernel's 8-byte loads
        (DataType.FLOAT16, 8, "tiled_staged", "tiled"),
        (DataType.FLOAT32, 8, "rows", "tiled"),
        (DataType.UINT8, 3, "tiled_staged", "tiled"),
        (DataType.INT64, 3, "rows", "tiled"),  # 24 bytes
        (DataType.UINT8, 5, "rows", "rows"),
    ],
)
def test_gpu_kernel_follows_block_and_element_size(dtype, b, d2s_kernel, s2d_kernel):
    """On the H100 the plan's DepthToSpace kernel for aligned rows depends on the tile's bytes a
    row (block x element size, staged up to 16) and SpaceToDepth takes the tiled kernel at blocks
    2, 3, 4 and 8 (measured, see _choose); a block outside them takes the row kernel."""
    caps = Capabilities.profile("h100")
    assert plan_depth_to_space(d2s((2, 4 * b * b, 8, 64), dtype, b), caps).kernels == [f"depth_to_space_{d2s_kernel}"]
    desc = s2d((2, 4, 8 * b, 64 * b), dtype, b, "CRD")
    assert plan_space_to_depth(desc, caps).kernels == [f"space_to_depth_{s2d_kernel}"]


def test_unaligned_rows_add_the_edge_pass_and_blocks_per_thread_follow_the_row():
    caps = Capabilities.profile("h100")
    plan = plan_depth_to_space(d2s((3, 64, 135, 241)), caps)
    assert plan.kernels == ["depth_to_space_rows", "depth_to_space_row_edges"]
    rows, edges = plan.steps
    assert rows.uniforms_dict["rows"] == 3 * 16 * 270 and rows.uniforms_dict["row_len"] == 482
    # 482 f32 = 1928 bytes: at most 121 blocks a row; the word-store kernels' split (3 a thread, 41
    # threads rounded up to 64: 192 slots) against 1 x 128 slots (_row_threads)
    assert rows.constants_dict["BPT"] == 1 and rows.uniforms_dict["row_shift"] == 7
    assert rows.invocations == 3 * 16 * 270 * 128
    assert edges.invocations == 3 * 16 * 270 * 9 and edges.bindings_dict["output"] == "output_atomic"


@pytest.mark.parametrize("max_blocks", [1, 2, 3, 7, 9, 13, 17, 24, 33, 66, 105, 121, 264, 1000, 4097])
def test_row_threads_cover_the_row_with_fewer_slots(max_blocks):
    bpt, shift = _row_threads(max_blocks)
    wb, ws = _row_threads_words(max_blocks)
    assert 1 <= bpt <= 8 and bpt << shift >= max_blocks  # every block of the row has a thread
    assert max_blocks < 2 or shift >= 1  # at least 2 threads a row
    assert (bpt, shift) == (wb, ws) or bpt << shift <= ROW_SLOTS_GAIN * (wb << ws)


def test_row_threads_examples():
    # 17 blocks: 5 x 4 = 20 slots against 32; 13: 14 slots against 16 is not enough; 7: 1 x 8 kept
    assert (_row_threads(17), _row_threads(13), _row_threads(7)) == ((5, 2), _row_threads_words(13), (1, 3))


def test_rows_split_by_slots_on_gpus_for_contiguous_input_rows_up_to_4_bytes():
    """rows_body's slot-saving split (_row_threads) where it was measured faster (GPUs, elements
    of 1-4 bytes, input rows contiguous); NHWC inputs, 8-byte elements and CPU adapters keep the
    word-store kernels' split."""
    h100, lav = Capabilities.profile("h100"), Capabilities.profile("lavapipe")
    # DepthToSpace b2 uint8, rows of 268 bytes: 17 blocks, 5 x 4 = 20 slots against 1 x 32
    plan = plan_depth_to_space(d2s((4, 220, 98, 134), U8, 2), h100, kernel="rows")
    assert (plan.steps[0].constants_dict["BPT"], plan.steps[0].uniforms_dict["row_shift"]) == (5, 2)
    for desc, caps in (
        (d2s((4, 220, 98, 134), U8, 2), lav),
        (d2s((4, 220, 98, 67), I64, 2), h100),
        (d2s((4, 220, 98, 134), U8, 2, lin="nhwc"), h100),
    ):
        step = plan_depth_to_space(desc, caps, kernel="rows").steps[0]
        mb = -(-step.uniforms_dict["row_len"] * desc.input.data_type.size_in_bytes // 16)
        assert (step.constants_dict["BPT"], step.uniforms_dict["row_shift"]) == _row_threads_words(mb)


@pytest.mark.parametrize("profile", PROFILES)
def test_cpu_takes_tiled_before_zip_for_strided_tensors(profile):
    """Block 2 DepthToSpace with a broadcast input or an output window: a CPU adapter takes the tiled
    kernel (measured faster there), a GPU zip; packed tensors take zip on both."""
    caps = Capabilities.profile(profile)
    # (a GPU stores a window's rows, off 16-byte boundaries here, with the staged tiles)
    for lin, lout, gpu in (("broadcast", "packed", "zip"), ("packed", "window", "tiled_staged")):
        want = "depth_to_space_" + ("tiled" if caps.is_cpu else gpu)
        assert plan_depth_to_space(d2s((4, 16, 8, 8), F32, 2, lin=lin, lout=lout), caps).kernels == [want]
    assert plan_depth_to_space(d2s((4, 16, 8, 8), F32, 2), caps).kernels == ["depth_to_space_zip"]


def test_space_to_depth_rows_and_requests():
    caps = Capabilities.profile("lavapipe")
    desc = s2d((2, 3, 12, 48), F16, 3, "DCR")
    assert plan_space_to_depth(desc, caps).kernels == ["space_to_depth_tiled"]  # a CPU adapter's first choice
    plan = plan_space_to_depth(desc, caps, kernel="rows")
    assert plan.kernels == ["space_to_depth_rows"]
    u = plan.steps[0].uniforms_dict
    assert (u["rows"], u["row_len"], u["stride_w"], u["stride_j"]) == (2 * 3 * 4 * 9, 16, 3, 0)
    assert (u["chan_i"], u["chan_j"], u["chan_c"]) == (9, 3, 1)  # DCR: out_c = (i*3 + j)*3 + c
    assert plan_space_to_depth(desc, caps, kernel="tiled").kernels == ["space_to_depth_tiled"]
    assert plan_space_to_depth(desc, caps, kernel="space_to_depth_atomic").kernels == ["space_to_depth_atomic"]
    with pytest.raises(PlanError, match="space_to_depth_zip cannot run this description: only DepthToSpace"):
        plan_space_to_depth(desc, caps, kernel="zip")
    with pytest.raises(PlanError, match="space_to_depth_strided cannot run this description: element size below 4"):
        plan_space_to_depth(desc, caps, kernel="strided")
    with pytest.raises(PlanError, match="kernel: no path 'fast' for space_to_depth"):
        plan_space_to_depth(desc, caps, kernel="fast")


@pytest.mark.parametrize("profile", PROFILES)
def test_space_to_depth_window_rows_take_staged_tiles_on_gpus(profile):
    """SpaceToDepth into an output window (rows on 4- or 8-byte boundaries): a GPU takes the tiled
    kernel with staged stores, each vector in the rows' common alignment's pieces (OUT_PIECES); a
    CPU adapter the unstaged tiled kernel's per-vector pieces; packed outputs keep the tiled kernel."""
    caps = Capabilities.profile(profile)
    for dtype, pieces in ((F32, 2), (DataType.FLOAT16, 4)):
        for b in (2, 3, 4, 8):
            plan = plan_space_to_depth(s2d((4, 3, 16 * b, 32 * b), dtype, b, lout="window"), caps)
            c = plan.steps[0].constants_dict
            if caps.is_cpu:
                assert plan.kernels == ["space_to_depth_tiled"] and "OUT_PIECES" not in c
            else:
                assert plan.kernels == ["space_to_depth_tiled_staged"] and c["OUT_PIECES"] == pieces
                assert plan.steps[0].workgroup_size * b <= 512 and "staged" in plan.why
            assert c["OUT_RAGGED"] == 1
        assert plan_space_to_depth(s2d((4, 3, 32, 64), dtype, 2), caps).kernels == ["space_to_depth_tiled"]


def test_placements_change_the_path():
    caps = Capabilities.profile("gl")
    desc = d2s((1, 16, 4, 8), F32, 2)
    assert plan_depth_to_space(desc, caps).kernels == ["depth_to_space_zip"]
    # an output 8 bytes into its binding: each vector stored in aligned pieces, on a CPU adapter by
    # the zip kernel, on a GPU by the tiled kernel with staged stores; rows off 4-byte boundaries
    # (2 bytes in) on a CPU adapter: the word-store row kernel (no edge pass)
    plan = plan_depth_to_space(desc, caps, placements={"output": Placement(8)})
    assert plan.kernels == ["depth_to_space_zip"] and plan.steps[0].constants_dict["OUT_RAGGED"] == 1
    assert plan.steps[0].uniforms_dict["dst_base"] == 2
    plan = plan_depth_to_space(d2s((1, 16, 4, 8), DataType.FLOAT16, 2), caps, placements={"output": Placement(2)})
    assert plan.kernels == ["depth_to_space_row_words_shared"]
    assert "no edge pass" in plan.why and "CPU" in plan.why
    gpu = plan_depth_to_space(desc, Capabilities.profile("h100"), placements={"output": Placement(8)})
    assert gpu.kernels == ["depth_to_space_tiled_staged"]
    assert gpu.steps[0].uniforms_dict["dst_base"] == 2 and gpu.steps[0].constants_dict["OUT_RAGGED"] == 1
    # an output 2 bytes into its binding: rows off 4-byte boundaries, whole 16-byte blocks across
    # rows (8/16-bit: not the staged kernel, ROWS_PACKED_MIN_BYTES)
    gpu = plan_depth_to_space(
        d2s((1, 16, 4, 8), DataType.FLOAT16, 2),
        h100 := Capabilities.profile("h100"),
        placements={"output": Placement(2)},
    )
    assert gpu.kernels == ["depth_to_space_rows_packed"]
    # an output buffer not padded to 16 bytes: vectors stored in pieces never pass a row's end
    plan = plan_depth_to_space(desc, caps, placements={"output": Placement(0, False)})
    assert plan.kernels == ["depth_to_space_zip"] and plan.steps[0].constants_dict["OUT_RAGGED"] == 1
    assert plan_depth_to_space(desc, h100).steps[0].constants_dict.get("OUT_RAGGED") is None
    with pytest.raises(PlanError, match="depth_to_space_zip cannot run this description: tensors must start 16-byte"):
        plan_depth_to_space(desc, caps, kernel="zip", placements={"input": Placement(4)})


def test_layouts_pick_the_row_kernel_or_the_gather():
    caps = Capabilities.profile("h100")
    # an NHWC input of 8-bit elements whose output rows end inside words: the transpose on a GPU
    # (H200: 1.2-5.3x faster than the row kernel on such rows), a row kernel on lavapipe. Short rows
    # merge (TP_MERGE): a block row's 2 rows of 14 bytes are 28, whole words; 3 rows of 15 bytes
    # (W = 5) are 45, still inside words: the ragged entry point
    nhwc = plan_depth_to_space(d2s((2, 8, 6, 7), U8, 2, lin="nhwc"), caps)
    assert nhwc.kernels == ["depth_to_space_transpose"] and nhwc.steps[0].entry_point == "transpose_entry"
    assert nhwc.steps[0].constants_dict["TP_MERGE"] == 1 and nhwc.steps[0].uniforms_dict["r_len"] == 28
    b3 = plan_depth_to_space(d2s((2, 18, 6, 5), U8, 3, lin="nhwc"), caps).steps[0]
    assert b3.entry_point == "transpose_ragged_entry" and b3.uniforms_dict["r_len"] == 45
    lav = Capabilities.profile("lavapipe")
    assert "transpose" not in plan_depth_to_space(d2s((2, 8, 6, 7), U8, 2, lin="nhwc"), lav).kernels[0]
    # a broadcast input's rows are contiguous: 8-bit rows off 16-byte boundaries take whole blocks
    # across rows (the staged kernel for 4-byte elements)
    bcast = plan_depth_to_space(d2s((2, 8, 6, 7), U8, 2, lin="broadcast"), caps)
    assert bcast.kernels[0] == "depth_to_space_rows_packed" and "not the depth_to_space_staged kernel" in bcast.why
    big = plan_depth_to_space(d2s((32, 50, 45, 67), U8, 5), caps)
    assert big.kernels == ["depth_to_space_rows_packed"] and "row_edges" not in big.why
    assert "not the depth_to_space_rows kernel and its atomic edge pass" in big.why
    assert plan_depth_to_space(d2s((2, 8, 6, 7), F32, 2, lin="broadcast"), caps).kernels[0] == "depth_to_space_staged"
    # channels-last output: rows are not contiguous, the gather merges bytes with atomics
    assert plan_depth_to_space(d2s((2, 8, 6, 7), U8, 2, lout="nhwc"), caps).kernels == ["depth_to_space_atomic"]
    assert plan_space_to_depth(s2d((2, 8, 6, 8), I64, 2, lout="nhwc"), caps).kernels == ["space_to_depth_strided"]


def test_bytes_moved_counts_a_broadcast_input_once():
    caps = Capabilities.profile("h100")
    plan = plan_depth_to_space(d2s((3, 8, 4, 4), F16, 2, lin="broadcast"), caps)
    assert plan.bytes_moved == (8 * 4 * 4 + 3 * 8 * 4 * 4) * 2


@pytest.mark.parametrize("profile", PROFILES)
def test_past_the_binding_limit_the_plan_splits_into_windows(profile):
    """A 192 MiB input on a 128 MiB binding limit (lavapipe, gl) or on a tighter record (h100)."""
    caps = Capabilities.profile(profile) if profile != "h100" else tight("h100", 128 << 20)
    desc = d2s((3, 16, 1024, 1024), F32, 2)
    plan = plan_depth_to_space(desc, caps)
    limit = caps.max_binding_size
    assert plan.dispatches == 3 and plan.kernels == [f"depth_to_space_zip[{k}]" for k in range(3)]
    for k, s in enumerate(plan.steps):
        assert s.windows == (("input", k * 64 << 20, 64 << 20), ("output", k * 64 << 20, 64 << 20))
        assert all(length <= limit for _, _, length in s.windows)
        assert s.uniforms_dict["src_base"] == 0 and s.uniforms_dict["channels"] == 4
    assert plan.bytes_moved == 2 * 3 * 16 * 1024 * 1024 * 4
    assert "split into 3 boxes" in plan.why


def test_split_goes_down_to_channels_and_rows():
    caps = tight("lavapipe", 4096)
    plan = plan_space_to_depth(s2d((1, 4, 16, 64), F32, 2, "CRD"), caps)  # 16 KiB, one batch
    assert plan.dispatches > 1 and all(s.windows for s in plan.steps)
    assert all(length <= 4096 for s in plan.steps for _, _, length in s.windows)
    # the windows' starts keep the binding alignment
    assert all(start % caps.binding_alignment == 0 for s in plan.steps for _, start, _ in s.windows)


def test_beyond_max_buffer_size_is_a_named_error():
    caps = Capabilities.profile("lavapipe")
    big = TensorDesc(U8, (1, 4, 1 << 15, 1 << 14))  # 2 GiB
    desc = DepthToSpaceDesc(big, TensorDesc(U8, (1, 1, 1 << 16, 1 << 15)), 2)
    with pytest.raises(PlanError, match="input is 2147483648 bytes, beyond max-buffer-size"):
        plan_depth_to_space(desc, caps)


def test_explain_command_prints_the_plan(capsys):
    argv = ["explain", "depth_to_space", "--input", "8,256,56,56", "--dtype", "float32", "--block-size", "2"]
    assert cli_main(argv + ["--order", "DCR", "--profile", "h100", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kernels"] == ["depth_to_space_zip"] and d["dispatches"] == 1
    assert d["bytes_moved"] == 2 * 8 * 256 * 56 * 56 * 4 and "16-byte" in d["why"]
    assert d["steps"][0]["uniforms"]["chan_i"] == 128
    argv = ["explain", "space_to_depth", "--input", "2,16,63,63", "--dtype", "uint8", "--block-size", "3"]
    assert cli_main(argv + ["--order", "CRD", "--input-layout", "nhwc", "--profile", "gl"]) == 0
    text = capsys.readouterr().out
    # rows of 21 bytes off 16-byte boundaries on a CPU adapter: the word-store row kernel
    assert "space_to_depth_row_words_shared" in text and "rw.row_len = 21" in text
    assert cli_main(argv + ["--profile", "gl", "--kernel", "zip"]) == 2
    assert "only DepthToSpace" in capsys.readouterr().err


def test_cpu_adapters_take_their_measured_paths():
    """On lavapipe (a CPU adapter) the tiled kernel comes before the row kernel at blocks 3, 4 and 8
    (8-bit SpaceToDepth at block 8 too: 0.34 ms against the packed gather's 2.48 ms), on rows of
    whole 8-byte halves too (TILE_HALF); the H100 keeps its order."""
    lav, h100 = Capabilities.profile("lavapipe"), Capabilities.profile("h100")
    d = d2s((8, 144, 16, 16), DataType.FLOAT16, 3, "CRD")
    assert plan_depth_to_space(d, lav).kernels == ["depth_to_space_tiled"]
    assert plan_depth_to_space(d, h100).kernels == ["depth_to_space_tiled_staged"]
    s = SpaceToDepthDesc(TensorDesc(U8, (16, 4, 128, 128)), TensorDesc(U8, (16, 256, 16, 16)), 8, "CRD")
    assert plan_space_to_depth(s, lav).kernels == ["space_to_depth_tiled"]
    assert plan_space_to_depth(s, h100).kernels == ["space_to_depth_tiled"]
    s = SpaceToDepthDesc(TensorDesc(U8, (16, 4, 64, 64)), TensorDesc(U8, (16, 256, 8, 8)), 8, "CRD")
    # 8-byte output rows: on lavapipe the tiled kernel a half a row a thread (TILE_HALF)
    plan = plan_space_to_depth(s, lav)
    assert plan.kernels == ["space_to_depth_tiled"] and plan.steps[0].constants_dict["TILE_HALF"] == 1
    assert plan.steps[0].uniforms_dict["chunks"] == 1  # one 8-byte half of each 8-byte output row
    assert plan_space_to_depth(s, h100).kernels[0] == "space_to_depth_rows_packed"  # 8-byte rows, 512 KiB


def test_cpu_rows_off_boundaries_take_the_word_store_row_kernel():
    """A CPU adapter's plan for rows off 16-byte boundaries: the word-store row kernel for 4- and
    8-byte elements, and for 1- and 2-byte elements on rows shorter than SHORT_ROW_BYTES (longer
    ones keep the row kernel and its edge pass); a GPU profile takes the one-pass staged kernel
    under STAGED_MAX_BYTES, above it (1- and 2-byte elements: the tiled row kernel and the edge
    pass) the word-store row kernel for rows under GPU_SHORT_ROW_BYTES and the row kernel and its
    edge pass for longer ones or where the input's rows are not contiguous (NHWC)."""
    from dmlwgsl.ops._permute import GPU_SHORT_ROW_BYTES, SHORT_ROW_BYTES, STAGED_MAX_BYTES

    cpu, gpu = Capabilities.profile("lavapipe"), Capabilities.profile("h100")
    for dtype, w, want in [
        (F32, 41, ["depth_to_space_row_words"]),
        (DataType.INT64, 41, ["depth_to_space_row_words"]),
        (DataType.UINT8, 5, ["depth_to_space_row_words_shared"]),  # rows of 15 bytes
        (DataType.FLOAT16, 9, ["depth_to_space_row_words_shared"]),  # 54 bytes
        (DataType.UINT8, 41, ["depth_to_space_row_words_shared"]),  # 123 bytes
        (DataType.UINT8, 61, ["depth_to_space_rows", "depth_to_space_row_edges"]),  # 183 bytes
        (DataType.FLOAT16, 41, ["depth_to_space_rows", "depth_to_space_row_edges"]),  # 246 bytes
    ]:
        desc = d2s((1, 9, 3, w), dtype, 3)
        if dtype.size_in_bytes < 4:
            assert (3 * w * dtype.size_in_bytes < SHORT_ROW_BYTES) == want[0].endswith("_shared")
        assert plan_depth_to_space(desc, cpu).kernels == want
        edges = ["depth_to_space_rows", "depth_to_space_row_edges"]
        short = 3 * w * dtype.size_in_bytes < GPU_SHORT_ROW_BYTES  # (GPU: every size takes the word stores)
        words = ["depth_to_space_row_words" + ("_shared" if dtype.size_in_bytes < 4 else "")]
        # small: staged (8/16-bit: whole blocks across rows, ROWS_PACKED_MIN_BYTES)
        small = "rows_packed" if dtype.size_in_bytes <= 2 else "staged"
        assert plan_depth_to_space(desc, gpu).kernels == [f"depth_to_space_{small}"]
        assert plan_depth_to_space(d2s((1, 9, 3, w), dtype, 3, lin="nhwc"), gpu).kernels == edges
        big = d2s((4 * 4096 // (w * dtype.size_in_bytes), 9, 64, w), dtype, 3)  # 9.4 MB moved and up
        assert big.input.element_count * 2 * dtype.size_in_bytes >= STAGED_MAX_BYTES
        tiled = ["depth_to_space_rows_tiled", "depth_to_space_row_edges"]  # 1- and 2-byte elements
        # (short rows into a packed output, longer than ROWS_PACKED_MIN_BYTES: whole blocks across rows)
        packed = ["depth_to_space_rows_packed"]
        assert plan_depth_to_space(big, gpu).kernels == (
            packed if short else tiled if dtype.size_in_bytes <= 2 else edges
        )
        if short:
            window = d2s(big.input.sizes, dtype, 3, lout="window")
            assert plan_depth_to_space(window, gpu).kernels == words
            assert "atomic edge pass" in plan_depth_to_space(window, gpu).why
    # requested by name on any adapter
    assert plan_depth_to_space(d2s((1, 9, 3, 41), DataType.UINT8, 3), gpu, kernel="row_words").kernels == [
        "depth_to_space_row_words_shared"
    ]


def test_nhwc_inputs_take_the_transpose_on_a_gpu():
    """An input whose channels are its fastest dimension: the H100 takes the tile transpose (16-byte
    vectors where runs and rows are whole vectors, TP_K the channels rounded up to a power of two,
    a tile of 2048 elements where rows interleave at most 2 lanes: 2048 staged words for 4-byte
    elements, 1024 / 512 for 16 / 8-bit ones staged packed), SpaceToDepth DCR with its (j, c) runs
    merged into one channel run; lavapipe keeps the row kernel (measured, see _choose)."""
    h100, lav = Capabilities.profile("h100"), Capabilities.profile("lavapipe")
    d = d2s((16, 64, 64, 64), F32, 2, "DCR", lin="nhwc")
    plan = plan_depth_to_space(d, h100)
    assert plan.kernels == ["depth_to_space_transpose"]
    s = plan.steps[0]
    assert s.constants_dict == {"ELEM_BYTES": 4, "TP_DIV": 2, "TP_K": 16, "TP_VEC": 1, "WG": 256}
    u = s.uniforms_dict
    # planes (n, h, i), rows of W*b = 128 elements (one tile of 2048 / 16), 16 channels (one tile)
    assert (u["plane_h"], u["plane_i"], u["plane_j"], u["tiles_r"], u["tiles_k"]) == (64, 2, 1, 1, 1)
    assert u["workgroups"] == 16 * 64 * 2 and s.invocations == u["workgroups"] * 256
    assert (u["in_r0"], u["in_r1"], u["in_k"], u["out_k"]) == (16, 64, 1, 128 * 128)  # DCR: j is 16 channels on
    assert plan_depth_to_space(d, lav).kernels == ["depth_to_space_rows"]
    s2 = plan_space_to_depth(s2d((16, 16, 128, 128), DataType.FLOAT16, 2, "DCR", lin="nhwc"), h100).steps[0]
    assert s2.name == "space_to_depth_transpose" and s2.constants_dict["TP_K"] == 32  # (j, c): 32 channels
    assert (s2.uniforms_dict["plane_j"], s2.uniforms_dict["k_len"]) == (1, 32)
    # 16-bit elements staged packed: a tile of 2048 elements in 1024 words (64 row elements of 32
    # channels: an output row of 64 in one tile); 8-bit: 512 words
    assert s2.constants_dict["TP_WORDS"] == 1024 and s2.uniforms_dict["tiles_r"] == 1
    s8 = plan_space_to_depth(s2d((16, 16, 128, 128), DataType.UINT8, 2, "DCR", lin="nhwc"), h100).steps[0]
    assert s8.constants_dict["TP_WORDS"] == 512 and s8.constants_dict["TP_VEC"] == 1
    # rows interleaving 3 lanes (DepthToSpace b3) keep 2048 words whatever the element size, less
    # what the row does not fill (TRANSPOSE_FIT_ROWS): a row of 192 elements in a tile of 256 -> 1536
    b3 = plan_depth_to_space(d2s((14, 144, 64, 64), DataType.FLOAT16, 3, "DCR", lin="nhwc"), h100).steps[0]
    assert b3.name == "depth_to_space_transpose" and b3.constants_dict["TP_VEC"] == 1
    assert b3.constants_dict["TP_WORDS"] == 1536 and b3.uniforms_dict["tiles_r"] == 1
    # rows split evenly over their tiles, each tile an even number of staged words (odd pitch):
    # a window's 126-element float32 rows (word path) in two tiles of 64, not 63
    w = plan_space_to_depth(s2d((1, 24, 298, 252), F32, 2, "DCR", lin="nhwc", lout="window"), h100).steps[0]
    assert w.constants_dict["TP_VEC"] == 0 and w.uniforms_dict["tiles_r"] == 2
    assert w.constants_dict.get("TP_WORDS", 2048) == 64 * w.constants_dict["TP_K"]
    s3 = plan_space_to_depth(s2d((16, 16, 128, 128), DataType.FLOAT16, 2, "CRD", lin="nhwc"), h100).steps[0]
    assert (s3.uniforms_dict["plane_j"], s3.uniforms_dict["k_len"]) == (2, 16)  # CRD: j stays a plane


def test_gpu_takes_the_tiled_row_kernels_for_8_and_16_bit_rows():
    """A GPU's DepthToSpace / SpaceToDepth of 1- and 2-byte elements whose rows are not whole
    16-byte vectors (odd widths, output windows, broadcast or padded inputs) and are at least
    GPU_SHORT_ROW_BYTES long take the tiled row kernel at blocks 2, 3, 4 and 8 (SpaceToDepth where
    block x element size <= 8), with the edge pass where rows are off 16-byte boundaries (in the
    same dispatch under ROWS_TILED_FUSE_BYTES, a second one from there up); a DepthToSpace thread
    takes `block` blocks of a row, a SpaceToDepth one 1 or 2 (_s2d_tiled_blocks). DepthToSpace
    keeps the staged kernel under ROWS_TILED_MIN_BYTES. 4- and 8-byte elements, short rows, other
    blocks, NHWC inputs and CPU adapters keep their paths; requested by name the kernel runs
    wherever its rules hold, and says why not elsewhere."""
    from dmlwgsl.ops._permute import (
        EDGE_WORDS,
        ROWS_TILED_FUSE_BYTES,
        ROWS_TILED_MIN_BYTES,
        STAGED_MAX_BYTES,
        _s2d_tiled_blocks,
    )

    gpu, cpu = Capabilities.profile("h100"), Capabilities.profile("lavapipe")
    for op, make, plan_fn in (
        ("depth_to_space", d2s, plan_depth_to_space),
        ("space_to_depth", s2d, plan_space_to_depth),
    ):
        tiled = [f"{op}_rows_tiled", f"{op}_row_edges"]
        for dtype in (U8, DataType.INT8, F16, DataType.UINT16):
            eb = dtype.size_in_bytes
            for b in (2, 3, 4, 8):
                takes = op == "depth_to_space" or b * eb <= 8
                for lin, lout, n in (
                    ("packed", "packed", 6),
                    ("broadcast", "packed", 24),
                    ("padded", "packed", 6),
                    ("packed", "window", 24),
                ):
                    shape = (n, 16 * b * b, 45, 67) if op == "depth_to_space" else (n, 16, 45 * b, 67 * b)
                    desc = make(shape, dtype, b, lin=lin, lout=lout)
                    moved = desc.output.element_count * 2 * eb
                    assert moved >= ROWS_TILED_MIN_BYTES
                    plan = plan_fn(desc, gpu)
                    if not takes:
                        assert plan.kernels[0] == f"{op}_rows", (op, dtype, b, lin)
                        continue
                    rows = n * 16 * 45 * b * (1 if op == "depth_to_space" else b)
                    row_bytes = 67 * eb * (b if op == "depth_to_space" else 1)
                    # the edge pass where rows are off 16-byte boundaries (DepthToSpace float16 b8:
                    # 1072-byte rows), in the same dispatch under ROWS_TILED_FUSE_BYTES moved
                    edges = bool(row_bytes % 16 or lout == "window")
                    fused = edges and moved < ROWS_TILED_FUSE_BYTES
                    assert plan.kernels == (tiled if edges and not fused else tiled[:1]), (op, dtype, b, lin)
                    assert plan.steps[0].constants_dict["ROW_EDGES"] == int(fused)
                    per = b if op == "depth_to_space" else _s2d_tiled_blocks(b, row_bytes)
                    regions = -(-(row_bytes // 16) // per)
                    assert plan.steps[0].invocations == rows * (regions + (EDGE_WORDS if fused else 0))
                    assert plan.steps[0].uniforms_dict["regions"] == regions
                    assert f"{regions} thread(s) a row, {per} 16-byte block(s) a thread" in plan.steps[0].why
                    assert plan_fn(desc, cpu).kernels[0] != f"{op}_rows_tiled"
                # DepthToSpace's small tensors of unaligned rows: whole blocks across rows (were staged)
                small = make((1, b * b, 5, 13) if op == "depth_to_space" else (1, 1, 5 * b, 13 * b), dtype, b)
                staged = op == "depth_to_space" and (13 * b * eb) % 16 != 0
                assert small.output.element_count * 2 * eb < ROWS_TILED_MIN_BYTES <= STAGED_MAX_BYTES
                if takes and 13 * eb * (b if op == "depth_to_space" else 1) >= 32:
                    assert plan_fn(small, gpu).kernels == [f"{op}_{'rows_packed' if staged else 'rows_tiled'}"]
    assert _s2d_tiled_blocks(8, 40) == 2 and _s2d_tiled_blocks(4, 144) == 2
    assert _s2d_tiled_blocks(4, 143) == 1 and _s2d_tiled_blocks(3, 1000) == _s2d_tiled_blocks(2, 1000) == 1
    # rows of whole 16-byte vectors keep the tiled kernels; no edge pass where the rows are aligned
    assert plan_depth_to_space(d2s((4, 64, 64, 64), U8, 4), gpu).kernels == ["depth_to_space_tiled_staged"]
    aligned = plan_depth_to_space(d2s((4, 64, 64, 64), U8, 4), gpu, kernel="rows_tiled")
    assert aligned.kernels == ["depth_to_space_rows_tiled"]
    # the other paths: 4- and 8-byte elements, block 5, an NHWC input, rows under 32 bytes
    assert plan_depth_to_space(d2s((16, 32, 45, 67), F32, 2), gpu).kernels[0] == "depth_to_space_rows"
    assert plan_depth_to_space(d2s((8, 32, 45, 67), I64, 2), gpu).kernels[0] == "depth_to_space_rows"
    assert plan_depth_to_space(d2s((32, 50, 45, 67), F32, 5), gpu).kernels[0] == "depth_to_space_rows"
    # (8/16-bit block 5 rows off 16-byte boundaries, contiguous input rows: whole blocks across rows)
    assert plan_depth_to_space(d2s((32, 50, 45, 67), U8, 5), gpu).kernels[0] == "depth_to_space_rows_packed"
    assert plan_space_to_depth(s2d((32, 2, 45 * 5, 67 * 5), U8, 5), gpu).kernels[0] == "space_to_depth_rows"
    assert plan_depth_to_space(d2s((4, 32, 45, 67), U8, 2, lin="nhwc"), gpu).kernels[0] != "depth_to_space_rows_tiled"
    # rows under 32 bytes: whole blocks across rows into a packed output (over ROWS_PACKED_MIN_BYTES)
    assert plan_space_to_depth(s2d((64, 32, 90, 46), U8, 2), gpu).kernels == ["space_to_depth_rows_packed"]
    assert plan_space_to_depth(s2d((64, 32, 90, 46), U8, 2, lout="window"), gpu).kernels == [
        "space_to_depth_row_words_shared"
    ]
    assert plan_space_to_depth(s2d((64, 32, 90, 32), U8, 4), gpu).kernels == ["space_to_depth_row_words_shared"]
    with pytest.raises(PlanError, match="the tensors must fit one binding"):  # (its rows must be one run)
        plan_space_to_depth(s2d((64, 32, 90, 46), U8, 2), tight("h100", 1 << 20), kernel="rows_packed")
    for desc, rule in (
        (d2s((4, 50, 45, 67), U8, 5), "block_size 5"),
        (d2s((4, 32, 45, 67), U8, 2, lin="nhwc"), "the input's w stride must be 1"),
        (s2d((4, 8, 90, 134), U8, 2, lin="nhwc"), "the input's w stride must be 1"),
    ):
        plan_fn = plan_space_to_depth if isinstance(desc, SpaceToDepthDesc) else plan_depth_to_space
        with pytest.raises(PlanError, match=rule):
            plan_fn(desc, gpu, kernel="rows_tiled")


def test_transpose_merges_short_rows_and_vector_runs():
    """The transpose merges output rows that follow each other in the output (TP_MERGE) where its
    tile along a row would hold at most TRANSPOSE_MERGE_MAX_TILE_ROW elements, or where the merged
    runs take 16-byte vectors that the rows cannot (H200: 45 random rows 1.05-4.63x); long rows of
    whole vectors keep their rows (the division per load cost 5-35 % there); an output window's
    rows do not follow each other and never merge. 8/16-bit runs of whole words that are not whole
    vectors load words (TP_WPACK)."""
    from dmlwgsl.ops._permute import TRANSPOSE_MERGE_MAX_TILE_ROW

    h100 = Capabilities.profile("h100")
    # SpaceToDepth float32 rows of 62 (not whole vectors): merged, a plane of 60 x 62 = 3720 is
    # whole vectors
    s = plan_space_to_depth(s2d((2, 16, 120, 124), F32, 2, "DCR", lin="nhwc"), h100).steps[0]
    assert s.constants_dict["TP_MERGE"] == 1 and s.constants_dict["TP_VEC"] == 1
    assert (s.uniforms_dict["r_w"], s.uniforms_dict["r_len"], s.uniforms_dict["plane_h"]) == (62, 3720, 1)
    assert "rows of 62 merged: 60 a run" in s.why
    # rows of 64 (whole vectors, a full tile): not merged
    s = plan_space_to_depth(s2d((2, 16, 120, 128), F32, 2, "DCR", lin="nhwc"), h100).steps[0]
    assert "TP_MERGE" not in s.constants_dict and s.uniforms_dict["r_w"] == s.uniforms_dict["r_len"] == 64
    # rows of 9 float16 elements: short, merged (and 6 x 9 = 54 halves are whole words)
    s = plan_space_to_depth(s2d((3, 40, 12, 18), DataType.FLOAT16, 2, "CRD", lin="nhwc"), h100).steps[0]
    assert 9 <= TRANSPOSE_MERGE_MAX_TILE_ROW and s.constants_dict["TP_MERGE"] == 1
    assert s.entry_point == "transpose_entry" and s.uniforms_dict["r_len"] == 54
    # ... runs of whole words, not vectors (54 halves): word loads staged packed (TP_WPACK)
    assert s.constants_dict["TP_WPACK"] == 1 and s.constants_dict["TP_VEC"] == 0 and "words staged packed" in s.why
    w = plan_space_to_depth(s2d((3, 40, 12, 18), DataType.FLOAT16, 2, "CRD", lin="nhwc", lout="window"), h100)
    assert "TP_MERGE" not in w.steps[0].constants_dict

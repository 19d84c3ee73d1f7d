"""The runtime core: dispatch folding, the pipeline cache, batching, timestamps, errors, readback."""

import numpy as np
import pytest

import dmlwgsl
from dmlwgsl.runtime import GpuError, GpuTensor, Kernel, PipelineCache, dispatch_size, load_wgsl
from dmlwgsl.tensor import DataType, TensorDesc


def test_dispatch_size_folds_past_the_limit():
    assert dispatch_size(100, 64) == (2, 1, 1)
    assert dispatch_size(65535 * 64, 64) == (65535, 1, 1)
    x, y, z = dispatch_size(65536 * 64, 64)
    assert (x, y, z) == (32768, 2, 1) and x * y * 64 >= 65536 * 64
    # a 1 GiB u8 tensor at 16 bytes per thread and 256 threads per group
    x, y, z = dispatch_size((1 << 30) // 16, 256)
    assert max(x, y, z) <= 65535 and x * y * z * 256 >= (1 << 30) // 16
    x, y, z = dispatch_size(65535 * 65535 * 3, 1)
    assert max(x, y, z) <= 65535 and x * y * z >= 65535 * 65535 * 3 and z > 1


def test_pipeline_cache_lru_and_counters():
    c = PipelineCache(capacity=2)
    assert c.get("a", lambda: 1) == 1 and c.get("a", lambda: 2) == 1
    c.get("b", lambda: 3)
    c.get("c", lambda: 4)  # evicts a
    assert c.keys() == ["b", "c"] and (c.hits, c.misses) == (1, 3)


def test_wgsl_loader_includes_once():
    text = load_wgsl("depth_to_space.wgsl")
    assert "#include" not in text
    assert text.count("fn cursor_at(") == 1 and "fn depth_to_space_zip(" in text


def _copy_kernel(device, wg):
    from dmlwgsl.benchmark import copy_kernel

    return copy_kernel(device, workgroup_size=wg)


def test_folded_dispatch_runs_every_thread(device):
    """70000 workgroups of one thread: the grid folds into y and every vector is still copied."""
    words = 70000
    data = np.arange(words * 4, dtype=np.uint32)
    desc = TensorDesc(DataType.UINT32, (words * 4,))
    a = device.upload(data)
    b = device.tensor(desc)
    device.fill(b.buffer, b"\xa5")
    k = _copy_kernel(device, 1)
    info = np.array([words, words, 0, 0], np.uint32).tobytes()
    pack = lambda _r: info  # noqa: E731
    assert dispatch_size(words, 1)[1] > 1
    k.dispatch({"input": a, "output": b}, pack, words)
    np.testing.assert_array_equal(b.numpy(), data)


def test_repeat_dispatch_with_new_invocation_count(device):
    """The same kernel, tensors and uniforms dispatched again with more threads: the repeat-call
    shortcut must not reuse the first call's workgroup count."""
    words = 256
    data = np.arange(words * 4, dtype=np.uint32)
    a = device.upload(data)
    b = device.tensor(TensorDesc(DataType.UINT32, (words * 4,)))
    k = _copy_kernel(device, 64)
    info = np.array([words, words, 0, 0], np.uint32).tobytes()
    pack = lambda _r: info  # noqa: E731
    device.fill(b.buffer, b"\xa5")
    k.dispatch({"input": a, "output": b}, pack, 64)
    got = b.numpy()
    np.testing.assert_array_equal(got[: 64 * 4], data[: 64 * 4])
    assert np.all(got[64 * 4 :].view(np.uint8) == 0xA5)
    k.dispatch({"input": a, "output": b}, pack, words)
    np.testing.assert_array_equal(b.numpy(), data)


def test_batch_one_submission_with_timestamps(device):
    x = np.arange(2 * 8 * 4 * 4, dtype=np.float32).reshape(2, 8, 4, 4)
    xt = device.upload(x)
    op = dmlwgsl.compile_depth_to_space(
        dmlwgsl.DepthToSpaceDesc(xt.desc, TensorDesc(DataType.FLOAT32, (2, 2, 8, 8)), 2), device=device
    )
    y = device.tensor(op.output_desc)
    device.fill(y.buffer, b"\xa5")
    if not device.has_timestamps:
        pytest.skip("adapter without timestamp queries")
    with device.batch(timestamps=True) as b:
        op(xt, y)
        op(xt, y)
        with pytest.raises(RuntimeError, match="read back after the batch ends"):
            y.numpy()
    assert len(b.gpu_times_ns) == 2 and all(t >= 0 for t in b.gpu_times_ns)
    np.testing.assert_array_equal(y.numpy(), dmlwgsl.depth_to_space(x, 2, device=device))


def test_gpu_error_names_op_and_key(device):
    with pytest.raises(GpuError) as e:
        Kernel(
            device,
            op="copy",
            shader="common/copy_vec4.wgsl",
            entry_point="no_such_entry",
            bindings={},
            uniform_binding=2,
        )
    assert "copy" in str(e.value) and "no_such_entry" in str(e.value)


def test_write_and_read_unaligned(device):
    buf = device.create_buffer(64)
    device.fill(buf, b"\x11")
    device.write(buf, 3, b"abcde")
    assert device.read(buf, 0, 10) == b"\x11\x11\x11abcde\x11\x11"


def test_output_window_in_bigger_buffer(device):
    """An op writes into a window of a larger buffer at an element-aligned, unaligned-to-16 offset."""
    x = np.arange(4 * 3 * 5, dtype=np.uint16).reshape(1, 4, 3, 5)
    xt = device.upload(x)
    out_desc = TensorDesc(DataType.UINT16, (1, 1, 6, 10), (200, 100, 12, 1))
    buf = device.create_buffer(1024)
    device.fill(buf, b"\xee")
    op = dmlwgsl.compile_depth_to_space(dmlwgsl.DepthToSpaceDesc(xt.desc, out_desc, 2), device=device)
    op(xt, GpuTensor(device, out_desc, buf, 34))
    raw = np.frombuffer(device.read(buf), np.uint8)
    got = np.lib.stride_tricks.as_strided(raw[34:].view(np.uint16), (1, 1, 6, 10), (400, 200, 24, 2))
    np.testing.assert_array_equal(got, dmlwgsl.depth_to_space(x, 2, device=device))
    assert (raw[:34] == 0xEE).all()


def test_default_device_from_environment(monkeypatch):
    from dmlwgsl import runtime

    monkeypatch.setenv("DMLWGSL_BACKEND", "nonsense")
    old = runtime._default
    runtime.set_default_device(None)
    try:
        with pytest.raises(ValueError, match="backend: unknown backend 'nonsense'"):
            runtime.default_device()
    finally:
        runtime.set_default_device(old)


def test_bind_error_names_op_and_key(device):
    k = _copy_kernel(device, 64)
    t = device.tensor(TensorDesc(DataType.UINT32, (16,)))
    import wgpu

    not_storage = device.create_buffer(64, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    with pytest.raises(GpuError) as e:
        k.dispatch({"input": t, "output": GpuTensor(device, t.desc, not_storage, 0)}, lambda r: bytes(16), 1)
    assert "copy" in str(e.value) and "copy_vec4" in str(e.value)

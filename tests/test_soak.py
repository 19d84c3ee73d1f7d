"""Soak (marked slow; ``pytest -m slow tests/test_soak.py``): 100,000 numpy one-liner calls of
mixed shapes and operators and 100,000 batched dispatches, with GPU memory flat: the live wgpu
buffers the device created (and their bytes) after the run are no more than after the warm-up,
and the pools stay within their bounds."""

import gc
import time

import numpy as np
import pytest

import dmlwgsl
from dmlwgsl.reference import depth_to_space as rd
from dmlwgsl.reference import space_to_depth as rs
from dmlwgsl.tensor import DataType, TensorDesc

pytestmark = pytest.mark.slow

CALLS = 100_000
WARMUP = 2_000


def _cases(rng):
    """(one-liner, reference) pairs over several shapes, data types and operators."""
    cases = []
    for shape, dt in (((1, 16, 8, 8), np.float32), ((2, 4, 6, 10), np.uint8), ((1, 36, 3, 5), np.int64)):
        x = rng.integers(0, 100, size=shape).astype(dt)
        cases.append(
            (lambda x=x: dmlwgsl.depth_to_space(x, 2, "CRD", device=None), lambda x=x: rd.depth_to_space(x, 2, "CRD"))
        )
    for shape, dt in (((1, 3, 8, 8), np.float16), ((2, 2, 4, 12), np.int16)):
        x = rng.integers(0, 100, size=shape).astype(dt)
        cases.append(
            (lambda x=x: dmlwgsl.space_to_depth(x, 2, device=None), lambda x=x: rs.space_to_depth(x, 2, "DCR"))
        )
    x = rng.integers(0, 100, size=(1, 2, 5, 7)).astype(np.float32)
    cases.append(
        (lambda x=x: dmlwgsl.resample(x, (1, 2, 10, 14), device=None), lambda x=x: x.repeat(2, 2).repeat(2, 3))
    )
    return cases


def test_soak_one_liners_memory_flat(device):
    from dmlwgsl import runtime

    old = runtime._default
    runtime.set_default_device(device)
    try:
        rng = np.random.default_rng(0)
        cases = _cases(rng)
        order = rng.integers(0, len(cases), size=CALLS)
        expected = [ref() for _, ref in cases]
        t0 = time.perf_counter()
        for i, k in enumerate(order):
            got = cases[k][0]()
            if i % 997 == 0:
                np.testing.assert_array_equal(got, expected[k])
            if i == WARMUP:
                gc.collect()
                warm = device.memory()
        gc.collect()
        end = device.memory()
        elapsed = time.perf_counter() - t0
    finally:
        runtime.set_default_device(old)
    print(f"\n{CALLS} one-liners on {device.name}: {elapsed:.1f} s; memory after warm-up {warm}, at the end {end}")
    assert end["buffers"] <= warm["buffers"] and end["bytes"] <= warm["bytes"], (warm, end)
    assert end["pool_bytes"] <= device.pool.keep_bytes and end["staging_bytes"] <= device.staging.keep_bytes


def test_soak_batched_dispatches_memory_flat(device):
    x = np.arange(1 * 16 * 4 * 4, dtype=np.float32).reshape(1, 16, 4, 4)
    xt = device.upload(x)
    op = dmlwgsl.compile_depth_to_space(
        dmlwgsl.DepthToSpaceDesc(xt.desc, TensorDesc(DataType.FLOAT32, (1, 4, 8, 8)), 2), device=device
    )
    outs = [device.tensor(op.output_desc) for _ in range(4)]
    per_batch = 1000
    t0 = time.perf_counter()
    for b in range(CALLS // per_batch):
        with device.batch():
            for i in range(per_batch):
                op(xt, outs[i % 4])
        if b == 2:
            device.wait()
            gc.collect()
            warm = device.memory()
    device.wait()
    gc.collect()
    elapsed = time.perf_counter() - t0
    end = device.memory()
    print(f"\n{CALLS} batched dispatches on {device.name}: {elapsed:.1f} s; memory {warm} -> {end}")
    for o in outs:
        np.testing.assert_array_equal(o.numpy(), rd.depth_to_space(x, 2, "DCR"))
    assert end["buffers"] <= warm["buffers"] and end["bytes"] <= warm["bytes"], (warm, end)


def test_soak_uploads_memory_flat(device):
    """20,000 uploads of mixed sizes, some used by an operator, tensors dropped as a user would:
    the live buffers stay flat after the warm-up and the upload pool within its bound."""
    rng = np.random.default_rng(5)
    shapes = [(1, 16, 4, 4), (1, 4, 8, 8), (2, 8, 3, 5), (1, 36, 7, 9)]
    arrays = [rng.integers(0, 100, size=s).astype(np.float32) for s in shapes]
    x0 = device.upload(arrays[0])
    op = dmlwgsl.compile_depth_to_space(
        dmlwgsl.DepthToSpaceDesc(x0.desc, TensorDesc(DataType.FLOAT32, (1, 4, 8, 8)), 2), device=device
    )
    out = device.tensor(op.output_desc)
    del x0
    uploads = 20_000
    for i in range(uploads):
        k = i % len(arrays)
        t = device.upload(arrays[k])
        if k == 0:
            op(t, out)
        if i % 997 == 0:
            np.testing.assert_array_equal(t.numpy(), arrays[k])
            if k == 0:
                np.testing.assert_array_equal(out.numpy(), rd.depth_to_space(arrays[0], 2, "DCR"))
        del t
        if i == 4 * 997:  # every size has been read back once: the staging pool has its buffers
            gc.collect()
            warm = device.memory()
    gc.collect()
    end = device.memory()
    print(f"\n{uploads} uploads on {device.name}: memory {warm} -> {end}")
    assert end["buffers"] <= warm["buffers"] and end["bytes"] <= warm["bytes"], (warm, end)
    assert end["upload_bytes"] <= device.uploads.keep_bytes

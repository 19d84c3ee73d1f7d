"""The bench harness (dmlwgsl.benchmark): the tests' tolerances, exit status on an inexact row,
units that fit the figures, timing from GPU timestamps, plots."""

import numpy as np
import pytest

from dmlwgsl import benchmark as bm
from dmlwgsl.ops.resample import LINEAR_TOLERANCE
from dmlwgsl.tensor import DataType


def test_compare_uses_the_tests_tolerances():
    want = np.linspace(-4, 4, 64, dtype=np.float32)
    assert bm.compare(want.copy(), want) == (True, "exact")
    atol, _ = LINEAR_TOLERANCE[DataType.FLOAT32]
    near = want + np.float32(atol / 2)
    ok, note = bm.compare(near, want, linear=True)
    assert ok and note.startswith("within tolerance")
    assert not bm.compare(near, want)[0]  # not linear: bit-exact
    far = want + np.float32(atol * 4)
    ok, note = bm.compare(far, want, linear=True)
    assert not ok and "outside atol" in note
    u8 = np.arange(10, dtype=np.uint8)
    assert bm.compare(u8 + 1, u8, linear=True)[0] and not bm.compare(u8 + 2, u8, linear=True)[0]


def test_units_fit_the_figures():
    assert bm.fmt_rate(1.5e12, "OP/s") == "1.5 TOP/s"
    assert bm.fmt_rate(6.79e7, "OP/s") == "67.9 MOP/s"
    assert bm.fmt_rate(2.99e12, "B/s") == "2.99 TB/s"
    assert bm.fmt_time(0.0123) == "12.3 us" and bm.fmt_time(4.5) == "4.5 ms" and bm.fmt_time(1234) == "1.23 s"


def _args(**kw):
    import argparse

    return argparse.Namespace(**{"json": False, "plot": None, **kw})


def test_finish_exits_1_on_an_inexact_row(device, capsys):
    bench = bm.Bench(device)
    ok = bm.Row("op", "v", "1x2", "float32", 1.0, 1e9, "B/s", 0.5, True)
    bad = bm.Row("op", "w", "1x2", "float32", 1.0, 1e9, "B/s", 0.5, False, {"check": "3 of 8 elements differ"})
    assert bm.finish([ok], title="t", device=device, bench=bench, args=_args()) == 0
    assert bm.finish([ok, bad], title="t", device=device, bench=bench, args=_args()) == 1
    cap = capsys.readouterr()
    assert "INEXACT: op w 1x2 float32: 3 of 8 elements differ" in cap.err


def test_time_ns_counts_dispatches_from_timestamps(device):
    """A run of two dispatches is timed as one run (the op's dispatch count need not be passed)."""
    from dmlwgsl.runtime import GpuTensor
    from dmlwgsl.tensor import TensorDesc

    if not device.has_timestamps:
        pytest.skip(f"{device.name} has no GPU timestamps (wall clock is used there)")
    bench = bm.Bench(device, reps=3, warmup=1)
    d = TensorDesc(DataType.UINT32, (1024,))
    a = GpuTensor(device, d, device.create_buffer(4096))
    b = GpuTensor(device, d, device.create_buffer(4096))
    k = bm.copy_kernel(device)
    info = np.array([256, 256, 0, 0], np.uint32).tobytes()

    def two():
        k.dispatch({"input": a, "output": b}, lambda _r: info, 256)
        k.dispatch({"input": b, "output": a}, lambda _r: info, 256)

    assert bench.time_ns(two) > 0
    assert bench.time_ns(two, dispatches=2) > 0
    with pytest.raises(RuntimeError, match="expected 4 runs of 1 dispatches, got 8"):
        bench.time_ns(two, dispatches=1)
    # each dispatch timed apart: two figures a run
    assert len(bench.pass_times_ns(two, dispatches=2)) == 2


def test_paired_ns_takes_the_median_pair(device, monkeypatch):
    """paired_ns: each round times the roofline, then the row; the round with the median ratio gives
    both figures (CPU adapters), one round with the run's cached roofline on GPUs."""
    bench = bm.Bench(device, reps=2, warmup=1)
    roofs, rows = iter([100.0, 50.0, 100.0]), iter([400.0, 100.0, 200.0])  # ratios 0.25, 0.5, 0.5
    monkeypatch.setattr(bench, "roofline_now_ns", lambda moved, ops=None: next(roofs))
    monkeypatch.setattr(bench, "time_ns", lambda record, dispatches=None: next(rows))
    row, roof = bench.paired_ns(lambda: None, 1 << 20, rounds=3)
    assert roof / row == pytest.approx(0.5) and roof in (50.0, 100.0)
    monkeypatch.setattr(bm, "roofline_ns", lambda b, moved, ops=None: 7.0)
    monkeypatch.setattr(bench, "time_ns", lambda record, dispatches=None: 300.0)
    assert bench.paired_ns(lambda: None, 1 << 20, rounds=1) == (300.0, 7.0)


def test_paired_ns_of_the_copy_is_about_the_copy(device):
    """The copy paired with its own roofline (the same copy re-timed) lands near 100 %."""
    from dmlwgsl.runtime import GpuTensor
    from dmlwgsl.tensor import TensorDesc

    n = 1 << 18  # bytes copied
    bench = bm.Bench(device, reps=4, warmup=1)
    bench.copy_gbps(n)
    vpt, wg = bench._copy_best[max(16, n)]
    d = TensorDesc(DataType.UINT32, (n // 4,))
    a = GpuTensor(device, d, device.create_buffer(n))
    b = GpuTensor(device, d, device.create_buffer(n))
    k = bm.copy_kernel(device, vpt=vpt, workgroup_size=wg)
    threads = -(-(n // 16) // vpt)
    info = bm.copy_uniforms(n // 16, threads)
    copy = lambda: k.dispatch({"input": a, "output": b}, lambda _r: info, threads)  # noqa: E731
    row, roof = bench.paired_ns(copy, 2 * n, rounds=3)
    assert row > 0 and roof > 0
    assert 0.25 < roof / row < 4, (row, roof)


def test_run_timestamps_time_each_run_in_one_span(device):
    """A timestamps="run" batch gives one GPU time per run (end_run), its dispatches in one compute
    pass; copies inside a run, first or last, stay inside its span; the results are those of the
    same work untimed."""
    from dmlwgsl.runtime import GpuTensor
    from dmlwgsl.tensor import TensorDesc

    if not device.has_timestamps:
        pytest.skip(f"{device.name} has no GPU timestamps")
    d = TensorDesc(DataType.UINT32, (1024,))
    bufs = [GpuTensor(device, d, device.create_buffer(4096)) for _ in range(3)]
    a, b, c = bufs
    data = np.arange(1024, dtype=np.uint32)
    device.queue.write_buffer(a.buffer, 0, data.tobytes())
    device.fill(b.buffer, b"\xa5")
    device.fill(c.buffer, b"\xa5")
    k = bm.copy_kernel(device)
    info = np.array([256, 256, 0, 0], np.uint32).tobytes()
    with device.batch(timestamps="run") as batch:
        device.copy(a.buffer, 0, c.buffer, 0, 4096)  # a copy first in its run
        k.dispatch({"input": c, "output": b}, lambda _r: info, 256)
        batch.end_run()
        k.dispatch({"input": a, "output": b}, lambda _r: info, 256)
        device.copy(b.buffer, 0, c.buffer, 0, 2048)  # a copy between dispatches
        k.dispatch({"input": c, "output": b}, lambda _r: info, 256)
        device.copy(b.buffer, 0, c.buffer, 2048, 2048)  # and one last
        batch.end_run()
        batch.end_run()  # an empty run adds nothing
    assert len(batch.gpu_times_ns) == 2 and all(t >= 0 for t in batch.gpu_times_ns)
    assert batch.timed_dispatches == 3
    np.testing.assert_array_equal(np.frombuffer(device.read(b.buffer), np.uint32), data)
    np.testing.assert_array_equal(np.frombuffer(device.read(c.buffer), np.uint32), np.concatenate([data[:512]] * 2))


def test_benchmarks_size_themselves_to_the_adapter(device):
    """Defaults shrink (batch first) to the adapter's binding limit, and to 16 MiB on a CPU."""
    budget = bm.size_budget(device)
    assert budget <= device.max_binding_size
    shape = bm._fit_batch((8, 256, 256, 256), 8, budget)
    assert np.prod(shape) * 8 <= budget and shape[1:] == (256, 256, 256) or shape[0] == 1


def test_plot_rows(tmp_path):
    pytest.importorskip("matplotlib", reason="--plot needs the optional matplotlib (pip install 'dmlwgsl[plot]')")
    path = tmp_path / "p.png"
    bm.plot_rows(["a", "b", "c"], [50.0, 99.0, 120.0], ["resample", "resample", "depth_to_space"], str(path), title="t")
    assert path.stat().st_size > 1000


def test_ort_peer_says_why_in_one_line(device):
    peer = bm.OrtPeer.open(device)
    if isinstance(peer, str):
        assert peer.startswith("ORT WebGPU:") and "\n" not in peer
    else:
        assert peer.ep_device.ep_name == "WebGpuExecutionProvider"


def test_clocks_are_held_or_said(device):
    """On a CPU adapter nothing is held and settling is free, and the report names only the driver;
    the report says so either way."""
    bench = bm.Bench(device, reps=2, warmup=1)
    if bm.is_cpu_adapter(device):
        assert bench.clock_hold == "" and bench.settle() == 0.0
        assert bm.bench_notes(bench) == [f"driver: {device.driver}"] and "Mesa" in device.driver
    bench.unsettled = 2
    assert any("2 measurement(s) started with the GPU below its best speed" in n for n in bm.bench_notes(bench))


def test_split_benchmark_runs_exact(device):
    """bench/bench_split.py --quick: every op split past a 64 KiB binding record, each result equal
    to the unsplit plan's (or, linear, both within the tests' tolerance of the reference)."""
    from dmlwgsl.cli import _bench_module

    rows = _bench_module("split").run(device, quick=True)
    assert len(rows) == 10
    for name, full, split, *_times, check in rows:
        assert split > full, name  # the record forced a split
        assert check is True or (isinstance(check, str) and not check.startswith("NO")), (name, check)


def test_end_to_end_table_checks_ours(device):
    """bench/bench_host.py --only-e2e --quick: every case of ours checked against the reference; ORT
    columns where ORT is installed (its absence is a line, not a failure)."""
    from dmlwgsl.cli import _bench_module

    rows = _bench_module("host").e2e_rows(device, quick=True, reps=1)
    assert len(rows) == 8
    assert all(r["ours"] == "exact" or r["ours"].startswith("within tolerance") for r in rows), rows
    assert all(r["ours ms"] > 0 for r in rows)

"""Benchmark harness: GPU time from timestamp queries, the in-run vec4 copy ceiling, torch peers.

Every benchmark script in bench/ uses this module, and ``dmlwgsl bench`` runs those scripts from
the installed package. Times are medians over ``reps`` runs after ``warmup`` runs, each run timed
on the GPU with timestamp queries around its compute passes (wall clock, marked as such, only
where the adapter has no timestamps).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .runtime import Device, GpuTensor, Kernel
from .tensor import DataType, TensorDesc

__all__ = ["Bench", "Row", "copy_kernel", "print_table", "torch_cuda"]


@dataclass
class Row:
    """One line of a benchmark table."""

    op: str
    variant: str
    shape: str
    dtype: str
    ms: float
    metric: float  # GB/s for data movement, TOPS for convolution
    metric_name: str
    vs_copy: float | None  # ratio to the in-run copy bandwidth (data movement)
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The row as a JSON-ready dict."""
        d = {k: getattr(self, k) for k in ("op", "variant", "shape", "dtype", "ms", "metric", "metric_name", "vs_copy")}
        d.update(self.extra)
        return d


def copy_kernel(device: Device, *, vpt: int = 1, workgroup_size: int = 256) -> Kernel:
    """The vec4 copy kernel (wgsl/common/copy_vec4.wgsl): bindings input and output, uniforms
    (vec4 count, thread count); ``vpt`` vectors per thread."""
    return Kernel(
        device,
        op="copy",
        shader="common/copy_vec4.wgsl",
        entry_point="copy_vec4",
        bindings={"input": 0, "output": 1},
        uniform_binding=2,
        workgroup_size=workgroup_size,
        constants={"VPT": vpt},
        vec4_bindings=frozenset({"input", "output"}),
    )


class Bench:
    """Times GPU work on one device."""

    def __init__(self, device: Device, *, reps: int = 20, warmup: int = 3):
        self.device = device
        self.reps = reps
        self.warmup = warmup
        self.clock = "gpu-timestamps" if device.has_timestamps else "wall-clock"
        self._copy_cache: dict[int, float] = {}
        self._warm = False

    def warm_up(self, seconds: float = 0.5) -> None:
        """Keep the GPU busy for ``seconds`` so that it reaches its working clocks before the first
        measurement (an idle GPU's first milliseconds run slower and would skew the first row)."""
        if self._warm:
            return
        self._warm = True
        dev = self.device
        nbytes = min(64 << 20, dev.max_binding_size // 2)
        desc = TensorDesc(DataType.UINT32, (nbytes // 4,))
        a = GpuTensor(dev, desc, dev.create_buffer(nbytes, "warm.in"))
        b = GpuTensor(dev, desc, dev.create_buffer(nbytes, "warm.out"))
        k = copy_kernel(dev)
        words = nbytes // 16
        info = np.array([words, words, 0, 0], np.uint32).tobytes()
        pack = lambda _res: info  # noqa: E731
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            with dev.batch():
                for _ in range(20):
                    k.dispatch({"input": a, "output": b}, pack, words)
            dev.wait()
        a.buffer.destroy()
        b.buffer.destroy()

    def time_ns(self, record: Callable[[], object], dispatches: int = 1) -> float:
        """Median GPU nanoseconds of one run; ``record()`` issues the ``dispatches`` dispatches of one
        run (an op call). All runs go into one submission, one timed pass per dispatch."""
        n = self.warmup + self.reps
        self.warm_up()
        if self.device.has_timestamps:
            with self.device.batch(timestamps=True) as b:
                for _ in range(n):
                    record()
            t = np.asarray(b.gpu_times_ns, dtype=np.float64)
            if t.size != n * dispatches:
                raise RuntimeError(f"expected {n * dispatches} timed dispatches, got {t.size}")
            per_run = t.reshape(n, dispatches).sum(axis=1)[self.warmup :]
            return float(np.median(per_run))
        times = []
        for i in range(n):
            self.device.wait()
            t0 = time.perf_counter()
            record()
            self.device.wait()
            if i >= self.warmup:
                times.append((time.perf_counter() - t0) * 1e9)
        return float(statistics.median(times))

    def copy_gbps(self, nbytes: int) -> float:
        """Bandwidth (GB/s, read + write counted) of the vec4 copy kernel moving ``nbytes``: the
        best of a few vectors-per-thread settings, so the ceiling is the best copy we can write."""
        nbytes = (int(nbytes) + 15) & ~15
        if nbytes not in self._copy_cache:
            self._copy_cache[nbytes] = max(self.copy_variants(nbytes).values())
        return self._copy_cache[nbytes]

    def copy_variants(self, nbytes: int, vpts=(1, 2, 4), wgs=(256,)) -> dict:
        """GB/s of the vec4 copy for each (vectors per thread, workgroup size)."""
        dev = self.device
        nbytes = (int(nbytes) + 15) & ~15
        desc = TensorDesc(DataType.UINT32, (nbytes // 4,))
        a = GpuTensor(dev, desc, dev.create_buffer(nbytes, "copy.in"))
        b = GpuTensor(dev, desc, dev.create_buffer(nbytes, "copy.out"))
        words = nbytes // 16
        out = {}
        for wg in wgs:
            for vpt in vpts:
                k = copy_kernel(dev, vpt=vpt, workgroup_size=wg)
                threads = -(-words // vpt)
                info = np.array([words, threads, 0, 0], np.uint32).tobytes()
                pack = lambda _res, info=info: info  # noqa: E731
                ns = self.time_ns(lambda: k.dispatch({"input": a, "output": b}, pack, threads))
                out[(vpt, wg)] = 2 * nbytes / ns
        a.buffer.destroy()
        b.buffer.destroy()
        return out

    def host_overhead_us(self, record: Callable[[], object], n: int = 2000) -> float:
        """Host microseconds per dispatch when ``n`` calls of ``record`` are batched into one
        submission on cached pipelines and GPU-resident tensors (recording + encoding + submit)."""
        record()
        self.device.wait()
        t0 = time.perf_counter()
        with self.device.batch():
            for _ in range(n):
                record()
        t1 = time.perf_counter()
        self.device.wait()
        return (t1 - t0) * 1e6 / n


def progress(line: str) -> None:
    """One progress line on stderr (the table goes to stdout at the end)."""
    print(f"  .. {line}", file=sys.stderr, flush=True)


def torch_cuda():
    """The torch module when it has CUDA, else None."""
    try:
        import torch
    except Exception:
        return None
    return torch if torch.cuda.is_available() else None


def torch_time_ns(fn: Callable[[], object], reps: int = 20, warmup: int = 3) -> float:
    """Median CUDA-event nanoseconds of ``fn`` (torch must have CUDA)."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e6)
    return float(statistics.median(times))


def print_table(rows: list[Row], *, title: str, device: Device, clock: str, as_json: bool = False) -> None:
    """Print rows as a fixed-width table (or JSON), headed by the adapter and the clock used."""
    if as_json:
        print(
            json.dumps(
                {"title": title, "adapter": device.name, "clock": clock, "rows": [r.as_dict() for r in rows]}, indent=1
            )
        )
        return
    print(f"\n{title}\nadapter: {device.name}; clock: {clock}")
    extra_keys = sorted({k for r in rows for k in r.extra})
    head = ["op", "variant", "shape", "dtype", "ms", rows[0].metric_name if rows else "metric", "vs copy"] + extra_keys
    lines = [head]
    for r in rows:
        lines.append(
            [
                r.op,
                r.variant,
                r.shape,
                r.dtype,
                f"{r.ms:.4f}",
                f"{r.metric:.1f}",
                "" if r.vs_copy is None else f"{100 * r.vs_copy:.1f}%",
            ]
            + [_fmt(r.extra.get(k)) for k in extra_keys]
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    for line in lines:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths)))


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


# ------------------------------------------------------------------------------------------------
# DepthToSpace / SpaceToDepth (shared by bench/bench_depth_to_space.py and bench_space_to_depth.py)
# ------------------------------------------------------------------------------------------------
DEPTH_SPACE_DTYPES = ("float32", "float16", "uint8", "int64")


def depth_space_parser(op: str):
    """Command-line options of the DepthToSpace/SpaceToDepth benchmarks."""
    import argparse

    p = argparse.ArgumentParser(prog=f"bench_{op}", description=f"Benchmark {op} on one adapter.")
    p.add_argument("--backend", help="vulkan, gl, metal or dx12")
    p.add_argument("--adapter", help="substring of the adapter name")
    p.add_argument("--dtype", action="append", help=f"data type (repeatable; default {', '.join(DEPTH_SPACE_DTYPES)})")
    p.add_argument(
        "--shape",
        help="input shape N,C,H,W (default 8,256,256,256; SpaceToDepth gets the same "
        "element count as {N, C/4, 2H, 2W})",
    )
    p.add_argument("--block-size", type=int, default=2)
    p.add_argument("--order", action="append", choices=["DCR", "CRD"], help="default both")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="tiny shapes, for a smoke test")
    p.add_argument("--json", action="store_true")
    return p


def bench_depth_space(op: str, device: Device, args) -> list[Row]:
    """Time ``op`` ("depth_to_space" or "space_to_depth") for each dtype and order; compare with
    the in-run vec4 copy of the same bytes and, where torch has CUDA, pixel_shuffle/unshuffle."""
    from .ops.depth_to_space import DepthToSpaceDesc, compile_depth_to_space, depth_to_space_output_sizes
    from .ops.space_to_depth import SpaceToDepthDesc, compile_space_to_depth, space_to_depth_output_sizes
    from .reference.depth_to_space import depth_to_space as ref_d2s
    from .reference.space_to_depth import space_to_depth as ref_s2d

    b = args.block_size
    if args.shape:
        shape = tuple(int(s) for s in args.shape.split(","))
    else:
        shape = (1, 16, 8, 8) if args.quick else (8, 256, 256, 256)
    if op == "space_to_depth" and not args.shape:
        shape = (shape[0], shape[1] // (b * b), shape[2] * b, shape[3] * b)
    bench = Bench(device, reps=args.reps)
    torch = torch_cuda()
    if torch is not None:
        # Create the CUDA context now: seen on the H100, Vulkan work timed while torch's context
        # was still unborn ran up to 2x slower, which would skew the first rows.
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
    rows: list[Row] = []
    for dt_name in args.dtype or DEPTH_SPACE_DTYPES:
        dt = DataType.parse(dt_name)
        in_desc = TensorDesc(dt, shape)
        if op == "depth_to_space":
            out_desc = TensorDesc(dt, depth_to_space_output_sizes(shape, b))
        else:
            out_desc = TensorDesc(dt, space_to_depth_output_sizes(shape, b))
        nbytes = in_desc.total_tensor_size_in_bytes
        if nbytes > device.max_binding_size:
            print(f"skip {op} {dt_name} {shape}: {nbytes} bytes > max binding {device.max_binding_size}")
            continue
        copy = bench.copy_gbps(nbytes)  # before the op's buffers exist, like a clean copy test
        rng = np.random.default_rng(0)
        host = rng.integers(0, 256, size=nbytes, dtype=np.uint8)
        x = GpuTensor(device, in_desc, device.create_buffer(nbytes, "bench.in"))
        device.write(x.buffer, 0, host)
        y = device.tensor(out_desc, label="bench.out")
        for order in args.order or ("DCR", "CRD"):
            if op == "depth_to_space":
                k = compile_depth_to_space(DepthToSpaceDesc(in_desc, out_desc, b, order), device=device)
            else:
                k = compile_space_to_depth(SpaceToDepthDesc(in_desc, out_desc, b, order), device=device)
            ns = bench.time_ns(lambda: k(x, y), dispatches=k.plan.dispatches)
            # Spot-check the last run against the numpy reference on a slice of the batch.
            got = y.numpy()[:1]
            xs = host.view(dt.numpy_dtype).reshape(shape)[:1]
            want = ref_d2s(xs, b, order) if op == "depth_to_space" else ref_s2d(xs, b, order)
            ok = bool(np.array_equal(got.view(np.uint8), want.view(np.uint8)))
            gbps = 2 * nbytes / ns
            extra = {"exact": ok}
            if torch is not None:
                tdt = {
                    "float32": torch.float32,
                    "float16": torch.float16,
                    "uint8": torch.uint8,
                    "int64": torch.int64,
                }.get(dt.name.lower())
                if tdt is not None:
                    tx = torch.zeros(shape, dtype=tdt, device="cuda")
                    f = (
                        (lambda: torch.nn.functional.pixel_shuffle(tx, b))
                        if op == "depth_to_space"
                        else (lambda: torch.nn.functional.pixel_unshuffle(tx, b))
                    )
                    tns = torch_time_ns(f, reps=args.reps)
                    extra["torch_ms"] = tns / 1e6
                    extra["torch_vs_copy"] = f"{100 * (2 * nbytes / tns) / copy:.1f}%"
                    extra["speedup"] = tns / ns
                    del tx
            rows.append(
                Row(op, order, "x".join(map(str, shape)), dt.name.lower(), ns / 1e6, gbps, "GB/s", gbps / copy, extra)
            )
            progress(
                f"{op} {order} {dt.name.lower()}: {ns / 1e6:.4f} ms, {100 * gbps / copy:.1f}% of copy, "
                f"{'exact' if ok else 'MISMATCH'}"
            )
        x.buffer.destroy()
        y.buffer.destroy()
    # Host overhead per batched dispatch on cached pipelines and GPU-resident tensors: the same op
    # repeated, and a chain DepthToSpace -> SpaceToDepth (every dispatch changes pipeline and bindings).
    f32 = DataType.FLOAT32
    a, b_, c = TensorDesc(f32, (1, 16, 8, 8)), TensorDesc(f32, (1, 4, 16, 16)), TensorDesc(f32, (1, 16, 8, 8))
    d2s = compile_depth_to_space(DepthToSpaceDesc(a, b_, 2), device=device)
    s2d = compile_space_to_depth(SpaceToDepthDesc(b_, c, 2), device=device)
    ta, tb, tc = device.tensor(a), device.tensor(b_), device.tensor(c)
    first = (lambda: d2s(ta, tb)) if op == "depth_to_space" else (lambda: s2d(tb, tc))

    def chain():
        d2s(ta, tb)
        s2d(tb, tc)

    for name, fn, per in (("same op", first, 1), ("chain d2s->s2d", chain, 2)):
        us = bench.host_overhead_us(fn) / per
        rows.append(
            Row(
                op,
                f"host overhead, {name}",
                "1x16x8x8",
                "float32",
                float("nan"),
                us,
                "us/dispatch",
                None,
                {"note": "batched, cached, GPU-resident"},
            )
        )
    return rows


def depth_space_main(op: str, argv=None) -> int:
    """Entry point of the DepthToSpace/SpaceToDepth benchmark scripts."""
    args = depth_space_parser(op).parse_args(argv)
    device = Device(backend=args.backend, adapter=args.adapter)
    rows = bench_depth_space(op, device, args)
    print_table(
        rows, title=f"{op} (block size {args.block_size})", device=device, clock=Bench(device).clock, as_json=args.json
    )
    return 0 if all(r.extra.get("exact", True) for r in rows) else 1

"""Benchmark the host path: transfers, one-shot numpy calls and batched dispatches, each as a ratio
to the raw-wgpu floor measured in the same run on the same device.

* Transfers, 1 MiB to 1 GiB (capped by the adapter's max-buffer-size and ``--max-mib``):
  upload in steady state (a loop of uploads whose tensors are dropped: the buffer is reused) against
  raw ``queue.write_buffer`` into a kept buffer, with ``Device.write`` into a kept buffer beside it;
  upload fresh (every call allocates: its buffer is destroyed after) against raw create buffer +
  ``write_buffer``, with a raw buffer mapped at creation beside it; readback = raw copy +
  map + one copy into a numpy array, and ``GpuTensor.numpy()``; torch ``.cuda()`` / ``.cpu()``
  (pageable) where torch has CUDA. Every upload is timed to completion on the GPU.
* One-shot: the numpy one-liner against the floor for the same work (write the input to a kept
  buffer, the op's own dispatches with kept pipelines and bind groups, copy to a kept mappable
  buffer, map, read into numpy), medians of interleaved runs.
* End to end (``--e2e``): the numpy one-liner against ONNX Runtime's ``session.run`` from numpy, on its
  WebGPU execution provider and on its CPU provider, for the large cases of issue 14 (median wall ms;
  every result compared with the numpy reference, and ORT's with ours).
* Batched: host microseconds per dispatch of a compiled op on resident tensors inside
  ``device.batch()`` (recording + encoding + submission), beside the same dispatches recorded with
  wgpu-py's own pass calls (set_pipeline, set_bind_group, dispatch_workgroups) and submitted, and
  beside the native floor: the same dispatches with direct calls of wgpu-native's functions in a
  bare loop (pipeline and bind group set once where they never change).

    python bench/bench_host.py [--backend B] [--adapter NAME] [--quick] [--max-mib N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np
import wgpu

import dmlwgsl
from dmlwgsl.tensor import DataType, TensorDesc

try:  # the native functions behind wgpu-py's pass calls, for the batched floor
    from wgpu.backends.wgpu_native._api import ffi as _ffi
    from wgpu.backends.wgpu_native._api import lib as _lib
except ImportError:  # pragma: no cover - another wgpu-py backend
    _ffi = _lib = None

MiB = 1 << 20


def _median_s(fn, reps: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _torch():
    try:
        import torch
    except Exception:
        return None
    return torch if torch.cuda.is_available() else None


def _interleaved(variants, nbytes: int, reps: int) -> dict:
    """GB/s (median) of each (name, fn), the variants run in turn each repetition so that a
    noisy neighbour slows them alike."""
    times = {name: [] for name, _ in variants}
    for name, fn in variants:  # warm-up: pools, staging, first-touch of the pages
        fn()
    for _ in range(reps):
        for name, fn in variants:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: nbytes / statistics.median(t) / 1e9 for name, t in times.items()}


def transfer_rows(dev: dmlwgsl.Device, sizes_mib, reps: int) -> list[dict]:
    """GB/s of every upload and readback variant per size."""
    torch = _torch()
    rows = []
    d = dev.device
    for mib in sizes_mib:
        n = mib * MiB
        reps_n = max(3, min(reps, (512 * MiB) // n))
        host = np.random.default_rng(mib).integers(0, 255, size=n, dtype=np.uint8)
        kept = dev.create_buffer(n, "bench.kept")
        dev.write(kept, 0, host)

        def raw_upload():
            d.queue.write_buffer(kept, 0, host)
            dev.wait()

        def our_write():
            dev.write(kept, 0, host)
            dev.wait()

        def upload_steady():  # the tensor of the previous call is gone: its buffer is reused
            dev.upload(host)
            dev.wait()

        def upload_fresh():  # the buffer is destroyed each time: every upload allocates
            t = dev.upload(host)
            dev.wait()
            t.buffer.destroy()

        def mapped_upload():
            b = d.create_buffer(
                size=n, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC, mapped_at_creation=True
            )
            b.write_mapped(host)
            b.unmap()
            dev.wait()
            b.destroy()

        stg = d.create_buffer(size=n, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)

        def raw_read():
            enc = d.create_command_encoder()
            enc.copy_buffer_to_buffer(kept, 0, stg, 0, n)
            d.queue.submit([enc.finish()])
            stg.map_sync(wgpu.MapMode.READ)
            out = np.frombuffer(stg.read_mapped(copy=False), np.uint8).copy()
            stg.unmap()
            return out

        tensor = dmlwgsl.GpuTensor(dev, TensorDesc(DataType.UINT8, (n,)), kept, 0)
        assert np.array_equal(tensor.numpy(), host) and np.array_equal(raw_read(), host)

        def our_read_poller():
            keep, dev.poll_in_thread = dev.poll_in_thread, 0
            try:
                return tensor.numpy()
            finally:
                dev.poll_in_thread = keep

        def raw_create_upload():
            b = d.create_buffer(size=n, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST)
            d.queue.write_buffer(b, 0, host)
            dev.wait()
            b.destroy()

        # Three groups, each interleaved in itself: steady-state uploads (the floor: raw write_buffer
        # into a kept buffer), uploads that allocate every time (the floor: raw create + write), and
        # readbacks. The fresh group runs apart so that its uploads cannot take the steady one's buffer.
        groups = [
            [
                ("up raw write_buffer", raw_upload),
                ("up dev.write", our_write),
                ("up dev.upload steady", upload_steady),
            ],
            [
                ("up raw create+write_buffer", raw_create_upload),
                ("up dev.upload fresh", upload_fresh),
                ("up raw mapped-at-creation", mapped_upload),
            ],
            [
                ("down raw copy+map+copy", raw_read),
                ("down tensor.numpy", tensor.numpy),
                ("down tensor.numpy (poll thread)", our_read_poller),
            ],
        ]
        hits = dev.uploads.hits
        assert np.array_equal(dev.upload(host).numpy(), host)
        row = {"MiB": mib}
        for variants in groups:
            with dev._lock:
                dev.uploads.clear()
            row.update(_interleaved(variants, n, reps_n))
            if variants is groups[0]:
                assert dev.uploads.hits - hits >= reps_n, "steady-state uploads did not reuse their buffer"
        stg.destroy()
        if torch is not None:
            th = torch.from_numpy(host)
            tg = th.cuda()

            def t_up():
                th.cuda()
                torch.cuda.synchronize()

            row.update(_interleaved([("up torch .cuda()", t_up), ("down torch .cpu()", tg.cpu)], n, reps_n))
            del tg
        kept.destroy()
        row["write/raw"] = row["up dev.write"] / row["up raw write_buffer"]
        row["upload steady/raw"] = row["up dev.upload steady"] / row["up raw write_buffer"]
        row["upload fresh/raw create+write"] = row["up dev.upload fresh"] / row["up raw create+write_buffer"]
        row["down ours/raw"] = row["down tensor.numpy"] / row["down raw copy+map+copy"]
        rows.append(row)
        print(
            f"  .. transfers {mib} MiB: " + ", ".join(f"{k} {_cell(v, None)}" for k, v in row.items()), file=sys.stderr
        )
    return rows


def _cases():
    rng = np.random.default_rng(0)
    x = rng.random((1, 16, 32, 32), dtype=np.float32)
    q = rng.integers(-128, 127, size=(1, 32, 28, 28), dtype=np.int8)
    w = rng.integers(-128, 127, size=(32, 32, 3, 3), dtype=np.int8)
    return [
        ("depth_to_space (1,16,32,32) f32", lambda dev: dmlwgsl.depth_to_space(x, 2, device=dev), [x]),
        ("space_to_depth (1,16,32,32) f32", lambda dev: dmlwgsl.space_to_depth(x, 2, device=dev), [x]),
        ("resample nearest x2 (1,16,32,32) f32", lambda dev: dmlwgsl.resample(x, (1, 16, 64, 64), device=dev), [x]),
        ("convolution_integer (1,32,28,28) 3x3", lambda dev: dmlwgsl.convolution_integer(q, w, device=dev), [q, w]),
    ]


def _floor_for(dev: dmlwgsl.Device, run, arrays):
    """The raw-wgpu floor for one one-liner: its own dispatches (captured from a batch), replayed
    with raw wgpu calls around kept buffers."""
    expected = run(dev)
    op = next(reversed(dev.operators._items.values()))
    ins = [dev.upload(a) for a in arrays]
    out = dev.tensor(op.desc.output if hasattr(op, "desc") else op.output_desc)
    with dev.batch() as b:
        op(*ins, out)  # (input, output) or (input, filter, output)
        items = list(b.items)
        b.items.clear()  # replayed by the floor below, not submitted here
        b.buffers.clear()
    d = dev.device
    n = out.desc.total_tensor_size_in_bytes
    stg = d.create_buffer(size=n, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    dt = expected.dtype

    def floor():
        for t, a in zip(ins, arrays):
            d.queue.write_buffer(t.buffer, 0, a)
        enc = d.create_command_encoder()
        cp = enc.begin_compute_pass()
        for pipe, bg, g, _ in items:
            cp.set_pipeline(pipe)
            cp.set_bind_group(0, bg)
            cp.dispatch_workgroups(*g)
        cp.end()
        enc.copy_buffer_to_buffer(out.buffer, 0, stg, 0, n)
        d.queue.submit([enc.finish()])
        stg.map_sync(wgpu.MapMode.READ)
        r = np.frombuffer(stg.read_mapped(copy=False), dt).copy()
        stg.unmap()
        return r

    got = floor().reshape(expected.shape)
    assert np.array_equal(got, expected), "the floor's result differs from the one-liner's"
    return floor


def oneshot_rows(dev: dmlwgsl.Device, reps: int) -> list[dict]:
    """Median microseconds of each one-liner and of its floor, runs interleaved."""
    rows = []
    for name, run, arrays in _cases():
        floor = _floor_for(dev, run, arrays)

        def thread_polled():
            keep, dev.poll_in_thread = dev.poll_in_thread, 0
            try:
                run(dev)
            finally:
                dev.poll_in_thread = keep

        variants = {"one-liner": lambda: run(dev), "one-liner (poll thread)": thread_polled, "floor": floor}
        times = {k: [] for k in variants}
        for _ in range(20):
            for f in variants.values():
                f()
        for _ in range(reps):
            for k, f in variants.items():
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
        us = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        rows.append(
            {
                "case": name,
                "one-liner us": us["one-liner"],
                "floor us": us["floor"],
                "ratio": us["one-liner"] / us["floor"],
                "poll-thread us": us["one-liner (poll thread)"],
                "poll-thread ratio": us["one-liner (poll thread)"] / us["floor"],
            }
        )
        print(f"  .. one-shot {name}", file=sys.stderr, flush=True)
    return rows


def batched_rows(dev: dmlwgsl.Device, n: int = 2000) -> list[dict]:
    """Host microseconds per dispatch inside a batch (best of 5 batches of ``n``)."""
    rows = []
    x = np.random.default_rng(1).random((1, 16, 8, 8), dtype=np.float32)
    xt = dev.upload(x)
    d2s = dmlwgsl.compile_depth_to_space(
        dmlwgsl.DepthToSpaceDesc(xt.desc, TensorDesc(DataType.FLOAT32, (1, 4, 16, 16)), 2), device=dev
    )
    rs = dmlwgsl.compile_resample(
        dmlwgsl.Resample1Desc(
            xt.desc, TensorDesc(DataType.FLOAT32, (1, 16, 16, 16)), "nearest", (1, 1, 2, 2), (0.5,) * 4, (-0.5,) * 4
        ),
        device=dev,
    )
    q = dev.upload(np.ones((1, 16, 8, 8), np.int8))
    w = dev.upload(np.ones((16, 16, 3, 3), np.int8))
    conv = dmlwgsl.compile_convolution_integer(
        dmlwgsl.ConvolutionIntegerDesc(q.desc, w.desc, TensorDesc(DataType.INT32, (1, 16, 6, 6))), device=dev
    )
    cases = [
        ("depth_to_space", d2s, (xt, dev.tensor(TensorDesc(DataType.FLOAT32, (1, 4, 16, 16))))),
        ("resample", rs, (xt, dev.tensor(TensorDesc(DataType.FLOAT32, (1, 16, 16, 16))))),
        ("convolution_integer", conv, (q, w, dev.tensor(TensorDesc(DataType.INT32, (1, 16, 6, 6))))),
    ]
    d = dev.device
    for name, op, args in cases:
        op(*args)
        dev.wait()
        with dev.batch() as b:
            op(*args)
            items = list(b.items)
        dev.wait()

        def raw():  # the same dispatches with wgpu-py's own calls, three per dispatch
            enc = d.create_command_encoder()
            cp = enc.begin_compute_pass()
            for _ in range(n):
                for pipe, bg, g, _label in items:
                    cp.set_pipeline(pipe)
                    cp.set_bind_group(0, bg)
                    cp.dispatch_workgroups(*g)
            cp.end()
            d.queue.submit([enc.finish()])

        pre = [(pipe._internal, bg._internal, g) for pipe, bg, g, _label in items]
        single = len({(p, b) for p, b, _ in pre}) == 1

        def native():  # the floor of any Python binding: direct native calls, no state set twice
            enc = d.create_command_encoder()
            cp = enc.begin_compute_pass()
            h = cp._internal
            if single:
                p, b, g = pre[0]
                _lib.wgpuComputePassEncoderSetPipeline(h, p)
                _lib.wgpuComputePassEncoderSetBindGroup(h, 0, b, 0, _ffi.NULL)
                for _ in range(n):
                    _lib.wgpuComputePassEncoderDispatchWorkgroups(h, *g)
            else:
                for _ in range(n):
                    for p, b, g in pre:
                        _lib.wgpuComputePassEncoderSetPipeline(h, p)
                        _lib.wgpuComputePassEncoderSetBindGroup(h, 0, b, 0, _ffi.NULL)
                        _lib.wgpuComputePassEncoderDispatchWorkgroups(h, *g)
            cp.end()
            d.queue.submit([enc.finish()])

        def ours():
            with dev.batch():
                for _ in range(n):
                    op(*args)

        best = {"ours": float("inf"), "raw": float("inf"), "native": float("inf")}
        for _ in range(5):
            for k, f in (("ours", ours), ("raw", raw), ("native", native))[: 3 if _lib is not None else 2]:
                t0 = time.perf_counter()
                f()
                best[k] = min(best[k], time.perf_counter() - t0)
                dev.wait()
        per = n * len(items)
        rows.append(
            {
                "op": name,
                "dispatches per call": len(items),
                "us per dispatch": best["ours"] * 1e6 / per,
                "raw wgpu-py us": best["raw"] * 1e6 / per,
                "ours/raw": best["ours"] / best["raw"],
                "native floor us": best["native"] * 1e6 / per,
                "ours/native": best["ours"] / best["native"],
            }
        )
    return rows


def e2e_cases(quick: bool):
    """The end-to-end cases of issue 14 (small with ``quick``): (label, ONNX op, input shape, input
    dtype, output shape, our one-liner(x, device), the numpy reference(x), the ONNX attributes, the
    extra ONNX inputs as (name, array) with "" for an absent one, whether linear tolerance applies)."""
    from dmlwgsl.reference import convolution_integer as ref_conv
    from dmlwgsl.reference import depth_to_space as ref_d2s
    from dmlwgsl.reference import resample as ref_rs
    from dmlwgsl.reference import space_to_depth as ref_s2d

    big = (1, 4, 32, 32) if quick else (8, 64, 224, 224)
    rs = (1, 4, 32, 32) if quick else (8, 64, 256, 256)
    cases = []
    for mode in ("nearest", "linear"):
        out = rs[:2] + (rs[2] * 2, rs[3] * 2)
        attrs = {"mode": mode, "coordinate_transformation_mode": "half_pixel"}
        if mode == "nearest":
            attrs["nearest_mode"] = "round_prefer_ceil"
        sc = np.array([1, 1, 2, 2], np.float32)
        cases.append(
            (
                f"Resize {mode} x2 {rs} f32",
                "Resize",
                rs,
                np.float32,
                out,
                lambda x, dev, mode=mode, out=out: dmlwgsl.resample(x, out, mode=mode, scales=(1, 1, 2, 2), device=dev),
                lambda x, mode=mode, out=out: ref_rs.resample(x, out, mode, (1, 1, 2, 2), (0.5,) * 4, (-0.5,) * 4),
                attrs,
                [("", None), ("scales", sc)],
                mode == "linear",
            )
        )
    for shape in (big, (1, 64, 64, 64)):
        for order in ("DCR", "CRD"):
            if shape != big and order == "CRD":
                continue
            out = (shape[0], shape[1] // 4, shape[2] * 2, shape[3] * 2)
            cases.append(
                (
                    f"DepthToSpace {order} {shape} f32",
                    "DepthToSpace",
                    shape,
                    np.float32,
                    out,
                    lambda x, dev, order=order: dmlwgsl.depth_to_space(x, 2, order, device=dev),
                    lambda x, order=order: ref_d2s.depth_to_space(x, 2, order),
                    {"blocksize": 2, "mode": order},
                    [],
                    False,
                )
            )
    cases.append(
        (
            f"SpaceToDepth {big} f32",
            "SpaceToDepth",
            big,
            np.float32,
            (big[0], big[1] * 4, big[2] // 2, big[3] // 2),
            lambda x, dev: dmlwgsl.space_to_depth(x, 2, device=dev),
            lambda x: ref_s2d.space_to_depth(x, 2),
            {"blocksize": 2},
            [],
            False,
        )
    )
    for shape, m in (((1, 4, 16, 16) if quick else (8, 64, 56, 56), 64), ((1, 32, 28, 28), 32)):
        w = np.random.default_rng(2).integers(0, 256, (m, shape[1], 3, 3), dtype=np.uint8)
        out = (shape[0], m, shape[2], shape[3])
        cases.append(
            (
                f"ConvInteger {shape} 3x3 pad 1 u8*u8",
                "ConvInteger",
                shape,
                np.uint8,
                out,
                lambda x, dev, w=w: dmlwgsl.convolution_integer(
                    x, w, start_padding=(1, 1), end_padding=(1, 1), device=dev
                ),
                lambda x, w=w: ref_conv.convolution_integer(x, w, start_padding=(1, 1), end_padding=(1, 1)),
                {"pads": [1, 1, 1, 1]},
                [("w", w)],
                False,
            )
        )
    return cases


def e2e_rows(dev: dmlwgsl.Device, quick: bool, reps: int) -> list[dict]:
    """Wall ms from numpy to numpy: our one-liner, ORT WebGPU EP, ORT CPU (see the module docstring)."""
    from dmlwgsl.benchmark import OrtPeer, compare, onnx_model, wall_ms

    peer = OrtPeer.open(dev)
    rows = []
    if isinstance(peer, str):
        print(f"  .. {peer}", file=sys.stderr, flush=True)
    for label, op, shape, dt, out, ours, ref, attrs, extra, linear in e2e_cases(quick):
        rng = np.random.default_rng(0)
        x = rng.standard_normal(shape, dtype=np.float32) if dt == np.float32 else rng.integers(0, 256, shape, np.uint8)
        got = ours(x, dev)
        ok, note = compare(got, ref(x), linear=linear)
        row = {
            "case": label,
            "ours ms": wall_ms(lambda: ours(x, dev), reps=reps),
            "ours": note if ok else "NO: " + note,
        }
        inputs = [("x", dt, shape)] + [n if not n else (n, a.dtype, a.shape) for n, a in extra]
        inits = [(n, a) for n, a in extra if n]
        out_dt = np.int32 if op == "ConvInteger" else dt
        model = onnx_model(
            op, inputs, ("y", out_dt, out), attrs, initializers=inits, opset=19 if op == "Resize" else 13
        )
        if not isinstance(peer, str):
            m = peer.measure(model, {"x": x}, reps=reps * 4)
            row["ORT WebGPU ms"] = m.get("ort_e2e_ms")
            row["ORT nodes"] = m.get("ort_nodes", m.get("ort_note", ""))[:40]
        try:
            import onnxruntime as ort

            cpu = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
            cpu.run(None, {"x": x})
            row["ORT CPU ms"] = wall_ms(lambda: cpu.run(None, {"x": x}), reps=reps)
        except Exception as e:  # ORT missing, or a kernel its CPU provider lacks
            row["ORT CPU ms"] = None
            row["ORT nodes"] = (row.get("ORT nodes", "") + f" CPU: {str(e).splitlines()[0][:60]}").strip()
        best_peer = min([v for k, v in row.items() if k.startswith("ORT") and k.endswith("ms") and v] or [None])
        row["peer/ours"] = best_peer / row["ours ms"] if best_peer else None
        rows.append(row)
        print(f"  .. e2e {label}: ours {row['ours ms']:.3g} ms", file=sys.stderr, flush=True)
    return rows


def _table(title: str, rows: list[dict], fmt=None) -> None:
    if not rows:
        return
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[_cell(r.get(c), fmt) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    print(f"\n{title}")
    print("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)))


def _cell(v, fmt) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}" if v < 100 else f"{v:.0f}"
    return str(v)


def main(argv=None) -> int:
    """Command-line entry point (``dmlwgsl bench host``)."""
    p = argparse.ArgumentParser(prog="dmlwgsl bench host", description=__doc__.split("\n\n")[0])
    p.add_argument("--backend")
    p.add_argument("--adapter")
    p.add_argument("--quick", action="store_true", help="1 to 64 MiB, fewer repetitions")
    p.add_argument("--max-mib", type=int, default=1024, help="largest transfer (default 1024, capped by the adapter)")
    p.add_argument("--reps", type=int, default=300, help="one-shot repetitions (default 300)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--e2e", action="store_true", help="also the end-to-end table against ONNX Runtime (WebGPU EP, CPU)")
    p.add_argument("--only-e2e", action="store_true", help="only the end-to-end table")
    args = p.parse_args(argv)
    dev = dmlwgsl.Device(backend=args.backend, adapter=args.adapter)
    cap = min(args.max_mib, 64 if args.quick else args.max_mib, dev.max_buffer_size // MiB // 2)
    sizes = [m for m in (1, 4, 16, 64, 256, 1024) if m <= cap]
    print(f"  .. {dev.name}: transfers {sizes} MiB", file=sys.stderr, flush=True)
    # Each table is printed as soon as it is measured, the quick ones first (a run cut short keeps
    # what it has).
    if not args.json:
        print(f"\ndmlwgsl bench host on {dev.name}")
    if args.e2e or args.only_e2e:
        e2e = e2e_rows(dev, args.quick, 3 if args.quick else 5)
        if args.json:
            print(json.dumps({"adapter": dev.name, "e2e": e2e}, default=str))
        else:
            _table("End to end from numpy (median wall ms; peer/ours > 1: we are faster)", e2e)
        if args.only_e2e:
            return 0
    batched = batched_rows(dev)
    if not args.json:
        _table("Batched: host us per dispatch on resident tensors (batch of 2000 calls, best of 5)", batched)
    oneshot = oneshot_rows(dev, 50 if args.quick else args.reps)
    if not args.json:
        _table("One-shot numpy call (median us, interleaved; ratio = one-liner / raw-wgpu floor)", oneshot)
    transfers = transfer_rows(dev, sizes, 3 if args.quick else 7)
    if args.json:
        print(json.dumps({"adapter": dev.name, "transfers_gbps": transfers, "oneshot": oneshot, "batched": batched}))
        return 0
    _table("Transfers (GB/s; ratios: ours / raw floor, same run)", transfers)
    return 0


if __name__ == "__main__":
    sys.exit(main())

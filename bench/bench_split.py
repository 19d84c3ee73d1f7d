"""Plans split past the binding limit, timed against the unsplit plan and the in-run roofline.

The bench shapes are planned against the device's record with max-storage-buffer-binding-size cut
to 128 MiB (lavapipe's), so each op runs in steps that bind windows. Results are compared with the
unsplit plan's (bit-equal; linear rows that differ are each checked against the numpy reference,
batch item 0, under the tests' tolerance). ``--oom`` then allocates 2 GiB buffers until the
adapter is out of memory: that must be an AllocationError, and a one-liner must still work after.

    python bench/bench_split.py [--quick] [--oom]      (or: dmlwgsl bench split ...)
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import dmlwgsl
from dmlwgsl import Capabilities
from dmlwgsl import DataType as D
from dmlwgsl import TensorDesc as T
from dmlwgsl.benchmark import Bench, compare, open_device, roofline_ns
from dmlwgsl.reference import depth_to_space as ref_d2s
from dmlwgsl.reference import resample as ref_rs
from dmlwgsl.runtime import AllocationError


def tight_record(dev, limit: int) -> Capabilities:
    """The device's capabilities with max-storage-buffer-binding-size ``limit``."""
    return Capabilities.from_device(dev).with_binding_limit(limit)


def measure(dev, bench, tight, name, compile_fn, desc, ins, out_desc, linear=None) -> tuple:
    """(name, dispatches unsplit, split, us unsplit, us split, split as a fraction of the roofline,
    check). The roofline is the in-run copy of the plan's bytes; for ConvolutionInteger, the larger of
    that and the plan's operations at the in-run dp4a ceiling (benchmark.roofline_ns)."""
    full = compile_fn(desc, device=dev)
    split = compile_fn(desc, device=dev, capabilities=tight)
    outs, times = [], []
    for op in (full, split):
        y = dev.tensor(out_desc)
        times.append(bench.time_ns(lambda: op(*ins, y)) / 1e3)
        outs.append(y.numpy())
        y.buffer.destroy()
    check: object = bool(np.array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8)))
    if not check and linear is not None:
        x0, s = linear
        want = ref_rs.resample(x0, (1,) + out_desc.sizes[1:], "linear", (1.0, 1.0, s, s), (0.5,) * 4, (-0.5,) * 4)
        notes = [compare(o[:1], want, linear=True) for o in outs]
        ok = all(n[0] for n in notes)
        check = f"full {notes[0][1]} / split {notes[1][1]}" if ok else f"NO: {notes}"
    roof_us = roofline_ns(bench, full.plan.bytes_moved, full.plan.ops) / 1e3
    row = (name, full.plan.dispatches, split.plan.dispatches, times[0], times[1], roof_us / times[1], check)
    print(f"  .. {row}", file=sys.stderr, flush=True)
    return row


def run(dev, quick: bool) -> list[tuple]:
    """Every row; small shapes and a 64 KiB record with ``quick``."""
    bench = Bench(dev, reps=10)
    tight = tight_record(dev, (64 << 10) if quick else (128 << 20))
    rng = np.random.default_rng(0)
    big, wide = ((1, 16, 32, 32), (1, 4, 64, 64)) if quick else ((8, 256, 256, 256), (8, 64, 512, 512))
    rows = []
    x = dev.upload(rng.standard_normal(big, dtype=np.float32))
    for order in ("DCR", "CRD"):
        desc = dmlwgsl.DepthToSpaceDesc(x.desc, T(D.FLOAT32, wide), 2, order)
        rows.append(
            measure(dev, bench, tight, f"d2s f32 {order}", dmlwgsl.compile_depth_to_space, desc, (x,), desc.output)
        )
    x.buffer.destroy()
    x = dev.upload(rng.standard_normal(wide, dtype=np.float32))
    desc = dmlwgsl.SpaceToDepthDesc(x.desc, T(D.FLOAT32, big), 2)
    rows.append(measure(dev, bench, tight, "s2d f32 DCR", dmlwgsl.compile_space_to_depth, desc, (x,), desc.output))
    x.buffer.destroy()
    rs = (1, 8, 48, 48) if quick else (8, 64, 256, 256)
    for dt, npdt in ((D.FLOAT32, np.float32), (D.FLOAT16, np.float16)):
        xh = rng.standard_normal(rs, dtype=np.float32).astype(npdt)
        x = dev.upload(xh)
        for mode, s in (("nearest", 2.0), ("linear", 2.0), ("linear", 1.5)):
            o = T(dt, rs[:2] + (int(rs[2] * s), int(rs[3] * s)))
            desc = dmlwgsl.Resample1Desc(x.desc, o, mode, (1.0, 1.0, s, s), (0.5,) * 4, (-0.5,) * 4)
            name = f"resample {dt.name.lower()} {mode} x{s}"
            lin = (xh[:1], s) if mode == "linear" else None
            rows.append(measure(dev, bench, tight, name, dmlwgsl.compile_resample, desc, (x,), o, lin))
        x.buffer.destroy()
    cs, ws = ((4, 16, 24, 24), (16, 16, 3, 3)) if quick else ((32, 128, 112, 112), (128, 128, 3, 3))
    xq = dev.upload(rng.integers(0, 256, cs, dtype=np.uint8))
    w = dev.upload(rng.integers(-128, 128, ws, dtype=np.int8))
    o = T(D.INT32, (cs[0], ws[0]) + cs[2:])
    desc = dmlwgsl.ConvolutionIntegerDesc(xq.desc, w.desc, o, None, None, (1, 1), (1, 1), (1, 1), (1, 1), 1)
    name = f"conv u8*i8 {'x'.join(map(str, cs))} 3x3"
    rows.append(measure(dev, bench, tight, name, dmlwgsl.compile_convolution_integer, desc, (xq, w), o))
    xq.buffer.destroy()
    w.buffer.destroy()
    return rows


def out_of_memory(dev) -> str:
    """Allocate (and touch) 2 GiB buffers until the adapter refuses; then run a one-liner."""
    bufs = []
    t0 = time.perf_counter()
    try:
        while len(bufs) < 256:
            b = dev.create_buffer(2 << 30, "oom")
            dev.fill(b, b"\x01", 0, 16)
            bufs.append(b)
        line = "no AllocationError after 512 GiB"
    except AllocationError as e:
        line = f"AllocationError after {len(bufs)} x 2 GiB in {time.perf_counter() - t0:.1f} s: {str(e)[:160]}"
    except Exception as e:  # the wrong error: reported, not hidden
        line = f"WRONG ERROR {type(e).__name__} after {len(bufs)} x 2 GiB: {str(e)[:160]}"
    for b in bufs:
        b.destroy()
    x = np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4)
    ok = np.array_equal(dmlwgsl.depth_to_space(x, 2, device=dev), ref_d2s.depth_to_space(x, 2))
    return f"{line}\nafter it, a one-liner {'works (exact)' if ok else 'FAILS'}"


def main(argv=None) -> int:
    """Entry point; exit 1 on a result that is not exact (or out of tolerance)."""
    p = argparse.ArgumentParser(prog="dmlwgsl bench split", description=__doc__.splitlines()[0])
    p.add_argument("--backend", help="vulkan, gl, metal or dx12")
    p.add_argument("--adapter", help="substring of the adapter name")
    p.add_argument("--quick", action="store_true", help="small shapes and a 64 KiB binding record (CPU adapters)")
    p.add_argument("--oom", action="store_true", help="also allocate until out of memory (GPU adapters)")
    args = p.parse_args(argv)
    dev = open_device(args)
    rows = run(dev, args.quick)
    print(f"\nsplit plans on {dev.name}")
    if not args.quick and dev.max_binding_size <= 128 << 20:
        print(
            f"(this adapter's own max-storage-buffer-binding-size is {dev.max_binding_size} bytes: its 'full' "
            "plans split too, so the rows show the split plans against the roofline, not against an unsplit plan)"
        )
    print(f"{'case':32} {'disp':>4} {'split':>5} {'full us':>9} {'split us':>9} {'split/full':>10} {'% roof':>7} check")
    for name, d0, d1, t0, t1, pct, check in rows:
        print(f"{name:32} {d0:4} {d1:5} {t0:9.1f} {t1:9.1f} {t1 / t0:10.3f} {100 * pct:6.1f}% {check}")
    if args.oom:
        print("\nout of memory: " + out_of_memory(dev))
    return 0 if all(r[-1] is True or (isinstance(r[-1], str) and not r[-1].startswith("NO")) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

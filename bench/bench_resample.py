"""Benchmark Resample: nearest x2 up / x0.5 down and linear x2 / x1.5 up on (8, 64, 256, 256).

Spatial axes only, default offsets (Resample v0: 0.5 / -0.5), float32 and float16. Each
configuration is checked against the numpy reference on its first batch item's first channels
before timing (exact for nearest; linear within the float32 tolerance the tests use), then timed
with GPU timestamps (median), reported as GB/s of input + output bytes and as a ratio to the
in-run vec4 copy kernel moving the same traffic; with torch + CUDA, F.interpolate (nearest;
bilinear, align_corners=False) is timed on the same GPU in the same run.

    python bench/bench_resample.py [--adapter NAME] [--backend vulkan] [--json] [--reps N] [--quick]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from dmlwgsl.benchmark import Bench, Row, print_table, torch_cuda, torch_time_ns
from dmlwgsl.ops.resample import InterpolationMode, ResampleDesc, compile_resample
from dmlwgsl.reference import resample as ref
from dmlwgsl.runtime import Device
from dmlwgsl.tensor import DataType, TensorDesc

#: (mode, variant, spatial factor)
CONFIGS = (
    ("nearest", "x2 up", 2.0),
    ("nearest", "x0.5 down", 0.5),
    ("linear", "x2 up", 2.0),
    ("linear", "x1.5 up", 1.5),
)
FULL_SHAPE = (8, 64, 256, 256)
QUICK_SHAPE = (2, 3, 16, 24)
#: Channels of batch item 0 compared with the reference (N and C map exactly, so a slice suffices).
CHECK_CHANNELS = 2


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--adapter", help="substring of the adapter name")
    p.add_argument("--backend", help="vulkan | gl | metal | dx12")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--reps", type=int, default=20, help="timed runs per configuration (median)")
    p.add_argument("--quick", action="store_true", help=f"tiny shape {QUICK_SHAPE} (smoke test)")
    p.add_argument("--no-torch", action="store_true", help="skip torch even where it has CUDA")
    return p.parse_args(argv)


def _check(device: Device, x: np.ndarray, y_tensor, out_sizes, mode: str, f: float) -> str:
    """Compare the first channels of batch item 0 with the reference; return 'exact' or the error."""
    n, c = out_sizes[:2]
    cc = min(c, CHECK_CHANNELS)
    part = x[:1, :cc]
    sizes = (1, cc) + tuple(out_sizes[2:])
    expected = ref.resample(part, sizes, mode, (1.0, 1.0, f, f), (0.5,) * 4, (-0.5,) * 4)
    nbytes = int(np.prod(sizes)) * x.dtype.itemsize
    got = np.frombuffer(device.read(y_tensor.buffer, y_tensor.offset, nbytes), dtype=x.dtype).reshape(sizes)
    if mode == "nearest" or np.array_equal(got, expected):
        if not np.array_equal(got.view(np.uint8), expected.view(np.uint8)):
            raise AssertionError(f"resample {mode} x{f} {x.dtype}: result differs from the reference")
        return "exact"
    err = float(np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64))))
    # Same bound as the tests: float32 rounding (fused multiply-adds) -> a few ulp; float16 -> 1 ulp.
    tol = 1e-5 if x.dtype == np.float32 else 2e-3
    if err > tol * max(1.0, float(np.max(np.abs(expected.astype(np.float64))))):
        raise AssertionError(f"resample {mode} x{f} {x.dtype}: max error {err} beyond {tol}")
    return f"err {err:.1e}"


def run(device: Device, args) -> list[Row]:
    """Time every configuration on ``device``; returns the table rows."""
    shape = QUICK_SHAPE if args.quick else FULL_SHAPE
    bench = Bench(device, reps=args.reps)
    torch = None if getattr(args, "no_torch", False) else torch_cuda()
    rng = np.random.default_rng(0)
    rows: list[Row] = []
    base = rng.standard_normal(shape, dtype=np.float32)
    for dt in (DataType.FLOAT32, DataType.FLOAT16):
        x = base.astype(dt.numpy_dtype)
        xt = device.upload(x)
        tx = torch.from_numpy(x).cuda() if torch is not None else None
        for mode, variant, f in CONFIGS:
            out_sizes = shape[:2] + tuple(int(s * f) for s in shape[2:])
            out_desc = TensorDesc(dt, out_sizes)
            desc = ResampleDesc(xt.desc, out_desc, InterpolationMode.parse(mode), (1.0, 1.0, f, f))
            op = compile_resample(desc, device=device)
            yt = device.tensor(out_desc, label="output")
            op(xt, yt)
            check = _check(device, x, yt, out_sizes, mode, f)
            ns = bench.time_ns(lambda: op(xt, yt))
            nbytes = xt.desc.implied_size_in_bytes + out_desc.implied_size_in_bytes
            gbps = nbytes / ns
            copy = bench.copy_gbps(nbytes // 2)
            extra = {"check": check}
            if tx is not None:
                tmode = "nearest" if mode == "nearest" else "bilinear"
                kw = {} if mode == "nearest" else {"align_corners": False}
                tf = torch.nn.functional.interpolate
                tns = torch_time_ns(lambda: tf(tx, size=out_sizes[2:], mode=tmode, **kw), reps=args.reps)
                extra["torch_ms"] = tns / 1e6
                extra["vs_torch"] = tns / ns
            rows.append(
                Row(
                    "resample",
                    f"{mode} {variant}",
                    "x".join(map(str, shape)),
                    dt.name.lower(),
                    ns / 1e6,
                    gbps,
                    "GB/s",
                    gbps / copy,
                    extra,
                )
            )
            yt.buffer.destroy()
        xt.buffer.destroy()
        tx = None  # free the GPU copy before the next data type
    return rows


def main(argv=None) -> int:
    """Entry point: parse options, run, print the table."""
    args = parse_args(argv)
    device = Device(backend=args.backend, adapter=args.adapter)
    rows = run(device, args)
    print_table(
        rows,
        title="Resample (DML_OPERATOR_RESAMPLE, default offsets)",
        device=device,
        clock=Bench(device).clock,
        as_json=args.json,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark Resample3 antialiased linear downsampling at scales 1/2, 1/3 and 1/4 on (8, 64, 240, 240).

Spatial axes only, half_pixel offsets (0.5 / -0.5), float32, float16 and uint8 (240 keeps every
output row a whole number of 32-bit words, which aa_taps, aa_rows and aa_tile need for 8/16-bit
outputs). Each
configuration is checked against the numpy reference on batch item 0's first channels (within
LINEAR_TOLERANCE), then timed with GPU timestamps (median), reported as GB/s of bytes_moved (input
read once + output written once) and as a ratio to the in-run vec4 copy moving the same bytes; with
torch + CUDA, F.interpolate(mode="bilinear", antialias=True, align_corners=False) on the same
sizes (the same half_pixel coordinates and scale) is timed in the same run.

The default times the plan's choice (aa_pat where the scales give a tap pattern on a GPU, else
aa_taps where it runs) and the one-thread-an-output path
(aa_element / aa_element_atomic) beside it; ``--kernel all`` times every path the description admits.

    python bench/bench_resample_antialias.py [--adapter NAME] [--backend vulkan] [--dtype float32]
        [--shape 8,64,240,240] [--kernel plan|element|all|NAME] [--reps N] [--quick] [--json] [--no-torch]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from dmlwgsl.benchmark import Bench, Row, print_table, progress, torch_cuda, torch_time_ns
from dmlwgsl.ops._resample_antialias import KERNELS, compile_resample3
from dmlwgsl.ops.resample import LINEAR_TOLERANCE, AxisDirection, Resample3Desc
from dmlwgsl.plan import PlanError
from dmlwgsl.reference import resample as ref
from dmlwgsl.runtime import Device
from dmlwgsl.tensor import DataType, TensorDesc

FACTORS = (2, 3, 4)  # output = input // factor per spatial axis
FULL_SHAPE = (8, 64, 240, 240)
QUICK_SHAPE = (2, 3, 24, 48)
DTYPES = ("float32", "float16", "uint8")
CHECK_CHANNELS = 2


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--adapter", help="substring of the adapter name")
    p.add_argument("--backend", help="vulkan | gl | metal | dx12")
    p.add_argument("--dtype", action="append", choices=DTYPES, help="repeatable (default all)")
    p.add_argument("--shape", help=f"N,C,H,W (default {','.join(map(str, FULL_SHAPE))})")
    p.add_argument(
        "--kernel",
        action="append",
        help="plan (the plan's choice), element (aa_element or aa_element_atomic), all, or a kernel name "
        "(repeatable; default: plan and element)",
    )
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--reps", type=int, default=20, help="timed runs per configuration (median)")
    p.add_argument("--quick", action="store_true", help=f"tiny shape {QUICK_SHAPE} (smoke test)")
    p.add_argument("--no-torch", action="store_true", help="skip torch even where it has CUDA")
    return p.parse_args(argv)


def _check(y, x: np.ndarray, desc: Resample3Desc) -> str:
    """Batch item 0's first channels against the reference, within LINEAR_TOLERANCE."""
    cc = min(desc.output.sizes[1], CHECK_CHANNELS)
    sizes = (1, cc) + desc.output.sizes[2:]
    want = ref.resample_antialias(x[:1, :cc], sizes, desc.scales, desc.input_pixel_offsets, desc.output_pixel_offsets)
    got = y.numpy()[:1, :cc]
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    atol, why = LINEAR_TOLERANCE[desc.input.data_type]
    if err > atol:
        raise AssertionError(f"antialias {desc.input.data_type.name}: max error {err} beyond {atol} ({why})")
    return f"err {err:.1e}"


def run(device: Device, args) -> list[Row]:
    """Time every configuration on ``device``; returns the table rows."""
    shape = tuple(int(s) for s in args.shape.split(",")) if args.shape else (QUICK_SHAPE if args.quick else FULL_SHAPE)
    bench = Bench(device, reps=args.reps)
    torch = None if args.no_torch else torch_cuda()
    if torch is not None:
        torch.zeros(1, device="cuda")  # the CUDA context first (it slows Vulkan work while it is born)
        torch.cuda.synchronize()
    rng = np.random.default_rng(0)
    rows: list[Row] = []
    for dt_name in args.dtype or DTYPES:
        dt = DataType.parse(dt_name)
        if dt == DataType.UINT8:
            x = rng.integers(0, 256, size=shape, dtype=np.uint8)
        else:
            x = (rng.integers(-512, 512, size=shape) / 64).astype(dt.numpy_dtype)
        xt = device.upload(x)
        tx = torch.from_numpy(x).cuda() if torch is not None else None
        for f in FACTORS:
            out = shape[:2] + tuple(s // f for s in shape[2:])
            od = TensorDesc(dt, out)
            scales = (1.0, 1.0) + tuple(o / i for o, i in zip(out[2:], shape[2:]))
            desc = Resample3Desc(xt.desc, od, "linear", AxisDirection.DECREASING, scales, (0.5,) * 4, (-0.5,) * 4, True)
            yt = device.tensor(od, label="output")
            names = args.kernel or ("plan", "element")
            if "all" in names:
                names = ("plan",) + KERNELS
            for name in names:
                kernel = {"plan": None, "element": "aa_element" if dt == DataType.FLOAT32 else "aa_element_atomic"}
                try:
                    op = compile_resample3(desc, device=device, kernel=kernel.get(name, name))
                except PlanError as e:  # a path this description or type does not admit
                    progress(f"antialias 1/{f} {dt_name} {name}: {e}")
                    continue
                op(xt, yt)
                check = _check(yt, x, desc)
                ns = bench.time_ns(lambda: op(xt, yt))
                nbytes = op.plan.bytes_moved
                gbps = nbytes / ns
                copy = bench.copy_gbps(nbytes // 2)
                extra = {"kernel": op.plan.kernels[0], "check": check}
                step = op.plan.steps[0]
                u = step.uniforms_dict
                if step.name == "aa_tile":
                    extra["tile_hxw"] = f"{u['tile_h']}x{u['tile_w']}"
                if step.name == "aa_rows":
                    extra["band_rows"] = u["band_rows"]
                if tx is not None:
                    try:
                        tf = torch.nn.functional.interpolate
                        tns = torch_time_ns(
                            lambda: tf(tx, size=out[2:], mode="bilinear", antialias=True, align_corners=False),
                            reps=args.reps,
                        )
                        extra["torch_ms"] = tns / 1e6
                        extra["torch_vs_copy"] = f"{100 * (nbytes / tns) / copy:.1f}%"
                        extra["vs_torch"] = tns / ns
                    except Exception as e:  # torch has no CUDA kernel for every dtype
                        extra["torch_ms"] = f"n/a ({type(e).__name__})"
                rows.append(
                    Row("resample3 antialias", f"1/{f}", "x".join(map(str, shape)), dt_name, ns / 1e6, gbps, "GB/s",
                        gbps / copy, extra)
                )  # fmt: skip
                progress(f"antialias 1/{f} {dt_name} {extra['kernel']}: {ns / 1e6:.4f} ms, {100 * gbps / copy:.1f}%")
            yt.buffer.destroy()
        xt.buffer.destroy()
        tx = None
    return rows


def main(argv=None) -> int:
    """Entry point: parse options, run, print the table."""
    args = parse_args(argv)
    device = Device(backend=args.backend, adapter=args.adapter)
    rows = run(device, args)
    print_table(
        rows,
        title="Resample3 antialiased linear (half_pixel), % of the in-run copy of bytes_moved",
        device=device,
        clock=Bench(device).clock,
        as_json=args.json,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

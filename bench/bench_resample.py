"""Benchmark Resample: nearest x2 up / x0.5 down and linear x2 / x1.5 up on (8, 64, 256, 256).

Spatial axes only, default offsets (Resample v0: 0.5 / -0.5), float32 and float16. Each
configuration is checked against the numpy reference on its first batch item (bit-exact for
nearest; linear within the tests' LINEAR_TOLERANCE), then timed with GPU timestamps (median),
reported as bytes per second of input read + output written and as a ratio to the in-run vec4 copy
moving the same bytes; with torch + CUDA, F.interpolate (nearest; bilinear, align_corners=False)
and, where it runs, ONNX Runtime's WebGPU EP (Resize) are timed in the same run. The batch shrinks
to fit the adapter (its binding limit, and 16 MiB tensors on a CPU adapter).

    python bench/bench_resample.py [--adapter NAME] [--backend vulkan] [--json] [--reps N] [--quick] [--plot PATH]
"""

from __future__ import annotations

import sys

import numpy as np

from dmlwgsl.benchmark import (
    Bench,
    OrtPeer,
    Progress,
    Row,
    _fit_batch,
    bench_parser,
    compare,
    finish,
    fmt_time,
    movement_row,
    onnx_model,
    open_device,
    open_peers,
    ort_columns,
    plan_facts,
    size_budget,
    torch_time_ns,
)
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


def parser():
    """Command-line options."""
    p = bench_parser("dmlwgsl bench resample", __doc__.splitlines()[0])
    p.add_argument(
        "--shape",
        type=lambda s: tuple(int(v) for v in s.split(",")),
        help=f"input N,C,H,W (default {FULL_SHAPE}, batch shrunk to fit the adapter)",
    )
    p.add_argument("--dtype", action="append", help="float32 / float16 (repeatable; default both)")
    return p


def run(device: Device, args, bench: Bench | None = None, notes: list | None = None) -> list[Row]:
    """Time every configuration on ``device``; returns the table rows."""
    bench = bench or Bench(device, reps=args.reps)
    notes = [] if notes is None else notes
    torch, ort = open_peers(device, args, notes)
    dtypes = [DataType.parse(d) for d in (args.dtype or ("float32", "float16"))]
    if args.shape:
        shape = args.shape
    elif args.quick:
        shape = QUICK_SHAPE
    else:
        # The largest tensor is the x2 output (4x the input): shrink the batch until it fits.
        big = _fit_batch(FULL_SHAPE[:2] + (FULL_SHAPE[2] * 2, FULL_SHAPE[3] * 2), 4, size_budget(device))
        shape = big[:2] + FULL_SHAPE[2:]
    rng = np.random.default_rng(0)
    base = rng.standard_normal(shape, dtype=np.float32)
    prog = Progress(len(dtypes) * len(CONFIGS), "resample", quiet=args.quiet)
    rows: list[Row] = []
    for dt in dtypes:
        x = base.astype(dt.numpy_dtype)
        xt = device.upload(x)
        tx = torch.from_numpy(x).cuda() if torch is not None else None
        for mode, variant, f in CONFIGS:
            out_sizes = shape[:2] + tuple(int(s * f) for s in shape[2:])
            out_desc = TensorDesc(dt, out_sizes)
            device.check_binding_size("resample", "output", out_desc.total_tensor_size_in_bytes)
            desc = ResampleDesc(xt.desc, out_desc, InterpolationMode.parse(mode), (1.0, 1.0, f, f))
            op = compile_resample(desc, device=device)
            kernel, moved, _ = plan_facts(
                op, bytes_moved=xt.desc.implied_size_in_bytes + out_desc.implied_size_in_bytes
            )
            yt = device.tensor(out_desc, label="output")
            ns, roof = bench.paired_ns(lambda: op(xt, yt), moved)  # (CPU adapters: the copy timed beside it)
            got = yt.numpy()
            # N and C map exactly: the first batch item's reference checks the kernel's whole logic.
            want = ref.resample(x[:1], (1,) + out_sizes[1:], mode, (1.0, 1.0, f, f), (0.5,) * 4, (-0.5,) * 4)
            ok, note = compare(got[:1], want, linear=mode == "linear")
            extra = {"kernel": kernel, "check": note}
            if tx is not None:
                tmode = "nearest" if mode == "nearest" else "bilinear"
                kw = {} if mode == "nearest" else {"align_corners": False}
                tf = torch.nn.functional.interpolate
                tns = torch_time_ns(lambda: tf(tx, size=out_sizes[2:], mode=tmode, **kw), reps=args.reps)
                extra["torch_ms"] = tns / 1e6
                extra["vs_torch"] = tns / ns
            if ort is not None:
                extra.update(ort_resize(ort, x, got, mode, (1.0, 1.0, f, f), args.reps, ns))
            rows.append(
                movement_row("resample", f"{mode} {variant}", shape, dt.name.lower(), ns, moved, bench, ok, extra, roof)
            )
            prog.step(f"{mode} {variant} {dt.name.lower()}: {fmt_time(ns / 1e6)}, {note}")
            yt.buffer.destroy()
        xt.buffer.destroy()
        tx = None  # free the GPU copy before the next data type
    return rows


def ort_resize(ort: OrtPeer, x: np.ndarray, ours: np.ndarray, mode: str, scales, reps: int, ns: float) -> dict:
    """ONNX Resize-19 with the coordinates of DML's default offsets: half_pixel; nearest rounds
    halves up (round_prefer_ceil), as Resample1's floor(x + 0.5)."""
    attrs = {"mode": mode, "coordinate_transformation_mode": "half_pixel"}
    if mode == "nearest":
        attrs["nearest_mode"] = "round_prefer_ceil"
    sc = np.asarray(scales, np.float32)
    model = onnx_model(
        "Resize",
        [("x", x.dtype, x.shape), "", ("scales", np.float32, sc.shape)],
        ("y", x.dtype, ours.shape),
        attrs,
        initializers=[("scales", sc)],
    )
    m = ort.measure(model, {"x": np.ascontiguousarray(x)}, reps=reps)
    return ort_columns(m, ours, linear=mode == "linear", ours_ms=ns / 1e6)


def main(argv=None) -> int:
    """Entry point: parse options, run, print the table; exit 1 on an inexact row."""
    args = parser().parse_args(argv)
    device = open_device(args)
    bench = Bench(device, reps=args.reps)
    notes: list = []
    rows = run(device, args, bench, notes)
    return finish(
        rows,
        title="Resample (DML_OPERATOR_RESAMPLE, default offsets)",
        device=device,
        bench=bench,
        args=args,
        notes=notes,
    )


if __name__ == "__main__":
    sys.exit(main())

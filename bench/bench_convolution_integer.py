"""Benchmark ConvolutionInteger: the issue's layers (3x3, pad 1, stride 1; UINT8 input, INT8 filter,
per-channel filter zero point), GPU time from timestamps (median), ops = 2*N*M*C/G*OH*OW*KH*KW.

In the same run: the dot4I8Packed-from-registers ceiling kernel (the roofline is the larger of the
ops at that ceiling and the in-run copy of the plan's bytes), and where they run, torch._int_mm on
the im2col GEMM (GEMM only) and F.conv2d in float16 (CUDA), and ONNX Runtime's WebGPU EP
(ConvInteger). Every result is checked bit-exact (against float64 torch on CUDA, else the numpy
reference); an inexact one makes the benchmark exit 1. On a CPU adapter the layers shrink
(batch 1, half the spatial size) and only the dot4 kernel is timed by default.

    python bench/bench_convolution_integer.py [--backend vulkan] [--adapter NAME] [--reps 20] [--quick] [--json]
"""

from __future__ import annotations

import sys

import numpy as np

from dmlwgsl.benchmark import (
    Bench,
    Progress,
    Row,
    bench_parser,
    compare,
    finish,
    fmt_rate,
    fmt_time,
    has_dot4,
    is_cpu_adapter,
    onnx_model,
    open_device,
    open_peers,
    ort_columns,
    plan_facts,
    roofline_ns,
    torch_time_ns,
)
from dmlwgsl.ops.convolution_integer import ConvolutionIntegerDesc, compile_convolution_integer
from dmlwgsl.reference.convolution_integer import convolution_integer as reference
from dmlwgsl.runtime import Device
from dmlwgsl.tensor import DataType, TensorDesc

LAYERS = [(8, 64, 64, 56, 56), (8, 256, 256, 28, 28), (32, 128, 128, 28, 28), (8, 512, 512, 14, 14)]
QUICK_LAYERS = [(1, 16, 16, 8, 8), (2, 32, 24, 6, 6)]
PORTABLE_MAX_OPS = 4e9  # the portable kernel is timed only on layers up to this size (it is slow)


def layer_ops(n, c, m, h, w) -> int:
    """2 * N * M * C * OH * OW * 9 (3x3, pad 1, stride 1: OH = H, OW = W)."""
    return 2 * n * m * c * h * w * 9


def exact_output(x, w, wz, torch):
    """The exact int32 result: float64 convolution on CUDA (every sum < 2^53, so exact), else the
    numpy reference."""
    if torch is None:
        return reference(x, w, None, wz, start_padding=(1, 1), end_padding=(1, 1))
    xt = torch.from_numpy(x.astype(np.float64)).cuda()
    wt = torch.from_numpy(w.astype(np.float64) - wz.astype(np.float64)[:, None, None, None]).cuda()
    y = torch.nn.functional.conv2d(xt, wt, padding=1).cpu().numpy()
    return y.astype(np.int64).astype(np.int32)


def parser():
    """Command-line options."""
    p = bench_parser("dmlwgsl bench convolution_integer", __doc__.splitlines()[0])
    p.add_argument("--kernel", action="append", choices=["dot4", "portable"], help="default: every one that runs")
    return p


def run(device: Device, args, bench: Bench | None = None, notes: list | None = None) -> list[Row]:
    """Time every layer; return the table rows (the ceiling first where the adapter has one)."""
    bench = bench or Bench(device, reps=args.reps, warmup=3)
    notes = [] if notes is None else notes
    torch, ort = open_peers(device, args, notes)
    rng = np.random.default_rng(0)
    rows: list[Row] = []
    dot4 = has_dot4(device)
    if not dot4:
        notes.append("dot4: skipped: the adapter lacks WGSL packed_4x8_integer_dot_product (portable kernel only)")
    kernels = args.kernel or (["dot4"] if dot4 else []) + ["portable"]
    layers = QUICK_LAYERS if args.quick else LAYERS
    cpu = is_cpu_adapter(device)
    if cpu and not args.quick:
        # Batch 1 and half the spatial size: seconds, not minutes, on a CPU adapter.
        layers = [(1, c, m, h // 2, w // 2) for _, c, m, h, w in layers]
        if dot4 and not args.kernel:
            kernels = ["dot4"]
            notes.append("portable: not timed by default on a CPU adapter (minutes); --kernel portable times it")
    prog = Progress(len(layers), "convolution_integer", quiet=args.quiet)
    for n, c, m, h, w in layers:
        ops = layer_ops(n, c, m, h, w)
        shape = f"{n}x{c}x{h}x{w}->{m}"
        x = rng.integers(0, 256, (n, c, h, w), dtype=np.uint8)
        wt = rng.integers(-128, 128, (m, c, 3, 3), dtype=np.int8)
        wz = rng.integers(-128, 128, m, dtype=np.int8)
        expected = exact_output(x, wt, wz, torch)
        desc = ConvolutionIntegerDesc(
            TensorDesc(DataType.UINT8, x.shape),
            TensorDesc(DataType.INT8, wt.shape),
            TensorDesc(DataType.INT32, (n, m, h, w)),
            None,
            TensorDesc(DataType.INT8, (1, m, 1, 1)),
            start_padding=(1, 1),
            end_padding=(1, 1),
        )
        xg, wg, zg = device.upload(x), device.upload(wt), device.upload(wz.reshape(1, m, 1, 1))
        out = device.tensor(desc.output)
        for kernel in kernels:
            if kernel == "dot4" and not dot4:
                continue
            if kernel == "portable" and ops > PORTABLE_MAX_OPS and not args.kernel:
                continue
            op = compile_convolution_integer(desc, device=device, kernel=kernel)
            name, moved, plan_ops = plan_facts(op, bytes_moved=x.nbytes + wt.nbytes + m + 4 * n * m * h * w, ops=ops)
            # (a CPU adapter: the roofline timed beside the row, Bench.paired_ns; a GPU: the run's
            # ceiling, measured again at the end)
            ns, roof = bench.paired_ns(lambda: op(xg, wg, out, None, zg), moved, plan_ops)
            ok, note = compare(out.numpy(), expected)
            rows.append(
                Row(
                    "convolution_integer",
                    name,
                    shape,
                    "u8*i8",
                    ns / 1e6,
                    plan_ops / ns * 1e9,
                    "OP/s",
                    None,  # filled in below, once the ceiling has been measured again
                    ok,
                    {"check": note, "ops": plan_ops, "bytes_moved": moved, "ns": ns, "roof_ns": roof if cpu else None},
                )
            )
            prog.note(f"  {shape} {kernel}: {fmt_time(ns / 1e6)}, {fmt_rate(plan_ops / ns * 1e9, 'OP/s')}, {note}")
        if torch is not None:
            rows.extend(torch_rows(torch, n, c, m, h, w, ops, shape, args.reps))
        if ort is not None:
            model = onnx_model(
                "ConvInteger",
                [("x", np.uint8, x.shape), ("w", np.int8, wt.shape), "", ("wz", np.int8, (m,))],
                ("y", np.int32, expected.shape),
                {"pads": [1, 1, 1, 1]},
                opset=10,
                initializers=[("w", wt), ("wz", wz)],
            )
            m_ = ort.measure(model, {"x": x}, reps=args.reps)
            rows.append(
                Row(
                    "ort-webgpu",
                    "ConvInteger",
                    shape,
                    "u8*i8",
                    m_.get("ort_ms", float("nan")),
                    float("nan"),
                    "OP/s",
                    extra=ort_columns(m_, expected),
                )
            )
        prog.step(shape)
        for t in (xg, wg, zg, out):
            t.buffer.destroy()
    ceiling = bench.dp4a_tops(refresh=True)  # again once the GPU is warm: the higher figure stays
    for r in rows:
        if r.op == "convolution_integer":
            ns, roof = r.extra.pop("ns"), r.extra.pop("roof_ns")
            r.roofline = (roof or roofline_ns(bench, r.extra["bytes_moved"], r.extra["ops"])) / ns
            if ceiling:
                r.extra["vs_ceiling"] = f"{100 * r.rate / (ceiling * 1e12):.1f}%"
    if ceiling:
        rows.insert(0, Row("dot4_ceiling", "registers", "-", "i8", float("nan"), ceiling * 1e12, "OP/s"))
    return rows


def torch_rows(torch, n, c, m, h, w, ops, shape, reps) -> list[Row]:
    """torch._int_mm on the im2col GEMM (M = N*OH*OW, K = C*9, N = M) and F.conv2d in float16."""
    rows = []
    a = torch.randint(-128, 128, (n * h * w, c * 9), dtype=torch.int8, device="cuda")
    b = torch.randint(-128, 128, (c * 9, m), dtype=torch.int8, device="cuda")
    try:
        ns = torch_time_ns(lambda: torch._int_mm(a, b), reps=reps)
        rows.append(Row("torch", "_int_mm (im2col GEMM)", shape, "i8*i8", ns / 1e6, ops / ns * 1e9, "OP/s"))
    except RuntimeError as e:
        rows.append(
            Row("torch", "_int_mm", shape, "i8*i8", float("nan"), float("nan"), "OP/s", extra={"check": str(e)[:60]})
        )
    xf = torch.randn((n, c, h, w), dtype=torch.float16, device="cuda")
    wf = torch.randn((m, c, 3, 3), dtype=torch.float16, device="cuda")
    ns = torch_time_ns(lambda: torch.nn.functional.conv2d(xf, wf, padding=1), reps=reps)
    rows.append(Row("torch", "F.conv2d fp16", shape, "f16", ns / 1e6, ops / ns * 1e9, "OP/s"))
    return rows


def main(argv=None) -> int:
    """Command-line entry point; exit 1 on an inexact result."""
    args = parser().parse_args(argv)
    device = open_device(args)
    bench = Bench(device, reps=args.reps, warmup=3)
    notes: list = []
    rows = run(device, args, bench, notes)
    return finish(
        rows,
        title="ConvolutionInteger (3x3, pad 1, stride 1; u8 input, i8 filter, per-channel filter zp)",
        device=device,
        bench=bench,
        args=args,
        notes=notes,
    )


if __name__ == "__main__":
    sys.exit(main())

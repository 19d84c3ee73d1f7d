"""Benchmark ConvolutionInteger: the issue's layers (3x3, pad 1, stride 1; UINT8 input, INT8 filter,
per-channel filter zero point), GPU time from timestamps (median), TOPS = 2*N*M*C/G*OH*OW*KH*KW / t.

In the same run: the dot4I8Packed-from-registers ceiling kernel, and where torch has CUDA,
torch._int_mm on the im2col GEMM (GEMM only) and F.conv2d in float16. Every dmlwgsl result is
checked bit-exact (against float64 torch on CUDA, or the numpy reference in --quick mode).

    python bench/bench_convolution_integer.py [--backend vulkan] [--adapter NAME] [--reps 20] [--quick] [--json]
"""

from __future__ import annotations

import argparse

import numpy as np

from dmlwgsl.benchmark import Bench, Row, print_table, torch_cuda, torch_time_ns
from dmlwgsl.ops.convolution_integer import (
    ConvolutionIntegerDesc,
    ConvolutionIntegerOperator,
    ceiling_kernel,
    compile_convolution_integer,
    dot4_available,
)
from dmlwgsl.reference.convolution_integer import convolution_integer as reference
from dmlwgsl.runtime import Device, GpuTensor
from dmlwgsl.tensor import DataType, TensorDesc

LAYERS = [(8, 64, 64, 56, 56), (8, 256, 256, 28, 28), (32, 128, 128, 28, 28), (8, 512, 512, 14, 14)]
QUICK_LAYERS = [(1, 16, 16, 8, 8), (2, 32, 24, 6, 6)]
PORTABLE_MAX_OPS = 4e9  # the portable kernel is timed only on layers up to this size (it is slow)


def layer_ops(n, c, m, h, w) -> float:
    """2 * N * M * C * OH * OW * 9 (3x3, pad 1, stride 1: OH = H, OW = W)."""
    return 2.0 * n * m * c * h * w * 9


def exact_output(x, w, wz, torch):
    """The exact int32 result: float64 convolution on CUDA (sums < 2^53), else the numpy reference."""
    if torch is None:
        return reference(x, w, None, wz, start_padding=(1, 1), end_padding=(1, 1))
    xt = torch.from_numpy(x.astype(np.float64)).cuda()
    wt = torch.from_numpy(w.astype(np.float64) - wz.astype(np.float64)[:, None, None, None]).cuda()
    y = torch.nn.functional.conv2d(xt, wt, padding=1).cpu().numpy()
    return y.astype(np.int64).astype(np.int32)


def ceiling_tops(device: Device, bench: Bench, quick: bool) -> float:
    """TOPS of the dot4I8Packed-from-registers kernel (16 chains x steps dots x 8 ops per thread)."""
    k = ceiling_kernel(device)
    threads = 256 * (64 if quick else 132 * 16)
    steps = 64 if quick else 2048
    out = GpuTensor(device, TensorDesc(DataType.INT32, (threads,)), device.create_buffer(4 * threads, "ceiling"))
    u = np.zeros((13, 4), np.uint32)
    u[10] = [steps, 0x01FF7F80, 0, 0]
    u[8] = [0, 0, 0, threads]
    data = u.tobytes()

    def pack(_res):
        return data

    ns = bench.time_ns(lambda: k.dispatch({"output": out}, pack, threads))
    return threads * steps * 16 * 8 / ns / 1e3


def run(device: Device, args) -> list[Row]:
    """Time every layer; return the table rows (ceiling first)."""
    bench = Bench(device, reps=args.reps, warmup=3)
    torch = torch_cuda()
    rng = np.random.default_rng(0)
    rows: list[Row] = []
    ceiling = ceiling_tops(device, bench, args.quick) if dot4_available(device) else None
    kernels = ["dot4"] if dot4_available(device) else []
    for n, c, m, h, w in QUICK_LAYERS if args.quick else LAYERS:
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
        variants = [(k, None) for k in kernels] + (
            [("dot4", 4), ("dot4", 8)] if kernels and args.tiles else []
        )  # pixels/thread
        for kernel, rm in variants + ([("portable", None)] if ops <= PORTABLE_MAX_OPS else []):
            op = compile_convolution_integer(desc, device=device, kernel=kernel)
            if rm is not None:
                op = ConvolutionIntegerOperator(device, desc, kernel, pixels_per_thread=rm, threads=256)
            if kernel == "dot4":
                kernel = dot4_label(op)
            op(xg, wg, out, None, zg)
            exact = bool(np.array_equal(out.numpy(), expected))
            ns = bench.time_ns(lambda: op(xg, wg, out, None, zg), dispatches=op.dispatches)
            tops = ops / ns / 1e3
            rows.append(
                Row(
                    "convolution_integer",
                    kernel,
                    shape,
                    "u8*i8",
                    ns / 1e6,
                    tops,
                    "TOPS",
                    None,
                    {"exact": exact, "vs_ceiling": None if ceiling is None else tops / ceiling},
                )
            )
        if torch is not None:
            rows.extend(torch_rows(torch, n, c, m, h, w, ops, shape, args.reps))
    if ceiling is not None:
        # Measured again once the GPU is warm (the first measurement can run at idle clocks);
        # the higher one is the ceiling, so the percentages are conservative.
        ceiling = max(ceiling, ceiling_tops(device, bench, args.quick))
        for r in rows:
            if r.op == "convolution_integer":
                r.extra["vs_ceiling"] = r.metric / ceiling
        rows.insert(0, Row("dot4_ceiling", "registers", "-", "i8", 0.0, ceiling, "TOPS", None, {"vs_ceiling": 1.0}))
    return rows


def dot4_label(op: ConvolutionIntegerOperator) -> str:
    """The dot4 configuration: outputs a thread, tile, k steps a workgroup out of a tile's."""
    tp, tm = op.tile
    split = "" if op.slices == 1 else f", split {op.slice_steps}/{op.k_steps} steps"
    return f"dot4 {op.rp}x4/thread, {tp}x{tm} tile{split}"


def torch_rows(torch, n, c, m, h, w, ops, shape, reps) -> list[Row]:
    """torch._int_mm on the im2col GEMM (M = N*OH*OW, K = C*9, N = M) and F.conv2d in float16."""
    rows = []
    a = torch.randint(-128, 128, (n * h * w, c * 9), dtype=torch.int8, device="cuda")
    b = torch.randint(-128, 128, (c * 9, m), dtype=torch.int8, device="cuda")
    try:
        ns = torch_time_ns(lambda: torch._int_mm(a, b), reps=reps)
        rows.append(Row("torch", "_int_mm (im2col GEMM)", shape, "i8*i8", ns / 1e6, ops / ns / 1e3, "TOPS", None))
    except RuntimeError as e:
        rows.append(Row("torch", f"_int_mm failed: {e}"[:60], shape, "i8*i8", 0.0, 0.0, "TOPS", None))
    xf = torch.randn((n, c, h, w), dtype=torch.float16, device="cuda")
    wf = torch.randn((m, c, 3, 3), dtype=torch.float16, device="cuda")
    ns = torch_time_ns(lambda: torch.nn.functional.conv2d(xf, wf, padding=1), reps=reps)
    rows.append(Row("torch", "F.conv2d fp16", shape, "f16", ns / 1e6, ops / ns / 1e3, "TOPS", None))
    return rows


def main(argv=None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default=None, help="vulkan, gl, metal or dx12")
    p.add_argument("--adapter", default=None, help="substring of the adapter name")
    p.add_argument("--reps", type=int, default=20, help="timed runs per measurement (median)")
    p.add_argument("--quick", action="store_true", help="tiny shapes (seconds on a CPU adapter)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--tiles", action="store_true", help="also time both dot4 tile shapes")
    args = p.parse_args(argv)
    device = Device(backend=args.backend, adapter=args.adapter)
    rows = run(device, args)
    bench = Bench(device)
    print_table(
        rows,
        title="ConvolutionInteger (3x3, pad 1, stride 1; u8 input, i8 filter, per-channel filter zp)",
        device=device,
        clock=bench.clock,
        as_json=args.json,
    )


if __name__ == "__main__":
    main()

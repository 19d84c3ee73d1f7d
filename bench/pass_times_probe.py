"""Probe: every dispatch of a ConvolutionInteger plan timed on its own, for each kernel path that can
run the sweep's convolution layers, beside the fixed cost of a timed pass that does no work.

Each dispatch is timed in a compute pass of its own here (their sum, "passes"), and the whole plan
as the sweep times it, its dispatches in one pass ("run"): a second dispatch costs about 2.3 us
more even empty (H200), which the sweep's roofline (the larger of the in-run copy and the dp4a
ceiling) does not count. This says where each row's time goes.

    python bench/pass_times_probe.py [--quick] [--filter NAME] [--kernel K ...] [--reps N]
        [--const STEP:NAME=VALUE ...] [--zp none|per-tensor|per-channel] [--variant NAME]

``--const`` sets an override constant on the steps of that name (A/B of a shader's structural
switch in one process); ``--variant`` edits a shader's text in this process only (parts of its
work taken out: results wrong on purpose, time only; see VARIANTS).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dmlwgsl  # noqa: E402
from bench.bench_sweep import _conv_cases, conv_case  # noqa: E402
from dmlwgsl.benchmark import Bench, hold_clocks, roofline_ns  # noqa: E402
from dmlwgsl.ops.convolution_integer import KERNELS, ConvolutionIntegerOperator  # noqa: E402
from dmlwgsl.plan import PlanError  # noqa: E402
from dmlwgsl.tensor import DataType, TensorDesc  # noqa: E402

# Text edits of the depthwise kernel that take parts of its work out (time only).
_DW = "convolution_integer_depthwise.wgsl"
VARIANTS = {
    "dw_no_store": [
        (
            _DW,
            "    let o = output_index(n, m, oh, ow0);",
            "    if (lo.x != 123457) { return; }\n    let o = output_index(n, m, oh, ow0);",
        ),
    ],
    "dw_no_load": [(_DW, "    if (i < 0) { return 0u; }", "    if (i >= 0) { return u32(i) * 0x01030507u; }")],
    "dw_no_sx": [(_DW, "    if (WZP != 0u || (X_SIGNED && !W_SIGNED)) { sx = sum_x(x, kmask); }", "")],
    "dw_one_row": [
        (_DW, "for (var kh = 0u; kh < DW_KH; kh++) {", "for (var kh = 0u; kh < min(DW_KH, 1u); kh++) {"),
        (
            _DW,
            "for (var kh = 0u; kh < select(cv.kernel_h, 0u, DW_FAST && DW_KH > 0u); kh++) {",
            "for (var kh = 0u; kh < min(select(cv.kernel_h, 0u, DW_FAST && DW_KH > 0u), 1u); kh++) {",
        ),
    ],
}


def apply_variant(name: str) -> None:
    """Wrap runtime.load_wgsl so that the variant's edits apply (each must match)."""
    from dmlwgsl import runtime

    orig = runtime.load_wgsl
    edits = VARIANTS[name]

    def load(shader: str) -> str:
        text = orig(shader)
        for f, a, b in edits:
            if f == shader or shader.endswith(f):
                if a not in text:
                    raise RuntimeError(f"variant {name}: edit does not apply: {a!r}")
                text = text.replace(a, b)
        return text

    runtime.load_wgsl = load


def set_constants(pairs: list[str]) -> None:
    """--const STEP:NAME=VALUE: wrap the plans' step factory so that steps named STEP get it."""
    from dmlwgsl import plan as plan_mod
    from dmlwgsl.ops import convolution_integer as ci

    extra: dict[str, dict] = {}
    for p in pairs:
        st, kv = p.split(":", 1)
        k, v = kv.split("=", 1)
        extra.setdefault(st, {})[k] = int(v)
    orig = plan_mod.step

    def step(name, *a, constants=None, **kw):
        c = dict(constants or {})
        c.update(extra.get(name, {}))
        if "WG" in extra.get(name, {}):  # the dispatch follows the workgroup size
            kw["workgroup_size"] = c["WG"]
        return orig(name, *a, constants=c, **kw)

    ci.step = step


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--filter", action="append", default=[])
    ap.add_argument("--kernel", action="append", default=[])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--const", action="append", default=[])
    ap.add_argument("--zp", choices=("none", "per-tensor", "per-channel"))
    ap.add_argument("--variant", choices=sorted(VARIANTS))
    ap.add_argument(
        "--gemm-shapes", action="store_true", help="the dot4 GEMM under every threads x RP x TM (unsplit) besides"
    )
    ap.add_argument(
        "--direct-max-tile", type=int, help="cap the direct kernels' output pixels a tile (default: the plan's 4096)"
    )
    a = ap.parse_args(argv)
    if a.direct_max_tile:
        from dmlwgsl.ops import convolution_integer as ci

        ci._DIRECT_MAX_TILE = a.direct_max_tile
    if a.variant:
        apply_variant(a.variant)
    set_constants(a.const)
    dev = dmlwgsl.default_device()
    bench = Bench(dev, reps=a.reps)
    print(f"# adapter: {dev.name}; clocks: {hold_clocks(dev)}")
    # the fixed cost of a timed pass: the copy kernel on one 16-byte vector
    from dmlwgsl.benchmark import copy_kernel, copy_uniforms
    from dmlwgsl.runtime import GpuTensor

    d16 = TensorDesc(DataType.UINT32, (4,))
    i16, o16 = (GpuTensor(dev, d16, dev.create_buffer(16, s)) for s in ("i", "o"))
    k = copy_kernel(dev)
    info = copy_uniforms(1, 1)
    empty = bench.pass_times_ns(lambda: k.dispatch({"input": i16, "output": o16}, lambda _r: info, 1), 1)[0] / 1e3

    def empties(count: int):
        for _ in range(count):
            k.dispatch({"input": i16, "output": o16}, lambda _r: info, 1)

    in_one = " / ".join(f"{bench.time_ns(lambda c=c: empties(c), c) / 1e3:.2f}" for c in (1, 2, 4))
    print(f"# empty pass: {empty:.2f} us; 1 / 2 / 4 empty dispatches in one pass: {in_one} us")
    print(f"# dp4a ceiling {bench.dp4a_tops():.1f} TOPS; 'run' is the plan timed as one pass (time_ns)")
    rng = np.random.default_rng(2026)
    kernels = a.kernel or ["auto", *KERNELS]
    lines = []
    for case in _conv_cases(a.quick):
        c = dict(case.config)
        if a.zp:
            c["zero_points"] = a.zp
        if a.filter and not any(f in c["name"] for f in a.filter):
            continue
        cc = conv_case(c, rng)
        desc, args = cc.desc, cc.upload(dev)
        seen = set()
        tries = [(kn, {}) for kn in kernels]
        if a.gemm_shapes:
            for nt, tm in ((128, 64), (256, 64), (512, 64), (512, 128)):
                for rp in (4, 6, 8):
                    shape = dict(threads=nt, pixels_per_thread=rp, tile_channels=tm, split_k=1)
                    tries.append((f"{nt}/{rp}/{tm}", shape))
        for kn, shape in tries:
            try:
                k_req = None if kn == "auto" or shape else kn
                op = ConvolutionIntegerOperator(dev, desc, k_req, **shape)
                if shape and "dot4" not in op.plan.steps[-1].name:
                    continue
            except PlanError:
                continue
            names = tuple(s.name for s in op.plan.steps)
            key = (op.plan.details, names)
            if kn != "auto" and key in seen:
                continue
            seen.add(key)
            try:
                ts = [t / 1e3 for t in bench.pass_times_ns(lambda op=op: op(*args), len(names))]
            except Exception as e:  # noqa: BLE001 - a probe: report and go on
                print(f"{c['name']:16s} {kn:12s} failed: {str(e)[:100]}")
                continue
            run = bench.time_ns(lambda op=op: op(*args), len(names)) / 1e3
            roof = roofline_ns(bench, op.plan.bytes_moved, op.plan.ops) / 1e3
            tot = sum(ts)
            parts = " + ".join(f"{n}={t:.1f}" for n, t in zip(names, ts))
            line = (
                f"{c['name']:16s} {kn:12s} run {run:8.1f} us ({100 * roof / run:5.1f}%)  passes {tot:8.1f} us"
                f"  roof {roof:6.1f}  {parts}"
            )
            print(line, flush=True)
            lines.append(line)
        for t in args:
            if t is not None:
                t.buffer.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())

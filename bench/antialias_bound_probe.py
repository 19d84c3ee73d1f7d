"""Probe: what bounds Resample3's aa_taps kernel? The kernel timed as it is and with parts of its
work taken out (results wrong on purpose; time only), on (8, 64, 240, 240) at 1/2, 1/3, 1/4:

    base     the kernel as it is
    now_w    W weights are constants, not table loads
    no_in    input taps are a function of the index, not loads (no input traffic)
    no_st    the store is skipped (kept alive by an impossible test)
    th1      only the first of the TH rows (a quarter to a sixth of the taps)
    fixed    no table at all: first pixels, counts and weights are constants
    skel     no taps at all: the thread's index arithmetic, table reads of its columns and the
             stores of zeros (the skeleton every variant keeps)
    st_only  as skel without the table reads: index arithmetic and stores only
    st_word  as st_only with store_cols replaced by one plain word store (acc.x's bits)
    cvt_magic  (exact) 8-bit inputs converted as bitcast(0x4B000000 | byte) - 2**23 (int8: the byte
             xor 0x80, - 2**23 - 128), float16 from its bits (normal, subnormal, inf/NaN)
    cvt_none   (wrong values) no conversion: each element's bits reinterpreted as f32

The variants are made by editing the shader's text in this process only (runtime.load_wgsl is
wrapped); the plan's other constants are kept. Prints a table of microseconds per variant.

    python bench/antialias_bound_probe.py [--dtype float32 ...] [--shape 8,64,240,240]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dmlwgsl  # noqa: E402
from dmlwgsl import runtime  # noqa: E402
from dmlwgsl.benchmark import Bench, hold_clocks  # noqa: E402
from dmlwgsl.ops import _resample_antialias as aa  # noqa: E402
from dmlwgsl.ops.resample import AxisDirection, Resample3Desc  # noqa: E402
from dmlwgsl.tensor import DataType, TensorDesc  # noqa: E402

VARIANTS = {
    "base": 0, "now_w": 1, "no_in": 2, "no_st": 3, "th1": 4, "fixed": 5, "skel": 6, "st_only": 7, "st_word": 8,
    "cvt_magic": 9, "cvt_none": 10,
}  # fmt: skip

H2F = """
fn probe_h2f(h: u32) -> f32 {
    let em = h & 0x7FFFu;
    let b = em << 13u;
    var bits = select(b + 0x38000000u, b + 0x70000000u, em >= 0x7C00u);
    var f = bitcast<f32>(bits);
    f = select(f, (bitcast<f32>(em | 0x4B000000u) - 8388608.0) * 5.9604645e-8, em < 0x400u);
    return bitcast<f32>(bitcast<u32>(f) | ((h & 0x8000u) << 16u));
}
fn probe_h4(lo: u32, hi: u32) -> vec4<f32> {
    if (AA_PROBE == 10u) {
        return vec4<f32>(bitcast<f32>(lo << 16u), bitcast<f32>(lo & 0xFFFF0000u), bitcast<f32>(hi << 16u),
                         bitcast<f32>(hi & 0xFFFF0000u));
    }
    return vec4<f32>(probe_h2f(lo & 0xFFFFu), probe_h2f(lo >> 16u), probe_h2f(hi & 0xFFFFu), probe_h2f(hi >> 16u));
}
fn probe_b4(w: u32) -> vec4<f32> {
    if (AA_PROBE == 10u) {
        return bitcast<vec4<f32>>(vec4<u32>(w) << vec4<u32>(24u, 16u, 8u, 0u));
    }
    let x = select(w, w ^ 0x80808080u, DTYPE == 2u);
    let m = ((vec4<u32>(x) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xFFu)) | vec4<u32>(0x4B000000u);
    return bitcast<vec4<f32>>(m) - vec4<f32>(select(8388608.0, 8388736.0, DTYPE == 2u));
}
"""

EDITS = [
    ("override TW: u32 = 4u;", "override TW: u32 = 4u;\noverride AA_PROBE: u32 = 0u;" + H2F),
    (
        "        return vec4<f32>(unpack2x16float(lo), unpack2x16float(hi));",
        "        if (AA_PROBE >= 9u) { return probe_h4(lo, hi); }\n        return vec4<f32>(unpack2x16float(lo), unpack2x16float(hi));",  # noqa: E501
    ),
    (
        "    if (DTYPE == 2u) {\n        return vec4<f32>(f32(i32(w << 24u) >> 24u)",
        "    if (AA_PROBE >= 9u) { return probe_b4(w); }\n    if (DTYPE == 2u) {\n        return vec4<f32>(f32(i32(w << 24u) >> 24u)",  # noqa: E501
    ),
    (
        "fn wts(j: u32, ow0: u32) -> vec4<f32> {",
        "fn wts(j: u32, ow0: u32) -> vec4<f32> {\n    if (AA_PROBE == 1u || AA_PROBE == 5u || (AA_PROBE == 7u || AA_PROBE == 8u)) { return vec4<f32>(0.25); }",  # noqa: E501
    ),
    (
        "fn elems4(s: u32) -> vec4<f32> {",
        "fn elems4(s: u32) -> vec4<f32> {\n    if (AA_PROBE == 2u) { return vec4<f32>(f32(s & 7u), f32(s & 3u), f32(s & 5u), 1.0); }",  # noqa: E501
    ),
    (
        "        store_cols(plane_out + oh * p.out_strides.z, acc, ncol);",
        "        if (AA_PROBE == 3u && acc.x != 1234.5) { return; }\n"
        "        if (AA_PROBE == 8u) { output[(plane_out + oh * p.out_strides.z) / per_word()] = bitcast<u32>(acc.x); continue; }\n"  # noqa: E501
        "        store_cols(plane_out + oh * p.out_strides.z, acc, ncol);",
    ),
    (
        "            acc = add_row(acc, 0u,",
        "            if ((AA_PROBE < 6u || AA_PROBE >= 9u)) { acc = add_row(acc, 0u,",
    ),
    ("acc = add_row(acc, 0u, plane_in, hh, oh, cs);", "acc = add_row(acc, 0u, plane_in, hh, oh, cs); }"),
    (
        "        if (TH > 1u) { acc = add_row(",
        "        if (TH > 1u && AA_PROBE != 4u && (AA_PROBE < 6u || AA_PROBE >= 9u)) { acc = add_row(",
    ),
    (
        "        if (TH > 2u) { acc = add_row(",
        "        if (TH > 2u && AA_PROBE != 4u && (AA_PROBE < 6u || AA_PROBE >= 9u)) { acc = add_row(",
    ),
    (
        "        if (TH > 3u) { acc = add_row(",
        "        if (TH > 3u && AA_PROBE != 4u && (AA_PROBE < 6u || AA_PROBE >= 9u)) { acc = add_row(",
    ),
    (
        "    let f = words(p.head[3] + ow0);\n    let n = words(p.head[3] + p.entries[3] + ow0);",
        "    var f = words(p.head[3] + ow0);\n    var n = words(p.head[3] + p.entries[3] + ow0);\n"
        "    if (AA_PROBE == 5u || (AA_PROBE == 7u || AA_PROBE == 8u)) { f = vec4<u32>(ow0 * 2u) + vec4<u32>(0u, 2u, 4u, 6u); n = vec4<u32>(4u); }",  # noqa: E501
    ),
    (
        "        let hh = head(2u, oh);\n        var acc",
        "        var hh = head(2u, oh);\n        if (AA_PROBE == 5u) { hh = vec2<u32>(oh * 2u, 4u); }\n        var acc",
    ),
]


#: --small-workgroup-arrays: aa_tile's workgroup arrays shrunk to 4 elements (aa_tile then gives
#: wrong results; aa_taps never reads them): does the module's workgroup memory cost aa_taps?
SHRINK = [
    ("const SRC_N: u32 = 2560u;", "const SRC_N: u32 = 4u;"),
    ("const MID_N: u32 = 1536u;", "const MID_N: u32 = 4u;"),
]


def patched(orig, shrink: bool = False):
    def load(name: str) -> str:
        text = orig(name)
        if name == "resample_antialias.wgsl":
            for a, b in EDITS + (SHRINK if shrink else []):
                if a not in text:
                    raise RuntimeError(f"probe edit does not apply: {a!r}")
                text = text.replace(a, b)
        return text

    return load


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", action="append", default=[])
    ap.add_argument("--shape", default="8,64,240,240")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--small-workgroup-arrays", action="store_true", help="shrink aa_tile's workgroup arrays")
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="repeatable (default all)")
    a = ap.parse_args(argv)
    runtime.load_wgsl = patched(runtime.load_wgsl, a.small_workgroup_arrays)
    variant = {"v": 0}
    plan0 = aa.plan_resample_antialias

    def plan(*args, **kw):
        p = plan0(*args, **kw)
        steps = []
        for s in p.steps:
            if s.name == "aa_taps":
                s = s.__class__(
                    **{
                        **s.__dict__,
                        "constants": tuple(sorted({**dict(s.constants), "AA_PROBE": variant["v"]}.items())),
                    }
                )
            steps.append(s)
        return p.__class__(**{**p.__dict__, "steps": tuple(steps)})

    aa.plan_resample_antialias = plan
    dev = dmlwgsl.default_device()
    bench = Bench(dev, reps=a.reps)
    print(f"# adapter: {dev.name}; clocks: {hold_clocks(dev)}")
    shape = tuple(int(s) for s in a.shape.split(","))
    rng = np.random.default_rng(0)
    table = []
    for dt_name in a.dtype or ["float32", "float16", "uint8"]:
        dt = DataType.parse(dt_name)
        x = rng.integers(0, 256, size=shape).astype(dt.numpy_dtype)
        xt = dev.upload(x)
        for f in (2, 3, 4):
            out = shape[:2] + tuple(s // f for s in shape[2:])
            od = TensorDesc(dt, out)
            scales = (1.0, 1.0) + tuple(o / i for o, i in zip(out[2:], shape[2:]))
            desc = Resample3Desc(xt.desc, od, "linear", AxisDirection.DECREASING, scales, (0.5,) * 4, (-0.5,) * 4, True)
            yt = dev.tensor(od)
            row = {}
            for name, v in VARIANTS.items():
                if a.variant and name not in a.variant:
                    continue
                variant["v"] = v
                op = aa.compile_resample3(desc, device=dev)
                if op.plan.steps[0].name != "aa_taps":
                    row[name] = float("nan")
                    continue
                row[name] = bench.pass_times_ns(lambda op=op: op(xt, yt), len(op.plan.steps))[0] / 1e3
            copy_us = op.plan.bytes_moved / bench.copy_gbps(op.plan.bytes_moved // 2) / 1e3
            line = f"{dt_name:8s} 1/{f} copy {copy_us:6.1f} " + " ".join(f"{k} {t:6.1f}" for k, t in row.items())
            print(line, flush=True)
            table.append(line)
            yt.buffer.destroy()
        xt.buffer.destroy()
    print("\n".join(["# us, median of", *table]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Probe: Resample3's aa_pat against aa_taps, in its forms and with parts of its work taken out.

Each shape x type x scale row times, with GPU timestamps (median), each ``--form``:

    taps                aa_taps (requested)
    pat                 aa_pat (requested: every form allowed, the plan's rule picks)
    pat:PV:RB           aa_pat with PV output columns and RB output rows a thread
    pat:PV:RB:v|w       ... with windows of 16-byte vectors (v, where the rows allow) or of words (w)
    pat:PV:RB:v|w:EDIT  ... with the shader's text edited (results wrong on purpose; time only):
                        nostore (stores skipped behind an impossible test), noload (window words
                        from their index instead of loads), noconv (elements' bits as f32, no
                        conversion), magicin (uint8 in through the float whose bits are
                        0x4B000000 | b: exact, a real form), constw / consth (the W / H slot
                        weights as constants instead of table loads), or wgN (workgroups of N
                        threads, a real form); edits combine with '+' (noload+constw)
    pat@EDIT            the plan's aa_pat form with EDIT

Results are compared with the first form's (aa_taps': the reference's sums in its order): a form
that differs by more than 1 (8-bit) or 1e-3 is marked BAD. The copy time is the in-run copy of the
row's bytes.

    python bench/antialias_pattern_probe.py [--shape 8,64,240,240 ...] [--dtype float32 ...]
        [--scale 1/2 ...] [--form taps --form pat:8:2:v ...] [--reps 15]
"""

from __future__ import annotations

import argparse
import os
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dmlwgsl  # noqa: E402
from dmlwgsl import runtime  # noqa: E402
from dmlwgsl.benchmark import Bench, hold_clocks  # noqa: E402
from dmlwgsl.ops import _resample_antialias as aa  # noqa: E402
from dmlwgsl.ops.resample import AxisDirection, Resample3Desc  # noqa: E402
from dmlwgsl.tensor import DataType, TensorDesc  # noqa: E402

EDITS = {
    "nostore": [
        (
            "    if (i == KH - 1u && bd.oh0 + k < p.out_sizes.z) {",
            "    if (i == KH - 1u && bd.oh0 + k < p.out_sizes.z && s.lo.x == 1234.5) {",
        )
    ],
    "noload": [
        (
            "    if (VW == 1u) { return pat_vec(rw, kw, q, inner); }",
            "    return input4[0u] + input[0u] + vec4<u32>(rw + q, u32(kw) * 3u, rw ^ q, rw * 7u);",
        )
    ],
    "constw": [
        (
            "    return bitcast<f32>(table[p.pat_w.x + (j * KW + t) * p.column_groups + g]);",
            "    return f32(j * KW + t + 1u) * 0.01;",
        )
    ],
    "consth": [
        (
            "    let wh = bitcast<f32>(table[p.pat_h.x + i * p.pat_h.w + bd.oh0 + k]);",
            "    let wh = f32(i + 1u) * 0.125;",
        )
    ],
    "magicin": [
        (
            "    return f32((x >> (8u * k)) & 0xFFu);",
            "    return bitcast<f32>(0x4B000000u | ((x >> (8u * k)) & 0xFFu)) - 8388608.0;",
        )
    ],
    "noconv": [
        (
            "    if (DTYPE == 0u) { return bitcast<f32>(x); }",
            "    if (DTYPE < 4u) { return bitcast<f32>(x >> (8u * k)); }",
        )
    ],
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--dtype", action="append", default=[])
    ap.add_argument("--scale", action="append", default=[])
    ap.add_argument("--form", action="append", default=[])
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args(argv)
    shapes = [tuple(int(v) for v in s.split(",")) for s in a.shape or ["8,64,240,240"]]
    scales = [Fraction(s) for s in a.scale or ["1/2", "1/3", "1/4"]]
    forms = a.form or ["taps", "pat"]
    edit = {"e": None}
    load0 = runtime.load_wgsl

    def load(name: str) -> str:
        text = load0(name)
        if name == aa.PAT_SHADER and edit["e"]:
            for old, new in (pair for e in edit["e"] for pair in EDITS[e]):
                if old not in text:
                    raise RuntimeError(f"probe edit does not apply: {old!r}")
                text = text.replace(old, new)
        return text

    runtime.load_wgsl = load
    dev = dmlwgsl.default_device()
    bench = Bench(dev, reps=a.reps)
    print(f"# adapter: {dev.name}; clocks: {hold_clocks(dev)}")
    rng = np.random.default_rng(0)
    lines = []
    for shape in shapes:
        for dt_name in a.dtype or ["float32", "float16", "uint8"]:
            dt = DataType.parse(dt_name)
            xt = dev.upload(rng.integers(0, 100, size=shape).astype(dt.numpy_dtype))
            for f in scales:
                out = shape[:-2] + tuple(max(1, int(round(s * f))) for s in shape[-2:])
                od = TensorDesc(dt, out)
                sc = (1.0,) * (len(shape) - 2) + tuple(o / i for o, i in zip(out[-2:], shape[-2:]))
                r = len(shape)
                desc = Resample3Desc(xt.desc, od, "linear", AxisDirection.DECREASING, sc, (0.5,) * r, (-0.5,) * r, True)
                row, ref, copy_us = [], None, None
                for form in forms:
                    row.append(time_form(dev, bench, desc, xt, od, form, edit))
                    t, got, op, tag = row[-1]
                    if got is not None and ref is None:
                        ref = got
                    if op is not None and copy_us is None:
                        copy_us = op.plan.bytes_moved / bench.copy_gbps(op.plan.bytes_moved // 2) / 1e3
                cells = []
                for form, (t, got, op, tag) in zip(forms, row):
                    if t is None:
                        cells.append(f"{form} -")
                        continue
                    err = 0.0 if got is None or ref is None else float(np.abs(got - ref).max())
                    bad = err > (1 if dt.size_in_bytes == 1 else 1e-3)
                    cells.append(f"{form}{tag} {t:6.1f}{' BAD %.3g' % err if bad else ''}")
                name = "x".join(map(str, shape))
                line = f"{name} {dt_name:7s} {str(f):5s} copy {copy_us or 0:6.1f} | " + " | ".join(cells)
                print(line, flush=True)
                lines.append(line)
            xt.buffer.destroy()
    print("# us (median)")
    print("\n".join(lines))
    return 0


def time_form(dev, bench, desc, xt, od, form: str, edit: dict):
    """(us, result or None for an edited form, operator, structure tag) of one form; (None, ...) where
    the form cannot run this description."""
    form, _, at = form.partition("@")
    parts = form.split(":")
    if at:
        parts = [parts[0], "", "", "", at]
    kernel = "aa_taps" if parts[0] == "taps" else "aa_pat"
    saved = aa._PAT_ANY, aa._PAT_BANDS, aa._vector_rows, aa.plan_resample_antialias
    extra = parts[4] if len(parts) >= 5 else ""
    try:
        if len(parts) >= 3 and parts[1]:
            aa._PAT_ANY = (int(parts[1]),)
            aa._PAT_BANDS = (int(parts[2]),)
        if len(parts) >= 4 and parts[3] == "w":
            aa._vector_rows = lambda *args: False
        edits = extra.split("+") if extra else []
        edit["e"] = edits if edits and all(e in EDITS for e in edits) else None
        dev.pipelines = type(dev.pipelines)()  # an edited text shares its cache key: build afresh
        if extra.startswith("wg"):
            wg, plan0 = int(extra[2:]), saved[3]

            def plan(*args, **kw):
                p = plan0(*args, **kw)
                consts = [tuple({**dict(s.constants), "WG": wg}.items()) for s in p.steps]
                steps = tuple(
                    s.__class__(**{**s.__dict__, "workgroup_size": wg, "constants": c}) for s, c in zip(p.steps, consts)
                )
                return p.__class__(**{**p.__dict__, "steps": steps})

            aa.plan_resample_antialias = plan
        try:
            op = aa.compile_resample3(desc, device=dev, kernel=kernel)
        except Exception:
            return None, None, None, ""
        yt = dev.tensor(od)
        t = bench.time_ns(lambda: op(xt, yt)) / 1e3
        got = None if edit["e"] else yt.numpy().astype(np.float64)
        yt.buffer.destroy()
    finally:  # (the plan is made again at the first call: the patches hold until then)
        aa._PAT_ANY, aa._PAT_BANDS, aa._vector_rows, aa.plan_resample_antialias = saved
        edit["e"] = None
    c = op.plan.steps[0].constants_dict
    tag = f"[{c['PV']}x{c['RB']}{'v' if c['VW'] else 'w'}]" if kernel == "aa_pat" else ""
    return t, got, op, tag


if __name__ == "__main__":
    sys.exit(main())

"""The ``dmlwgsl`` command: ``info``, ``check`` (the main job), ``bench`` and ``explain``.

dmlwgsl info  [--backend B] [--adapter NAME] [--json]
dmlwgsl check [--backend B] [--adapter NAME] [--op OP ...]    exit 1 on any mismatch
dmlwgsl bench OP [bench options...]     OP: an operator or sweep; options: dmlwgsl bench OP --help
dmlwgsl explain OP [op options] [--profile lavapipe|gl|h100] [--kernel NAME] [--json]

An error of dmlwgsl's (no adapter, an invalid description, ...) prints one line, ``dmlwgsl: ...``,
and exits 2; a mismatch in ``check`` or an inexact benchmark row exits 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback

BENCH_OPS = (
    "depth_to_space",
    "space_to_depth",
    "convolution_integer",
    "resample",
    "sweep",
    "host",
    "split",
    "resample_antialias",
)

#: What to install when no adapter is found (Mesa's software adapters run everywhere).
ADAPTER_HINT = (
    "install Mesa's drivers (Debian/Ubuntu: apt-get install mesa-vulkan-drivers libegl-mesa0 libgl1-mesa-dri)"
)


class CliError(Exception):
    """An error the command reports in one line (``dmlwgsl: <message>``, exit 2)."""


def _device(args):
    from .runtime import Device

    backend = args.backend or os.environ.get("DMLWGSL_BACKEND") or None
    adapter = args.adapter or os.environ.get("DMLWGSL_ADAPTER") or None
    try:
        return Device(backend=backend, adapter=adapter)
    except Exception as e:
        if _is_dmlwgsl_error(e):
            raise
        # wgpu's own errors (no adapter at all, a backend missing): one line, with the hint.
        looked = f"backend={backend or 'any'}, adapter={adapter or 'any'}"
        try:
            from .runtime import list_adapters

            found = len(list_adapters())
        except Exception:
            found = 0
        hint = "" if found else f"; found no adapter at all: {ADAPTER_HINT}"
        raise CliError(f"no usable GPU adapter ({looked}): {str(e).splitlines()[0]}{hint}") from e


def _is_dmlwgsl_error(e: BaseException) -> bool:
    """An exception raised by dmlwgsl on purpose (its own classes: DmlValidationError, GpuError,
    the runtime's adapter errors, PlanError, ...)."""
    return any(c.__module__.startswith("dmlwgsl") for c in type(e).__mro__ if c is not CliError)


def cmd_info(args) -> int:
    """Adapters, the chosen one's backend, features and limits, and the data types per op."""
    from .checks import supported_types
    from .runtime import list_adapters

    dev = _device(args)
    adapters = [dict(a.info) for a in list_adapters()]
    keys = (
        "max-storage-buffer-binding-size",
        "max-buffer-size",
        "max-compute-workgroups-per-dimension",
        "max-compute-invocations-per-workgroup",
        "max-compute-workgroup-storage-size",
        "min-storage-buffer-offset-alignment",
    )
    from .plan import Capabilities

    gl_fallback = not any(a.get("backend_type") == "Vulkan" for a in adapters) and "(OpenGL)" in dev.name

    info = {
        "adapters": [f"{a.get('device')} ({a.get('backend_type')}, {a.get('adapter_type')})" for a in adapters],
        "chosen": dev.name,
        "driver": dev.driver,
        "features": sorted(dev.features),
        "limits": {k: dev.limits[k] for k in keys if k in dev.limits},
        "convolution_integer dot4I8Packed kernel": Capabilities.from_device(dev).has("packed_4x8_integer_dot_product"),
        "timestamps": dev.has_timestamps,
        "gl_instead_of_vulkan": gl_fallback,
        "data types": supported_types(),
    }
    if args.json:
        print(json.dumps(info, indent=1))
        return 0
    print("adapters on this machine:")
    for a in info["adapters"]:
        print(f"  {a}")
    print(f"chosen adapter: {info['chosen']}")
    if info["driver"]:
        print(f"driver: {info['driver']}")
    if gl_fallback:
        print(
            "note: no Vulkan adapter found, so the GL one is used (slower, fewer features); "
            "for lavapipe: apt-get install mesa-vulkan-drivers"
        )
    print(f"features: {', '.join(info['features']) or '(none)'}")
    print("limits:")
    for k, v in info["limits"].items():
        print(f"  {k}: {v}")
    print(f"GPU timestamps: {'yes' if info['timestamps'] else 'no'}")
    dot4 = info["convolution_integer dot4I8Packed kernel"]
    print(f"ConvolutionInteger dot4I8Packed fast kernel: {'yes' if dot4 else 'no (portable kernel)'}")
    print("data types per operator (all on every adapter; 64-bit and 16-bit move as raw bits):")
    for op, types in info["data types"].items():
        print(f"  {op}: {', '.join(types)}")
    return 0


def cmd_check(args) -> int:
    """Every implemented op x data type x a few shapes against the reference; exit 1 on a mismatch.
    A case the adapter cannot run (e.g. the dot4 kernel without packed dot products) is skipped
    with its reason and counted apart, never as passed."""
    from .checks import OPERATORS, Skipped

    dev = _device(args)
    print(f"dmlwgsl check on {dev.name}", flush=True)
    ops = args.op or list(OPERATORS)
    unknown = [o for o in ops if o not in OPERATORS]
    if unknown:
        raise CliError(f"unknown op(s): {', '.join(unknown)}; choose from {', '.join(OPERATORS)}")
    summary = []
    for op in ops:
        t0 = time.perf_counter()
        passed = failed = skipped = 0
        reasons: dict[str, int] = {}
        types: dict[str, list[int]] = {}
        for case in OPERATORS[op]():
            try:
                case.run(dev)
                passed += 1
                types.setdefault(case.dtype, [0, 0])[0] += 1
            except Skipped as e:
                skipped += 1
                reasons[str(e)] = reasons.get(str(e), 0) + 1
            except Exception as e:  # a mismatch or a GPU error: report and go on
                failed += 1
                types.setdefault(case.dtype, [0, 0])[1] += 1
                print(f"  FAIL {op} {case.dtype} {case.name}: {e}", flush=True)
                if args.verbose:
                    traceback.print_exc()
        for why, n in reasons.items():
            print(f"  SKIP {op}: {n} case(s): {why}", flush=True)
        dt = time.perf_counter() - t0
        print(
            f"{op}: {passed} passed, {failed} failed, {skipped} skipped, {len(types)} data types, {dt:.1f} s",
            flush=True,
        )
        summary.append(
            (
                op,
                passed,
                failed,
                skipped,
                ", ".join(f"{k}{'' if v[1] == 0 else ' (FAILED)'}" for k, v in types.items()),
            )
        )
    print()
    w = max(len(s[0]) for s in summary)
    print(f"{'operator'.ljust(w)}  passed  failed  skipped  data types")
    for op, p, f, sk, types in summary:
        print(f"{op.ljust(w)}  {str(p).rjust(6)}  {str(f).rjust(6)}  {str(sk).rjust(7)}  {types}")
    total_p, total_f, total_s = (sum(s[i] for s in summary) for i in (1, 2, 3))
    print(f"\n{total_p} passed, {total_f} failed, {total_s} skipped")
    return 1 if total_f else 0


def _bench_module(op: str):
    try:
        return importlib.import_module(f"dmlwgsl.bench.bench_{op}")  # installed wheel
    except ModuleNotFoundError:
        from pathlib import Path

        root = Path(__file__).resolve().parents[2] / "bench"  # source checkout
        sys.path.insert(0, str(root))
        return importlib.import_module(f"bench_{op}")


def cmd_bench(op: str | None, rest) -> int:
    """Run bench/bench_<op>.py's main with the remaining options (its own --help included)."""
    if op is None or op in ("-h", "--help"):
        print("usage: dmlwgsl bench OP [options]   (options: dmlwgsl bench OP --help)")
        print(f"OP: {', '.join(BENCH_OPS)}")
        return 0 if op else 2
    if op not in BENCH_OPS:
        raise CliError(f"bench: unknown benchmark {op!r}; choose from {', '.join(BENCH_OPS)}")
    return int(_bench_module(op).main(list(rest)) or 0)


EXPLAIN_OPS = ("depth_to_space", "space_to_depth", "resample", "convolution_integer")


def parse_ints(text: str) -> tuple[int, ...]:
    """ "8,64,56,56" -> (8, 64, 56, 56)."""
    try:
        return tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas; got {text!r}") from None


def parse_floats(text: str) -> tuple[float, ...]:
    """ "1,1,2,2" -> (1.0, 1.0, 2.0, 2.0); fractions such as 1/3 are accepted."""
    from fractions import Fraction

    try:
        return tuple(float(Fraction(v.strip())) for v in text.split(",") if v.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas; got {text!r}") from None


def explain_parser(op: str) -> argparse.ArgumentParser:
    """The options of ``dmlwgsl explain OP``: the common ones here, the operator's own from its
    module's ``add_explain_arguments``."""
    p = argparse.ArgumentParser(
        prog=f"dmlwgsl explain {op}", description=f"Print the execution plan of one {op} description."
    )
    p.add_argument(
        "--profile",
        help="plan for a kept capability record (lavapipe, gl, h100) without a GPU; default: the current adapter",
    )
    p.add_argument("--backend", help="vulkan, gl, metal or dx12 (without --profile)")
    p.add_argument("--adapter", help="substring of the adapter name (without --profile)")
    p.add_argument("--kernel", help="request this kernel path (an impossible request is an error)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.add_argument("--input", type=parse_ints, required=True, help="input sizes, e.g. 8,64,56,56")
    p.add_argument("--dtype", default="float32", help="input data type (numpy or DML name)")
    importlib.import_module(f"dmlwgsl.ops.{op}").add_explain_arguments(p)
    return p


def cmd_explain(op: str, argv) -> int:
    """Print the plan one description compiles to (no GPU work; no GPU at all with --profile)."""
    from .plan import Capabilities
    from .tensor import DmlValidationError

    args = explain_parser(op).parse_args(argv)
    try:
        if args.profile:
            caps = Capabilities.profile(args.profile)
        else:
            caps = Capabilities.from_device(_device(args))
        plan = importlib.import_module(f"dmlwgsl.ops.{op}").explain_plan(args, caps)
    except DmlValidationError as e:
        print(f"dmlwgsl explain {op}: {e}", file=sys.stderr)
        return 2
    print(json.dumps(plan.to_dict(), indent=1) if args.json else plan.explain())
    return 0


def main(argv=None) -> int:
    """Entry point of the ``dmlwgsl`` console script."""
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")  # quiets Mesa's warning on headless machines
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("dmlwgsl: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `dmlwgsl explain ... | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w")
        return 0
    except Exception as e:
        if not (isinstance(e, CliError) or _is_dmlwgsl_error(e)):
            raise  # a bug: keep the traceback
        print(f"dmlwgsl: {e}", file=sys.stderr)
        return 2


def _main(argv) -> int:
    p = argparse.ArgumentParser(prog="dmlwgsl", description="DirectML operators as WGSL compute shaders.")
    sub = p.add_subparsers(dest="cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--backend", help="vulkan, gl, metal or dx12 (default: DMLWGSL_BACKEND or the high-performance adapter)"
    )
    common.add_argument("--adapter", help="substring of the adapter name (default: DMLWGSL_ADAPTER)")
    pi = sub.add_parser("info", parents=[common], help="adapters, features, limits, data types per op")
    pi.add_argument("--json", action="store_true")
    pc = sub.add_parser("check", parents=[common], help="check every op x data type against the reference")
    pc.add_argument("--op", action="append", help="only this op (repeatable)")
    pc.add_argument("-v", "--verbose", action="store_true", help="tracebacks for failures")
    pb = sub.add_parser(
        "bench",
        help=f"benchmark one op or the sweep ({', '.join(BENCH_OPS)}; options: bench OP --help)",
        add_help=False,
    )
    pb.add_argument("op", nargs="?")
    pe = sub.add_parser(
        "explain", help="print the execution plan of one description (options: explain OP --help)", add_help=False
    )
    pe.add_argument("op", choices=EXPLAIN_OPS)
    args, rest = p.parse_known_args(argv)
    if args.cmd == "explain":
        return cmd_explain(args.op, rest)
    if args.cmd == "bench":
        return cmd_bench(args.op, rest)
    if rest:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    return cmd_info(args) if args.cmd == "info" else cmd_check(args)


if __name__ == "__main__":
    sys.exit(main())

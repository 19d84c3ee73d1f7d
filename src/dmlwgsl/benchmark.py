"""The one benchmark harness: every script in bench/ (and ``dmlwgsl bench``) uses it.

* Times are GPU timestamps around each compute pass, median of ``reps`` runs after ``warmup`` runs
  (wall clock, marked as such, only where the adapter has no timestamps): :class:`Bench`.
* Rooflines are measured in the same run: the vec4 copy kernel moving the same bytes
  (:meth:`Bench.copy_ns`) and, for ConvolutionInteger, the dot4I8Packed-from-registers ceiling
  (:meth:`Bench.dp4a_tops`). The bytes and operations come from the operator's plan
  (:func:`plan_facts`), so the roofline and ``dmlwgsl explain`` cannot drift apart.
* Exactness uses the tests' tolerances, defined once (:data:`dmlwgsl.ops.resample.LINEAR_TOLERANCE`
  for linear resampling, bit-exact for everything else): :func:`compare`. A benchmark with an
  inexact row exits 1 (:func:`finish`).
* Peers on the same GPU: torch with CUDA (:func:`torch_cuda`, :func:`torch_time_ns`) and ONNX
  Runtime's WebGPU execution provider (:class:`OrtPeer`), each where it can run, else one line
  saying why.
* Output: a table with units fitted to the figures (:func:`fmt_time`, :func:`fmt_rate`), ``--json``,
  ``--plot PATH`` (matplotlib, the ``plot`` extra), progress lines on stderr (:class:`Progress`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .runtime import Device, GpuTensor, Kernel
from .tensor import DataType, TensorDesc

__all__ = [
    "Bench",
    "OrtPeer",
    "Progress",
    "Row",
    "bench_parser",
    "compare",
    "copy_kernel",
    "copy_uniforms",
    "finish",
    "fmt_rate",
    "fmt_time",
    "open_device",
    "plan_facts",
    "plot_rows",
    "print_table",
    "size_budget",
    "torch_cuda",
    "torch_time_ns",
]


# ------------------------------------------------------------------------------------------------
# Rows, units, tables, plots
# ------------------------------------------------------------------------------------------------
@dataclass
class Row:
    """One line of a benchmark table.

    ``rate`` is in base units per second (``unit`` "B/s" for data movement, "OP/s" for
    ConvolutionInteger); ``roofline`` is the fraction of the in-run roofline (None where there is
    none); ``exact`` is None for rows that produce no result of ours (peers, ceilings)."""

    op: str
    variant: str
    shape: str
    dtype: str
    ms: float
    rate: float
    unit: str
    roofline: float | None = None
    exact: bool | None = None
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The row as a JSON-ready dict."""
        d = {
            k: getattr(self, k) for k in ("op", "variant", "shape", "dtype", "ms", "rate", "unit", "roofline", "exact")
        }
        d.update(self.extra)
        return d


def movement_row(
    op: str, variant: str, shape, dtype: str, ns: float, moved: int, bench: "Bench", exact, extra, roof_ns=None
) -> Row:
    """A data-movement row: ``moved`` bytes in ``ns`` GPU nanoseconds, against the in-run copy of
    the same bytes (``roof_ns``: its time as :meth:`Bench.paired_ns` gave it beside the row)."""
    return Row(
        op,
        variant,
        "x".join(map(str, shape)),
        dtype,
        ns / 1e6,
        moved / ns * 1e9,
        "B/s",
        (bench.copy_ns(moved) if roof_ns is None else roof_ns) / ns,
        exact,
        extra,
    )


def open_peers(device, args, notes: list | None) -> tuple:
    """(torch with CUDA or None, an ORT WebGPU peer or None) as ``args.no_torch`` / ``args.no_ort``
    allow; why a peer is absent goes to ``notes`` (one line each)."""
    torch = None if args.no_torch else torch_cuda()
    ort = None if args.no_ort else OrtPeer.open(device)
    if isinstance(ort, str):
        if notes is not None:
            notes.append(ort)
        ort = None
    if torch is None and notes is not None and not args.no_torch:
        notes.append("torch: not timed (no torch with CUDA here)")
    return torch, ort


_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def fmt_rate(value: float, unit: str) -> str:
    """A rate with the SI prefix that fits it: 1.2e12 OP/s -> '1.20 TOP/s', 3.1e6 B/s -> '3.10 MB/s'."""
    if value is None or not math.isfinite(value):
        return ""
    for scale, p in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {p}{unit}"
    return f"{value:.3g} {unit}"


def fmt_time(ms: float) -> str:
    """A duration in the unit that fits it: 0.0123 ms -> '12.3 us', 1234 ms -> '1.23 s'."""
    if ms is None or not math.isfinite(ms):
        return ""
    if ms >= 1000:
        return f"{ms / 1000:.3g} s"
    if ms >= 1:
        return f"{ms:.3g} ms"
    return f"{ms * 1000:.3g} us"


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def print_table(rows: Sequence[Row], *, title: str, device: Device, clock: str, as_json: bool = False) -> None:
    """Print rows as a fixed-width table (or JSON), headed by the adapter and the clock used."""
    if as_json:
        doc = {"title": title, "adapter": device.name, "clock": clock, "rows": [r.as_dict() for r in rows]}
        print(json.dumps(doc, indent=1, default=str))
        return
    print(f"\n{title}\nadapter: {device.name}; clock: {clock}")
    extra_keys = list(dict.fromkeys(k for r in rows for k in r.extra))
    head = ["op", "variant", "shape", "dtype", "time", "rate", "% roofline", "exact"] + extra_keys
    lines = [head]
    for r in rows:
        lines.append(
            [
                r.op,
                r.variant,
                r.shape,
                r.dtype,
                fmt_time(r.ms),
                fmt_rate(r.rate, r.unit),
                "" if r.roofline is None else f"{100 * r.roofline:.1f}%",
                _fmt(r.exact),
            ]
            + [_fmt(r.extra.get(k)) for k in extra_keys]
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    for line in lines:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip())


def matplotlib_or_reason():
    """``matplotlib.pyplot`` (headless backend), or the one-line reason it cannot be used."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # ImportError, or a broken install
        return f"--plot needs matplotlib (pip install 'dmlwgsl[plot]'): {e}"
    return plt


def plot_rows(
    labels: Sequence[str], percents: Sequence[float], groups: Sequence[str], path: str, *, title: str
) -> None:
    """A horizontal bar per row: % of roofline, coloured and ordered by group (the op)."""
    plt = matplotlib_or_reason()
    if isinstance(plt, str):
        raise RuntimeError(plt)
    order = sorted(range(len(labels)), key=lambda i: (groups[i], i))
    names = list(dict.fromkeys(groups[i] for i in order))
    colours = {g: plt.get_cmap("tab10")(k % 10) for k, g in enumerate(names)}
    height = max(3.0, 0.18 * len(order) + 1.2)
    fig, ax = plt.subplots(figsize=(10, height))
    ys = range(len(order))
    ax.barh(ys, [percents[i] for i in order], color=[colours[groups[i]] for i in order])
    ax.set_yticks(list(ys))
    ax.set_yticklabels([labels[i] for i in order], fontsize=6)
    ax.invert_yaxis()
    ax.axvline(100, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel("% of the in-run roofline")
    ax.set_title(title, fontsize=9)
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=colours[g], label=g) for g in names], loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------
# Progress
# ------------------------------------------------------------------------------------------------
class Progress:
    """A progress line on stderr: ``[i/n] elapsed  text``; redrawn in place on a terminal, one
    line per step otherwise (logs). Silent with ``quiet``."""

    def __init__(self, total: int, label: str, *, quiet: bool = False):
        self.total, self.label, self.quiet = total, label, quiet
        self.done = 0
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def step(self, text: str) -> None:
        """One unit done; ``text`` describes it."""
        self.done += 1
        if self.quiet:
            return
        line = f"{self.label} [{self.done}/{self.total}] {time.perf_counter() - self.t0:6.1f} s  {text}"
        if self.tty:
            end = "\n" if self.done >= self.total else ""
            print("\r" + line[:150].ljust(150), end=end, file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        """A message that stays (a skipped row, a peer that cannot run)."""
        if not self.quiet:
            print(("\n" if self.tty and 0 < self.done < self.total else "") + text, file=sys.stderr, flush=True)


def progress(line: str) -> None:
    """One progress line on stderr (the table goes to stdout at the end)."""
    print(f"  .. {line}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------
# Timing and rooflines
# ------------------------------------------------------------------------------------------------
def copy_uniforms(count: int, threads: int) -> bytes:
    """The copy kernel's uniforms by name: ``count`` vec4 words, ``threads`` in the dispatch."""
    from .shader import interface

    return interface("common/copy_vec4.wgsl").uniform_layout("cp").pack({"count": count, "threads": threads})


def copy_kernel(device: Device, *, vpt: int = 1, workgroup_size: int = 256) -> Kernel:
    """The vec4 copy kernel (wgsl/common/copy_vec4.wgsl): bindings input and output, uniforms from
    :func:`copy_uniforms`; ``vpt`` vectors per thread."""
    return Kernel(
        device,
        op="copy",
        shader="common/copy_vec4.wgsl",
        entry_point="copy_vec4",
        bindings={"input": "input", "output": "output"},
        uniform_binding="cp",
        workgroup_size=workgroup_size,
        constants={"VPT": vpt},
        vec4_bindings=frozenset({"input", "output"}),
    )


def is_cpu_adapter(device: Device) -> bool:
    """Whether the adapter is a CPU rasteriser (lavapipe, llvmpipe): benchmarks shrink their sizes."""
    return str(device.info.get("adapter_type", "")).lower() == "cpu" or "llvmpipe" in device.name.lower()


def size_budget(device: Device, *, gpu_bytes: int = 1 << 30, cpu_bytes: int = 16 << 20) -> int:
    """The largest tensor a benchmark should make on ``device``: ``cpu_bytes`` on a CPU adapter (so a
    default run takes seconds, not minutes), ``gpu_bytes`` otherwise; never past the binding limit."""
    want = cpu_bytes if is_cpu_adapter(device) else gpu_bytes
    return int(min(want, device.max_binding_size))


#: Probe copies per submission in :meth:`Bench.settle` (16 MiB each: about 0.3 ms on an H100).
PROBE_RUNS = 20
#: :meth:`Bench.settle` waits until the probe is within this fraction of the fastest probe seen.
SETTLE_MARGIN = 0.03
#: ... or at most this many seconds (a GPU that never gets back to its best clock).
SETTLE_LIMIT_S = 3.0
#: Rounds of :meth:`Bench.paired_ns` on a CPU adapter (roofline and row timed back to back).
CPU_PAIRED_ROUNDS = 3


class Bench:
    """Times GPU work on one device. Every measurement starts with the GPU at its working clocks
    (:meth:`settle`)."""

    def __init__(self, device: Device, *, reps: int = 20, warmup: int = 3):
        self.device = device
        self.reps = reps
        self.warmup = warmup
        self.clock = "gpu-timestamps" if device.has_timestamps else "wall-clock"
        self._copy_cache: dict[int, float] = {}
        self._copy_best: dict[int, tuple[int, int]] = {}  # (vectors per thread, workgroup size)
        self._dp4a: float | None = None
        self._warm = False
        self._probe_kernel = None
        self._probe_best = float("inf")
        #: Seconds spent in :meth:`settle` (waiting for the GPU's clocks), for the report.
        self.settle_s = 0.0
        #: Probes that never got back to the fastest probe's speed (the GPU stayed slow).
        self.unsettled = 0
        #: How the GPU is kept at its working clocks (a line for the report).
        self.clock_hold = hold_clocks(device)

    def warm_up(self, seconds: float = 0.5) -> None:
        """Keep the GPU busy for ``seconds`` so that it reaches its working clocks before the first
        measurement (an idle GPU's first milliseconds run slower and would skew the first row); the
        fastest probe seen sets the speed :meth:`settle` waits for."""
        if self._warm:
            return
        self._warm = True
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            self._probe_ns()

    def _probe(self):
        """The probe: a vec4 copy of up to 16 MiB, whose speed follows the GPU's clocks."""
        if self._probe_kernel is None:
            dev = self.device
            nbytes = min(16 << 20, dev.max_binding_size // 2, size_budget(dev))
            nbytes -= nbytes % 16
            desc = TensorDesc(DataType.UINT32, (nbytes // 4,))
            a = GpuTensor(dev, desc, dev.create_buffer(nbytes, "probe.in"))
            b = GpuTensor(dev, desc, dev.create_buffer(nbytes, "probe.out"))
            words = nbytes // 16
            info = copy_uniforms(words, words)
            k = copy_kernel(dev)
            self._probe_kernel = lambda: k.dispatch({"input": a, "output": b}, lambda _res: info, words)
        return self._probe_kernel

    def _probe_ns(self) -> float:
        """Median GPU nanoseconds of the probe over one submission of PROBE_RUNS copies (wall-clock
        time of the submission where the adapter has no timestamps); updates the fastest seen."""
        run = self._probe()
        dev = self.device
        if dev.has_timestamps:
            with dev.batch(timestamps=True) as b:
                for _ in range(PROBE_RUNS):
                    run()
            ns = float(np.median(b.gpu_times_ns))
        else:
            t0 = time.perf_counter()
            with dev.batch():
                for _ in range(PROBE_RUNS):
                    run()
            dev.wait()
            ns = (time.perf_counter() - t0) * 1e9 / PROBE_RUNS
        self._probe_best = min(self._probe_best, ns)
        return ns

    def settle(self, limit_s: float = SETTLE_LIMIT_S) -> float:
        """Keep the GPU busy until the probe runs within SETTLE_MARGIN of the fastest probe seen (or
        ``limit_s`` passes); returns the seconds it took. A GPU lowers its clocks within about a
        second of host-only work (reading back, checking against numpy) and takes a few hundred
        milliseconds of load to raise them again: measured on an H100, a kernel timed after a
        second of host work ran at 345 MHz instead of 1980 MHz, 2.5-4x slower. So every timed
        measurement starts here, straight after a probe at full speed. CPU adapters: no-op."""
        if not self.device.has_timestamps or is_cpu_adapter(self.device):
            return 0.0
        self.warm_up()
        t0 = time.perf_counter()
        while self._probe_ns() > self._probe_best * (1 + SETTLE_MARGIN):
            if time.perf_counter() - t0 > limit_s:
                self.unsettled += 1
                break
        waited = time.perf_counter() - t0
        self.settle_s += waited
        return waited

    def time_ns(self, record: Callable[[], object], dispatches: int | None = None) -> float:
        """Median GPU nanoseconds of one run; ``record()`` issues one run (an op call, whatever its
        number of dispatches). All runs go into one submission; each run's dispatches share one
        compute pass, as an untimed call records them, timed from the first one's start to the last
        one's end (``dispatches`` checks their number)."""
        if self.device.has_timestamps:
            return float(np.median(self._timed_runs(record, dispatches, whole=True)))
        n = self.warmup + self.reps
        self.warm_up()
        self.settle()
        times = []
        for i in range(n):
            self.device.wait()
            t0 = time.perf_counter()
            record()
            self.device.wait()
            if i >= self.warmup:
                times.append((time.perf_counter() - t0) * 1e9)
        return float(statistics.median(times))

    def pass_times_ns(self, record: Callable[[], object], dispatches: int | None = None) -> list[float]:
        """Median GPU nanoseconds of each dispatch of a run, each in a timed compute pass of its
        own (their sum exceeds :meth:`time_ns` by about one pass's fixed cost per extra dispatch);
        needs timestamps."""
        if not self.device.has_timestamps:
            raise RuntimeError(f"{self.device.name} has no timestamp queries: dispatches cannot be timed apart")
        return [float(v) for v in np.median(self._timed_runs(record, dispatches, whole=False), axis=0)]

    def _timed_runs(self, record: Callable[[], object], dispatches: int | None, *, whole: bool) -> np.ndarray:
        """GPU nanoseconds of the timed runs: warm-up and settle, then warmup + reps runs in one
        submission, the warm-up runs dropped. ``whole``: one figure per run, shape (reps,);
        otherwise one per dispatch, shape (reps, dispatches a run)."""
        n = self.warmup + self.reps
        self.warm_up()
        self.settle()
        with self.device.batch(timestamps="run" if whole else True) as b:
            for _ in range(n):
                record()
                b.end_run()
        t = np.asarray(b.gpu_times_ns, dtype=np.float64)
        recorded = b.timed_dispatches
        if recorded % n or (dispatches is not None and recorded != n * dispatches) or t.size % n:
            raise RuntimeError(f"expected {n} runs of {dispatches or '?'} dispatches, got {recorded} dispatches")
        runs = t.reshape(n, t.size // n)[self.warmup :]
        return runs[:, 0] if whole else runs

    def copy_gbps(self, nbytes: int) -> float:
        """Bandwidth (GB/s, read + write counted) of the vec4 copy kernel copying ``nbytes``: the
        best of a few vectors-per-thread settings, so the ceiling is the best copy we can write.
        Past the adapter's binding limit (a split plan's tensors) the copy moves the most one binding
        holds: that far past every cache, copy bandwidth no longer depends on the size."""
        nbytes = self._copy_bytes(nbytes)
        if nbytes not in self._copy_cache:
            variants = self.copy_variants(nbytes)
            self._copy_best[nbytes] = max(variants, key=variants.get)
            self._copy_cache[nbytes] = variants[self._copy_best[nbytes]]
        return self._copy_cache[nbytes]

    def _copy_bytes(self, nbytes: int) -> int:
        """The bytes the copy kernel really copies for ``nbytes``: whole 16-byte vectors, at least
        one, at most one binding."""
        return min(max(16, (int(nbytes) + 15) & ~15), self.device.max_binding_size & ~15)

    def copy_ns(self, bytes_moved: int) -> float:
        """Nanoseconds the in-run copy takes to move ``bytes_moved`` bytes (read + written), the
        data-movement roofline of a row with that many bytes."""
        return bytes_moved / self.copy_gbps(bytes_moved // 2)

    def copy_variants(self, nbytes: int, vpts=(1, 2, 4), wgs=(256,)) -> dict:
        """GB/s of the vec4 copy for each (vectors per thread, workgroup size)."""
        dev = self.device
        nbytes = max(16, (int(nbytes) + 15) & ~15)
        desc = TensorDesc(DataType.UINT32, (nbytes // 4,))
        a = GpuTensor(dev, desc, dev.create_buffer(nbytes, "copy.in"))
        b = GpuTensor(dev, desc, dev.create_buffer(nbytes, "copy.out"))
        words = nbytes // 16
        out = {}
        for wg in wgs:
            for vpt in vpts:
                k = copy_kernel(dev, vpt=vpt, workgroup_size=wg)
                threads = -(-words // vpt)
                info = copy_uniforms(words, threads)
                pack = lambda _res, info=info: info  # noqa: E731
                ns = self.time_ns(lambda: k.dispatch({"input": a, "output": b}, pack, threads))
                out[(vpt, wg)] = 2 * nbytes / ns
        a.buffer.destroy()
        b.buffer.destroy()
        return out

    def roofline_now_ns(self, bytes_moved: int, ops: int | None = None) -> float:
        """The roofline of :func:`roofline_ns` measured again now (not the run's cached best): the
        fastest copy setting of :meth:`copy_gbps` timed once more for ``bytes_moved``, and for
        ``ops`` the dp4a ceiling timed once more (:meth:`paired_ns`' other half)."""
        nbytes = self._copy_bytes(int(bytes_moved) // 2)
        self.copy_gbps(nbytes)  # the fastest setting for this size
        vpt, wg = self._copy_best[nbytes]
        t = bytes_moved / self.copy_variants(nbytes, vpts=(vpt,), wgs=(wg,))[(vpt, wg)]
        if ops and has_dot4(self.device):
            t = max(t, ops / (self._dp4a_once() * 1e3))
        return t

    def paired_ns(
        self,
        record: Callable[[], object],
        bytes_moved: int,
        ops: int | None = None,
        rounds: int | None = None,
        dispatches: int | None = None,
    ) -> tuple[float, float]:
        """(GPU nanoseconds of one run of ``record`` as :meth:`time_ns` gives it, its roofline's
        nanoseconds). GPUs (``rounds`` 1): the run's cached roofline (:func:`roofline_ns`). CPU
        adapters (``rounds`` CPU_PAIRED_ROUNDS): each round times the roofline again
        (:meth:`roofline_now_ns`) and then the row, back to back, and the round with the median
        ratio gives both figures. A CPU adapter's speed moves with the host's scheduling: in one
        lavapipe quick sweep (2 vCPUs) whole submissions ran at 1x, 2x or 3.5x the fastest run's
        time (a DepthToSpace row 177-187 / 315-330 / 580-600 us), 1.5x apart between sweeps at the
        median row, up to 3.3x; a roofline measured once, in a fast phase, against a row timed in
        a slow one halved that row's percentage. Back-to-back pairs share their phase.
        ``dispatches``: as :meth:`time_ns` checks it."""
        if rounds is None:
            rounds = CPU_PAIRED_ROUNDS if is_cpu_adapter(self.device) else 1
        if rounds <= 1:
            return self.time_ns(record, dispatches), roofline_ns(self, bytes_moved, ops)
        pairs = []
        for _ in range(rounds):
            roof = self.roofline_now_ns(bytes_moved, ops)
            pairs.append((roof / self.time_ns(record, dispatches), roof))
        ratio, roof = sorted(pairs)[len(pairs) // 2]
        return roof / ratio, roof

    def dp4a_tops(self, *, refresh: bool = False) -> float | None:
        """TOPS of the dot4I8Packed-from-registers ceiling kernel (16 chains of dot products a thread,
        8 ops each), measured once per run (again with ``refresh``: the higher figure stays, so the
        percentages are conservative); None where the adapter has no packed dot product."""
        if not has_dot4(self.device):
            return None
        if self._dp4a is not None and not refresh:
            return self._dp4a
        self._dp4a = max(self._dp4a_once(), self._dp4a or 0.0)
        return self._dp4a

    def _dp4a_once(self) -> float:
        """TOPS of one timing of the dp4a ceiling kernel (the adapter must have dot4I8Packed)."""
        from .ops.convolution_integer import ceiling_kernel, ceiling_uniforms

        dev = self.device
        small = is_cpu_adapter(dev)
        threads = 256 * (64 if small else 132 * 16)
        steps = 64 if small else 2048
        k = ceiling_kernel(dev)
        out = GpuTensor(dev, TensorDesc(DataType.INT32, (threads,)), dev.create_buffer(4 * threads, "ceiling"))
        data = ceiling_uniforms(steps, threads)  # every thread stores: the compiler must keep every chain
        ns = self.time_ns(lambda: k.dispatch({"output": out}, lambda _res: data, threads))
        out.buffer.destroy()
        return threads * steps * 16 * 8 / ns / 1e3

    def host_overhead_us(self, record: Callable[[], object], n: int = 2000) -> float:
        """Host microseconds per dispatch when ``n`` calls of ``record`` are batched into one
        submission on cached pipelines and GPU-resident tensors (recording + encoding + submit)."""
        record()
        self.device.wait()
        t0 = time.perf_counter()
        with self.device.batch():
            for _ in range(n):
                record()
        t1 = time.perf_counter()
        self.device.wait()
        return (t1 - t0) * 1e6 / n


def has_dot4(device: Device) -> bool:
    """Whether the adapter has WGSL's packed 4x8 integer dot product (the dp4a ceiling and the
    ConvolutionInteger dot4 kernel need it)."""
    from .plan import Capabilities

    return Capabilities.from_device(device).has("packed_4x8_integer_dot_product")


def plan_facts(op, *, bytes_moved: int, ops: int | None = None) -> tuple[str, int, int | None]:
    """(kernel names joined by '+', bytes that must move, operations) from the compiled operator's
    plan; an operator without a plan yet gives kernel '?' and the figures computed by the caller
    from the descriptions (``bytes_moved``, ``ops``)."""
    plan = getattr(op, "plan", None)
    if plan is None:
        name = getattr(op, "kernel", None)
        return ("?" if not isinstance(name, str) else f"{name}?"), int(bytes_moved), ops
    return "+".join(plan.kernels), int(plan.bytes_moved), plan.ops if plan.ops is not None else ops


def roofline_ns(bench: Bench, bytes_moved: int, ops: int | None = None) -> float:
    """Roofline time of a row: the in-run copy of its bytes; for ConvolutionInteger the larger of
    that and its operations at the in-run dp4a ceiling (where the adapter has one)."""
    t = bench.copy_ns(bytes_moved)
    if ops:
        tops = bench.dp4a_tops()
        if tops:
            t = max(t, ops / (tops * 1e3))
    return t


# ------------------------------------------------------------------------------------------------
# Exactness: the tests' tolerances
# ------------------------------------------------------------------------------------------------
def tolerance(data_type, *, linear: bool) -> tuple[float, str | None]:
    """(absolute tolerance, reason) the tests apply: LINEAR_TOLERANCE for linear resampling, exact
    (0, None) for everything else."""
    if not linear:
        return 0.0, None
    from .ops.resample import LINEAR_TOLERANCE

    return LINEAR_TOLERANCE[DataType.parse(data_type)]


def compare(got: np.ndarray, want: np.ndarray, *, linear: bool = False) -> tuple[bool, str]:
    """(passes, note) of a result against the reference under the tests' tolerance: 'exact' for
    bit-equal, 'within tolerance (max err E)' for linear results inside LINEAR_TOLERANCE, else the
    first mismatch."""
    from .testing import assert_matches

    got, want = np.asarray(got), np.asarray(want)
    if got.shape == want.shape and got.dtype == want.dtype:
        if np.array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8)):
            return True, "exact"
    atol, why = tolerance(DataType.from_numpy(want.dtype), linear=linear) if linear else (0.0, None)
    try:
        assert_matches(got, want, atol=atol, why=why)
    except AssertionError as e:
        return False, str(e)
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if got.size else 0.0
    return True, f"within tolerance (max err {err:.2g})"


# ------------------------------------------------------------------------------------------------
# Peers: torch (CUDA) and ONNX Runtime's WebGPU execution provider
# ------------------------------------------------------------------------------------------------
def hold_clocks(device: Device) -> str:
    """Keep an NVIDIA GPU at its working clocks for the benchmark: a CUDA context (torch's) lives
    in the process. Measured on an H100 through Vulkan: a process with no CUDA context drops the
    GPU to a low performance level a few seconds in (345 MHz SM clock, kernels 2.5-4x slower) and
    stays there under load; with a context alive every pass ran at 1980 MHz. Returns the line the
    report prints; elsewhere nothing is held."""
    vendor = f"{device.info.get('vendor', '')} {device.name}".lower()
    if "nvidia" not in vendor or is_cpu_adapter(device):
        return ""
    if torch_cuda() is None:
        return (
            "clocks: no CUDA context could be held (torch with CUDA is not installed): NVIDIA drivers lower "
            "the clocks of a Vulkan-only process a few seconds in, so later rows may read slow"
        )
    return "clocks: a CUDA context (torch) is held for the run, which keeps the NVIDIA GPU at its working clocks"


def torch_cuda():
    """The torch module when it has CUDA, else None."""
    try:
        import torch
    except Exception:
        return None
    if not torch.cuda.is_available():
        return None
    # Create the CUDA context now: seen on the H100, Vulkan work timed while torch's context was
    # still unborn ran up to 2x slower, which would skew the first rows.
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    return torch


def torch_time_ns(fn: Callable[[], object], reps: int = 20, warmup: int = 3) -> float:
    """Median CUDA-event nanoseconds of ``fn`` (torch must have CUDA)."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e6)
    return float(statistics.median(times))


def wall_ms(fn: Callable[[], object], reps: int = 3) -> float:
    """Median wall-clock milliseconds of ``fn`` (end to end, e.g. a numpy one-liner)."""
    times = []
    for _ in range(max(1, reps)):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(statistics.median(times))


def onnx_model(op_type: str, inputs, output, attrs: dict | None = None, *, opset: int = 19, initializers=()) -> bytes:
    """A one-node ONNX model. ``inputs``: (name, numpy dtype, shape) or '' for an absent optional
    input; ``output``: (name, numpy dtype, shape); ``initializers``: (name, array) constants."""
    from onnx import TensorProto, helper, numpy_helper

    def vi(name, dt, shape):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dt)), list(shape))

    init_names = {n for n, _ in initializers}
    graph_inputs = [vi(*i) for i in inputs if i and i[0] not in init_names]
    names = [i[0] if i else "" for i in inputs]
    node = helper.make_node(op_type, names, [output[0]], **(attrs or {}))
    graph = helper.make_graph(
        [node],
        op_type.lower(),
        graph_inputs,
        [vi(*output)],
        initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in initializers],
    )
    del TensorProto
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model.SerializeToString()


def _ort_error(e: BaseException) -> str:
    """The informative end of an ONNX Runtime error (its messages start with source paths)."""
    text = " ".join(str(e).split())
    for marker in (" was false. ", "EP_FAIL : "):
        if marker in text:
            text = text.rsplit(marker, 1)[1]
    return text[:200]


class OrtPeer:
    """ONNX Runtime with its WebGPU execution provider (PyPI ``onnxruntime`` +
    ``onnxruntime-ep-webgpu``), preferred layout NCHW.

    :meth:`open` returns the peer or the one-line reason it cannot run. :meth:`measure` runs one
    model and reports its time (kernel against kernel: data bound on the device, a stream of runs
    ended by a readback, the readback's own time taken off), its end-to-end time from numpy, the
    execution provider each node really ran on (from ORT's profile: it falls back to the CPU
    silently for kernels it lacks), and its output for the agreement check."""

    def __init__(self, ort, ep_device, software: bool):
        self.ort = ort
        self.ep_device = ep_device
        self.software = software

    @classmethod
    def open(cls, device: Device) -> "OrtPeer | str":
        """The peer, or why it cannot run here (one line)."""
        try:
            import onnxruntime as ort
            import onnxruntime_ep_webgpu as webgpu_ep
        except Exception as e:
            return f"ORT WebGPU: not installed (pip install onnxruntime onnxruntime-ep-webgpu): {e}"
        software = is_cpu_adapter(device)
        try:
            ort.set_default_logger_severity(4)  # its own failures come back as exceptions, said in one line
        except Exception:
            pass
        if software:
            # Dawn refuses CPU adapters unless told otherwise (and needs Mesa newer than 22.3.6).
            os.environ.setdefault("ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER", "1")
        try:
            try:
                ort.register_execution_provider_library("webgpu", webgpu_ep.get_library_path())
            except Exception as e:
                if "already" not in str(e).lower():
                    raise
            name = webgpu_ep.get_ep_name()
            devs = [d for d in ort.get_ep_devices() if d.ep_name == name]
        except Exception as e:
            return f"ORT WebGPU: cannot register the execution provider: {str(e).splitlines()[0]}"
        if not devs:
            return "ORT WebGPU: the execution provider found no WebGPU device (Vulkan loader or adapter missing)"
        peer = cls(ort, devs[0], software)
        try:  # Dawn picks its adapter when the first session starts: find out now, once
            peer.session(onnx_model("Identity", [("x", np.float32, (4,))], ("y", np.float32, (4,)), opset=13))
        except Exception as e:
            why = _ort_error(e)
            if software:
                why += (
                    f" (adapter: {device.info.get('description', '?')}; Dawn needs a Mesa newer than 22.3.6, "
                    "e.g. 25.0.7 from bookworm-backports)"
                )
            return f"ORT WebGPU: cannot start on this machine: {why}"
        return peer

    def session(self, model: bytes, *, profile: bool = False):
        """An inference session on the WebGPU EP (NCHW preferred: with NHWC ORT wraps DepthToSpace
        in two Transposes)."""
        so = self.ort.SessionOptions()
        so.add_provider_for_devices([self.ep_device], {"preferredLayout": "NCHW"})
        so.log_severity_level = 4  # ORT's own failures come back as exceptions
        if profile:
            so.enable_profiling = True
            so.profile_file_prefix = os.path.join(os.environ.get("TMPDIR", "/tmp"), "dmlwgsl-ort")
        return self.ort.InferenceSession(model, sess_options=so)

    def placement(self, model: bytes, feeds: dict) -> str:
        """'OpType:provider' for each node that ran, from one profiled run, e.g.
        'DepthToSpace:WebGpu' or 'ConvInteger:CPU'."""
        sess = self.session(model, profile=True)
        sess.run(None, feeds)
        path = sess.end_profiling()
        try:
            with open(path) as f:
                events = json.load(f)
        finally:
            try:
                os.remove(path)
            except OSError:
                pass
        seen = {}
        for e in events:
            a = e.get("args") or {}
            if e.get("cat") == "Node" and "provider" in a and str(e.get("name", "")).endswith("_kernel_time"):
                prov = a["provider"].replace("ExecutionProvider", "")
                seen[f"{a.get('op_name', '?')}:{prov}"] = True
        return ",".join(seen) or "?"

    def measure(self, model: bytes, feeds: dict, *, reps: int = 20) -> dict:
        """Time, end-to-end time, node placement and output of one model (see the class docstring).
        Failures come back as {'ort_note': reason}."""
        out: dict = {}
        try:
            sess = self.session(model)
            result = sess.run(None, feeds)[0]
            out["ort_result"] = result
            out["ort_nodes"] = self.placement(model, feeds)
            out["ort_e2e_ms"] = wall_ms(lambda: sess.run(None, feeds), reps=max(3, reps // 4))
        except Exception as e:
            return {"ort_note": f"ORT WebGPU failed: {_ort_error(e)}"}
        try:
            out["ort_ms"] = self._device_time_ms(sess, feeds, result, reps)
        except Exception as e:
            out["ort_note"] = f"device-resident timing failed ({_ort_error(e)}); e2e only"
        return out

    def _device_time_ms(self, sess, feeds: dict, result: np.ndarray, reps: int) -> float:
        ort = self.ort
        mem = self.ep_device.memory_info(ort.OrtDeviceMemoryType.DEFAULT)
        io = sess.io_binding()
        keep = []
        for name, arr in feeds.items():
            v = ort.OrtValue.ortvalue_from_shape_and_type(arr.shape, arr.dtype, memory_info=mem)
            v.update_inplace(np.ascontiguousarray(arr))
            io.bind_ortvalue_input(name, v)
            keep.append(v)
        y = ort.OrtValue.ortvalue_from_shape_and_type(result.shape, result.dtype, memory_info=mem)
        io.bind_ortvalue_output(sess.get_outputs()[0].name, y)

        sync = self._sync_session()
        tiny = {"x": np.zeros(4, np.float32)}

        def stream(n: int) -> float:
            t0 = time.perf_counter()
            for _ in range(n):
                sess.run_with_iobinding(io)
            # run_with_iobinding returns before the GPU finishes: a 16-byte job on the same WebGPU
            # device, read back, waits for the queue (a readback of the output would cost more than
            # the runs themselves on large outputs, and its noise would swamp them).
            sync.run(None, tiny)
            return time.perf_counter() - t0

        stream(3)  # warm up
        n = max(8, reps)
        many = statistics.median(stream(n) for _ in range(3))
        one = statistics.median(stream(1) for _ in range(3))
        per_run = (many - one) / (n - 1)
        if per_run <= 0:
            raise RuntimeError("runs too short to time against the stream's noise")
        return per_run * 1e3

    def _sync_session(self):
        if getattr(self, "_sync", None) is None:
            self._sync = self.session(onnx_model("Neg", [("x", np.float32, (4,))], ("y", np.float32, (4,)), opset=13))
        return self._sync


# ------------------------------------------------------------------------------------------------
# Command line shared by the bench scripts
# ------------------------------------------------------------------------------------------------
def bench_parser(prog: str, description: str, *, reps: int = 20, json_path: bool = False) -> argparse.ArgumentParser:
    """The options every benchmark has; a script adds its own. ``json_path``: ``--json PATH`` writes
    the rows to a file ('-': stdout) instead of ``--json`` printing them in place of the table."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--backend", help="vulkan, gl, metal or dx12")
    p.add_argument("--adapter", help="substring of the adapter name")
    p.add_argument("--reps", type=int, default=reps, help=f"timed runs per measurement, median (default {reps})")
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    if json_path:
        p.add_argument("--json", metavar="PATH", help="write the rows as a JSON list to PATH ('-': stdout)")
    else:
        p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--plot", metavar="PATH", help="draw %% of roofline per row into PATH (needs matplotlib)")
    p.add_argument("--no-torch", action="store_true", help="leave torch out even where it has CUDA")
    p.add_argument("--no-ort", action="store_true", help="leave ONNX Runtime's WebGPU EP out")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    return p


class BenchError(Exception):
    """A benchmark that cannot start (a missing optional dependency); ``dmlwgsl`` prints it in one line."""


def open_device(args) -> Device:
    """The device a benchmark runs on (``--backend``/``--adapter``, else the environment's choice);
    checks ``--plot``'s dependency before any GPU work."""
    if getattr(args, "plot", None):
        plt = matplotlib_or_reason()
        if isinstance(plt, str):
            raise BenchError(plt)
    return Device(
        backend=args.backend or os.environ.get("DMLWGSL_BACKEND") or None,
        adapter=args.adapter or os.environ.get("DMLWGSL_ADAPTER") or None,
    )


def bench_notes(bench: Bench) -> list[str]:
    """The report lines about the driver and the GPU's clocks during the run."""
    lines = [f"driver: {bench.device.driver}"] if bench.device.driver else []
    if bench.clock_hold:
        lines.append(bench.clock_hold)
    if bench.unsettled:
        lines.append(
            f"clocks: {bench.unsettled} measurement(s) started with the GPU below its best speed "
            f"(the probe stayed over {100 * SETTLE_MARGIN:.0f} % slower for {SETTLE_LIMIT_S} s): read those rows as low"
        )
    return lines


def finish(rows: Sequence[Row], *, title: str, device: Device, bench: Bench, args, notes: Sequence[str] = ()) -> int:
    """Print the table (or JSON), draw ``--plot``, print the notes; return the exit status: 1 when
    any row of ours is not exact under the tests' tolerance, else 0."""
    print_table(rows, title=title, device=device, clock=bench.clock, as_json=args.json)
    out = sys.stderr if args.json else sys.stdout
    for n in list(notes) + bench_notes(bench):
        print(n, file=out)
    if getattr(args, "plot", None):
        mine = [r for r in rows if r.roofline is not None]
        plot_rows(
            [f"{r.variant} {r.shape} {r.dtype}" for r in mine],
            [100 * r.roofline for r in mine],
            [r.op for r in mine],
            args.plot,
            title=f"{title}\n{device.name}",
        )
        print(f"plot: {args.plot}", file=out)
    bad = [r for r in rows if r.exact is False]
    for r in bad:
        print(f"INEXACT: {r.op} {r.variant} {r.shape} {r.dtype}: {r.extra.get('check', '')}", file=sys.stderr)
    return 1 if bad else 0


# ------------------------------------------------------------------------------------------------
# DepthToSpace / SpaceToDepth (shared by bench/bench_depth_to_space.py and bench_space_to_depth.py)
# ------------------------------------------------------------------------------------------------
DEPTH_SPACE_DTYPES = ("float32", "float16", "uint8", "int64")


def depth_space_parser(op: str) -> argparse.ArgumentParser:
    """Command-line options of the DepthToSpace/SpaceToDepth benchmarks."""
    p = bench_parser(f"dmlwgsl bench {op}", f"Benchmark {op} on one adapter.")
    p.add_argument("--dtype", action="append", help=f"data type (repeatable; default {', '.join(DEPTH_SPACE_DTYPES)})")
    p.add_argument(
        "--shape",
        type=lambda s: tuple(int(v) for v in s.split(",")),
        help="input shape N,C,H,W (default: 134M elements on a GPU, N shrunk to fit the adapter's binding "
        "limit and, on a CPU adapter, 16 MiB; SpaceToDepth gets the same element count as {N, C/b^2, bH, bW})",
    )
    p.add_argument("--block-size", type=int, default=2)
    p.add_argument("--order", action="append", choices=["DCR", "CRD"], help="default both")
    return p


def _fit_batch(shape: tuple, itemsize: int, budget: int) -> tuple:
    """``shape`` with N (then C, then H) halved until a tensor of it fits ``budget`` bytes."""
    s = list(shape)
    for d in (0, 1, 2):
        while math.prod(s) * itemsize > budget and s[d] > 1:
            s[d] = max(1, s[d] // 2)
    return tuple(s)


def bench_depth_space(op: str, device: Device, args, bench: Bench | None = None) -> list[Row]:
    """Time ``op`` ("depth_to_space" or "space_to_depth") for each dtype and order; compare with
    the in-run vec4 copy of the same bytes, torch's pixel_shuffle/unshuffle (CUDA) and ONNX Runtime's
    WebGPU EP where they run. Every dtype is timed: a default shape that does not fit the adapter
    is shrunk (batch first), never skipped."""
    from .ops.depth_to_space import DepthToSpaceDesc, compile_depth_to_space, depth_to_space_output_sizes
    from .ops.space_to_depth import SpaceToDepthDesc, compile_space_to_depth, space_to_depth_output_sizes
    from .reference.depth_to_space import depth_to_space as ref_d2s
    from .reference.space_to_depth import space_to_depth as ref_s2d

    b = args.block_size
    bench = bench or Bench(device, reps=args.reps)
    torch, ort = open_peers(device, args, getattr(args, "notes", None))
    dtypes = args.dtype or DEPTH_SPACE_DTYPES
    orders = args.order or ("DCR", "CRD")
    prog = Progress(len(dtypes) * len(orders), op, quiet=args.quiet)
    rows: list[Row] = []
    for dt_name in dtypes:
        dt = DataType.parse(dt_name)
        if args.shape:
            shape = args.shape
        else:
            base = (1, 16, 8, 8) if args.quick else (8, 256, 256, 256)
            shape = _fit_batch(base, dt.size_in_bytes, size_budget(device))
            if op == "space_to_depth":
                shape = (shape[0], shape[1] // (b * b), shape[2] * b, shape[3] * b)
        in_desc = TensorDesc(dt, shape)
        if op == "depth_to_space":
            out_desc = TensorDesc(dt, depth_to_space_output_sizes(shape, b))
        else:
            out_desc = TensorDesc(dt, space_to_depth_output_sizes(shape, b))
        nbytes = in_desc.total_tensor_size_in_bytes
        device.check_binding_size(op, "input", nbytes)  # an explicit --shape past the limit: a clear error
        bench.copy_gbps(nbytes)  # before the op's buffers exist, like a clean copy test
        rng = np.random.default_rng(0)
        host = rng.integers(0, 256, size=nbytes, dtype=np.uint8)
        x = GpuTensor(device, in_desc, device.create_buffer(nbytes, "bench.in"))
        device.write(x.buffer, 0, host)
        y = device.tensor(out_desc, label="bench.out")
        xs = host.view(dt.numpy_dtype).reshape(shape)
        for order in orders:
            if op == "depth_to_space":
                k = compile_depth_to_space(DepthToSpaceDesc(in_desc, out_desc, b, order), device=device)
            else:
                k = compile_space_to_depth(SpaceToDepthDesc(in_desc, out_desc, b, order), device=device)
            kernel, moved, _ = plan_facts(k, bytes_moved=2 * nbytes)
            # (CPU adapters: the copy timed beside it)
            ns, roof = bench.paired_ns(lambda: k(x, y), moved, dispatches=k.plan.dispatches)
            # Check the last timed run against the numpy reference (first batch item: N maps exactly).
            got = y.numpy()
            want = ref_d2s(xs[:1], b, order) if op == "depth_to_space" else ref_s2d(xs[:1], b, order)
            ok, note = compare(got[:1], want)
            extra = {"kernel": kernel, "check": note}
            if torch is not None:
                extra.update(_torch_depth_space(torch, op, dt, shape, b, order, ns, args.reps))
            if ort is not None:
                extra.update(_ort_depth_space(ort, op, xs, b, order, got, args.reps, ns))
            rows.append(movement_row(op, order, shape, dt.name.lower(), ns, moved, bench, ok, extra, roof))
            prog.step(
                f"{order} {dt.name.lower()}: {fmt_time(ns / 1e6)}, {100 * rows[-1].roofline:.1f}% of copy, {note}"
            )
        x.buffer.destroy()
        y.buffer.destroy()
    # Host overhead per batched dispatch on cached pipelines and GPU-resident tensors: the same op
    # repeated, and a chain DepthToSpace -> SpaceToDepth (every dispatch changes pipeline and bindings).
    f32 = DataType.FLOAT32
    a, b_, c = TensorDesc(f32, (1, 16, 8, 8)), TensorDesc(f32, (1, 4, 16, 16)), TensorDesc(f32, (1, 16, 8, 8))
    d2s = compile_depth_to_space(DepthToSpaceDesc(a, b_, 2), device=device)
    s2d = compile_space_to_depth(SpaceToDepthDesc(b_, c, 2), device=device)
    ta, tb, tc = device.tensor(a), device.tensor(b_), device.tensor(c)
    first = (lambda: d2s(ta, tb)) if op == "depth_to_space" else (lambda: s2d(tb, tc))

    def chain():
        d2s(ta, tb)
        s2d(tb, tc)

    for name, fn, per in (("same op", first, 1), ("chain d2s->s2d", chain, 2)):
        us = bench.host_overhead_us(fn, n=200 if args.quick else 2000) / per
        rows.append(
            Row(
                op,
                f"host overhead, {name}",
                "1x16x8x8",
                "float32",
                us / 1e3,
                1e6 / us,
                "dispatch/s",
                extra={"check": "host time per dispatch: batched, cached, GPU-resident"},
            )
        )
    return rows


def _torch_depth_space(torch, op, dt: DataType, shape, b, order, ns, reps) -> dict:
    """pixel_shuffle / pixel_unshuffle (CRD) or view+permute+contiguous (DCR) on CUDA."""
    tdt = getattr(torch, dt.numpy_dtype.name, None)
    if tdt is None:
        return {"torch": f"no torch type for {dt.name.lower()}"}
    tx = torch.zeros(shape, dtype=tdt, device="cuda")
    f = torch_depth_space_fn(torch, op, tx, b, order)
    tns = torch_time_ns(f, reps=reps)
    del tx
    return {"torch_ms": tns / 1e6, "vs_torch": tns / ns}


def torch_depth_space_fn(torch, op: str, tx, b: int, order: str) -> Callable[[], object]:
    """torch's fastest equivalent of DepthToSpace/SpaceToDepth on ``tx``: pixel_shuffle /
    pixel_unshuffle for CRD; view + permute + contiguous for DCR (pixel_shuffle is CRD only)."""
    n, c, h, w = tx.shape
    F = torch.nn.functional
    if op == "depth_to_space":
        if order == "CRD":
            return lambda: F.pixel_shuffle(tx, b)
        co = c // (b * b)
        return lambda: tx.view(n, b, b, co, h, w).permute(0, 3, 4, 1, 5, 2).contiguous()
    if order == "CRD":
        return lambda: F.pixel_unshuffle(tx, b)
    return lambda: tx.view(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4).contiguous()


def _ort_depth_space(ort: OrtPeer, op, xs: np.ndarray, b, order, ours: np.ndarray, reps, ns) -> dict:
    onnx_op = "DepthToSpace" if op == "depth_to_space" else "SpaceToDepth"
    attrs = {"blocksize": b}
    if onnx_op == "DepthToSpace":
        attrs["mode"] = order
    elif order != "DCR":
        return {"ort_note": "ONNX SpaceToDepth has DCR only"}
    x = np.ascontiguousarray(xs)
    model = onnx_model(onnx_op, [("x", x.dtype, x.shape)], ("y", x.dtype, ours.shape), attrs, opset=13)
    return ort_columns(ort.measure(model, {"x": x}, reps=reps), ours, ours_ms=ns / 1e6)


def ort_columns(m: dict, ours: np.ndarray, *, linear: bool = False, ours_ms: float | None = None) -> dict:
    """The ORT peer's table columns from :meth:`OrtPeer.measure`: times, nodes, agreement with ours."""
    res = m.pop("ort_result", None)
    if m.get("ort_ms") is not None and ours_ms:
        m["vs_ort"] = m["ort_ms"] / ours_ms
    if res is not None:
        ok, note = compare(res, ours, linear=linear)
        if not ok and res.shape == ours.shape and res.dtype.kind == "f" and np.array_equal(res, ours, equal_nan=True):
            ok, note = True, "equal values (NaN payloads differ)"  # e.g. ORT's CPU kernel casting float16
        if not ok and res.shape == ours.shape:
            err = float(np.nanmax(np.abs(res.astype(np.float64) - ours.astype(np.float64))))
            note = f"max err {err:.3g}; " + note
        m["ort_agrees"] = note if ok else "NO: " + note[:100]
    return m


def depth_space_main(op: str, argv=None) -> int:
    """Entry point of the DepthToSpace/SpaceToDepth benchmark scripts."""
    args = depth_space_parser(op).parse_args(argv)
    device = open_device(args)
    bench = Bench(device, reps=args.reps)
    args.notes = []
    rows = bench_depth_space(op, device, args, bench)
    return finish(
        rows, title=f"{op} (block size {args.block_size})", device=device, bench=bench, args=args, notes=args.notes
    )

"""Execution plans: what a compiled operator runs, and why, as a frozen value.

A plan is computed from an operator description and an adapter's :class:`Capabilities` alone (no
adapter, no device), so it can be printed, compared and tested anywhere (``dmlwgsl explain``,
``Operator.plan``). It holds, per kernel step: the shader file and entry point, the override
constants (structure: the pipeline cache key), the named uniform values (data), the dispatch grid
and the reason the step was chosen; and for the whole operator: host tables, workspace, and the
roofline inputs (bytes that must move, and for ConvolutionInteger the multiply-adds).

Each operator module provides one planning function, ``plan_<op>(desc, caps, *, kernel=None,
offsets=None)``: it chooses the path, or takes the one ``kernel`` names (an impossible request
raises :class:`PlanError` naming the rule). ``placement`` says how the tensors lie in their
buffers (:class:`Placement`: the byte offset left after the binding alignment, and whether the
buffer is padded to 16 bytes); a path that needs aligned rows declines when they are not, so a
call with other placements gets a plan of its own. ``None`` means offset 0 in padded buffers.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

from .runtime import MAX_GROUPS_PER_DIM, dispatch_size
from .tensor import DmlValidationError

__all__ = ["Capabilities", "KernelStep", "Plan", "PlanError", "Placement", "PROFILES", "step"]

#: Capability records kept as data (src/dmlwgsl/profiles/<name>.json), so plans can be computed
#: and tested for these adapters on any machine.
PROFILES = ("lavapipe", "gl", "h100")

#: Limits a capability record keeps (the ones plans depend on).
LIMIT_KEYS = (
    "max-storage-buffer-binding-size",
    "max-buffer-size",
    "min-storage-buffer-offset-alignment",
    "max-compute-workgroup-storage-size",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x",
    "max-compute-workgroups-per-dimension",
)


class PlanError(DmlValidationError):
    """A requested kernel path cannot run this description on this adapter; the message names the rule."""


@dataclass(frozen=True)
class Capabilities:
    """What an adapter offers, as plans need it: name, backend, features, WGSL language features
    found by compiling a probe (e.g. ``packed_4x8_integer_dot_product``), limits, and the adapter
    type wgpu reports ("CPU" for lavapipe and llvmpipe: a few threads, not thousands)."""

    name: str
    backend: str
    features: frozenset = frozenset()
    wgsl_features: frozenset = frozenset()
    limits: tuple = ()
    adapter_type: str = "unknown"

    @property
    def is_cpu(self) -> bool:
        """Whether the adapter runs shaders on the CPU (lavapipe, llvmpipe)."""
        return self.adapter_type.lower() == "cpu"

    def limit(self, key: str) -> int:
        """One limit by its WebGPU name, e.g. ``max-storage-buffer-binding-size``."""
        d = dict(self.limits)
        if key not in d:
            raise KeyError(f"capabilities {self.name}: no limit {key!r}")
        return int(d[key])

    def has(self, feature: str) -> bool:
        """Whether the device feature or WGSL language feature ``feature`` is present."""
        return feature in self.features or feature in self.wgsl_features

    @property
    def binding_alignment(self) -> int:
        """Alignment of storage binding offsets, at least 16 (as :meth:`Device.binding_alignment`)."""
        return max(16, self.limit("min-storage-buffer-offset-alignment"))

    @property
    def max_binding_size(self) -> int:
        """Largest storage-buffer binding in bytes."""
        return self.limit("max-storage-buffer-binding-size")

    def with_binding_limit(self, nbytes: int) -> "Capabilities":
        """This record with max-storage-buffer-binding-size ``nbytes``: plans for a tighter limit
        than the adapter's (``compile_*(..., capabilities=...)``, the split tests and benchmarks)."""
        limits = dict(self.limits, **{"max-storage-buffer-binding-size": int(nbytes)})
        return dataclasses.replace(self, limits=tuple(sorted(limits.items())))

    def to_dict(self) -> dict:
        """JSON-ready form (the profile file format)."""
        return {
            "name": self.name,
            "backend": self.backend,
            "features": sorted(self.features),
            "wgsl_features": sorted(self.wgsl_features),
            "limits": dict(self.limits),
            "adapter_type": self.adapter_type,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> "Capabilities":
        """Inverse of :meth:`to_dict`."""
        return cls(
            d["name"],
            d["backend"],
            frozenset(d.get("features", ())),
            frozenset(d.get("wgsl_features", ())),
            tuple(sorted((k, int(v)) for k, v in d["limits"].items())),
            str(d.get("adapter_type", "unknown")),
        )

    @classmethod
    def from_device(cls, device) -> "Capabilities":
        """The record of a live :class:`~dmlwgsl.runtime.Device` (cached on it)."""
        caps = getattr(device, "_capabilities", None)
        if caps is None:
            from .runtime import probe_wgsl_features

            lim = device.limits
            caps = cls(
                device.info.get("device", "?"),
                device.info.get("backend_type", "?"),
                frozenset(device.features),
                frozenset(probe_wgsl_features(device)),
                tuple(sorted((k, int(lim[k])) for k in LIMIT_KEYS if k in lim)),
                str(device.info.get("adapter_type", "unknown")),
            )
            device._capabilities = caps
        return caps

    @classmethod
    def profile(cls, name: str) -> "Capabilities":
        """A kept capability record: one of :data:`PROFILES`."""
        if name not in PROFILES:
            raise DmlValidationError(f"profile: unknown {name!r}; choose from {', '.join(PROFILES)}")
        return _load_profile(name)


@functools.lru_cache(maxsize=None)
def _load_profile(name: str) -> Capabilities:
    res = importlib.resources.files("dmlwgsl") / "profiles" / f"{name}.json"
    return Capabilities.from_dict(json.loads(Path(str(res)).read_text()))


@dataclass(frozen=True)
class Placement:
    """Where one tensor lies in its buffer, as far as kernel choice cares: ``residual`` = byte
    offset after rounding the binding offset down to the binding alignment (0 for a tensor at the
    start of its buffer), ``padded`` = the buffer's size is a multiple of 16 (vec4 stores may run
    to its end)."""

    residual: int = 0
    padded: bool = True


ALIGNED = Placement()


def placement_of(placements: Mapping | None, name: str) -> Placement:
    """The placement of tensor ``name`` (offset 0 in a padded buffer when not given)."""
    return (placements or {}).get(name, ALIGNED)


@dataclass(frozen=True)
class KernelStep:
    """One dispatch of a plan.

    ``name`` is the kernel's name as users see it (usually the entry point); ``uniforms`` the named
    values of the shader's uniform struct (``uniform_var``); ``bindings`` maps the operator's tensor
    names (and workspace or table names) to the shader's variable names; ``invocations`` threads
    run in workgroups of ``workgroup_size``. ``windows`` lists (tensor name, byte start, byte
    length) for tensors bound only in part (past the binding-size limit a plan splits its work
    into steps that each bind a window); the start is relative to the tensor's own offset and
    should keep the binding alignment, so the residual offsets the uniforms assume stay valid.
    """

    name: str
    shader: str
    entry_point: str
    why: str
    invocations: int
    workgroup_size: int = 256
    constants: tuple = ()
    uniforms: tuple = ()
    bindings: tuple = ()
    uniform_var: str = ""
    windows: tuple = ()

    @property
    def grid(self) -> tuple[int, int, int]:
        """Workgroup counts (x, y, z), folded past 65535 groups a dimension."""
        return dispatch_size(self.invocations, self.workgroup_size, MAX_GROUPS_PER_DIM)

    @property
    def constants_dict(self) -> dict:
        """Override constants as a dict."""
        return dict(self.constants)

    @property
    def uniforms_dict(self) -> dict:
        """Uniform values by field name."""
        return dict(self.uniforms)

    @property
    def bindings_dict(self) -> dict:
        """Operator tensor name -> WGSL variable name."""
        return dict(self.bindings)

    def part(
        self,
        index: int,
        why: str,
        *,
        uniforms: Mapping,
        windows,
        invocations: int | None = None,
        constants: Mapping | None = None,
    ) -> "KernelStep":
        """This step as part ``index`` of a split plan (named ``name[index]``): the same kernel with
        the part's uniforms, windows and (where given) invocations and constants."""
        return replace(
            self,
            name=f"{self.name}[{index}]",
            why=why,
            invocations=self.invocations if invocations is None else int(invocations),
            constants=self.constants if constants is None else tuple(sorted(constants.items())),
            uniforms=_pairs(uniforms),
            windows=tuple(tuple(w) for w in windows),
        )

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "name": self.name,
            "shader": self.shader,
            "entry_point": self.entry_point,
            "why": self.why,
            "invocations": self.invocations,
            "workgroup_size": self.workgroup_size,
            "grid": list(self.grid),
            "constants": self.constants_dict,
            "uniforms": {k: _jsonable(v) for k, v in self.uniforms},
            "bindings": self.bindings_dict,
        }


def _pairs(m: Mapping | None) -> tuple:
    """A dict as a tuple of (key, value) pairs in its order, lists made tuples (hashable)."""
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in (m or {}).items())


def _jsonable(v):
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    if hasattr(v, "item"):
        return v.item()
    return v


def step(
    name: str,
    shader: str,
    why: str,
    invocations: int,
    *,
    entry_point: str | None = None,
    workgroup_size: int = 256,
    constants: Mapping | None = None,
    uniforms: Mapping | None = None,
    bindings: Mapping | None = None,
    uniform_var: str = "",
    windows=(),
) -> KernelStep:
    """Build a :class:`KernelStep` from plain dicts (sorted into tuples, so the step is hashable)."""

    consts = dict(constants or {})
    consts.setdefault("WG", workgroup_size)
    return KernelStep(
        name,
        shader,
        entry_point or name,
        why,
        int(invocations),
        workgroup_size,
        tuple(sorted(consts.items())),
        _pairs(uniforms),
        _pairs(bindings),
        uniform_var,
        tuple(tuple(w) for w in windows),
    )


@dataclass(frozen=True)
class Plan:
    """A compiled operator's execution plan (see the module docstring)."""

    op: str
    steps: tuple[KernelStep, ...]
    why: str
    bytes_moved: int
    capabilities: str = ""
    ops: int | None = None
    host_tables: tuple = ()  # (name, bytes) of tables computed on the host and uploaded
    workspace: tuple = ()  # (name, bytes) of scratch buffers the steps share
    details: tuple = ()  # further (name, value) facts of the chosen path

    @property
    def kernels(self) -> list[str]:
        """Kernel names, in dispatch order."""
        return [s.name for s in self.steps]

    @property
    def dispatches(self) -> int:
        """Dispatches per call."""
        return len(self.steps)

    def to_dict(self) -> dict:
        """JSON-ready form (``dmlwgsl explain --json``)."""
        d = {
            "op": self.op,
            "capabilities": self.capabilities,
            "kernels": self.kernels,
            "why": self.why,
            "dispatches": self.dispatches,
            "bytes_moved": self.bytes_moved,
            "host_tables": dict(self.host_tables),
            "workspace": dict(self.workspace),
            "steps": [s.to_dict() for s in self.steps],
        }
        if self.ops is not None:
            d["ops"] = self.ops
        d.update({k: _jsonable(v) for k, v in self.details})
        return d

    def explain(self) -> str:
        """Human-readable form (``dmlwgsl explain``)."""
        lines = [
            f"{self.op} on {self.capabilities or 'this adapter'}: {self.dispatches} dispatch(es): "
            f"{', '.join(self.kernels)}",
            f"why: {self.why}",
            f"bytes that must move: {self.bytes_moved:,}",
        ]
        if self.ops is not None:
            lines.append(f"operations (2 x multiply-adds): {self.ops:,}")
        for k, v in self.details:
            lines.append(f"{k}: {_jsonable(v)}")
        for name, n in self.host_tables:
            lines.append(f"host table {name}: {n:,} bytes")
        for name, n in self.workspace:
            lines.append(f"workspace {name}: {n:,} bytes")
        for i, s in enumerate(self.steps):
            lines.append(
                f"[{i}] {s.name} ({s.shader}:{s.entry_point}) grid {s.grid} x {s.workgroup_size} threads "
                f"({s.invocations:,} invocations)"
            )
            lines.append(f"    why: {s.why}")
            consts = {k: v for k, v in s.constants if k != "WG"}
            if consts:
                lines.append(f"    constants: {consts}")
            for k, v in s.uniforms:
                lines.append(f"    {s.uniform_var}.{k} = {_jsonable(v)}")
        return "\n".join(lines)


def div_magic(d: int) -> tuple[int, int]:
    """(m, s): the magic pair by which grid.wgsl's ``div_magic(a, m, s)`` divides any u32 ``a`` by
    the run-time divisor ``d`` (1 <= d < 2^32) with multiplies and shifts (round-up method:
    q = (t + ((a - t) >> 1)) >> s with t = mulhi(a, m); s = 32 marks d = 1)."""
    d = int(d)
    if not 1 <= d < 1 << 32:
        raise ValueError(f"div_magic: divisor {d} is outside 1 .. 2^32 - 1")
    if d == 1:
        return 0, 32
    l = (d - 1).bit_length()
    return (((1 << 32) * ((1 << l) - d)) // d + 1) & 0xFFFFFFFF, l - 1


def magic_uniforms(**divisors: int) -> dict:
    """``name_m`` and ``name_s`` (div_magic's pair) for each ``name=divisor``."""
    out = {}
    for name, d in divisors.items():
        out[f"{name}_m"], out[f"{name}_s"] = div_magic(max(1, d))
    return out

"""The runtime core: device, WGSL loading, pipeline cache, dispatch, batching and readback.

Operators never change this module. They describe a :class:`Kernel` (shader file, entry point,
override constants = structure) and call :meth:`Kernel.dispatch` with GPU tensors and a function
that packs their uniforms (data). Everything shape-dependent lives in uniforms, so one pipeline
serves every shape of a given structure.

Environment variables:
  DMLWGSL_BACKEND  vulkan | gl | metal | dx12 (adapter backend for the default device)
  DMLWGSL_ADAPTER  substring of the adapter name for the default device
  DMLWGSL_DEBUG    when set, print every pipeline's cache key and WGSL source as it is compiled
"""

from __future__ import annotations

import contextlib
import functools
import importlib.resources
import os
import re
import sys
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np
import wgpu

from .tensor import DmlValidationError, TensorDesc, desc_for_array

__all__ = [
    "Device",
    "GpuTensor",
    "Kernel",
    "GpuError",
    "default_device",
    "set_default_device",
    "load_wgsl",
    "dispatch_size",
    "list_adapters",
    "probe_wgsl_features",
]

#: Largest workgroup count per dimension guaranteed by WebGPU.
MAX_GROUPS_PER_DIM = 65535
_BACKENDS = {
    "vulkan": "Vulkan",
    "gl": "OpenGL",
    "opengl": "OpenGL",
    "metal": "Metal",
    "dx12": "D3D12",
    "d3d12": "D3D12",
}
_OPTIONAL_FEATURES = ("shader-f16", "timestamp-query", "timestamp-query-inside-passes", "subgroup")


class GpuError(RuntimeError):
    """A wgpu error, re-raised with the operator and pipeline cache key that caused it."""


# ------------------------------------------------------------------------------------------------
# WGSL files
# ------------------------------------------------------------------------------------------------
def _wgsl_root() -> Path:
    packaged = importlib.resources.files("dmlwgsl") / "wgsl"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "wgsl"  # source checkout


_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.M)


@functools.lru_cache(maxsize=None)
def load_wgsl(name: str) -> str:
    """Return the text of ``wgsl/<name>``, with each ``#include "file"`` line replaced by that
    whole file (once per module). Cached: every file is read from disk once per process."""
    seen: set[str] = set()

    def expand(rel: str) -> str:
        if rel in seen:
            return ""
        seen.add(rel)
        path = _wgsl_root() / rel
        if not path.is_file():
            raise FileNotFoundError(f"WGSL file {rel!r} not found under {_wgsl_root()}")
        return _INCLUDE.sub(lambda m: expand(m.group(1)), path.read_text())

    return expand(name)


# ------------------------------------------------------------------------------------------------
# Dispatch geometry
# ------------------------------------------------------------------------------------------------
def dispatch_size(invocations: int, workgroup_size: int, max_per_dim: int = MAX_GROUPS_PER_DIM) -> tuple[int, int, int]:
    """Workgroup counts covering ``invocations`` threads, folded into y (and z) past the per-dimension
    limit. Shaders recover the linear id as ``gid.x + (gid.y + gid.z * nwg.y) * nwg.x * WG``."""
    groups = max(1, -(-int(invocations) // workgroup_size))
    if groups <= max_per_dim:
        return groups, 1, 1
    y = -(-groups // max_per_dim)
    if y <= max_per_dim:
        return -(-groups // y), y, 1
    z = -(-y // max_per_dim)
    return max_per_dim, -(-y // z), z


# ------------------------------------------------------------------------------------------------
# Pipeline cache
# ------------------------------------------------------------------------------------------------
class PipelineCache:
    """LRU cache of compute pipelines keyed by a readable structure string; counts hits and misses."""

    def __init__(self, capacity: int = 256):
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[str, object] = OrderedDict()

    def get(self, key: str, build: Callable[[], object]):
        """The cached value for ``key``, building (and counting a miss) when absent."""
        if key in self._items:
            self.hits += 1
            self._items.move_to_end(key)
            return self._items[key]
        self.misses += 1
        value = build()
        self._items[key] = value
        if len(self._items) > self.capacity:
            self._items.popitem(last=False)
        return value

    def keys(self) -> list[str]:
        """Cached keys, least recently used first."""
        return list(self._items)

    def __len__(self):
        return len(self._items)


# ------------------------------------------------------------------------------------------------
# Device
# ------------------------------------------------------------------------------------------------
def list_adapters() -> list:
    """Every wgpu adapter on this machine."""
    return list(wgpu.gpu.enumerate_adapters_sync())


def _pick_adapter(backend: str | None, adapter: str | None, power_preference: str):
    if backend is None and adapter is None:
        return wgpu.gpu.request_adapter_sync(power_preference=power_preference)
    want = None
    if backend is not None:
        want = _BACKENDS.get(backend.lower())
        if want is None:
            raise ValueError(f"backend: unknown backend {backend!r} (choose from vulkan, gl, metal, dx12)")
    found = []
    for a in list_adapters():
        info = a.info
        found.append(f"{info['device']} ({info['backend_type']})")
        if want is not None and info["backend_type"] != want:
            continue
        if adapter is not None and adapter.lower() not in info["device"].lower():
            continue
        return a
    raise RuntimeError(
        f"no adapter matches backend={backend!r} adapter={adapter!r}; available: {', '.join(found) or 'none'}"
    )


class Device:
    """A wgpu device plus dmlwgsl's caches. One per adapter is plenty; ops take ``device=``.

    ``backend`` ("vulkan", "gl", "metal", "dx12") and ``adapter`` (substring of the adapter name)
    choose the adapter; by default the high-performance one. The device asks for every optional
    feature dmlwgsl can use (f16, timestamps, subgroups) that the adapter has, and for the
    adapter's largest buffer limits.
    """

    def __init__(
        self, *, backend: str | None = None, adapter: str | None = None, power_preference: str = "high-performance"
    ):
        self.adapter = _pick_adapter(backend, adapter, power_preference)
        feats = [f for f in _OPTIONAL_FEATURES if f in self.adapter.features]
        lim = self.adapter.limits
        limits = {
            k: lim[k]
            for k in (
                "max-storage-buffer-binding-size",
                "max-buffer-size",
                "max-compute-workgroup-storage-size",
                "max-compute-invocations-per-workgroup",
                "max-compute-workgroup-size-x",
            )
            if k in lim
        }
        self.device = self.adapter.request_device_sync(required_features=feats, required_limits=limits, label="dmlwgsl")
        self.queue = self.device.queue
        self.info = dict(self.adapter.info)
        self.features = frozenset(self.device.features)
        self.limits = dict(self.device.limits)
        self.pipelines = PipelineCache()
        self._batch: _Batch | None = None
        self._staging = None
        self._fence = None

    # -- description ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Adapter name and backend, e.g. 'llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)'."""
        return f"{self.info.get('device', '?')} ({self.info.get('backend_type', '?')})"

    @property
    def max_binding_size(self) -> int:
        """Largest storage-buffer binding, in bytes."""
        return int(self.limits["max-storage-buffer-binding-size"])

    def check_binding_size(self, op: str, name: str, nbytes: int) -> None:
        """Raise a clear error when a tensor cannot be bound on this adapter."""
        if nbytes > self.max_binding_size:
            raise DmlValidationError(
                f"{op}: {name} is {nbytes} bytes, beyond this adapter's max-storage-buffer-binding-size "
                f"{self.max_binding_size} ({self.name})"
            )

    @property
    def binding_alignment(self) -> int:
        """Alignment of storage binding offsets (at least 16, so vec4 views stay aligned)."""
        return max(16, int(self.limits["min-storage-buffer-offset-alignment"]))

    @property
    def has_timestamps(self) -> bool:
        """Whether GPU timestamp queries can time compute passes."""
        return "timestamp-query" in self.features

    def __repr__(self):
        return f"<dmlwgsl.Device {self.name}>"

    # -- buffers -------------------------------------------------------------------------------
    def create_buffer(self, size: int, label: str = "dmlwgsl", *, usage=None):
        """A storage buffer of at least ``size`` bytes (rounded up to 16), copyable both ways."""
        size = max(16, (int(size) + 15) & ~15)
        if size > int(self.limits["max-buffer-size"]):
            raise DmlValidationError(
                f"{label}: {size} bytes exceeds the adapter's max-buffer-size {self.limits['max-buffer-size']}"
            )
        if usage is None:
            usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        return self.device.create_buffer(size=size, usage=usage, label=label)

    def write(self, buffer, offset: int, data) -> None:
        """Copy host bytes into ``buffer`` at ``offset``; pads the tail to a multiple of 4 by
        keeping the buffer's own bytes there (read-modify-write of the last word)."""
        mv = memoryview(np.ascontiguousarray(np.frombuffer(memoryview(data).cast("B"), np.uint8)))
        n = mv.nbytes
        lead, tail = offset % 4, (offset + n) % 4
        if lead or tail:
            start, end = offset - lead, offset + n + ((4 - tail) % 4)
            old = bytearray(self.read(buffer, start, end - start))
            old[lead : lead + n] = mv
            self.queue.write_buffer(buffer, start, old)
        elif n:
            self.queue.write_buffer(buffer, offset, mv)

    def read(self, buffer, offset: int = 0, size: int | None = None) -> bytes:
        """Read bytes back through a staging buffer that is reused between calls."""
        if size is None:
            size = buffer.size - offset
        start = offset & ~3
        end = (offset + size + 3) & ~3
        n = end - start
        self.flush()
        if self._staging is None or self._staging.size < n:
            cap = 1 << max(12, (n - 1).bit_length())
            self._staging = self.device.create_buffer(
                size=cap, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST, label="dmlwgsl.staging"
            )
        enc = self.device.create_command_encoder(label="dmlwgsl.readback")
        enc.copy_buffer_to_buffer(buffer, start, self._staging, 0, n)
        self.queue.submit([enc.finish()])
        self._staging.map_sync(wgpu.MapMode.READ, 0, n)
        try:
            data = bytes(self._staging.read_mapped(0, n))
        finally:
            self._staging.unmap()
        if self._staging.size > (256 << 20):  # do not keep a huge staging buffer alive
            self._staging.destroy()
            self._staging = None
        return data[offset - start : offset - start + size]

    def fill(self, buffer, pattern: bytes, offset: int = 0, size: int | None = None) -> None:
        """Fill a byte range of ``buffer`` with a repeated pattern (used to poison outputs)."""
        if size is None:
            size = buffer.size - offset
        reps = -(-size // len(pattern))
        self.write(buffer, offset, (bytes(pattern) * reps)[:size])

    # -- tensors -------------------------------------------------------------------------------
    def tensor(self, desc: TensorDesc, *, label: str = "tensor") -> "GpuTensor":
        """Allocate a GPU tensor for ``desc`` (contents undefined)."""
        buf = self.create_buffer(desc.total_tensor_size_in_bytes, label)
        return GpuTensor(self, desc, buf, 0)

    def upload(self, array, *, label: str = "input") -> "GpuTensor":
        """Copy a numpy array (any view with non-negative strides, kept as strides) to the GPU."""
        a = np.asarray(array)
        desc, span = desc_for_array(a)
        buf = self.create_buffer(desc.total_tensor_size_in_bytes, label)
        self.write(buf, 0, span.view(np.uint8))  # the view's own memory: no host copy
        return GpuTensor(self, desc, buf, 0)

    # -- pipelines -----------------------------------------------------------------------------
    def pipeline(self, key: str, shader: str, entry_point: str, constants: Mapping[str, float], op: str):
        """The compute pipeline for ``key`` from the cache, compiling it on a miss."""

        def build():
            code = load_wgsl(shader)
            if os.environ.get("DMLWGSL_DEBUG"):
                print(f"[dmlwgsl] compiling {key}\n{code}", file=sys.stderr)
            # wgpu-native reports shader and pipeline validation errors as exceptions (wgpu-py
            # 0.32 has no error scopes), so catch them and name the op and the cache key.
            try:
                module = self.device.create_shader_module(code=code, label=key)
                pipe = self.device.create_compute_pipeline(
                    layout="auto",
                    label=key,
                    compute={"module": module, "entry_point": entry_point, "constants": dict(constants)},
                )
            except Exception as e:
                raise GpuError(f"{op}: building pipeline [{key}] failed: {e}") from e
            return pipe

        return self.pipelines.get(key, build)

    def uniform_buffer(self, data: bytes, label: str):
        """A uniform buffer holding ``data``."""
        buf = self.device.create_buffer(
            size=max(16, (len(data) + 15) & ~15),
            usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST,
            label=label,
        )
        self.queue.write_buffer(buf, 0, data)
        return buf

    # -- submission ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def batch(self, *, timestamps: bool = False):
        """Record every dispatch made inside the block into one command buffer, submitted on exit.

        With ``timestamps=True`` each dispatch gets its own timed compute pass; the yielded batch's
        ``gpu_times_ns`` holds one GPU duration per dispatch after the block (needs the
        timestamp-query feature). Nested batches join the outer one.
        """
        if self._batch is not None:
            yield self._batch
            return
        b = _Batch(self, timestamps)
        self._batch = b
        try:
            yield b
        except BaseException:
            self._batch = None
            raise
        self._batch = None
        b.submit()

    def flush(self) -> None:
        """Nothing to do unless called inside a batch: then reading back would see stale data."""
        if self._batch is not None and self._batch.items:
            raise RuntimeError("read back after the batch ends: dispatches recorded in it have not run yet")

    def record(self, pipeline, bind_group, groups, label: str) -> None:
        """Run one dispatch now, or add it to the open batch."""
        if self._batch is not None:
            self._batch.items.append((pipeline, bind_group, groups, label))
            return
        b = _Batch(self, False)
        b.items.append((pipeline, bind_group, groups, label))
        b.submit()

    def wait(self) -> None:
        """Block until the GPU has finished all submitted work."""
        # wgpu-py 0.32's on_submitted_work_done is broken (a cffi callback type mismatch); mapping
        # a buffer after a copy waits for everything submitted before it just as well.
        if self._fence is None:
            self._fence = self.create_buffer(16, "dmlwgsl.fence")
        self.read(self._fence, 0, 4)


#: WGSL language features a plan may need, each with a probe shader that uses it.
_WGSL_PROBES = {
    "packed_4x8_integer_dot_product": (
        "@group(0) @binding(0) var<storage, read_write> o: array<i32>;\n"
        "@compute @workgroup_size(1) fn main() { o[0] = dot4I8Packed(u32(o[1]), u32(o[2])) "
        "+ i32(dot4U8Packed(u32(o[1]), u32(o[2]))); }"
    ),
}


def probe_wgsl_features(device: Device) -> list[str]:
    """The WGSL language features of :data:`_WGSL_PROBES` that ``device`` compiles (a pipeline is
    built for each, once per device)."""
    found = getattr(device, "_wgsl_features", None)
    if found is None:
        found = []
        for name, code in _WGSL_PROBES.items():
            try:
                module = device.device.create_shader_module(code=code, label=f"dmlwgsl.probe.{name}")
                device.device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
                found.append(name)
            except Exception:
                pass
        device._wgsl_features = found
    return list(found)


class _Batch:
    """Dispatches recorded together; see :meth:`Device.batch`."""

    def __init__(self, device: Device, timestamps: bool):
        self.device = device
        self.items: list = []
        self.timestamps = timestamps
        self.gpu_times_ns: list[float] = []
        if timestamps and not device.has_timestamps:
            raise RuntimeError(f"{device.name} has no timestamp-query feature")

    def submit(self) -> None:
        dev = self.device
        items, self.items = self.items, []
        if not items:
            return
        enc = dev.device.create_command_encoder(label="dmlwgsl.batch")
        if not self.timestamps:
            cp = enc.begin_compute_pass(label="dmlwgsl")
            last_pipe = last_bg = None
            for pipe, bg, g, _ in items:
                # Each wgpu call costs microseconds of host time: skip the ones that change nothing.
                if pipe is not last_pipe:
                    cp.set_pipeline(pipe)
                    last_pipe = pipe
                if bg is not last_bg:
                    cp.set_bind_group(0, bg)
                    last_bg = bg
                cp.dispatch_workgroups(*g)
            cp.end()
            dev.queue.submit([enc.finish()])
            return
        n = len(items)
        qs = dev.device.create_query_set(type=wgpu.QueryType.timestamp, count=2 * n)
        for i, (pipe, bg, g, label) in enumerate(items):
            cp = enc.begin_compute_pass(
                label=label,
                timestamp_writes={
                    "query_set": qs,
                    "beginning_of_pass_write_index": 2 * i,
                    "end_of_pass_write_index": 2 * i + 1,
                },
            )
            cp.set_pipeline(pipe)
            cp.set_bind_group(0, bg)
            cp.dispatch_workgroups(*g)
            cp.end()
        qbuf = dev.device.create_buffer(size=16 * n, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        enc.resolve_query_set(qs, 0, 2 * n, qbuf, 0)
        dev.queue.submit([enc.finish()])
        ts = np.frombuffer(dev.read(qbuf, 0, 16 * n), dtype=np.uint64).astype(np.float64)
        # WebGPU resolves timestamps in nanoseconds.
        self.gpu_times_ns = list(ts[1::2] - ts[0::2])
        qbuf.destroy()
        qs.destroy()


_default: Device | None = None


def default_device() -> Device:
    """The process-wide device used by the numpy one-liners (honours DMLWGSL_BACKEND/ADAPTER)."""
    global _default
    if _default is None:
        _default = Device(
            backend=os.environ.get("DMLWGSL_BACKEND") or None, adapter=os.environ.get("DMLWGSL_ADAPTER") or None
        )
    return _default


def set_default_device(device: Device | None) -> None:
    """Replace the device used by the numpy one-liners (None = choose again on next use)."""
    global _default
    _default = device


# ------------------------------------------------------------------------------------------------
# GPU tensors
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class GpuTensor:
    """A :class:`TensorDesc` bound to a wgpu buffer at a byte offset.

    The offset must be a multiple of the element size (DirectML requires 16; dmlwgsl accepts any
    element-aligned offset, so an output can be a window into a bigger buffer). An op's output
    tensor can be the next op's input with no readback.
    """

    device: Device
    desc: TensorDesc
    buffer: object
    offset: int = 0

    def check(self, name: str) -> None:
        """Validate the binding: offset alignment and the range inside the buffer."""
        esize = max(1, self.desc.data_type.size_in_bits // 8)
        if self.offset < 0 or self.offset % esize:
            raise DmlValidationError(
                f"{name}.offset: must be a non-negative multiple of the element size {esize}; got {self.offset}"
            )
        a = self.desc.guaranteed_base_offset_alignment
        if a and self.offset % a:
            raise DmlValidationError(
                f"{name}.offset: must be a multiple of guaranteed_base_offset_alignment {a}; got {self.offset}"
            )
        end = self.offset + self.desc.total_tensor_size_in_bytes
        if end > self.buffer.size:
            raise DmlValidationError(
                f"{name}: offset {self.offset} + total_tensor_size_in_bytes {self.desc.total_tensor_size_in_bytes} "
                f"lies beyond the bound buffer ({self.buffer.size} bytes)"
            )

    def numpy(self) -> np.ndarray:
        """Read the tensor back as a new packed numpy array (strides honoured)."""
        d = self.desc
        raw = self.device.read(self.buffer, self.offset, d.implied_size_in_bytes)
        dt = d.data_type.numpy_dtype
        flat = np.frombuffer(raw, dtype=np.uint8)[: (len(raw) // dt.itemsize) * dt.itemsize].view(dt)
        view = np.lib.stride_tricks.as_strided(
            flat, shape=d.sizes, strides=tuple(t * dt.itemsize for t in d.element_strides)
        )
        return np.array(view, copy=True)


# ------------------------------------------------------------------------------------------------
# Kernels
# ------------------------------------------------------------------------------------------------
class Kernel:
    """One compute pipeline of an operator and the way tensors bind to it.

    ``bindings`` maps tensor names to binding numbers; ``uniform_binding`` receives the bytes that
    the op's pack function returns. Structure (shader, entry point, constants) is the cache key.
    """

    def __init__(
        self,
        device: Device,
        *,
        op: str,
        shader: str,
        entry_point: str,
        bindings: Mapping[str, int | str],
        uniform_binding: int | str,
        constants: Mapping[str, float] | None = None,
        workgroup_size: int = 256,
        vec4_bindings: frozenset = frozenset(),
        outputs: tuple[str, ...] = ("output",),
    ):
        from .shader import interface

        self.device = device
        self.op = op
        # A binding given by its WGSL variable name takes its number from the file's @binding.
        iface = interface(shader)
        self.bindings = {n: (iface.binding(b) if isinstance(b, str) else b) for n, b in bindings.items()}
        self.uniform_layout = iface.uniform_layout(uniform_binding) if isinstance(uniform_binding, str) else None
        self.uniform_binding = iface.binding(uniform_binding) if isinstance(uniform_binding, str) else uniform_binding
        self.workgroup_size = workgroup_size
        self.vec4_bindings = vec4_bindings
        self.outputs = outputs
        consts = dict(constants or {})
        consts.setdefault("WG", workgroup_size)
        self.key = f"{op}/{shader}:{entry_point}" + "".join(f"|{k}={consts[k]:g}" for k in sorted(consts))
        self.pipeline = device.pipeline(self.key, shader, entry_point, consts, op)
        self._layout = self.pipeline.get_bind_group_layout(0)
        self._groups: OrderedDict = OrderedDict()
        self._memo: dict = {}

    def place(self, name: str, t: GpuTensor) -> tuple[int, int, int]:
        """(binding offset, binding size, residual byte offset) for tensor ``t``; the residual goes
        to the shader through the uniforms so any element-aligned offset can be bound."""
        al = self.device.binding_alignment
        start = (t.offset // al) * al
        residual = t.offset - start
        size = (residual + t.desc.total_tensor_size_in_bytes + 15) & ~15
        if start + size > t.buffer.size:
            if name in self.vec4_bindings:
                raise DmlValidationError(f"{name}: vec4 binding needs the buffer padded to 16 bytes")
            size = (residual + t.desc.total_tensor_size_in_bytes + 3) & ~3
        self.device.check_binding_size(self.op, name, size)
        return start, size, residual

    def dispatch(
        self, tensors: Mapping[str, GpuTensor], pack: Callable[[dict], bytes], invocations: int | Callable[[dict], int]
    ) -> None:
        """Bind ``tensors`` (name -> GpuTensor), pack uniforms with the residual byte offsets
        (name -> bytes) and dispatch ``invocations`` threads (a number, or a function of the
        residual offsets). Bind groups are cached per binding, so a repeated call costs a few
        wgpu calls."""
        memo = tuple(map(id, tensors.values()))
        hit = self._memo.get(memo)
        if hit is not None and hit[0] is pack and (hit[4] is invocations or hit[4] == invocations):
            self.device.record(self.pipeline, hit[1], hit[2], self.key)
            return
        asked = invocations
        for o in self.outputs:
            if o in tensors and any(t.buffer is tensors[o].buffer for n, t in tensors.items() if n != o):
                raise DmlValidationError(
                    f"{self.op}: {o} shares a wgpu buffer with another bound tensor; WebGPU forbids a buffer "
                    f"that is both written and read in one dispatch, so use separate buffers"
                )
        places = {n: self.place(n, t) for n, t in tensors.items()}
        key = tuple((n, id(t.buffer), places[n]) for n, t in tensors.items()) + (id(pack),)
        hit = self._groups.get(key)
        if hit is None:
            ubuf = self.device.uniform_buffer(pack({n: p[2] for n, p in places.items()}), f"{self.key}.uniforms")
            entries = [{"binding": self.uniform_binding, "resource": {"buffer": ubuf, "offset": 0, "size": ubuf.size}}]
            for n, t in tensors.items():
                start, size, _ = places[n]
                entries.append(
                    {"binding": self.bindings[n], "resource": {"buffer": t.buffer, "offset": start, "size": size}}
                )
            try:
                bg = self.device.device.create_bind_group(layout=self._layout, entries=entries, label=self.key)
            except Exception as e:
                raise GpuError(f"{self.op}: binding tensors for [{self.key}] failed: {e}") from e
            hit = (bg, ubuf, tuple(t.buffer for t in tensors.values()), pack)
            self._groups[key] = hit
            if len(self._groups) > 32:
                self._groups.popitem(last=False)
        else:
            self._groups.move_to_end(key)
        if callable(invocations):
            invocations = invocations({n: p[2] for n, p in places.items()})
        groups = dispatch_size(invocations, self.workgroup_size)
        # Repeat calls on the same (immutable) GpuTensor objects, uniforms packer and invocation
        # count (or function) skip straight to recording; the memo keeps the tensors alive so
        # their ids stay theirs.
        self._memo[memo] = (pack, hit[0], groups, tuple(tensors.values()), asked)
        if len(self._memo) > 32:
            self._memo.pop(next(iter(self._memo)))
        self.device.record(self.pipeline, hit[0], groups, self.key)

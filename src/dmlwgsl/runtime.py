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

import atexit
import collections
import concurrent.futures
import contextlib
import functools
import importlib.resources
import itertools
import os
import re
import shutil
import sys
import tempfile
import threading
import weakref
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
    "NoAdapterError",
    "DeviceLostError",
    "DestroyedBufferError",
    "AllocationError",
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
_COPY_SRC = wgpu.BufferUsage.COPY_SRC
_OPTIONAL_FEATURES = ("shader-f16", "timestamp-query", "timestamp-query-inside-passes", "subgroup")


class GpuError(RuntimeError):
    """A wgpu error, re-raised with the operator and pipeline cache key that caused it."""


class NoAdapterError(GpuError, ValueError):
    """No wgpu adapter matches what was asked for (or the backend name is unknown); the message
    names what was looked for and what was found, in one line."""

    def __init__(self, message: str, looked_for: str | None = None):
        super().__init__(message)
        self.looked_for = looked_for


class DeviceLostError(GpuError):
    """The wgpu device was destroyed or lost; nothing can run on it any more."""


class DestroyedBufferError(GpuError):
    """A tensor's buffer was destroyed before work using it was submitted (nothing was)."""


class AllocationError(DmlValidationError, MemoryError):
    """A buffer larger than the adapter allows (max-buffer-size), or than its free memory."""


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
def _const_text(v) -> str:
    """An override constant as a pipeline cache key prints it: integers in full, other values exactly."""
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


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

    def __contains__(self, key) -> bool:
        return key in self._items

    def peek(self, key):
        """The cached value for ``key`` (counted as a hit), or None (counted as nothing)."""
        value = self._items.get(key)
        if value is not None:
            self.hits += 1
            self._items.move_to_end(key)
        return value

    def keys(self) -> list[str]:
        """Cached keys, least recently used first."""
        return list(self._items)

    def __len__(self):
        return len(self._items)


# ------------------------------------------------------------------------------------------------
# Adapters
# ------------------------------------------------------------------------------------------------
_adapter_lock = threading.Lock()
_xdg_dir: str | None = None


@contextlib.contextmanager
def _quiet_egl():
    """Let wgpu probe its GL adapter without EGL printing ``error: XDG_RUNTIME_DIR is invalid``.

    Mesa's EGL looks for a Wayland socket under XDG_RUNTIME_DIR whenever wgpu enumerates adapters
    and prints that line when the variable is unset. Where it is unset, point it at a private
    empty directory for the duration of the enumeration (no socket there: EGL falls back quietly)
    and unset it again, so the rest of the process sees its own environment."""
    global _xdg_dir
    if os.environ.get("XDG_RUNTIME_DIR"):
        yield
        return
    if _xdg_dir is None:
        _xdg_dir = tempfile.mkdtemp(prefix="dmlwgsl-xdg-")
        atexit.register(shutil.rmtree, _xdg_dir, True)
    os.environ["XDG_RUNTIME_DIR"] = _xdg_dir
    try:
        yield
    finally:
        os.environ.pop("XDG_RUNTIME_DIR", None)


def list_adapters() -> list:
    """Every wgpu adapter on this machine (under _POLL_LOCK, as a device request is: see there)."""
    with _adapter_lock, _POLL_LOCK, _quiet_egl():
        return list(wgpu.gpu.enumerate_adapters_sync())


_MESA_HINT = (
    "install Mesa's drivers (Debian/Ubuntu: mesa-vulkan-drivers for Vulkan lavapipe, libegl-mesa0 for GL) "
    "or a GPU's Vulkan driver"
)


def _pick_adapter(backend: str | None, adapter: str | None, power_preference: str):
    want = None
    if backend is not None:
        want = _BACKENDS.get(str(backend).lower())
        if want is None:
            raise NoAdapterError(
                f"backend: unknown backend {backend!r} (choose from vulkan, gl, metal, dx12)", looked_for=backend
            )
    if backend is None and adapter is None:
        with _adapter_lock, _POLL_LOCK, _quiet_egl():
            try:
                a = wgpu.gpu.request_adapter_sync(power_preference=power_preference)
            except Exception:
                a = None
        if a is not None:
            return a
    try:
        adapters = list_adapters()
    except Exception as e:  # wgpu-native missing its library, or no instance at all
        raise NoAdapterError(f"no wgpu adapter: enumerating adapters failed ({e}); {_MESA_HINT}") from None
    found = [f"{a.info['device']} ({a.info['backend_type']})" for a in adapters]
    for a in adapters:
        info = a.info
        if want is not None and info["backend_type"] != want:
            continue
        if adapter is not None and str(adapter).lower() not in info["device"].lower():
            continue
        if backend is not None or adapter is not None:
            return a
    looked = ", ".join(f"{k}={v!r}" for k, v in (("backend", backend), ("adapter", adapter)) if v is not None)
    raise NoAdapterError(
        f"no wgpu adapter matches {looked or 'any backend'}; found: {', '.join(found) or 'none'}; {_MESA_HINT}",
        looked_for=looked,
    )


# ------------------------------------------------------------------------------------------------
# Destroyed buffers and lost devices
# ------------------------------------------------------------------------------------------------
# wgpu-native has no query for "destroyed", and submitting work that uses a destroyed buffer (or
# mapping one) aborts the process with a Rust panic. So every buffer and device dmlwgsl touches
# gets a subclass of its wgpu class whose destroy() also leaves a mark that the runtime checks
# before anything is submitted.
_TRACKED: dict[type, type] = {}


#: Held around every queue submission and every release of a tracked wgpu object. The garbage
#: collector releases a dropped object in whatever thread it runs in; a wgpu device released there
#: while another thread submitted to another device aborted the process (lavapipe, the runtime and
#: thread tests run together: 2 runs in 6), so releases wait for submissions and the reverse.
_WGPU_LOCK = threading.RLock()

#: Held by every device's wgpu-py poll thread around each of its polls, and around creating a
#: device: a device requested while another device's poll thread polled aborted the process in
#: wgpu-native (lavapipe and llvmpipe, Mesa 25.0.7, under pytest-xdist: in three cold-cache CI runs
#: in a row, in the first device-creating test after shader compilation). Requesting and listing
#: adapters hold it too: request_adapter_sync while another device's poll thread polled aborted
#: the process the same way (a cold-cache CI run, session 37, tests/test_cli.py's `check`).
_POLL_LOCK = threading.RLock()


def _lock_polls(raw) -> None:
    """Make wgpu-py's poll thread of device ``raw`` hold _POLL_LOCK around each poll (a no-op
    where the wgpu-py version keeps its poll thread elsewhere).

    A poll that has waited for the lock polls only if its device is still live: releasing or
    destroying a device stops its poll thread (wgpu-py swaps the thread's poll function for a no-op
    and joins it for at most a second), and a thread still waiting for the lock after that would
    otherwise poll the released device, which aborted the process in wgpu-native (lavapipe, a
    cold-cache test run under pytest-xdist: the poll thread of a device released by the garbage
    collector got the lock from a thread creating the next device)."""
    poller = getattr(raw, "_poller", None)
    poll = getattr(poller, "_poll_func", None)
    if poll is None:
        return

    def locked(block, poll=poll, poller=poller):
        with _POLL_LOCK:
            if poller._poll_func is locked:  # not stopped while this thread waited
                poll(block)

    poller._poll_func = locked


def _tracked_class(cls: type) -> type:
    sub = _TRACKED.get(cls)
    if sub is None:

        def destroy(self) -> None:
            self._dml_dead = True
            cls.destroy(self)

        def _release(self) -> None:
            with _WGPU_LOCK:
                cls._release(self)

        attrs = {"_dml_dead": False, "destroy": destroy, "_release": _release, "__module__": cls.__module__}
        sub = type(cls.__name__, (cls,), attrs)
        _TRACKED[cls] = sub
        _TRACKED[sub] = sub
    return sub


def _submit_locked(queue, encoder) -> None:
    """queue.submit of the encoder's commands, under _WGPU_LOCK."""
    buf = encoder.finish()
    with _WGPU_LOCK:
        queue.submit([buf])


def _track(obj):
    """Give ``obj`` (a wgpu buffer or device) a destroy() that marks it; returns ``obj``."""
    cls = type(obj)
    if cls not in _TRACKED or _TRACKED[cls] is not cls:
        obj.__class__ = _tracked_class(cls)
    return obj


def _label(buffer) -> str:
    return getattr(buffer, "label", "") or "unlabelled"


# ------------------------------------------------------------------------------------------------
# Pools
# ------------------------------------------------------------------------------------------------
class BufferPool:
    """Free buffers of one usage kept for reuse, by power-of-two size class, with a byte bound.

    ``take(n)`` hands out a buffer of at least ``n`` bytes that only the caller uses until it
    ``give``s it back; buffers past ``keep_bytes`` (or larger than ``largest``) are destroyed on
    return instead of kept, so the pool never grows past its bound."""

    def __init__(self, device: "Device", usage, label: str, *, keep_bytes: int, largest: int, smallest: int = 256):
        self.device = device
        self.usage = usage
        self.label = label
        self.keep_bytes = keep_bytes
        self.largest = largest
        self.smallest = smallest
        self._free: dict[int, list] = {}
        self.kept_bytes = 0
        self.hits = 0
        self.misses = 0

    def size_class(self, n: int) -> int:
        """The buffer size serving a request of ``n`` bytes."""
        return max(self.smallest, 1 << max(0, (int(n) - 1).bit_length()))

    def take(self, n: int):
        """A buffer of at least ``n`` bytes, reused when one is free (call with the device lock held)."""
        if n > self.largest:  # never kept: no rounding up (a power of two could pass max-buffer-size)
            self.misses += 1
            return self.device.create_buffer(n, self.label, usage=self.usage)
        size = self.size_class(n)
        free = self._free.get(size)
        if free:
            self.hits += 1
            self.kept_bytes -= size
            return free.pop()
        self.misses += 1
        return self.device.create_buffer(size, self.label, usage=self.usage)

    def give(self, buffer) -> None:
        """Return a buffer taken from this pool (call with the device lock held)."""
        size = buffer.size
        if buffer._dml_dead:
            return
        if size > self.largest or self.kept_bytes + size > self.keep_bytes or buffer.map_state != "unmapped":
            buffer.destroy()
            return
        self._free.setdefault(size, []).append(buffer)
        self.kept_bytes += size

    def clear(self) -> None:
        """Destroy every kept buffer."""
        for free in self._free.values():
            for b in free:
                b.destroy()
        self._free.clear()
        self.kept_bytes = 0


def _holder_gone(holders: set, returned: collections.deque, buffer, ref) -> None:
    # A weakref callback: it may run in any thread, at any allocation (garbage collection), even
    # inside the pool's own code. So it only touches the holder set and appends to a deque (single
    # C calls under the GIL); the pool looks at the buffer later, under the device lock.
    holders.discard(ref)
    if not holders:
        returned.append(buffer)


class UploadPool:
    """Buffers of :meth:`Device.upload` tensors, kept for the next upload of the same size once
    nothing uses them any more, so that a loop of uploads writes into a kept buffer as raw
    ``write_buffer`` does.

    A pooled buffer is free again only when all of these hold:

    * every :class:`GpuTensor` on it (the uploaded one and any other made on the same buffer, e.g.
      an operator's windows) has been garbage-collected (weak references);
    * no open batch of any thread has recorded it: such a buffer waits for that batch's
      submission. Reusing it after a submission is safe: a later ``write_buffer`` is ordered after
      the work submitted before it on the one queue.

    The caller must not keep the wgpu buffer (``tensor.buffer``) past its tensor. Free buffers are
    kept by exact size up to ``keep_bytes`` in all (the oldest destroyed first)."""

    def __init__(self, device: "Device", *, keep_bytes: int):
        self.device = device
        self.keep_bytes = keep_bytes
        self.kept_bytes = 0
        self.hits = 0
        self.misses = 0
        #: id(buffer) -> weak references to the GpuTensors on it, for every buffer the pool owns.
        self.holders: dict[int, set] = {}
        self.returned: collections.deque = collections.deque()
        self._free: dict[int, list] = {}
        self._order: OrderedDict[int, object] = OrderedDict()  # free buffers, oldest first

    def take(self, nbytes: int, label: str):
        """A buffer of ``nbytes`` (rounded up to 16) that nothing uses (call with the device lock held)."""
        self.drain()
        size = max(16, (int(nbytes) + 15) & ~15)
        free = self._free.get(size)
        while free:
            buf = free.pop()
            del self._order[id(buf)]
            self.kept_bytes -= size
            if self.holders[id(buf)]:  # wrapped again from a kept `.buffer`: leave it to that tensor
                del self.holders[id(buf)]
                continue
            self.hits += 1
            return buf
        self.misses += 1
        buf = self.device.create_buffer(size, label)
        self.holders[id(buf)] = set()
        return buf

    def hold(self, tensor: "GpuTensor", holders: set) -> None:
        """Count ``tensor`` as a user of its (pooled) buffer until it is garbage-collected."""
        holders.add(weakref.ref(tensor, functools.partial(_holder_gone, holders, self.returned, tensor.buffer)))

    def drain(self) -> None:
        """Move the buffers whose last tensor died to the free lists (call with the device lock held)."""
        returned = self.returned
        while returned:
            buf = returned.popleft()
            key = id(buf)
            holders = self.holders.get(key)
            if holders is None or holders or key in self._order:
                continue  # not ours any more, in use again, or already free
            if buf._dml_dead:  # destroyed by its user
                del self.holders[key]
                continue
            batch = self.device._batch_using(buf)
            if batch is not None:
                batch.release.append(buf)  # back in `returned` once that batch is submitted
                continue
            self._free.setdefault(buf.size, []).append(buf)
            self._order[key] = buf
            self.kept_bytes += buf.size
            while self.kept_bytes > self.keep_bytes:
                _, old = self._order.popitem(last=False)
                self._free[old.size].remove(old)
                self.kept_bytes -= old.size
                del self.holders[id(old)]
                old.destroy()

    def clear(self) -> None:
        """Destroy every free buffer (call with the device lock held)."""
        self.drain()
        for key, buf in self._order.items():
            del self.holders[key]
            buf.destroy()
        self._order.clear()
        self._free.clear()
        self.kept_bytes = 0


# ------------------------------------------------------------------------------------------------
# Device
# ------------------------------------------------------------------------------------------------
#: Bytes per staging buffer when a readback is split (several copies in flight overlap the GPU
#: copy of one chunk with the host copy of the previous one).
READ_CHUNK = 32 << 20
#: Staging buffers in flight during a chunked readback.
READ_DEPTH = 3
#: Bytes of free upload buffers a device keeps (:class:`UploadPool`).
UPLOAD_KEEP_BYTES = 1 << 30
#: Default of :attr:`Device.poll_in_thread` (bytes).
POLL_IN_THREAD_BYTES = 4 << 20
#: Bytes per staging buffer of a staged upload (:meth:`Device.write` with copy threads).
WRITE_CHUNK = 32 << 20
#: Staging buffers a staged upload keeps in flight (the GPU copies one while the host fills the next).
WRITE_DEPTH = 3
#: A host copy of at least this many bytes is split over :attr:`Device.copy_threads` threads (and
#: an upload that large is staged). H100 host, 8 threads: a 4 MiB upload staged ran at 0.64x
#: write_buffer and a 4 MiB readback at 0.93x one thread's copy; 16 MiB: 1.34x and 1.93x.
PARALLEL_COPY_BYTES = 16 << 20


def default_copy_threads() -> int:
    """Default of :attr:`Device.copy_threads`: half the CPUs this process may use, at most 8
    (1 on a 2-core machine: there, the GPU of a software adapter runs on the same cores)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(8, cpus // 2))


_COPY_POOL: "tuple[concurrent.futures.ThreadPoolExecutor, int] | None" = None  # (pool, its workers)
_COPY_POOL_LOCK = threading.Lock()


def host_copy(dst: np.ndarray, src: np.ndarray, threads: int) -> None:
    """``dst[:] = src`` for two 1-D uint8 arrays of one size, in ``threads`` slices at once where
    the copy is at least PARALLEL_COPY_BYTES (numpy releases the GIL while it copies). One host
    thread moving hundreds of MiB out of or into mapped staging memory ran at 3-4 GB/s on the
    H100's host (a core's memcpy and the page faults of a new array); eight ran 12-21 GB/s."""
    global _COPY_POOL
    n = dst.size
    if threads <= 1 or n < PARALLEL_COPY_BYTES:
        np.copyto(dst, src)
        return
    step = (-(-n // threads) + 4095) & ~4095
    with _COPY_POOL_LOCK:
        if _COPY_POOL is None or _COPY_POOL[1] < threads - 1:
            workers = max(threads - 1, 7)
            _COPY_POOL = (concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="dmlwgsl-copy"), workers)
        pool = _COPY_POOL[0]
    futures = [pool.submit(np.copyto, dst[a : a + step], src[a : a + step]) for a in range(step, n, step)]
    try:
        np.copyto(dst[:step], src[:step])  # this thread copies the first slice
    finally:
        for f in futures:
            f.result()


_STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST


class Device:
    """A wgpu device plus dmlwgsl's caches. One per adapter is plenty; ops take ``device=``.

    ``backend`` ("vulkan", "gl", "metal", "dx12") and ``adapter`` (substring of the adapter name)
    choose the adapter; by default the high-performance one. The device asks for every optional
    feature dmlwgsl can use (f16, timestamps, subgroups) that the adapter has, and for the
    adapter's largest buffer limits.

    A Device may be used from any number of threads: wgpu calls go through one lock, and a
    :meth:`batch` belongs to the thread that opened it.
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
        try:
            with _POLL_LOCK:
                raw = self.adapter.request_device_sync(required_features=feats, required_limits=limits, label="dmlwgsl")
                _lock_polls(raw)
        except Exception as e:
            name = f"{self.adapter.info.get('device', '?')} ({self.adapter.info.get('backend_type', '?')})"
            raise NoAdapterError(
                f"adapter {name} gives no device: {' '.join(str(e).split())}; {_MESA_HINT}", looked_for=name
            ) from None
        self.device = _track(raw)
        self.queue = self.device.queue
        self.info = dict(self.adapter.info)
        self.features = frozenset(self.device.features)
        self.limits = dict(self.device.limits)
        self.pipelines = PipelineCache()
        #: Compiled operators of the numpy one-liners, by (compile function, description).
        self.operators = PipelineCache(capacity=64)
        #: Wait for mappings of up to this many bytes by polling the device from the waiting
        #: thread (a blocking wgpuDevicePoll) besides wgpu-py's poll thread. bench_host measures
        #: both ways; on the H100 the thread's own poll cut one-shot calls by 5-10 % (small
        #: reads) but a 16 MiB readback ran at 1.3 GB/s against 5.4 through the poll thread alone.
        #: Off on OpenGL: there, a wgpuDevicePoll from this thread beside the poll thread's own
        #: aborted the process now and then (about 1 run in 3 of the runtime tests, on main too).
        self.poll_in_thread = 0 if self.info.get("backend_type") == "OpenGL" else POLL_IN_THREAD_BYTES
        #: Host threads that copy a large upload into, and a large readback out of, mapped staging
        #: memory (see :func:`host_copy`). With more than one, an upload of at least
        #: PARALLEL_COPY_BYTES goes through MAP_WRITE staging buffers of ``write_chunk`` bytes
        #: instead of queue.write_buffer (whose one host copy runs on one thread).
        self.copy_threads = default_copy_threads()
        #: Bytes per staging buffer of a staged upload.
        self.write_chunk = WRITE_CHUNK
        self._write_ring: collections.deque = collections.deque()  # (staging buffer, map promise)
        #: wgpu work issued so far: buffers created, writes, submissions (tests use it to show that
        #: validation fails before any GPU work).
        self.gpu_calls = 0
        self._lock = threading.RLock()
        self._tls = threading.local()
        self._lost: str | None = None
        self._fence = None
        self._live: weakref.WeakSet = weakref.WeakSet()
        self.staging = BufferPool(
            self,
            wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST,
            "dmlwgsl.staging",
            keep_bytes=READ_DEPTH * READ_CHUNK + (16 << 20),
            largest=READ_CHUNK,
            smallest=4096,
        )
        #: Storage buffers of the numpy one-liners (inputs and outputs), reused between calls.
        self.pool = BufferPool(self, _STORAGE, "dmlwgsl.pool", keep_bytes=512 << 20, largest=256 << 20)
        #: Buffers of uploaded tensors, reused by later uploads once the tensors are gone.
        self.uploads = UploadPool(self, keep_bytes=UPLOAD_KEEP_BYTES)
        self._open_batches: set = set()  # every thread's open batch (see UploadPool)
        self._packed_descs: dict = {}  # (dtype, shape) -> packed TensorDesc, for upload

    # -- description ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Adapter name and backend, e.g. 'llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)'."""
        return f"{self.info.get('device', '?')} ({self.info.get('backend_type', '?')})"

    @property
    def driver(self) -> str:
        """The driver's own description, e.g. 'Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)' ('' if it gives
        none): software adapters' speed depends on it, so benchmark reports print it."""
        return str(self.info.get("description") or "")

    @property
    def max_binding_size(self) -> int:
        """Largest storage-buffer binding, in bytes."""
        return int(self.limits["max-storage-buffer-binding-size"])

    @property
    def max_buffer_size(self) -> int:
        """Largest buffer, in bytes (a tensor past the binding limit is bound in windows)."""
        return int(self.limits["max-buffer-size"])

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

    @property
    def is_lost(self) -> bool:
        """Whether the wgpu device was destroyed or lost (nothing can run on it any more)."""
        if self._lost is None and self.device._dml_dead:
            self._lost = "destroyed"
        return self._lost is not None

    def __repr__(self):
        return f"<dmlwgsl.Device {self.name}{' (lost)' if self.is_lost else ''}>"

    def destroy(self) -> None:
        """Destroy the wgpu device: its buffers are freed and every later use raises
        :class:`DeviceLostError` (the default device is created again on the next one-liner)."""
        with self._lock:
            self._lost = "destroyed"
            self.device.destroy()

    def memory(self) -> dict:
        """Live wgpu buffers this device created (not destroyed, still referenced) and their bytes,
        with what the pools keep for reuse."""
        with self._lock:
            self.uploads.drain()
            live = [b for b in list(self._live) if not b._dml_dead]
            return {
                "buffers": len(live),
                "bytes": sum(b.size for b in live),
                "pool_bytes": self.pool.kept_bytes,
                "upload_bytes": self.uploads.kept_bytes,
                "staging_bytes": self.staging.kept_bytes,
                "upload_staging_bytes": sum(stg.size for stg, _ in self._write_ring),
                "operators": len(self.operators),
            }

    # -- errors --------------------------------------------------------------------------------
    def check_alive(self, what: str = "device") -> None:
        """Raise :class:`DeviceLostError` when the device is lost."""
        if self._lost is not None or self.device._dml_dead:
            self._lost = self._lost or "destroyed"
            raise DeviceLostError(
                f"{what}: the wgpu device of {self.name} was lost ({self._lost}); nothing can run on it any more. "
                f"Create a new Device and compile the operator again (the numpy one-liners do so by themselves)"
            )

    def _gpu_error(self, e: Exception, what: str) -> Exception:
        """The dmlwgsl error for a wgpu exception ``e`` raised while doing ``what``."""
        msg = str(e)
        low = msg.lower()
        if "device is lost" in low or "device lost" in low or "parent device is invalid" in low:
            self._lost = self._lost or msg.strip().splitlines()[-1].strip()
            try:
                self.check_alive(what)
            except DeviceLostError as lost:
                return lost
        # wgpu-native on the H100 (Vulkan) says "Not enough memory left" (a validation error).
        oom = ("out of memory", "outofmemory", "not enough memory")
        if isinstance(e, wgpu.GPUOutOfMemoryError) or any(m in low for m in oom):
            return AllocationError(f"{what}: the adapter is out of memory ({self.name}): {' '.join(msg.split())}")
        return GpuError(f"{what}: {' '.join(msg.split())}")

    # -- buffers -------------------------------------------------------------------------------
    def create_buffer(self, size: int, label: str = "dmlwgsl", *, usage=None):
        """A storage buffer of at least ``size`` bytes (rounded up to 16), copyable both ways.

        Raises :class:`AllocationError` past the adapter's max-buffer-size or when the adapter is
        out of memory (the process goes on)."""
        size = max(16, (int(size) + 15) & ~15)
        if size > self.max_buffer_size:
            raise AllocationError(
                f"{label}: {size} bytes exceeds this adapter's max-buffer-size {self.max_buffer_size} ({self.name})"
            )
        if usage is None:
            usage = _STORAGE
        with self._lock:
            self.check_alive(label)
            self.gpu_calls += 1
            try:
                buf = self.device.create_buffer(size=size, usage=usage, label=label)
            except Exception as e:
                raise self._gpu_error(e, f"{label}: allocating {size} bytes") from None
            self._live.add(_track(buf))
        return buf

    def _check_buffers(self, buffers, what: str) -> None:
        for b in buffers:
            if getattr(b, "_dml_dead", False):
                raise DestroyedBufferError(
                    f"{what}: buffer {_label(b)!r} ({b.size} bytes) was destroyed; nothing was submitted"
                )

    def write(self, buffer, offset: int, data, *, pad: bool = False) -> None:
        """Copy host bytes into ``buffer`` at ``offset`` (one host copy, into wgpu's upload area).
        WebGPU writes whole 4-byte words: an unaligned start or end keeps the buffer's own bytes
        around the data (read-modify-write of the edge words), or, with ``pad=True`` and an
        aligned start, zeroes the bytes after the data up to the next word instead. Inside a
        batch, the dispatches recorded before the write run first."""
        try:
            mv = memoryview(data).cast("B")
        except TypeError:  # not C-contiguous
            mv = memoryview(np.ascontiguousarray(np.frombuffer(memoryview(data).tobytes(), np.uint8)))
        n = mv.nbytes
        if not n:
            return
        offset = int(offset)
        if offset < 0 or offset + n > buffer.size:
            raise DmlValidationError(
                f"write: bytes {offset}..{offset + n} lie outside the buffer ({buffer.size} bytes)"
            )
        lead, tail = offset % 4, (offset + n) % 4
        if pad and tail and not lead:
            if offset + n + 4 - tail > buffer.size:
                raise DmlValidationError(
                    f"write: padding bytes {offset}..{offset + n + 4 - tail} pass the buffer's end"
                )
            last = bytearray(4)
            last[:tail] = mv[n - tail :]
            with self._lock:
                if n > tail:
                    self.write(buffer, offset, mv[: n - tail])
                self.write(buffer, offset + n - tail, last)
            return
        with self._lock:
            if self._lost is not None or self.device._dml_dead:
                self.check_alive("write")
            if getattr(buffer, "_dml_dead", False):
                self._check_buffers((buffer,), "write")  # raises, naming the buffer
            b = getattr(self._tls, "batch", None)
            if b is not None and b.items:
                b.submit()  # program order: what the batch recorded before runs first
            self.gpu_calls += 1
            try:
                if lead or tail:
                    start, end = offset - lead, offset + n + ((4 - tail) % 4)
                    old = self.read(buffer, start, end - start)
                    old[lead : lead + n] = mv
                    self.queue.write_buffer(buffer, start, old)
                elif self.copy_threads > 1 and n >= PARALLEL_COPY_BYTES:
                    self._write_staged(buffer, offset, np.frombuffer(mv, np.uint8))
                else:
                    self.queue.write_buffer(buffer, offset, mv)
            except (DeviceLostError, DestroyedBufferError):
                raise
            except Exception as e:
                raise self._gpu_error(e, "write") from None

    def _write_staged(self, buffer, offset: int, src: np.ndarray) -> None:
        """Write ``src`` (whole words, at a word offset) through MAP_WRITE staging buffers:
        copy_threads host threads fill one while the GPU copies the ones before it (call with
        the lock held). Each staging buffer is mapped again once its copy has run."""
        n, chunk = src.size, max(4, self.write_chunk & ~3)
        try:
            for s in range(0, n, chunk):
                size = min(chunk, n - s)
                stg = self._write_staging(chunk)
                view = stg._experimental_get_mapped_range(0, size)
                try:
                    host_copy(np.frombuffer(view, np.uint8), src[s : s + size], self.copy_threads)
                finally:
                    del view
                stg.unmap()
                enc = self.device.create_command_encoder(label="dmlwgsl.upload")
                enc.copy_buffer_to_buffer(stg, 0, buffer, offset + s, size)
                _submit_locked(self.queue, enc)
                self._write_ring.append((stg, stg.map_async("WRITE", 0, stg.size)))
        except BaseException:
            self._drop_write_ring()
            raise

    def _write_staging(self, size: int):
        """A mapped MAP_WRITE staging buffer of ``size`` bytes: a new one while fewer than
        WRITE_DEPTH exist, else the oldest once it is mapped again (its copy has run)."""
        while self._write_ring and (self._write_ring[0][0].size != size or self._write_ring[0][0]._dml_dead):
            self._write_ring.popleft()[0].destroy()  # write_chunk changed, or the device was lost
        if len(self._write_ring) >= WRITE_DEPTH:
            stg, promise = self._write_ring.popleft()
            self._wait_map(promise, size)
            return stg
        self.gpu_calls += 1
        buf = self.device.create_buffer(
            size=size,
            usage=wgpu.BufferUsage.MAP_WRITE | wgpu.BufferUsage.COPY_SRC,
            mapped_at_creation=True,
            label="dmlwgsl.upload_staging",
        )
        return _track(buf)

    def _drop_write_ring(self) -> None:
        """Destroy the staged-upload ring's buffers (after a failed upload)."""
        while self._write_ring:
            stg, _ = self._write_ring.popleft()
            with contextlib.suppress(Exception):
                stg.destroy()

    def copy(self, src, src_offset: int, dst, dst_offset: int, size: int) -> None:
        """Copy ``size`` bytes between buffers on the GPU (offsets and size multiples of 4), in
        program order with the dispatches and writes around it (recorded into an open batch)."""
        if src_offset % 4 or dst_offset % 4 or size % 4:
            raise DmlValidationError(
                f"copy: offsets and size must be multiples of 4; got {src_offset}, {dst_offset}, {size}"
            )
        self._record(("copy", src, int(src_offset), dst, int(dst_offset), int(size)), (src, dst))

    def read_into(self, buffer, offset: int, out) -> None:
        """Read ``out.nbytes`` bytes of ``buffer`` from ``offset`` straight into ``out`` (a
        C-contiguous writable numpy array or buffer): one host copy, from the mapped staging memory.

        Large reads go in chunks of :data:`READ_CHUNK` through up to :data:`READ_DEPTH` staging
        buffers in flight, so the GPU copies a chunk while the host copies the previous one."""
        dst = np.frombuffer(out, np.uint8) if not isinstance(out, np.ndarray) else out.reshape(-1).view(np.uint8)
        n = dst.size
        if not n:
            return
        offset = int(offset)
        if offset < 0 or offset + n > buffer.size:
            raise DmlValidationError(f"read: bytes {offset}..{offset + n} lie outside the buffer ({buffer.size} bytes)")
        start = offset & ~3
        lead = offset - start
        total = (lead + n + 3) & ~3
        with self._lock:
            self.flush()
            self.check_alive("read")
            self._check_buffers((buffer,), "read")
            pieces = [(s, min(READ_CHUNK, total - s)) for s in range(0, total, READ_CHUNK)]
            inflight: collections.deque = collections.deque()
            todo = iter(pieces)
            try:
                for piece in itertools.islice(todo, READ_DEPTH):
                    inflight.append(self._issue_read(buffer, start, piece))
                while inflight:
                    (s, size), stg, promise = inflight.popleft()
                    self._wait_map(promise, size, last=not inflight)
                    view = np.frombuffer(stg.read_mapped(0, size, copy=False), np.uint8)
                    lo, hi = max(s, lead), min(s + size, lead + n)
                    host_copy(dst[lo - lead : hi - lead], view[lo - s : hi - s], self.copy_threads)
                    del view
                    stg.unmap()
                    self.staging.give(stg)
                    piece = next(todo, None)
                    if piece is not None:
                        inflight.append(self._issue_read(buffer, start, piece))
            except BaseException as e:
                for _, stg, promise in inflight:
                    with contextlib.suppress(Exception):
                        promise.sync_wait()
                        stg.unmap()
                    stg.destroy()
                if isinstance(e, (GpuError, DmlValidationError)) or not isinstance(e, Exception):
                    raise
                raise self._gpu_error(e, "read") from None

    def _map_read(self, stg, size: int) -> None:
        """Map ``stg`` for reading once the work submitted before has run. Polling the device from
        this thread (a blocking wgpuDevicePoll) resolves the map without waiting for wgpu-py's poll
        thread to wake up and hand over: measured 5-10 % faster per one-shot call on lavapipe."""
        promise = stg.map_async("READ_NOSYNC", 0, size)
        self._wait_map(promise, size)

    def _wait_map(self, promise, size: int, last: bool = True) -> None:
        # A blocking poll waits for everything submitted: only for the last mapping, and a small one.
        poll = getattr(self.device, "_poll_wait", None) if last and size <= self.poll_in_thread else None
        if poll is not None:
            poll()
        promise.sync_wait()

    def _issue_read(self, buffer, start: int, piece: tuple[int, int]):
        s, size = piece
        stg = self.staging.take(size)
        self.gpu_calls += 1
        enc = self.device.create_command_encoder(label="dmlwgsl.readback")
        enc.copy_buffer_to_buffer(buffer, start + s, stg, 0, size)
        _submit_locked(self.queue, enc)
        # READ_NOSYNC: wgpu-py would otherwise submit an empty command buffer before every map
        # (a workaround for buffers mapped before any submission; ours was just copied into).
        return piece, stg, stg.map_async("READ_NOSYNC", 0, size)

    def read(self, buffer, offset: int = 0, size: int | None = None) -> bytearray:
        """Read bytes back (see :meth:`read_into`); returns a new bytearray."""
        if size is None:
            size = buffer.size - offset
        out = bytearray(int(size))
        if size:
            self.read_into(buffer, offset, out)
        return out

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
        """Copy a numpy array to the GPU: one host copy, from the array's own memory (any view with
        non-negative strides is kept as strides; size-1 axes may have any stride).

        The buffer comes from :attr:`uploads`: once the returned tensor (and every other tensor on
        its buffer) is garbage-collected and no open batch uses it, a later upload of the same
        size writes into it again. Keep the tensor, not just its ``buffer``."""
        a = np.asarray(array)
        if a.flags.c_contiguous and a.size and a.ndim:
            # The common case, repeated in loops: the packed description of (dtype, shape) is
            # immutable, so it is kept (describing an array costs more than a small write).
            key = (a.dtype, a.shape)
            desc = self._packed_descs.get(key)
            if desc is None:
                desc = desc_for_array(a)[0]
                if len(self._packed_descs) >= 64:
                    self._packed_descs.clear()
                self._packed_descs[key] = desc
            span = a.reshape(-1)
        else:
            desc, span = desc_for_array(a)
        with self._lock:
            buf = self.uploads.take(desc.total_tensor_size_in_bytes, label)
            try:
                # A buffer of the pool: the bytes after the data are scratch, so a ragged end is
                # padded with zeroes (no read-modify-write of the last word).
                self.write(buf, 0, span.view(np.uint8), pad=True)
            except BaseException:
                self.uploads.returned.append(buf)  # no tensor was made on it
                raise
            return GpuTensor(self, desc, buf, 0)

    def _batch_using(self, buffer) -> "_Batch | None":
        """An open batch (of any thread) that recorded ``buffer`` and is not submitted yet."""
        if not self._open_batches:
            return None
        for b in list(self._open_batches):
            for bufs in list(b.buffers):
                if buffer in bufs:
                    return b
        return None

    # -- pipelines -----------------------------------------------------------------------------
    def pipeline(self, key: str, shader: str, entry_point: str, constants: Mapping[str, float], op: str):
        """The compute pipeline for ``key`` from the cache, compiling it on a miss."""

        def build():
            code = load_wgsl(shader)
            if os.environ.get("DMLWGSL_DEBUG"):
                print(f"[dmlwgsl] compiling {key}\n{code}", file=sys.stderr)
            self.check_alive(op)
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
                err = self._gpu_error(e, f"{op}: building pipeline [{key}]")
                if isinstance(err, DeviceLostError):
                    raise err from None
                raise GpuError(f"{op}: building pipeline [{key}] failed: {e}") from e
            return pipe

        with self._lock:
            return self.pipelines.get(key, build)

    def uniform_buffer(self, data: bytes, label: str):
        """A uniform buffer holding ``data``."""
        with self._lock:
            self.check_alive(label)
            buf = _track(
                self.device.create_buffer(
                    size=max(16, (len(data) + 15) & ~15),
                    usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST,
                    label=label,
                )
            )
            self._live.add(buf)
            self.queue.write_buffer(buf, 0, data)
        return buf

    # -- submission ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def batch(self, *, timestamps: bool = False):
        """Record every dispatch (and copy) made inside the block by this thread into one command
        buffer, submitted on exit; other threads are not affected. Writes inside the block submit
        what was recorded before them first, so everything takes effect in program order.

        With ``timestamps=True`` each dispatch gets its own timed compute pass; the yielded batch's
        ``gpu_times_ns`` holds one GPU duration per dispatch after the block (needs the
        timestamp-query feature). With ``timestamps="run"`` the batch is cut into runs by
        ``b.end_run()``, and each run's dispatches share one compute pass, as an untimed batch
        records them, timed from its first dispatch's start to its last one's end:
        ``gpu_times_ns`` holds one duration per run. Nested batches join the outer one.
        """
        tls = self._tls
        outer = getattr(tls, "batch", None)
        if outer is not None:
            yield outer
            return
        b = _Batch(self, timestamps)
        tls.batch = b
        self._open_batches.add(b)
        try:
            try:
                yield b
            except BaseException:
                tls.batch = None
                b.drop()
                raise
            tls.batch = None
            with self._lock:
                b.submit()
        finally:
            self._open_batches.discard(b)

    def flush(self) -> None:
        """Nothing to do unless called inside this thread's batch: then reading back would see
        stale data, so it raises."""
        b = getattr(self._tls, "batch", None)
        if b is not None and b.items:
            raise RuntimeError("read back after the batch ends: dispatches recorded in it have not run yet")

    def _begin_private_batch(self) -> "_Batch | None":
        """Open a batch of the calling code's own (a one-liner's; call with the lock held): what
        this thread's open batch recorded is submitted first (program order). Returns that batch,
        for :meth:`_end_private_batch` to restore."""
        tls = self._tls
        outer = getattr(tls, "batch", None)
        if outer is not None:
            outer.submit()
        tls.batch = _Batch(self, False)
        return outer

    def _end_private_batch(self, outer: "_Batch | None") -> None:
        self._tls.batch = outer

    def _read_in_batch(self, batch: "_Batch", buffer, offset: int, out: np.ndarray) -> None:
        """Add the copy of ``out.nbytes`` bytes of ``buffer`` (from a 4-aligned ``offset``) into a
        pooled staging buffer to ``batch``, submit it, and copy the mapped bytes into ``out`` once."""
        dst = out.reshape(-1).view(np.uint8)
        n = dst.size
        size = (n + 3) & ~3
        stg = self.staging.take(size)
        batch.items.append(("copy", buffer, int(offset), stg, 0, size))
        batch.buffers.append((buffer,))
        try:
            batch.submit()
            self._map_read(stg, size)
            dst[:] = np.frombuffer(stg.read_mapped(0, size, copy=False), np.uint8)[:n]
            stg.unmap()
        except BaseException as e:
            if stg.map_state == "mapped":
                stg.unmap()
            stg.destroy()
            if isinstance(e, (GpuError, DmlValidationError)) or not isinstance(e, Exception):
                raise
            raise self._gpu_error(e, "read") from None
        self.staging.give(stg)

    def _flush_for_order(self) -> None:
        b = getattr(self._tls, "batch", None)
        if b is not None and b.items:
            b.submit()

    def record(self, pipeline, bind_group, groups, label: str, buffers: tuple = ()) -> None:
        """Run one dispatch now, or add it to this thread's open batch. ``buffers``: the buffers
        it binds, checked (not destroyed) before submission."""
        self._record((pipeline, bind_group, groups, label), buffers)

    def _record(self, item: tuple, buffers: tuple) -> None:
        self.record_items((item,), buffers)

    def record_items(self, items: tuple, buffers: tuple) -> None:
        """Record several items (from :meth:`Kernel.resolve`) at once: one thread-local look-up
        and no lock inside a batch, one lock and one submission outside. ``buffers``: every
        buffer they bind (one tuple; the same tuple object each repeat is kept once)."""
        b = getattr(self._tls, "batch", None)
        if b is not None:
            b.add(items, buffers)
            return
        b = _Batch(self, False)
        b.add(items, buffers)
        with self._lock:
            b.submit()

    def wait(self) -> None:
        """Block until the GPU has finished all submitted work."""
        # wgpu-py 0.32's on_submitted_work_done is broken (a cffi callback type mismatch); mapping
        # a buffer after a copy waits for everything submitted before it just as well.
        with self._lock:
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


# wgpu-py wraps every native call in an error-capture proxy (about 1 us a call, 3 for
# set_bind_group). Pass commands record into the pass; wgpu-core defers any error in them to end() /
# finish(), which still go through wgpu-py's checked calls, so the batch loop may call the native
# functions directly. The batch keeps every pipeline and bind group it recorded alive until the
# command buffer is submitted (wgpu-core holds its own references from then on), which is what
# wgpu-py's set_bind_group keep-alive is for.
class _NativePass:
    def __init__(self, lib, ffi):
        self.set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        self.set_bind_group = lib.wgpuComputePassEncoderSetBindGroup
        self.dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self.null = ffi.NULL


try:
    from wgpu.backends.wgpu_native import _api as _native_api

    _RAW = _NativePass(_native_api.lib, _native_api.ffi)
    _NATIVE_PASS = _native_api.GPUComputePassEncoder
except (ImportError, AttributeError):  # another wgpu-py backend or version: the checked calls
    _RAW = _NATIVE_PASS = None


#: Marks the end of a run in a ``timestamps="run"`` batch's items.
_RUN_END = ("run",)


def _timed_spans(items: list, whole_runs: bool) -> list[tuple[bool, list]]:
    """The spans of a timestamps batch, in order: (timed, segments), a segment being a list of
    dispatches that share one compute pass or a copy item (a tuple). One timed span per dispatch,
    copies untimed between them; or (``whole_runs``) one timed span per run, its consecutive
    dispatches in one pass, with an empty pass at either end that is a copy to carry the
    timestamp there."""
    if not whole_runs:
        return [(True, [[item]]) if len(item) == 4 else (False, [item]) for item in items]
    spans, segs = [], []
    for item in items + [_RUN_END]:
        if item is _RUN_END:
            if segs:
                if type(segs[0]) is not list:
                    segs.insert(0, [])
                if type(segs[-1]) is not list:
                    segs.append([])
                spans.append((True, segs))
            segs = []
        elif len(item) != 4:
            segs.append(item)
        elif segs and type(segs[-1]) is list:
            segs[-1].append(item)
        else:
            segs.append([item])
    return spans


class _Batch:
    """Dispatches and copies recorded together, in issue order; see :meth:`Device.batch`."""

    def __init__(self, device: Device, timestamps: bool):
        self.device = device
        self.items: list = []
        self.buffers: list = []  # the buffers of the items (each distinct tuple at least once)
        self.last_buffers = None
        #: Upload buffers freed while this batch had them recorded: free again after submission.
        self.release: list = []
        self.timestamps = timestamps
        self.gpu_times_ns: list[float] = []
        #: Dispatches submitted by a timestamps batch (a check that the timed runs ran what they should).
        self.timed_dispatches = 0
        if timestamps and not device.has_timestamps:
            raise RuntimeError(f"{device.name} has no timestamp-query feature")

    def end_run(self) -> None:
        """Close the run recorded since the last call (``timestamps="run"`` batches; a no-op for
        the others): its dispatches get one timed span."""
        if self.timestamps == "run" and self.items and self.items[-1] is not _RUN_END:
            self.items.append(_RUN_END)

    def add(self, items: tuple, buffers: tuple) -> None:
        """Append recorded ``items`` and the tuple of ``buffers`` they bind (a repeat call's tuple,
        the same object again, is kept once)."""
        self.items.extend(items)
        if buffers is not self.last_buffers:
            self.buffers.append(buffers)
            self.last_buffers = buffers

    def _check(self, items, buffers) -> None:
        dev = self.device
        dev.check_alive(items[0][-1] if len(items[0]) == 4 else "copy")
        for bufs in {id(bufs): bufs for bufs in buffers}.values():
            for b in bufs:
                if getattr(b, "_dml_dead", False):
                    raise DestroyedBufferError(
                        f"batch: buffer {_label(b)!r} ({b.size} bytes) was destroyed before the work using it "
                        f"was submitted; nothing was submitted"
                    )

    def drop(self) -> None:
        """Forget what was recorded, submitting nothing (the block raised)."""
        self.items, self.buffers, self.last_buffers = [], [], None
        self._release()

    def _release(self) -> None:
        if self.release:
            self.device.uploads.returned.extend(self.release)
            self.release = []

    def submit(self) -> None:
        """Encode and submit what was recorded (call with the device lock held)."""
        try:
            self._submit()
        finally:
            self._release()  # submitted, or dropped by an error: nothing will run later on them

    def _submit(self) -> None:
        dev = self.device
        items, self.items = self.items, []
        buffers, self.buffers = self.buffers, []
        self.last_buffers = None
        if not items:
            return
        self._check(items, buffers)
        dev.gpu_calls += 1
        try:
            enc = dev.device.create_command_encoder(label="dmlwgsl.batch")
            if not self.timestamps:
                cp = prev = handle = dispatch = None
                gx = gy = gz = 0
                for item in items:
                    if item is prev:  # a repeat call's kept item: the same dispatch again
                        dispatch(handle, gx, gy, gz)
                        continue
                    if len(item) != 4:  # ("copy", src, src_offset, dst, dst_offset, size)
                        prev = None
                        if cp is not None:
                            cp.end()
                            cp = None
                        enc.copy_buffer_to_buffer(*item[1:])
                        continue
                    prev = item
                    pipe, bg, (gx, gy, gz), _ = item
                    if cp is None:
                        cp = enc.begin_compute_pass(label="dmlwgsl")
                        last_pipe = last_bg = None
                        if _RAW is not None and type(cp) is _NATIVE_PASS:
                            handle, dispatch = cp._internal, _RAW.dispatch
                            set_pipeline, set_bind_group = _RAW.set_pipeline, _RAW.set_bind_group
                        else:  # the checked calls, in the same shape
                            handle, dispatch = cp, type(cp).dispatch_workgroups
                            set_pipeline = set_bind_group = None
                    # Each wgpu call costs host time: skip the ones that change nothing, and call the
                    # native functions directly (see _RAW).
                    if pipe is not last_pipe:
                        if set_pipeline is not None:
                            set_pipeline(handle, pipe._internal)
                        else:
                            cp.set_pipeline(pipe)
                        last_pipe = pipe
                    if bg is not last_bg:
                        if set_bind_group is not None:
                            set_bind_group(handle, 0, bg._internal, 0, _RAW.null)
                        else:
                            cp.set_bind_group(0, bg)
                        last_bg = bg
                    dispatch(handle, gx, gy, gz)
                if cp is not None:
                    cp.end()
                _submit_locked(dev.queue, enc)
                return
            spans = _timed_spans(items, self.timestamps == "run")
            n = sum(timed for timed, _ in spans)
            self.timed_dispatches += sum(1 for item in items if len(item) == 4)
            qs = dev.device.create_query_set(type=wgpu.QueryType.timestamp, count=2 * max(n, 1))
            i = 0
            for timed, segs in spans:
                last = len(segs) - 1
                for j, seg in enumerate(segs):
                    if type(seg) is not list:  # ("copy", src, src_offset, dst, dst_offset, size)
                        enc.copy_buffer_to_buffer(*seg[1:])
                        continue
                    writes = {"query_set": qs}
                    if timed and j == 0:
                        writes["beginning_of_pass_write_index"] = 2 * i
                    if timed and j == last:
                        writes["end_of_pass_write_index"] = 2 * i + 1
                    cp = enc.begin_compute_pass(
                        label=seg[0][3] if seg else "dmlwgsl.timestamp",
                        timestamp_writes=writes if len(writes) > 1 else None,
                    )
                    for pipe, bg, g, _label in seg:
                        cp.set_pipeline(pipe)
                        cp.set_bind_group(0, bg)
                        cp.dispatch_workgroups(*g)
                    cp.end()
                i += timed
            if not n:
                _submit_locked(dev.queue, enc)
                qs.destroy()
                return
            qbuf = dev.create_buffer(16 * n, "dmlwgsl.timestamps", usage=wgpu.BufferUsage.QUERY_RESOLVE | _COPY_SRC)
            enc.resolve_query_set(qs, 0, 2 * n, qbuf, 0)
            _submit_locked(dev.queue, enc)
        except (GpuError, DmlValidationError):
            raise
        except Exception as e:
            raise dev._gpu_error(e, "submit") from None
        ts = np.empty(2 * n, dtype=np.uint64)
        dev.read_into(qbuf, 0, ts)
        # WebGPU resolves timestamps in nanoseconds.
        ts = ts.astype(np.float64)
        self.gpu_times_ns.extend(ts[1::2] - ts[0::2])
        qbuf.destroy()
        qs.destroy()


_default: Device | None = None
_default_lock = threading.Lock()


def default_device() -> Device:
    """The process-wide device used by the numpy one-liners (honours DMLWGSL_BACKEND/ADAPTER).
    A lost default device is replaced by a new one on the next call."""
    global _default
    d = _default
    if d is not None and not d.is_lost:
        return d
    with _default_lock:
        if _default is None or _default.is_lost:
            _default = Device(
                backend=os.environ.get("DMLWGSL_BACKEND") or None, adapter=os.environ.get("DMLWGSL_ADAPTER") or None
            )
        return _default


def current_default_device() -> Device | None:
    """The default device if one exists and is not lost (None otherwise; creates nothing)."""
    d = _default
    return d if d is not None and not d.is_lost else None


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

    def __post_init__(self):
        if not isinstance(self.device, Device):
            raise TypeError(f"GpuTensor.device: must be a dmlwgsl.Device; got {type(self.device).__name__}")
        if not isinstance(self.desc, TensorDesc):
            raise TypeError(f"GpuTensor.desc: must be a dmlwgsl.TensorDesc; got {type(self.desc).__name__}")
        if not isinstance(self.buffer, wgpu.GPUBuffer):
            raise TypeError(f"GpuTensor.buffer: must be a wgpu.GPUBuffer; got {type(self.buffer).__name__}")
        _track(self.buffer)  # a buffer made outside dmlwgsl: notice its destroy() from now on
        uploads = self.device.uploads
        holders = uploads.holders.get(id(self.buffer))
        if holders is not None:  # a pooled upload buffer: not free while this tensor lives
            uploads.hold(self, holders)

    #: Set once :meth:`check` passed: the fields are immutable, so only the buffer's destruction
    #: can change the answer (repeat calls on resident tensors check just that).
    _checked = False

    def check(self, name: str) -> None:
        """Validate the binding: offset alignment and the range inside the buffer."""
        if self._checked:
            if self.buffer._dml_dead:
                raise DestroyedBufferError(f"{name}: its buffer {_label(self.buffer)!r} was destroyed")
            return
        if isinstance(self.offset, bool) or not isinstance(self.offset, (int, np.integer)):
            raise DmlValidationError(f"{name}.offset: must be an integer; got {self.offset!r}")
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
        if self.buffer._dml_dead:
            raise DestroyedBufferError(f"{name}: its buffer {_label(self.buffer)!r} was destroyed")
        object.__setattr__(self, "_checked", True)

    def numpy(self) -> np.ndarray:
        """Read the tensor back as a new packed numpy array (strides honoured). A packed tensor is
        copied once, from the mapped staging memory straight into the returned array."""
        d = self.desc
        dt = d.data_type.numpy_dtype
        if d.is_packed:
            out = np.empty(d.sizes, dt)
            self.device.read_into(self.buffer, self.offset, out)
            return out
        raw = np.empty(-(-d.implied_size_in_bytes // dt.itemsize), dt)
        n = min(raw.nbytes, self.buffer.size - self.offset)
        self.device.read_into(self.buffer, self.offset, raw.view(np.uint8)[:n])
        view = np.lib.stride_tricks.as_strided(
            raw, shape=d.sizes, strides=tuple(t * dt.itemsize for t in d.element_strides)
        )
        return np.array(view, copy=True)


# ------------------------------------------------------------------------------------------------
# Kernels
# ------------------------------------------------------------------------------------------------
def binding_targets(b) -> tuple:
    """The binding(s) one tensor goes to: a number or WGSL variable name, or a tuple of them."""
    return b if isinstance(b, tuple) else (b,)


class Kernel:
    """One compute pipeline of an operator and the way tensors bind to it.

    ``bindings`` maps tensor names to binding numbers or WGSL variable names (a tuple of them binds
    the tensor at each); ``uniform_binding`` receives the bytes that
    the op's pack function returns. Structure (shader, entry point, constants) is the cache key.
    """

    def __init__(
        self,
        device: Device,
        *,
        op: str,
        shader: str,
        entry_point: str,
        bindings: Mapping[str, int | str | tuple],
        uniform_binding: int | str,
        constants: Mapping[str, float] | None = None,
        workgroup_size: int = 256,
        vec4_bindings: frozenset = frozenset(),
        outputs: tuple[str, ...] = ("output",),
    ):
        from .shader import interface

        self.device = device
        self.op = op
        # A binding given by its WGSL variable name takes its number from the file's @binding; a
        # tuple binds the tensor at each of them (one buffer seen as words and as atomics, say).
        iface = interface(shader)
        self.bindings = {
            n: tuple(iface.binding(v) if isinstance(v, str) else v for v in binding_targets(b))
            for n, b in bindings.items()
        }
        self.uniform_layout = iface.uniform_layout(uniform_binding) if isinstance(uniform_binding, str) else None
        self.uniform_binding = iface.binding(uniform_binding) if isinstance(uniform_binding, str) else uniform_binding
        self.workgroup_size = workgroup_size
        self.vec4_bindings = vec4_bindings
        self.outputs = outputs
        consts = dict(constants or {})
        consts.setdefault("WG", workgroup_size)
        # every constant exactly (a :g format would print 218827010 and 218827011 alike)
        self.key = f"{op}/{shader}:{entry_point}" + "".join(f"|{k}={_const_text(consts[k])}" for k in sorted(consts))
        self.pipeline = device.pipeline(self.key, shader, entry_point, consts, op)
        self._layout = self.pipeline.get_bind_group_layout(0)
        self._tls = device._tls
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
        memo = tuple(tensors.values())  # GpuTensor hashes by identity
        try:
            hit = self._memo.get(memo)
        except TypeError:  # not GpuTensors (unhashable): the checks below name them
            hit = memo = None
        if hit is not None and hit[0] is pack and (hit[4] is invocations or hit[4] == invocations):
            b = getattr(self._tls, "batch", None)
            if b is not None:  # Device._record, inlined: this is the repeat-call path of every op
                b.items.append(hit[6])
                if hit[5] is not b.last_buffers:
                    b.buffers.append(hit[5])
                    b.last_buffers = hit[5]
                return
            self.device._record(hit[6], hit[5])
            return
        with self.device._lock:
            item, buffers = self._dispatch_slow(tensors, pack, invocations, memo)
        self.device._record(item, buffers)

    def resolve(
        self, tensors: Mapping[str, GpuTensor], pack: Callable[[dict], bytes], invocations: int | Callable[[dict], int]
    ) -> tuple[tuple, tuple]:
        """What :meth:`dispatch` would record, without recording it: (item, buffers) for
        :meth:`Device.record_items`. The checks and caches of a dispatch run; a caller that keeps
        the result (e.g. an operator's repeat-call shortcut) replays it for the same tensors."""
        memo = tuple(tensors.values())
        try:
            hit = self._memo.get(memo)
        except TypeError:
            hit = memo = None
        if hit is not None and hit[0] is pack and (hit[4] is invocations or hit[4] == invocations):
            return hit[6], hit[5]
        with self.device._lock:
            return self._dispatch_slow(tensors, pack, invocations, memo)

    def _dispatch_slow(self, tensors, pack, invocations, memo) -> tuple[tuple, tuple]:
        asked = invocations
        dev = self.device
        for n, t in tensors.items():
            if not isinstance(t, GpuTensor):
                raise TypeError(f"{self.op}: {n} must be a dmlwgsl.GpuTensor; got {type(t).__name__}")
            if t.device is not dev:
                raise DmlValidationError(
                    f"{self.op}: {n} belongs to another Device ({t.device.name}) than the kernel ({dev.name})"
                )
        dev._check_buffers([t.buffer for t in tensors.values()], self.op)
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
            dev.check_alive(self.op)
            ubuf = dev.uniform_buffer(pack({n: p[2] for n, p in places.items()}), f"{self.key}.uniforms")
            entries = [{"binding": self.uniform_binding, "resource": {"buffer": ubuf, "offset": 0, "size": ubuf.size}}]
            for n, t in tensors.items():
                start, size, _ = places[n]
                for number in self.bindings[n]:
                    entries.append({"binding": number, "resource": {"buffer": t.buffer, "offset": start, "size": size}})
            try:
                bg = dev.device.create_bind_group(layout=self._layout, entries=entries, label=self.key)
            except Exception as e:
                err = dev._gpu_error(e, self.op)
                if isinstance(err, DeviceLostError):
                    raise err from None
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
        # count (or function) skip straight to recording.
        buffers = tuple(t.buffer for t in tensors.values())
        item = (self.pipeline, hit[0], groups, self.key)
        self._memo[memo] = (pack, hit[0], groups, memo, asked, buffers, item)
        if len(self._memo) > 32:
            self._memo.pop(next(iter(self._memo)))
        return item, buffers

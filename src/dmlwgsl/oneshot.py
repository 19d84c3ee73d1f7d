"""The numpy one-liner path, shared by every operator: array -> (description, upload) -> cached
compiled operator -> pooled output -> numpy.

A one-liner builds its operator description from the arrays (numpy strides become DML strides,
no host copy) and calls :func:`run`. Nothing that can be kept is created per call:

* compiled operators live in an LRU on the device, keyed by (compile function, description), so a
  repeated call neither validates nor plans again;
* input and output buffers come from the device's :class:`~dmlwgsl.runtime.BufferPool` (a bound
  on the bytes kept, not a leak), wrapped in GpuTensor objects that are kept too, so operators
  and kernels find their bind groups and uniforms by identity;
* the dispatches and the copy into a pooled staging buffer go into one submission, and the
  result is copied once, from the mapped staging memory into the array returned.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Sequence

import numpy as np

from . import runtime
from .runtime import READ_CHUNK, Device, GpuTensor, default_device
from .tensor import DmlValidationError, TensorDesc, desc_for_array

__all__ = ["OUTPUT", "as_input", "run", "empty_result", "operator"]


class _Output:
    """Marks the output's place among an operator's call arguments."""

    def __repr__(self):
        return "OUTPUT"


#: Stands for the output tensor in :func:`run`'s argument list.
OUTPUT = _Output()
#: GpuTensor wrappers of pooled buffers kept per device (by buffer and description).
_WRAPPERS = 256


def as_input(x, name: str, ranks: str) -> np.ndarray:
    """``x`` as a numpy array a one-liner can describe: big-endian data converted to native byte
    order (as numpy's own operations do); a 0-d array is an error naming ``name`` and the
    ``ranks`` the operator takes."""
    a = np.asarray(x)
    if a.dtype.byteorder not in ("=", "|") and a.dtype.byteorder != _NATIVE:
        a = a.astype(a.dtype.newbyteorder("="))
    if a.ndim == 0:
        raise DmlValidationError(f"{name}: got a 0-d array (a scalar, value {a.item()!r}); this operator needs {ranks}")
    return a


_NATIVE = "<" if np.little_endian else ">"


def empty_result(shape, dtype) -> np.ndarray:
    """The empty result of an operator on an array with a size-0 dimension (no GPU work: numpy
    and torch return an empty array of the right shape where DirectML has no size 0)."""
    return np.empty(tuple(int(s) for s in shape), dtype)


def _span(a: np.ndarray) -> tuple[np.ndarray, TensorDesc | None]:
    """The bytes an input array occupies, and its description when one had to be made (a
    C-contiguous array's is the packed one of its shape and needs none: the operator's has it)."""
    if a.flags.c_contiguous:
        return a.reshape(-1).view(np.uint8), None
    desc, span = desc_for_array(a)
    return span.view(np.uint8), desc


def operator(compile_fn: Callable, desc, device: Device):
    """The compiled operator for ``desc`` from the device's LRU (validating and compiling it on a
    miss; a hit skips both, the cached description being equal)."""
    with device._lock:
        try:
            return device.operators.get((compile_fn, desc), lambda: compile_fn(desc, device=device))
        except TypeError as e:  # an unhashable description: compile it every time
            if "unhashable" not in str(e):
                raise
            return compile_fn(desc, device=device)


def run(compile_fn: Callable, desc, args: Sequence, *, device: Device | None = None) -> np.ndarray:
    """Run ``compile_fn(desc)`` once on numpy arrays and return the output as a new array.

    ``args`` are the operator's call arguments in order: numpy arrays (described exactly as
    ``desc`` describes them, e.g. by :func:`~dmlwgsl.tensor.desc_for_array`), None for an absent
    optional tensor, and :data:`OUTPUT` for the output (``desc.output``). The description is
    validated before any GPU work (and before a default device is made, if none exists yet)."""
    dev = device or runtime.current_default_device()
    op = None
    if isinstance(dev, Device):
        try:
            op = dev.operators.peek((compile_fn, desc))
        except TypeError:  # an unhashable description
            op = None
    if op is None:
        desc.validate()
        dev = dev or default_device()
        op = operator(compile_fn, desc, dev)
    out_desc: TensorDesc = desc.output
    dev._lock.acquire()
    outer = dev._begin_private_batch()
    taken = []
    try:
        spans = []
        for a in args:
            if a is None or a is OUTPUT:
                spans.append(a)
                continue
            span, _ = _span(a)
            buf = dev.pool.take(span.nbytes)
            taken.append(buf)
            dev.write(buf, 0, span, pad=True)  # a pooled buffer: the bytes after the data are scratch
            spans.append(buf)
        out_buf = dev.pool.take(out_desc.total_tensor_size_in_bytes)
        taken.append(out_buf)
        # GpuTensors of pooled buffers are kept per (operator, buffers): the operator's and the
        # kernels' memos then recognise a repeated call by identity and skip all checks.
        cache = dev.__dict__.setdefault("_oneshot_tensors", OrderedDict())
        key = (op, *taken)
        call = cache.get(key)
        if call is None:
            call = []
            for a, item in zip(args, spans):
                if item is None:
                    call.append(None)
                elif item is OUTPUT:
                    call.append(GpuTensor(dev, out_desc, out_buf, 0))
                else:
                    call.append(GpuTensor(dev, desc_for_array(a)[0], item, 0))
            cache[key] = call
            if len(cache) > _WRAPPERS:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
        op(*call)
        result = np.empty(out_desc.sizes, out_desc.data_type.numpy_dtype)
        if out_desc.total_tensor_size_in_bytes <= READ_CHUNK and out_desc.is_packed:
            dev._read_in_batch(dev._tls.batch, out_buf, 0, result)  # the copy joins the dispatches' submission
        else:
            dev._tls.batch.submit()
            # by identity: list.index would compare numpy arrays with ==
            result = call[next(i for i, a in enumerate(args) if a is OUTPUT)].numpy()
        return result
    finally:
        dev._end_private_batch(outer)
        for buf in reversed(taken):  # the next call takes the same buffers: bind groups hit
            dev.pool.give(buf)
        dev._lock.release()

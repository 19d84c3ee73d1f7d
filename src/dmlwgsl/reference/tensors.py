"""Strided tensor access for the references: DML_BUFFER_TENSOR_DESC semantics on numpy bytes."""

from __future__ import annotations

import numpy as np

from ..tensor import TensorDesc


def element_offsets(desc: TensorDesc) -> np.ndarray:
    """Element offset of every logical element, shaped like the tensor: dot(index, strides)."""
    off = np.zeros(desc.sizes, dtype=np.int64)
    for d, (s, t) in enumerate(zip(desc.sizes, desc.element_strides)):
        shape = [1] * desc.rank
        shape[d] = s
        off = off + (np.arange(s, dtype=np.int64) * t).reshape(shape)
    return off


def read_tensor(buf: np.ndarray, desc: TensorDesc, byte_offset: int = 0) -> np.ndarray:
    """The logical array that ``desc`` describes inside the byte buffer ``buf`` (uint8)."""
    dt = desc.data_type.numpy_dtype
    raw = np.asarray(buf, dtype=np.uint8)[byte_offset:]
    flat = raw[: (raw.size // dt.itemsize) * dt.itemsize].view(dt)
    return flat[element_offsets(desc)]


def write_tensor(buf: np.ndarray, desc: TensorDesc, values: np.ndarray, byte_offset: int = 0) -> None:
    """Store ``values`` into the byte buffer ``buf`` (uint8, modified in place) as ``desc`` says;
    bytes that are not elements of the tensor are left as they were."""
    dt = desc.data_type.numpy_dtype
    flat = buf[byte_offset:]
    flat = flat[: (flat.size // dt.itemsize) * dt.itemsize].view(dt)
    flat[element_offsets(desc)] = np.asarray(values, dtype=dt).reshape(desc.sizes)


def tensor_bytes(desc: TensorDesc, values) -> np.ndarray:
    """A zeroed byte buffer of ``desc.total_tensor_size_in_bytes`` holding ``values`` where ``desc``
    puts them (the inverse of :func:`read_tensor`)."""
    buf = np.zeros(desc.total_tensor_size_in_bytes, np.uint8)
    write_tensor(buf, desc, np.asarray(values).reshape(desc.sizes))
    return buf


def apply_strided(
    op,
    src: np.ndarray,
    in_desc: TensorDesc,
    dst: np.ndarray,
    out_desc: TensorDesc,
    in_offset: int = 0,
    out_offset: int = 0,
) -> np.ndarray:
    """Run a logical-array reference ``op`` between byte buffers laid out as DML descriptions say:
    read ``in_desc`` from ``src``, write ``op``'s result into ``dst`` (uint8, modified in place and
    returned) where ``out_desc`` puts it, leaving every other byte of ``dst`` as it was."""
    write_tensor(dst, out_desc, op(read_tensor(src, in_desc, in_offset)), out_offset)
    return dst

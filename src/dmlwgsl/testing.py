"""Checking helpers shared by the test suite and ``dmlwgsl check``.

:func:`run_checked` runs an operator on raw input bytes with its output in a poisoned buffer
between guard bands, twice with two different poisons, and checks that every element matches the
expected values, that no byte outside the output's elements changed (guards, gaps between strided
elements), and so that no element was left unwritten (an unwritten element keeps the poison, and
no value equals both poisons).
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from .reference.tensors import element_offsets, read_tensor
from .runtime import Device, GpuTensor
from .tensor import DataType, TensorDesc, packed_strides

__all__ = ["assert_matches", "run_checked", "strided_desc", "random_bytes", "STRIDE_PATTERNS", "GUARD"]

#: Bytes of guard band before and after every output tensor.
GUARD = 64
POISONS = (0xA5, 0x5A)
#: Layouts the property tests sweep: packed, channels-last through strides, padded strides,
#: a 0-stride broadcast (inputs only) and a window into a bigger tensor.
STRIDE_PATTERNS = ("packed", "nhwc", "padded", "broadcast", "window")


def assert_matches(
    actual: np.ndarray,
    expected: np.ndarray,
    *,
    atol: float = 0.0,
    rtol: float = 0.0,
    why: str | None = None,
    what: str = "output",
) -> None:
    """Shape, then dtype, then values. Exact (bit patterns, so NaNs compare) unless a tolerance is
    given, and a tolerance must come with ``why`` it is justified."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"{what}: shape {actual.shape} != expected {expected.shape}")
    if actual.dtype != expected.dtype:
        raise AssertionError(f"{what}: dtype {actual.dtype} != expected {expected.dtype}")
    if atol == 0 and rtol == 0:
        a = actual.reshape(-1).view(np.uint8).reshape(actual.size, -1) if actual.size else actual
        e = expected.reshape(-1).view(np.uint8).reshape(expected.size, -1) if expected.size else expected
        bad = np.nonzero(np.any(a != e, axis=-1))[0] if actual.size else []
        if len(bad):
            i = np.unravel_index(bad[0], actual.shape)
            raise AssertionError(
                f"{what}: {len(bad)} of {actual.size} elements differ; first at {i}: "
                f"got {actual[i]!r}, expected {expected[i]!r}"
            )
        return
    if not why:
        raise ValueError("assert_matches: a tolerance needs a stated reason (why=...)")
    a64, e64 = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, settled by the equality below
        ok = np.abs(a64 - e64) <= atol + rtol * np.abs(e64)
    ok |= np.isnan(a64) & np.isnan(e64)
    ok |= a64 == e64  # equal infinities (their difference is NaN)
    if not ok.all():
        bad = np.argwhere(~ok)
        i = tuple(bad[0])
        raise AssertionError(
            f"{what}: {len(bad)} of {actual.size} elements outside atol={atol} rtol={rtol} "
            f"({why}); first at {i}: got {actual[i]!r}, expected {expected[i]!r}"
        )


def strided_desc(data_type, sizes, pattern: str, *, output: bool = False) -> TensorDesc:
    """A description of ``sizes`` in one of :data:`STRIDE_PATTERNS` (deterministic)."""
    sizes = tuple(int(s) for s in sizes)
    r = len(sizes)
    if pattern == "packed":
        return TensorDesc(data_type, sizes)
    if pattern == "nhwc":
        # channels last: C (dim 1) fastest, then the rest in order (rank >= 3), else reversed
        order = [0] + list(range(2, r)) + [1] if r >= 3 else list(reversed(range(r)))
        strides = [0] * r
        acc = 1
        for d in reversed(order):
            strides[d] = acc
            acc *= sizes[d]
        return TensorDesc(data_type, sizes, tuple(strides))
    if pattern == "padded":
        strides, acc = [0] * r, 1
        for d in reversed(range(r)):
            strides[d] = acc
            acc = acc * sizes[d] + (d % 2) + 1  # odd gaps so that rows do not stay word aligned
        return TensorDesc(data_type, sizes, tuple(strides))
    if pattern == "broadcast":
        if output:
            raise ValueError("an output cannot broadcast")
        strides = list(packed_strides(sizes))
        d = max(range(r), key=lambda k: (sizes[k] > 1, -k))  # outermost dimension with size > 1
        strides[d] = 0
        return TensorDesc(data_type, sizes, tuple(strides))
    if pattern == "window":
        big = tuple(s + 2 for s in sizes)
        return TensorDesc(data_type, sizes, packed_strides(big))
    raise ValueError(f"unknown stride pattern {pattern!r}")


def random_bytes(desc: TensorDesc, rng: np.random.Generator) -> np.ndarray:
    """Random bytes filling ``desc.total_tensor_size_in_bytes``; the logical values are whatever
    the description reads from them (so broadcast inputs stay consistent)."""
    return rng.integers(0, 256, size=desc.total_tensor_size_in_bytes, dtype=np.uint8)


def _element_byte_mask(desc: TensorDesc, region: int) -> np.ndarray:
    mask = np.zeros(region, dtype=bool)
    esize = desc.data_type.size_in_bytes
    offs = element_offsets(desc).reshape(-1) * esize
    for k in range(esize):
        mask[offs + k] = True
    return mask


def run_checked(
    device: Device,
    run: Callable[[Mapping[str, GpuTensor | None], GpuTensor], object],
    inputs: Mapping[str, tuple[TensorDesc, np.ndarray] | None],
    output: TensorDesc,
    expected: np.ndarray,
    *,
    atol: float = 0.0,
    rtol: float = 0.0,
    why: str | None = None,
    input_offset: int = 16,
    output_offset: int = GUARD,
) -> np.ndarray:
    """Run ``run(gpu_inputs, gpu_output)`` under poison and guards; return the output read back.

    ``inputs`` maps names to (description, raw bytes) or None for an absent optional tensor.
    Inputs are placed ``input_offset`` bytes into their buffers and the output ``output_offset``
    bytes into its buffer, after a guard band of poison; both runs must write exactly the
    elements of ``output`` and leave every other byte of the buffer as it was, and leave every
    byte of the input buffers (data and guards) as it was.
    """
    region = output.total_tensor_size_in_bytes
    total = output_offset + region + GUARD
    mask = _element_byte_mask(output, region)
    result = None
    for poison in POISONS:
        gins = {}
        images = {}
        for name, item in inputs.items():
            if item is None:
                gins[name] = None
                continue
            desc, raw = item
            raw = np.ascontiguousarray(raw, dtype=np.uint8)
            image = np.full(input_offset + len(raw) + GUARD, poison, np.uint8)
            image[input_offset : input_offset + len(raw)] = raw
            buf = device.create_buffer(image.size, name)
            device.write(buf, 0, image)
            gins[name] = GpuTensor(device, desc, buf, input_offset)
            images[name] = image
        obuf = device.create_buffer(total, "output")
        device.fill(obuf, bytes([poison]))
        run(gins, GpuTensor(device, output, obuf, output_offset))
        for name, image in images.items():  # inputs (and the bytes around them) unmodified
            now = np.frombuffer(device.read(gins[name].buffer, 0, image.size), np.uint8)
            if not np.array_equal(now, image):
                where = int(np.nonzero(now != image)[0][0])
                raise AssertionError(f"input {name!r} changed: byte {where} of its buffer (data at {input_offset})")
        raw = np.frombuffer(device.read(obuf, 0, obuf.size), dtype=np.uint8)
        before, after = raw[:output_offset], raw[output_offset + region :]
        if (before != poison).any() or (after != poison).any():
            where = np.nonzero(np.concatenate([before, after]) != poison)[0][0]
            raise AssertionError(
                f"guard bytes changed (poison 0x{poison:02X}): out-of-bounds write near guard byte {where}"
            )
        inside = raw[output_offset : output_offset + region]
        gaps = inside[~mask]
        if (gaps != poison).any():
            first = int(np.nonzero(~mask)[0][np.nonzero(gaps != poison)[0][0]])
            raise AssertionError(
                f"a byte between output elements changed (offset {first} in the output, poison 0x{poison:02X})"
            )
        got = read_tensor(raw, output, output_offset)
        assert_matches(got, expected, atol=atol, rtol=rtol, why=why)
        result = got
    return result


def dtype_name(dt: DataType) -> str:
    """Short lower-case name for tables and test ids."""
    return DataType.parse(dt).name.lower()

"""DirectML's tensor model: data types and DML_BUFFER_TENSOR_DESC (spec section 1).

Pure Python and numpy; nothing here touches the GPU, so the reference implementations and the
validation code can use it on any machine.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "DataType",
    "DmlEnum",
    "DmlValidationError",
    "TensorDesc",
    "calc_buffer_tensor_size",
    "packed_strides",
    "desc_for_array",
]

#: DirectML's largest element count for one buffer tensor (spec 1.2).
MAX_ELEMENTS = 2**32 - 1


class DmlValidationError(ValueError):
    """A description broke one of DirectML's rules; the message names the field and the rule."""


class DataType(enum.IntEnum):
    """DML_TENSOR_DATA_TYPE, with DirectML's names and numeric values."""

    UNKNOWN = 0
    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11
    UINT4 = 12
    INT4 = 13

    @property
    def size_in_bits(self) -> int:
        """Element size in bits (4 for the 4-bit types, 0 for UNKNOWN)."""
        return _BITS[self]

    @property
    def size_in_bytes(self) -> int:
        """Element size in whole bytes; raises for the 4-bit types, which have none."""
        if self.size_in_bits % 8:
            raise DmlValidationError(f"data_type: {self.name} has no whole-byte element size")
        return self.size_in_bits // 8

    @property
    def numpy_dtype(self) -> np.dtype:
        """The numpy dtype with the same bit layout; raises for types numpy lacks."""
        if self not in _NUMPY:
            raise DmlValidationError(f"data_type: {self.name} has no numpy equivalent")
        return np.dtype(_NUMPY[self])

    @classmethod
    def from_numpy(cls, dtype) -> "DataType":
        """The DataType for a numpy dtype, e.g. ``DataType.from_numpy(np.float16)``."""
        dt = np.dtype(dtype)
        hit = _FROM_NUMPY.get(dt.str)
        if hit is not None:
            return hit
        for k, v in _NUMPY.items():
            if np.dtype(v) == dt:
                return k
        raise DmlValidationError(f"dtype: numpy {dt} has no DirectML data type")

    @classmethod
    def parse(cls, value, field: str = "data_type") -> "DataType":
        """Accept a DataType, its DML name ("FLOAT16", "DML_TENSOR_DATA_TYPE_FLOAT16", any case), its
        ONNX name ("FLOAT", "DOUBLE", "INT8", ...), its DML number, or a numpy dtype or dtype name
        ("float16", np.int8). Anything else raises :class:`DmlValidationError` naming ``field``."""
        if isinstance(value, DataType):
            return value
        if isinstance(value, str):
            v = value.strip().upper().removeprefix("DML_TENSOR_DATA_TYPE_").removeprefix("TENSORPROTO.")
            v = _ONNX_NAMES.get(v, v)
            if v in cls.__members__:
                return cls[v]
        elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            if int(value) in cls._value2member_map_:
                return cls(int(value))
        if value is not None and not isinstance(value, (bool, np.bool_, float, int, np.integer)):
            try:
                dt = np.dtype(value)
            except (TypeError, ValueError):
                dt = None
            if dt is not None:
                for k, v in _NUMPY.items():
                    if np.dtype(v) == dt:
                        return k
        raise DmlValidationError(
            f"{field}: unknown data type {value!r}; use a DataType member or its numpy, ONNX or DML name "
            f"({', '.join(n.lower() for n in cls.__members__ if n != 'UNKNOWN')})"
        )


#: ONNX TensorProto names that differ from DirectML's.
_ONNX_NAMES = {"FLOAT": "FLOAT32", "DOUBLE": "FLOAT64"}

_BITS = {
    DataType.UNKNOWN: 0,
    DataType.FLOAT32: 32,
    DataType.FLOAT16: 16,
    DataType.UINT32: 32,
    DataType.UINT16: 16,
    DataType.UINT8: 8,
    DataType.INT32: 32,
    DataType.INT16: 16,
    DataType.INT8: 8,
    DataType.FLOAT64: 64,
    DataType.UINT64: 64,
    DataType.INT64: 64,
    DataType.UINT4: 4,
    DataType.INT4: 4,
}
_NUMPY = {
    DataType.FLOAT32: "<f4",
    DataType.FLOAT16: "<f2",
    DataType.UINT32: "<u4",
    DataType.UINT16: "<u2",
    DataType.UINT8: "u1",
    DataType.INT32: "<i4",
    DataType.INT16: "<i2",
    DataType.INT8: "i1",
    DataType.FLOAT64: "<f8",
    DataType.UINT64: "<u8",
    DataType.INT64: "<i8",
}


_FROM_NUMPY = {np.dtype(v).str: k for k, v in _NUMPY.items()}


class DmlEnum(enum.IntEnum):
    """Base of dmlwgsl's DirectML enums. :meth:`parse` accepts a member, its number, its name (any
    case, with or without the DML prefix) or one of the class's :meth:`aliases`; anything else
    raises a :class:`DmlValidationError` naming the field."""

    @classmethod
    def aliases(cls) -> dict:
        """Extra accepted strings (upper case) -> member name."""
        return {}

    @classmethod
    def describe(cls) -> tuple[str, str, str]:
        """(field name, noun, what to use instead) for the error message."""
        return (cls.__name__, "value", ", ".join(cls.__members__))

    @classmethod
    def dml_prefix(cls) -> str:
        """The C enum's prefix, e.g. "DML_DEPTH_SPACE_ORDER_"."""
        return ""

    @classmethod
    def parse(cls, value):
        """The member ``value`` names (see the class docstring)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            v = value.strip().upper()
            v = cls.aliases().get(v, v)
            v = v.removeprefix(cls.dml_prefix()) if cls.dml_prefix() else v
            if v in cls.__members__:
                return cls[v]
        elif (
            isinstance(value, (int, np.integer))
            and not isinstance(value, bool)
            and int(value) in cls._value2member_map_
        ):
            return cls(int(value))
        field_name, noun, hint = cls.describe()
        raise DmlValidationError(f"{field_name}: unknown {noun} {value!r}; use {hint}")


def is_integer(value) -> bool:
    """A Python or numpy integer, not a bool (floats are never taken as sizes: 2.7 is no size)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def integer(field: str, value) -> int:
    """``value`` as an int, or a :class:`DmlValidationError` naming ``field``."""
    if not is_integer(value):
        raise DmlValidationError(f"{field}: must be an integer; got {value!r} ({type(value).__name__})")
    return int(value)


def integers(field: str, values) -> tuple[int, ...]:
    """A sequence of integers as a tuple of ints; the error names ``field[i]`` of the first bad one."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise DmlValidationError(f"{field}: must be a sequence of integers; got {values!r}")
    values = tuple(values)
    if all(type(v) is int for v in values):  # the common case, checked fast
        return values
    return tuple(integer(f"{field}[{i}]", v) for i, v in enumerate(values))


def packed_strides(sizes) -> tuple[int, ...]:
    """Row-major element strides (last dimension fastest), as DirectML assumes when Strides is null."""
    out, acc = [], 1
    for s in reversed(tuple(sizes)):
        out.append(acc)
        acc *= int(s)
    return tuple(reversed(out))


def calc_buffer_tensor_size(data_type: DataType, sizes, strides=None) -> int:
    """DMLCalcBufferTensorSize (spec 1.3): minimum implied bytes, rounded up to a multiple of 4."""
    bits = DataType.parse(data_type).size_in_bits
    if bits == 0:
        return 0
    if strides is None:
        n = math.prod(int(s) for s in sizes)
    else:
        n = sum((int(s) - 1) * int(t) for s, t in zip(sizes, strides)) + 1
    return ((n * bits + 7) // 8 + 3) & ~3


@dataclass(frozen=True)
class TensorDesc:
    """DML_BUFFER_TENSOR_DESC: a typed, sized, optionally strided view of a buffer.

    ``strides`` are in elements (None = packed row-major, 0 = broadcast along that dimension).
    ``total_tensor_size_in_bytes`` defaults to :func:`calc_buffer_tensor_size`.
    ``guaranteed_base_offset_alignment`` is 0 (none) or a power of two >= the element size.
    """

    data_type: DataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    total_tensor_size_in_bytes: int | None = None
    guaranteed_base_offset_alignment: int = 0
    flags: int = field(default=0, compare=False)

    def __post_init__(self):
        # Every field is checked (an integer is an int, never a truncated float); the common case,
        # ints in tuples and a DataType, takes the short way: descriptions are built per call.
        setattr_ = object.__setattr__
        if type(self.data_type) is not DataType:
            setattr_(self, "data_type", DataType.parse(self.data_type, "TensorDesc.data_type"))
        sizes = self.sizes
        if type(sizes) is not tuple or not all(type(v) is int for v in sizes):
            sizes = integers("TensorDesc.sizes", sizes)
            setattr_(self, "sizes", sizes)
        strides = self.strides
        if strides is not None and (type(strides) is not tuple or not all(type(v) is int for v in strides)):
            strides = integers("TensorDesc.strides", strides)
            setattr_(self, "strides", strides)
        if type(self.guaranteed_base_offset_alignment) is not int:
            setattr_(
                self,
                "guaranteed_base_offset_alignment",
                integer("TensorDesc.guaranteed_base_offset_alignment", self.guaranteed_base_offset_alignment),
            )
        total = self.total_tensor_size_in_bytes
        if total is None:
            bits = _BITS[self.data_type]
            if bits and (strides is None or len(strides) == len(sizes)):
                if strides is None:
                    n = math.prod(sizes)
                else:
                    n = sum((s - 1) * t for s, t in zip(sizes, strides)) + 1
                total = ((n * bits + 7) // 8 + 3) & ~3  # DMLCalcBufferTensorSize
            else:
                total = 0  # reported by validate()
            setattr_(self, "total_tensor_size_in_bytes", total)
        elif type(total) is not int:
            setattr_(self, "total_tensor_size_in_bytes", integer("TensorDesc.total_tensor_size_in_bytes", total))

    # -- derived -----------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        """DimensionCount."""
        return len(self.sizes)

    @property
    def element_count(self) -> int:
        """Number of logical elements (product of sizes)."""
        return math.prod(self.sizes)

    @property
    def element_strides(self) -> tuple[int, ...]:
        """Strides in elements, with packed strides filled in when none were given."""
        return self.strides if self.strides is not None else packed_strides(self.sizes)

    @property
    def is_packed(self) -> bool:
        """True when the elements lie contiguously in row-major order."""
        if self.strides is None:
            return True
        return all(t == p for s, t, p in zip(self.sizes, self.strides, packed_strides(self.sizes)) if s > 1)

    @property
    def implied_size_in_bytes(self) -> int:
        """DMLCalcBufferTensorSize for this description."""
        return calc_buffer_tensor_size(self.data_type, self.sizes, self.strides)

    def with_sizes(self, sizes) -> "TensorDesc":
        """A packed description of the same data type with other sizes."""
        return TensorDesc(self.data_type, tuple(sizes))

    # -- validation --------------------------------------------------------------------------
    def validate(self, name: str, *, ranks=None, data_types=None) -> None:
        """Check DirectML's buffer-tensor rules; ``name`` prefixes every message (e.g. "output")."""
        if self.data_type == DataType.UNKNOWN:
            raise DmlValidationError(f"{name}.data_type: UNKNOWN is never valid")
        if data_types is not None and self.data_type not in data_types:
            allowed = ", ".join(d.name for d in data_types)
            raise DmlValidationError(
                f"{name}.data_type: {self.data_type.name} is not supported here (allowed: {allowed})"
            )
        if ranks is not None and self.rank not in ranks:
            raise DmlValidationError(
                f"{name}.sizes: dimension count must be in {_fmt_ranks(ranks)}; got {self.rank} ({list(self.sizes)})"
            )
        if self.rank < 1 or self.rank > 8:
            raise DmlValidationError(f"{name}.sizes: dimension count must be 1 to 8; got {self.rank}")
        for d, s in enumerate(self.sizes):
            if s <= 0:
                raise DmlValidationError(f"{name}.sizes[{d}]: a size of zero (or less) is invalid; got {s}")
        if self.strides is not None:
            if len(self.strides) != self.rank:
                raise DmlValidationError(
                    f"{name}.strides: must have one entry per dimension ({self.rank}); got {len(self.strides)}"
                )
            for d, t in enumerate(self.strides):
                if t < 0:
                    raise DmlValidationError(f"{name}.strides[{d}]: strides are unsigned element counts; got {t}")
        if self.element_count > MAX_ELEMENTS:
            raise DmlValidationError(
                f"{name}.sizes: a buffer tensor may hold at most 2^32-1 elements; got {self.element_count}"
            )
        implied = self.implied_size_in_bytes
        total = self.total_tensor_size_in_bytes
        if total < implied:
            raise DmlValidationError(
                f"{name}.total_tensor_size_in_bytes: must be >= the implied size {implied} "
                f"(DMLCalcBufferTensorSize of sizes {list(self.sizes)}, "
                f"strides {list(self.element_strides)}); got {total}"
            )
        if total % 4:
            raise DmlValidationError(f"{name}.total_tensor_size_in_bytes: must be a multiple of 4; got {total}")
        a = self.guaranteed_base_offset_alignment
        if a and (a & (a - 1) or a < self.data_type.size_in_bytes):
            raise DmlValidationError(
                f"{name}.guaranteed_base_offset_alignment: must be 0 or a power of two >= the element size; got {a}"
            )

    def check_no_overlap(self, name: str) -> None:
        """Reject a description in which two elements share an address (needed for outputs)."""
        dims = sorted((t, s) for s, t in zip(self.sizes, self.element_strides) if s > 1)
        reach = 0
        for t, s in dims:
            if t <= reach:
                break
            reach += (s - 1) * t
        else:
            return
        # The quick sufficient test failed; decide exactly where that is affordable.
        if self.element_count <= 1 << 22:
            addr = np.zeros(1, dtype=np.int64)
            for s, t in zip(self.sizes, self.element_strides):
                addr = (addr[:, None] + np.arange(s, dtype=np.int64)[None, :] * t).reshape(-1)
            if np.unique(addr).size == addr.size:
                return
        raise DmlValidationError(
            f"{name}.strides: two elements of an output may not share an address; "
            f"sizes {list(self.sizes)} with strides {list(self.element_strides)} overlap"
        )


def _fmt_ranks(ranks) -> str:
    r = sorted(ranks)
    return f"{r[0]}..{r[-1]}" if r == list(range(r[0], r[-1] + 1)) and len(r) > 1 else str(r)


def desc_for_array(a: np.ndarray) -> tuple[TensorDesc, np.ndarray]:
    """Describe a numpy array (any view with non-negative strides) without copying it.

    Returns (desc, span): ``span`` is a contiguous 1-D view of the memory the array touches, from
    its first element to its last, and ``desc`` addresses the array from the start of it.
    Negative or non-element-multiple strides fall back to a packed copy.
    """
    dt = DataType.from_numpy(a.dtype)
    item = a.dtype.itemsize
    if a.ndim == 0:
        a = a.reshape(1)
    if a.flags.c_contiguous and a.size:  # the common case: packed, the span is the array itself
        return TensorDesc(dt, a.shape), a.reshape(-1)
    if a.size and any((s < 0 or s % item) and n > 1 for s, n in zip(a.strides, a.shape)):
        a = np.ascontiguousarray(a)
    # The stride of a size-1 axis never moves the address (numpy keeps e.g. -384 for x[:1][::-1]):
    # describe it as packed.
    packed = packed_strides(a.shape)
    strides = tuple(p if n == 1 else s // item for s, n, p in zip(a.strides, a.shape, packed))
    sizes = a.shape
    if a.size == 0:
        raise DmlValidationError("input.sizes: a size of zero is invalid in DirectML")
    last = sum((s - 1) * t for s, t in zip(sizes, strides))
    span = np.lib.stride_tricks.as_strided(a, shape=(last + 1,), strides=(item,), writeable=False)
    desc_strides = None if strides == packed else strides
    return TensorDesc(dt, sizes, desc_strides), span

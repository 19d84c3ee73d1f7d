"""A WGSL file's interface, read from the file itself: its bindings and its uniform structs.

Binding numbers and uniform layouts are declared once, in the ``.wgsl`` file. Python never retypes
them: :func:`interface` parses ``@group(0) @binding(N) var<...> name: T;`` declarations and
``struct`` definitions, and :class:`StructLayout` packs a uniform struct from a mapping of field
names to values, with WGSL's uniform address-space layout rules. A missing or an extra field, a
value of the wrong length or out of its type's range is an error that names the field.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np

__all__ = ["Binding", "ShaderInterface", "StructLayout", "Field", "interface", "ShaderInterfaceError"]


class ShaderInterfaceError(ValueError):
    """A WGSL interface (binding or uniform struct) and the values Python gives it disagree."""


_SCALARS = {"u32": np.uint32, "i32": np.int32, "f32": np.float32}
_BINDING = re.compile(r"@group\(\s*0\s*\)\s*@binding\(\s*(\d+)\s*\)\s*var(?:<([^>]*)>)?\s+(\w+)\s*:\s*([^;]+);")
_STRUCT = re.compile(r"struct\s+(\w+)\s*\{([^}]*)\}", re.S)
_COMMENT = re.compile(r"//[^\n]*")


@dataclass(frozen=True)
class Field:
    """One member of a uniform struct: byte offset, scalar type, and shape (lanes per element,
    element count; an ``array<vec4<u32>, 2>`` is 4 lanes x 2, a ``u32`` is 1 x 1)."""

    name: str
    offset: int
    scalar: str
    lanes: int
    count: int
    stride: int  # bytes between array elements (16 for arrays in the uniform address space)
    is_array: bool

    @property
    def values(self) -> int:
        """How many numbers the field takes."""
        return self.lanes * self.count


def _parse_type(t: str) -> tuple[str, int, int, bool]:
    """(scalar, lanes, count, is_array) of a member type: u32/i32/f32, vecN<T>, array<vecN<T>|T, K>."""
    t = t.strip()
    m = re.fullmatch(r"array<\s*(.+?)\s*,\s*(\d+)u?\s*>", t)
    if m:
        scalar, lanes, _, _ = _parse_type(m.group(1))
        return scalar, lanes, int(m.group(2)), True
    m = re.fullmatch(r"vec([234])<\s*(\w+)\s*>", t) or re.fullmatch(r"vec([234])([uif])", t)
    if m:
        s = m.group(2)
        s = {"u": "u32", "i": "i32", "f": "f32"}.get(s, s)
        if s not in _SCALARS:
            raise ShaderInterfaceError(f"unsupported uniform member type {t!r}")
        return s, int(m.group(1)), 1, False
    if t in _SCALARS:
        return t, 1, 1, False
    raise ShaderInterfaceError(f"unsupported uniform member type {t!r} (u32, i32, f32, vecN and arrays of them)")


def _split_members(body: str) -> list[str]:
    """Struct members: the body split at the commas outside ``<...>``."""
    parts, depth, cur = [], 0, []
    for ch in body:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


@dataclass(frozen=True)
class StructLayout:
    """A WGSL struct in the uniform address space, packable by field name."""

    name: str
    fields: tuple[Field, ...]
    size: int

    @classmethod
    def parse(cls, name: str, body: str) -> "StructLayout":
        """Lay out the members of ``struct name { body }`` (WGSL's uniform layout rules)."""
        fields, at, align_max = [], 0, 16
        for member in _split_members(_COMMENT.sub("", body)):
            member = member.strip()
            if not member:
                continue
            fname, _, ftype = member.partition(":")
            fname = re.sub(r"@\w+(\([^)]*\))?\s*", "", fname).strip()
            scalar, lanes, count, is_array = _parse_type(ftype)
            esize = 4 * (4 if lanes == 3 else lanes)
            align = 4 if lanes == 1 else (8 if lanes == 2 else 16)
            stride = esize
            if is_array:
                align = stride = max(16, esize)  # uniform arrays: element stride a multiple of 16
            at = -(-at // align) * align
            fields.append(Field(fname, at, scalar, lanes, count, stride, is_array))
            at += stride * count if is_array else esize
        return cls(name, tuple(fields), -(-at // align_max) * align_max)

    @property
    def names(self) -> tuple[str, ...]:
        """Field names, in declaration order."""
        return tuple(f.name for f in self.fields)

    def pack(self, values: Mapping[str, object]) -> bytes:
        """The struct's bytes for ``values`` (field name -> number or sequence of numbers)."""
        missing = [f.name for f in self.fields if f.name not in values]
        extra = [k for k in values if k not in self.names]
        if missing:
            raise ShaderInterfaceError(f"uniforms {self.name}: missing field(s) {', '.join(missing)}")
        if extra:
            raise ShaderInterfaceError(
                f"uniforms {self.name}: no field(s) named {', '.join(extra)} (fields: {', '.join(self.names)})"
            )
        out = np.zeros(self.size, np.uint8)
        for f in self.fields:
            v = np.asarray(values[f.name], dtype=np.float64 if f.scalar == "f32" else object).reshape(-1)
            if v.size != f.values:
                raise ShaderInterfaceError(f"uniforms {self.name}.{f.name}: expects {f.values} value(s); got {v.size}")
            if f.scalar == "f32":
                words = v.astype(np.float32).view(np.uint32)
            else:
                lo, hi = (0, 2**32 - 1) if f.scalar == "u32" else (-(2**31), 2**31 - 1)
                ints = [int(x) for x in v]
                bad = [x for x in ints if not lo <= x <= hi]
                if bad:
                    raise ShaderInterfaceError(f"uniforms {self.name}.{f.name}: {bad[0]} is outside {f.scalar}'s range")
                words = np.array(ints, np.int64).astype(np.uint32 if f.scalar == "u32" else np.int32).view(np.uint32)
            words = words.reshape(f.count, f.lanes)
            for i in range(f.count):
                start = f.offset + i * f.stride
                out[start : start + 4 * f.lanes] = words[i].view(np.uint8)
        return out.tobytes()


@dataclass(frozen=True)
class Binding:
    """One ``@group(0) @binding(number) var<space, access> name: type`` declaration."""

    number: int
    space: str  # "storage" or "uniform"
    access: str  # "read", "read_write" ("" for uniforms)
    type: str

    @property
    def written(self) -> bool:
        """Whether the shader may write through it."""
        return self.access == "read_write"

    @property
    def vec4(self) -> bool:
        """Whether its elements are 16-byte vectors (the binding must then span whole vectors)."""
        return self.type.replace(" ", "").startswith("array<vec4")


@dataclass(frozen=True)
class ShaderInterface:
    """Bindings (variable name -> :class:`Binding`) and structs of one WGSL file."""

    bindings: Mapping[str, Binding]
    structs: Mapping[str, str]  # struct name -> body text (laid out on demand)

    def binding(self, name: str) -> int:
        """The ``@binding`` number of the variable ``name``."""
        if name not in self.bindings:
            raise ShaderInterfaceError(f"no binding named {name!r} (declared: {', '.join(self.bindings)})")
        return self.bindings[name].number

    def uniform_layout(self, var: str) -> StructLayout:
        """The struct layout of the ``var<uniform>`` variable ``var``."""
        b = self.bindings.get(var)
        if b is None or b.space != "uniform":
            raise ShaderInterfaceError(f"no var<uniform> named {var!r}")
        typ = b.type
        if typ not in self.structs:
            raise ShaderInterfaceError(f"uniform {var!r} has type {typ!r}, not a struct of this file")
        return _layout(typ, self.structs[typ])


@functools.cache
def interface(shader: str) -> ShaderInterface:
    """The interface of ``wgsl/<shader>`` (includes expanded), parsed once per process."""
    from .runtime import load_wgsl

    code = _COMMENT.sub("", load_wgsl(shader))
    bindings = {}
    for m in _BINDING.finditer(code):
        space, _, access = (m.group(2) or "").partition(",")
        space = space.strip()
        access = access.strip() or ("read" if space == "storage" else "")
        bindings[m.group(3)] = Binding(int(m.group(1)), space, access, m.group(4).strip())
    structs = {m.group(1): m.group(2) for m in _STRUCT.finditer(code)}
    return ShaderInterface(bindings, structs)


@functools.cache
def _layout(name: str, body: str) -> StructLayout:
    return StructLayout.parse(name, body)

"""Host side of the strided gather shared by the data-movement operators (wgsl/common/permute.wgsl).

An operator describes itself as an iteration space in output order: per dimension a size, an
input stride and an output stride, both in elements. This module merges the dimensions that stay
contiguous on both sides, picks the entry point for the output layout, and packs the uniforms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime import Device, GpuTensor, Kernel
from ..tensor import DmlValidationError, TensorDesc

MAX_DIMS = 8
ELEMENTS_PER_THREAD = 4  # EPT in common/permute.wgsl (its default)


def coalesce(sizes, src_strides, dst_strides):
    """Drop size-1 dimensions and merge each dimension into the next inner one where both sides
    stay contiguous across the pair (outermost first in and out)."""
    dims = [(s, a, b) for s, a, b in zip(sizes, src_strides, dst_strides) if s != 1]
    merged: list[list[int]] = []
    for s, a, b in reversed(dims):  # innermost first
        if merged:
            ps, pa, pb = merged[-1]
            if a == ps * pa and b == ps * pb:
                merged[-1] = [s * ps, pa, pb]
                continue
        merged.append([s, a, b])
    merged.reverse()
    if not merged:
        merged = [[1, 0, 0]]
    return [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged]


@dataclass(frozen=True)
class IterationSpace:
    """A gather: output[dst . i] = input[src . i] over ``sizes`` (outermost first, elements)."""

    sizes: tuple[int, ...]
    src_strides: tuple[int, ...]
    dst_strides: tuple[int, ...]


@dataclass(frozen=True)
class TiledSpace:
    """The block (de)interleave fast path of wgsl/common/tiles.wgsl, for ops whose rows are
    contiguous: ``rows`` = (N, channels, H) of the row space, ``row_len`` = elements a row has in
    the chunked (last) dimension, ``chan`` = (per i, per j, per c) steps of the channel map,
    ``in_w_stride``/``out_w_stride`` = the last-dimension strides (the path needs both to be 1)."""

    block: int
    rows: tuple[int, int, int]
    row_len: int
    chan: tuple[int, int, int]
    in_strides: tuple[int, int, int]
    out_strides: tuple[int, int, int]
    in_w_stride: int
    out_w_stride: int
    zip: bool = False  # DepthToSpace with block 2: one thread per output vector (depth_to_space_zip)

    def chunk(self, esize: int) -> int:
        """Columns of the chunked dimension one thread covers."""
        return (8 if self.zip else 16) // esize

    def usable(self, esize: int) -> bool:
        """Whether the fast path's structural conditions hold for this element size."""
        v = 16 // esize
        return (
            2 <= self.block <= 4
            and self.in_w_stride == 1
            and self.out_w_stride == 1
            and self.row_len % v == 0
            and all(s % v == 0 for s in self.in_strides + self.out_strides)
        )


class PermuteOperator:
    """A compiled data-movement operator: call it with (input, output) GPU tensors.

    Created by an operator's ``compile_*`` function; holds the pipeline (shared through the
    device's cache by every op of the same structure) and the op's uniforms.
    """

    def __init__(
        self,
        device: Device,
        op: str,
        shader: str,
        input: TensorDesc,
        output: TensorDesc,
        space: IterationSpace,
        tiled: TiledSpace | None = None,
    ):
        self.device = device
        self.op = op
        self.input_desc = input
        self.output_desc = output
        self.esize = input.data_type.size_in_bytes
        device.check_binding_size(op, "input", input.total_tensor_size_in_bytes)
        device.check_binding_size(op, "output", output.total_tensor_size_in_bytes)
        sizes, src, dst = coalesce(space.sizes, space.src_strides, space.dst_strides)
        if len(sizes) > MAX_DIMS:
            raise DmlValidationError(f"{op}: iteration space of {len(sizes)} dimensions exceeds {MAX_DIMS}")
        self.sizes, self.src, self.dst = sizes, src, dst
        self.count = int(np.prod(sizes))
        entry = shader.split(".")[0]
        self._kernels: dict[str, Kernel] = {}
        self._entry = entry
        self._shader = shader
        self._layout = "packed" if output.is_packed else ("strided" if self.esize >= 4 else "atomic")
        self._pack = self._pack_uniforms  # one bound method, so bind groups cache by identity
        self.tiled = tiled if tiled is not None and tiled.usable(self.esize) else None
        self._pack_tiled_fn = self._pack_tiled
        self._last = None  # (input, output, kernel, pack, invocations) of the last validated call
        # compile now: errors surface at compile time, not at first call
        self.kernel("tiled" if self.tiled else self._layout)

    def kernel(self, layout: str) -> Kernel:
        """The kernel for one path: tiled (fast), or the gather for a packed, strided or atomic output."""
        if layout not in self._kernels:
            if layout == "tiled":
                zip_ = self.tiled.zip
                self._kernels[layout] = Kernel(
                    self.device,
                    op=self.op,
                    shader=self._shader,
                    entry_point=f"{self._entry}_{'zip' if zip_ else 'tiled'}",
                    bindings={"input": 7 if zip_ else 5, "output": 2},
                    uniform_binding=6,
                    constants={"ELEM_BYTES": self.esize, "BLOCK": self.tiled.block},
                    vec4_bindings=frozenset({"input", "output"}),
                )
            else:
                binding = {"packed": 2, "strided": 1, "atomic": 3}[layout]
                self._kernels[layout] = Kernel(
                    self.device,
                    op=self.op,
                    shader=self._shader,
                    entry_point=f"{self._entry}_{layout}",
                    bindings={"input": 0, "output": binding},
                    uniform_binding=4,
                    constants={"ELEM_BYTES": self.esize},
                    vec4_bindings=frozenset({"output"}) if layout == "packed" else frozenset(),
                )
        return self._kernels[layout]

    def _tiled_threads(self) -> int:
        t = self.tiled
        return t.rows[0] * t.rows[1] * t.rows[2] * t.block * (t.row_len // t.chunk(self.esize))

    def _pack_tiled(self, residual: dict) -> bytes:
        t = self.tiled
        u = np.zeros((5, 4), dtype=np.uint32)
        u[0, :3] = t.in_strides
        u[1, :3] = t.out_strides
        u[2] = [t.rows[0], t.rows[1], t.rows[2], t.row_len // t.chunk(self.esize)]
        u[3, :3] = t.chan
        u[4, :3] = [self._tiled_threads(), residual["input"] // self.esize, residual["output"] // self.esize]
        return u.tobytes()

    def _pack_uniforms(self, residual: dict) -> bytes:
        n = len(self.sizes)
        u = np.zeros((9, 4), dtype=np.uint32)
        sizes = np.ones(8, np.uint64)
        src = np.zeros(8, np.uint64)
        dst = np.zeros(8, np.uint64)
        shifts = np.full(8, 32, np.uint64)
        for d in range(n):  # innermost first
            s = self.sizes[n - 1 - d]
            sizes[d], src[d], dst[d] = s, self.src[n - 1 - d], self.dst[n - 1 - d]
            if s & (s - 1) == 0:
                shifts[d] = s.bit_length() - 1
        u[0:2] = (sizes % 2**32).reshape(2, 4)
        u[2:4] = (src % 2**32).reshape(2, 4)
        u[4:6] = (dst % 2**32).reshape(2, 4)
        u[6:8] = shifts.reshape(2, 4)
        u[8] = [self.count, residual["input"] // self.esize, residual["output"] // self.esize, n]
        return u.tobytes()

    def _blocks(self, residual: dict) -> int:
        base = residual["output"]
        return -(-(base + self.count * self.esize) // 16) - base // 16

    def __call__(self, input: GpuTensor, output: GpuTensor) -> GpuTensor:
        """Run the operator: read ``input``, write ``output`` (recorded into an open batch)."""
        last = self._last
        if last is not None and last[0] is input and last[1] is output:
            last[2].dispatch({"input": input, "output": output}, last[3], last[4])
            return output
        if input.desc != self.input_desc:
            raise DmlValidationError(f"{self.op}: input description differs from the compiled one")
        if output.desc != self.output_desc:
            raise DmlValidationError(f"{self.op}: output description differs from the compiled one")
        input.check("input")
        output.check("output")
        if (
            self.tiled
            and input.offset % 16 == 0
            and output.offset % 16 == 0
            and input.buffer.size % 16 == 0
            and output.buffer.size % 16 == 0
        ):
            k, pack, n = self.kernel("tiled"), self._pack_tiled_fn, self._tiled_threads()
        else:
            layout = self._layout
            if layout == "packed" and output.buffer.size % 16:
                layout = "strided" if self.esize >= 4 else "atomic"  # a foreign buffer not padded to 16
            k, pack = self.kernel(layout), self._pack
            n = self._blocks if layout == "packed" else -(-self.count // ELEMENTS_PER_THREAD)
        k.dispatch({"input": input, "output": output}, pack, n)
        # GpuTensor is immutable: the same pair of objects needs no second validation.
        self._last = (input, output, k, pack, n)
        return output

    @property
    def cache_keys(self) -> list[str]:
        """The pipeline cache keys this operator uses."""
        return [k.key for k in self._kernels.values()]

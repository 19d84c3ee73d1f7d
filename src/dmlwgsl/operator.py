"""The one operator skeleton: validate -> plan -> bind -> dispatch.

An operator module subclasses :class:`Operator` and supplies only what is particular to it:

* ``op``: its name; ``tensors``: its call arguments in order (``optional`` ones may be None);
  ``outputs``: which of them are written;
* ``make_plan(placements)``: its planning function applied to the compiled description and the
  device's capabilities (see :mod:`dmlwgsl.plan`);
* optionally ``host_tensors(plan)``: GPU tensors the plan's steps bind besides the call's
  (host tables, workspace), created once per plan.

Everything else (argument checks, plan caching per placement, kernels from the device's pipeline
cache, uniforms packed by field name from the plan, dispatch and batching) is here, once.
"""

from __future__ import annotations

from typing import Mapping

from .plan import Capabilities, KernelStep, Placement, Plan
from .runtime import Device, GpuTensor, Kernel, binding_targets
from .shader import interface
from .tensor import DataType, DmlValidationError, TensorDesc

__all__ = ["Operator"]


class Operator:
    """A compiled operator: call it with GPU tensors (in the order of ``tensors``)."""

    op: str = ""
    tensors: tuple[str, ...] = ("input", "output")
    optional: frozenset = frozenset()
    outputs: tuple[str, ...] = ("output",)

    def __init__(self, device: Device, desc, *, kernel: str | None = None, capabilities: Capabilities | None = None):
        """Plan ``desc`` for ``device`` (``kernel``: request a path by name) and compile the plan's
        kernels. ``capabilities`` replaces the device's record for planning; it may only be tighter
        than the device (tests use a smaller binding limit to force the split past it)."""
        self.device = device
        self.desc = desc
        self.kernel_request = kernel
        self.capabilities = capabilities or Capabilities.from_device(device)
        self._plans: dict = {}
        self._kernels: dict[KernelStep, Kernel] = {}
        self._packs: dict[KernelStep, object] = {}
        self._host: dict[Plan, Mapping[str, GpuTensor]] = {}
        self._last = None
        self._tls = device._tls  # the device's per-thread state (its open batch), read on every call
        self.plan = self._plan_for(())
        self._prepare(self.plan)  # compile now: errors surface at compile time, not at first call

    # -- what a subclass provides ------------------------------------------------------------------
    def make_plan(self, placements: Mapping[str, Placement] | None) -> Plan:
        """The plan for this operator's description on this device, for tensors placed so."""
        raise NotImplementedError

    def host_tensors(self, plan: Plan) -> Mapping[str, GpuTensor]:
        """GPU tensors the plan binds besides the call's arguments (tables, workspace)."""
        return self.workspace_tensors(plan)

    def workspace_tensors(self, plan: Plan) -> dict[str, GpuTensor]:
        """A GPU buffer for each of the plan's workspace entries (name, bytes), as UINT32 words,
        its size rounded up to 16 bytes (steps may bind it as 16-byte vectors)."""
        out = {}
        for name, nbytes in plan.workspace:
            nbytes = -(-nbytes // 16) * 16
            desc = TensorDesc(DataType.UINT32, (nbytes // 4,))
            out[name] = GpuTensor(self.device, desc, self.device.create_buffer(nbytes, f"{self.op}.{name}"), 0)
        return out

    def tensor_desc(self, name: str) -> TensorDesc | None:
        """The compiled description of call argument ``name`` (None for an absent optional one)."""
        return getattr(self.desc, name)

    # -- the shared path ---------------------------------------------------------------------------
    @property
    def input_desc(self) -> TensorDesc:
        """The compiled input description."""
        return self.tensor_desc(self.tensors[0])

    @property
    def output_desc(self) -> TensorDesc:
        """The compiled output description."""
        return self.tensor_desc(self.outputs[0])

    @property
    def cache_keys(self) -> list[str]:
        """The pipeline cache keys this operator has used."""
        return [k.key for k in self._kernels.values()]

    def _plan_for(self, key: tuple) -> Plan:
        plan = self._plans.get(key)
        if plan is None:
            plan = self.make_plan(dict(key) if key else None)
            self._plans[key] = plan
        return plan

    def _prepare(self, plan: Plan) -> Mapping[str, GpuTensor]:
        host = self._host.get(plan)
        if host is None:
            for s in plan.steps:
                self._kernel(s)
            host = dict(self.host_tensors(plan))
            self._host[plan] = host
        return host

    def _kernel(self, s: KernelStep) -> Kernel:
        k = self._kernels.get(s)
        if k is None:
            names = s.bindings_dict
            decl = interface(s.shader).bindings
            k = Kernel(
                self.device,
                op=self.op,
                shader=s.shader,
                entry_point=s.entry_point,
                bindings=names,
                uniform_binding=s.uniform_var,
                constants=s.constants_dict,
                workgroup_size=s.workgroup_size,
                vec4_bindings=frozenset(n for n, v in names.items() if any(decl[x].vec4 for x in binding_targets(v))),
                outputs=tuple(n for n, v in names.items() if any(decl[x].written for x in binding_targets(v))),
            )
            self._kernels[s] = k
            data = k.uniform_layout.pack(s.uniforms_dict)
            self._packs[s] = lambda _residual, data=data: data  # one object per step: bind groups cache by it
        return k

    def _check_args(self, args: tuple) -> dict:
        if len(args) != len(self.tensors):
            raise TypeError(
                f"{self.op}: expected {len(self.tensors)} tensors ({', '.join(self.tensors)}); got {len(args)}"
            )
        bound = {}
        for name, t in zip(self.tensors, args):
            want = self.tensor_desc(name)
            if t is None:
                if want is not None:
                    raise TypeError(f"{self.op}: {name} is required (the description has one)")
                continue
            if not isinstance(t, GpuTensor):
                raise TypeError(
                    f"{self.op}: {name} must be a dmlwgsl.GpuTensor (e.g. device.upload(array)); got {type(t).__name__}"
                )
            if want is None:
                raise DmlValidationError(f"{self.op}: {name} was given but the compiled description has none")
            if t.device is not self.device:
                raise DmlValidationError(
                    f"{self.op}: {name} belongs to another Device ({t.device.name}) than the "
                    f"compiled operator ({self.device.name})"
                )
            if t.desc != want:
                raise DmlValidationError(f"{self.op}: {name} description differs from the compiled one")
            t.check(name)
            bound[name] = t
        return bound

    def __call__(self, *args) -> GpuTensor:
        """Run the operator on GPU tensors (recorded into an open batch); returns the output."""
        last = self._last
        # GpuTensor compares by identity, so == on the tuples means "the very same objects": the
        # checks, plan and bind groups of the last call hold, and its recorded items replay as is
        # (destroyed buffers and a lost device are still caught when the batch is submitted).
        if last is not None and args == last[0]:
            b = getattr(self._tls, "batch", None)  # the hot loop of a batch: straight to it
            if b is not None:
                b.add(last[1], last[2])
            else:
                self.device.record_items(last[1], last[2])
            return last[3]
        with self.device._lock:  # the plan, kernel and host-tensor caches are shared by every thread
            return self._call_checked(args)

    def _call_checked(self, args: tuple) -> GpuTensor:
        bound = self._check_args(args)
        al = self.device.binding_alignment
        key = tuple(sorted((n, Placement(t.offset % al, t.buffer.size % 16 == 0)) for n, t in bound.items()))
        if all(p == Placement() for _, p in key):
            key = ()
        plan = self._plan_for(key)
        tensors = dict(self._prepare(plan), **bound)
        items, buffers = [], []
        for s in plan.steps:
            sub = {n: tensors[n] for n in s.bindings_dict}
            for name, start, length in s.windows:
                t = sub[name]
                sub[name] = GpuTensor(self.device, TensorDesc(DataType.UINT8, (length,)), t.buffer, t.offset + start)
            item, bufs = self._kernel(s).resolve(sub, self._packs[s], s.invocations)
            items.append(item)
            buffers.extend(bufs)
        out = bound[self.outputs[0]]
        # GpuTensors are immutable: the same objects need no second check or planning. The window
        # tensors stay referenced through the kernels' memos only as long as they are useful.
        record = (args, tuple(items), tuple(buffers), out)
        self.device.record_items(record[1], record[2])
        self._last = record
        return out

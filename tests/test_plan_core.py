"""The architecture core without operators: WGSL interfaces parsed from the files, uniform structs
packed by field name, capability records, and the shared operator skeleton (on a copy kernel)."""

from dataclasses import dataclass

import numpy as np
import pytest

from dmlwgsl.operator import Operator
from dmlwgsl.plan import PROFILES, Capabilities, Plan, PlanError, step
from dmlwgsl.shader import ShaderInterfaceError, StructLayout, interface
from dmlwgsl.tensor import DataType, DmlValidationError, TensorDesc


def test_bindings_come_from_the_wgsl_file():
    b = interface("common/copy_vec4.wgsl").bindings
    assert (b["input"].number, b["output"].number, b["cp"].number) == (0, 1, 2)
    assert b["output"].written and not b["input"].written and b["input"].vec4
    assert b["cp"].space == "uniform"


def test_struct_layout_follows_wgsl_uniform_rules():
    lay = StructLayout.parse("S", "a: u32, b: vec2<f32>, c: vec4<u32>, d: array<vec4<u32>, 2>, e: i32, f: vec3<u32>")
    offs = {f.name: f.offset for f in lay.fields}
    assert offs == {"a": 0, "b": 8, "c": 16, "d": 32, "e": 64, "f": 80}
    assert lay.size == 96
    raw = np.frombuffer(
        lay.pack({"a": 7, "b": (1.5, -2.0), "c": (1, 2, 3, 4), "d": range(8), "e": -3, "f": (9, 8, 7)}), np.uint32
    )
    assert raw[0] == 7 and raw[2:4].view(np.float32).tolist() == [1.5, -2.0]
    assert raw[4:8].tolist() == [1, 2, 3, 4] and raw[8:16].tolist() == list(range(8))
    assert raw[16].view(np.int32) == -3 and raw[20:23].tolist() == [9, 8, 7]


@pytest.mark.parametrize(
    "values, message",
    [
        ({"a": 1}, "missing field(s) b"),
        ({"a": 1, "b": (1, 2, 3, 4), "z": 0}, "no field(s) named z"),
        ({"a": 1, "b": (1, 2, 3)}, "S.b: expects 4 value(s); got 3"),
        ({"a": -1, "b": (1, 2, 3, 4)}, "S.a: -1 is outside u32's range"),
    ],
)
def test_struct_pack_names_the_field(values, message):
    lay = StructLayout.parse("S", "a: u32, b: vec4<u32>")
    with pytest.raises(ShaderInterfaceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        lay.pack(values)


def test_unknown_binding_or_uniform_is_named():
    iface = interface("common/copy_vec4.wgsl")
    with pytest.raises(ShaderInterfaceError, match="no binding named 'nope'"):
        iface.binding("nope")
    with pytest.raises(ShaderInterfaceError, match="no var<uniform> named 'input'"):
        iface.uniform_layout("input")


@pytest.mark.parametrize("name", PROFILES)
def test_profiles_load_without_a_gpu(name):
    caps = Capabilities.profile(name)
    assert caps.max_binding_size > 0 and caps.binding_alignment >= 16
    assert Capabilities.from_dict(caps.to_dict()) == caps
    assert caps.is_cpu == (name != "h100")  # lavapipe and llvmpipe run shaders on the CPU


def test_unknown_profile_is_named():
    with pytest.raises(DmlValidationError, match="profile: unknown 'metal'"):
        Capabilities.profile("metal")


# -- the operator skeleton, on the vec4 copy kernel ---------------------------------------------------
@dataclass(frozen=True)
class CopyDesc:
    input: TensorDesc
    output: TensorDesc


def plan_copy(desc: CopyDesc, caps: Capabilities, *, kernel=None, placements=None) -> Plan:
    if kernel not in (None, "copy_vec4"):
        raise PlanError(f"kernel: no path {kernel!r} for copy (copy_vec4)")
    words = desc.input.total_tensor_size_in_bytes // 16
    s = step(
        "copy_vec4",
        "common/copy_vec4.wgsl",
        "the only path",
        words,
        uniform_var="cp",
        uniforms={"count": words, "threads": words},
        bindings={"input": "input", "output": "output"},
        constants={"VPT": 1},
    )
    return Plan("copy", (s,), "one pass", 2 * words * 16, caps.name)


class CopyOperator(Operator):
    op = "copy"

    def make_plan(self, placements):
        return plan_copy(self.desc, self.capabilities, kernel=self.kernel_request, placements=placements)


def test_operator_skeleton_runs_a_plan(device):
    desc = TensorDesc(DataType.UINT32, (64,))
    op = CopyOperator(device, CopyDesc(desc, desc))
    assert op.plan.kernels == ["copy_vec4"] and op.plan.steps[0].grid == (1, 1, 1)
    x = np.arange(64, dtype=np.uint32)
    a, b = device.upload(x), device.tensor(desc)
    device.fill(b.buffer, b"\xee")
    assert op(a, b) is b
    np.testing.assert_array_equal(b.numpy(), x)
    op(a, b)  # the repeat-call path
    np.testing.assert_array_equal(b.numpy(), x)


def test_operator_skeleton_rejects_wrong_arguments(device):
    desc = TensorDesc(DataType.UINT32, (64,))
    op = CopyOperator(device, CopyDesc(desc, desc))
    with pytest.raises(TypeError, match="copy: input must be a dmlwgsl.GpuTensor"):
        op(np.zeros(64, np.uint32), device.tensor(desc))
    with pytest.raises(TypeError, match="expected 2 tensors"):
        op(device.tensor(desc))
    with pytest.raises(PlanError, match="kernel: no path 'fast'"):
        CopyOperator(device, CopyDesc(desc, desc), kernel="fast")


class HalvesCopyOperator(Operator):
    """The copy in two steps, each binding one half of each tensor (the binding-limit split)."""

    op = "copy"

    def make_plan(self, placements):
        words = self.desc.input.total_tensor_size_in_bytes // 16
        half = words // 2
        steps = tuple(
            step(
                f"copy_vec4[{i}]",
                "common/copy_vec4.wgsl",
                "half of the tensor",
                n,
                entry_point="copy_vec4",
                uniform_var="cp",
                uniforms={"count": n, "threads": n},
                bindings={"input": "input", "output": "output"},
                windows=[("input", 16 * s, 16 * n), ("output", 16 * s, 16 * n)],
            )
            for i, (s, n) in enumerate(((0, half), (half, words - half)))
        )
        return Plan("copy", steps, "two windows", 2 * words * 16, self.capabilities.name)


def test_operator_skeleton_binds_windows(device):
    desc = TensorDesc(DataType.UINT32, (4096,))
    op = HalvesCopyOperator(device, CopyDesc(desc, desc))
    assert op.plan.dispatches == 2 and op.plan.steps[1].windows == (("input", 8192, 8192), ("output", 8192, 8192))
    x = np.arange(4096, dtype=np.uint32)
    a, b = device.upload(x), device.tensor(desc)
    device.fill(b.buffer, b"\xee")
    op(a, b)
    np.testing.assert_array_equal(b.numpy(), x)


def test_div_magic_divides_every_u32_exactly_on_the_gpu(device):
    """grid.wgsl's div_magic with plan.div_magic's pairs equals integer division, for divisors
    1, 2, powers of two, odd, near 2^16 and near 2^32, at the edges of u32 and at random."""
    from dmlwgsl.plan import div_magic
    from dmlwgsl.runtime import load_wgsl

    rng = np.random.default_rng(3)
    divisors = [1, 2, 3, 7, 8, 9, 10, 255, 256, 1000, 65535, 65536, 65537, 2**31 - 1, 2**31, 2**32 - 1]
    divisors += [int(v) for v in rng.integers(1, 2**32, 16, dtype=np.uint64)]
    a = np.concatenate(
        [
            np.array([0, 1, 2**16 - 1, 2**16, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1], np.uint32),
            rng.integers(0, 2**32, 248, dtype=np.uint64).astype(np.uint32),
        ]
    )
    code = (
        load_wgsl("common/grid.wgsl")
        + """
@group(0) @binding(0) var<storage, read_write> io: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let k = g.x;  // row k of (a, m, s) triples, answer written over a
    io[3u * k] = div_magic(io[3u * k], io[3u * k + 1u], io[3u * k + 2u]);
}
"""
    )
    code = "override WG: u32 = 64u;\n" + code
    d = device.device
    pipe = d.create_compute_pipeline(
        layout="auto", compute={"module": d.create_shader_module(code=code), "entry_point": "main"}
    )
    for dv in divisors:
        m, s = div_magic(dv)
        rows = np.stack([a, np.full_like(a, m), np.full_like(a, s)], axis=1).astype(np.uint32)
        buf = device.create_buffer(rows.nbytes)
        device.write(buf, 0, rows)
        bg = d.create_bind_group(
            layout=pipe.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": buf}}]
        )
        enc = d.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, bg)
        cp.dispatch_workgroups(len(a) // 64)
        cp.end()
        d.queue.submit([enc.finish()])
        got = np.frombuffer(device.read(buf, 0, rows.nbytes), np.uint32).reshape(-1, 3)[:, 0]
        np.testing.assert_array_equal(got, a // np.uint32(dv), err_msg=f"divisor {dv}")
        buf.destroy()

"""Probe: how fast can a ConvolutionInteger-like kernel feed dot4I8Packed from storage on this
adapter? Each thread keeps 4x4 accumulators (4 pixels x 4 channels) and per k step loads 4 input
and 4 filter words for 16 dot products, with no workgroup memory and no barriers: a GEMM's inner
loop with nothing else. Compare its GOP/s with the in-run dp4a ceiling (`Bench.dp4a_tops`, dot
products from registers only): on a CPU adapter the gap says how far any memory-fed convolution
kernel can get.

    python bench/dot4_fed_probe.py
"""

import time

import numpy as np
import wgpu

import dmlwgsl
from dmlwgsl.benchmark import Bench

ddev = dmlwgsl.default_device()
dev = ddev.device
SRC = """
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> o: array<i32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    var acc = vec4<i32>(0);
    var acc1 = vec4<i32>(0);
    var acc2 = vec4<i32>(0);
    var acc3 = vec4<i32>(0);
    let K = 576u;
    for (var k = 0u; k < K; k++) {
        let x0 = a[(t * 4u + 0u) * K + k];
        let x1 = a[(t * 4u + 1u) * K + k];
        let x2 = a[(t * 4u + 2u) * K + k];
        let x3 = a[(t * 4u + 3u) * K + k];
        let w0 = b[k]; let w1 = b[K + k]; let w2 = b[2u * K + k]; let w3 = b[3u * K + k];
        acc += vec4<i32>(dot4I8Packed(x0, w0), dot4I8Packed(x0, w1), dot4I8Packed(x0, w2), dot4I8Packed(x0, w3));
        acc1 += vec4<i32>(dot4I8Packed(x1, w0), dot4I8Packed(x1, w1), dot4I8Packed(x1, w2), dot4I8Packed(x1, w3));
        acc2 += vec4<i32>(dot4I8Packed(x2, w0), dot4I8Packed(x2, w1), dot4I8Packed(x2, w2), dot4I8Packed(x2, w3));
        acc3 += vec4<i32>(dot4I8Packed(x3, w0), dot4I8Packed(x3, w1), dot4I8Packed(x3, w2), dot4I8Packed(x3, w3));
    }
    let s = acc + acc1 + acc2 + acc3;
    o[t] = s.x + s.y + s.z + s.w;
}
"""
threads = 64 * 64
K = 576
A = dev.create_buffer_with_data(
    data=np.random.randint(0, 2**31, threads * 4 * K, dtype=np.uint32), usage=wgpu.BufferUsage.STORAGE
)
B = dev.create_buffer_with_data(
    data=np.random.randint(0, 2**31, 4 * K, dtype=np.uint32), usage=wgpu.BufferUsage.STORAGE
)
O = dev.create_buffer(size=threads * 4, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
mod = dev.create_shader_module(code=SRC)
pipe = dev.create_compute_pipeline(layout="auto", compute={"module": mod, "entry_point": "main"})
bg = dev.create_bind_group(
    layout=pipe.get_bind_group_layout(0),
    entries=[{"binding": i, "resource": {"buffer": x, "offset": 0, "size": x.size}} for i, x in enumerate((A, B, O))],
)


def run():
    enc = dev.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipe)
    cp.set_bind_group(0, bg)
    cp.dispatch_workgroups(threads // 64)
    cp.end()
    dev.queue.submit([enc.finish()])
    dev.queue.read_buffer(O, 0, 4)


run()
ts = []
for _ in range(5):
    t0 = time.perf_counter()
    run()
    ts.append(time.perf_counter() - t0)
t = min(ts)
ops = threads * 16 * K * 8
ceiling = Bench(ddev, reps=5).dp4a_tops() * 1e3
print(
    f"{ddev.name}: fed kernel {ops / t / 1e9:.1f} GOP/s (16 dot4 per 8 loads, {t * 1e3:.2f} ms); "
    f"dp4a ceiling {ceiling:.0f} GOP/s; ratio {100 * ops / t / 1e9 / ceiling:.1f}%"
)

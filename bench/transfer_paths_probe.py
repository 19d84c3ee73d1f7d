"""Transfer paths probe: raw wgpu uploads and readbacks with the host copy on one thread or split
over several, against dmlwgsl's own readback (Device.read_into), GB/s per size.

Variants: r_ours (Device.read_into), r_raw (copy + map + one copy: issue 14's floor), r_big{1,8}
(one staging buffer the size of the tensor, host copy on 1 / 8 threads), r_chunk{1,4,8} (32 MiB
staging buffers, three in flight); u_raw (queue.write_buffer), u_big{1,8} (one MAP_WRITE staging
buffer, then a GPU copy), u_chunk{4,8} (32 MiB MAP_WRITE staging buffers, three in flight). The
measurements behind Device.copy_threads (bench/README.md, "Host path").

    python bench/transfer_paths_probe.py [MiB ...]      (default: 16 64 256 1024)
"""

import collections
import concurrent.futures as cf
import contextlib
import pathlib
import sys

import numpy as np
import wgpu

import dmlwgsl

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_host import _median_s  # noqa: E402  (the bench directory, run as a script)

dev = dmlwgsl.default_device()
d, q = dev.device, dev.device.queue
print("adapter:", dev.name)
MiB = 1 << 20
pool = cf.ThreadPoolExecutor(16)
CH = 32 * MiB


def tcopy(dst, src, T):
    """Copy src into dst, split over T pool threads in 64-byte-aligned slices when large enough."""
    n = dst.size
    if T <= 1 or n < 2 * MiB:
        np.copyto(dst, src)
        return
    step = -(-n // T) + 63 & ~63
    fs = [pool.submit(np.copyto, dst[a : a + step], src[a : a + step]) for a in range(0, n, step)]
    for f in fs:
        f.result()


rows = []
for mib in tuple(int(a) for a in (sys.argv[1:] or ["16", "64", "256", "1024"])):
    n = mib * MiB
    reps = max(3, min(15, 2048 // mib))
    host = np.random.default_rng(mib).integers(0, 255, size=n, dtype=np.uint8)
    kept = dev.create_buffer(n, "kept")
    dev.write(kept, 0, host)
    big = d.create_buffer(size=n, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    stg = [d.create_buffer(size=CH, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST) for _ in range(3)]
    wst = [d.create_buffer(size=CH, usage=wgpu.BufferUsage.MAP_WRITE | wgpu.BufferUsage.COPY_SRC) for _ in range(3)]
    wbig = d.create_buffer(size=n, usage=wgpu.BufferUsage.MAP_WRITE | wgpu.BufferUsage.COPY_SRC)

    def r_ours():
        """Read kept back with dmlwgsl's own Device.read_into."""
        out = np.empty(n, np.uint8)
        dev.read_into(kept, 0, out)
        return out

    def r_raw():
        """Read kept back by copy + map + one host copy of the whole staging buffer."""
        enc = d.create_command_encoder()
        enc.copy_buffer_to_buffer(kept, 0, big, 0, n)
        q.submit([enc.finish()])
        big.map_sync(wgpu.MapMode.READ)
        out = np.frombuffer(big.read_mapped(copy=False), np.uint8).copy()
        big.unmap()
        return out

    def r_big(T):
        """Make a readback through one tensor-sized staging buffer, host copy on T threads."""

        def f():
            """Read kept back through the big staging buffer."""
            enc = d.create_command_encoder()
            enc.copy_buffer_to_buffer(kept, 0, big, 0, n)
            q.submit([enc.finish()])
            big.map_sync(wgpu.MapMode.READ)
            out = np.empty(n, np.uint8)
            tcopy(out, np.frombuffer(big.read_mapped(copy=False), np.uint8), T)
            big.unmap()
            return out

        return f

    def r_chunk(T, depth=3):
        """Make a readback through 32 MiB staging buffers, depth in flight, host copy on T threads."""

        def f():
            """Read kept back chunk by chunk through the staging ring."""
            out = np.empty(n, np.uint8)
            pieces = [(s, min(CH, n - s)) for s in range(0, n, CH)]
            infl = collections.deque()
            it = iter(enumerate(pieces))

            def issue(i, p):
                """Copy piece p into staging buffer i % depth and start mapping it."""
                s, sz = p
                b = stg[i % depth]
                enc = d.create_command_encoder()
                enc.copy_buffer_to_buffer(kept, s, b, 0, sz)
                q.submit([enc.finish()])
                return p, b, b.map_async("READ_NOSYNC", 0, sz)

            for _ in range(min(depth, len(pieces))):
                i, p = next(it)
                infl.append(issue(i, p))
            while infl:
                (s, sz), b, pr = infl.popleft()
                pr.sync_wait()
                tcopy(out[s : s + sz], np.frombuffer(b.read_mapped(0, sz, copy=False), np.uint8), T)
                b.unmap()
                nx = next(it, None)
                if nx is not None:
                    infl.append(issue(*nx))
            return out

        return f

    def u_raw():
        """Upload host into kept with queue.write_buffer."""
        q.write_buffer(kept, 0, host)
        dev.wait()

    def u_big(T):
        """Make an upload through one tensor-sized MAP_WRITE buffer, host copy on T threads."""

        def f():
            """Upload host into kept through the big MAP_WRITE buffer and a GPU copy."""
            wbig.map_sync(wgpu.MapMode.WRITE)
            v = np.frombuffer(wbig._experimental_get_mapped_range(0, n), np.uint8)
            tcopy(v, host, T)
            del v
            wbig.unmap()
            enc = d.create_command_encoder()
            enc.copy_buffer_to_buffer(wbig, 0, kept, 0, n)
            q.submit([enc.finish()])
            dev.wait()

        return f

    def u_chunk(T, depth=3):
        """Make an upload through 32 MiB MAP_WRITE buffers, depth in flight, host copy on T threads."""

        def f():
            """Upload host into kept chunk by chunk through the MAP_WRITE ring."""
            pieces = [(s, min(CH, n - s)) for s in range(0, n, CH)]
            pend = collections.deque()
            for i, (s, sz) in enumerate(pieces):
                b = wst[i % depth]
                if len(pend) >= depth:
                    pend.popleft().sync_wait()
                if b.map_state != "mapped":
                    b.map_sync(wgpu.MapMode.WRITE)
                v = np.frombuffer(b._experimental_get_mapped_range(0, sz), np.uint8)
                tcopy(v, host[s : s + sz], T)
                del v
                b.unmap()
                enc = d.create_command_encoder()
                enc.copy_buffer_to_buffer(b, 0, kept, s, sz)
                q.submit([enc.finish()])
                pend.append(b.map_async(wgpu.MapMode.WRITE, 0, CH))
            while pend:
                pend.popleft().sync_wait()

        return f

    want = host
    for name, fn in [
        ("r_ours", r_ours),
        ("r_raw", r_raw),
        ("r_big1", r_big(1)),
        ("r_big8", r_big(8)),
        ("r_chunk1", r_chunk(1)),
        ("r_chunk4", r_chunk(4)),
        ("r_chunk8", r_chunk(8)),
    ]:
        try:
            ok = np.array_equal(fn(), want)
            t = _median_s(fn, reps)
            rows.append((mib, name, n / t / 1e9, ok))
        except Exception as e:
            rows.append((mib, name, float("nan"), repr(e)[:80]))
        print("  ..", rows[-1], flush=True)
    for name, fn in [
        ("u_raw", u_raw),
        ("u_big1", u_big(1)),
        ("u_big8", u_big(8)),
        ("u_chunk4", u_chunk(4)),
        ("u_chunk8", u_chunk(8)),
    ]:
        try:
            for b in wst:
                if b.map_state == "mapped":
                    b.unmap()
            dev.write(kept, 0, np.zeros(16, np.uint8))
            fn()
            ok = np.array_equal(np.frombuffer(dev.read(kept, 0, n), np.uint8), host) if mib <= 256 else True
            t = _median_s(fn, reps)
            rows.append((mib, name, n / t / 1e9, ok))
        except Exception as e:
            rows.append((mib, name, float("nan"), repr(e)[:80]))
        print("  ..", rows[-1], flush=True)
    for b in stg + wst + [big, wbig]:
        with contextlib.suppress(Exception):
            b.destroy()
    kept.destroy()
print("\nGB/s")
names = list(dict.fromkeys(r[1] for r in rows))
print("MiB " + " ".join(f"{x:>9}" for x in names))
for mib in sorted(set(r[0] for r in rows)):
    print(f"{mib:4d} " + " ".join(f"{r[2]:9.2f}" for x in names for r in rows if r[0] == mib and r[1] == x))

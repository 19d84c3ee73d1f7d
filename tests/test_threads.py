"""A Device used from many threads at once: one-liners, compiled ops in batches of their own,
uploads and reads, each result exact (issue 11: threads)."""

import threading
import time

import numpy as np

import dmlwgsl
from dmlwgsl.reference.depth_to_space import depth_to_space as ref_d2s
from dmlwgsl.reference.space_to_depth import space_to_depth as ref_s2d
from dmlwgsl.tensor import DataType, TensorDesc

THREADS = 4


def _run_threads(target, n=THREADS):
    """Run ``target(i)`` in ``n`` threads started together; re-raise the first failure."""
    errors = []
    start = threading.Barrier(n)

    def body(i):
        try:
            start.wait()
            target(i)
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def test_one_liners_from_many_threads(device):
    """The case that aborted the process (a staging buffer submitted while another thread had it
    mapped): every thread's results are exact, shapes mixed so the pools are shared."""

    def work(i):
        rng = np.random.default_rng(i)
        for k in range(25):
            shape = (1 + k % 2, 8 * (1 + i % 2), 4 + 2 * (k % 3), 6)
            x = rng.integers(-1000, 1000, size=shape).astype(np.int32)
            np.testing.assert_array_equal(dmlwgsl.depth_to_space(x, 2, "CRD", device=device), ref_d2s(x, 2, "CRD"))
            np.testing.assert_array_equal(dmlwgsl.space_to_depth(x, 2, device=device), ref_s2d(x, 2, "DCR"))

    _run_threads(work)


def test_batches_belong_to_their_thread(device):
    """Four threads, each with its own compiled op and its own batch (once sometimes wrong)."""

    def work(i):
        rng = np.random.default_rng(100 + i)
        x = rng.integers(0, 2**16, size=(2, 4 * (i + 1), 6, 8)).astype(np.uint16)
        xt = device.upload(x)
        op = dmlwgsl.compile_depth_to_space(
            dmlwgsl.DepthToSpaceDesc(xt.desc, TensorDesc(DataType.UINT16, (2, i + 1, 12, 16)), 2), device=device
        )
        outs = [device.tensor(op.output_desc) for _ in range(3)]
        for _ in range(10):
            for o in outs:
                device.fill(o.buffer, b"\xa5")
            with device.batch():
                for o in outs:
                    op(xt, o)
            for o in outs:
                np.testing.assert_array_equal(o.numpy(), ref_d2s(x, 2, "DCR"))

    _run_threads(work)


def test_open_batch_does_not_affect_other_threads(device):
    """Thread A holds a batch open with a dispatch recorded; thread B's one-liners, compiled ops
    and reads run at once and are exact; A's batch runs when A closes it."""
    x = np.arange(2 * 8 * 4 * 4, dtype=np.float32).reshape(2, 8, 4, 4)
    xt = device.upload(x)
    op = dmlwgsl.compile_depth_to_space(
        dmlwgsl.DepthToSpaceDesc(xt.desc, TensorDesc(DataType.FLOAT32, (2, 2, 8, 8)), 2), device=device
    )
    a_out = device.tensor(op.output_desc)
    device.fill(a_out.buffer, b"\xa5")
    recorded, b_done = threading.Event(), threading.Event()

    def thread_a():
        with device.batch():
            op(xt, a_out)
            recorded.set()
            assert b_done.wait(120)  # B ran while this batch was open

    def thread_b():
        assert recorded.wait(120)
        np.testing.assert_array_equal(dmlwgsl.depth_to_space(x, 2, device=device), ref_d2s(x, 2, "DCR"))
        b_out = device.tensor(op.output_desc)
        op(xt, b_out)  # not captured by A's batch: runs now
        np.testing.assert_array_equal(b_out.numpy(), ref_d2s(x, 2, "DCR"))
        assert (np.frombuffer(device.read(a_out.buffer), np.uint8) == 0xA5).all()  # A's not run yet
        b_done.set()

    _run_threads(lambda i: (thread_a, thread_b)[i](), n=2)
    np.testing.assert_array_equal(a_out.numpy(), ref_d2s(x, 2, "DCR"))


def test_uploads_and_reads_from_many_threads(device):
    """Uploads, writes at odd offsets and reads (small and past one staging chunk's worth of
    pieces) from several threads at once."""

    def work(i):
        rng = np.random.default_rng(200 + i)
        for k in range(10):
            a = rng.integers(0, 256, size=1000 + 4099 * k + i, dtype=np.uint8)
            t = device.upload(a)
            np.testing.assert_array_equal(t.numpy(), a)
            device.write(t.buffer, 3, a[:17])
            got = np.frombuffer(device.read(t.buffer, 0, 40), np.uint8)
            np.testing.assert_array_equal(got[3:20], a[:17])
            np.testing.assert_array_equal(got[:3], a[:3])
            t.buffer.destroy()

    _run_threads(work)


def test_upload_buffer_recorded_in_an_open_batch_is_not_reused(device):
    """This thread records a copy from an uploaded tensor's buffer into its open batch and drops
    the tensor; another thread's uploads of the same size must not write into that buffer before
    the batch is submitted (the copy sees the first data), and may reuse it after."""
    import gc

    a = np.arange(12373, dtype=np.int32)  # an odd size no other test uses
    out = device.tensor(TensorDesc(DataType.INT32, a.shape))
    t = device.upload(a)
    buf = t.buffer
    seen = []
    with device.batch():
        device.copy(t.buffer, 0, out.buffer, 0, a.nbytes)
        del t
        gc.collect()

        def other(i):
            for k in range(3):
                u = device.upload(a * 0 - k)
                seen.append(u.buffer is buf)
                np.testing.assert_array_equal(u.numpy(), a * 0 - k)
                del u

        _run_threads(other, n=1)
    assert not any(seen)
    np.testing.assert_array_equal(out.numpy(), a)
    after = [device.upload(a + k) for k in range(3)]  # two free buffers of this size: buf among them
    assert any(u.buffer is buf for u in after)


def test_a_poll_waiting_for_the_lock_skips_a_stopped_device():
    """A device's poll thread that waited for the poll lock while the device was released (its
    poll function swapped for a no-op by wgpu-py's stop()) must not poll the released device: that
    aborted the process in wgpu-native. Also with a real device, released while the lock is held."""
    from dmlwgsl import runtime

    class Poller:
        def __init__(self, func):
            self._poll_func = func

    class Raw:
        pass

    calls = []
    raw = Raw()
    raw._poller = Poller(calls.append)
    runtime._lock_polls(raw)
    raw._poller._poll_func(False)
    assert calls == [False]  # a live device polls through the lock
    waiting = threading.Thread(target=raw._poller._poll_func, args=(True,))
    with runtime._POLL_LOCK:
        waiting.start()  # blocks on the lock, like a poll thread behind a device being created
        raw._poller._poll_func = lambda _block: None  # wgpu-py's stop(), as a release does
    waiting.join(5)
    assert not waiting.is_alive() and calls == [False]

    # a real device released while another holds the lock: its poll thread must not poll it later
    dev = dmlwgsl.Device()
    poller = dev.device._poller
    with runtime._POLL_LOCK:
        poller.get_token()  # wake the poll thread: it now waits for the lock
        time.sleep(0.2)
        dev.device._release()  # stop() gives up joining it after a second
    poller.join(5)
    assert not poller.is_alive()

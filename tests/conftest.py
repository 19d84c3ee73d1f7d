"""Test fixtures: every test that takes ``device`` runs once per adapter backend on the machine
(here: Vulkan through lavapipe and GL through llvmpipe).

Set DMLWGSL_REQUIRE_BACKENDS=vulkan,gl (CI does) to turn a missing adapter into a failure
instead of fewer test runs.
"""

import os

import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

from dmlwgsl.runtime import Device, NoAdapterError, list_adapters  # noqa: E402

_NAMES = {"Vulkan": "vulkan", "OpenGL": "gl", "Metal": "metal", "D3D12": "dx12"}


def _backends() -> list[str]:
    found = []
    for a in list_adapters():
        name = _NAMES.get(a.info["backend_type"])
        if name and name not in found:
            found.append(name)
    return found


BACKENDS = _backends()
_devices: dict[str, Device] = {}


def pytest_sessionstart(session):
    required = [b for b in os.environ.get("DMLWGSL_REQUIRE_BACKENDS", "").split(",") if b]
    missing = [b for b in required if b not in BACKENDS]
    if missing:
        raise pytest.UsageError(f"required wgpu backends missing: {missing}; found {BACKENDS}")
    # Every backend's session device up front, before any GPU work: wgpu-native aborted the
    # process when a device was requested while another device's poll thread was polling (seen
    # with an OpenGL device live, under xdist, about 1 run in 10 of tests/test_runtime.py).
    for backend in BACKENDS:
        _create(backend)


def _create(backend: str) -> None:
    if backend not in _devices:
        try:
            _devices[backend] = Device(backend=backend)
        except NoAdapterError as e:
            if backend in os.environ.get("DMLWGSL_REQUIRE_BACKENDS", "").split(","):
                raise
            _devices[backend] = e


def other_session_device(device: Device) -> Device | None:
    """Another backend's session device (created before any GPU work), or None."""
    for d in _devices.values():
        if isinstance(d, Device) and d is not device:
            return d
    return None


def get_device(backend: str) -> Device:
    """One Device per backend for the whole session. An adapter that is listed but gives no
    device (GL on a headless NVIDIA host) skips its tests, unless CI requires that backend."""
    _create(backend)
    if isinstance(_devices[backend], Exception):
        pytest.skip(f"{backend}: {_devices[backend]}")
    return _devices[backend]


@pytest.fixture(scope="session", params=BACKENDS)
def device(request) -> Device:
    """A dmlwgsl Device, once per available backend."""
    return get_device(request.param)


@pytest.fixture
def rng(request):
    """A numpy Generator seeded from the test's name, so failures reproduce."""
    import zlib

    import numpy as np

    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))

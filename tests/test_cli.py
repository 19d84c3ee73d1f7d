"""The dmlwgsl command: info, check (exit codes, progress lines, summary) and bench."""

import pytest

from dmlwgsl import checks, cli


def test_info(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "chosen adapter:" in out and "max-storage-buffer-binding-size" in out
    assert "depth_to_space (v0, 1): FLOAT32, FLOAT16" in out and "INT64" in out


@pytest.mark.parametrize("backend", ["vulkan", "gl"])
def test_info_names_the_driver(capsys, backend):
    """Software adapters' speed depends on the Mesa release: `info` (and every benchmark report)
    names the driver as the adapter describes it."""
    import json

    assert cli.main(["info", "--backend", backend, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert "Mesa" in info["driver"]  # lavapipe / llvmpipe
    assert cli.main(["info", "--backend", backend]) == 0
    assert f"driver: {info['driver']}" in capsys.readouterr().out


@pytest.mark.parametrize("backend", ["vulkan", "gl"])
def test_check_passes_and_reports(capsys, backend):
    from conftest import BACKENDS

    if backend not in BACKENDS:
        pytest.fail(f"{backend} adapter missing")
    assert cli.main(["check", "--backend", backend, "--op", "depth_to_space", "--op", "resample"]) == 0
    out = capsys.readouterr().out
    assert "depth_to_space: 44 passed, 0 failed, 0 skipped, 11 data types" in out
    assert "resample: 16 passed, 0 failed, 0 skipped" in out and "60 passed, 0 failed, 0 skipped" in out


def test_check_fails_with_exit_1(capsys, monkeypatch):
    def broken():
        def run(device):
            raise AssertionError("planted mismatch")

        yield checks.Case("depth_to_space", "float32", "planted", run)

    monkeypatch.setitem(checks.OPERATORS, "depth_to_space", broken)
    assert cli.main(["check", "--op", "depth_to_space"]) == 1
    out = capsys.readouterr().out
    assert "FAIL depth_to_space float32 planted: planted mismatch" in out and "0 passed, 1 failed" in out


def test_check_counts_skipped_apart(capsys, monkeypatch):
    """A case the adapter cannot run is skipped with its reason: never passed, never failed."""

    def cases():
        yield checks.Case("depth_to_space", "float32", "runs", lambda device: None)

        def cannot(device):
            raise checks.Skipped("dot4 kernel: the adapter lacks the WGSL feature packed_4x8_integer_dot_product")

        yield checks.Case("depth_to_space", "float32", "cannot", cannot)

    monkeypatch.setitem(checks.OPERATORS, "depth_to_space", cases)
    assert cli.main(["check", "--op", "depth_to_space"]) == 0
    out = capsys.readouterr().out
    assert "depth_to_space: 1 passed, 0 failed, 1 skipped" in out
    assert "SKIP depth_to_space: 1 case(s): dot4 kernel: the adapter lacks" in out
    assert "1 passed, 0 failed, 1 skipped" in out.splitlines()[-1]


@pytest.mark.parametrize("argv", [["info", "--backend", "metal"], ["info", "--adapter", "no-such-gpu"]])
def test_missing_adapter_is_one_line(capsys, argv):
    assert cli.main(argv) == 2
    cap = capsys.readouterr()
    # the runtime's NoAdapterError, in one line: what was looked for, what was found, the hint
    assert cap.err.startswith("dmlwgsl: no wgpu adapter matches") and len(cap.err.strip().splitlines()) == 1
    assert "found: llvmpipe" in cap.err and "mesa-vulkan-drivers" in cap.err and "Traceback" not in cap.err


def test_bench_help_shows_the_benchmarks_options(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "resample", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--quick", "--dtype", "--shape", "--reps", "--plot", "--no-ort"):
        assert opt in out
    assert cli.main(["bench"]) == 2 and "sweep" in capsys.readouterr().out


@pytest.mark.parametrize(
    "op,extra",
    [
        ("space_to_depth", ["--dtype", "uint8"]),
        ("depth_to_space", ["--dtype", "int64"]),
        ("resample", []),
        ("convolution_integer", []),
    ],
)
def test_bench_quick(capsys, op, extra):
    assert cli.main(["bench", op, "--quick", "--reps", "3", "--no-ort"] + extra) == 0
    out = capsys.readouterr().out
    assert op in out and "adapter:" in out
    assert " 0.0 " not in out  # units fit the figures


def _cli(env_extra):
    import os
    import subprocess
    import sys

    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-m", "dmlwgsl.cli", "info"], capture_output=True, text=True, env=env)


def test_info_says_when_gl_stands_in_for_vulkan():
    """With the Vulkan loader finding no driver (VK_ICD_FILENAMES points nowhere), GL is used and said."""
    from conftest import BACKENDS

    if "gl" not in BACKENDS:
        pytest.skip("no GL adapter on this machine")
    r = _cli({"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json"})
    assert r.returncode == 0 and "(OpenGL)" in r.stdout
    assert "note: no Vulkan adapter found, so the GL one is used" in r.stdout


def test_no_adapter_at_all_is_one_line():
    r = _cli(
        {
            "VK_ICD_FILENAMES": "/nonexistent.json",
            "VK_DRIVER_FILES": "/nonexistent.json",
            "__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent.json",
        }
    )
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr.startswith("dmlwgsl: no wgpu adapter matches any backend") and len(r.stderr.strip().splitlines()) == 1
    )
    assert "found: none" in r.stderr and "mesa-vulkan-drivers" in r.stderr

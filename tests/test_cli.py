"""The dmlwgsl command: info, check (exit codes, progress lines, summary) and bench."""

import pytest

from dmlwgsl import checks, cli


def test_info(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "chosen adapter:" in out and "max-storage-buffer-binding-size" in out
    assert "depth_to_space (v0, 1): FLOAT32, FLOAT16" in out and "INT64" in out


@pytest.mark.parametrize("backend", ["vulkan", "gl"])
def test_check_passes_and_reports(capsys, backend):
    from conftest import BACKENDS

    if backend not in BACKENDS:
        pytest.fail(f"{backend} adapter missing")
    assert cli.main(["check", "--backend", backend, "--op", "depth_to_space", "--op", "resample"]) == 0
    out = capsys.readouterr().out
    assert "depth_to_space: 44 passed, 0 failed, 11 data types" in out
    assert "resample: 16 passed, 0 failed" in out and "60 passed, 0 failed" in out


def test_check_fails_with_exit_1(capsys, monkeypatch):
    def broken():
        def run(device):
            raise AssertionError("planted mismatch")

        yield checks.Case("depth_to_space", "float32", "planted", run)

    monkeypatch.setitem(checks.OPERATORS, "depth_to_space", broken)
    assert cli.main(["check", "--op", "depth_to_space"]) == 1
    out = capsys.readouterr().out
    assert "FAIL depth_to_space float32 planted: planted mismatch" in out and "0 passed, 1 failed" in out


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
    assert cli.main(["bench", op, "--quick", "--reps", "3"] + extra) == 0
    out = capsys.readouterr().out
    assert op in out and "adapter:" in out

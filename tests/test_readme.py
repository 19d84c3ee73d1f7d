"""The README's Python example runs as written and does what it says."""

import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example():
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    x, y = scope["x"], scope["y"]
    assert np.array_equal(scope["z"], x)
    # CRD is torch's pixel_shuffle: output[n, c, h*b + i, w*b + j] = input[n, c*b*b + i*b + j, h, w]
    assert y.shape == (1, 4, 64, 64) and y[0, 1, 2 * 5 + 1, 2 * 7 + 0] == x[0, 1 * 4 + 1 * 2 + 0, 5, 7]
    assert scope["r"].shape == (1, 16, 64, 64)
    c, img = scope["c"], scope["img"].astype(np.int64) - 1
    assert c.dtype == np.int32 and c.shape == (1, 1, 6, 6) and c[0, 0, 0, 0] == 72
    sums = sum(img[0, 0, i : i + 6, j : j + 6] for i in range(3) for j in range(3))
    assert np.array_equal(c[0, 0], sums) and c.min() > 0
    # The DML-shaped chain uploads real data (NHWC strides kept) and gets it back through both ops.
    assert scope["a"].desc.element_strides == (56 * 56 * 64, 1, 56 * 64, 64)
    assert np.array_equal(scope["result"], scope["frames"].transpose(0, 3, 1, 2))


def test_readme_first_two_commands_are_the_main_job_and_the_tests():
    lines = [l for l in README.read_text().splitlines() if l.startswith("bash ")]
    assert "dmlwgsl check" in lines[0] and "pytest" in lines[1]
    ci = (README.parent / ".ci" / "run").read_text()
    assert ".venv/bin/python -m pytest -q" in ci and ".venv/bin/dmlwgsl check" in ci

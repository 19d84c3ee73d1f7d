"""The README's Python example runs as written and does what it says."""

import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example():
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert np.array_equal(scope["z"], scope["x"])
    assert scope["y"].shape == (1, 4, 64, 64) and scope["r"].shape == (1, 16, 64, 64)
    assert scope["c"].dtype == np.int32 and scope["result"].shape == (8, 64, 56, 56)


def test_readme_first_two_commands_are_the_main_job_and_the_tests():
    lines = [l for l in README.read_text().splitlines() if l.startswith("bash ")]
    assert "dmlwgsl check" in lines[0] and "pytest" in lines[1]
    ci = (README.parent / ".ci" / "run").read_text()
    assert ".venv/bin/python -m pytest -q" in ci and ".venv/bin/dmlwgsl check" in ci

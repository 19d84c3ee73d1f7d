"""onnx's backend node tests: the collected cases by operator, and onnx's own BackendTest run on
dmlwgsl's ONNX backend (:mod:`dmlwgsl.onnx_backend`), once per adapter.

``onnx.backend.test.case.node.collect_testcases`` registers cases in a module-global list, so
calling it from several test files mixes their results; every test file goes through here.
"""

from __future__ import annotations

import re
import warnings

_ALL: list = []

#: The node tests of the backend's five operators (not the ``_expanded`` ones: those run the
#: operator's function body, made of Reshape and Transpose nodes); onnx names them per device,
#: and the bound backend supports onnx's "CPU" only (it stands for the adapter given).
INCLUDE = re.compile(r"^test_(depthtospace|spacetodepth|convinteger|resize|upsample)(_(?!.*expanded).*)?_cpu$")

#: Node tests DirectML cannot express, and why; each is reported as skipped with its reason.
#: (The reason rides in the pattern as a regex comment, which onnx's skip message prints.)
EXCLUDED = {
    r"^test_resize_.*cubic": "mode cubic - DirectML Resample interpolates nearest and linear only",
    r"^test_resize_tf_crop_and_resize_extrapolation_value": (
        "extrapolation_value - the ROI samples outside the input where ONNX writes the fill value, DirectML clamps"
    ),
}


def node_cases(op_type: str) -> list:
    """The collected cases whose graph is a single ``op_type`` node."""
    if not _ALL:
        from onnx.backend.test.case.node import collect_testcases

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _ALL.extend(collect_testcases())
    return [c for c in _ALL if len(c.model.graph.node) == 1 and c.model.graph.node[0].op_type == op_type]


def backend_test_cases(device, suffix: str, module: str) -> dict:
    """unittest classes running onnx's BackendTest for the five operators on ``device`` through
    :func:`dmlwgsl.onnx_backend.bound`, named ``OnnxBackend<kind>Test_<suffix>``; the tests of
    other operators are left out, the :data:`EXCLUDED` ones skip with their reason."""
    import onnx.backend.test

    from dmlwgsl import onnx_backend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bt = onnx.backend.test.BackendTest(onnx_backend.bound(device), module)
    for pattern, reason in EXCLUDED.items():
        bt.exclude(f"{pattern}(?#{reason})")
    cases = {}
    for name, cls in bt.test_cases.items():
        tests = [a for a in list(vars(cls)) if a.startswith("test_")]
        for a in tests:
            if not INCLUDE.search(a):
                delattr(cls, a)
        if not any(INCLUDE.search(a) for a in tests):
            continue
        cls.__name__ = cls.__qualname__ = f"{name}_{suffix}"
        cases[cls.__name__] = cls
    return cases

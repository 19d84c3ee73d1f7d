"""The onnx backend node test cases, collected once per test session.

``onnx.backend.test.case.node.collect_testcases`` registers cases in a module-global list, so
calling it from several test files mixes their results; every test file goes through here.
"""

from __future__ import annotations

import warnings

_ALL: list = []


def node_cases(op_type: str) -> list:
    """The collected cases whose graph is a single ``op_type`` node."""
    if not _ALL:
        from onnx.backend.test.case.node import collect_testcases

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _ALL.extend(collect_testcases())
    return [c for c in _ALL if len(c.model.graph.node) == 1 and c.model.graph.node[0].op_type == op_type]

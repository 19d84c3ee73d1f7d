"""The sweep (dmlwgsl bench sweep): the grid covers every dimension, rows carry the documented
fields, the summary finds the worst row and the rows slower than torch, and a smoke subset runs
exactly on this machine's adapters (CI)."""

import json
import math

import pytest

from dmlwgsl.cli import _bench_module

sweep = _bench_module("sweep")


def configs(cases, op):
    return [c.config for c in cases if c.op == op]


@pytest.mark.parametrize("quick", [True, False])
def test_grid_has_every_dimension(quick):
    cases = sweep.grid(quick)
    assert [c.label for c in cases] == [c.label for c in sweep.grid(quick)]  # seeded: same rows, same order
    for op in ("depth_to_space", "space_to_depth"):
        cs = configs(cases, op)
        assert {c["block_size"] for c in cs} == {2, 3, 4, 8}
        assert {c["order"] for c in cs} == {"DCR", "CRD"}
        assert {c["input_layout"] for c in cs} == {"packed", "nhwc", "broadcast"}
        assert {c["output_layout"] for c in cs} == {"packed", "window"}
        assert {c["shape_kind"] for c in cs} == {"large aligned", "odd/prime", "small"}
        types = {c["dtype"] for c in cs}
        assert set(sweep.MAIN_TYPES) <= types and (quick or len(types) == 11)
        assert [1, 16, 32, 32] in [c["input_shape"] for c in cs if op == "depth_to_space"] or op == "space_to_depth"
    rs = configs(cases, "resample")
    assert {c["mode"] for c in rs} == {"nearest", "linear"}
    scales = {round(s, 6) for c in rs for s in c["scales"]}
    assert {0.5, round(1 / 3, 6), 1.25, 1.5, 2.0, 3.0, 0.25} <= scales
    assert any(len(set(c["scales"][-2:])) == 2 for c in rs)  # mixed per axis
    assert {tuple(c["axes"]) for c in rs} >= {(3,), (2, 3), (1, 2, 3), (0, 1, 2, 3)}
    assert {len(c["input_shape"]) for c in rs} == {1, 2, 3, 4}
    assert {c["dtype"] for c in rs} == {"float32", "float16", "int8", "uint8"}
    assert {c["input_layout"] for c in rs} >= {"packed", "nhwc", "padded"}
    assert {round(1 / c["scales"][-1]) for c in rs if c["antialias"]} == {2, 3, 4}
    cv = configs(cases, "convolution_integer")
    assert {c["name"] for c in cv} >= {"layer1", "layer2", "layer3", "layer4", "stem7x7s2", "depthwise", "1x1", "1d-k3"}
    assert {(c["dtype"], c["filter_dtype"]) for c in cv} == {
        ("uint8", "int8"),
        ("uint8", "uint8"),
        ("int8", "int8"),
        ("int8", "uint8"),
    }
    assert {c["zero_points"] for c in cv} == {"per-channel", "per-tensor", "none"}
    assert {c["input_shape"][1] for c in cv} >= {3, 24}
    assert any(c["group_count"] == c["input_shape"][1] for c in cv) and {2, 32} <= {c["group_count"] for c in cv}
    for c in cv:
        assert c["filter_shape"][1] * c["group_count"] == c["input_shape"][1]


def test_summary_worst_geomean_slower_than_torch_and_inexact():
    cfg = {"input_shape": [1, 16, 4, 4], "order": "DCR", "block_size": 2, "dtype": "float32"}
    cfg.update(input_layout="packed", output_layout="packed")
    rows = [
        dict(op="depth_to_space", config=cfg, gpu_ms=1.0, pct_of_roofline=50.0, exact=True, check="exact"),
        dict(op="depth_to_space", config=cfg, gpu_ms=2.0, pct_of_roofline=200.0, exact=True, check="exact"),
        dict(op="depth_to_space", config=cfg, gpu_ms=1.0, pct_of_roofline=100.0, exact=False, check="1 of 4 differ"),
    ]
    rows[0].update(torch_ms=0.5, vs_torch=0.5, torch_peer="view+permute+contiguous")
    s = sweep.summary(rows)
    assert s["all"]["rows"] == 3 and s["all"]["worst_pct"] == 50.0
    assert math.isclose(s["all"]["geomean_pct"], 100.0)
    assert len(s["slower_than_torch"]) == 1 and "view+permute" in s["slower_than_torch"][0]
    assert len(s["inexact"]) == 1 and "1 of 4 differ" in s["inexact"][0]


def test_smoke_subset_runs_exact(tmp_path, capsys):
    """One row of each kind on the default adapter: timed, exact, every documented field."""
    out = tmp_path / "rows.json"
    assert sweep.main(["--smoke", "--reps", "2", "-q", "--no-ort", "--no-torch", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    text = capsys.readouterr().out
    assert "summary" in text and "geometric mean" in text
    ops = {r["op"] for r in rows}
    assert ops == {"depth_to_space", "space_to_depth", "resample", "convolution_integer"}
    for r in rows:
        assert r["exact"] is True and r["gpu_ms"] > 0 and r["bytes_moved"] > 0 and r["pct_of_roofline"] > 0
        assert r["kernel"] and r["numpy_e2e_ms"] > 0
        assert r["adapter"] and "Mesa" in r["driver"]  # the CI adapters are Mesa's
        c = r["config"]
        assert {"input_shape", "output_shape", "dtype", "input_layout"} <= set(c)
        need = {
            "depth_to_space": {"block_size", "order"},
            "space_to_depth": {"block_size", "order"},
            "resample": {"mode", "scales"},
            "convolution_integer": {"filter_shape", "filter_dtype", "group_count", "strides", "dilations"},
        }[r["op"]]
        assert need <= set(c)
        if r["op"] == "convolution_integer":
            assert r["ops"] > 0 and r["roofline"] in ("copy", "dp4a")
    # A saved run replays with no GPU.
    assert sweep.main(["--from-json", str(out)]) == 0
    assert "summary" in capsys.readouterr().out


def _random_desc(case):
    """The DML description a random row's measurement builds (validated, no GPU)."""
    import numpy as np

    from dmlwgsl.ops import resample as rs
    from dmlwgsl.ops.depth_to_space import DepthToSpaceDesc
    from dmlwgsl.ops.space_to_depth import SpaceToDepthDesc
    from dmlwgsl.tensor import DataType, TensorDesc
    from dmlwgsl.testing import strided_desc

    c = case.config
    if case.op == "convolution_integer":
        return sweep.conv_case(c, np.random.default_rng(0)).desc
    dt = DataType.parse(c["dtype"])
    ind = strided_desc(dt, c["input_shape"], c["input_layout"])
    if case.op == "resample":
        r = len(c["input_shape"])
        d = rs.Resample1Desc(ind, TensorDesc(dt, c["output_shape"]), c["mode"], c["scales"], (0.5,) * r, (-0.5,) * r)
    else:
        outd = strided_desc(dt, c["output_shape"], c["output_layout"], output=True)
        d = (DepthToSpaceDesc if case.op == "depth_to_space" else SpaceToDepthDesc)(
            ind, outd, c["block_size"], c["order"]
        )
    d.validate()
    return d


@pytest.mark.parametrize("quick", [True, False])
def test_random_rows_are_seeded_valid_and_off_the_grid(quick):
    """--random N: N rows per operator, the same for the same seed whatever --op selects, every
    row a valid description, and rows the grid does not have (block sizes 5-7, scales drawn from
    a range, layers of any channel count)."""
    a = sweep.random_grid(12, 1, quick)
    assert [c.label for c in a] == [c.label for c in sweep.random_grid(12, 1, quick)]
    assert [c.label for c in a] != [c.label for c in sweep.random_grid(12, 2, quick)]
    only = sweep.random_grid(12, 1, quick, ("resample",))
    assert [c.label for c in only] == [c.label for c in a if c.op == "resample"]
    for op in sweep.OPS:
        assert sum(c.op == op for c in a) == 12
    for c in a:
        assert "random" in c.marks
        _random_desc(c)
    many = sweep.random_grid(60, 3, quick)
    assert {c.config["block_size"] for c in many if "block_size" in c.config} & {5, 6, 7}
    grid_scales = {round(s, 6) for c in sweep.grid(quick) if c.op == "resample" for s in c.config["scales"]}
    assert any(round(s, 6) not in grid_scales for c in many if c.op == "resample" for s in c.config["scales"])
    assert {c.config["input_shape"][1] for c in many if c.op == "convolution_integer"} - {3, 24, 64, 96, 128, 256, 512}


def test_random_quick_rows_run_exact(tmp_path):
    """Two random --quick rows per operator on this machine's adapter: exact (the sweep exits 0)."""
    out = tmp_path / "rows.json"
    args = [
        "--random",
        "2",
        "--seed",
        "5",
        "--quick",
        "--reps",
        "2",
        "-q",
        "--no-ort",
        "--no-torch",
        "--json",
        str(out),
    ]
    assert sweep.main(args) == 0
    rows = json.loads(out.read_text())
    assert len(rows) == 8 and all(r["exact"] is True for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["vulkan", "gl"])
def test_random_quick_rows_many_seeds_exact(tmp_path, backend):
    """Off-grid correctness: 15 random --quick rows per operator for each of three seeds, on
    lavapipe and on llvmpipe GL, every one exact (the sweep exits 1 on an inexact row)."""
    for seed in (11, 12, 13):
        out = tmp_path / f"rows{seed}.json"
        args = ["--random", "15", "--seed", str(seed), "--quick", "--reps", "1", "-q", "--no-ort", "--no-torch"]
        assert sweep.main(args + ["--backend", backend, "--json", str(out)]) == 0
        rows = json.loads(out.read_text())
        assert len(rows) == 60 and all(r["exact"] is True for r in rows)

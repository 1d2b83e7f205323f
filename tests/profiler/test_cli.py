"""`python -m ndflow.profiler`: key-node iterations, warm-up exclusion, reports, bad input.

The default suite runs the command in-process (cli.main on a temporary script); one slow test
runs it as a subprocess, as a user does."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from ndflow.profiler import cli
from ndflow.runtime import plan as plan_module
from tests.profiler import scripts


def _run(tmp_path, script_text, *args, fmt="csv,json", extra=()):
    script = scripts.write(tmp_path, "train.py", script_text)
    out = tmp_path / "out"
    code = cli.main(["--output_path", str(out), "--format", fmt, *extra, script, *args])
    return code, out


def _profile(out) -> dict:
    with open(out / "profile.json") as f:
        return json.load(f)


def test_session_loop_key_node_is_the_global_step_and_warmup_is_excluded(tmp_path, capsys):
    code, out = _run(tmp_path, scripts.SESSION_LOOP, "6", extra=["--iter_start", "2"])
    assert code == 0
    text = capsys.readouterr().out
    doc = _profile(out)
    # the optimizer's global-step increment, once per step: 6 iterations, 4 kept
    assert doc["key_reason"].startswith("AssignAddVariableOp node")
    assert f"key node {doc['key_node']}" in text
    assert len(doc["iterations"]) == 6 and doc["iterations_kept"] == 4
    assert [it["kept"] for it in doc["iterations"]] == [False, False, True, True, True, True]
    matmul = next(n for n in doc["nodes"] if n["name"] == "MatMul")
    assert matmul["count"] == 4  # one per kept iteration
    assert matmul["input_shapes"] == [[16, 12], [12, 6]]
    assert matmul["flops"] == 2 * 16 * 6 * 12
    assert matmul["gflops_per_s"] == pytest.approx(
        matmul["flops"] * 4 / (matmul["total_us"] * 1e3), rel=1e-6)
    assert {r["op_type"] for r in doc["op_types"]} >= {"MatMul", "Relu", "AssignAddVariableOp"}
    with open(out / "iterations.csv") as f:
        assert len(list(csv.DictReader(f))) == 6
    # the MatMul is eligible for reduced precision; AMP is off here
    [mm] = [r for r in doc["reduced_precision"]["nodes"] if r["name"] == "MatMul"]
    assert not mm["reduced_precision"] and mm["reason"].startswith("rewrite off")
    assert mm["dims"] == {"M": 16, "N": 6, "K": 12} and not mm["tensor_core_dims"]
    assert plan_module._profiler is None  # uninstalled: plans run their plain code again


def test_explicit_key_node_and_iter_stop(tmp_path):
    code, out = _run(tmp_path, scripts.SESSION_LOOP, "5",
                     extra=["--key_node", "Relu", "--iter_start", "1", "--iter_stop", "3"])
    assert code == 0
    doc = _profile(out)
    assert doc["key_node"] == "Relu" and doc["key_reason"] == "given"
    assert len(doc["iterations"]) == 5 and doc["iterations_kept"] == 2


def test_tf_function_loop_proposes_the_plan_call(tmp_path, capsys):
    code, out = _run(tmp_path, scripts.FUNCTION_LOOP, "5")
    assert code == 0
    doc = _profile(out)
    assert doc["key_node"].startswith("plan:") and "step_fn" in doc["key_node"]
    assert len(doc["iterations"]) == 5
    assert "Tanh" in {r["op_type"] for r in doc["op_types"]}


def test_unknown_key_node_lists_candidates(tmp_path, capsys):
    code, out = _run(tmp_path, scripts.SESSION_LOOP, "3", extra=["--key_node", "Relux"])
    assert code == 2
    err = capsys.readouterr().err
    assert "Key node 'Relux' did not execute" in err and "Candidates:" in err
    assert "Relu" in err.split("Candidates:")[1]
    assert not (out / "profile.json").exists()


def test_failing_script_still_writes_its_iterations(tmp_path, capsys):
    code, out = _run(tmp_path, scripts.SESSION_LOOP, "6", "3", extra=["--key_node", "Relu"])
    assert code == 1
    assert "RuntimeError: failing at step 3" in capsys.readouterr().err
    doc = _profile(out)
    assert len(doc["iterations"]) == 4  # steps 0..3 ran their Relu before the failure
    assert not [p for p in os.listdir(out) if p.startswith(".tmp-")]  # no half-written file


def test_bad_arguments_fail_before_running(tmp_path, capsys):
    marker = tmp_path / "ran"
    script = scripts.write(tmp_path, "s.py", f"open({str(marker)!r}, 'w').close()\n")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli.main(["--output_path", str(blocker / "out"), script]) == 2
    assert "Cannot write the profile to" in capsys.readouterr().err
    assert cli.main(["--format", "csv,pdf", "--output_path", str(tmp_path / "o"), script]) == 2
    assert "unknown --format 'pdf'" in capsys.readouterr().err
    assert cli.main(["--iter_start", "3", "--iter_stop", "2", script]) == 2
    assert cli.main([str(tmp_path / "missing.py")]) == 2
    assert not marker.exists()
    assert blocker.read_text() == "x"


@pytest.mark.slow
def test_command_line_subprocess(tmp_path):
    script = scripts.write(tmp_path, "train.py", scripts.SESSION_LOOP)
    out = tmp_path / "out"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run(
        [sys.executable, "-m", "ndflow.profiler", "--iter_start", "1", "--output_path",
         str(out), "--format", "csv,json,tensorboard,trace", script, "4"],
        capture_output=True, text=True, cwd=root, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "global step 4" in proc.stdout and "Recommendations:" in proc.stdout
    assert _profile(out)["iterations_kept"] == 3
    assert list(out.glob("plugins/profile/*/*.trace.json.gz"))
    assert list(out.glob("*.trace.json.gz"))

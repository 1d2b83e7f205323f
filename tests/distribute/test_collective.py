"""The collective group across real worker processes on loopback (slow: each starts Python
processes): bucketed all-reduce and broadcast values, a peer killed mid-run, a worker that
cannot reach the others, mismatched variable shapes. Each must end with a TensorFlow-typed
error that names what went wrong, within the timeout — never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ndflow.distribute.run import free_port

WORKER = Path(__file__).resolve().parent / "workers" / "collective_worker.py"
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _run_workers(scenario: str, ranks=(0, 1), world: int = 2, timeout: float = 20.0,
                 wall: float = 110.0) -> list[str]:
    port = free_port()
    procs = []
    for rank in ranks:
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), TEST_TIMEOUT=str(timeout), PYTHONPATH=str(ROOT))
        procs.append(subprocess.Popen([sys.executable, str(WORKER), scenario], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True))
    outs = []
    for p in procs:
        out, _ = p.communicate(timeout=wall)
        outs.append(out)
    return outs


def _line(out: str, prefix: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.startswith(prefix)]
    assert lines, f"no {prefix!r} line in {out!r}"
    return lines[0]


def test_all_reduce_and_broadcast_values():
    import json
    for out in _run_workers("reduce"):
        got = json.loads(_line(out, "RESULT ")[len("RESULT "):])
        # ranks 0 and 1: tensor i holds rank + i, so the sum is 2i + 1
        assert got["sum"] == [1.0, 3.0, 5.0, 7.0, 9.0, 0, 1.0]
        assert got["int_sum"] == [3 * i for i in range(10)]
        assert got["mean0"] == 0.5 and got["bcast"] == [8.0] * 4
        assert got["inputs_untouched"]


def test_hvd_allgather_and_objects():
    import json
    for out in _run_workers("gather"):
        got = json.loads(_line(out, "RESULT ")[len("RESULT "):])
        assert got["eager"] == got["graph"] == [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
        assert got["objects"] == [{"rank": 0}, {"rank": 1}] and got["bcast"] == "from 1"


def test_a_killed_peer_fails_the_others_quickly():
    start = time.monotonic()
    survivor, _ = _run_workers("die")
    line = _line(survivor, "ERROR ")
    assert line.startswith(("ERROR UnavailableError", "ERROR DeadlineExceededError")), line
    assert "all-reduce of 1 tensors over 2 workers" in line
    assert float(_line(survivor, "ELAPSED ").split()[1]) < 20.0  # within the group's timeout
    assert time.monotonic() - start < 110.0


def test_an_unreachable_rank_zero_is_a_deadline_naming_the_address():
    (out,) = _run_workers("reduce", ranks=(1,), timeout=2.0)
    line = _line(out, "ERROR ")
    assert line.startswith("ERROR DeadlineExceededError: Rank 1 of 2 could not reach rank 0's "
                           "rendezvous at 127.0.0.1:"), line


@pytest.mark.parametrize("scenario", ["mismatch", "hvd_mismatch"])
def test_mismatched_variable_shapes_name_the_variable(scenario):
    a, b, name = (5, 3), (3, 5), "dense/kernel:0"  # hvd names variables as TF does
    if scenario == "mismatch":
        a, b, name = (3, 4), (4, 3), "dense/kernel"
    for out in _run_workers(scenario):
        line = _line(out, "ERROR ")
        assert line == (f"ERROR InvalidArgumentError: Mismatched variable across workers: "
                        f"'{name}' has shape {list(a)} (float32) on rank 0 but "
                        f"'{name}' has shape {list(b)} (float32) on rank 1"), line

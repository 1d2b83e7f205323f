"""The launcher `python -m ndflow.distribute.run`: the per-host environment of a multi-host
run (fast), and for real (slow): rank-prefixed output, a failing worker ending the run with a
non-zero status."""

from __future__ import annotations

import sys
import time

import pytest

from ndflow.distribute import run


def test_hosts_parsing():
    assert run.parse_hosts("h1:2,h2:2") == [("h1", 2), ("h2", 2)]
    assert run.parse_hosts("h1, h2:3") == [("h1", 1), ("h2", 3)]
    for bad, message in [("h1:0", "SLOTS >= 1"), ("h1:x", "HOST:SLOTS"), (",", "no host"),
                         ("h1:1,h1:2", "lists a host twice")]:
        with pytest.raises(ValueError, match=message):
            run.parse_hosts(bad)


def test_per_host_environment():
    plans = run.plan_workers([("h1", 2), ("h2", 2)], None, "h1", 29400)
    assert [(p.host, p.rank, p.local_rank) for p in plans] == \
        [("h1", 0, 0), ("h1", 1, 1), ("h2", 2, 0), ("h2", 3, 1)]
    assert plans[3].env == {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1",
                            "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h1", "MASTER_PORT": "29400",
                            "HOROVOD_RANK": "3", "HOROVOD_SIZE": "4", "HOROVOD_LOCAL_RANK": "1",
                            "HOROVOD_LOCAL_SIZE": "2"}
    fewer = run.plan_workers([("h1", 2), ("h2", 2)], 3, "h1", 1)
    assert [(p.host, p.env["LOCAL_WORLD_SIZE"]) for p in fewer] == \
        [("h1", "2"), ("h1", "2"), ("h2", "1")]
    with pytest.raises(ValueError, match="-np 5 must be between 1 and the 4 slots"):
        run.plan_workers([("h1", 2), ("h2", 2)], 5, "h1", 1)


def test_remote_workers_are_started_by_ssh():
    plan = run.plan_workers([("h1", 1), ("h2", 1)], None, "h1", 7)[1]
    cmd = run._command_for(plan, ["python", "train.py", "--lr", "0.1 x"], local=False)
    assert cmd[:4] == ["ssh", "-o", "BatchMode=yes", "h2"]
    assert "env HOROVOD_LOCAL_RANK=0" in cmd[4] and "RANK=1" in cmd[4]
    assert cmd[4].endswith("python train.py --lr '0.1 x'")


def test_command_line_errors(capsys):
    for argv, message in [(["python", "x.py"], "give -np N"),
                          (["--hosts", "a:1,b:1", "python", "x.py"], "--master-port is needed"),
                          (["-np", "2"], "no command to run")]:
        with pytest.raises(SystemExit):
            run.main(argv)
        assert message in capsys.readouterr().err


@pytest.mark.slow
def test_workers_get_ranks_and_prefixed_output(capfd):
    code = ("import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'], "
            "os.environ['LOCAL_RANK'], os.environ['MASTER_ADDR'])")
    assert run.main(["-np", "2", sys.executable, "-c", code]) == 0
    out = capfd.readouterr().out
    assert "[0]<stdout>:rank 0 of 2 0 127.0.0.1\n" in out
    assert "[1]<stdout>:rank 1 of 2 1 127.0.0.1\n" in out


@pytest.mark.slow
def test_a_failing_worker_terminates_the_others(capfd):
    code = ("import os, sys, time\n"
            "if os.environ['RANK'] == '1': sys.exit(3)\n"
            "time.sleep(120)")
    start = time.monotonic()
    assert run.main(["-np", "2", sys.executable, "-c", code]) == 3
    assert time.monotonic() - start < 30  # rank 0's two-minute sleep was cut short
    assert "worker 1 exited with status 3; terminating the other workers" in capfd.readouterr().err

"""Training across machines: two test hosts built as Linux network namespaces joined by a veth
pair (10.200.<n>.1 and .2), one worker in each, started by the launcher on each host
(`--hosts A:1,B:1 --this-host ...`), train the MNIST model together over the veth link and end
with identical weights equal to one process on the whole batch. Needs root and iproute2;
skipped with the reason otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parent / "workers" / "mnist_hvd_worker.py"
LAUNCHER = ROOT / "ndflow" / "distribute" / "run.py"  # run as a file: it imports no ndflow
pytestmark = pytest.mark.slow


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)


@pytest.fixture
def two_hosts():
    """Two network namespaces with a veth pair; yields [(namespace, address), ...]."""
    if shutil.which("ip") is None:
        pytest.skip("iproute2's `ip` is not installed")
    if os.geteuid() != 0:
        pytest.skip("creating network namespaces needs root")
    tag = os.getpid() % 200 + 20
    names = [f"ndflow{tag}a", f"ndflow{tag}b"]
    hosts = [(names[0], f"10.200.{tag}.1"), (names[1], f"10.200.{tag}.2")]
    probe = _ip("netns", "add", names[0])
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace here: {probe.stderr.strip()}")
    try:
        _ip("netns", "add", names[1]).check_returncode()
        _ip("link", "add", f"nd{tag}a", "type", "veth", "peer", "name",
            f"nd{tag}b").check_returncode()
        for (ns, address), dev in zip(hosts, (f"nd{tag}a", f"nd{tag}b")):
            _ip("link", "set", dev, "netns", ns).check_returncode()
            for cmd in (["addr", "add", f"{address}/24", "dev", dev], ["link", "set", dev, "up"],
                        ["link", "set", "lo", "up"]):
                _ip("netns", "exec", ns, "ip", *cmd).check_returncode()
        yield hosts
    finally:
        for ns in names:
            _ip("netns", "del", ns)  # takes its end of the veth pair with it


def test_two_hosts_train_over_a_veth_link(two_hosts, tmp_path):
    (ns_a, addr_a), (ns_b, addr_b) = two_hosts
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TF_CONFIG",
                        "GLOO_SOCKET_IFNAME")}
    env["PYTHONPATH"] = str(ROOT)
    (tmp_path / "two").mkdir()
    (tmp_path / "one").mkdir()
    procs = []
    for ns, address in two_hosts:
        procs.append(subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, str(LAUNCHER),
             "--hosts", f"{addr_a}:1,{addr_b}:1", "--master-port", "29555",
             "--this-host", address, sys.executable, str(WORKER), "tf2",
             str(tmp_path / "two")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    procs.append(subprocess.Popen([sys.executable, str(WORKER), "tf2", str(tmp_path / "one")],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True))
    outs = [p.communicate(timeout=110)[0] for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-3000:]
    assert "[0]<stdout>:done rank 0 of 2" in outs[0]
    assert "[1]<stdout>:done rank 1 of 2" in outs[1]
    w0, w1 = (np.load(tmp_path / "two" / f"rank{r}.npz") for r in (0, 1))
    single = np.load(tmp_path / "one" / "rank0.npz")
    for name in single.files:
        np.testing.assert_array_equal(w0[name], w1[name], err_msg=name)
        np.testing.assert_allclose(w0[name], single[name], rtol=1e-5, atol=1e-6, err_msg=name)

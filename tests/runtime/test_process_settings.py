"""The runtime keeps freed tensor memory in the heap (ndflow/runtime/memory.py)."""

import os
import subprocess
import sys

import pytest

_PROBE = """
import ndflow, torch
def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * 4096
t = torch.ones(4 * 1024 * 1024)   # 16 MiB, touched
before = rss()
del t
print(before - rss())
"""


def _released_bytes(env_value: str) -> int:
    env = dict(os.environ, NDFLOW_KEEP_FREED_MEMORY=env_value)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a fresh process: CI's slow pass runs it
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc tuning is Linux-only")
def test_freed_tensor_memory_stays_in_the_process():
    assert _released_bytes("1") < 2 * 1024 * 1024


@pytest.mark.slow  # a fresh process: CI's slow pass runs it
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc tuning is Linux-only")
def test_switch_off_restores_glibc_behaviour():
    assert _released_bytes("0") > 12 * 1024 * 1024


@pytest.mark.slow  # a fresh process: CI's slow pass runs it
def test_intra_op_threads_follow_tf_num_intraop_threads():
    probe = "import ndflow, torch; print(torch.get_num_threads())"
    env = dict(os.environ, TF_NUM_INTRAOP_THREADS="1")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "1"

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

# a "training step" making two 64 MiB tensors (above glibc's largest mmap threshold, 32 MiB):
# the fraction of their pages faulted in again per step, after three steps to settle
_STEP_PROBE = """
import resource, ndflow, torch
elements = 64 * 1024 * 1024 // 4
def step():
    t = torch.ones(elements)
    return float((t * 2)[0])
for _ in range(3):
    step()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
pages = elements * 4 // 4096
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / 10 / pages)
"""


def _run(probe: str, env_value: str) -> float:
    env = dict(os.environ, NDFLOW_KEEP_FREED_MEMORY=env_value)
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a fresh process: CI's slow pass runs it
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc tuning is Linux-only")
def test_freed_tensor_memory_stays_in_the_process():
    assert _run(_PROBE, "1") < 2 * 1024 * 1024
    assert _run(_STEP_PROBE, "1") < 0.25   # large blocks are reused, not mapped anew


@pytest.mark.slow  # a fresh process: CI's slow pass runs it
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc tuning is Linux-only")
def test_switch_off_restores_glibc_behaviour():
    assert _run(_PROBE, "0") > 12 * 1024 * 1024
    assert _run(_STEP_PROBE, "0") > 1.5    # both tensors' pages faulted in every step


@pytest.mark.slow  # a fresh process: CI's slow pass runs it
def test_intra_op_threads_follow_tf_num_intraop_threads():
    probe = "import ndflow, torch; print(torch.get_num_threads())"
    env = dict(os.environ, TF_NUM_INTRAOP_THREADS="1")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "1"

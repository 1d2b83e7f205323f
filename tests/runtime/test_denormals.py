"""Subnormal floats flushed to zero while ndflow's kernels run, as TensorFlow's CPU kernels
flush them (ndflow/kernels/denormals.py): results against TF 2.21's own
(tests/fixtures/subnormals), the caller's arithmetic left alone, and ATen's worker threads
flushed however they were started."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import denormals
from tests import fixture_modules

CONFIGS = fixture_modules.load("subnormals")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "subnormals" / "values.json").read_text())
CASES = CONFIGS.cases(tf)

# Kernels whose instructions differ from TensorFlow's, so flushing gives other results.
DIFFERENT = {
    "relu": "ATen's clamp reads the subnormal as 0; TF's Eigen max returns the input's bits",
    "exp": "ATen's vectorized exp scales by 2^k through the exponent bits, which FTZ leaves",
    "bfloat16_from_float": "ndflow rounds a Python float's bits to bfloat16; TF's conversion "
                           "flushes",
}


def _summary(name):
    return CONFIGS.summary(CASES[name]())


def _sign_bits(summary):
    return [np.signbit(v) for v in summary.get("values", ())]


def _caller_flushes() -> bool:
    return np.float32(1e-39) * np.float32(1.0) == 0.0


@pytest.mark.parametrize("name", sorted(set(CASES) - set(DIFFERENT)))
def test_results_match_tensorflow(name):
    got, want = _summary(name), TF_VALUES[name]
    assert got == want, name
    assert _sign_bits(got) == _sign_bits(want)   # -0.0 where TF gives -0.0


@pytest.mark.parametrize("name", sorted(DIFFERENT))
def test_listed_differences_are_current(name):
    """A listed case that starts matching TF leaves the list (and the note in docs/threads.md)."""
    assert _summary(name) != TF_VALUES[name], DIFFERENT[name]


def test_the_callers_arithmetic_keeps_subnormals():
    x = tf.constant([1.0])
    f = tf.function(lambda v: v * 2.0)
    for run in (lambda: x * 2.0, lambda: f(x), lambda: tf.reduce_sum(f(x))):
        run()
        assert not _caller_flushes()
        assert np.float64(1e-310) * 1.5 != 0.0


def test_a_caller_that_flushes_keeps_flushing():
    torch.set_flush_denormal(True)
    try:
        (tf.constant([1.0]) * 2.0).numpy()
        tf.function(lambda v: v + 1.0)(tf.constant([1.0]))
        assert _caller_flushes()
        assert denormals.enter() is False   # nothing to restore
    finally:
        torch.set_flush_denormal(False)
    assert not _caller_flushes()


def test_an_error_in_a_kernel_restores_the_mode():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))
    assert not _caller_flushes()


# Workers started by torch code before ndflow ran (so not inheriting the mode), a second
# calling thread with its own team, and a thread count raised later: each team's half of a
# large op is flushed too.
_WORKERS = r"""
import json, threading
import numpy as np, torch
N = 1 << 17
def torch_parallel_op():   # starts this thread's OpenMP workers with the mode off
    (torch.full([N], 1.0) * 2.0).sum()
def nonzeros(tf):
    x = tf.constant(np.full([N], 1e-39, np.float32))
    eager = np.count_nonzero((x * 2.0).numpy())
    graph = np.count_nonzero(tf.function(lambda v: v * 3.0)(x).numpy())
    return [int(eager), int(graph)]
torch.set_num_threads(2)
torch_parallel_op()
import ndflow as tf
out = {"main": nonzeros(tf)}
def other_thread():
    torch.set_num_threads(2)
    torch_parallel_op()
    out["thread"] = nonzeros(tf)
t = threading.Thread(target=other_thread)
t.start(); t.join()
torch.set_num_threads(1)
nonzeros(tf)
torch.set_num_threads(2)
torch_parallel_op()
out["raised"] = nonzeros(tf)
out["caller"] = float(np.float32(1e-39) * np.float32(1.0))
print(json.dumps(out))
"""


def test_every_worker_thread_flushes():
    env = dict(os.environ, OMP_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, "-c", _WORKERS], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {k: out[k] for k in ("main", "thread", "raised")} == {
        "main": [0, 0], "thread": [0, 0], "raised": [0, 0]}
    assert out["caller"] != 0.0

"""ndflow's numba kernels load from numba's disk cache in a second process.

numba caches a kernel's machine code (`cache=True`) only when the kernel closes over nothing:
a helper left as a closure cell instead of a module global makes every process compile it
again (about a second a kernel, on every program's first step) and add another file to the
cache. Two fresh processes build every kernel with one NUMBA_CACHE_DIR; the second must find
everything in it and write nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Builds the OpenMP callbacks (compiled when built) and runs the ops whose numba kernels
# compile on their first call.
_PROCESS = textwrap.dedent("""
    import ndflow as tf
    from ndflow.kernels import (conv_pool_numba, finite_numba, max_pool_numba, momentum_numba,
                                omp_pool, speculative_numba)
    if omp_pool.launcher() is not None:
        for build in (conv_pool_numba._callbacks, max_pool_numba._callbacks,
                      momentum_numba._callback, finite_numba._callback,
                      speculative_numba._callback):
            assert build() is not None, build
    n = 1 << 16
    tf.random.uniform([n]), tf.random.normal([n], dtype=tf.float64)
    tf.random.uniform([n], maxval=10, dtype=tf.int32)
    tf.where(tf.random.uniform([n]) < 0.5, tf.ones([n]), tf.zeros([n]))
    tf.random.shuffle(tf.range(n))
    rows = tf.data.Dataset.from_tensor_slices(tf.range(300_000))  # a bulk shuffle's order
    list(rows.shuffle(1000, seed=1).batch(100_000))
""")

# modules whose kernels the script reaches (a file of numba's cache names its module)
MODULES = ("philox_numba", "select", "philox_shuffle", "shuffle_buffer")
CALLBACK_MODULES = ("conv_pool_numba", "max_pool_numba", "momentum_numba", "finite_numba",
                    "speculative_numba")


def _snapshot(folder: str) -> dict:
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            st = os.stat(os.path.join(root, name))
            files[os.path.relpath(os.path.join(root, name), folder)] = (st.st_size,
                                                                        st.st_mtime_ns)
    return files


@pytest.mark.slow
def test_a_second_process_loads_every_kernel_from_numbas_cache(tmp_path):
    env = dict(os.environ, PYTHONPATH=REPO, NUMBA_CACHE_DIR=str(tmp_path))
    snapshots = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", _PROCESS], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        snapshots.append(_snapshot(str(tmp_path)))
    first, second = snapshots
    cached = " ".join(first)
    for module in MODULES:
        assert f"{module}." in cached, (module, sorted(first))
    from ndflow.kernels import omp_pool
    if omp_pool.launcher() is not None:
        for module in CALLBACK_MODULES:
            assert f"{module}." in cached, (module, sorted(first))
    # a kernel compiled again rewrites its index and adds a machine-code file
    assert second == first, sorted(set(second.items()) ^ set(first.items()))

"""ndflow's numba kernels load from numba's disk cache in a second process.

numba caches a kernel's machine code (`cache=True`) only when the kernel closes over nothing:
a helper left as a closure cell instead of a module global makes every process compile it
again (about a second a kernel, on every program's first step) and add another file to the
cache. `python -m ndflow.precompile` builds every kernel; run twice with one NUMBA_CACHE_DIR,
the second run must find everything in the cache and write nothing.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

from ndflow import precompile  # noqa: E402 - after the skip
from ndflow.kernels import omp_pool  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the folders holding ndflow's hand-written numba kernels (the JIT's generated kernels cache in
# the persistent cache directory a program names, tests/jit/test_persistent_cache.py)
KERNEL_FOLDERS = ("kernels", "data")


def _disk_cached_modules() -> set:
    """The modules of ndflow's hand-written kernels that numba caches on disk."""
    found = set()
    for folder in KERNEL_FOLDERS:
        for path in Path(REPO, "ndflow", folder).glob("*.py"):
            if "cache=True" in path.read_text():
                found.add(path.stem)
    return found


def test_precompile_builds_every_disk_cached_kernel_module():
    covered = {module for job in precompile.JOBS.values() for module in job.modules}
    assert covered == _disk_cached_modules()


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
    """`python -m ndflow.precompile` fills an empty cache with every kernel module's code; run
    again, it loads all of it and writes nothing."""
    env = dict(os.environ, PYTHONPATH=REPO, NUMBA_CACHE_DIR=str(tmp_path))
    snapshots = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-m", "ndflow.precompile"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        jobs = len(precompile.JOBS)
        assert f"{jobs} of {jobs} kernel groups" in proc.stdout, proc.stdout
        snapshots.append(_snapshot(str(tmp_path)))
    first, second = snapshots
    cached = " ".join(first)
    for job in precompile.JOBS.values():
        if not job.openmp or omp_pool.launcher() is not None:
            for module in job.modules:
                assert f"{module}." in cached, (module, sorted(first))
    # a kernel compiled again rewrites its index and adds a machine-code file
    assert second == first, sorted(set(second.items()) ^ set(first.items()))


# modules whose disk-cached kernels inline another module's numba helpers: numba keys a cached
# kernel on its own file's content, so each names the hash of the helpers' source it inlines
# (a change to the helpers then changes the kernels' file, and numba compiles them again)
INLINED_HELPERS = {"stateless_random_extra_numba": ("philox_numba", "_build_helpers")}


@pytest.mark.parametrize("module", sorted(INLINED_HELPERS))
def test_kernels_inlining_another_modules_helpers_name_their_source_hash(module):
    helper_module, builder = INLINED_HELPERS[module]
    source = inspect.getsource(getattr(importlib.import_module(
        f"ndflow.kernels.{helper_module}"), builder))
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    text = Path(REPO, "ndflow", "kernels", f"{module}.py").read_text()
    assert f"# {helper_module}.{builder}: {digest}" in text, (
        f"{helper_module}.{builder} changed: write `# {helper_module}.{builder}: {digest}` in "
        f"ndflow/kernels/{module}.py, so that numba's disk cache compiles its kernels again")

"""`XLA_FLAGS=--xla_dump_to=DIR`: each cluster compiled for a signature is written to DIR, as
XLA writes its modules there.

XLA dumps HLO; ndflow compiles no HLO, so it writes its own two stages under XLA's file
names (one sequence number per compilation, the cluster's name):
- `module_0000.cluster_0.before_optimizations.txt`: the cluster's graph specialized to the
  signature (static shapes), as GraphDef text, what the compiler starts from;
- `module_0000.cluster_0.ndflow_kernels.py`: what it made: the straight-line function the
  executable runs (library calls and fused kernels, executable.py) and the generated source of
  each fused kernel, ndflow's counterpart of XLA's optimized module.
Each file is written atomically; a directory that cannot be written gives one warning and no
dumps, never a failed compile.
"""

from __future__ import annotations

import itertools
import os
import re
import threading

from google.protobuf import text_format

from ndflow.core import logging
from ndflow.core.atomic_file import atomic_write

_sequence = itertools.count()
_lock = threading.Lock()
_warned: set = set()


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def dump_cluster(directory: str, name: str, signature: str, graph, run_source: str,
                 kernels: list) -> None:
    """Writes the two files of the module doc; `kernels` is [(ops description, source)]."""
    with _lock:
        seq = next(_sequence)
    base = os.path.join(directory, f"module_{seq:04d}.{_file_name(name)}")
    header = f"# ndflow cluster {name}, compiled for {signature}\n"
    made = [header, "# the function the executable runs (k: library call, f: fused kernel)\n",
            run_source, "\n"]
    for k, (what, source) in enumerate(kernels):
        made += [f"\n\n# -- fused kernel {k}: {what}\n", source.rstrip("\n"), "\n"]
    try:
        os.makedirs(directory, exist_ok=True)
        atomic_write(base + ".before_optimizations.txt",
                     (header + text_format.MessageToString(graph.as_graph_def())).encode())
        atomic_write(base + ".ndflow_kernels.py", "".join(made).encode())
    except OSError as e:
        if directory not in _warned:
            _warned.add(directory)
            logging.warning(f"--xla_dump_to={directory}: cannot write the compiled clusters "
                            f"there ({e.strerror or e}); nothing is dumped")

"""What a compiled cluster is, as text: `XLA_FLAGS=--xla_dump_to=DIR` writes it for each
cluster compiled, and `tf.function(jit_compile=True).experimental_get_compiler_ir` returns it.

XLA shows HLO; ndflow compiles no HLO, so it shows its own two stages under XLA's names:
- before optimizations (`stage="hlo"`, `module_0000.cluster_0.before_optimizations.txt`): the
  cluster's graph specialized to the signature (static shapes), as GraphDef text, what the
  compiler starts from;
- after (`stage="optimized_hlo"`, `module_0000.cluster_0.ndflow_kernels.py`): what it made,
  the straight-line function the executable runs (k: library call, f: fused kernel;
  executable.py) and each fused kernel's generated source;
- `stage="optimized_hlo_dot"`: the specialized graph in Graphviz DOT, each fused kernel's ops
  in a box.
Dumps are written atomically; a directory that cannot be written gives one warning and no
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


def _header(exe) -> str:
    return f"# ndflow cluster {exe.name}, compiled for {exe.signature}\n"


def before_optimizations(exe) -> str:
    return _header(exe) + text_format.MessageToString(exe.graph.as_graph_def())


def after_optimizations(exe) -> str:
    made = [_header(exe), "# the function the executable runs (k: library call, f: fused "
            "kernel)\n", exe.source, "\n"]
    for k, (names, source) in enumerate(exe.kernels):
        made += [f"\n\n# -- fused kernel {k}: {', '.join(names)}\n", source.rstrip("\n"), "\n"]
    return "".join(made)


def dot(exe) -> str:
    """The specialized graph in DOT, each fused kernel's ops in a subgraph `cluster_k`."""
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    fused = {name: k for k, (names, _) in enumerate(exe.kernels) for name in names}
    lines = [f"digraph {q(exe.name)} {{", "  node [shape=box];"]
    ops = exe.graph.get_operations()
    for k, (names, _) in enumerate(exe.kernels):
        lines.append(f"  subgraph cluster_{k} {{ label={q(f'fused kernel {k}')};")
        lines += [f"    {q(n)};" for n in names]
        lines.append("  }")
    for op in ops:
        if op.name not in fused:
            lines.append(f"  {q(op.name)} [label={q(f'{op.name}: {op.type}')}];")
    for op in ops:
        for t in op.inputs:
            lines.append(f"  {q(t.op.name)} -> {q(op.name)} [label={q(str(t.shape))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def dump_cluster(directory: str, exe) -> None:
    """Writes `exe`'s two stages to `directory` (see the module doc)."""
    with _lock:
        seq = next(_sequence)
    base = os.path.join(directory, f"module_{seq:04d}.{_file_name(exe.name)}")
    try:
        os.makedirs(directory, exist_ok=True)
        atomic_write(base + ".before_optimizations.txt", before_optimizations(exe).encode())
        atomic_write(base + ".ndflow_kernels.py", after_optimizations(exe).encode())
    except OSError as e:
        if directory not in _warned:
            _warned.add(directory)
            logging.warning(f"--xla_dump_to={directory}: cannot write the compiled clusters "
                            f"there ({e.strerror or e}); nothing is dumped")

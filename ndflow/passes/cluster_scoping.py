"""Cluster scoping (TensorFlow's ClusterScopingPass): keeps pipeline stages apart.

With auto-clustering on, every transitive predecessor of a `Stage` op and every transitive
successor of an `Unstage` op (the op itself included) gets a fresh suffix appended to its
`_XlaInternalScope`, so the clustering pass never merges work across a staging boundary.
Scopes accumulate: a node before two Stage ops ends up with `_0_1`.

    scopes = pipeline_stage_scopes(ops)   # {op: "_0_1", ...}; read-only on the ops
"""

from __future__ import annotations

from ndflow.core.graph import Operation

INTERNAL_SCOPE_ATTR = "_XlaInternalScope"


def _walk(start: Operation, forward: bool):
    """`start` and every op reachable from it along data and control edges."""
    seen = {start}
    stack = [start]
    while stack:
        op = stack.pop()
        yield op
        if forward:
            nxt = [c for t in op.outputs for c in t.consumers()] + op.control_outputs
        else:
            nxt = [t.op for t in op.inputs] + op.control_inputs
        for n in sorted(nxt, key=lambda o: o.name):  # TF's stable name order
            if n not in seen:
                seen.add(n)
                stack.append(n)


def pipeline_stage_scopes(ops: list) -> dict:
    """op -> its `_XlaInternalScope` after scoping (existing values extended)."""
    scopes = {op: op.attrs[INTERNAL_SCOPE_ATTR] for op in ops
              if isinstance(op.attrs.get(INTERNAL_SCOPE_ATTR), str)}
    counter = 0
    for op in ops:
        if op.type not in ("Stage", "Unstage"):
            continue
        suffix = f"_{counter}"
        counter += 1
        for n in _walk(op, forward=op.type == "Unstage"):
            scopes[n] = scopes.get(n, "") + suffix
    return scopes

"""Errors of the cluster compiler.

`CompileUnimplemented` is TensorFlow's UNIMPLEMENTED status from XLA compilation: the cluster
(or one fusion group of it) cannot be compiled. In lazy mode the cluster then falls back to
its uncompiled function for good; in strict mode (`jit_compile=True`) it becomes an
`UnimplementedError` naming the cluster.
"""

from __future__ import annotations


class CompileUnimplemented(Exception):  # noqa: N818 - TF's status name, not an error class
    """This cluster (or fusion group) cannot be compiled: fall back to running it uncompiled."""

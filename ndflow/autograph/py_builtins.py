"""Python builtins on tensors inside converted code (TF's autograph/operators/py_builtins.py):
`range(n)` of a tensor is `tf.range` (so `for i in range(n)` becomes a staged loop), `len(t)`
is the static or dynamic length of the first dimension, and — with the BUILTIN_FUNCTIONS
feature, as in TensorFlow — `print` of tensors prints their values when the graph runs."""

from __future__ import annotations

import builtins
import sys

from ndflow.core.graph import SymbolicTensor
from ndflow.core.tensor import Tensor
from ndflow.ops.array_core import shape
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.logging_ops import print_v2


def range_(start_or_stop, stop=None, step=None):
    args = [a for a in (start_or_stop, stop, step) if a is not None]
    if any(isinstance(a, Tensor) for a in args):
        if stop is None:
            return tf_range(start_or_stop)
        return tf_range(start_or_stop, stop, 1 if step is None else step)
    return builtins.range(*args)


def len_(s):
    if isinstance(s, Tensor):
        rank = s.shape.rank
        if rank == 0:
            raise ValueError("len requires a non-scalar tensor, got one of shape []")
        first = s.shape.as_tuple()[0] if rank is not None else None
        if first is not None:
            return first
        return shape(s)[0] if isinstance(s, SymbolicTensor) else builtins.len(s)
    return builtins.len(s)


def print_(*objects, sep: str = " ", end: str = "\n", file=None, flush: bool = False):
    if any(isinstance(o, SymbolicTensor) for o in objects):
        return print_v2(*objects, sep=sep, end=end,
                        output_stream=sys.stdout if file is None else file)
    return builtins.print(*objects, sep=sep, end=end, file=file, flush=flush)


ALWAYS = {builtins.range: range_, builtins.len: len_}
WITH_BUILTIN_FUNCTIONS = {builtins.print: print_}

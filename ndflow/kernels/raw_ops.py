"""`tf.raw_ops`: every TensorFlow op ndflow has, called by its op name with keyword arguments
only, as TensorFlow's: `tf.raw_ops.AddV2(x=a, y=b)`, `tf.raw_ops.Unique(x=v)` (a namedtuple
`(y, idx)` for several outputs), `tf.raw_ops.NoOp()` (None eagerly, the Operation in a graph).
Attrs that the inputs determine (`T`) are not arguments; the others are keywords with the
OpDef's defaults. A positional argument is TensorFlow's TypeError.

The functions are made from the OpDefs on first use (`op_function`, the generator of custom
ops' wrappers) and kept; ndflow-internal ops (`_FusedConv2D`, ...) are not listed.
"""

from __future__ import annotations

import functools
import threading

from ndflow.core import context
from ndflow.kernels.custom_op import op_function
from ndflow.ops.op_def import REGISTRY

_FUNCTIONS: dict = {}
_LOCK = threading.Lock()
# ndflow's ops without a leading underscore that TensorFlow does not have
_NOT_TENSORFLOWS = frozenset({"OnnxEngineOp"})


def _public(name: str) -> bool:
    return (not name.startswith(("_", "NdflowTest")) and name not in _NOT_TENSORFLOWS
            and name in REGISTRY)


def _raw_op(name: str):
    op_def = REGISTRY[name]
    wrapped = op_function(op_def)
    keys = list(wrapped.__signature__.parameters)
    no_outputs = not op_def.outputs

    @functools.wraps(wrapped)
    def raw_op(*args, **kwargs):
        if args:
            raise TypeError(f"{wrapped.__name__} only takes keyword args (possible keys: "
                            f"{keys}). Please pass these args as kwargs instead.")
        out = wrapped(**kwargs)
        return None if no_outputs and context.executing_eagerly() else out

    return raw_op


def __getattr__(name: str):
    if not _public(name):
        raise AttributeError(f"module 'tf.raw_ops' has no attribute '{name}'")
    with _LOCK:
        fn = _FUNCTIONS.get(name)
        if fn is None:
            fn = _FUNCTIONS[name] = _raw_op(name)
    return fn


def __dir__():
    return sorted(n for n in list(REGISTRY) if _public(n))

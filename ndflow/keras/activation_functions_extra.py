"""The Keras 3 activations added after the classic set (`tf.keras.activations.celu`, glu,
hard_shrink, hard_silu/hard_swish, hard_tanh, log_sigmoid, mish, soft_shrink, sparse_plus,
sparse_sigmoid, sparsemax, squareplus, tanh_shrink, threshold): each is keras.ops' function
of the same name (mish: x * tanh(softplus(x))), and `activations.get`/`serialize` know them
by name (registered in activation_functions' table)."""

from __future__ import annotations

import inspect

from ndflow.core.api_export import tf_export
from ndflow.keras import activation_docs, activation_functions, docstrings
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import nn_activation_docs, symbolic
from ndflow.keras.ops import nn_functions as nn
from ndflow.ops import math, nn_activation

# relu with arguments beyond the default, called on a KerasTensor, is a step of its own
symbolic.OPS["activations.relu"] = activation_functions.relu


def _export(*names: str):
    return tf_export(*[f"keras.activations.{n}" for n in names],
                     v1=[f"keras.activations.{n}" for n in names])


def _same_as_ops(name: str, *aliases: str):
    """`tf.keras.activations.<name>`: keras.ops.nn's function of that name, called as it is."""
    op = getattr(nn, name)

    def activation(*args, **kwargs):
        return op(*args, **kwargs)
    activation.__name__ = activation.__qualname__ = name
    activation.__signature__ = inspect.signature(op)
    return _export(name, *aliases)(activation)


# the same functions as keras.ops.nn's: the same docstrings, with the examples called here
_SHARED = ("celu", "glu", "hard_shrink", "hard_silu", "hard_tanh", "log_sigmoid", "soft_shrink",
           "sparse_plus", "sparse_sigmoid", "sparsemax", "squareplus", "tanh_shrink",
           "threshold")
for _name in _SHARED:
    globals()[_name] = _same_as_ops(_name, *(("hard_swish",) if _name == "hard_silu" else ()))


@_export("mish")
def mish(x):
    x = rules.to_tensor(x)
    return x * math.tanh(nn_activation.softplus(x))


EXTRA = (*(globals()[name] for name in _SHARED), mish)
# get("hard_swish") is hard_silu, whose name is what serialize gives (as Keras)
activation_functions._BY_NAME.update({f.__name__: f for f in EXTRA})
activation_functions._BY_NAME["hard_swish"] = activation_functions._BY_NAME["hard_silu"]

docstrings.attach(globals(), {
    name: nn_activation_docs.DOCS[name].replace("tf.keras.ops.", "tf.keras.activations.")
    for name in _SHARED})
docstrings.attach(globals(), activation_docs.EXTRA_DOCS)

"""The Keras 3 activations added after the classic set (`tf.keras.activations.celu`, glu,
hard_shrink, hard_silu/hard_swish, hard_tanh, log_sigmoid, mish, soft_shrink, sparse_plus,
sparse_sigmoid, sparsemax, squareplus, tanh_shrink, threshold): each is keras.ops' function
of the same name (mish: x * tanh(softplus(x))), and `activations.get`/`serialize` know them
by name (registered in activation_functions' table)."""

from __future__ import annotations

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


@_export("celu")
def celu(x, alpha=1.0):
    return nn.celu(x, alpha=alpha)


@_export("glu")
def glu(x, axis=-1):
    return nn.glu(x, axis=axis)


@_export("hard_shrink")
def hard_shrink(x, threshold=0.5):
    return nn.hard_shrink(x, threshold=threshold)


@_export("hard_silu", "hard_swish")
def hard_silu(x):
    return nn.hard_silu(x)


@_export("hard_tanh")
def hard_tanh(x):
    return nn.hard_tanh(x)


@_export("log_sigmoid")
def log_sigmoid(x):
    return nn.log_sigmoid(x)


@_export("mish")
def mish(x):
    x = rules.to_tensor(x)
    return x * math.tanh(nn_activation.softplus(x))


@_export("soft_shrink")
def soft_shrink(x, threshold=0.5):
    return nn.soft_shrink(x, threshold=threshold)


@_export("sparse_plus")
def sparse_plus(x):
    return nn.sparse_plus(x)


@_export("sparse_sigmoid")
def sparse_sigmoid(x):
    return nn.sparse_sigmoid(x)


@_export("sparsemax")
def sparsemax(x, axis=-1):
    return nn.sparsemax(x, axis=axis)


@_export("squareplus")
def squareplus(x, b=4):
    return nn.squareplus(x, b=b)


@_export("tanh_shrink")
def tanh_shrink(x):
    return nn.tanh_shrink(x)


@_export("threshold")
def threshold(x, threshold, default_value):  # noqa: A002 - Keras' name
    return nn.threshold(x, threshold, default_value)


EXTRA = (celu, glu, hard_shrink, hard_silu, hard_tanh, log_sigmoid, mish, soft_shrink,
         sparse_plus, sparse_sigmoid, sparsemax, squareplus, tanh_shrink, threshold)
# get("hard_swish") is hard_silu, whose name is what serialize gives (as Keras)
activation_functions._BY_NAME.update({f.__name__: f for f in EXTRA})
activation_functions._BY_NAME["hard_swish"] = hard_silu

# the same functions as keras.ops.nn's: the same docstrings, with the examples called here
_SHARED = ("celu", "glu", "hard_shrink", "hard_silu", "hard_tanh", "log_sigmoid", "soft_shrink",
           "sparse_plus", "sparse_sigmoid", "sparsemax", "squareplus", "tanh_shrink",
           "threshold")
docstrings.attach(globals(), {
    name: nn_activation_docs.DOCS[name].replace("tf.keras.ops.", "tf.keras.activations.")
    for name in _SHARED})
docstrings.attach(globals(), activation_docs.EXTRA_DOCS)

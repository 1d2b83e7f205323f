"""How a `keras.ops` function is declared (`@keras_op("add", "numpy")` exports it as
`keras.ops.add` and `keras.ops.numpy.add`) and how it answers KerasTensors: as in Keras 3,
an op called on a functional model's KerasTensors returns KerasTensors and becomes a step of
the model. Here the step is one `KerasOpLayer` (op_layer.py, which registers itself below:
it is a Layer and this module must stay importable by the activations that layers use)
holding the op's name and its other arguments, so the model replays, saves and loads it."""

from __future__ import annotations

import functools

from ndflow.core.api_export import keras_export
from ndflow.keras import keras_tensor
from ndflow.keras.keras_tensor import KerasTensor

# op name -> the plain function (what a KerasOpLayer calls back).
OPS: dict = {}


def register_symbolic(apply) -> None:
    """`apply(name, args, kwargs)`: the KerasTensors an op call on KerasTensors returns (kept
    by keras_tensor.py, where callers outside keras.ops find it too)."""
    keras_tensor.register_op_step(apply)


def _has_keras_tensor(values) -> bool:
    for v in values:
        if isinstance(v, KerasTensor):
            return True
        if isinstance(v, (list, tuple)) and v and _has_keras_tensor(v):
            return True
        if isinstance(v, dict) and _has_keras_tensor(v.values()):
            return True
    return False


def keras_op(name: str, *namespaces: str, symbolic: bool = True):
    """Declares a keras.ops function: exported as `keras.ops.<name>` and under each of
    `namespaces` ("numpy", "nn", "image", "linalg"); `symbolic=False` for ops that take
    functions or return Python values (no functional-model step)."""
    def declare(fn):
        OPS[name] = fn
        if symbolic:
            @functools.wraps(fn)
            def op(*args, **kwargs):
                if (_has_keras_tensor(args) or _has_keras_tensor(kwargs.values())) \
                        and keras_tensor.op_step_registered():
                    return keras_tensor.op_step(name, args, kwargs)
                return fn(*args, **kwargs)
        else:
            op = fn
        paths = [f"keras.ops.{name}"] if "image" not in namespaces and \
            "linalg" not in namespaces or name in _TOP_LEVEL_TOO else []
        paths += [f"keras.ops.{ns}.{name}" for ns in namespaces]
        return keras_export(*paths)(op)
    return declare


# ops.image.* names are only under keras.ops.image; ops.linalg.* ones are also top-level.
_TOP_LEVEL_TOO = {"cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "jvp",
                  "lstsq", "lu_factor", "matrix_rank", "norm", "pinv", "qr", "solve",
                  "solve_triangular", "svd"}

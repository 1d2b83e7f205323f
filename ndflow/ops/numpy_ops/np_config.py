"""`tnp.experimental_enable_numpy_behavior`: NumPy methods on tf.Tensor (`.T`, `.reshape`,
`.astype`, ...), NumPy's dtype promotion in the tensor operators (`int32 + float32` is
float64, `int32 + 1.5` float64, `float32 + 1.5` float32) and NumPy-style indexing."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import BINARY_OPERATORS, OPERATORS, EagerTensor, Tensor
from ndflow.core.tf_logging import warning
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_array_ops, np_dtypes, np_linalg, np_math_ops, np_reductions
from ndflow.ops.numpy_ops.np_indexing import numpy_getitem

_MODES = ("off", "legacy", "safe", "all")
_saved: dict = {}  # what enabling replaced, for `disable_numpy_behavior`


def _promoting(op):
    def wrapper(x, y):
        dtype = np_dtypes.result_type(x, y)
        x = tfo.cast(x, dtype) if isinstance(x, Tensor) else tfo.convert_to_tensor(x, dtype)
        y = tfo.cast(y, dtype) if isinstance(y, Tensor) else tfo.convert_to_tensor(y, dtype)
        return op(x, y)
    wrapper.numpy_promoting = True
    return wrapper


def _tolist(self):
    if not isinstance(self, EagerTensor):
        raise ValueError("Symbolic Tensors do not support the tolist API.")
    return self.numpy().tolist()


def _size(self):
    if not self.shape.is_fully_defined():
        return None
    return np.prod(self.shape.as_list())


_METHODS = {
    "T": property(lambda self: np_array_ops.transpose(self)),
    "ndim": property(lambda self: self.shape.rank),
    "size": property(_size),
    "data": property(lambda self: self),
    "__pos__": lambda self: self,
    "tolist": _tolist,
    "transpose": np_array_ops.transpose,
    "flatten": np_array_ops.flatten,
    "reshape": np_array_ops.reshape_method,
    "ravel": np_array_ops.ravel,
    "clip": np_math_ops.clip,
    "astype": tfo.cast,
    "__round__": np_math_ops.around,
    "max": np_reductions.amax,
    "mean": np_reductions.mean,
    "min": np_reductions.amin,
}


@tf_export("experimental.numpy.experimental_enable_numpy_behavior", v1=[])
def enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """Enables NumPy behavior on Tensors: NumPy methods, promotion and indexing.

    `prefer_float32` makes Python floats float32 in dtype inference (NumPy's is float64).
    `dtype_conversion_mode` is TF's promotion mode: 'legacy' (NumPy's promotion in the tensor
    operators), 'off', 'safe' or 'all'.
    """
    if dtype_conversion_mode not in _MODES:
        raise ValueError(f"{dtype_conversion_mode!r} is not a valid PromoMode")
    if dtype_conversion_mode in ("safe", "all"):
        warning("UserWarning: enabling the new type promotion must happen at the beginning of "
                "the program. Please ensure no TF APIs have been used yet.")
    if not _saved:
        _saved["operators"] = dict(OPERATORS)
        _saved["methods"] = {name: Tensor.__dict__.get(name, _ABSENT) for name in _METHODS}
    basic_getitem = _saved["operators"]["getitem"]
    OPERATORS["getitem"] = lambda x, spec: numpy_getitem(x, spec, basic_getitem)
    for name in set(BINARY_OPERATORS.values()):
        original = _saved["operators"][name]
        OPERATORS[name] = _promoting(original) if dtype_conversion_mode == "legacy" \
            else original
    if dtype_conversion_mode == "legacy":
        OPERATORS["matmul"] = np_linalg.matmul  # `a @ b` is NumPy's matmul (rank 1 too)
    for name, method in _METHODS.items():
        setattr(Tensor, name, method)
    np_dtypes.set_prefer_float32(prefer_float32)
    np_dtypes.set_numpy_style_promotion(dtype_conversion_mode == "legacy")


def disable_numpy_behavior():
    """Undoes `enable_numpy_behavior` (TF has no such switch; tests use it to stay isolated)."""
    if not _saved:
        return
    OPERATORS.update(_saved.pop("operators"))
    for name, method in _saved.pop("methods").items():
        if method is _ABSENT:
            delattr(Tensor, name)
        else:
            setattr(Tensor, name, method)
    np_dtypes.set_prefer_float32(False)
    np_dtypes.set_numpy_style_promotion(False)


def numpy_behavior_enabled() -> bool:
    return bool(_saved)


_ABSENT = object()

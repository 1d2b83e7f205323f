"""Keras 3's dtypes are strings ('float32'); a KerasTensor's is that string with the DType
inside, so both Keras 3 code (`print(x.dtype)`, `x.dtype.startswith("float")`) and Keras 2 code
(`x.dtype.name`, `x.dtype == tf.float32`) run. Keras variables keep the DType itself: ops and
kernels take their dtype as one (a string would reach tensors' dtypes through them)."""

from __future__ import annotations

from ndflow.core import dtypes


class KerasDTypeName(str):
    """A KerasTensor's dtype. Keras 3 gives it as the dtype's name
    (`print(x.dtype)` shows `float32`, `x.dtype.startswith("float")` works); this is that
    string, equal to the DType too (`x.dtype == tf.float32`) and with its attributes
    (`x.dtype.name`, `.is_floating`), which code written for Keras 2 reads."""

    def __new__(cls, dtype: dtypes.DType):
        name = super().__new__(cls, dtype.name)
        name._dtype = dtype
        return name

    def __getattr__(self, attr):
        if attr.startswith("__") or attr == "_dtype":   # copy/pickle probes
            raise AttributeError(attr)
        return getattr(self._dtype, attr)

    def __reduce__(self):
        return KerasDTypeName, (self._dtype,)


_NAMES: dict = {}


def dtype_name(dtype: dtypes.DType) -> KerasDTypeName:
    """The one KerasDTypeName of `dtype`."""
    name = _NAMES.get(dtype)
    if name is None:
        name = _NAMES[dtype] = KerasDTypeName(dtype)
    return name

"""`tf.keras.InputSpec`: what a layer accepts (rank, dims on given axes, dtype, shape), and
the check every layer call runs against it, with Keras 3's messages."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.nest import flatten
from ndflow.ops.sparse_tensor import SparseTensor


@keras_export("keras.InputSpec", "keras.layers.InputSpec")
class InputSpec:
    """The constraints a layer puts on one of its inputs (its `input_spec`), checked when it
    is called.

    Args:
      dtype: the expected dtype.
      shape: the expected shape (None entries are free); sets `ndim`.
      ndim: the exact rank.
      max_ndim: the largest rank.
      min_ndim: the smallest rank.
      axes: a dict {axis: size} of required sizes.
      allow_last_axis_squeeze: whether a trailing axis of size 1 may be missing (or
        extra).
      name: the input's name.
      optional: whether the input may be None.
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.axes = dict(axes or {})
        self.allow_last_axis_squeeze, self.name, self.optional = (allow_last_axis_squeeze,
                                                                   name, optional)

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape),
                                         ("ndim", self.ndim), ("max_ndim", self.max_ndim),
                                         ("min_ndim", self.min_ndim), ("axes", self.axes or None))
                 if v is not None]
        return f"InputSpec({', '.join(parts)})"

    def get_config(self) -> dict:
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes}


def _shape_of(x):
    shape = x.shape
    if hasattr(shape, "as_list"):
        return None if shape.rank is None else tuple(shape.as_list())
    return tuple(shape)


def flatten_inputs(inputs) -> list:
    """A layer's input structure flattened with sparse and ragged tensors as single inputs
    (ndflow's own flatten sees them as their component tensors)."""
    if isinstance(inputs, (SparseTensor, CompositeTensor)):
        return [inputs]
    if isinstance(inputs, dict):
        return [x for k in sorted(inputs, key=str) for x in flatten_inputs(inputs[k])]
    if isinstance(inputs, (list, tuple)):
        return [x for v in inputs for x in flatten_inputs(v)]
    return [inputs]


def assert_input_compatibility(specs, inputs, layer_name: str) -> None:
    """Raises Keras' ValueError when `inputs` break `specs` (an InputSpec or a list)."""
    if specs is None:
        return
    specs = flatten(specs)
    inputs = flatten_inputs(inputs)
    if len(inputs) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
                         f"{len(inputs)} input tensors. Inputs received: {inputs}")
    for i, (spec, x) in enumerate(zip(specs, inputs)):
        if spec is None or x is None:
            continue
        shape = _shape_of(x)
        if shape is None:
            continue
        head = (f"Input {i} with name '{spec.name}' of layer '{layer_name}' is incompatible "
                "with the layer: ")
        ndim = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise ValueError(f"{head}expected ndim={spec.ndim}, found ndim={ndim}. Full shape "
                             f"received: {shape}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise ValueError(f"{head}expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise ValueError(f"{head}expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                             f"Full shape received: {shape}")
        if spec.dtype is not None and x.dtype.name != str(spec.dtype):
            raise ValueError(f"{head}expected dtype={spec.dtype}, found dtype={x.dtype.name}")
        for axis, value in spec.axes.items():
            if value is None:
                continue
            size = shape[axis] if -ndim <= axis < ndim else None
            if size is not None and size != value:
                raise ValueError(f"{head}expected axis {axis} of input shape to have value "
                                 f"{value}, but received input with shape {shape}")
        if spec.shape is not None:
            want_shape, got_shape = spec.shape, shape
            if spec.allow_last_axis_squeeze:  # (n, 1) and (n,) are compatible
                got_shape = got_shape[:-1] if got_shape and got_shape[-1] == 1 else got_shape
                want_shape = want_shape[:-1] if want_shape and want_shape[-1] == 1 else \
                    want_shape
            for want, got in zip(want_shape, got_shape):
                if want is not None and got is not None and want != got:
                    raise ValueError(f"{head}expected shape={spec.shape}, found shape={shape}")

"""`keras.Quantizer`, the base of Keras' quantizers (a callable turning a tensor into its
quantized form, with a config), and the abs-max scheme Keras builds on it (`AbsMaxQuantizer`,
`abs_max_quantize`: int8 values and the per-axis scale that maps the largest magnitude to
the top of the range). Module name: `quantizers.py` would become a namespace."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import add, divide, multiply
from ndflow.ops.cast import cast
from ndflow.ops.math import abs as tf_abs
from ndflow.ops.math import clip_by_value
from ndflow.ops.math import round as tf_round
from ndflow.ops.reduction import reduce_max

_EPSILON = 1e-7   # keras.config.epsilon()'s default, as Keras binds it at import


@keras_export("keras.Quantizer")
class Quantizer:
    """Base class: `quantizer(x)` returns the quantized form of `x` (identity here)."""

    def __init__(self, output_dtype="int8"):
        self.output_dtype = output_dtype

    def __call__(self, x):
        return x

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_config(self):
        raise NotImplementedError(f"{self} does not implement get_config()")


def abs_max_quantize(inputs, axis, value_range=(-127, 127), dtype="int8", epsilon=_EPSILON,
                     to_numpy=False):
    """(quantized `inputs`, scale): scale = value_range[1] / (max |inputs| over `axis` +
    epsilon), the quantized values round(inputs * scale) clipped to `value_range`."""
    inputs = convert_to_tensor(inputs)
    if isinstance(axis, int):
        axis = [axis]
    peak = reduce_max(tf_abs(inputs), axis=list(axis), keepdims=True)
    scale = divide(cast(value_range[1], dtypes.float32), add(cast(peak, dtypes.float32),
                                                              epsilon))
    scale = cast(scale, inputs.dtype)
    outputs = clip_by_value(tf_round(multiply(inputs, scale)), value_range[0], value_range[1])
    return cast(outputs, dtype), scale


class AbsMaxQuantizer(Quantizer):
    """Keras' abs-max quantizer (`keras.quantizers.AbsMaxQuantizer`)."""

    def __init__(self, axis=None, value_range=(-127, 127), epsilon=_EPSILON,
                 output_dtype="int8"):
        Quantizer.__init__(self, output_dtype=output_dtype)
        self.axis = None if axis is None else \
            ((axis,) if isinstance(axis, int) else tuple(axis))
        self.value_range = value_range
        self.epsilon = epsilon
        if output_dtype == "int8" and (value_range[0] < -128 or value_range[1] > 127):
            raise ValueError("Quantizer with output_dtype='int8' requires value_range to be "
                             f"within the interval [-128, 127]. Received: "
                             f"value_range={value_range}")

    def __call__(self, x, axis=None, to_numpy=False):
        axis = self.axis if axis is None else axis
        return abs_max_quantize(x, -1 if axis is None else axis, self.value_range,
                                self.output_dtype, self.epsilon, to_numpy)

    def get_config(self):
        config = {"value_range": self.value_range, "epsilon": self.epsilon,
                  "output_dtype": self.output_dtype}
        if self.axis is not None:
            config["axis"] = self.axis
        return config

"""TF1's initializer names, `tf.compat.v1.*_initializer` and `tf.compat.v1.initializers.*`:
the Keras initializers of init_ops.py with TF 1.x's defaults (dtype float32, stddev 1.0, a
truncated-normal variance scaling) and stateful sampling (each call draws new values)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops.init_ops import (
    Constant,
    GlorotNormal,
    GlorotUniform,
    HeNormal,
    HeUniform,
    LecunNormal,
    LecunUniform,
    Ones,
    RandomNormal,
    RandomUniform,
    TruncatedNormal,
    VarianceScaling,
    Zeros,
)


def _filled_v1(cls: type, name: str, what: str, example: str) -> type:
    """The TF1 initializer of Keras' `cls` filling a tensor with `what` (a dtype, float32 by
    default, its only argument)."""
    def __init__(self, dtype=dtypes.float32):
        cls.__init__(self, dtype)

    def get_config(self):
        return {"dtype": self.dtype.name}

    doc = f"""TF1 initializer that fills a tensor with {what}.

    Calling the instance with `(shape, dtype=None)` returns a tensor of that shape; a dtype given
    there overrides the constructor's.

    Args:
      dtype: the default dtype of the values (float32).

    Example:
      >>> tf.compat.v1.{example}
    """
    return type(name, (cls,), {"__init__": __init__, "get_config": get_config, "__doc__": doc})


zeros_initializer = tf_export(v1=["initializers.zeros", "zeros_initializer"])(_filled_v1(
    Zeros, "zeros_initializer", "zeros",
    "zeros_initializer()([2]).numpy()\n      array([0., 0.], dtype=float32)"))
ones_initializer = tf_export(v1=["initializers.ones", "ones_initializer"])(_filled_v1(
    Ones, "ones_initializer", "ones",
    "ones_initializer(tf.int32)([2]).numpy()\n      array([1, 1], dtype=int32)"))


@tf_export(v1=["constant_initializer", "initializers.constant"])
class constant_initializer(Constant):  # noqa: N801 - TF's name
    """TF1 initializer that fills a tensor with `value`.

    Calling the instance with `(shape, dtype=None)` returns a tensor of that shape; a dtype given
    there overrides the constructor's.

    Args:
      value: a scalar (fills the whole shape) or a list/array with as many elements as the shape.
      dtype: the default dtype of the values (float32).
      verify_shape: accepted for compatibility; ignored.

    Example:
      >>> tf.compat.v1.constant_initializer([1., 2.])([2]).numpy()
      array([1., 2.], dtype=float32)
    """
    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        super().__init__(value, dtype)


class _NormalV1:
    """TF1's normal initializers: stateful, with float32 and stddev 1.0 by default."""
    _stateful = True

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(mean, stddev, seed, dtype)


@tf_export(v1=["initializers.random_normal", "random_normal_initializer"])
class random_normal_initializer(_NormalV1, RandomNormal):  # noqa: N801 - TF's name
    """TF1 initializer drawing from a normal distribution.

    Calling the instance with `(shape, dtype=None)` returns a tensor of that shape; a dtype given
    there overrides the constructor's. Each call draws new values.

    Args:
      mean: the mean.
      stddev: the standard deviation.
      seed: optional int; a seeded initializer is repeatable.
      dtype: the default dtype of the values (float32).

    Example:
      >>> tf.compat.v1.random_normal_initializer(seed=1)([2, 3]).shape
      TensorShape([2, 3])
    """


@tf_export(v1=["initializers.random_uniform", "random_uniform_initializer"])
class random_uniform_initializer(RandomUniform):  # noqa: N801 - TF's name
    """TF1 initializer drawing uniformly from [minval, maxval).

    Calling the instance with `(shape, dtype=None)` returns a tensor of that shape; a dtype given
    there overrides the constructor's. Each call draws new values.

    Args:
      minval: the lower bound.
      maxval: the upper bound; None means 1 for floats.
      seed: optional int; a seeded initializer is repeatable.
      dtype: the default dtype of the values (float32).

    Example:
      >>> v = tf.compat.v1.random_uniform_initializer(-1., 1., seed=1)([100])
      >>> bool(tf.reduce_all(tf.abs(v) <= 1.))
      True
    """
    _stateful = True

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(minval, maxval, seed, dtype)


@tf_export(v1=["initializers.truncated_normal", "truncated_normal_initializer"])
class truncated_normal_initializer(_NormalV1, TruncatedNormal):  # noqa: N801 - TF's name
    """TF1 initializer drawing from a normal distribution cut at two standard deviations.

    Calling the instance with `(shape, dtype=None)` returns a tensor of that shape; a dtype given
    there overrides the constructor's. Values more than two standard deviations from the mean are
    drawn again.

    Args:
      mean: the mean.
      stddev: the standard deviation before truncation.
      seed: optional int; a seeded initializer is repeatable.
      dtype: the default dtype of the values (float32).

    Example:
      >>> v = tf.compat.v1.truncated_normal_initializer(seed=1)([100])
      >>> bool(tf.reduce_all(tf.abs(v) <= 2.))
      True
    """


@tf_export(v1=["initializers.variance_scaling", "variance_scaling_initializer"])
class variance_scaling_initializer(VarianceScaling):  # noqa: N801 - TF's name
    """TF1 initializer whose variance scales with the fan of the shape.

    Calling the instance with `(shape, dtype=None)` returns a tensor of that shape; a dtype given
    there overrides the constructor's. The values have variance `scale / fan`.

    Args:
      scale: the scale factor (> 0).
      mode: 'fan_in', 'fan_out' or 'fan_avg': which fan divides `scale`.
      distribution: 'truncated_normal' (the default), 'untruncated_normal' or 'uniform'.
      seed: optional int; a seeded initializer is repeatable.
      dtype: the default dtype of the values (float32).

    Example:
      >>> tf.compat.v1.variance_scaling_initializer(seed=1)([4, 3]).shape
      TensorShape([4, 3])
    """
    _stateful = True

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        super().__init__(scale, mode, distribution, seed, dtype)


def _v1(cls: type, name: str, what: str) -> type:
    def __init__(self, seed=None, dtype=dtypes.float32):
        cls.__init__(self, seed, dtype)

    doc = f"""TF1 Glorot (Xavier) initializer: {what}, fan_avg = (fan_in + fan_out) / 2.

    Calling the instance with `(shape, dtype=None)` returns a tensor of that shape; each call
    draws new values.

    Args:
      seed: optional int; a seeded initializer is repeatable.
      dtype: the default dtype of the values (float32).

    Example:
      >>> tf.compat.v1.{name}(seed=1)([4, 3]).shape
      TensorShape([4, 3])
    """
    return type(name, (cls,), {"__init__": __init__, "_stateful": True, "__doc__": doc})


glorot_uniform_initializer = _v1(GlorotUniform, "glorot_uniform_initializer",
                                 "uniform in [-limit, limit], limit = sqrt(3 / fan_avg)")
glorot_normal_initializer = _v1(GlorotNormal, "glorot_normal_initializer",
                                "truncated normal with variance 1 / fan_avg")


def he_normal_initializer(seed=None) -> VarianceScaling:
    """`tf.compat.v1.initializers.he_normal`."""
    return HeNormal(seed)


def he_uniform_initializer(seed=None) -> VarianceScaling:
    """`tf.compat.v1.initializers.he_uniform`."""
    return HeUniform(seed)


def lecun_normal_initializer(seed=None) -> VarianceScaling:
    return LecunNormal(seed)


def lecun_uniform_initializer(seed=None) -> VarianceScaling:
    return LecunUniform(seed)


tf_export(v1=["glorot_normal_initializer", "initializers.glorot_normal"])(glorot_normal_initializer)
tf_export(v1=["glorot_uniform_initializer",
              "initializers.glorot_uniform"])(glorot_uniform_initializer)

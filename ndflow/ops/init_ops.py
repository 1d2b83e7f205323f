"""Initializers: `tf.keras.initializers.*` classes (the TF1 `tf.compat.v1.*_initializer` names
are in init_ops_v1.py).

Every initializer is a callable `init(shape, dtype=None)` returning a tensor (eager value or
graph ops). Formulas are TensorFlow's: fans from `_compute_fans` (a conv kernel HWIO has
fan_in = receptive field * in channels, fan_out = receptive field * out channels) and
variance scaling's truncated-normal correction 0.87962566103423978, the standard deviation
of a unit normal truncated to [-2, 2].
"""

from __future__ import annotations

import math
import random as python_random

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape
from ndflow.ops import arithmetic, init_ops_docs, stateless_random
from ndflow.ops import random as random_ops
from ndflow.ops.array_core import constant
from ndflow.ops.cast import cast

TRUNCATED_NORMAL_STDDEV = 0.87962566103423978


def _shape_list(shape) -> list:
    if isinstance(shape, TensorShape):
        return shape.as_list()
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [int(d) for d in shape]


def _filled(value: int, shape, dtype, name: str):
    """A constant of `value` (as a bool for a bool dtype, as TF fills it)."""
    return constant(bool(value) if dtype.is_bool else value, dtype=dtype,
                    shape=_shape_list(shape), name=name)


def compute_fans(shape, input_axes=None, output_axes=None) -> tuple:
    """(fan_in, fan_out) of a weight shape, as TF's `_compute_fans`; with both `input_axes` and
    `output_axes` (Keras 3), the products of the shape over those axes."""
    shape = _shape_list(shape)
    if input_axes is not None and output_axes is not None:
        return (int(np.prod([shape[a] for a in input_axes])),
                int(np.prod([shape[a] for a in output_axes])))
    if len(shape) < 1:
        fan_in = fan_out = 1
    elif len(shape) == 1:
        fan_in = fan_out = shape[0]
    elif len(shape) == 2:
        fan_in, fan_out = shape
    else:
        receptive_field = int(np.prod(shape[:-2]))
        fan_in = shape[-2] * receptive_field
        fan_out = shape[-1] * receptive_field
    return int(fan_in), int(fan_out)


def _float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype.name}.")
    return dtype


@tf_export("initializers.Initializer", "keras.Initializer", "keras.initializers.Initializer",
           v1=["keras.Initializer", "keras.initializers.Initializer"])
class Initializer:
    """Base class: `init(shape, dtype=None)`; `get_config()` / `from_config(config)`."""

    def __init__(self, dtype=None):
        self.dtype = dtypes.as_dtype(dtype) if dtype is not None else None

    def _dtype(self, dtype):
        if dtype is not None:
            return dtypes.as_dtype(dtype)
        return self.dtype or dtypes.float32

    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} {self.get_config()}>"


@tf_export("initializers.Zeros", "initializers.zeros", "keras.initializers.Zeros",
           "keras.initializers.zeros", "zeros_initializer",
           v1=["keras.initializers.Zeros", "keras.initializers.zeros"])
class Zeros(Initializer):
    """All zeros (any dtype)."""

    def __call__(self, shape, dtype=None, **kwargs):
        return _filled(0, shape, self._dtype(dtype), "zeros")


@tf_export("initializers.Ones", "initializers.ones", "keras.initializers.Ones",
           "keras.initializers.ones", "ones_initializer",
           v1=["keras.initializers.Ones", "keras.initializers.ones"])
class Ones(Initializer):
    """All ones (any dtype)."""

    def __call__(self, shape, dtype=None, **kwargs):
        return _filled(1, shape, self._dtype(dtype), "ones")


@tf_export("constant_initializer", "initializers.Constant", "initializers.constant",
           "keras.initializers.Constant", "keras.initializers.constant",
           v1=["keras.initializers.Constant", "keras.initializers.constant"])
class Constant(Initializer):
    """`value` (a scalar fills the shape; a list/array must have the shape's size)."""

    def __init__(self, value=0, dtype=None, verify_shape=None, support_partition=False):
        # support_partition (TF2) concerns partitioned variables, which ndflow does not have.
        super().__init__(dtype)
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs):
        value = self.value
        if hasattr(value, "numpy"):
            value = value.numpy()
        return constant(value, dtype=self._dtype(dtype), shape=_shape_list(shape))

    def get_config(self):
        v = self.value
        return {"value": v.tolist() if isinstance(v, np.ndarray) else v}


class _RandomInitializer(Initializer):
    """Keras 3's seeding (TF 2.21's `tf.keras.initializers`): an unseeded initializer takes a
    seed from Python's `random` when it is made (so `keras.utils.set_random_seed` replays a
    model's weights), and each call draws from the stateless ops seeded [seed, 0] (the same
    values on every call), or from a `keras.random.SeedGenerator` given as the seed. TF's own
    initializers (`tf.random_uniform_initializer`, the `tf.compat.v1` ones) set `_stateful`:
    stateful ops with op seed `seed`, a new draw each call, as init_ops(_v2)."""

    _stateful = False

    def _set_seed(self, seed) -> None:
        self._config_seed = seed
        if not self._stateful:
            if seed is None:
                seed = python_random.randint(1, int(1e9))
            elif not (isinstance(seed, int) or hasattr(seed, "next")):
                raise ValueError("`seed` argument should be an instance of "
                                 "`keras.random.SeedGenerator()` or an integer. Received: "
                                 f"seed={seed}")
        self.seed = seed

    def _keras_seed(self):
        pair = self.seed.next() if hasattr(self.seed, "next") else \
            constant([self.seed, 0], dtype=dtypes.int64)
        return cast(arithmetic.floormod(pair, 2 ** 31 - 2), dtypes.int32)

    def _uniform(self, shape, minval, maxval, dtype):
        if self._stateful:
            return random_ops.random_uniform(shape, minval, maxval, dtype, seed=self.seed)
        return stateless_random.stateless_uniform(shape, self._keras_seed(), minval, maxval,
                                                  dtype)

    def _normal(self, shape, mean, stddev, dtype):
        if self._stateful:
            return random_ops.random_normal(shape, mean, stddev, dtype, seed=self.seed)
        return stateless_random.stateless_normal(shape, self._keras_seed(), mean, stddev, dtype)

    def _truncated_normal(self, shape, mean, stddev, dtype):
        if self._stateful:
            return random_ops.truncated_normal(shape, mean, stddev, dtype, seed=self.seed)
        return stateless_random.stateless_truncated_normal(shape, self._keras_seed(), mean,
                                                           stddev, dtype)


@tf_export("initializers.RandomNormal", "initializers.random_normal",
           "keras.initializers.RandomNormal", "keras.initializers.random_normal",
           v1=["keras.initializers.RandomNormal", "keras.initializers.random_normal"])
class RandomNormal(_RandomInitializer):
    """Normal values, N(mean, stddev**2) (Keras defaults: mean 0, stddev 0.05)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=None):
        super().__init__(dtype)
        self.mean, self.stddev = mean, stddev
        self._set_seed(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        return self._normal(_shape_list(shape), self.mean, self.stddev,
                            _float_dtype(self._dtype(dtype)))

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self._config_seed}


@tf_export("initializers.RandomUniform", "initializers.random_uniform",
           "keras.initializers.RandomUniform", "keras.initializers.random_uniform",
           v1=["keras.initializers.RandomUniform", "keras.initializers.random_uniform"])
class RandomUniform(_RandomInitializer):
    """Uniform values in [minval, maxval) (Keras defaults: -0.05, 0.05); ints allowed."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None, dtype=None):
        super().__init__(dtype)
        self.minval, self.maxval = minval, maxval
        self._set_seed(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        dtype = self._dtype(dtype)
        if not (dtype.is_floating or dtype.is_integer):
            raise ValueError(f"Expected float or integer dtype, got {dtype.name}.")
        maxval = self.maxval
        if maxval is None and dtype.is_floating:
            maxval = 1.0
        if dtype.is_integer and not self._stateful:   # Keras' uniform is for floats only
            return random_ops.random_uniform(_shape_list(shape), self.minval, maxval, dtype,
                                             seed=self.seed)
        return self._uniform(_shape_list(shape), self.minval, maxval, dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self._config_seed}


@tf_export("initializers.TruncatedNormal", "initializers.truncated_normal",
           "keras.initializers.TruncatedNormal", "keras.initializers.truncated_normal",
           v1=["keras.initializers.TruncatedNormal", "keras.initializers.truncated_normal"])
class TruncatedNormal(_RandomInitializer):
    """Normal values redrawn beyond 2 standard deviations (Keras: mean 0, stddev 0.05)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=None):
        super().__init__(dtype)
        self.mean, self.stddev = mean, stddev
        self._set_seed(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        return self._truncated_normal(_shape_list(shape), self.mean, self.stddev,
                                      _float_dtype(self._dtype(dtype)))

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self._config_seed}


@tf_export("initializers.VarianceScaling", "initializers.variance_scaling",
           "keras.initializers.VarianceScaling", "keras.initializers.variance_scaling",
           v1=["keras.initializers.VarianceScaling", "keras.initializers.variance_scaling"])
class VarianceScaling(_RandomInitializer):
    """Samples scaled to the weight's fans (TF's `VarianceScaling`)."""

    _distributions = ("normal", "uniform", "truncated_normal", "untruncated_normal")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=None, input_axes=None, output_axes=None):
        super().__init__(dtype)
        self.input_axes, self.output_axes = input_axes, output_axes
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("Invalid `mode` argument: expected on of {'fan_in', 'fan_out', "
                             f"'fan_avg'}}. Received: mode={mode}")
        distribution = distribution.lower()
        if distribution not in self._distributions:
            raise ValueError("Invalid `distribution` argument: expected one of "
                             f"{set(self._distributions)}. Received: "
                             f"distribution={distribution}")
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self._set_seed(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        shape = _shape_list(shape)
        dtype = _float_dtype(self._dtype(dtype))
        info = kwargs.get("partition_info")  # a partitioned variable's part: full-shape fans
        fan_in, fan_out = compute_fans(_shape_list(info.full_shape) if info else shape,
                                       self.input_axes, self.output_axes)
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1.0, fan_in)
        elif self.mode == "fan_out":
            scale /= max(1.0, fan_out)
        else:
            scale /= max(1.0, (fan_in + fan_out) / 2.0)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / TRUNCATED_NORMAL_STDDEV
            return self._truncated_normal(shape, 0.0, stddev, dtype)
        if self.distribution == "untruncated_normal":
            return self._normal(shape, 0.0, math.sqrt(scale), dtype)
        limit = math.sqrt(3.0 * scale)
        return self._uniform(shape, -limit, limit, dtype)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self._config_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


def _scaling(name: str, scale: float, mode: str, distribution: str) -> type:
    def __init__(self, seed=None, dtype=None, input_axes=None, output_axes=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed, dtype, input_axes,
                                 output_axes)

    def get_config(self):
        return {"seed": self._config_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}

    doc = f"VarianceScaling(scale={scale}, mode='{mode}', distribution='{distribution}')."
    return type(name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config,
                                           "__doc__": doc})


GlorotUniform = _scaling("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _scaling("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _scaling("LecunUniform", 1.0, "fan_in", "uniform")


@tf_export("initializers.Identity", "initializers.IdentityInitializer", "initializers.identity",
           "keras.initializers.Identity", "keras.initializers.IdentityInitializer",
           "keras.initializers.identity", v1=["initializers.identity",
               "keras.initializers.Identity", "keras.initializers.IdentityInitializer",
               "keras.initializers.identity"])
class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0, dtype=None):
        super().__init__(dtype)
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        shape = _shape_list(shape)
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices. "
                             f"Received: shape={tuple(shape)} of rank {len(shape)}.")
        return constant(self.gain * np.eye(*shape), dtype=self._dtype(dtype))

    def get_config(self):
        return {"gain": self.gain}


# -- Keras names (`tf.keras.initializers.*`): lower-case aliases are the classes. -----------------

zeros = Zeros
ones = Ones
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
he_normal = HeNormal
he_uniform = HeUniform
lecun_normal = LecunNormal
lecun_uniform = LecunUniform
identity = Identity

KERAS_INITIALIZERS = {c.__name__: c for c in (
    Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling,
    GlorotUniform, GlorotNormal, HeNormal, HeUniform, LecunNormal, LecunUniform, Identity)}
_SNAKE = {"zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
          "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
          "variance_scaling": VarianceScaling, "glorot_uniform": GlorotUniform,
          "glorot_normal": GlorotNormal, "he_normal": HeNormal, "he_uniform": HeUniform,
          "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform, "identity": Identity}


@tf_export("initializers.serialize", "keras.initializers.serialize",
           v1=["keras.initializers.serialize"])
def serialize(initializer) -> dict:
    """The Keras config dict of an initializer, for `deserialize`.

    Args:
      initializer: an `Initializer` instance, or a plain function (recorded by name).

    Returns:
      A dict with "module", "class_name", "config" and "registered_name".

    Example:
      >>> tf.keras.initializers.serialize(tf.keras.initializers.Zeros())["class_name"]
      'Zeros'
    """
    if _is_plain_function(initializer):   # a user's function: Keras records its name
        return _USER_FUNCTIONS["record"](initializer)
    return {"module": "keras.initializers", "class_name": type(initializer).__name__,
            "config": initializer.get_config(), "registered_name": None}


# How Keras records a user's plain function and finds it again (its registered name, the
# custom objects of a load): keras/serialization_lib.py, above this layer, installs both.
_USER_FUNCTIONS = {
    "record": lambda fn: {"module": "builtins", "class_name": "function",
                          "config": fn.__name__, "registered_name": "function"},
    "find": lambda name, custom_objects: (custom_objects or {}).get(name)}


def set_user_functions(record, find) -> None:
    _USER_FUNCTIONS.update(record=record, find=find)


def _is_plain_function(obj) -> bool:
    return callable(obj) and not isinstance(obj, Initializer) and not hasattr(obj, "get_config")


@tf_export("initializers.deserialize", "keras.initializers.deserialize",
           v1=["keras.initializers.deserialize"])
def deserialize(config: dict, custom_objects: dict | None = None):
    """Rebuilds an initializer from the config `serialize` gives.

    Args:
      config: a dict with "class_name" (a class such as "GlorotUniform" or a snake_case
        name) and optionally "config", the constructor arguments.
      custom_objects: optional dict of user classes and functions, by name.

    Returns:
      An `Initializer` instance, or the user function a config names.

    Raises:
      ValueError: if the class name is unknown.
      TypeError: if a recorded function cannot be found.

    Example:
      >>> tf.keras.initializers.deserialize({"class_name": "Ones", "config": {}})
      <Ones {}>
    """
    name = config["class_name"]
    if name == "function":   # Keras' record of a user's function, found by its name
        fn = _USER_FUNCTIONS["find"](config.get("config"), custom_objects)
        if fn is None:
            raise TypeError(f"Could not locate function '{config.get('config')}'. Make sure "
                            "custom classes are decorated with "
                            "`@keras.saving.register_keras_serializable()`. Full object "
                            f"config: {config}")
        return fn
    cls = (custom_objects or {}).get(name) or KERAS_INITIALIZERS.get(name) or _SNAKE.get(name)
    if cls is None:
        raise ValueError(f"Unknown initializer: '{config['class_name']}'.")
    return cls.from_config(config.get("config", {}))


@tf_export("initializers.get", "keras.initializers.get", v1=["keras.initializers.get"])
def get(identifier):
    """`tf.keras.initializers.get`: None, a name, a config dict, an instance or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = KERAS_INITIALIZERS.get(identifier) or _SNAKE.get(identifier)
        if cls is None:
            raise ValueError(f"Could not interpret initializer identifier: {identifier}")
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")


# -- TF2's own random initializers (init_ops_v2: stateful ops, a new draw each call) ----------

@tf_export("random_normal_initializer", v1=[])
class RandomNormalInitializerV2(RandomNormal):
    """`tf.random_normal_initializer(mean=0.0, stddev=0.05, seed=None)`."""

    _stateful = True

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(mean, stddev, seed)


@tf_export("random_uniform_initializer", v1=[])
class RandomUniformInitializerV2(RandomUniform):
    """`tf.random_uniform_initializer(minval=-0.05, maxval=0.05, seed=None)`."""

    _stateful = True

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(minval, maxval, seed)


tf_export("initializers.GlorotNormal", "initializers.glorot_normal",
          "keras.initializers.GlorotNormal", "keras.initializers.glorot_normal",
          v1=["keras.initializers.GlorotNormal", "keras.initializers.glorot_normal"])(GlorotNormal)
tf_export("initializers.GlorotUniform", "initializers.glorot_uniform",
          "keras.initializers.GlorotUniform", "keras.initializers.glorot_uniform",
          v1=["keras.initializers.GlorotUniform",
              "keras.initializers.glorot_uniform"])(GlorotUniform)
tf_export("initializers.HeNormal", "initializers.he_normal", "keras.initializers.HeNormal",
          "keras.initializers.he_normal", v1=["initializers.he_normal",
              "keras.initializers.HeNormal", "keras.initializers.he_normal"])(HeNormal)
tf_export("initializers.HeUniform", "initializers.he_uniform", "keras.initializers.HeUniform",
          "keras.initializers.he_uniform", v1=["initializers.he_uniform",
              "keras.initializers.HeUniform", "keras.initializers.he_uniform"])(HeUniform)
tf_export("initializers.LecunNormal", "initializers.lecun_normal",
          "keras.initializers.LecunNormal", "keras.initializers.lecun_normal",
          v1=["initializers.lecun_normal", "keras.initializers.LecunNormal",
              "keras.initializers.lecun_normal"])(LecunNormal)
tf_export("initializers.LecunUniform", "initializers.lecun_uniform",
          "keras.initializers.LecunUniform", "keras.initializers.lecun_uniform",
          v1=["initializers.lecun_uniform", "keras.initializers.LecunUniform",
              "keras.initializers.lecun_uniform"])(LecunUniform)


attach(globals(), init_ops_docs.DOCS)

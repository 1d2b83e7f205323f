"""`tf.keras.layers.Layer` (Keras 3's API on ndflow variables): a `tf.Module` holding its
weights, built on its first call from the input shape (`build`), running `call`; names unique
per kind ("dense", "dense_1", ...); `trainable` freezing; get/set_weights; get_config."""

from __future__ import annotations

import inspect
import itertools
from collections import defaultdict

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, map_structure
from ndflow.core.tensor import Tensor
from ndflow.ops import init_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.module import Module, camel_to_snake
from ndflow.ops.variables import Variable

_UIDS: dict = defaultdict(itertools.count)


def unique_name(base: str) -> str:
    """Keras' per-process names: `base`, then `base_1`, `base_2`, ..."""
    n = next(_UIDS[base])
    return base if n == 0 else f"{base}_{n}"


def dtype_policy_config(dtype) -> dict:
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": dtype.name},
            "registered_name": None}


@tf_export("keras.layers.Layer", v1=["keras.layers.Layer"])
class Layer(Module):
    """A Keras layer: override `build(input_shape)` (create weights with `add_weight`) and
    `call(inputs, training=None)`."""

    def __init__(self, activity_regularizer=None, trainable=True, dtype=None, autocast=True,
                 name=None, **kwargs):
        unknown = set(kwargs) - {"input_shape", "input_dim", "batch_size"}
        if unknown:
            raise ValueError(f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                             f"{kwargs}")
        name = name or unique_name(camel_to_snake(type(self).__name__))
        super().__init__(name=name)
        self.trainable = trainable
        self.built = False
        self.autocast = autocast
        self.activity_regularizer = activity_regularizer
        self._dtype = dtypes.as_dtype(dtype or dtypes.float32)
        self._layer_weights: list = []
        shape = kwargs.get("input_shape")
        if kwargs.get("input_dim") is not None:
            shape = (kwargs["input_dim"],)
        self._build_input_shape = None if shape is None else (None,) + tuple(shape)
        try:
            self._call_takes_training = "training" in inspect.signature(self.call).parameters
        except (TypeError, ValueError):
            self._call_takes_training = False

    # -- dtype -----------------------------------------------------------------------------
    @property
    def dtype(self) -> str:
        return self._dtype.name

    @property
    def compute_dtype(self) -> str:
        return self._dtype.name

    # -- weights ---------------------------------------------------------------------------
    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True,
                   autocast=True, regularizer=None, constraint=None, aggregation="none",
                   overwrite_with_gradient=False, name=None):
        """A new variable of this layer (glorot_uniform for floats by default, else zeros)."""
        dtype = dtypes.as_dtype(dtype or self._dtype)
        shape = tuple(() if shape is None else shape)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = init_ops.get(initializer)
        value = init(shape, dtype=dtype) if callable(init) else init
        var = Variable(value, trainable=trainable, dtype=dtype,
                       name=name or "variable", constraint=constraint)  # in the layer scope
        var.regularizer = regularizer
        self._layer_weights.append(var)
        return var

    def _nested_layers(self) -> list:
        return []

    @property
    def weights(self) -> list:
        """Trainable weights, then non-trainable ones (Keras' order)."""
        return self.trainable_weights + self.non_trainable_weights

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        own = [w for w in self._layer_weights if w.trainable]
        return own + [w for layer in self._nested_layers() for w in layer.trainable_weights]

    @property
    def non_trainable_weights(self) -> list:
        own = [w for w in self._layer_weights if not w.trainable or not self.trainable]
        nested = [w for layer in self._nested_layers() for w in
                  (layer.weights if not self.trainable else layer.non_trainable_weights)]
        return own + nested

    @property
    def trainable_variables(self) -> list:
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list:
        return self.non_trainable_weights

    @property
    def variables(self) -> list:
        return self.weights

    def get_weights(self) -> list:
        return [np.array(w.numpy()) for w in self.weights]

    def set_weights(self, weights) -> None:
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a "
                             f"weight list of length {len(weights)}, but the layer was "
                             f"expecting {len(mine)} weights.")
        for var, value in zip(mine, weights):
            value = np.asarray(value)
            if tuple(var.shape.as_list()) != value.shape:
                raise ValueError(f"Layer {self.name} weight shape {tuple(var.shape.as_list())} "
                                 f"is not compatible with provided weight shape {value.shape}.")
        for var, value in zip(mine, weights):
            var.assign(np.asarray(value))

    # -- calling ---------------------------------------------------------------------------
    def build(self, input_shape) -> None:
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def __call__(self, inputs, *args, **kwargs):
        if self.autocast and self._dtype.is_floating:
            inputs = map_structure(self._cast_input, inputs)
        else:
            inputs = map_structure(lambda x: x if isinstance(x, Tensor) else
                                   convert_to_tensor(x), inputs)
        if not self.built:
            shapes = map_structure(lambda t: tuple(t.shape.as_list()), inputs) \
                if flatten(inputs) else None
            with self.name_scope:
                self.build(shapes)
            self.built = True
        if "training" in kwargs and not self._call_takes_training:
            kwargs.pop("training")
        with self.name_scope:
            return self.call(inputs, *args, **kwargs)

    def _cast_input(self, x):
        x = x if isinstance(x, Tensor) else convert_to_tensor(
            np.asarray(x, dtype=self._dtype.np_dtype) if not isinstance(x, Tensor) else x)
        if x.dtype.is_floating and x.dtype is not self._dtype:
            x = cast(x, self._dtype)
        return x

    # -- config ----------------------------------------------------------------------------
    def get_config(self) -> dict:
        return {"name": self.name, "trainable": self.trainable,
                "dtype": dtype_policy_config(self._dtype)}

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = config["dtype"]["config"]["name"]
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

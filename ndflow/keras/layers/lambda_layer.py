"""Keras 3's Lambda (an arbitrary function as a layer) and Identity. A Python lambda is saved
as Keras saves it (its marshalled bytecode); loading one is refused unless the caller passes
`safe_mode=False`, so that loading a config never runs code from it by default."""

from __future__ import annotations

import builtins
import codecs
import inspect
import marshal
import types

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten, map_structure
from ndflow.core.tensor import Tensor
from ndflow.keras import activation_functions, keras_tensor, loss_functions, serialization_lib
from ndflow.keras.layers.activation_layers import ElementwiseLayer
from ndflow.keras.layers.base_layer import Layer


def _is_lambda(fn) -> bool:
    return isinstance(fn, types.LambdaType) and fn.__name__ == "<lambda>"


def func_dump(fn) -> tuple:
    """Keras' python_utils.func_dump: (base64 marshalled code, defaults, closure values)."""
    code = codecs.encode(marshal.dumps(fn.__code__), "base64").decode("ascii")
    closure = tuple(c.cell_contents for c in fn.__closure__) if fn.__closure__ else None
    return code, fn.__defaults__, closure


def _cell(value):
    return (lambda: value).__closure__[0]


def func_load(code, defaults=None, closure=None, globs=None):
    """Keras' python_utils.func_load: the function back from `func_dump`'s parts. This
    executes code from the config: only called with safe mode off."""
    if isinstance(defaults, list):
        defaults = tuple(defaults)
    if closure is not None:
        closure = tuple(_cell(v) for v in closure)
    code = marshal.loads(codecs.decode(code.encode("ascii"), "base64"))
    globs = {"__builtins__": builtins} if globs is None else globs
    return types.FunctionType(code, globs, name=code.co_name, argdefs=defaults,
                              closure=closure)


def _serialize_value(value):
    """Keras' serialize_keras_object for the plain values a Lambda config holds."""
    if isinstance(value, Tensor):
        return {"class_name": "__tensor__",
                "config": {"value": value.numpy().tolist(), "dtype": value.dtype.name}}
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return {"class_name": "__numpy__",
                "config": {"value": value.tolist(), "dtype": value.dtype.name}}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _serialize_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_serialize_value(v) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value


def _deserialize_value(value):
    if isinstance(value, dict):
        if value.get("class_name") in ("__tensor__", "__numpy__"):
            return np.asarray(value["config"]["value"], dtype=value["config"]["dtype"])
        return {k: _deserialize_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deserialize_value(v) for v in value]
    return value


def _serialize_function(fn):
    if _is_lambda(fn):
        code, defaults, closure = func_dump(fn)
        return {"class_name": "__lambda__",
                "config": {"code": code, "defaults": defaults, "closure": closure}}
    if callable(fn):
        # Keras 3 records any other function by its name only
        return {"module": "builtins", "class_name": "function",
                "config": getattr(fn, "__name__", type(fn).__name__),
                "registered_name": "function"}
    raise ValueError("Invalid input type for serialization. "
                     f"Received: {fn} of type {type(fn)}.")


def _raise_for_lambda(safe_mode: bool) -> None:
    if safe_mode:
        raise ValueError(
            "Requested the deserialization of a `Lambda` layer whose `function` is a Python "
            "lambda. This carries a potential risk of arbitrary code execution and thus it is "
            "disallowed by default. If you trust the source of the artifact, you can override "
            "this error by passing `safe_mode=False` to the loading function, or calling "
            "`keras.config.enable_unsafe_deserialization().")


def _builtin_function(name: str):
    """Keras' search of its built-in modules (activations, losses) for a function saved by
    name."""
    for module in (activation_functions, loss_functions):
        try:
            fn = module.deserialize(name)
        except (ValueError, TypeError, KeyError):
            continue
        if isinstance(fn, types.FunctionType):
            return fn
    return None


def _deserialize_function(config, custom_objects, safe_mode: bool):
    if not isinstance(config, dict):
        return config
    if config.get("class_name") == "__lambda__":
        _raise_for_lambda(safe_mode)
        inner = config["config"]
        return func_load(inner["code"], inner["defaults"], inner["closure"],
                         globs={"__builtins__": builtins, **(custom_objects or {})})
    if config.get("class_name") == "function":
        name = config.get("config")
        if not isinstance(name, str):
            raise TypeError("Expected 'config' to be a non-null str fora function "
                            f"classname,\ninstead got {type(name)}\nFull config: {config}")
        custom = custom_objects or {}
        fn = custom.get(name) or _builtin_function(name)
        if fn is None:
            raise TypeError(
                f"Could not locate function '{name}'. Make sure custom classes and functions "
                "are decorated with `@keras.saving.register_keras_serializable()`. If they "
                "are already decorated, make sure they are all imported so that the decorator "
                f"is run before trying to load them. Full object config: {config}")
        return fn
    return _deserialize_value(config)


@keras_export("keras.layers.Lambda")
class Lambda(Layer):
    """Wraps a function as a layer: `function(inputs, **arguments)` (the function also
    receives `mask` and `training` when it declares them). For computations without
    weights; a model holding a Python lambda can only be loaded with safe mode off.

    Args:
      function: the function of the inputs.
      output_shape: the output shape without the batch axis, or a function of the
        input shape; default inferred by tracing the function.
      mask: an output mask (a value), or a function `(inputs, mask) -> mask`.
      arguments: optional dict of keyword arguments passed to `function`.
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.Lambda(lambda x: x * 2)(tf.constant([1.0, 2.0])).numpy()
    array([2., 4.], dtype=float32)
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.arguments = arguments or {}
        self.function = function
        self.supports_masking = mask is not None
        self.mask = mask
        self._output_shape = output_shape
        args = inspect.getfullargspec(function).args
        self._fn_expects_training_arg = "training" in args
        self._fn_expects_mask_arg = "mask" in args

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_expects_mask_arg:
            kwargs["mask"] = mask
        if self._fn_expects_training_arg:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            try:
                is_shape = isinstance(input_shape, tuple) and all(
                    d is None or isinstance(d, int) for d in input_shape)
                specs = keras_tensor.KerasTensor(input_shape, self.compute_dtype) if is_shape \
                    else _map_shapes(lambda s: keras_tensor.KerasTensor(s, self.compute_dtype),
                                     input_shape)
                out = keras_tensor.output_spec(self.call, (specs,), {})
                return map_structure(lambda t: t.shape, out)
            except Exception:  # noqa: BLE001 - Keras turns any failure into this message
                raise NotImplementedError(
                    "We could not automatically infer the shape of the Lambda's output. "
                    "Please specify the `output_shape` argument for this Lambda layer."
                ) from None
        if callable(self._output_shape):
            return self._output_shape(input_shape)
        batch_size = flatten(input_shape)[0] if flatten(input_shape) else None
        return _map_shapes(lambda s: (batch_size,) + tuple(s), self._output_shape)

    def get_config(self) -> dict:
        config = {"function": _serialize_function(self.function)}
        if self._output_shape is not None:
            config["output_shape"] = _serialize_function(self._output_shape) \
                if callable(self._output_shape) else self._output_shape
        if self.mask is not None:
            config["mask"] = _serialize_function(self.mask) if callable(self.mask) \
                else _serialize_value(self.mask)
        config["arguments"] = _serialize_value(self.arguments)
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """Rebuilds the layer; a Python lambda in the config (function, output_shape or
        mask) raises Keras' ValueError unless `safe_mode=False`."""
        config = dict(config)
        if safe_mode is None:   # unset: the global mode (keras.config.enable_unsafe_...)
            safe_mode = serialization_lib.in_safe_mode()
        safe = safe_mode is not False
        config["function"] = _deserialize_function(config["function"], custom_objects, safe)
        if "output_shape" in config:
            shape = _deserialize_function(config["output_shape"], custom_objects, safe)
            if isinstance(shape, list) and all(isinstance(e, (int, type(None)))
                                               for e in shape):
                shape = tuple(shape)
            config["output_shape"] = shape
        if "mask" in config:
            config["mask"] = _deserialize_function(config["mask"], custom_objects, safe)
        if "arguments" in config:
            config["arguments"] = _deserialize_value(config["arguments"])
        return super().from_config(config)


def _map_shapes(fn, shapes):
    """`fn` on each shape (a tuple/list of ints and None) of a nested structure."""
    if isinstance(shapes, (tuple, list)) and all(d is None or isinstance(d, int)
                                                 for d in shapes):
        return fn(tuple(shapes))
    if isinstance(shapes, dict):
        return {k: _map_shapes(fn, v) for k, v in shapes.items()}
    return type(shapes)(_map_shapes(fn, s) for s in shapes)


@keras_export("keras.layers.Identity")
class Identity(ElementwiseLayer):
    """A layer returning its inputs (any structure) unchanged; masks pass through. Useful
    as a placeholder, e.g. an optional block switched off.

    Args:
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def call(self, inputs):
        return inputs

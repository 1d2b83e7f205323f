"""`tf.keras.layers.Layer` (Keras 3's API on ndflow variables): a `tf.Module` holding its
weights, built on its first call from the input shape (`build`), running `call`.

What `__call__` adds around `call`, in Keras 3's order: inputs converted (floating ones cast
to the compute dtype of the layer's dtype policy), the input spec checked, `build` on first
use, `training` resolved (explicit argument, else the enclosing layer call's, else the
signature's default), the input mask passed as `mask=`, weights read in the compute dtype
(mixed precision), the activity regularizer, masks set on the outputs. Called on
KerasTensors (the functional API) it records a Node instead (keras_tensor.py)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import threading
import warnings

import numpy as np

from ndflow.checkpoint.restore import restore_deferred
from ndflow.core import context, dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten, map_structure
from ndflow.core.scopes import init_scope, name_scope
from ndflow.core.tensor import Tensor
from ndflow.data.structure import map_leaves
from ndflow.keras import docstrings, keras_tensor, regularizer_functions
from ndflow.keras.keras_variable import KerasVariable, autocast_dtype, autocast_scope
from ndflow.keras.layers import base_layer_docs
from ndflow.keras.layers.add_weight_args import resolve_positional
from ndflow.keras.layers.auto_config import (
    automatic_config,
    constructor_config,
    default,
    uses_default_get_config,
)
from ndflow.keras.layers.call_arguments import check_positional_tensors, set_mask, shape_tuple
from ndflow.keras.layers.call_errors import call_with_context
from ndflow.keras.layers.input_spec import assert_input_compatibility
from ndflow.keras.layers.layer_names import (  # noqa: F401 - names importers use
    op_scope,
    reset_names,
    scope_name,
    to_snake_case,
    unique_name,
)
from ndflow.keras.layers.layer_tracking import LayerTracking
from ndflow.keras.layers.name_scope import path_stack
from ndflow.keras.layers.remat_scope import current_mode as current_remat_mode
from ndflow.keras.layers.remat_scope import rematerialized
from ndflow.keras.layers.stateless_call import StatelessCall
from ndflow.keras.layers.variables import tracked_variables
from ndflow.keras.mixed_precision import policy as dtype_policies
from ndflow.ops import array_core, init_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.module import Module

_BUILTIN_LAYERS: dict = {}     # class name -> Layer subclass defined in ndflow
_call_context = threading.local()


def _recording_build(build):
    """`build` that also records its input shape (the layer's build config), whether the
    layer's first call or the user calls it."""
    @functools.wraps(build)
    def recording(self, *args, **kwargs):
        shape = args[0] if args else kwargs.get("input_shape")
        if getattr(self, "_build_shapes", None) is None and shape is not None:
            self._build_shapes = shape
        out = build(self, *args, **kwargs)
        self.built = True
        restore_deferred(self)  # weights a checkpoint restore was waiting for
        return out
    recording._records = True
    return recording


def _policy(dtype) -> dtype_policies.DTypePolicy:
    if dtype is None:
        return dtype_policies.global_policy()
    if isinstance(dtype, dtype_policies.DTypePolicy):
        return dtype
    if isinstance(dtype, dict):
        return dtype_policies.DTypePolicy(dtype["config"]["name"])
    return dtype_policies.DTypePolicy(dtypes.as_dtype(dtype).name
                                      if not isinstance(dtype, str) else dtype)


@keras_export("keras.layers.Layer", "keras.Layer")
class Layer(LayerTracking, StatelessCall, Module):
    # Whether the first call's input shape is the build config even without a `build`
    # override (models: their weights come from their sublayers' first calls).
    _records_build_shapes = False
    # Keras 3: positional arguments must be tensors (NumPy arrays are converted); a nested
    # Python list of numbers is refused. Preprocessing layers and functional models allow
    # Python values (a string, a list of them) and convert them themselves.
    _allow_non_tensor_positional_args = False

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        if uses_default_get_config(cls) and not cls.__module__.startswith("ndflow."):
            # a user's layer without get_config(): Keras' automatic config records the
            # constructor's arguments (ndflow's own layers define their configs)
            instance.__dict__["_auto_config"], instance.__dict__["_auto_config_error_args"] = \
                constructor_config(cls, args, kwargs)
        return instance

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("ndflow."):
            _BUILTIN_LAYERS[cls.__name__] = cls
        if "build" in cls.__dict__:
            cls.build = _recording_build(cls.__dict__["build"])

    def __init__(self, *, activity_regularizer=None, trainable=True, dtype=None,
                 autocast=True, name=None, **kwargs):
        unknown = set(kwargs) - {"input_shape", "input_dim", "batch_size", "batch_input_shape"}
        if unknown:
            raise ValueError(f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                             f"{kwargs}")
        if name is None:   # Keras names only a missing name: "" stays ""
            name = unique_name(to_snake_case(type(self).__name__))
        if not isinstance(name, str) or "/" in name:   # Keras' only rule for layer names
            raise ValueError("Argument `name` must be a string and cannot contain character "
                             f"`/`. Received: name={name} (of type {type(name)})")
        # tf.Module wants an identifier (its name scope): other names, such as Keras'
        # "mobilenetv2_1.00_224", scope under a sanitized form and keep their own
        super().__init__(name=scope_name(name))
        self._name = name
        self._trainable = bool(trainable)
        self.built = False
        self.autocast = autocast
        self.activity_regularizer = regularizer_functions.get(activity_regularizer)
        self._dtype_policy = _policy(dtype)
        self._trainable_variables: list = []
        self._non_trainable_variables: list = []
        self._losses: list = []
        self.__dict__.setdefault("_metrics", [])   # (layer_tracking.py)
        self._inbound_nodes: list = []
        self.input_spec = None
        # Keras 3: a layer that overrides compute_mask supports masking
        self.supports_masking = type(self).compute_mask is not Layer.compute_mask
        self._build_shapes = None  # the input shape `build` was called with
        self._remat_mode = current_remat_mode()   # keras.RematScope's, at creation
        shape = kwargs.get("input_shape")
        if kwargs.get("input_dim") is not None:
            shape = (kwargs["input_dim"],)
        if shape is not None:
            warnings.warn("Do not pass an `input_shape`/`input_dim` argument to a layer. When "
                          "using Sequential models, prefer using an `Input(shape)` object as "
                          "the first layer in the model instead.", stacklevel=2)
        if kwargs.get("batch_input_shape") is not None:
            self._build_input_shape = tuple(kwargs["batch_input_shape"])
        else:
            self._build_input_shape = (None if shape is None else
                                       (kwargs.get("batch_size"),) + tuple(shape))
        # what a Sequential's InputLayer takes (a layer's own build may change the other)
        self._input_shape_arg = self._build_input_shape
        params = inspect.signature(self.call).parameters
        # the inputs may come by their name (`model(inputs=x)`), as Keras' call spec allows
        self._call_first_arg = next((p.name for p in params.values() if p.kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)), None)
        self._call_takes_training = "training" in params
        self._call_takes_mask = "mask" in params
        self._training_default = (params["training"].default if self._call_takes_training
                                  and params["training"].default is not inspect.Parameter.empty
                                  else None)

    # -- dtype policy ------------------------------------------------------------------------
    @property
    def dtype_policy(self) -> dtype_policies.DTypePolicy:
        """The layer's `DTypePolicy` (settable from a policy, a dtype or a policy name)."""
        return self._dtype_policy

    @dtype_policy.setter
    def dtype_policy(self, value) -> None:
        self._dtype_policy = _policy(value)

    @property
    def dtype(self) -> str:
        """The variable dtype (Keras 3; a layer overriding `variable_dtype` changes it)."""
        return self.variable_dtype

    @property
    def compute_dtype(self) -> str:
        """The dtype the layer computes in (floating inputs are cast to it)."""
        return self._dtype_policy.compute_dtype

    @property
    def variable_dtype(self) -> str:
        """The dtype of the layer's weights (the policy's variable dtype)."""
        return self._dtype_policy.variable_dtype

    # -- the functional graph ------------------------------------------------------------------
    def _first_node(self, attr: str, what: str):
        """Keras' `layer.input` / `layer.output`: the tensors of the layer's first call on
        KerasTensors (one tensor unwrapped)."""
        if not self._inbound_nodes:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no "
                                 f"defined {what}.")
        values = getattr(self._inbound_nodes[0], attr)
        return values[0] if isinstance(values, list) and len(values) == 1 else values

    @property
    def output(self):
        """The output KerasTensor(s) of the layer's first functional call; AttributeError
        if it was never called on KerasTensors."""
        own = self.__dict__.get("_output")
        return own if own is not None else self._first_node("output_tensors", "output")

    @output.setter
    def output(self, value) -> None:
        self.__dict__["_output"] = value

    @property
    def input(self):
        """The input KerasTensor(s) of the layer's first functional call; AttributeError if
        it was never called on KerasTensors."""
        own = self.__dict__.get("_input")
        return own if own is not None else self._first_node("input_tensors", "input")

    @input.setter
    def input(self, value) -> None:
        self.__dict__["_input"] = value

    def __setattr__(self, name, value):
        # Keras' tracker: a keras.Variable assigned to an attribute is one of the weights.
        mine = self.__dict__.get("_trainable_variables")
        if mine is not None:
            for var in tracked_variables(value):
                theirs = self._non_trainable_variables
                if not any(v is var for v in itertools.chain(mine, theirs)):
                    (mine if var.trainable else theirs).append(var)
        self._track_metrics(value)   # and a keras.metrics.Metric is one of its metrics
        super().__setattr__(name, value)

    # -- weights -----------------------------------------------------------------------------
    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True,
                   autocast=True, regularizer=None, constraint=None, aggregation="none",
                   overwrite_with_gradient=False, name=None):
        """A new variable of this layer (glorot_uniform for floats by default, else zeros)."""
        shape, initializer, dtype = resolve_positional(args, shape, initializer, dtype)
        dtype = dtypes.as_dtype(dtype or self.variable_dtype)
        shape = tuple(() if shape is None else shape)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = init_ops.get(initializer)
        var = self._new_variable(lambda: init(shape, dtype=dtype) if callable(init) else init,
                                 name or "variable", dtype, trainable=trainable,
                                 constraint=constraint,
                                 regularizer=regularizer_functions.get(regularizer),
                                 autocast=autocast)
        (self._trainable_variables if trainable else self._non_trainable_variables).append(var)
        if not self._trainable:    # Keras: a frozen layer's new weights are frozen too
            var.trainable = False
        return var

    def _new_variable(self, make_value, name, dtype, trainable=True, **kwargs):
        """A `KerasVariable` outside any function, named by the layer's path ("lstm/kernel"),
        not tracked as a weight (add_weight tracks it; an RNN's states stay untracked)."""
        with self._name_scope_if_outside():
            path = "/".join([p for p in path_stack() if p] + [name])   # Keras drops "" names
        with init_scope():
            value = make_value()
            saved, context.state().name_scope = context.state().name_scope, ""
            try:
                return KerasVariable(value, trainable=trainable, dtype=dtype, name=path,
                                     **kwargs)
            finally:
                context.state().name_scope = saved

    @contextlib.contextmanager
    def _scope(self):
        """Inside the layer: ops named under it (`tf.name_scope`, relative) and weights given
        Keras' paths, which follow the call nesting ("sequential/dense/kernel")."""
        stack = path_stack()
        stack.append(self.name)
        try:
            with name_scope(op_scope(self.name)):
                yield
        finally:
            stack.pop()

    def _name_scope_if_outside(self):
        """The layer's scope, unless already in it (weights made in `__init__` enter it)."""
        stack = path_stack()
        return contextlib.nullcontext() if stack and stack[-1] == self.name else self._scope()

    @property
    def _layers(self) -> list:
        """Sublayers tracked from attributes (a layer, or lists/tuples/dicts of layers), in
        assignment order."""
        found, seen = [], {id(self)}
        for name, value in vars(self).items():
            if name in ("_inbound_nodes", "_outbound_nodes"):
                continue
            items = (value.values() if isinstance(value, dict) else value
                     if isinstance(value, (list, tuple)) else (value,))
            for item in items:
                if isinstance(item, Layer) and id(item) not in seen:
                    seen.add(id(item))
                    found.append(item)
        return found

    @property
    def trainable(self) -> bool:
        """Whether the layer's weights are trained (settable: freezes or unfreezes them)."""
        return self._trainable

    @trainable.setter
    def trainable(self, value) -> None:
        """Freezes (False) or unfreezes this layer's weights and its sublayers'."""
        self._trainable = bool(value)
        for v in self._trainable_variables:
            v.trainable = self._trainable
        for layer in self._layers:
            layer.trainable = self._trainable

    @property
    def weights(self) -> list:
        """Own weights (trainable first), then the sublayers' (Keras 3's order)."""
        out, seen = [], set()
        for w in itertools.chain(self._trainable_variables, self._non_trainable_variables,
                                 (w for layer in self._layers for w in layer.weights)):
            if id(w) not in seen:
                seen.add(id(w))
                out.append(w)
        return out

    @property
    def trainable_weights(self) -> list:
        """The weights the optimizer updates (none when the layer is frozen)."""
        return [w for w in self.weights if w.trainable] if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        """The weights the optimizer leaves alone (all of them when the layer is frozen)."""
        return [w for w in self.weights if not w.trainable] if self.trainable else self.weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def count_params(self) -> int:
        """The number of scalars in the weights; ValueError if the layer is not built."""
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but "
                             "the layer isn't built. You can build it manually via: "
                             f"`layer.build(input_shape)`.")
        return int(sum(np.prod(w.shape.as_list(), dtype=np.int64) for w in self.weights))

    def get_weights(self) -> list:
        """The values of `weights`, as a list of NumPy arrays."""
        return [np.array(w.numpy()) for w in self.weights]

    def set_weights(self, weights) -> None:
        """Assigns `weights` (NumPy arrays, in the order of `weights`); ValueError when the
        count or a shape differs, before anything is assigned."""
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
            var.assign(np.asarray(value, dtype=var.dtype.np_dtype))

    # -- losses ------------------------------------------------------------------------------
    def add_loss(self, loss) -> None:
        """Adds scalar loss tensors (from `call`) to `losses`."""
        for x in flatten(loss):
            if not isinstance(x, Tensor):
                raise ValueError("`add_loss()` can only be called from inside `build()` or "
                                 f"`call()`, on a tensor input. Received invalid value: {x}")
            self._losses.append(x)

    @property
    def losses(self) -> list:
        """Losses added in the last call (this layer's and its sublayers'), then the weight
        regularization penalties."""
        out = list(self._losses)
        for layer in self._flatten_layers(include_self=False):
            out.extend(layer._losses)
        for w in self.trainable_weights:
            if getattr(w, "regularizer", None) is not None:
                out.append(w.regularizer(w.value()))
        return out

    def _clear_losses(self) -> None:
        self._losses.clear()
        for layer in self._layers:
            layer._clear_losses()

    # -- masks -------------------------------------------------------------------------------
    def compute_mask(self, inputs, mask=None):
        """The output mask: `mask` passed through if the layer supports masking, else None."""
        return mask if self.supports_masking else None

    # -- shapes ------------------------------------------------------------------------------
    def compute_output_shape(self, *args, **kwargs):
        """The output shape for an input shape; layers override it (NotImplementedError)."""
        raise NotImplementedError(f"Layer {type(self).__name__} should implement "
                                  "`def compute_output_shape(self, input_shape)`.")

    def compute_output_spec(self, *args, **kwargs):
        """The KerasTensor(s) a call on these arguments would give (shapes and dtypes only)."""
        return keras_tensor.output_spec(self.__call__, args, kwargs)

    # -- calling -----------------------------------------------------------------------------
    def build(self, input_shape) -> None:
        """Creates the weights for `input_shape` (override it); the first call runs it."""
        self.built = True

    def call(self, inputs, *args, **kwargs):
        """The layer's computation (override it; may take `training` and `mask`): identity."""
        return inputs

    def _convert_input(self, x):
        mask = getattr(x, "_keras_mask", None)
        if not isinstance(x, Tensor):
            if isinstance(x, (np.ndarray, list, float, int, np.generic)):
                x = convert_to_tensor(np.asarray(x) if isinstance(x, list) else x)
            else:
                return x
        if (self.autocast and x.dtype.is_floating
                and dtypes.as_dtype(self.compute_dtype).is_floating
                and x.dtype.name != self.compute_dtype):
            x = cast(x, self.compute_dtype)
            if mask is not None:
                x._keras_mask = mask
        return x

    def _maybe_build(self, inputs) -> None:
        if self.built:
            return
        shapes = map_leaves(shape_tuple, inputs) if flatten(inputs) else None  # (a
        # SparseTensor's shape: its dense shape)
        if self._records_build_shapes:  # (layers with a `build` record it there)
            self._build_shapes = shapes
        if getattr(type(self).build, "_builds_by_calling", False):
            self.built = True  # this very call builds the sublayers
            return
        with self._scope():
            self.build(shapes)
        self.built = True

    def __call__(self, *args, **kwargs):
        if not args and self._call_first_arg in kwargs:
            args = (kwargs.pop(self._call_first_arg),)
        if keras_tensor.any_keras_tensors(args, kwargs):
            return self._symbolic_call(args, kwargs)
        if not args:
            raise TypeError(f"Layer {self.name}: call() needs an input tensor as its first "
                            "positional argument.")
        if not self._allow_non_tensor_positional_args:
            check_positional_tensors(args)
        inputs = map_structure(self._convert_input, args[0])
        args = (inputs,) + tuple(args[1:])
        assert_input_compatibility(self.input_spec, inputs, self.name)
        self._maybe_build(inputs)

        outer_training = getattr(_call_context, "training", None)
        entry = getattr(_call_context, "entry", None) is None
        training = kwargs.pop("training", None)
        if training is None:
            training = outer_training if outer_training is not None else self._training_default
        if self._call_takes_training:
            kwargs["training"] = training
        previous_mask = map_structure(lambda x: getattr(x, "_keras_mask", None), inputs)
        if self._call_takes_mask and kwargs.get("mask") is None and any(
                m is not None for m in flatten(previous_mask)):
            kwargs["mask"] = previous_mask
        elif kwargs.get("mask") is not None:
            previous_mask = kwargs["mask"]

        if entry:
            _call_context.entry = self
            self._clear_losses()
        _call_context.training = training
        try:
            with self._autocast_scope(), self._scope():
                outputs = call_with_context(self, args, kwargs,
                                            rematerialized(self, self.call, args, kwargs))
                if self.activity_regularizer is not None:
                    self._add_activity_loss(outputs)
        finally:
            _call_context.training = outer_training
            if entry:
                _call_context.entry = None
        if self.supports_masking:
            self._set_output_masks(inputs, outputs, previous_mask)
        elif any(m is not None for m in flatten(previous_mask)):
            warnings.warn(f"Layer '{self.name}' (of type {type(self).__name__}) was passed an "
                          "input with a mask attached to it. However, this layer does not "
                          "support masking and will therefore destroy the mask information. "
                          "Downstream layers will not see the mask.", stacklevel=2)
        return outputs

    def _autocast_scope(self):
        """Keras 3's rule: inside an enclosing scope, clear it (`autocast=False`, a non-float
        compute dtype) or switch it to this compute dtype; outside any, a layer of mixed
        dtypes opens one (even with `autocast=False`)."""
        current = autocast_dtype()
        compute = dtypes.as_dtype(self.compute_dtype)
        if current is not None:
            if not self.autocast or not compute.is_floating:
                return autocast_scope(None)
            return autocast_scope(compute) if current is not compute \
                else contextlib.nullcontext()
        if self.compute_dtype != self.variable_dtype:
            return autocast_scope(compute)
        return contextlib.nullcontext()

    def _add_activity_loss(self, outputs) -> None:
        """The penalty on each output, divided by the batch size (Keras 3)."""
        for out in flatten(outputs):
            if isinstance(out, Tensor):
                loss = self.activity_regularizer(out)
                if out.shape.rank:
                    loss = loss / cast(array_core.shape(out)[0], loss.dtype)
                self.add_loss(loss)

    def _set_output_masks(self, inputs, outputs, previous_mask) -> None:
        overridden = type(self).compute_mask is not Layer.compute_mask
        masks = self.compute_mask(inputs, previous_mask) if overridden else previous_mask
        flat_out, flat_masks = flatten(outputs), flatten(masks) if masks is not None else []
        if len(flat_masks) == len(flat_out):
            for out, mask in zip(flat_out, flat_masks):
                set_mask(out, mask)
        elif len(flat_masks) == 1:
            for out in flat_out:
                set_mask(out, flat_masks[0])

    def _symbolic_call(self, args, kwargs):
        """Functional API: outputs as KerasTensors, the call recorded as a Node."""
        if args:
            self._maybe_build(args[0])
        outputs = keras_tensor.output_spec(self.__call__, args, kwargs)
        self._clear_losses()   # losses of the throwaway trace are not the layer's
        keras_tensor.Node(self, args, kwargs, outputs)
        return outputs

    # -- config ------------------------------------------------------------------------------
    @default
    def get_config(self) -> dict:
        """The layer's config (name, trainable, dtype policy; a user layer's constructor
        arguments when it defines no get_config), which `from_config` takes."""
        base = {"name": self.name}
        if uses_default_get_config(self) and not type(self).__module__.startswith("ndflow."):
            base = automatic_config(self)
        config = {**base, "trainable": self.trainable,
                  "dtype": {"module": "keras", "class_name": "DTypePolicy",
                            "config": {"name": self._dtype_policy.name},
                            "registered_name": None}}
        if self.activity_regularizer is not None:   # Keras 3 writes it only when set
            config["activity_regularizer"] = regularizer_functions.serialize(
                self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config: dict):
        """A new layer from `get_config`'s dict: `cls(**config)`."""
        return cls(**config)

    def get_build_config(self):
        """What `build_from_config` needs to rebuild the weights (Keras 3)."""
        if self._build_shapes is None:
            return None
        return {"input_shape": self._build_shapes}

    def build_from_config(self, config: dict) -> None:
        """Builds an unbuilt layer from `get_build_config`'s `input_shape` (when loading)."""
        if config and "input_shape" in config and not self.built:
            shape = config["input_shape"]
            shape = [tuple(s) for s in shape] if shape and isinstance(shape[0], (list, tuple)) \
                else tuple(shape)
            self._build_shapes = shape
            with self._scope():
                self.build(shape)
            self.built = True

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


docstrings.attach(globals(), base_layer_docs.DOCS)

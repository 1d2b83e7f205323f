"""`tf.keras.models.clone_model`: a model's architecture on new inputs with new layers
(Keras 3's cloning): a Sequential model's layers are cloned and listed again, a functional
model's graph is replayed on new `Input`s with each layer cloned (`clone_function`) and
called (`call_function`); any other model or layer is rebuilt from its serialized config."""

from __future__ import annotations

import inspect

from ndflow.core.api_export import keras_export
from ndflow.core.nest import assert_same_structure, flatten, map_structure, pack_sequence_as
from ndflow.keras.functional import Functional
from ndflow.keras.keras_tensor import KerasTensor
from ndflow.keras.layers.input_layer import Input, InputLayer
from ndflow.keras.saving import compile_config
from ndflow.keras.sequential import Sequential
from ndflow.keras.utils_serialization import deserialize_keras_object, serialize_keras_object


@keras_export("keras.models.clone_model")
def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, **kwargs):
    """Clones a functional or Sequential model: the same architecture on new inputs, with
    new layers (so new, freshly initialized weights) instead of the model's own; copy the
    weights with `clone.set_weights(model.get_weights())`. A compiled model's clone is
    compiled with the same `compile()` arguments.

    Args:
      model: a functional or Sequential model. Any other model (or layer) is rebuilt from
        its serialized config, and takes neither `clone_function`, `input_tensors` nor
        `call_function`.
      input_tensors: optional KerasTensor(s) to build the clone on, with the structure of
        `model.input` (a Sequential model takes one tensor); by default new `Input`s of the
        same shapes, dtypes and names.
      clone_function: optional `fn(layer)` returning the layer to use in place of each
        non-input layer (default: `layer.__class__.from_config(layer.get_config())`;
        `lambda layer: layer` shares the layers). A layer called several times is cloned
        once.
      call_function: optional `fn(layer, *args, **kwargs)` that calls each cloned layer
        on its inputs and returns the outputs (default `layer(*args, **kwargs)`); it may
        add layers around a call. Functional models only.
      recursive: whether nested functional and Sequential models are cloned layer by
        layer with the same arguments (`call_function` is not passed to a nested
        Sequential model) rather than given to `clone_function` whole.
      **kwargs: none accepted.

    Returns:
      The new model (a functional model as a `Functional`, unless its class takes
      `(inputs, outputs, name)`).

    Raises:
      ValueError: an unknown keyword argument; `clone_function` or `input_tensors` for a
        model that is not functional or Sequential, `call_function` for one that is not
        functional; `input_tensors` that are not KerasTensors or not of `model.input`'s
        structure (one tensor for a Sequential model).

    Example:

    >>> inputs = tf.keras.Input((3,), name="x")
    >>> model = tf.keras.Model(inputs, tf.keras.layers.Dense(2, name="d")(inputs))
    >>> def call_function(layer, *args, **kwargs):
    ...     return tf.keras.layers.Activation("relu")(layer(*args, **kwargs))
    >>> clone = tf.keras.models.clone_model(model, clone_function=lambda layer: layer,
    ...                                     call_function=call_function)
    >>> [layer.name for layer in clone.layers][:2], clone.layers[1] is model.layers[1]
    (['x', 'd'], True)
    """
    cache = kwargs.pop("cache", None)
    if kwargs:
        raise ValueError(f"Unexpected keyword argument(s): {tuple(kwargs.keys())}")
    if isinstance(model, Sequential):
        clone_function = _wrap_clone_function(clone_function, call_function, recursive,
                                              cache)
        if call_function is not None:
            raise ValueError(
                "`call_function` argument is not supported with Sequential models.  In a "
                "Sequential model, layers aren't called at model-construction time (they're "
                "merely listed). Use `call_function` with Functional models only. Received "
                f"model of type '{type(model).__name__}', with "
                f"call_function={clone_function}")
        return _clone_sequential_model(model, clone_function, input_tensors)
    if isinstance(model, Functional):
        clone_function = _wrap_clone_function(clone_function, call_function, recursive,
                                              cache)
        return _clone_functional_model(model, clone_function, input_tensors, call_function)
    if clone_function or input_tensors:
        raise ValueError(
            "Arguments `clone_function` and `input_tensors` are only supported for "
            "Sequential models or Functional models. Received model of type "
            f"'{type(model).__name__}', with clone_function={clone_function} and "
            f"input_tensors={input_tensors}")
    if call_function is not None:
        # Keras 3's message names `clone_function` here
        raise ValueError("Argument `call_function` is only supported for Functional models. "
                         f"Received model of type '{type(model).__name__}', with "
                         f"call_function={clone_function}")
    return deserialize_keras_object(serialize_keras_object(model),
                                    custom_objects={type(model).__name__: type(model)})


def _wrap_clone_function(clone_function, call_function, recursive, cache):
    """`clone_function` (or the config round trip) applied once per layer (a shared layer
    stays shared in the clone); with `recursive`, nested models are cloned by
    `clone_model`."""
    if clone_function is None:
        def clone_function(layer):
            return layer.__class__.from_config(layer.get_config())
    cache = {} if cache is None else cache

    def wrapped_clone_function(layer):
        if id(layer) in cache:
            return cache[id(layer)]
        if recursive and isinstance(layer, Sequential):
            clone = clone_model(layer, clone_function=clone_function, recursive=True,
                                cache=cache)
        elif recursive and isinstance(layer, Functional):
            clone = clone_model(layer, clone_function=clone_function,
                                call_function=call_function, recursive=True, cache=cache)
        else:
            clone = clone_function(layer)
        cache[id(layer)] = clone
        return clone

    return wrapped_clone_function


def _compile_like(new_model, model):
    if model.compiled:
        compile_config.compile_from_config(new_model,
                                           compile_config.get_compile_config(model))
    return new_model


def _clone_sequential_model(model, clone_function, input_tensors=None):
    new_layers = [clone_function(layer) for layer in model.layers]
    first = model._layers[0] if model._layers else None
    if isinstance(first, InputLayer):
        name, batch_shape, dtype, optional = (first.name, first.batch_shape, first.dtype,
                                              first.optional)
    else:
        name, batch_shape, dtype, optional = None, None, None, False
    if input_tensors is not None:
        if isinstance(input_tensors, (list, tuple)):
            if len(input_tensors) != 1:
                raise ValueError("Argument `input_tensors` must contain a single tensor.")
            input_tensors = input_tensors[0]
        if not isinstance(input_tensors, KerasTensor):
            raise ValueError("Argument `input_tensors` must be a KerasTensor. Received "
                             f"invalid value: input_tensors={input_tensors}")
        new_layers = [Input(tensor=input_tensors, name=name, optional=optional)] + new_layers
    elif batch_shape is not None:
        new_layers = [Input(batch_shape=batch_shape, dtype=dtype, name=name,
                            optional=optional)] + new_layers
    return _compile_like(Sequential(new_layers, name=model.name, trainable=model.trainable),
                         model)


def _clone_functional_model(model, clone_function, input_tensors=None, call_function=None):
    if input_tensors is not None:
        if not all(isinstance(x, KerasTensor) for x in flatten(input_tensors)):
            raise ValueError("All entries in `input_tensors` must be KerasTensors. Received "
                             f"invalid values: inputs_tensors={input_tensors}")
        try:
            assert_same_structure(input_tensors, model.input, check_types=True)
        except (ValueError, TypeError) as e:
            raise ValueError("`input_tensors` must have the same structure as model.input"
                             f"\nReference structure: {model.input}"
                             f"\nReceived structure: {input_tensors}") from e
    else:
        input_tensors = map_structure(
            lambda x: Input(batch_shape=x.shape, dtype=x.dtype, name=x.name), model.input)
    output_tensors = _run_through_graph(model, input_tensors, clone_function, call_function)
    cls = type(model) if _functional_like_constructor(type(model)) else Functional
    return _compile_like(cls(input_tensors, output_tensors, name=model.name), model)


def _functional_like_constructor(cls) -> bool:
    """Whether `cls(inputs, outputs, name=...)` builds a functional model of class `cls`."""
    args = inspect.getfullargspec(cls.__init__).args[1:]
    return args in (inspect.getfullargspec(Functional.__init__).args[1:],
                    ["inputs", "outputs", "name"])


def _nodes_by_depth(nodes: list) -> list:
    """The graph's layer calls in Keras 3's replay order: by decreasing depth (the longest
    path to an output; a shared layer's calls at its deepest), in the order a walk back
    from the outputs met them."""
    in_graph = {id(n): n for n in nodes}
    depths: dict = {}                     # id(node) -> depth, in first-met order
    layer_depths: dict = {}
    for node in reversed(nodes):
        depth = max(depths.setdefault(id(node), 0), layer_depths.get(id(node.layer), 0))
        layer_depths[id(node.layer)] = depths[id(node)] = depth
        for parent in node.parent_nodes:
            if id(parent) in in_graph:
                depths[id(parent)] = max(depth + 1, depths.get(id(parent), 0))
    order = list(depths)
    return [in_graph[k] for k in sorted(order, key=lambda k: -depths[k])]


def _run_through_graph(model, inputs, operation_fn, call_fn=None):
    """The model's layer calls replayed on `inputs` (KerasTensors), each layer replaced by
    `operation_fn(layer)` and called by `call_fn(layer, *args, **kwargs)`."""
    tensors = {id(x): y for x, y in zip(model.inputs, flatten(inputs))}

    def value(x):
        return tensors[id(x)] if isinstance(x, KerasTensor) else x

    for node in _nodes_by_depth(model._nodes):
        if any(id(x) not in tensors for x in node.input_tensors):
            continue
        args = map_structure(value, node.call_args)
        kwargs = map_structure(value, node.call_kwargs)
        layer = operation_fn(node.layer)
        outputs = call_fn(layer, *args, **kwargs) if call_fn is not None else \
            layer(*args, **kwargs)
        for x, y in zip(node.output_tensors, flatten(outputs)):
            tensors[id(x)] = y
    flat = []
    for x in model.outputs:
        if id(x) not in tensors:
            raise ValueError(f"Output with path `{x.name}` is not connected to `inputs`")
        flat.append(tensors[id(x)])
    return pack_sequence_as(model._outputs_struct, flat)

"""Serving signatures: which functions `tf.saved_model.save` exports, and their flat
input keys and output keys, as TensorFlow's signature_serialization decides them."""

from __future__ import annotations

from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor_spec import TensorSpec
from ndflow.runtime.concrete_function import ConcreteFunction
from ndflow.runtime.function import Function
from ndflow.saved_model.constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY


def concrete_of(fn, what: str) -> ConcreteFunction:
    """A signature's concrete function: a ConcreteFunction, or a tf.function traced for its
    input_signature."""
    if isinstance(fn, ConcreteFunction):
        return fn
    if isinstance(fn, Function):
        if fn.input_signature is None:
            raise ValueError(f"Function {what} ({fn.name}) used as a signature must have an "
                             "input_signature, or be a concrete function "
                             "(`f.get_concrete_function(tf.TensorSpec(...))`).")
        return fn.get_concrete_function()
    raise ValueError(f"Expected a TensorFlow function for which to generate a signature, but "
                     f"got {fn!r} for {what}. Only `tf.functions` with an input signature or "
                     "concrete functions can be used as a signature.")


def _build_shape_signature(model):
    """Keras 3 for a subclassed model: specs of the shape its first call built it with."""
    get = getattr(model, "get_build_config", None)
    config = get() if callable(get) else None
    shape = (config or {}).get("input_shape")
    if shape is None:
        return None
    dtype = getattr(model, "input_dtype", None) or "float32"

    def is_shape(s):
        return isinstance(s, (list, tuple)) and all(d is None or isinstance(d, int) for d in s)

    if is_shape(shape):
        return TensorSpec(shape, dtype)
    if isinstance(shape, (list, tuple)) and all(is_shape(s) for s in shape):
        return [TensorSpec(s, dtype) for s in shape]
    return None


def model_input_signature(model):
    """The input TensorSpecs of a built Keras model (its symbolic `input`, else the shape
    its first call built it with), or None."""
    if not callable(model):
        return None
    inputs = getattr(model, "inputs", None)
    if not inputs:
        return _build_shape_signature(model)
    structure = getattr(model, "_inputs_struct", None)   # (Keras' `input`)
    structure = inputs if structure is None else structure
    leaves = flatten(structure)
    if not all(hasattr(x, "shape") and hasattr(x, "dtype") for x in leaves):
        return None
    return pack_sequence_as(structure, [TensorSpec(x.shape, x.dtype) for x in leaves])


def keras_serving_function(model):
    """Keras' default serving signature: `serving_default(inputs)` calling the model on its
    input specs (Keras 3's `_default_save_signature`), or None for an unbuilt model."""
    spec = model_input_signature(model)
    if spec is None:
        return None

    def serving_default(inputs):
        return model(inputs)

    return Function(serving_default, input_signature=[spec])


def default_signature(root, root_children: list):
    """TF's choice when `signatures` is None: the root's single tf.function with an
    input_signature (or concrete function); for a Keras model, its serving function on its
    inputs; else no signature."""
    found = []
    for _, child in root_children:
        if isinstance(child, Function) and child.input_signature is not None:
            found.append(child)
        elif isinstance(child, ConcreteFunction):
            found.append(child)
    if len(found) == 1:
        return found[0]
    return keras_serving_function(root) if not found else None


def canonical_signatures(signatures, root, root_children: list) -> dict:
    """{signature key: ConcreteFunction} from `tf.saved_model.save`'s `signatures`."""
    if signatures is None:
        loaded = _loaded_signatures(root)
        if loaded:
            return loaded
        fn = default_signature(root, root_children)
        return {} if fn is None else {DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                                      concrete_of(fn, "the default signature")}
    if not isinstance(signatures, dict):
        signatures = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: signatures}
    out = {}
    for key, fn in signatures.items():
        if not isinstance(key, str):
            raise ValueError(f"Invalid signature key {key!r}: signature keys must be strings")
        out[key] = concrete_of(fn, f"signature {key!r}")
    return out


def _loaded_signatures(root) -> dict:
    """A loaded SavedModel's own signatures (saved again with it), as TF keeps them."""
    found = vars(root).get("signatures")
    if not isinstance(found, dict) or not found:
        return {}
    if not all(hasattr(getattr(f, "concrete", None), "traced") for f in found.values()):
        return {}
    return {k: f.concrete.traced() for k, f in found.items()}


def input_keys(cf: ConcreteFunction) -> list:
    """The signature input names, one per flat tensor argument (TensorSpec names, which
    default to the argument names)."""
    keys = []
    for i, ph in enumerate(cf.graph.arg_inputs):
        keys.append(ph.op.name or f"input_{i}")
    if len(set(keys)) != len(keys):
        raise ValueError(f"Signature inputs of {cf.name} have duplicate names {keys}; give "
                         "the TensorSpecs of the input_signature distinct names.")
    return keys


def output_map(cf: ConcreteFunction) -> dict:
    """{output key: flat output index}: a dict's string keys, else `output_<i>` per leaf."""
    structure = cf._structure
    if isinstance(structure, dict):
        items = list(structure.items())
        for k, _ in items:
            if not isinstance(k, str):
                raise ValueError(f"Got a dictionary with a non-string key {k!r} in the "
                                 "output of the function used as a signature.")
    else:
        items = [(f"output_{i}", s) for i, s in enumerate(flatten(structure))]
    out = {}
    for key, slot in items:
        if getattr(slot, "index", None) is None or slot.value is not None:
            raise ValueError(f"Got a non-Tensor value {getattr(slot, 'value', slot)!r} for key "
                             f"{key!r} in the output of the function {cf.name} used to generate "
                             "the SavedModel signature. Please make sure that the function "
                             "returns a tensor, a list of tensors or a dict of tensors.")
        out[key] = slot.index
    return out


def output_spec(cf: ConcreteFunction, index: int, name: str) -> TensorSpec:
    t = cf.graph.outputs[index]
    return TensorSpec(t.shape, t.dtype, name)

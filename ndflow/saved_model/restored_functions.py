"""Callables rebuilt from a SavedModel's functions.

Each saved concrete function becomes a `tf.function` with a flat input signature whose body
inlines the function graph rebuilt from its FunctionDef, with the restored variables'
handles for its bound inputs (so calls run ndflow's compiled plan, and the variables are
captured by reference as in a traced function). The flat outputs are packed into the saved
output structure.

- `RestoredFunction` (a saved `tf.function`): called like the original, it picks the first
  concrete function whose saved input signature accepts the arguments.
- `SignatureFunction` (`loaded.signatures[key]`): keyword arguments named by the signature
  (positional ones in `argument_keywords` order), returns a dict of tensors.
"""

from __future__ import annotations

import inspect

from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec
from ndflow.runtime.func_graph import inline_graph
from ndflow.runtime.function import Function


class RestoredConcreteFunction:
    """One saved concrete function: `structured_input_signature` ((args), {kwargs}) of
    TensorSpecs, `structured_outputs`, callable with tensors matching the specs."""

    def __init__(self, name: str, graph, captures: list, input_signature, output_signature):
        """`captures`: the bound inputs, variables (passed by handle) or constant tensors."""
        self.name = name
        self.graph = graph
        variables = [c for c in captures if not isinstance(c, Tensor)]
        self.variables = tuple(variables)
        self.structured_input_signature = input_signature
        self.structured_outputs = output_signature
        self._flat_specs = [s for s in flatten(input_signature) if isinstance(s, TensorSpec)]
        graph.variables = list(variables)
        graph.name = name.lstrip("_") or "function"  # its ops' name scope when inlined
        handles = [c if isinstance(c, Tensor) else c.handle for c in captures]
        n_args = len(graph.arg_inputs) - len(handles)
        if n_args != len(self._flat_specs):
            raise ValueError(f"Function '{name}' takes {n_args} tensor arguments, but its saved "
                             f"input signature has {len(self._flat_specs)}")

        def body(*args):
            outs = inline_graph(graph, list(args) + handles, graph.outputs)
            leaves = flatten(output_signature)
            _refine_shapes(outs, leaves)
            if len(leaves) != len(outs):  # a structure without tensors: flat outputs
                return outs[0] if len(outs) == 1 else list(outs)
            return pack_sequence_as(output_signature, outs)

        names = [s.name for s in self._flat_specs]
        if not all(names) or len(set(names)) != len(names):
            names = [f"arg_{i}" for i in range(len(names))]
        specs = [TensorSpec(s.shape, s.dtype, n) for s, n in zip(self._flat_specs, names)]
        # one named parameter per flat input (tf.function binds an input_signature to
        # parameters, not to *args)
        body.__signature__ = inspect.Signature(
            [inspect.Parameter(f"arg_{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
             for i in range(len(specs))])
        # a graph name scope cannot start with "_": the traced function is named without them
        self._function = Function(body, name=graph.name, input_signature=specs,
                                  autograph=False)

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if v.trainable)

    def traced(self):
        """The ConcreteFunction running this function (what saving it again writes)."""
        return self._function.get_concrete_function()

    def accepts(self, flat: list) -> bool:
        if len(flat) != len(self._flat_specs):
            return False
        return all(x.dtype is spec.dtype and spec.shape.is_compatible_with(x.shape)
                   for spec, x in zip(self._flat_specs, flat))

    def call_flat(self, flat: list):
        return self._function(*flat)

    def __call__(self, *args, **kwargs):
        flat = _bind(self.structured_input_signature, args, kwargs, self.name)
        return self.call_flat(flat)

    def __repr__(self):
        return f"<RestoredConcreteFunction {self.name}>"


def _refine_shapes(outs: list, leaves: list) -> None:
    """Gives the outputs the saved output signature's static shapes where the rebuilt graph
    lost them (a Keras layer over a loaded function sees `(None, 2)`, not `(None, None)`)."""
    if len(leaves) != len(outs):
        return
    for t, spec in zip(outs, leaves):
        if isinstance(spec, TensorSpec) and hasattr(t, "set_shape"):
            try:
                t.set_shape(spec.shape)
            except ValueError:
                pass  # the graph knows better than a stale signature


def _bind(signature, args, kwargs, name: str) -> list:
    """The flat tensor arguments for a saved ((args), {kwargs}) signature."""
    pos_sig, kw_sig = signature if isinstance(signature, tuple) and len(signature) == 2 \
        else (signature, {})
    pos_sig = tuple(pos_sig or ())
    kw_sig = dict(kw_sig or {})
    if len(args) > len(pos_sig):
        raise TypeError(f"{name}: takes {len(pos_sig)} positional arguments but {len(args)} "
                        "were given")
    values = list(args)
    for spec in pos_sig[len(args):]:
        key = getattr(spec, "name", None)
        if key is None or key not in kwargs:
            raise TypeError(f"{name}: missing argument for {spec}")
        values.append(kwargs.pop(key))
    kw_values = {}
    for key in kw_sig:
        if key not in kwargs:
            raise TypeError(f"{name}: missing required argument '{key}'")
        kw_values[key] = kwargs.pop(key)
    if kwargs:
        raise TypeError(f"{name}: got unexpected keyword arguments {sorted(kwargs)}")
    flat: list = []
    _flatten_up_to((pos_sig, kw_sig), (tuple(values), kw_values), flat, name)
    return flat


def _flatten_up_to(spec, value, out: list, name: str) -> None:
    """Appends the tensors of `value` at the TensorSpec leaves of `spec` (a Python list
    given for a TensorSpec is one tensor, not a structure)."""
    if isinstance(spec, TensorSpec):
        out.append(value if isinstance(value, Tensor) else convert_to_tensor(value, spec.dtype))
    elif isinstance(spec, RaggedTensorSpec):  # its components: flat values, row splits
        if not spec.is_compatible_with(value):
            raise TypeError(f"{name}: expected a value of {spec}, got {value!r}")
        out.extend(value._to_components() if isinstance(value, RaggedTensor) else [value])
    elif isinstance(spec, SparseTensorSpec):  # its components: indices, values, shape
        if not spec.is_compatible_with(value):
            raise TypeError(f"{name}: expected a value of {spec}, got {value!r}")
        out.extend(value)
    elif isinstance(spec, dict):
        if not isinstance(value, dict) or sorted(value) != sorted(spec):
            raise TypeError(f"{name}: expected a dict with keys {sorted(spec)}, got {value!r}")
        for k in sorted(spec):
            _flatten_up_to(spec[k], value[k], out, name)
    elif isinstance(spec, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(spec):
            raise TypeError(f"{name}: expected a sequence of {len(spec)} elements matching "
                            f"{spec}, got {value!r}")
        for s, v in zip(spec, value):
            _flatten_up_to(s, v, out, name)
    elif isinstance(value, Tensor) or spec != value:  # a Python value traced as such
        raise TypeError(f"{name}: expected the Python value {spec!r}, got {value!r}")


class RestoredFunction:
    """A saved `tf.function`: its concrete functions, tried in order."""

    def __init__(self, name: str, concrete: list, arg_names: list, input_signature,
                 defaults=()):
        self.name = name
        self.concrete_functions = list(concrete)
        self._arg_names = list(arg_names)
        self._defaults = dict(zip(self._arg_names[len(self._arg_names) - len(defaults):],
                                  defaults))
        self.input_signature = input_signature

    def __call__(self, *args, **kwargs):
        args = list(args)
        for n in self._arg_names[len(args):]:
            if n in kwargs:
                args.append(kwargs.pop(n))
            elif n in self._defaults:  # canonicalized as TF does: defaults filled in
                args.append(self._defaults[n])
            else:
                break
        errors = []
        for cf in self.concrete_functions:
            try:
                flat = _bind(cf.structured_input_signature, tuple(args), dict(kwargs), self.name)
            except (TypeError, ValueError) as e:
                errors.append(str(e))
                continue
            if cf.accepts(flat):
                return cf.call_flat(flat)
        raise ValueError(f"Could not find matching concrete function to call loaded from the "
                         f"SavedModel. Got: positional arguments {tuple(args)}, keyword "
                         f"arguments {kwargs}. Expected one of: "
                         f"{[cf.structured_input_signature for cf in self.concrete_functions]}"
                         + (f" ({'; '.join(errors)})" if errors else ""))

    def get_concrete_function(self, *args, **kwargs):
        if not args and not kwargs and len(self.concrete_functions) == 1:
            return self.concrete_functions[0]
        for cf in self.concrete_functions:
            try:
                flat = _bind(cf.structured_input_signature, args, dict(kwargs), self.name)
            except (TypeError, ValueError):
                continue
            if cf.accepts(flat):
                return cf
        raise ValueError(f"No concrete function of {self.name} matches {args} {kwargs}")

    def __get__(self, instance, owner=None):
        return self

    def __repr__(self):
        return f"<RestoredFunction {self.name}>"


class SignatureFunction:
    """A serving signature: keyword arguments in, a dict of tensors out."""

    def __init__(self, concrete: RestoredConcreteFunction, keywords: list, positional: int):
        self.concrete = concrete
        self.name = concrete.name
        self._keywords = list(keywords)
        self._positional = positional

    @property
    def structured_input_signature(self):
        return self.concrete.structured_input_signature

    @property
    def structured_outputs(self):
        return self.concrete.structured_outputs

    @property
    def variables(self):
        return self.concrete.variables

    def __call__(self, *args, **kwargs):
        if len(args) > self._positional:
            raise TypeError(f"Signature function {self.name} takes {self._positional} "
                            f"positional arguments, got {len(args)}")
        for k, v in zip(self._keywords, args):
            if k in kwargs:
                raise TypeError(f"{self.name}: got two values for argument '{k}'")
            kwargs[k] = v
        return self.concrete(**kwargs)

    def __repr__(self):
        return f"<SignatureFunction {self.name}>"

"""`tf.function`: trace a Python function into a graph once per input signature, then run
the graph's compiled plan on every call.

- Tensor arguments are traced by (dtype, shape), Python arguments by value, variables by
  TF's `VariableSpec` (`function_arguments.py`); an `input_signature` of `TensorSpec`s
  gives one trace for every compatible call.
  A call reuses any traced function whose signature accepts it (`[None, 3]` accepts
  `[5, 3]`); `reduce_retracing=True` traces with relaxed shapes after a shape change.
- Eager tensors and variable handles the function uses are captured (see `FuncGraph`).
- Ops with side effects (variable updates, random ops, any `op_def.is_stateful`) run on every
  call even when nothing returned depends on them; Python side effects run only at trace time.
- Called while building another graph (a nested `tf.function`, or a v1 graph), a function
  is inlined: its traced ops are copied into the caller's graph.
- Gradients: a GradientTape used inside the function records graph ops during tracing. A
  tape *around* a call that watches an input or a captured variable makes the call run its
  traced ops one by one eagerly (the same kernels), so the tape records every op: gradients
  of any order, and random/stateful ops run exactly once (no recomputation). Calls no tape
  watches run the compiled plan.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
import weakref
from collections.abc import Callable

import numpy as np

from ndflow.autograph.conversion import convert_or_original, user_error
from ndflow.autograph.options import ConversionOptions
from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.graph import Operation, SymbolicTensor
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.jit import compiler_ir
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import identity
from ndflow.ops.array_fill import zeros
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.tensor_array_ops import TensorArray
from ndflow.ops.variable_creators import variable_creator_scope
from ndflow.passes.mark_for_compilation import MUST_COMPILE_ATTR
from ndflow.runtime import frequent_tracing
from ndflow.runtime.concrete_function import (
    ConcreteFunction,
    OutputSlot,
    accepts,
    rebuild_parts,
    split_parts,
)
from ndflow.runtime.func_graph import FuncGraph, function_graph, tracing_scope
from ndflow.runtime.function_arguments import (
    _encode,
    _flat_signature,
    _spec_of,
    _substitute,
    _tensor_leaves,
)
from ndflow.runtime.lift_initializer import (
    in_function_graph,
    lift_initial_value,
    traced_initial_value,
)

_run_eagerly = False


@tf_export("config.run_functions_eagerly")
def run_functions_eagerly(run_eagerly: bool) -> None:
    """`tf.config.run_functions_eagerly`: call the Python functions directly (debugging)."""
    global _run_eagerly
    _run_eagerly = bool(run_eagerly)


@tf_export("config.functions_run_eagerly")
def functions_run_eagerly() -> bool:
    """Whether `tf.function`s run their Python code eagerly instead of as graphs.

    Returns:
      The value last given to `tf.config.run_functions_eagerly` (False by default).

    Example:
      >>> tf.config.functions_run_eagerly()
      False
    """
    return _run_eagerly


def _graph_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "function"


def _placeholder_name(name: str) -> str:
    """An argument's placeholder name: the parameter's, or TF's fallback "Placeholder" where
    that is no valid op name (`_x`: a name may not start with an underscore)."""
    name = _graph_name(name)
    return name if name[0].isalnum() or name[0] == "." else "Placeholder"


class Function:
    """A polymorphic `tf.function`: one `ConcreteFunction` per traced input signature."""

    def __init__(self, python_function, name: str | None = None, input_signature=None,
                 jit_compile: bool | None = None, reduce_retracing: bool = False,
                 autograph: bool = True, autograph_options=None):
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._input_signature = None if input_signature is None else list(input_signature)
        if self._input_signature is not None:
            for s in _flat_signature(self._input_signature):
                if not isinstance(s, TensorSpec):
                    raise TypeError(f"input_signature must be a possibly nested sequence of "
                                    f"TensorSpec objects, got {s!r}")
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._autograph = autograph
        self._autograph_options = autograph_options
        try:
            self._signature = inspect.signature(python_function)
        except (TypeError, ValueError):
            self._signature = None
        self._exact: dict = {}      # (python key, specs) -> ConcreteFunction
        self._buckets: dict = {}    # python key -> [ConcreteFunction]
        self._traced: list = []     # every ConcreteFunction, in tracing order (as TF lists them)
        self._tracing_count = 0
        # TF's rule for variables: only the first trace may create them, and when it does the
        # function is traced again, creating none, and that trace is the one that runs.
        self._traced_once = False
        self._created_variables = False
        self._initializing_call = None   # the first trace, when it assigns initial values
        self._call_stats_key = None      # frequent_tracing's key for this function
        self._lock = threading.RLock()
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, python_function)

    # -- properties ----------------------------------------------------------------------------
    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        """The specs given, as a tuple (TF's), or None."""
        sig = self._input_signature
        return None if sig is None else tuple(sig)

    @property
    def name(self) -> str:
        return self._name

    def experimental_get_tracing_count(self) -> int:
        return self._tracing_count

    def experimental_get_compiler_ir(self, *args, **kwargs):
        """The compiler IR of this `jit_compile=True` function for these arguments (tensors or
        `TensorSpec`s of static shapes), without running it: a callable
        `(stage='hlo', device_name=None, platform_name=None)` returning it (ndflow's stages,
        not XLA's HLO: ndflow/jit/compiler_ir.py)."""
        if not self._jit_compile:
            raise ValueError("Compiler IR can only be returned for functions marked with "
                             "'jit_compile=True'")
        return compiler_ir.generator(self.get_concrete_function(*args, **kwargs))

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """The signature of every function traced so far, as TensorFlow prints them."""
        return "\n\n".join(cf.pretty_printed_signature(verbose) for cf in self._traced)

    # -- methods: @tf.function on a method binds per instance -----------------------------
    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:
            bound = None
        if bound is None:
            bound = Function(self._python_function.__get__(instance, owner), self._name,
                             self._input_signature, self._jit_compile, self._reduce_retracing,
                             self._autograph, self._autograph_options)
            try:
                self._bound[instance] = bound
            except TypeError:
                pass
        return bound

    # -- calling -------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _run_eagerly and context.executing_eagerly():
            return self._python_function(*args, **kwargs)
        if self._input_signature is not None:
            args = self._convert_to_signature(args)
        bound = self._bind(args, kwargs)
        tracing_count = self._tracing_count
        cf, leaves, refs = self._lookup(bound, trace=True)
        if self._initializing_call is not None:   # the first call initializes variables
            cf, self._initializing_call = self._initializing_call, None
        result = cf._call_leaves(leaves, refs)
        if context.executing_eagerly():   # TF's warning when calls retrace too often
            if self._call_stats_key is None:   # constant per function: found once
                self._call_stats_key = frequent_tracing.call_stats_key(self._python_function,
                                                                       self)
            frequent_tracing.record_call(self._call_stats_key,
                                         self._tracing_count != tracing_count,
                                         self._python_function)
        return result

    def _convert_to_signature(self, args) -> tuple:
        """TF converts Python values passed for a `TensorSpec` of the input_signature to
        tensors of the spec's dtype (`f([1.0, 2.0])`); unconvertible ones are a TypeError."""
        out = list(args)
        for i, (spec, x) in enumerate(zip(self._input_signature, args)):
            if isinstance(spec, TensorSpec) and not isinstance(x, (Tensor, TensorSpec,
                                                                  np.ndarray)):
                try:
                    out[i] = convert_to_tensor(x, spec.dtype)
                except (TypeError, ValueError) as e:
                    raise TypeError(f"Binding inputs to tf.function `{self._name}` failed due "
                                    f"to `{e}`. Received args: {args}") from None
        return tuple(out)

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The function traced for these arguments (tensors or `TensorSpec`s), tracing if new."""
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        bound = self._bind(args, kwargs)
        cf, _, _ = self._lookup(bound, trace=True)
        return cf

    def _leaves(self, args, kwargs) -> tuple:
        """The tensor arguments of a call, flattened in trace order, and its variables and
        other by-reference arguments."""
        leaves: list = []
        refs: list = []
        for _, v in self._arguments(self._bind(args, kwargs)):
            _encode(v, leaves, refs)
        return leaves, refs

    def _bind(self, args, kwargs):
        if self._signature is None:
            return None, list(args), dict(kwargs)
        try:
            ba = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"Binding inputs to tf.function `{self._name}` failed due to `{e}`."
                            f" Received args: {args} and kwargs: {kwargs}") from None
        ba.apply_defaults()
        return ba, None, None

    def _arguments(self, bound):
        ba, args, kwargs = bound
        if ba is None:
            return list(enumerate(args)) + sorted(kwargs.items())
        return list(ba.arguments.items())

    def _lookup(self, bound, trace: bool):
        items = self._arguments(bound)
        leaves: list = []
        refs: list = []
        relaxed: dict = {}
        key = tuple((name, _encode(v, leaves, refs, relaxed)) for name, v in items)
        if self._input_signature is not None:
            specs = self._check_signature(items, leaves)
        else:
            specs = tuple(_spec_of(x) if not isinstance(x, np.ndarray)
                          else _spec_of(convert_to_tensor(x)) for x in leaves)
            if relaxed:
                specs = tuple((d, relaxed.get(i, s)) for i, (d, s) in enumerate(specs))
        cf = self._exact.get((key, specs))
        if cf is not None:
            return cf, leaves, refs
        with self._lock:
            for cand in self._buckets.get(key, ()):
                if all(accepts(s, a) for s, a in zip(cand._arg_specs, specs)):
                    self._exact[(key, specs)] = cand
                    return cand, leaves, refs
            trace_specs = specs
            bucket = self._buckets.get(key)
            if self._reduce_retracing and bucket:
                prev = bucket[-1]._arg_specs
                trace_specs = tuple(
                    (d, p[1].most_specific_compatible_shape(s)) if p[0] is d else (d, s)
                    for p, (d, s) in zip(prev, specs))
            cf = self._trace_checking_variables(bound, trace_specs, refs)
            self._buckets.setdefault(key, []).append(cf)
            self._traced.append(cf)
            self._exact[(key, specs)] = cf
        return cf, leaves, refs

    def _check_signature(self, items, leaves) -> tuple:
        sig = self._input_signature
        n = len(sig)
        positional = [v for _, v in items[:n]]
        flat_sig = _flat_signature(sig)
        n_leaves = len([x for v in positional for x in _tensor_leaves(v)])
        if len(positional) < n or n_leaves != len(flat_sig) or len(leaves) != len(flat_sig):
            raise TypeError(f"Binding inputs to tf.function `{self._name}` failed: the "
                            f"arguments do not match input_signature {sig}.")
        for i, (spec, x) in enumerate(zip(flat_sig, leaves)):
            actual = _spec_of(x) if not isinstance(x, np.ndarray) else \
                _spec_of(convert_to_tensor(x, spec.dtype))
            if not accepts((spec.dtype, spec.shape), actual):
                raise TypeError(f"Binding inputs to tf.function `{self._name}` failed: input "
                                f"{i} ({actual[0].name} tensor of shape {actual[1]}) is not "
                                f"compatible with {spec}.")
        return tuple((s.dtype, s.shape) for s in flat_sig)

    # -- tracing -------------------------------------------------------------------------------
    def _trace_checking_variables(self, bound, specs: tuple, refs: list) -> ConcreteFunction:
        """A trace under TF's variable rules: the first may create variables (then a second
        trace, which must create none, replaces it); later ones may not."""
        created: list = []
        if self._traced_once:
            if self._created_variables:
                return self._trace(bound, specs, refs, _refusing_creator(_SINGLETON_ERROR))
            cf = self._trace(bound, specs, refs, _recording_creator(created))
            if created:   # TF checks after the trace, outside the user's code
                raise ValueError(_NON_FIRST_ERROR)
            return cf
        deferred: list = []
        first = self._trace(_copy_bound(bound), specs, refs,
                            _recording_creator(created, deferred))
        self._traced_once = True
        if not created:
            return first
        self._created_variables = True
        if deferred:
            self._initializing_call = first
        return self._trace(bound, specs, refs, _refusing_creator(_SINGLETON_ERROR))

    def _trace(self, bound, specs: tuple, refs: list, creator) -> ConcreteFunction:
        fg = function_graph(_graph_name(self._name))
        items = self._arguments(bound)
        names = [str(n) for n, v in items for _ in _tensor_leaves(v)]
        sig_names = [s.name for s in _flat_signature(self._input_signature or [])]
        with tracing_scope(fg):
            for i, (dtype, shape) in enumerate(specs):
                name = sig_names[i] if i < len(sig_names) and sig_names[i] else names[i]
                fg.arg_inputs.append(fg.add_placeholder(dtype, shape, _placeholder_name(name)))
            it = iter(fg.arg_inputs)
            ba, args, kwargs = bound
            if ba is None:
                call_args = [_substitute(a, it) for a in args]
                call_kwargs = {k: _substitute(kwargs[k], it) for k in sorted(kwargs)}
                parameters = [(str(i), "POSITIONAL_ONLY", a) for i, a in enumerate(call_args)]
                parameters += [(k, "KEYWORD_ONLY", v) for k, v in call_kwargs.items()]
            else:
                for name, v in list(ba.arguments.items()):
                    ba.arguments[name] = _substitute(v, it)
                call_args, call_kwargs = ba.args, ba.kwargs
                kinds = self._signature.parameters
                parameters = [(n, kinds[n].kind.name, v) for n, v in ba.arguments.items()]
            with variable_creator_scope(creator):
                result = self._call_python(call_args, call_kwargs)
            structure = _collect_outputs(fg, result)
        if self._jit_compile:
            _mark_must_compile(fg)
        self._tracing_count += 1
        cf = ConcreteFunction(fg, specs, structure, refs, self)
        cf._parameters = parameters
        return cf

    def _call_python(self, args, kwargs):
        """The Python function, converted by AutoGraph unless `autograph=False`; an error it
        raises names the user's line, as TensorFlow's do."""
        if not self._autograph:
            return self._python_function(*args, **kwargs)
        options = ConversionOptions.make(True, self._autograph_options)
        fn = convert_or_original(self._python_function, options)
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            rewritten = user_error(e)
            if rewritten is None:
                raise
            raise rewritten.with_traceback(e.__traceback__) from None

    def __repr__(self):
        return f"<ndflow.function {self._name}>"


_SINGLETON_ERROR = ("tf.function only supports singleton tf.Variables created on the first "
                    "call. Make sure the tf.Variable is only created once or created outside "
                    "tf.function. See https://www.tensorflow.org/guide/function"
                    "#creating_tfvariables for more information.")
_NON_FIRST_ERROR = "Creating variables on a non-first call to a function decorated with " \
                   "tf.function."


def _recording_creator(created: list, deferred: list | None = None):
    def creator(next_creator, **kwargs):
        created.append(True)
        if kwargs.get("initial_value") is None:   # TF's UnliftedInitializerVariable
            raise ValueError("`initial_value` must be a Tensor or a Python object convertible "
                             "to a Tensor. Got None.")
        # a tensor of the trace (TF calls a callable initial value in the trace too): run
        # once, eagerly (TF lifts it)
        value = lift_initial_value(traced_initial_value(kwargs["initial_value"],
                                                        kwargs.get("dtype")))
        if not in_function_graph(value):
            kwargs["initial_value"] = value
            return next_creator(**kwargs)
        # it needs the function's arguments: the first trace, which ran the Python code,
        # assigns it and runs once, on the first call (TF's cond-guarded initializer); a
        # later trace is TF's ValueError once it ends
        kwargs["initial_value"] = functools.partial(zeros, value.shape, value.dtype)
        v = next_creator(**kwargs)
        if deferred is not None:
            v.assign(value)
            deferred.append(v)
        return v
    return creator


def _refusing_creator(message: str):
    def creator(next_creator, **kwargs):
        raise ValueError(message)
    return creator


def _copy_bound(bound):
    """`bound` with its own arguments dict (a trace substitutes placeholders into it)."""
    ba, args, kwargs = bound
    if ba is None:
        return bound
    return inspect.BoundArguments(ba.signature, dict(ba.arguments)), args, kwargs


def _collect_outputs(fg: FuncGraph, result):
    """Flattens the returned structure: tensors become graph outputs, None stays None; an
    IndexedSlices becomes its component tensors, rebuilt by the caller, and so does a value
    made of tensors (a PerReplica: its parts)."""
    result = split_parts(result)
    slots = []
    structured = []
    for leaf in flatten(result):
        if leaf is None or isinstance(leaf, Operation):  # an op runs as a target: None
            slots.append(OutputSlot(None, None))
            structured.append(None)
            continue
        if isinstance(leaf, IndexedSlices):
            slots.append(OutputSlot(len(fg.outputs), leaf))
            parts = [_graph_output(fg, p) for p in (leaf.values, leaf.indices, leaf.dense_shape)
                     if p is not None]
            structured.append(IndexedSlices(*parts))
            continue
        template = None
        if isinstance(leaf, TensorArray):  # returned as its flow, rebuilt by the caller
            template, leaf = leaf, leaf.flow
        t = leaf
        if not isinstance(leaf, Tensor):
            try:
                t = convert_to_tensor(leaf)
            except (TypeError, ValueError):
                slots.append(OutputSlot(None, leaf))
                structured.append(leaf)
                continue
        slots.append(OutputSlot(len(fg.outputs), template))
        structured.append(_graph_output(fg, t))
    fg.structured_outputs = rebuild_parts(pack_sequence_as(result, structured))
    return pack_sequence_as(result, slots)


def _graph_output(fg: FuncGraph, t):
    """`t` as the function graph's next output (captured if from outside)."""
    t = convert_to_tensor(t)
    if not (isinstance(t, SymbolicTensor) and t.graph is fg):
        t = fg.capture(t)
    with fg.as_default():  # TF returns Identity copies: the producers stay optimizable
        t = identity(t)
    fg.outputs.append(t)
    return t


@tf_export("function")
def function(func=None, input_signature=None, autograph: bool = True,
             jit_compile: bool | None = None, reduce_retracing: bool = False,
             experimental_implements=None, experimental_autograph_options=None,
             experimental_attributes=None, experimental_relax_shapes=None,
             experimental_compile=None, experimental_follow_type_hints=None,
             name=None) -> Function | Callable:
    """Compiles a Python function into a callable that runs as a graph.

    Usable as `@tf.function`, `@tf.function(...)` or `tf.function(fn, ...)`. Calling the result
    traces `func` into a graph once per new input signature (dtypes and shapes of tensor
    arguments, values of Python arguments) and then runs the graph. AutoGraph converts Python
    `if`/`while`/`for` on tensors into graph control flow. Side effects in Python (print,
    appending to lists) happen only while tracing; use `tf.print` for run-time output.

    Args:
      func: the function to compile (None when used as `@tf.function(...)`).
      input_signature: optional list of `tf.TensorSpec`s fixing the accepted inputs (one
        trace; None dimensions accept any size).
      autograph: whether to convert Python control flow on tensors.
      jit_compile: if True, compile the whole function with ndflow's JIT (XLA-style).
      reduce_retracing: if True, generalize shapes to avoid retracing for new sizes.
      experimental_implements: recorded as the function's "implements" attribute.
      experimental_autograph_options: accepted for compatibility.
      experimental_attributes: optional dict of function attributes.
      experimental_relax_shapes: deprecated alias of `reduce_retracing`.
      experimental_compile: deprecated alias of `jit_compile`.
      experimental_follow_type_hints: accepted for compatibility.
      name: optional name of the function.

    Returns:
      A `tf.types.experimental.PolymorphicFunction` (or, with `func` None, a decorator).

    Example:
      >>> @tf.function
      ... def add_one(x):
      ...     return x + 1
      >>> int(add_one(tf.constant(1)))
      2
    """
    if experimental_relax_shapes is not None:
        reduce_retracing = bool(experimental_relax_shapes)
    if experimental_compile is not None and jit_compile is None:
        jit_compile = experimental_compile

    def decorate(fn):
        if isinstance(fn, Function):
            fn = fn.python_function
        return Function(fn, name, input_signature, jit_compile, reduce_retracing, autograph,
                        experimental_autograph_options)

    return decorate if func is None else decorate(func)


def _mark_must_compile(fg: FuncGraph) -> None:
    """tf.function(jit_compile=True): every op of the function must be compiled (TF's
    `_XlaMustCompile` on the call). The clustering pass gathers them into must-compile clusters
    (ndflow/passes/mark_for_compilation.py), which the JIT compiles with no fallback; an op the
    JIT cannot compile stays outside them."""
    for op in fg.get_operations():
        op.attrs.setdefault(MUST_COMPILE_ATTR, True)

"""`ConcreteFunction`: one traced graph of a `tf.function` and the ways to run it.

- Eagerly, with no tape watching its inputs: the graph is compiled once into a `Plan`
  (after the graph pass pipeline) and each call feeds argument values and captured values.
- Eagerly, with a tape watching an input or a captured variable: the traced ops run one by
  one through the eager executor and are recorded on the tapes (exact gradients of any
  order; stateful ops run once).
- While building another graph: the ops are copied into it (`inline_graph`).
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import itertools
import re
import threading

import numpy as np

from ndflow.core import context, optimizer_options, traceback_utils
from ndflow.core.errors import InvalidArgumentError, OpError
from ndflow.core.graph_def import dtype_name, function_def
from ndflow.core.nest import flatten, map_structure, pack_sequence_as
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.kernels.kernel_states import KernelStates, using
from ndflow.ops.apply import convert_to_tensor, numpy_to_torch, out_of_scope_error
from ndflow.ops.forward_copies import ForwardCopy
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.tensor_array_ops import from_flow
from ndflow.passes.pass_config import resolve_pass_config
from ndflow.passes.prune import needed_ops
from ndflow.runtime.compile import compile_plan, optimize, stateful_ops
from ndflow.runtime.func_graph import FuncGraph, inline_graph
from ndflow.runtime.function_executor import check_executor_type
from ndflow.runtime.plan import Plan
from ndflow.runtime.shape_plans import ShapePlans
from ndflow.runtime.signature_text import short_signature_text, signature_text
from ndflow.runtime.state import EAGER_CONTEXT

_INFERENCE_IDS = itertools.count(1)   # the numbers of `__inference_<name>_<n>`

# Plans a function keeps for earlier optimizer settings (tf.config.optimizer.set_jit turned
# off and on again reuses them; each holds its kernels and compiled clusters).
PLANS_KEPT = 4

# Callables told of each eager call of a ConcreteFunction (`tf.summary.trace_on` records the
# graphs that ran); empty, as almost always, it costs one truth test per call.
CALL_OBSERVERS: list = []


class OutputSlot:
    """A leaf of a function's output structure: graph output `index` (a TensorArray like
    `value` when `value` is one: the output is its flow), or a Python `value`."""

    __slots__ = ("index", "value")

    def __init__(self, index: int | None, value):
        self.index = index
        self.value = value

    def __repr__(self):
        return f"OutputSlot({self.index}, {self.value!r})"


_LITERALS = (bool, int, float, complex, str, bytes)


def _is_literal(value) -> bool:
    """A traced plain Python value (numbers, strings, and containers of them only: tensors,
    specs, composites and other objects are arguments to pass)."""
    leaves = flatten(value)
    return bool(leaves) and all(isinstance(x, _LITERALS) for x in leaves)


def _same_literal(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - values without a usable == are not the traced one
        return a is b


class PartsOf:
    """Marks, in a function's output structure, the parts of a value made of tensors
    (tf.distribute's PerReplica: `_tf_function_parts()`): `(PartsOf(type), *parts)` is
    traced as its parts and rebuilt as `type(parts)` by `rebuild_parts`."""

    __slots__ = ("cls",)

    def __init__(self, cls):
        self.cls = cls


def _map_nested(fn, value):
    """`value` with `fn` applied to the items of its dicts, lists and plain tuples (the same
    object where nothing changed)."""
    if isinstance(value, dict):
        items = {k: fn(v) for k, v in value.items()}
        if all(items[k] is value[k] for k in items):
            return value
        out = copy.copy(value)   # (a dict subclass keeps its kind: defaultdict, ...)
        out.update(items)
        return out
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        items = [fn(v) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


def split_parts(value):
    """`value` with each value made of tensors replaced by `(PartsOf(type), *parts)`."""
    if hasattr(value, "_tf_function_parts") and not isinstance(value, Tensor):
        return (PartsOf(type(value)), *map(split_parts, value._tf_function_parts()))
    return _map_nested(split_parts, value)


def rebuild_parts(value):
    """`split_parts` undone on a returned structure."""
    if isinstance(value, tuple) and value and isinstance(value[0], PartsOf):
        return value[0].cls(tuple(rebuild_parts(v) for v in value[1:]))
    return _map_nested(rebuild_parts, value)


def _rebuild(slot: OutputSlot, flat: list):
    """An output leaf from the flat outputs: a tensor, a TensorArray around its flow, an
    IndexedSlices from its components, or a Python value."""
    if slot.index is None:
        return slot.value
    if isinstance(slot.value, IndexedSlices):
        i, has_shape = slot.index, slot.value.dense_shape is not None
        return IndexedSlices(flat[i], flat[i + 1], flat[i + 2] if has_shape else None)
    return from_flow(slot.value, flat[slot.index])


def accepts(spec: tuple, actual: tuple) -> bool:
    """Whether a function traced for `spec` can run a tensor of `actual` (dtype, shape)."""
    if spec[0] is not actual[0]:
        return False
    s, a = spec[1], actual[1]
    if s.rank is None:
        return True
    if a.rank != s.rank:
        return False
    return all(d is None or d == e for d, e in zip(s.as_tuple(), a.as_tuple()))


class ConcreteFunction:
    """A traced function: `graph` (a FuncGraph), callable with tensors matching its specs."""

    def __init__(self, graph: FuncGraph, arg_specs: tuple, output_structure, refs=(),
                 function=None):
        self.graph = graph
        self._arg_specs = tuple(arg_specs)
        self._structure = output_structure
        self._slots = flatten(output_structure)
        self._has_parts = any(isinstance(getattr(s, "value", None), PartsOf) for s in self._slots)
        self._refs = list(refs)          # arguments keyed by id (variables) stay alive
        self._function = function
        self._out_dtypes = [t.dtype for t in graph.outputs]
        self._plan = None
        self._plan_options = None        # optimizer-options version the plan was built for
        self._plans: dict = {}           # version -> plan, the last PLANS_KEPT settings'
        self._shape_plans = None         # plans for the argument shapes it is called with
        self._capture_vals = None
        self._eager_ops = None
        self._lock = threading.Lock()
        # its random kernels' streams (kernels/kernel_states.py); a call a tape watches runs
        # TF's forward function, an instantiation of its own
        self._kernel_states, self._tape_kernel_states = KernelStates(), KernelStates()

    # -- introspection -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.graph.name

    @property
    def function_def(self):
        """TF's FunctionDef proto of this function's graph: input args from its inputs
        (captures included; named as TF names them, `mul_readvariableop_resource`), the
        body's nodes, and output args named after the Identity ops that return the outputs
        (`identity`, `identity_1`, ...)."""
        fd = function_def(self.graph)
        renamed = {}   # TF's arg names: lower case, "_" for anything but [a-z0-9_]
        for arg in fd.signature.input_arg:
            name = re.sub(r"[^a-z0-9_]", "_", arg.name.lower())
            while name in renamed.values():
                name += "_1"
            renamed[arg.name], arg.name = name, name
        for node in fd.node_def:
            for k, ref in enumerate(node.input):
                if ref in renamed:
                    node.input[k] = renamed[ref]
        rets = dict(fd.ret)
        fd.ClearField("ret")
        for arg, t in zip(fd.signature.output_arg, self.graph.outputs):
            ret = rets[arg.name]
            if t.op.type == "Identity":
                arg.name = t.op.name.lower()
            fd.ret[arg.name] = ret
        return fd

    @property
    def inputs(self) -> list:
        return self.graph.inputs

    @property
    def outputs(self) -> list:
        return list(self.graph.outputs)

    @property
    def captured_inputs(self) -> list:
        return self.graph.external_captures

    @property
    def variables(self) -> tuple:
        return tuple(self.graph.variables)

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.graph.variables if getattr(v, "trainable", True))

    @property
    def structured_outputs(self):
        return self.graph.structured_outputs

    @property
    def output_shapes(self):
        """The structured outputs' static shapes (TensorShape(None) for a non-tensor)."""
        return map_structure(lambda t: getattr(t, "shape", TensorShape(None)),
                             self.structured_outputs)

    @property
    def output_dtypes(self):
        """The structured outputs' dtypes (None for a non-tensor)."""
        return map_structure(lambda t: getattr(t, "dtype", None), self.structured_outputs)

    @property
    def structured_input_signature(self) -> tuple:
        specs = tuple(TensorSpec(t.shape, t.dtype, t.op.name) for t in self.graph.arg_inputs)
        return specs, {}

    def _parameter_list(self) -> list:
        params = getattr(self, "_parameters", None)
        if params is None:   # not traced from Python arguments (a loaded function)
            params = [(t.op.name, "POSITIONAL_ONLY", t) for t in self.graph.arg_inputs]
        sig = getattr(self._function, "_input_signature", None)
        if sig:   # TF shows the input signature's specs (their names too)
            params = [(n, k, sig[i]) if i < len(sig) and k.startswith("POSITIONAL") else
                      (n, k, v) for i, (n, k, v) in enumerate(params)]
        return params

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        """Its parameters, output type and captures, as TensorFlow prints them (one line
        without `verbose`)."""
        if not verbose:
            return short_signature_text(self._parameter_list(), self.structured_outputs)
        return signature_text(self._parameter_list(), self.structured_outputs,
                              self.captured_inputs)

    def __str__(self):
        return "ConcreteFunction " + self.pretty_printed_signature()

    def __repr__(self):
        return f"<ConcreteFunction {self.pretty_printed_signature(verbose=False)} at " \
               f"0x{id(self):X}>"

    # -- calling -------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._function is not None:
            args, kwargs = self._with_traced_literals(args, kwargs)
            leaves, refs = self._function._leaves(args, kwargs)
        else:
            leaves = [x for x in flatten((args, kwargs)) if isinstance(x, (Tensor, np.ndarray))]
            refs = None
        if len(leaves) != len(self._arg_specs):
            raise TypeError(f"{self.name}: expected {len(self._arg_specs)} tensor arguments, "
                            f"got {len(leaves)}")
        for i, (spec, x) in enumerate(zip(self._arg_specs, leaves)):
            if isinstance(x, Tensor) and x.dtype != spec[0]:
                raise InvalidArgumentError(
                    None, None, f"cannot compute {self.name} as input #{i}(zero-based) was "
                    f"expected to be a {dtype_name(spec[0])} tensor but is a "
                    f"{dtype_name(x.dtype)} tensor [Op:{self.name}]")
            if isinstance(x, Tensor) and not accepts(spec, (x.dtype, x.shape)):
                raise TypeError(f"{self.name}: argument {i} ({x.dtype.name} tensor of shape "
                                f"{x.shape}) is not compatible with TensorSpec(shape="
                                f"{spec[1]}, dtype={spec[0].name}).")
        return self._call_leaves(leaves, refs)

    def _with_traced_literals(self, args, kwargs) -> tuple:
        """TF's binding of a call to the traced signature: the Python values the trace took
        (`Literal[2]`) are the defaults of their parameters and must be passed unchanged."""
        params = getattr(self, "_parameters", None)
        plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                 inspect.Parameter.KEYWORD_ONLY)
        if not params or not all(str(n).isidentifier() and getattr(inspect.Parameter, k)
                                 in plain for n, k, _ in params):
            return args, kwargs
        literals = {n: v for n, _, v in params if _is_literal(v)}
        signature = inspect.Signature([inspect.Parameter(
            n, getattr(inspect.Parameter, k),
            default=literals.get(n, inspect.Parameter.empty)) for n, k, _ in params])
        try:
            bound = signature.bind(*args, **kwargs)
            for name, value in bound.arguments.items():
                if name in literals and not _same_literal(value, literals[name]):
                    raise TypeError(f"Can not cast {value!r} to Literal[{literals[name]!r}]")
        except TypeError as e:
            raise TypeError(f"Binding inputs to tf.function failed due to `{e}`. Received "
                            f"args: {args} and kwargs: {kwargs} for signature: "
                            f"{self.pretty_printed_signature(verbose=False)}.") from None
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def _call_leaves(self, leaves, refs=None) -> object:
        tensors = []
        for x, spec in zip(leaves, self._arg_specs):
            if not isinstance(x, Tensor):
                if isinstance(x, TensorSpec):
                    raise TypeError("A TensorSpec can only be used to trace a function, not "
                                    "to call it.")
                x = convert_to_tensor(x, spec[0])
            tensors.append(x)
        flat = self._call_flat(tensors, self._other_variables(refs))
        out = pack_sequence_as(self._structure, [_rebuild(s, flat) for s in self._slots])
        return rebuild_parts(out) if self._has_parts else out

    def _other_variables(self, refs) -> dict | None:
        """For the variable arguments (traced by spec, as TF's VariableSpec) that are not the
        ones the trace saw: {id(traced variable): the call's, id(its handle): the call's
        handle}; None if all are the traced ones."""
        if not refs or refs is self._refs:
            return None
        other = {}
        for traced, given in zip(self._refs, refs):
            if given is not traced and getattr(given, "_traced_by_spec", False):
                other[id(traced)] = given
                other[id(traced.handle)] = given.handle
        return other or None

    def _bound_captures(self, other: dict | None) -> tuple:
        """The external captures and their values for a call, with the handles of the traced
        variable arguments replaced by those of the call's variables."""
        captures = self._captures()
        if other is None:
            return captures, self._capture_vals
        captures = [other.get(id(c), c) for c in captures]
        return captures, [c._value for c in captures]

    def _call_flat(self, tensors: list, other: dict | None = None) -> list:
        """Runs the function on flat argument tensors; returns the flat outputs. `other`:
        the call's variables bound in place of the traced ones (`_other_variables`)."""
        if not context.executing_eagerly():
            return inline_graph(self.graph, tensors, self.graph.outputs, other)
        check_executor_type()
        for observe in CALL_OBSERVERS:
            observe(self)
        captures, capture_vals = self._bound_captures(other)
        tapes = context.active_tapes()
        if tapes and self._watched_by(tapes, tensors, captures, other):
            with using(self._tape_kernel_states, nested=True):
                return self.run_ops_eagerly(tensors + captures)
        try:
            plan = self._plan
            if plan is None or self._plan_options != optimizer_options.version():
                plan = self._build_plan()
            values = [t._value for t in tensors]
            if self._shape_plans.dynamic:
                plan = self._shape_plans.plan_for(values, self._plan_options,
                                                  self._specialized_plan) or plan
            with using(self._kernel_states, nested=True):
                outs = plan.run(values + capture_vals)
        except OpError as e:
            raise graph_execution_error(e, self._inference_name()) from None
        return [EagerTensor(v, d) for v, d in zip(outs, self._out_dtypes)]

    def _inference_name(self) -> str:
        """TF's name of the function's instantiation in its errors, `__inference_<the
        tf.function's name>_<a number>` (TF's is a global id; here the calls' order of
        first failure), or the name of a loaded one that has it already."""
        name = self.__dict__.get("_tf_inference_name")
        if name is None:
            base = getattr(self._function, "_name", None)
            base = base if isinstance(base, str) else self.graph.name
            name = base if base.startswith("__inference_") \
                else f"__inference_{base}_{next(_INFERENCE_IDS)}"
            self._tf_inference_name = name
        return name

    def _captures(self) -> list:
        caps = self.graph.external_captures
        if self._capture_vals is None:
            for c in caps:
                if not isinstance(c, EagerTensor):  # traced inside another graph
                    raise out_of_scope_error(c)
            self._capture_vals = [c._value for c in caps]
        return caps

    def _watched_by(self, tapes, tensors, captures, other: dict | None) -> bool:
        """Notifies tapes of variable use; whether some tape watches an input or capture."""
        for var in self.graph.variables:
            var = other.get(id(var), var) if other else var
            for tape in tapes:
                tape.variable_accessed(var)
        ins = list(tensors) + captures
        for tape in tapes:
            watches = getattr(tape, "watches", None)
            if watches is not None and any(watches(t) for t in ins):
                return True
        return False

    # -- compiled execution --------------------------------------------------------------------
    def _targets(self) -> list:
        """The ops every call runs though no output needs them: the stateful ones (TF's
        automatic control dependencies; a TF1 `wrap_function` runs only those it returned)."""
        return stateful_ops(self.graph)

    def optimized_graph(self):
        """The graph this function runs: its traced graph after the graph pass pipeline
        (constant folding, the auto-mixed-precision rewrite, CSE, ...) under the current
        `tf.config.optimizer` options. A new Graph each call, for inspection:

            g = f.get_concrete_function(x).optimized_graph()
            [(op.name, op.get_attr("T")) for op in g.get_operations() if op.type == "MatMul"]
        """
        g = self.graph
        return optimize(g, g.inputs, list(g.outputs), self._targets(), resolve_pass_config(),
                        graph_id=self.name)[0]

    def experimental_get_memory_plan(self) -> dict:
        """ndflow extension (TensorFlow has no CPU allocator stats): the memory plan of the
        compiled plan this function runs, {'peak': bytes of intermediates live at once,
        'measured': whether a run measured them (shapes not all static), 'steps': kernels}.
        'peak' is None while the shapes are unknown and the function has not run."""
        return self._build_plan().memory_plan().as_dict()

    def _build_plan(self) -> Plan:
        with self._lock:
            version = optimizer_options.version()
            if self._plan is None or self._plan_options != version:
                plan = self._plans.pop(version, None)
                if plan is None:
                    g = self.graph
                    plan = compile_plan(g, g.inputs, list(g.outputs), self._targets(),
                                        resolve_pass_config(), EAGER_CONTEXT,
                                        context.soft_device_placement(), graph_id=self.name)
                self._plans[version] = plan   # (re)inserted last: the most recent
                while len(self._plans) > PLANS_KEPT:
                    self._plans.pop(next(iter(self._plans)))
                self._plan, self._plan_options = plan, version
                if self._shape_plans is None:
                    n = len(self.graph.inputs) - len(self.graph.external_captures)
                    self._shape_plans = ShapePlans(self.graph.inputs[:n])
        return self._plan

    def _specialized_plan(self, feed_specs: dict) -> Plan:
        """The plan for calls whose arguments have the shapes in `feed_specs`
        (runtime/shape_plans.py)."""
        with self._lock:
            g = self.graph
            return compile_plan(g, g.inputs, list(g.outputs), self._targets(),
                                resolve_pass_config(), EAGER_CONTEXT,
                                context.soft_device_placement(), graph_id=self.name,
                                feed_specs=feed_specs, specialize=True)

    # -- op-by-op execution (under a tape) -----------------------------------------------------
    def _ops_to_run(self) -> list:
        if self._eager_ops is None:
            g = self.graph
            fed = set(g.inputs)
            need = needed_ops(g.outputs, self._targets(), fed)
            steps = []
            for op in g.get_operations():
                if op not in need:
                    continue
                const = None
                if op.type == "Const":
                    const = EagerTensor(numpy_to_torch(np.asarray(op.attrs["value"]),
                                                       op.attrs["dtype"]), op.attrs["dtype"])
                steps.append((op, const))
            self._eager_ops = steps
        return self._eager_ops

    def run_ops_eagerly(self, values: list) -> list:
        """Runs the traced ops one by one, recording them on the active tapes. Each record
        keeps where the graph's tensors went (ops/forward_copies.py), so a gradient function
        that refers to them (a tf.custom_gradient's closing over `e = tf.exp(x)`) gets this
        run's values; one the outputs did not need is computed then."""
        env = dict(zip(self.graph.inputs, values))

        def rematerialize(t):
            need: set = set()
            stack = [t.op]
            while stack:
                op = stack.pop()
                if op not in need:
                    need.add(op)
                    stack.extend(i.op for i in op.inputs if i not in env)
            for op in self.graph.get_operations():
                if op in need:
                    self._run_op(op, None, env, copies)
            return env[t]

        copies = ForwardCopy(self.graph, env, rematerialize=rematerialize)
        for op, const in self._ops_to_run():
            self._run_op(op, const, env, copies)
        return [env[t] for t in self.graph.outputs]

    @staticmethod
    def _run_op(op, const, env: dict, copies: ForwardCopy) -> None:
        if const is not None:
            env[op.outputs[0]] = const
            return
        ins = [env[t] for t in op.inputs]
        scope = context.eager_device_scope(op.device) if op.device \
            else contextlib.nullcontext()
        with scope:
            eop = context.hooks.eager_execute(op.op_def, ins, dict(op.attrs), op.name)
        eop.forward_copy = copies.of(op)
        for tape in context.active_tapes():
            tape.record(eop)
        env.update(zip(op.outputs, eop.outputs))


def graph_execution_error(e: OpError, function_name: str | None = None) -> OpError:
    """TensorFlow's error for a failed function call: "Graph execution error:", the node and
    the user's lines that made it, then the kernel's message and `[Op:<function_name>]`."""
    node = getattr(e, "failed_node", None)
    name, frames = node if node is not None else ("", ())
    err = type(e)(None, None, traceback_utils.graph_execution_message(name, frames, e.message,
                                                                      function_name))
    err.failed_node = node
    return err

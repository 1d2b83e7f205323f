"""`tf.compat.v1.wrap_function`: a TF1-style Python function traced once into a graph and
called like a `ConcreteFunction` (`WrappedFunction`), with `prune(feeds, fetches)` to make
functions of subgraphs of it.

The function is traced with one placeholder per (flattened) `TensorSpec` of `signature`,
named by the spec or "Placeholder". Variables it creates (`tf.compat.v1.get_variable`,
`tf.Variable`) are lifted out of the function graph and initialized when made, as every
variable created while tracing is (ops/variables.py), so the wrapped function reads them
through captured handles; they are `.variables`, in creation order, and in the function
graph's GLOBAL_VARIABLES / TRAINABLE_VARIABLES collections as TF's VariableHolder puts them.

TF1 semantics, unlike `tf.function`: no automatic control dependencies, so only what the
outputs need runs (an update nothing returned depends on never runs); a pruned function
also runs the operations among its fetches (their output is None). Outputs are the
returned tensors themselves (no Identity copies), so their names are the graph's. A
wrapped function is called with flat positional tensors (values are converted to the
spec's dtype); a pruned one also by keyword, the feeds' op names. Differences from
TensorFlow: an argument whose shape the spec does not accept is a TypeError (TensorFlow
runs the graph on it), `prune` takes tensors and operations (and their names), not
TensorInfo protos, and `.variables` lists the variables in creation order. Variables that
`import_meta_graph` rebuilds inside the function are lifted as eager variables sharing the
imported VarHandleOp's container and shared name (TF gives each a fresh resource), so two
wrapped imports of one meta graph share those variables' values.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys, Operation, SymbolicTensor
from ndflow.core.nest import flatten, map_structure, pack_sequence_as
from ndflow.core.scopes import init_scope
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import state
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.variable_creators import variable_creator_scope
from ndflow.ops.variables import Variable
from ndflow.passes.prune import needed_ops
from ndflow.runtime.concrete_function import ConcreteFunction, OutputSlot, accepts
from ndflow.runtime.func_graph import FuncGraph, function_graph, tracing_scope


class UnliftableError(Exception):
    """A pruned function's fetch needs a placeholder that is not among its feeds."""


class VariableHolder:
    """Records the variables a wrapped function creates (TF's VariableHolder, a variable
    creator around the traced function) and adds them to the function graph's collections."""

    def __init__(self, fn=None):
        self._fn = fn
        self.variables: list = []

    def _creator(self, next_creator, **kwargs):
        collections = kwargs.get("collections")
        v = next_creator(**kwargs)
        self.variables.append(v)
        graph = context.get_default_graph()
        keys = list(collections) if collections is not None else [GraphKeys.GLOBAL_VARIABLES]
        if v.trainable and GraphKeys.TRAINABLE_VARIABLES not in keys:
            keys.append(GraphKeys.TRAINABLE_VARIABLES)
        for key in dict.fromkeys(keys):
            if not any(x is v for x in graph.get_collection_ref(key)):
                graph.add_to_collection(key, v)
        return v

    def __call__(self, *args, **kwargs):
        with variable_creator_scope(self._creator):
            return self._fn(*args, **kwargs)


def _lift_imported_variables(graph: FuncGraph, made: list) -> list:
    """Eager twins of the graph's own variables (import_meta_graph rebuilds them from their
    VariableDefs, past any variable creator), as TF's `_lift_unlifted_variables`: each twin
    runs a VarHandleOp of the same container and shared name eagerly, so assigning it (a
    Saver restore) fills the resource the function's VarHandleOp reads."""
    lifted = []
    for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES) + \
            graph.get_collection(GraphKeys.LOCAL_VARIABLES):
        handle = getattr(v, "_handle", None)
        if any(v is m for m in made) or not isinstance(handle, SymbolicTensor) or \
                handle.graph is not graph or handle.op.type != "VarHandleOp":
            continue
        op = handle.op
        with init_scope():
            eager = state.var_handle_op(v.dtype, v.shape, container=op.get_attr("container"),
                                        shared_name=op.get_attr("shared_name") or op.name)
        twin = Variable.__new__(Variable)
        twin.__dict__.update(v.__dict__)
        twin._handle = eager
        twin._initializer_op = twin._graph_element = twin._initial_value = None
        twin._is_initialized_op = None
        lifted.append(twin)
    return lifted


def _unique(items) -> list:
    out: list = []
    for x in items:
        if not any(x is y for y in out):
            out.append(x)
    return out


class WrappedFunction(ConcreteFunction):
    """A function traced by `wrap_function` (or pruned from one): callable like a
    `ConcreteFunction`, with `prune`."""

    def __init__(self, graph: FuncGraph, holder: VariableHolder, output_structure,
                 control_outputs=(), signature=None, arg_keywords=None):
        graph.variables[:] = _unique(holder.variables + list(graph.variables) +
                                     _lift_imported_variables(graph, holder.variables))
        specs = tuple((t.dtype, t.shape) for t in graph.arg_inputs)
        super().__init__(graph, specs, output_structure)
        self._variable_holder = holder
        self._control_outputs = list(control_outputs)
        self._signature = signature
        self._arg_keywords = arg_keywords

    @property
    def control_outputs(self) -> list:
        return list(self._control_outputs)

    def _targets(self) -> list:
        """Only the fetched operations run besides what the outputs need (TF1 semantics)."""
        return list(self._control_outputs)

    def __repr__(self):
        return f"<WrappedFunction {self.name} inputs={len(self._arg_specs)}>"

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        n = len(self._arg_specs)
        if self._arg_keywords is None:
            if kwargs:
                raise NotImplementedError("Keyword arguments are not supported when calling a "
                                          f"wrap_function-decorated function. Got {kwargs}.")
            if len(args) > n:  # TensorFlow indexes its signature by the argument
                raise IndexError("list index out of range")
            if len(args) < n:
                inputs = self.graph.inputs
                raise ValueError(f"Signature specifies {len(inputs)} arguments, got: "
                                 f"{len(args) + len(inputs) - n}. Expected inputs: "
                                 f"{[t.op.name for t in inputs]}.")
        else:
            args = self._bind_feeds(args, kwargs)
        tensors = []
        for i, (x, spec) in enumerate(zip(args, self._arg_specs)):
            t = x if isinstance(x, Tensor) and x.dtype is spec[0] else \
                convert_to_tensor(x, spec[0])
            if not accepts(spec, (t.dtype, t.shape)):
                raise TypeError(f"{self.name}: argument {i} ({t.dtype.name} tensor of shape "
                                f"{t.shape}) is not compatible with TensorSpec(shape="
                                f"{spec[1]}, dtype={spec[0].name}).")
            tensors.append(t)
        return self._call_leaves(tensors)

    def _bind_feeds(self, args, kwargs) -> list:
        names = self._arg_keywords
        if len(args) > len(names):
            raise TypeError(f"{self.name}() takes {len(names)} positional arguments but "
                            f"{len(args)} were given")
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{k}'")
            if k in bound:
                raise TypeError(f"{self.name}() got multiple values for argument '{k}'")
            bound[k] = v
        missing = [k for k in names if k not in bound]
        if missing:
            raise TypeError(f"{self.name}() missing required arguments: "
                            f"{', '.join(missing)}.")
        return [bound[k] for k in names]

    # -- pruning ---------------------------------------------------------------------------------
    def prune(self, feeds, fetches, name=None, input_signature=None,
              are_keyword_args_also_positional=False):
        """A function of the subgraph that computes `fetches` (tensors, operations or their
        names, in any nest) from `feeds` (tensors or names, its arguments in order)."""
        g = self.graph
        flat_feeds = [g.as_graph_element(t) for t in flatten(feeds)]
        for f in flat_feeds:
            if not isinstance(f, SymbolicTensor):
                raise ValueError("All members of argument `feeds` must be tensors. "
                                 f"Got {f} with type {type(f)}.")
        internal = {id(c) for c in g.internal_captures}
        flat_feeds = [f for f in flat_feeds if id(f) not in internal]
        tensor_fetches: list = []
        op_fetches: list = []

        def element(fetch):
            if isinstance(fetch, Operation):
                op_fetches.append(fetch)
                return fetch
            if isinstance(fetch, SymbolicTensor):
                tensor_fetches.append(fetch)
                return fetch
            if isinstance(fetch, Tensor):
                raise ValueError(f"Can only prune function whose feeds and fetches from graph "
                                 f"{g}. Input {fetch} is an eager tensor.")
            return element(g.as_graph_element(fetch))

        fetches = map_structure(element, fetches)
        for f in flat_feeds + tensor_fetches + op_fetches:
            if f.graph is not g:
                raise ValueError(f"Can only prune function whose feeds and fetches from graph "
                                 f"{g}. Input {f} is from a different graph {f.graph}.")
        pruned, mapping = _copy_subgraph(g, name or "pruned", flat_feeds, tensor_fetches,
                                         op_fetches)
        pruned.outputs = [mapping[t] for t in tensor_fetches]
        slots, index = [], iter(range(len(tensor_fetches)))
        for leaf in flatten(fetches):
            slots.append(OutputSlot(None, None) if isinstance(leaf, Operation)
                         else OutputSlot(next(index), None))
        pruned.structured_outputs = map_structure(
            lambda f: None if isinstance(f, Operation) else mapping[f], fetches)
        out = WrappedFunction(pruned, self._variable_holder,
                              pack_sequence_as(fetches, slots) if _is_nest(fetches)
                              else slots[0],
                              control_outputs=[mapping[op] for op in op_fetches],
                              arg_keywords=[f.op.name for f in flat_feeds])
        if input_signature:
            out._input_signature = input_signature
        return out


def _is_nest(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def _copy_subgraph(g: FuncGraph, name: str, feeds: list, fetches: list, targets: list):
    """A new FuncGraph holding the ops of `g` that `fetches` and `targets` need given
    `feeds` (its argument placeholders, named by the feeds' ops) and `g`'s captures."""
    pruned = FuncGraph(name, g.outer_graph)
    pruned.seed = getattr(g, "seed", None)
    pruned._device_stack = list(g._device_stack)
    mapping: dict = {}
    for f in feeds:
        if f not in mapping:
            mapping[f] = pruned.add_placeholder(f.dtype, f.shape, f.op.name)
        pruned.arg_inputs.append(mapping[f])
    for ext, ph in g.captures:
        new = pruned.add_placeholder(ph.dtype, ph.shape, ph.op.name)
        pruned._captures[id(ext)] = (ext, new)
        mapping[ph] = new
    fed = set(mapping)
    _check_liftable(targets + fetches, {t.op for t in fed})
    need = needed_ops(fetches, targets, fed)
    for op in g.get_operations():
        if op not in need:
            continue
        new = pruned.create_op(op.op_def, [mapping[t] for t in op.inputs], op.attrs,
                               [(t.dtype, t.shape) for t in op.outputs],
                               pruned.unique_name(op.name),
                               [mapping[c] for c in op.control_inputs if c in mapping],
                               op.device or None)
        mapping[op] = new
        mapping.update(zip(op.outputs, new.outputs))
    pruned.variables = list(g.variables)
    return pruned, mapping


def _inputs_of(op: Operation) -> list:
    return [t.op for t in op.inputs] + list(op.control_inputs)


def _check_liftable(ends: list, source_ops: set) -> None:
    """TF's lift_to_graph check: the first Placeholder found (depth first from each fetch in
    turn) that is not fed is an UnliftableError naming one path to it."""
    visited = set(source_ops)
    for end in ends:
        stack = [end if isinstance(end, Operation) else end.op]
        while stack:
            op = stack.pop()
            if op in visited:
                continue
            visited.add(op)
            if op.type == "Placeholder":
                raise UnliftableError(
                    f"Unable to lift tensor {_tensor_repr(end)} because it depends "
                    f"transitively on placeholder {op!r} via at least one path, e.g.: "
                    f"{_show_path(op, end, source_ops)}")
            stack.extend(i for i in _inputs_of(op) if i not in visited)


def _show_path(from_op: Operation, end, source_ops: set) -> str:
    final = end if isinstance(end, Operation) else end.op
    visited = set(source_ops)
    stack, output_of = [final], {}
    while stack:
        op = stack.pop()
        if op in visited:
            continue
        visited.add(op)
        if op is from_op:
            path = [op]
            while path[-1] is not final:
                path.append(output_of[path[-1]])
            return " <- ".join(f"{x.name} ({x.type})" for x in reversed(path))
        for i in _inputs_of(op):
            if i not in visited:
                output_of[i] = op
                stack.append(i)
    return "??"


def _tensor_repr(t) -> str:
    if isinstance(t, Operation):
        return repr(t)
    return f"<tf.Tensor '{t.name}' shape={t.shape} dtype={t.dtype.name}>"


def _trace(fn, signature, graph_name: str):
    fg = function_graph(graph_name)
    specs = flatten(signature)
    for s in specs:
        if not isinstance(s, TensorSpec):
            raise TypeError(f"signature must be a possibly nested sequence of TensorSpec "
                            f"objects, got {s!r}")
    with tracing_scope(fg):
        for s in specs:
            fg.arg_inputs.append(fg.add_placeholder(s.dtype, s.shape, s.name or "Placeholder"))
        args = pack_sequence_as(list(signature), list(fg.arg_inputs))
        result = fn(*args)
        flat, slots = [], []
        for leaf in flatten(result):
            if isinstance(leaf, Operation):
                raise TypeError("To be compatible with tf.function, Python functions must "
                                "return zero or more Tensors or ExtensionTypes or None "
                                f"values; in compilation of {fn}, found return value of "
                                "type Operation, which is not a Tensor or ExtensionType.")
            if leaf is None:
                slots.append(OutputSlot(None, None))
                flat.append(None)
                continue
            t = leaf if isinstance(leaf, SymbolicTensor) and leaf.graph is fg else \
                fg.capture(convert_to_tensor(leaf))
            slots.append(OutputSlot(len(fg.outputs), None))
            fg.outputs.append(t)
            flat.append(t)
    fg.structured_outputs = pack_sequence_as(result, flat) if _is_nest(result) else flat[0] \
        if flat else None
    structure = pack_sequence_as(result, slots) if _is_nest(result) else \
        (slots[0] if slots else None)
    return fg, structure


@tf_export(v1=["wrap_function"])
def wrap_function(fn, signature, name=None):
    """`fn` traced once, TF1-style, with placeholders for `signature` (a list of
    `TensorSpec`s): a `WrappedFunction` (see the module doc)."""
    if signature is None:
        raise TypeError("'NoneType' object is not iterable")
    holder = VariableHolder(fn)
    graph_name = "wrapped_function" if name is None else "wrapped_function_" + name
    fg, structure = _trace(holder, signature, graph_name)
    return WrappedFunction(fg, holder, structure, signature=signature)

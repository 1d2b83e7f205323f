"""Custom gradients saved with a SavedModel (`SaveOptions(experimental_custom_gradients=True)`,
TensorFlow's default): the library's `registered_gradients` map a `_gradient_op_type` to a
saved gradient function, whose captured inputs are `captured_tensor` nodes naming tensors of
the forward function.

As TensorFlow's loader does, each gradient op type is registered again under a fresh name,
and the forward ops carrying it get that name as their `_gradient_op_type` attr (which the
gradient registry reads, and copies of the op keep). The gradient runs the saved gradient
function on the output gradients and the forward tensors it captured: in a graph, found by
name next to the differentiated op (an inlined copy keeps the forward function's node names
under one prefix); run eagerly under a tape, among the op's own inputs and outputs.
"""

from __future__ import annotations

import inspect
import itertools

from ndflow.core import context
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.gradient_registry import GRADIENTS
from ndflow.runtime.func_graph import inline_graph
from ndflow.runtime.function import Function
from ndflow.saved_model.call_inlining import CALL_OPS
from ndflow.saved_model.restored_resources import CapturedTensor

_LOADS = itertools.count()


def gradient_op_type(node) -> str | None:
    if node.op in CALL_OPS or "_gradient_op_type" not in node.attr:
        return None
    return node.attr["_gradient_op_type"].s.decode()


class CustomGradients:
    """The saved custom gradients of one load. `loader` builds function graphs
    (`_function_graph`) and holds the loaded nodes and the object graph proto."""

    def __init__(self, loader, library):
        self._loader = loader
        self._functions = {g.registered_op_type: g.gradient_func
                           for g in library.registered_gradients if g.registered_op_type}
        self._names: dict = {}         # saved op type -> name registered in this process
        self._load = next(_LOADS)
        self._eager: dict = {}         # gradient function name -> Function

    def bind(self, function_def, graph) -> None:
        """Points the ops of `graph` (built from `function_def`) that carry a saved
        gradient op type at its registration."""
        if not self._functions:
            return
        for node in function_def.node_def:
            op_type = gradient_op_type(node)
            if op_type in self._functions:
                # an attr, so that copies of the op (inlined, or run op by op under a
                # tape) carry it too
                graph.get_operation_by_name(node.name).attrs["_gradient_op_type"] = \
                    self._registered(op_type)

    def _registered(self, op_type: str) -> str:
        name = self._names.get(op_type)
        if name is None:
            name = self._names[op_type] = f"{op_type}_loaded_{self._load}"
            GRADIENTS[name] = self._gradient(op_type)
        return name

    def _forward_name(self, op_type: str, captures: list) -> str | None:
        """The name of the op carrying `op_type` in the forward function whose tensors the
        gradient captures (the captured names are relative to that function)."""
        for c in captures:
            if isinstance(c, CapturedTensor):
                fd = self._loader.inliner._defs.get(c.concrete_function)
                for node in (fd.node_def if fd is not None else ()):
                    if gradient_op_type(node) == op_type:
                        return node.name
        return None

    def _eager_function(self, grad_name: str, graph):
        """The saved gradient function as a tf.function (traced once per input dtypes and
        any shapes), for gradients taken eagerly."""
        fn = self._eager.get(grad_name)
        if fn is None:
            specs = [TensorSpec(None, t.dtype) for t in graph.arg_inputs]

            def body(*args):
                return inline_graph(graph, list(args), graph.outputs)

            body.__signature__ = inspect.Signature(
                [inspect.Parameter(f"arg_{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
                 for i in range(len(specs))])
            fn = self._eager[grad_name] = Function(body, name=graph.name,
                                                   input_signature=specs, autograph=False)
        return fn

    def _forward_tensor(self, op, captured: CapturedTensor, prefix: str, base_name: str):
        """The value of the captured forward tensor for this run of `op`: by name next to a
        graph op; for an op run eagerly (under a tape), one of its own inputs or outputs (a
        tf.custom_gradient's results are its IdentityN's inputs)."""
        graph = getattr(op, "graph", None)
        if graph is not None:
            return graph.get_tensor_by_name(prefix + captured.name)
        forward = self._loader._function_graph(captured.concrete_function)
        fwd_op = forward.get_operation_by_name(base_name)
        for saved, live in zip(list(fwd_op.inputs) + list(fwd_op.outputs),
                               list(op.inputs) + list(op.outputs)):
            if saved.name == captured.name:
                return live
        raise LookupError(f"The saved custom gradient of '{op.name}' uses tensor "
                          f"'{captured.name}' of function '{captured.concrete_function}', "
                          "which ndflow keeps only inside a graph: compute this gradient inside "
                          "a tf.function")

    def _gradient(self, op_type: str):
        grad_name = self._functions[op_type]

        def gradient(op, *grads):
            loader = self._loader
            graph = loader._function_graph(grad_name)
            graph.name = grad_name.lstrip("_")   # its ops' name scope when inlined
            info = loader.proto.concrete_functions.get(grad_name)
            bound = [loader.nodes[i] for i in (info.bound_inputs if info is not None else ())]
            base_name = self._forward_name(op_type, bound) or op.name.rsplit("/", 1)[-1]
            prefix = op.name[:-len(base_name)] if op.name.endswith(base_name) else ""
            captures = []
            for obj in bound:
                if isinstance(obj, CapturedTensor):
                    obj = self._forward_tensor(op, obj, prefix, base_name)
                elif hasattr(obj, "handle"):
                    obj = obj.handle
                captures.append(obj)
            args = list(grads) + captures
            if context.executing_eagerly():   # run by the tape's backward pass
                outs = self._eager_function(grad_name, graph)(*args)
                outs = outs if isinstance(outs, (list, tuple)) else [outs]
            else:
                outs = inline_graph(graph, args, graph.outputs)
            # the saved function returns the gradients of the op's trailing inputs (a
            # tf.custom_gradient's IdentityN takes its results first, which get none)
            return [None] * (len(op.inputs) - len(outs)) + list(outs)

        return gradient

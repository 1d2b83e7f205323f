"""`tf.gradients`: symbolic gradients added to the graph under the `gradients/` name scope."""

from __future__ import annotations

import contextlib
import enum

from ndflow.autodiff.backprop import backprop, is_differentiable
from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.graph import SymbolicTensor
from ndflow.core.tensor import EagerTensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape, stack
from ndflow.ops.array_fill import ones_like, zeros_like
from ndflow.ops.forward_copies import copy_of


@tf_export("UnconnectedGradients")
class UnconnectedGradients(enum.Enum):
    """What a gradient is when the target does not depend on a source.

    Members:
      NONE: the gradient is None (the default).
      ZERO: the gradient is zeros of the source's shape and dtype.

    Example:
      >>> x = tf.Variable(1.0)
      >>> with tf.GradientTape() as tape:
      ...     y = tf.constant(2.0)
      >>> float(tape.gradient(y, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))
      0.0
    """
    NONE = "none"
    ZERO = "zero"


def as_source(x):
    """Variables differentiate through their resource handle (ReadVariableOp's grad).

    While a function graph is being traced, an eager tensor or handle, or a tensor of another
    graph, stands for the placeholder that captures it (the tensor the traced ops actually
    consume), as TensorFlow's captures are recorded on its tapes: a custom gradient traced
    into a SavedModel (`tf.recompute_grad`'s) watches the forward function's tensors. So,
    while the gradient of a copied op runs, does a tensor of the graph it was copied from:
    its copy is what the gradient's ops consume (ops/forward_copies.py).
    """
    handle = getattr(x, "handle", None)
    t = handle if handle is not None else x
    if isinstance(t, SymbolicTensor):
        copy = copy_of(t)
        if copy is not None:
            t = copy
    if isinstance(t, (EagerTensor, SymbolicTensor)) and not context.executing_eagerly():
        graph = context.get_default_graph()
        capture = getattr(graph, "capture", None)
        if capture is not None and getattr(t, "graph", None) is not graph:
            return capture(t)
    return t


def _between(ys, xs) -> list:
    """Ops on some path xs -> ys, in creation (topological) order."""
    graph = ys[0].graph
    reach_back: set = set()
    stack = [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op in reach_back:
            continue
        reach_back.add(op)
        stack.extend(t.op for t in op.inputs)
    reach_fwd: set = set()
    stack = [c for x in xs for c in x.consumers()]
    while stack:
        op = stack.pop()
        if op in reach_fwd or op not in reach_back:
            continue
        reach_fwd.add(op)
        for t in op.outputs:
            stack.extend(t.consumers())
    return [op for op in graph.get_operations() if op in reach_fwd]


@contextlib.contextmanager
def _grad_scope(graph, op):
    """The name scope of `op`'s gradient; when `op` was built in a jit_scope (`_XlaCompile`),
    its gradient ops are marked for compilation too, in the forward op's `_XlaScope` or, with
    separate_compiled_gradients, in `<scope>_grad_<tf.gradients name scope>` (TF's
    _MaybeCompile)."""
    start = len(graph.get_operations())
    grad_scope = graph.get_name_scope().rstrip("/").replace("/", "_")  # the tf.gradients call's
    with graph.name_scope(op.name + "_grad"):
        yield
    if op.attrs.get("_XlaCompile") is not True:
        return
    xla_scope = op.attrs.get("_XlaScope", "")
    if op.attrs.get("_XlaSeparateCompiledGradients") is True:
        xla_scope = f"{xla_scope}_grad_{grad_scope}"
    for new in graph.get_operations()[start:]:
        new.attrs.setdefault("_XlaCompile", True)
        new.attrs.setdefault("_XlaScope", xla_scope)


@tf_export(v1=["gradients"])
def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE) -> list:
    if context.executing_eagerly():
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. "
                           "Use tf.GradientTape instead.")
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs_in = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    unconnected_gradients = UnconnectedGradients(unconnected_gradients)
    graph = ys[0].graph if isinstance(ys[0], SymbolicTensor) else context.get_default_graph()
    with graph.as_default():
        ys = [convert_to_tensor(y) for y in ys]
        xs = [convert_to_tensor(as_source(x)) for x in xs_in]
        for t in ys + xs:
            if not isinstance(t, SymbolicTensor) or t.graph is not graph:
                raise ValueError(f"Tensor {t!r} is not an element of this graph.")
        if grad_ys is None:
            grad_ys = [None] * len(ys)
        elif not isinstance(grad_ys, (list, tuple)):
            grad_ys = [grad_ys]
        stop = {convert_to_tensor(as_source(s)) for s in (stop_gradients or [])}
        with graph.name_scope(name):
            seeds = {}
            for y, gy in zip(ys, grad_ys):
                if not is_differentiable(y.dtype):
                    continue
                g = ones_like(y, name=f"grad_ys_{len(seeds)}") if gy is None \
                    else convert_to_tensor(gy, dtype=y.dtype)
                seeds[y] = seeds[y] + g if y in seeds else g
            ops = _between(ys, xs)

            def scope(op):
                return _grad_scope(graph, op)

            result = backprop(ops, seeds, xs, stop, scope) if seeds else [None] * len(xs)
            if unconnected_gradients is UnconnectedGradients.ZERO:
                result = [zeros_like(x) if g is None else g for x, g in zip(xs, result)]
    return result


@tf_export("gradients", v1=[])
def gradients_v2(ys, xs, grad_ys=None, name="gradients", gate_gradients=False,
                 aggregation_method=None, stop_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE) -> list:
    return gradients(ys, xs, grad_ys, name, False, gate_gradients, aggregation_method,
                     stop_gradients, unconnected_gradients)


_GRADIENTS_DOC = """Builds the symbolic gradients of `ys` with respect to `xs`{tf1}.

    {mode}

    Args:
      ys: a tensor or list of tensors to differentiate (their sum, weighted by grad_ys).
      xs: a tensor or list of tensors (or variables) to differentiate with respect to.
      grad_ys: optional list of tensors of ys' shapes, the upstream gradients (ones by default).
      name: the name scope of the gradient ops.{colocate}
      gate_gradients: accepted for compatibility.
      aggregation_method: accepted for compatibility (see `tf.AggregationMethod`).
      stop_gradients: optional tensors treated as constants (no gradient flows through them).
      unconnected_gradients: `tf.UnconnectedGradients.NONE` (None for an x that ys does not
        depend on) or `ZERO` (zeros).

    Returns:
      A list with the gradient of sum(ys) with respect to each x (None or zeros where there is
      none).

    Raises:
      RuntimeError: when executing eagerly (use `tf.GradientTape`).

    Example:
      >>> with tf.Graph().as_default():
      ...     x = tf.constant(3.0)
      ...     dy_dx = tf.gradients(x * x, [x])[0]
      ...     with tf.compat.v1.Session() as sess:
      ...         print(sess.run(dy_dx))
      6.0
    """
gradients.__doc__ = _GRADIENTS_DOC.format(
    tf1=" in a graph (TF1)", mode="Graph mode only: the gradient ops are added to the graph of "
    "`ys`.", colocate="\n      colocate_gradients_with_ops: accepted for compatibility.")
gradients_v2.__doc__ = _GRADIENTS_DOC.format(
    tf1="", mode="For graphs and `tf.function` bodies; eagerly use `tf.GradientTape`.",
    colocate="")


@tf_export("hessians", v1=[])
def hessians(ys, xs, gate_gradients=False, aggregation_method=None,
             name="hessians") -> list:
    """The Hessian of `sum(ys)` with respect to each x (graphs and tf.function only).

    Each x's shape must be fully known; the rows are differentiated one at a time.

    Args:
      ys: a tensor or list of tensors.
      xs: a tensor or list of tensors.
      gate_gradients: accepted for compatibility.
      aggregation_method: accepted for compatibility.
      name: the name scope of the ops.

    Returns:
      A list with one tensor of shape x.shape + x.shape per x.

    Example:
      >>> with tf.Graph().as_default():
      ...     x = tf.constant([1.0, 2.0])
      ...     h = tf.hessians(tf.reduce_sum(x * x * x), x)[0]
      ...     with tf.compat.v1.Session() as sess:
      ...         print(sess.run(h))
      [[ 6.  0.]
       [ 0. 12.]]
    """
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    out = []
    graph = context.get_default_graph()
    with graph.name_scope(name):
        for x, grad in zip(xs, gradients(ys, xs, gate_gradients=gate_gradients,
                                         aggregation_method=aggregation_method)):
            if grad is None:
                out.append(None)
                continue
            shape = x.shape
            if not shape.is_fully_defined():
                raise ValueError(f"Cannot compute Hessian because the shape of {x.name} is "
                                 f"not fully defined: {shape}")
            n = shape.num_elements()
            flat = reshape(grad, [n])
            rows = []
            for i in range(n):
                (row,) = gradients(flat[i], [x], gate_gradients=gate_gradients,
                                   aggregation_method=aggregation_method,
                                   unconnected_gradients=UnconnectedGradients.ZERO)
                rows.append(reshape(row, [n]))
            out.append(reshape(stack(rows), shape.as_list() * 2))
    return out


@tf_export(v1=["hessians"])
def hessians_v1(ys, xs, name="hessians", colocate_gradients_with_ops=False,
                gate_gradients=False, aggregation_method=None) -> list:
    """TF1's argument order of `tf.hessians`."""
    return hessians(ys, xs, gate_gradients, aggregation_method, name)

"""`tf.compat.v1.train.Optimizer`: the TF1 optimizer base class.

`minimize` = `compute_gradients` (symbolic `tf.gradients` in graphs; a GradientTape around a
callable loss eagerly) + `apply_gradients`, which creates slots lazily (in `init_scope`),
emits one fused `ResourceApply*` op per variable under `<name>/update_<var>`, then the
optimizer's `_finish` (Adam's beta-power updates) and, after all of them, the global step's
`AssignAddVariableOp`. The op returned is what a Session runs as the train step: the
AssignAddVariableOp named `<name>` when a global step is given, else a NoOp `<name>`
grouping the updates (TF's exact graph; eagerly the updates simply run and None returns).

NVIDIA's container switches: with TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING=1 (or, when that
is unset, TF_ENABLE_AUTO_MIXED_PRECISION=1) every optimizer gets a `DynamicLossScale()` at
construction, as NVIDIA's fork of this class does: `compute_gradients` scales the loss and
unscales the gradients, `apply_gradients` updates the scale and applies the step only when
all gradients are finite — `smart_cond(should_apply, apply_fn, no_op)` (an `If` op in
graphs) —, grouped as `group(step, update)`.
"""

from __future__ import annotations

from ndflow.autodiff.gradients import gradients
from ndflow.autodiff.tape import GradientTape
from ndflow.checkpoint.restore import restore_deferred
from ndflow.core import config, context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.tensor import Tensor
from ndflow.distribute import distribute_lib
from ndflow.distribute.values import is_distributed
from ndflow.ops import array_core, array_search, state, state_sparse, variable_scope, variables
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import NoOp, group, no_op
from ndflow.ops.array_gather import unsorted_segment_sum
from ndflow.ops.cast import cast
from ndflow.ops.indexed_slices import IndexedSlices, densify
from ndflow.runtime.control_flow import smart_cond
from ndflow.train import loss_scale as loss_scale_module
from ndflow.train import slot_creator
from ndflow.train.init_scope import init_scope

_VALID_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def is_variable(x) -> bool:
    return not isinstance(x, Tensor) and isinstance(getattr(x, "handle", None), Tensor)


def cast_to(x, dtype):
    """`cast(x, dtype)`: reads variables, converts Python values, casts if needed."""
    t = convert_to_tensor(x) if not isinstance(x, (int, float)) else \
        convert_to_tensor(x, dtype=dtype)
    return t if t.dtype is dtype else cast(t, dtype)


def call_if_callable(x):
    return x() if callable(x) and not isinstance(x, Tensor) and not is_variable(x) else x


def _graph_key():
    """None when executing eagerly outside functions, else the outermost graph (TF keys
    non-slot variables this way, so a function traced later finds the eager ones)."""
    with init_scope():
        return None if context.executing_eagerly() else context.get_default_graph()


@tf_export(v1=["train.Optimizer"])
class Optimizer:
    """Base class of the TF1 optimizers (`tf.compat.v1.train.Optimizer`)."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2
    _AUTO_LOSS_SCALING = True   # NVIDIA's env switches apply (not to loss-scale wrappers)

    def __init__(self, use_locking: bool, name: str,
                 use_own_namescope_for_non_slot_vars: bool = False):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # TF: non-slot variables (Adam's beta powers) under a variable scope of their own.
        self._non_slot_scope = None
        if use_own_namescope_for_non_slot_vars:
            with variable_scope.variable_scope(None, default_name=name) as scope:
                self._non_slot_scope = scope
        self._slots: dict = {}            # slot name -> {id(var): (var, slot)}
        self._non_slot_dict: dict = {}    # (name, graph) -> variable
        self._eager_slot_names: dict = {}
        self._loss_scale = None
        if self._AUTO_LOSS_SCALING and config.auto_mixed_precision_loss_scaling():
            self._loss_scale = loss_scale_module.DynamicLossScale()

    def get_name(self) -> str:
        return self._name

    def doing_loss_scaling(self) -> bool:
        """Whether this optimizer scales the loss itself (NVIDIA's automatic loss scaling)."""
        return self._loss_scale is not None

    # -- gradients ---------------------------------------------------------------------------
    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops: bool = False,
                          grad_loss=None) -> list:
        """(gradient, variable) pairs; gradient None for variables the loss does not use."""
        if self._loss_scale is None:
            return self._compute_gradients(loss, var_list, gate_gradients, aggregation_method,
                                           colocate_gradients_with_ops, grad_loss)
        scale = self._loss_scale()
        pairs = self._compute_gradients(scale_loss(loss, scale), var_list, gate_gradients,
                                        aggregation_method, colocate_gradients_with_ops,
                                        grad_loss)
        grads = unscale_gradients([g for g, _ in pairs], scale)
        return list(zip(grads, [v for _, v in pairs]))

    def _compute_gradients(self, loss, var_list, gate_gradients, aggregation_method,
                           colocate_gradients_with_ops, grad_loss) -> list:
        if callable(loss) and not isinstance(loss, Tensor):
            with GradientTape() as tape:
                if var_list is not None:
                    tape.watch(var_list)
                loss_value = loss()
            if var_list is None:
                var_list = list(tape.watched_variables())
            var_list = list(var_list)
            grads = tape.gradient(loss_value, var_list, grad_loss)
            return list(zip(grads, var_list))
        if context.executing_eagerly():
            raise RuntimeError("`loss` passed to Optimizer.compute_gradients should be a "
                               "function when eager execution is enabled.")
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([convert_to_tensor(grad_loss)])
        if var_list is None:
            var_list = loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        else:
            var_list = list(_flatten(var_list))
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not is_variable(v):
                raise TypeError(f"Argument is not a tf.Variable: {v}")
        grads = gradients(loss, var_list, grad_ys=grad_loss,
                          gate_gradients=gate_gradients == self.GATE_OP,
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        pairs = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in pairs if g is not None])
        return pairs

    def _assert_valid_dtypes(self, tensors) -> None:
        for t in tensors:
            dtype = t.dtype.base_dtype if hasattr(t.dtype, "base_dtype") else t.dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError(f"Invalid type {dtype!r} for {_name_of(t)}, expected: "
                                 f"{list(_VALID_DTYPES)}.")

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops: bool = False,
                 name: str | None = None, grad_loss=None):
        """compute_gradients + apply_gradients; returns the train op (None eagerly)."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not [v for g, v in grads_and_vars if g is not None]:
            raise ValueError("No gradients provided for any variable, check your graph for ops"
                             " that do not support gradients, between variables "
                             f"{[str(v) for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    # -- applying ----------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, global_step=None, name: str | None = None):
        """Applies the gradients; increments `global_step` after all updates. In a replica
        of a distribution strategy the gradients are first summed over the replicas."""
        if self._loss_scale is not None and distribute_lib.in_multi_replica_context():
            raise NotImplementedError(
                "A loss-scaled tf.compat.v1 optimizer inside strategy.run is not supported: "
                "use a Keras LossScaleOptimizer, or apply the gradients in cross-replica "
                "context")
        if distribute_lib.in_multi_replica_context():
            return distribute_lib.apply_across_replicas(
                lambda pairs, i: self._apply_gradients(
                    pairs, global_step if i == 0 or is_distributed(global_step) else None,
                    name), grads_and_vars)
        if self._loss_scale is None:
            return self._apply_gradients(grads_and_vars, global_step, name)
        grads_and_vars = tuple(grads_and_vars)
        update_op, should_apply = self._loss_scale.update([g for g, _ in grads_and_vars])
        step = smart_cond(should_apply,
                          lambda: self._apply_gradients(grads_and_vars, global_step, name),
                          no_op)
        if context.executing_eagerly():
            return None
        return group(step, update_op, name=name)

    def _apply_gradients(self, grads_and_vars, global_step, name):
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None and not isinstance(g, IndexedSlices):
                try:
                    g = convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError("Gradient must be convertible to a Tensor or "
                                    f"IndexedSlices, or None: {g}") from None
            if not is_variable(v):
                raise TypeError(f"Argument is not a tf.Variable: {v}")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: "
                             f"{[str(v) for _, v in converted]}.")
        with init_scope():
            self._create_slots(var_list)
            restore_deferred(self)  # slots a checkpoint restore was waiting for
        update_ops = []
        with scopes.name_scope(name, self._name) as scope:
            self._prepare()
            for g, v in converted:
                if g is None:
                    continue
                with scopes.name_scope("update_" + slot_creator.variable_op_name(v)):
                    update_ops.append(self._apply_variable(g, v))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with scopes.control_dependencies(_deps(self._finish(update_ops, "update"))):
                    one = convert_to_tensor(1, dtype=global_step.dtype)
                    apply_updates = _assign_add_named(global_step, one, scope)
            if context.executing_eagerly():
                return None
            train_ops = context.get_default_graph().get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    def _apply_variable(self, grad, var):
        if grad.dtype is not var.dtype:
            raise ValueError(f"Gradient dtype {grad.dtype.name} does not match variable "
                             f"{var.name} of dtype {var.dtype.name}.")
        if isinstance(grad, IndexedSlices):
            op = self._resource_apply_sparse_duplicate_indices(grad.values, var, grad.indices)
        else:
            op = self._resource_apply_dense(grad, var)
        constraint = getattr(var, "constraint", None)
        if constraint is not None:
            with scopes.control_dependencies(_deps(op)):
                return var.assign(constraint(var.read_value()))
        return op

    # -- hooks for subclasses ----------------------------------------------------------------
    def _create_slots(self, var_list) -> None:
        pass

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices):
        """IndexedSlices rows (indices may repeat): by default summed per row, then applied
        through `_resource_apply_sparse`."""
        unique, positions = array_search.unique(indices)
        summed = unsorted_segment_sum(grad, positions, array_core.shape(unique)[0])
        return self._resource_apply_sparse(summed, var, unique)

    def _resource_apply_sparse(self, grad, var, indices):
        """Rows `grad` at unique `indices`; optimizers without a sparse update apply them as a
        dense gradient (correct, but it touches the whole variable)."""
        shape = var.shape.as_list() if var.shape.is_fully_defined() else \
            state_sparse.variable_shape(var.handle)
        dense = densify(IndexedSlices(grad, indices, convert_to_tensor(shape, dtypes.int32)))
        return self._resource_apply_dense(dense, var)

    def _prepare(self) -> None:
        pass

    def _resource_apply_dense(self, grad, handle):
        raise NotImplementedError()

    def _finish(self, update_ops, name_scope: str):
        return group_named(update_ops, name_scope)

    # -- slots ---------------------------------------------------------------------------------
    def get_slot_names(self) -> list:
        return sorted(self._slots)

    def get_slot(self, var, name: str):
        entry = self._slots.get(name, {}).get(id(var))
        return entry[1] if entry is not None else None

    def _slot_dict(self, slot_name: str) -> dict:
        return self._slots.setdefault(slot_name, {})

    def _zeros_slot(self, var, slot_name: str, op_name: str):
        slots = self._slot_dict(slot_name)
        if id(var) not in slots:
            slot = slot_creator.create_zeros_slot(var, op_name, self._eager_slot_names)
            slots[id(var)] = (var, slot)
        return slots[id(var)][1]

    def _get_or_make_slot(self, var, value_fn, slot_name: str, op_name: str):
        slots = self._slot_dict(slot_name)
        if id(var) not in slots:
            slot = slot_creator.create_slot(var, value_fn, op_name, self._eager_slot_names)
            slots[id(var)] = (var, slot)
        return slots[id(var)][1]

    def _create_non_slot_variable(self, initial_value, name: str, colocate_with):
        key = (name, _graph_key())
        v = self._non_slot_dict.get(key)
        if v is None:
            if self._non_slot_scope is None:
                v = slot_creator.make_variable(initial_value, name, trainable=False)
            else:  # TF: get_variable in the optimizer's own variable scope, at the root
                with scopes.name_scope(""), variable_scope.variable_scope(self._non_slot_scope):
                    v = variable_scope.get_variable(name, initializer=initial_value,
                                                    trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name: str, graph=None):
        return self._non_slot_dict.get((name, graph if graph is not None else _graph_key()))

    def _non_slot_variables(self) -> list:
        return list(self._non_slot_dict.values())

    def _checkpoint_children(self) -> list:
        """Its non-slot variables (beta1_power ...) by name, as `tf.train.Checkpoint` saves
        a TF1 optimizer."""
        key = _graph_key()
        return [(name, v) for (name, g), v in self._non_slot_dict.items() if g is key]

    def _checkpoint_slots(self) -> list:
        """(variable, slot name, slot variable), slot names sorted: saved under the
        variable's key as `<variable>/.OPTIMIZER_SLOT/<optimizer>/<slot name>`."""
        return [(var, name, slot) for name in sorted(self._slots)
                for var, slot in self._slots[name].values()]

    def variables(self) -> list:
        """The optimizer's variables in the current graph (or eager), sorted by name."""
        key = _graph_key()
        out = [v for (_, g), v in self._non_slot_dict.items() if g is key]
        for slots in self._slots.values():
            for _, slot in slots.values():
                if _graph_of(slot) is key:
                    out.append(slot)
        return sorted(out, key=lambda v: v.name)


def scale_loss(loss, scale):
    """`loss * scale` in the loss's dtype; a callable loss gives a callable."""
    if callable(loss) and not isinstance(loss, Tensor):
        def scaled():
            value = loss()
            return value * cast_to(scale, value.dtype)
        return scaled
    loss = convert_to_tensor(loss)
    return loss * cast_to(scale, loss.dtype)


def unscale_gradients(grads, scale) -> list:
    """Each gradient times `1 / scale` (None passed through; IndexedSlices: values only)."""
    reciprocal = 1 / scale
    return [None if g is None else _scale_gradient(g, reciprocal) for g in grads]


def _scale_gradient(grad, factor):
    if hasattr(grad, "indices") and hasattr(grad, "values"):
        return type(grad)(grad.values * cast_to(factor, grad.values.dtype), grad.indices,
                          grad.dense_shape)
    grad = convert_to_tensor(grad)
    return grad * cast_to(factor, grad.dtype)


def group_named(inputs, name: str):
    """`tf.group(*inputs, name=name)`; a name ending in '/' (a scope) is used exactly, as TF
    names the train op after the optimizer's own name scope ("Adam", not "Adam/Adam")."""
    if context.executing_eagerly():
        return None
    if not name.endswith("/"):
        return group(*inputs, name=name)
    graph = context.get_default_graph()
    deps = []
    for x in inputs:
        op = getattr(x, "op", x)
        if op is not None and op not in deps:
            deps.append(op)
    return graph.create_op(NoOp, [], {}, [], name[:-1], control_inputs=deps)


def _assign_add_named(var, value, scope: str):
    """The global step increment; graph mode names it exactly after the scope."""
    graph = None if context.executing_eagerly() else context.get_default_graph()
    if graph is None or not scope.endswith("/"):
        return state.assign_add_variable_op(var.handle, value, name=scope.rstrip("/") or None)
    handle = var.handle
    if getattr(handle, "graph", None) is not graph and hasattr(graph, "capture"):
        # a handle captured by a function or a cond branch
        handle = graph.capture(handle)
    return graph.create_op(state.AssignAddVariableOp, [handle, value],
                           {"dtype": value.dtype}, [], scope[:-1])


def _graph_of(var):
    handle = var.handle
    return getattr(handle, "graph", None) if not hasattr(handle, "numpy") else None


def _deps(x) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _name_of(t) -> str:
    try:
        return t.name
    except AttributeError:
        return repr(t)


def _flatten(x):
    if isinstance(x, (list, tuple)):
        for i in x:
            yield from _flatten(i)
    elif isinstance(x, dict):
        for k in sorted(x):
            yield from _flatten(x[k])
    else:
        yield x


__all__ = ["Optimizer", "variables"]

"""TF1 conditional accumulators (`tf.compat.v1.ConditionalAccumulator`,
`SparseConditionalAccumulator`, their base `ConditionalAccumulatorBase`): gradients applied
at a `local_step` older than the accumulator's global step are dropped; `take_grad(n)` waits
until `n` have been applied, returns their mean (or sum), then resets and advances the global
step. TensorFlow's ops: ResourceConditionalAccumulator and ResourceAccumulator* for dense
gradients, SparseConditionalAccumulator / SparseAccumulator* / Accumulator{NumAccumulated,
SetGlobalStep} for IndexedSlices ones. TF's sparse ops take a `Ref(string)` handle; ndflow has
no reference types, so theirs is a resource handle (same inputs, outputs, attrs and flags).
Kernels: kernels/accumulator_ops.py."""

from __future__ import annotations

import collections
import itertools

from ndflow.core import context
from ndflow.core import dtypes as _dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import init_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.op_def import no_outputs, op_def, scalar_output

# An eager accumulator without shared_name gets this prefix plus a counter: its kernel then
# owns one fresh accumulator (as the eager queues).
ANONYMOUS_PREFIX = "_ndflow_anonymous_accumulator_"
_anonymous_ids = itertools.count()




def _unknown(n):
    return lambda ctx: [TensorShape(None)] * n


def _creator_shape(ctx):
    return [TensorShape([2])]  # TF's handle shape (a resource / string_ref pair)


_CREATE_ATTRS = ["dtype: numbertype", "shape: shape", "container: string = ''",
                 "shared_name: string = ''", "reduction_type: {'MEAN', 'SUM'} = 'MEAN'"]
_DT = ["dtype: numbertype"]


def _creator(name: str, what: str):
    return op_def(name, outputs=["handle: resource"], attrs=_CREATE_ATTRS, shape=_creator_shape,
                  stateful=True, gradient_undefined=True,
                  doc=f"A conditional accumulator of {what} gradients.")


def _step_ops(prefix: str, stateful: bool):
    """`<prefix>NumAccumulated` and `<prefix>SetGlobalStep`: the dense (ResourceAccumulator)
    and sparse (Accumulator) pairs differ only in TF's stateful flag."""
    num_accumulated = op_def(
        prefix + "NumAccumulated", inputs=["handle: resource"],
        outputs=["num_accumulated: int32"], shape=scalar_output, stateful=stateful,
        gradient_undefined=True, doc="How many gradients were accumulated since the last take.")
    set_global_step = op_def(
        prefix + "SetGlobalStep", inputs=["handle: resource", "new_global_step: int64"],
        shape=no_outputs, stateful=stateful, gradient_undefined=True,
        doc="Sets the accumulator's global step.")
    return num_accumulated, set_global_step


ResourceConditionalAccumulator = _creator("ResourceConditionalAccumulator", "dense")
ResourceAccumulatorApplyGradient = op_def(
    "ResourceAccumulatorApplyGradient",
    inputs=["handle: resource", "local_step: int64", "gradient: dtype"], attrs=_DT,
    shape=no_outputs, stateful=True, gradient_undefined=True,
    doc="Adds the gradient unless local_step is older than the global step.")
ResourceAccumulatorTakeGradient = op_def(
    "ResourceAccumulatorTakeGradient", inputs=["handle: resource", "num_required: int32"],
    outputs=["average: dtype"], attrs=_DT, shape=_unknown(1), stateful=True,
    gradient_undefined=True, doc="Waits for num_required gradients; returns their mean.")
ResourceAccumulatorNumAccumulated, ResourceAccumulatorSetGlobalStep = _step_ops(
    "ResourceAccumulator", stateful=True)

SparseConditionalAccumulatorOp = _creator("SparseConditionalAccumulator", "IndexedSlices")
SparseAccumulatorApplyGradient = op_def(
    "SparseAccumulatorApplyGradient",
    inputs=["handle: resource", "local_step: int64", "gradient_indices: int64",
            "gradient_values: dtype", "gradient_shape: int64"],
    attrs=_DT + ["has_known_shape: bool"], shape=no_outputs, gradient_undefined=True,
    doc="Adds the sparse gradient unless local_step is older than the global step.")
SparseAccumulatorTakeGradient = op_def(
    "SparseAccumulatorTakeGradient", inputs=["handle: resource", "num_required: int32"],
    outputs=["indices: int64", "values: dtype", "shape: int64"], attrs=_DT,
    shape=_unknown(3), gradient_undefined=True,
    doc="Waits for num_required sparse gradients; returns their mean per index.")
AccumulatorNumAccumulated, AccumulatorSetGlobalStep = _step_ops("Accumulator", stateful=False)

SparseTakeResult = collections.namedtuple("SparseAccumulatorTakeGradient",
                                          ["indices", "values", "shape"])


def _make(op_def, dtype, shape, shared_name, name, reduction_type):
    """The accumulator's handle, made in the outermost context (as TF's resources)."""
    if context.executing_eagerly() and not shared_name:
        shared_name = f"{ANONYMOUS_PREFIX}{next(_anonymous_ids)}"
    attrs = {"dtype": _dtypes.as_dtype(dtype), "shape": TensorShape(shape),
             "shared_name": shared_name or "", "reduction_type": reduction_type}
    with init_scope():
        return apply_op(op_def, [], attrs, name=name).outputs[0]


def _step(value):
    return cast(convert_to_tensor(value), _dtypes.int64)


@tf_export(v1=["ConditionalAccumulatorBase"])
class ConditionalAccumulatorBase:
    """What dense and sparse accumulators share: the handle, dtype, shape and name."""

    # the ops of the resource (dense) accumulator; the sparse one's are ref ops
    _NUM_ACCUMULATED, _SET_GLOBAL_STEP = (ResourceAccumulatorNumAccumulated,
                                          ResourceAccumulatorSetGlobalStep)

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtype
        self._shape = TensorShape(shape) if shape is not None else TensorShape(None)
        self._accumulator_ref = accumulator_ref
        if context.executing_eagerly():
            self._name = context.state().name_scope
        else:
            self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        return self._accumulator_ref

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        """How many gradients have been accumulated since the last take."""
        return apply_op(self._NUM_ACCUMULATED, [self._accumulator_ref],
                        name=name or f"{self._name}_NumAccumulated").outputs[0]

    def set_global_step(self, new_global_step, name=None):
        """Sets the global step (a smaller value than the current one logs a warning)."""
        return apply_op(self._SET_GLOBAL_STEP, [self._accumulator_ref, _step(new_global_step)],
                        name=name)


@tf_export(v1=["ConditionalAccumulator"])
class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients of one dtype and shape."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        ref = _make(ResourceConditionalAccumulator, dtype, shape, shared_name, name,
                    reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """Adds `grad` unless `local_step` is older than the accumulator's global step."""
        grad = convert_to_tensor(grad, self._dtype)
        grad.shape.assert_is_compatible_with(self._shape)
        return apply_op(ResourceAccumulatorApplyGradient,
                        [self._accumulator_ref, _step(local_step), grad], name=name)

    def take_grad(self, num_required, name=None):
        """Waits until `num_required` gradients were applied; their mean (or sum). Resets the
        accumulator and increments its global step."""
        out = apply_op(ResourceAccumulatorTakeGradient,
                       [self._accumulator_ref, convert_to_tensor(num_required, _dtypes.int32)],
                       {"dtype": _dtypes.as_dtype(self._dtype)}, name=name).outputs[0]
        if not context.executing_eagerly():
            out.set_shape(self._shape)
        return out


@tf_export(v1=["sparse.SparseConditionalAccumulator", "SparseConditionalAccumulator"])
class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates IndexedSlices gradients; the mean is taken per index (over the gradients
    that had it)."""

    _NUM_ACCUMULATED, _SET_GLOBAL_STEP = AccumulatorNumAccumulated, AccumulatorSetGlobalStep

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        ref = _make(SparseConditionalAccumulatorOp, dtype, shape, shared_name, name,
                    reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        return self.apply_grad(grad_indices=grad.indices, grad_values=grad.values,
                               grad_shape=grad.dense_shape, local_step=local_step, name=name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """Adds the sparse gradient (`grad_values[i]` at row `grad_indices[i]`; `grad_shape`
        the dense shape, or None) unless `local_step` is older than the global step."""
        values = convert_to_tensor(grad_values, self._dtype)
        return apply_op(SparseAccumulatorApplyGradient, [
            self._accumulator_ref, _step(local_step), cast(grad_indices, _dtypes.int64),
            values, cast([] if grad_shape is None else grad_shape, _dtypes.int64)],
            {"has_known_shape": grad_shape is not None}, name=name)

    def take_grad(self, num_required, name=None):
        """(indices, values, shape) of the mean gradient, once `num_required` arrived."""
        out = apply_op(SparseAccumulatorTakeGradient,
                       [self._accumulator_ref, convert_to_tensor(num_required, _dtypes.int32)],
                       {"dtype": _dtypes.as_dtype(self._dtype)}, name=name).outputs
        return SparseTakeResult(*out)

    def take_indexed_slices_grad(self, num_required, name=None):
        """`take_grad` as an IndexedSlices."""
        out = self.take_grad(num_required, name=name)
        return IndexedSlices(indices=out.indices, values=out.values, dense_shape=out.shape)

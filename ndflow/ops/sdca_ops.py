"""TF1's SDCA ops (`tf.compat.v1.train.sdca_*`), the core of TensorFlow's linear estimators'
SDCA optimizer: SdcaFprint (128-bit fingerprints of example ids), SdcaShrinkL1 (the L1
proximal step applied to weight variables in place) and SdcaOptimizerV2 (one pass of
stochastic dual coordinate ascent over a mini-batch). Kernels in kernels/sdca_ops.py and
kernels/sdca_optimizer.py.

TensorFlow's SdcaShrinkL1 takes the weights as reference variables (TF1's `use_resource=False`
variables), so it refuses to run eagerly or on resource variables. ndflow's variables are all
resource variables: in a TF1 graph the op takes them (as TensorFlow takes its reference
variables there); eagerly and inside a `tf.function` it raises TensorFlow's errors."""

from __future__ import annotations

import collections

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _fprint_shape(ctx):
    x = ctx.shapes[0]
    if x.rank is not None and x.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {x.rank} for "
                         f"'{{{{node {ctx.name}}}}} = SdcaFprint[](input)' with input shapes: "
                         f"{x}.")
    return [TensorShape([x[0] if x.rank == 1 else None, 2])]


SdcaFprint = op_def("SdcaFprint", inputs=["input: string"], outputs=["output: int64"],
                    shape=_fprint_shape, not_differentiable=True)
SdcaShrinkL1 = op_def("SdcaShrinkL1", inputs=["weights: num_features * resource"],
                      attrs=["num_features: int >= 0", "l1: float", "l2: float"],
                      shape=lambda ctx: [], not_differentiable=True)


@tf_export(v1=["train.sdca_fprint"])
def sdca_fprint(input, name=None):  # noqa: A002 - TensorFlow's name
    """int64 [N, 2]: the 128-bit farmhash Fingerprint128 of each of the N strings (low 64
    bits, never 0 or 1, then high 64 bits), as TensorFlow's SdcaFprint."""
    return apply_op(SdcaFprint, [convert_to_tensor(input, dtypes.string)], name=name).outputs[0]


def _ref_error(fn_name: str, op_name: str, arg: str):
    if context.executing_eagerly():
        return RuntimeError(f"{fn_name} op does not support eager execution. Arg '{arg}' is a "
                            "ref.")
    if callable(getattr(context.get_default_graph(), "capture", None)):
        # a function graph (it captures outer tensors): TensorFlow's tf.function variables are
        # resource variables, which it refuses here
        return TypeError(f"'{op_name}' Op requires that input '{arg}' be a mutable tensor "
                         "(e.g.: a tf.Variable)")
    return None


def _handle(v, op_type: str, arg: str):
    handle = getattr(v, "handle", None)
    if handle is None or handle.dtype != dtypes.resource:
        raise TypeError(f"'{op_type}' Op requires that input '{arg}' be a mutable tensor "
                        "(e.g.: a tf.Variable)")
    return handle


@tf_export(v1=["train.sdca_shrink_l1"])
def sdca_shrink_l1(weights, l1, l2, name=None):
    """Applies the L1 proximal step `sign(w) * max(|w| - l1 / l2, 0)` to each float weight
    variable in `weights` (a TF1 graph op; TensorFlow takes reference variables only)."""
    err = _ref_error("sdca_shrink_l1", "SdcaShrinkL1", "weights")
    if err is not None:
        raise err
    handles = [_handle(w, "SdcaShrinkL1", "weights") for w in weights]
    return apply_op(SdcaShrinkL1, [handles], {"l1": float(l1), "l2": float(l2)}, name=name)


def _optimizer_shape(ctx):
    n_sparse = ctx.attrs["num_sparse_features"]
    n_values = ctx.attrs["num_sparse_features_with_values"]
    n_dense = ctx.attrs["num_dense_features"]
    # inputs: example indices, feature indices, values, dense features, weights, labels,
    # sparse indices, sparse weights, dense weights, example state
    at = 2 * n_sparse + n_values + n_dense + 2 + n_sparse
    sparse_w = ctx.shapes[at:at + n_sparse]
    dense_w = ctx.shapes[at + n_sparse:at + n_sparse + n_dense]
    return [ctx.shapes[-1], *sparse_w, *dense_w]


def _optimizer_op(name: str, adaptive_attr: str):
    return op_def(
        name,
        inputs=["sparse_example_indices: num_sparse_features * int64",
                "sparse_feature_indices: num_sparse_features * int64",
                "sparse_feature_values: num_sparse_features_with_values * float",
                "dense_features: num_dense_features * float", "example_weights: float",
                "example_labels: float", "sparse_indices: num_sparse_features * int64",
                "sparse_weights: num_sparse_features * float",
                "dense_weights: num_dense_features * float", "example_state_data: float"],
        outputs=["out_example_state_data: float",
                 "out_delta_sparse_weights: num_sparse_features * float",
                 "out_delta_dense_weights: num_dense_features * float"],
        attrs=["loss_type: {'logistic_loss', 'squared_loss', 'hinge_loss', "
               "'smooth_hinge_loss', 'poisson_loss'}", f"{adaptive_attr}: bool = false",
               "num_sparse_features: int >= 0", "num_sparse_features_with_values: int >= 0",
               "num_dense_features: int >= 0", "l1: float", "l2: float",
               "num_loss_partitions: int >= 1", "num_inner_iterations: int >= 1"],
        shape=_optimizer_shape, not_differentiable=True)


SdcaOptimizer = _optimizer_op("SdcaOptimizer", "adaptative")
SdcaOptimizerV2 = _optimizer_op("SdcaOptimizerV2", "adaptive")

SdcaOptimizerResult = collections.namedtuple(
    "SdcaOptimizer",
    ["out_example_state_data", "out_delta_sparse_weights", "out_delta_dense_weights"])


def _floats(values, name: str) -> list:
    return [convert_to_tensor(v, dtypes.float32, name=name) for v in values]


def _ints(values, name: str) -> list:
    return [convert_to_tensor(v, dtypes.int64, name=name) for v in values]


@tf_export(v1=["train.sdca_optimizer"])
def sdca_optimizer(sparse_example_indices, sparse_feature_indices, sparse_feature_values,
                   dense_features, example_weights, example_labels, sparse_indices,
                   sparse_weights, dense_weights, example_state_data, loss_type, l1, l2,
                   num_loss_partitions, num_inner_iterations, adaptative=True, name=None):
    """One pass of stochastic dual coordinate ascent (SdcaOptimizer) over a mini-batch of
    examples with sparse and dense feature groups: returns the updated example state
    [dual, primal loss, dual loss, example weight] per example and the weight deltas of each
    sparse and dense feature group."""
    inputs = [_ints(sparse_example_indices, "sparse_example_indices"),
              _ints(sparse_feature_indices, "sparse_feature_indices"),
              _floats(sparse_feature_values, "sparse_feature_values"),
              _floats(dense_features, "dense_features"),
              convert_to_tensor(example_weights, dtypes.float32),
              convert_to_tensor(example_labels, dtypes.float32),
              _ints(sparse_indices, "sparse_indices"),
              _floats(sparse_weights, "sparse_weights"),
              _floats(dense_weights, "dense_weights"),
              convert_to_tensor(example_state_data, dtypes.float32)]
    attrs = {"loss_type": loss_type, "adaptative": bool(adaptative), "l1": float(l1),
             "l2": float(l2), "num_loss_partitions": int(num_loss_partitions),
             "num_inner_iterations": int(num_inner_iterations)}
    outs = apply_op(SdcaOptimizer, inputs, attrs, name=name).outputs
    n_sparse = len(inputs[0])
    return SdcaOptimizerResult(outs[0], list(outs[1:1 + n_sparse]), list(outs[1 + n_sparse:]))

"""Sampled losses (TF's nn_impl): `tf.nn.nce_loss` and `tf.nn.sampled_softmax_loss`, the
losses of word2vec-style models over many classes: the true classes' logits and those of a
few sampled classes, from rows of the class weights looked up by `embedding_lookup`."""

from __future__ import annotations

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import add, log, multiply, subtract, truediv
from ndflow.ops.array_core import expand_dims, reshape, shape, size, stack, stop_gradient
from ndflow.ops.array_fill import ones_like, zeros_like
from ndflow.ops.array_nd import scatter_nd
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_slicing import slice as slice_op
from ndflow.ops.candidate_sampling import compute_accidental_hits, log_uniform_candidate_sampler
from ndflow.ops.cast import cast
from ndflow.ops.embedding_ops import embedding_lookup_v1
from ndflow.ops.linalg import matmul
from ndflow.ops.nn_loss import (
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
)
from ndflow.ops.reduction import reduce_sum


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true, sampled_values, subtract_log_q, remove_accidental_hits,
                            partition_strategy, name, seed=None):
    """(logits [batch, num_true + num_sampled], labels of the same shape) as TF computes them."""
    weights = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    with scopes.name_scope(name, "compute_sampled_logits"):
        labels = convert_to_tensor(labels)
        if labels.dtype is not dtypes.int64:
            labels = cast(labels, dtypes.int64)
        labels_flat = reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                labels, num_true, num_sampled, True, num_classes, seed=seed)
        sampled, true_expected, sampled_expected = (stop_gradient(s) for s in sampled_values)
        sampled = cast(sampled, dtypes.int64)
        all_ids = concat([labels_flat, sampled], 0)
        inputs = convert_to_tensor(inputs)
        all_w = embedding_lookup_v1(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype is not inputs.dtype:
            all_w = cast(all_w, inputs.dtype)
        n_true = size(labels_flat)
        true_w = slice_op(all_w, [0, 0], stack([n_true, -1]))
        sampled_w = slice_op(all_w, stack([n_true, 0]), [-1, -1])
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup_v1(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype is not inputs.dtype:
            all_b = cast(all_b, inputs.dtype)
        true_b = slice_op(all_b, [0], reshape(n_true, [1]))
        sampled_b = slice_op(all_b, reshape(n_true, [1]), [-1])
        dim = shape(true_w)[1:2]
        rows = multiply(expand_dims(inputs, 1), reshape(true_w, concat([[-1, num_true], dim],
                                                                        0)))
        true_logits = reshape(reduce_sum(reshape(rows, concat([[-1], dim], 0)), 1),
                              [-1, num_true])
        true_logits = add(true_logits, reshape(true_b, [-1, num_true]))
        sampled_logits = add(sampled_logits, sampled_b)
        if remove_accidental_hits:
            rows_hit, positions, hit_weights = compute_accidental_hits(labels, sampled,
                                                                       num_true=num_true)
            indices = concat([reshape(rows_hit, [-1, 1]),
                              reshape(cast(positions, dtypes.int32), [-1, 1])], 1)
            logits_shape = concat([shape(labels)[:1], [num_sampled]], 0)
            sampled_logits = add(sampled_logits, scatter_nd(
                indices, cast(hit_weights, sampled_logits.dtype), logits_shape))
        if subtract_log_q:
            true_logits = subtract(true_logits, log(cast(true_expected, true_logits.dtype)))
            sampled_logits = subtract(sampled_logits,
                                      log(cast(sampled_expected, sampled_logits.dtype)))
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([truediv(ones_like(true_logits), num_true),
                             zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def _sum_rows(x):
    return reduce_sum(x, 1)


@tf_export("nn.nce_loss", v1=[])
def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, name="nce_loss") -> Tensor:
    """`tf.nn.nce_loss`: noise-contrastive estimation, one loss per example (TF2: the
    classes are split over shards by the "div" strategy)."""
    return nce_loss_v1(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                       sampled_values, remove_accidental_hits, "div", name)


@tf_export(v1=["nn.nce_loss"])
def nce_loss_v1(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
                name="nce_loss") -> Tensor:
    """`tf.compat.v1.nn.nce_loss` (TF1's "mod" sharding by default)."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
        True, remove_accidental_hits, partition_strategy, name)
    return _sum_rows(sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                       name="sampled_losses"))


@tf_export("nn.sampled_softmax_loss", v1=[])
def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         seed=None, name="sampled_softmax_loss") -> Tensor:
    """`tf.nn.sampled_softmax_loss`: softmax cross entropy over the true and sampled classes
    (TF2: "div" sharding)."""
    return sampled_softmax_loss_v1(weights, biases, labels, inputs, num_sampled, num_classes,
                                   num_true, sampled_values, remove_accidental_hits, "div",
                                   name, seed)


@tf_export(v1=["nn.sampled_softmax_loss"])
def sampled_softmax_loss_v1(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true=1, sampled_values=None, remove_accidental_hits=True,
                            partition_strategy="mod", name="sampled_softmax_loss",
                            seed=None) -> Tensor:
    """`tf.compat.v1.nn.sampled_softmax_loss` (TF1's "mod" sharding by default)."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
        True, remove_accidental_hits, partition_strategy, name, seed=seed)
    return softmax_cross_entropy_with_logits(labels=stop_gradient(labels), logits=logits)

"""Connectionist temporal classification: TF's CTCLoss (the loss and its gradient w.r.t. the
logits in one op; the blank is the last class) and CTCGreedyDecoder, and the Python API
around them: `tf.nn.ctc_loss` (v2: dense or sparse labels, `blank_index`, batch-major
logits; v1: sparse labels and the TF1 flags), `tf.nn.ctc_greedy_decoder`,
`tf.nn.ctc_unique_labels`, `tf.nn.collapse_repeated`; CTCBeamSearchDecoder and
`tf.nn.ctc_beam_search_decoder` (v1 with `merge_repeated`). Kernels: kernels/ctc.py and the
beam search itself in kernels/ctc_beam_search.py."""

from __future__ import annotations

from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops import arithmetic, array_core, array_slicing, array_transpose, comparison
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_nd import scatter_nd
from ndflow.ops.array_range import range as range_
from ndflow.ops.cast import cast
from ndflow.ops.math_cumulative import cumsum
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import reduce_any, reduce_max, reduce_sum
from ndflow.ops.sparse_tensor import SparseTensor


def _loss_shape(ctx):
    x = ctx.shapes[0]
    if x.rank is not None and x.rank != 3:
        raise ValueError(f"Shape must be rank 3 but is rank {x.rank}")
    batch = x.as_list()[1] if x.rank == 3 else None
    return [TensorShape([batch]), x]


CTCLoss = op_def(
    "CTCLoss",
    inputs=["inputs: T", "labels_indices: int64", "labels_values: int32",
            "sequence_length: int32"],
    outputs=["loss: T", "gradient: T"],
    attrs=["preprocess_collapse_repeated: bool = false", "ctc_merge_repeated: bool = true",
           "ignore_longer_outputs_than_inputs: bool = false", "T: {float, double} = DT_FLOAT"],
    shape=_loss_shape,
    doc="Per-example CTC loss of time-major logits and its gradient w.r.t. them.")


@CTCLoss.def_grad
def _ctc_loss_grad(op, grad_loss, _grad_gradient):
    """The op's own gradient output, scaled per example (TF's _CTCLossGrad)."""
    scale = array_core.reshape(grad_loss, [1, -1, 1])
    return [op.outputs[1] * scale, None, None, None]


def _decoder_shape(ctx):
    x = ctx.shapes[0]
    batch = x.as_list()[1] if x.rank == 3 else None
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2]),
            TensorShape([batch, 1])]


CTCGreedyDecoder = op_def(
    "CTCGreedyDecoder",
    inputs=["inputs: T", "sequence_length: int32"],
    outputs=["decoded_indices: int64", "decoded_values: int64", "decoded_shape: int64",
             "log_probability: T"],
    attrs=["merge_repeated: bool = false", "blank_index: int = -1",
           "T: {float, double} = DT_FLOAT"],
    shape=_decoder_shape, not_differentiable=True,
    doc="Best path decoding: the most likely class per step, repeats merged, blanks dropped.")


def _beam_search_shape(ctx):
    """TF's shape function; eagerly the kernel checks, with its own errors."""
    paths = ctx.attrs["top_paths"]
    x, lengths = ctx.shapes
    batch = None
    if not context.executing_eagerly():
        if x.rank is not None and x.rank != 3:
            raise ValueError(f"Shape must be rank 3 but is rank {x.rank}")
        if lengths.rank is not None and lengths.rank != 1:
            raise ValueError(f"Shape must be rank 1 but is rank {lengths.rank}")
        a = x.as_list()[1] if x.rank == 3 else None
        c = lengths.as_list()[0] if lengths.rank == 1 else None
        if a is not None and c is not None and a != c:
            raise ValueError(f"Dimensions must be equal, but are {a} and {c}")
        batch = a if a is not None else c
    return ([TensorShape([None, 2])] * paths + [TensorShape([None])] * paths +
            [TensorShape([2])] * paths + [TensorShape([batch, paths])])


CTCBeamSearchDecoder = op_def(
    "CTCBeamSearchDecoder",
    inputs=["inputs: T", "sequence_length: int32"],
    outputs=["decoded_indices: top_paths * int64", "decoded_values: top_paths * int64",
             "decoded_shape: top_paths * int64", "log_probability: T"],
    attrs=["beam_width: int >= 1", "top_paths: int >= 1", "merge_repeated: bool = true",
           "T: {float, double} = DT_FLOAT"],
    shape=_beam_search_shape, not_differentiable=True,
    doc="TF's prefix beam search (default scorer, blank last): the `top_paths` most likely "
        "label sequences per example and their log probabilities.")


def _sparse_labels(labels, label_length):
    """Dense [batch, max_len] labels (the first `label_length` of each row) as the
    (indices, values) of a SparseTensor."""
    labels = convert_to_tensor(labels)
    max_len = array_core.shape(labels)[1]
    mask = comparison.less(array_core.expand_dims(range_(max_len), 0),
                           array_core.expand_dims(cast(label_length, dtypes.int32), 1))
    indices = cast(arithmetic.where(mask), dtypes.int64)
    return indices, cast(boolean_mask(labels, mask), dtypes.int32)


def _roll_blank(logits, labels_values, blank_index, num_classes):
    """TF's CTC ops take the blank as the last class: move class `blank_index` there and
    shift the labels above it down by one."""
    if blank_index == num_classes - 1:
        return logits, labels_values
    logits = array_slicing.concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                                   logits[:, :, blank_index:blank_index + 1]], axis=2)
    labels_values = arithmetic.where(comparison.less(labels_values, blank_index),
                                     labels_values, labels_values - 1)
    return logits, labels_values


@tf_export("nn.ctc_loss", v1=["nn.ctc_loss_v2"])
def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True,
                unique=None, blank_index=None, name=None):
    """Per-example negative log likelihood of `labels` under the CTC alignment of `logits`
    ([frames, batch, classes], or batch-major with `logits_time_major=False`). Labels are a
    dense [batch, max_label_length] tensor (with `label_length`) or a SparseTensor; the blank
    is class `blank_index` (default 0; negative counts from the end)."""
    del unique   # an optimization hint only
    with scopes.name_scope(name or "ctc_loss_dense"):
        logits = convert_to_tensor(logits, name="logits")
        if not logits_time_major:
            logits = array_transpose.transpose(logits, perm=[1, 0, 2])
        num_classes = logits.shape.as_list()[2]
        blank_index = 0 if blank_index is None else blank_index
        if blank_index < 0:
            blank_index += num_classes
        if isinstance(labels, SparseTensor):
            indices, values = labels.indices, cast(labels.values, dtypes.int32)
        else:
            indices, values = _sparse_labels(labels, label_length)
        logits, values = _roll_blank(logits, values, blank_index, num_classes)
        loss, _ = apply_op(CTCLoss, [logits, indices, values,
                                     cast(logit_length, dtypes.int32)],
                           {"ignore_longer_outputs_than_inputs": True}).outputs
        return loss


@tf_export(v1=["nn.ctc_loss"])
def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False,
             time_major=True, logits=None):
    """TF1's `tf.nn.ctc_loss`: a SparseTensor of labels, logits with the blank last."""
    inputs = logits if inputs is None else inputs
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected labels (first argument) to be a SparseTensor")
    inputs = convert_to_tensor(inputs, name="inputs")
    if not time_major:
        inputs = array_transpose.transpose(inputs, perm=[1, 0, 2])
    loss, _ = apply_op(CTCLoss, [inputs, labels.indices, cast(labels.values, dtypes.int32),
                                 cast(sequence_length, dtypes.int32)],
                       {"preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
                        "ctc_merge_repeated": bool(ctc_merge_repeated),
                        "ignore_longer_outputs_than_inputs":
                            bool(ignore_longer_outputs_than_inputs)}).outputs
    return loss


@tf_export("nn.ctc_greedy_decoder", v1=["nn.ctc_greedy_decoder"])
def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """([SparseTensor of the decoded labels], [batch, 1] negative sum of each frame's best
    logit): the most likely class per frame, repeats merged (`merge_repeated`), blanks
    (`blank_index`, default the last class) dropped."""
    inputs = convert_to_tensor(inputs, name="inputs")
    num_classes = inputs.shape.as_list()[2]
    blank = num_classes - 1 if blank_index is None else blank_index % num_classes
    indices, values, shape, log_prob = apply_op(
        CTCGreedyDecoder, [inputs, cast(sequence_length, dtypes.int32)],
        {"merge_repeated": bool(merge_repeated), "blank_index": int(blank)}).outputs
    return [SparseTensor(indices, values, shape)], log_prob


@tf_export(v1=["nn.ctc_beam_search_decoder"])
def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """([top_paths SparseTensors of the decoded labels], [batch, top_paths] log
    probabilities): TF's beam search over time-major logits (the blank last). With
    `merge_repeated`, repeated labels of a beam are emitted once."""
    inputs = convert_to_tensor(inputs, name="inputs")
    decoded = apply_op(CTCBeamSearchDecoder, [inputs, sequence_length],
                       {"beam_width": beam_width, "top_paths": top_paths,
                        "merge_repeated": merge_repeated}).outputs
    n = len(decoded) // 3
    return ([SparseTensor(decoded[i], decoded[n + i], decoded[2 * n + i]) for i in range(n)],
            decoded[-1])


@tf_export("nn.ctc_beam_search_decoder", v1=["nn.ctc_beam_search_decoder_v2"])
def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """TF2's `tf.nn.ctc_beam_search_decoder`: the v1 decoder without merging repeats (TF
    dropped that option from its public API as returning low probability paths)."""
    return ctc_beam_search_decoder(inputs, sequence_length=sequence_length,
                                   beam_width=beam_width, top_paths=top_paths,
                                   merge_repeated=False)


@tf_export("nn.ctc_unique_labels")
def ctc_unique_labels(labels, name=None):
    """(unique labels of each row in first-seen order, zero-padded, int64; each label's index
    among them, int32) of [batch, max_label_length] labels."""
    with scopes.name_scope(name or "ctc_unique_labels"):
        labels = convert_to_tensor(labels, name="labels")
        width = array_core.shape(labels)[1]
        positions = range_(width)
        same = comparison.equal(array_core.expand_dims(labels, 2),
                                array_core.expand_dims(labels, 1))        # [b, i, j]
        earlier = comparison.less(array_core.expand_dims(positions, 0),
                                  array_core.expand_dims(positions, 1))   # j < i at [i, j]
        earlier = array_core.expand_dims(earlier, 0)
        first = comparison.logical_not(reduce_any(same & earlier, axis=2))  # first sightings
        rank = cumsum(cast(first, dtypes.int32), axis=1, exclusive=True)   # among them
        # a label's index is the rank of its first sighting, the one j that is both
        idx = reduce_sum(cast(same & array_core.expand_dims(first, 1), dtypes.int32) *
                         array_core.expand_dims(rank, 1), axis=2)
        # unique[b, k]: the label whose first sighting has rank k
        slot = comparison.equal(array_core.expand_dims(rank, 2),
                                array_core.expand_dims(array_core.expand_dims(positions, 0), 0))
        slot = slot & array_core.expand_dims(first, 2)                     # [b, j, k]
        unique = reduce_sum(cast(slot, dtypes.int64) *
                            array_core.expand_dims(cast(labels, dtypes.int64), 2), axis=1)
        return unique, idx


@tf_export("nn.collapse_repeated")
def collapse_repeated(labels, seq_length, name=None):
    """(labels with consecutive repeats merged, left-aligned and zero-padded to the longest
    result; the new lengths)."""
    with scopes.name_scope(name or "collapse_repeated_labels"):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        changed = array_slicing.concat([ones_like(labels[:, :1], dtype=dtypes.bool),
                                        comparison.not_equal(labels[:, 1:], labels[:, :-1])],
                                       axis=1)
        in_seq = comparison.less(array_core.expand_dims(range_(array_core.shape(labels)[1]), 0),
                                 array_core.expand_dims(cast(seq_length, dtypes.int32), 1))
        keep = changed & in_seq
        kept = cast(keep, dtypes.int32)
        new_len = reduce_sum(kept, axis=1)
        rows = cast(arithmetic.where(keep), dtypes.int32)[:, 0]
        cols = boolean_mask(cumsum(kept, axis=1, exclusive=True), keep)
        out = scatter_nd(array_core.stack([rows, cols], axis=1), boolean_mask(labels, keep),
                         array_core.stack([array_core.shape(labels)[0], reduce_max(new_len)]))
        return out, cast(new_len, seq_length.dtype)

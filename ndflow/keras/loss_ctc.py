"""Keras 3's CTC loss (`tf.keras.losses.CTC` / `ctc`): integer targets padded with 0, which is
also the blank class, and batch-major logits whose every frame counts (Keras' `ops.ctc_loss`
over `tf.nn.ctc_loss`); and the Keras 2 backend's CTC helpers (`K.ctc_batch_cost`,
`K.ctc_decode`, `K.ctc_label_dense_to_sparse`), which take softmax probabilities and put the
blank last."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export, tf_export
from ndflow.keras import loss_functions as base
from ndflow.keras.backend_functions import epsilon
from ndflow.keras.loss_functions import LossFunctionWrapper
from ndflow.ops import arithmetic, array_core, array_transpose, comparison, ctc_ops, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_fill import ones
from ndflow.ops.cast import cast
from ndflow.ops.sparse_tensor import SparseTensor, sparse_tensor_to_dense


@tf_export("keras.losses.ctc", "losses.ctc", v1=["keras.losses.ctc"])
def ctc(y_true, y_pred):
    """Connectionist temporal classification loss, one value per sample: the negative
    log-likelihood of the label sequence over all its alignments with the frames.

    Class 0 is the blank, and 0s in `y_true` are padding (each label sequence's length is
    its count of nonzero entries); every frame of `y_pred` counts.

    Args:
      y_true: int labels of shape (batch, max_length), 0-padded.
      y_pred: logits of shape (batch, frames, classes) (before softmax).

    Returns:
      A float tensor of shape (batch,) in `y_pred`'s dtype (float16/bfloat16 computed in
      float32).

    Raises:
      ValueError: `y_true` is not 2-D or `y_pred` not 3-D.
    """
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.shape.rank != 2:
        raise ValueError("Targets `y_true` are expected to be a tensor of shape `(batch_size, "
                         "max_length)` in integer format. Received: "
                         f"y_true.shape={tuple(y_true.shape.as_list())}")
    if y_pred.shape.rank != 3:
        raise ValueError("Logits `y_pred` are expected to be a tensor of shape `(batch_size, "
                         "max_length, num_classes)`. Received: "
                         f"y_pred.shape={tuple(y_pred.shape.as_list())}")
    batch, frames = array_core.shape(y_pred)[0], array_core.shape(y_pred)[1]
    logit_length = frames * ones([batch], dtype=dtypes.int32)
    label_length = reduction.reduce_sum(cast(comparison.not_equal(y_true, 0), dtypes.int32),
                                        axis=-1)
    result = y_pred.dtype
    if result in (dtypes.float16, dtypes.bfloat16):   # computed in float32, as Keras
        y_pred = cast(y_pred, dtypes.float32)
    loss = ctc_ops.ctc_loss_v2(cast(y_true, dtypes.int32), y_pred, label_length, logit_length,
                               logits_time_major=False, blank_index=0)
    return cast(loss, result)


@tf_export("keras.losses.CTC", "losses.CTC", v1=["keras.losses.CTC"])
class CTC(LossFunctionWrapper):
    """The CTC loss (`keras.losses.ctc`) as a Loss object: per-sample losses reduced by
    `reduction`.

    Args:
      reduction: "sum_over_batch_size" (the default), "sum", "mean",
        "mean_with_sample_weight" or "none"/None.
      name: the loss' name.
      dtype: the dtype the predictions are cast to (default floatx).
    """

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(ctc, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


base._ALL["CTC"] = CTC
base._FUNCTIONS["ctc"] = ctc


# -- the Keras 2 backend's CTC ---------------------------------------------------------------
@keras_export("keras.backend.ctc_label_dense_to_sparse")
def ctc_label_dense_to_sparse(labels, label_lengths):
    """Dense, padded label rows as a `tf.SparseTensor` holding the first
    `label_lengths[i]` labels of each row i (Keras 2's CTC helper).

    Args:
      labels: an int tensor of shape (batch, max_length).
      label_lengths: an int tensor of shape (batch,).

    Returns:
      A `tf.SparseTensor` of `labels`' dense shape and dtype.
    """
    labels = convert_to_tensor(labels)
    indices, values = ctc_ops._sparse_labels(labels, label_lengths)
    return SparseTensor(indices, cast(values, labels.dtype),
                        cast(array_core.shape(labels), dtypes.int64))


@keras_export("keras.backend.ctc_batch_cost")
def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """Keras 2's CTC loss of softmax outputs, one value per sample.

    The blank is the last class. Probabilities get `keras.backend.epsilon()` added before
    the log.

    Args:
      y_true: int labels of shape (batch, max_label_length).
      y_pred: softmax probabilities of shape (batch, frames, classes).
      input_length: the valid frame count of each sample, shape (batch, 1).
      label_length: the label count of each sample, shape (batch, 1).

    Returns:
      A tensor of shape (batch, 1).
    """
    label_length = cast(array_core.squeeze(label_length, axis=[-1]), dtypes.int32)
    input_length = cast(array_core.squeeze(input_length, axis=[-1]), dtypes.int32)
    sparse = ctc_label_dense_to_sparse(y_true, label_length)
    log_probs = arithmetic.log(array_transpose.transpose(y_pred, perm=[1, 0, 2]) + epsilon())
    loss = ctc_ops.ctc_loss(SparseTensor(sparse.indices, cast(sparse.values, dtypes.int32),
                                         sparse.dense_shape), log_probs, input_length)
    return array_core.expand_dims(loss, 1)


@keras_export("keras.backend.ctc_decode")
def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """Keras 2's CTC decoding of softmax outputs (the blank is the last class).

    Args:
      y_pred: softmax probabilities of shape (batch, frames, classes).
      input_length: the valid frame count of each sample, shape (batch,).
      greedy: whether to take the best path (else TensorFlow 1's beam search, which
        merges repeated labels).
      beam_width: the beam size when not `greedy`.
      top_paths: how many best paths the beam search returns.

    Returns:
      A tuple (decoded, log_prob): decoded a list (one per path) of int tensors of shape
      (batch, frames) padded with -1; log_prob of shape (batch, top_paths).
    """
    shape = array_core.shape(y_pred)
    log_probs = arithmetic.log(array_transpose.transpose(y_pred, perm=[1, 0, 2]) + epsilon())
    input_length = cast(input_length, dtypes.int32)
    if greedy:
        decoded, log_prob = ctc_ops.ctc_greedy_decoder(log_probs, input_length)
    else:
        decoded, log_prob = ctc_ops.ctc_beam_search_decoder(
            log_probs, input_length, beam_width=beam_width, top_paths=top_paths)
    dense = []
    for st in decoded:
        full = SparseTensor(st.indices, st.values, cast(array_core.stack([shape[0], shape[1]]),
                                                        dtypes.int64))
        dense.append(sparse_tensor_to_dense(full, default_value=-1))
    return dense, log_prob

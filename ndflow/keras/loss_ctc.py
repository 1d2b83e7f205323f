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
    """Per-sample CTC loss: `y_true` (batch, max_length) labels, 0 padding (and blank);
    `y_pred` (batch, frames, classes) logits."""
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
    """`ctc` as a Loss (config: name, reduction)."""

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(ctc, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


base._ALL["CTC"] = CTC
base._FUNCTIONS["ctc"] = ctc


# -- the Keras 2 backend's CTC ---------------------------------------------------------------
@keras_export("keras.backend.ctc_label_dense_to_sparse")
def ctc_label_dense_to_sparse(labels, label_lengths):
    """The first `label_lengths` labels of each row as a SparseTensor."""
    labels = convert_to_tensor(labels)
    indices, values = ctc_ops._sparse_labels(labels, label_lengths)
    return SparseTensor(indices, cast(values, labels.dtype),
                        cast(array_core.shape(labels), dtypes.int64))


@keras_export("keras.backend.ctc_batch_cost")
def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """(batch, 1) CTC losses of softmax outputs `y_pred` (batch, frames, classes; blank
    last) for labels `y_true` with lengths (batch, 1)."""
    label_length = cast(array_core.squeeze(label_length, axis=[-1]), dtypes.int32)
    input_length = cast(array_core.squeeze(input_length, axis=[-1]), dtypes.int32)
    sparse = ctc_label_dense_to_sparse(y_true, label_length)
    log_probs = arithmetic.log(array_transpose.transpose(y_pred, perm=[1, 0, 2]) + epsilon())
    loss = ctc_ops.ctc_loss(SparseTensor(sparse.indices, cast(sparse.values, dtypes.int32),
                                         sparse.dense_shape), log_probs, input_length)
    return array_core.expand_dims(loss, 1)


@keras_export("keras.backend.ctc_decode")
def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """([dense decoded labels, -1 padded, one per path], log probabilities) of softmax
    outputs: greedy (best path) or TF1's beam search decoding (repeats merged)."""
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

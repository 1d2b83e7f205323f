"""More Keras 3 losses: focal cross-entropies, cosine similarity, Dice, Tversky, Circle and
the generalized cross-entropy, as functions (`tf.keras.losses.dice`, ...) and Loss classes
(`tf.keras.losses.Dice`, ...) with Keras 3's formulas and configs. Importing this module
adds them to `tf.keras.losses.get`/`deserialize` (and the focal functions to
`tf.keras.metrics`). CTC is in loss_ctc.py."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.keras import docstrings, loss_class_docs
from ndflow.keras import loss_functions as base
from ndflow.keras.loss_functions import EPSILON, LossFunctionWrapper
from ndflow.keras.metrics.base_metric import register_function
from ndflow.ops import arithmetic, comparison, linalg, math, nn_activation, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_builders import eye
from ndflow.ops.array_core import reshape, shape, size
from ndflow.ops.array_gather import one_hot
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast


def _export(*names: str, metric: bool = False):
    """tf.keras.losses.X, tf.losses.X (and tf.keras.metrics.X, tf.metrics.X if `metric`)."""
    v2 = [f"keras.losses.{n}" for n in names] + [f"losses.{n}" for n in names]
    v1 = [f"keras.losses.{n}" for n in names]
    if metric:
        v2 += [f"keras.metrics.{n}" for n in names] + [f"metrics.{n}" for n in names]
        v1 += [f"keras.metrics.{n}" for n in names]
    return tf_export(*v2, v1=v1)


def _floats(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = cast(y_pred, dtypes.float32)
    y_true = convert_to_tensor(y_true)
    if y_true.dtype is not y_pred.dtype:
        y_true = cast(y_true, y_pred.dtype)
    return y_true, y_pred


def _check_axis(axis):
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type "
                         f"{type(axis)}")


def _clipped_bce(y_true, y_pred):
    """Keras's `ops.binary_crossentropy` on probabilities (clipped to [eps, 1 - eps])."""
    p = math.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    return -(y_true * arithmetic.log(p) + (1.0 - y_true) * arithmetic.log(1.0 - p))


@_export("binary_focal_crossentropy", metric=True)
def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _floats(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = math.sigmoid(y_pred)
    bce = _clipped_bce(y_true, y_pred)
    p_t = y_true * y_pred + (1 - y_true) * (1 - y_pred)
    focal = arithmetic.pow(1.0 - p_t, convert_to_tensor(gamma, y_pred.dtype)) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1 - y_true) * (1 - alpha)) * focal
    return reduction.reduce_mean(focal, axis=axis)


@_export("categorical_focal_crossentropy", metric=True)
def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    _check_axis(axis)
    y_true, y_pred = _floats(y_true, y_pred)
    if label_smoothing:
        classes = cast(shape(y_pred)[axis], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        y_pred = nn_activation.softmax(y_pred, axis=axis)
    output = y_pred / reduction.reduce_sum(y_pred, axis=axis, keepdims=True)
    output = math.clip_by_value(output, EPSILON, 1.0 - EPSILON)
    cce = -y_true * arithmetic.log(output)
    factor = arithmetic.pow(1.0 - output, convert_to_tensor(gamma, y_pred.dtype)) * alpha
    return reduction.reduce_sum(factor * cce, axis=axis)


def _l2_normalize(x, axis):
    """Keras's `normalize(x, order=2)`: x * rsqrt(max(sum(x^2), eps^2))."""
    square_sum = reduction.reduce_sum(math.square(x), axis=axis, keepdims=True)
    return x * math.rsqrt(arithmetic.maximum(square_sum, EPSILON * EPSILON))


@_export("cosine_similarity")
def cosine_similarity(y_true, y_pred, axis=-1):
    y_true, y_pred = _floats(y_true, y_pred)
    y_true, y_pred = base.squeeze_or_expand_to_same_rank(y_true, y_pred)
    return -reduction.reduce_sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis),
                                 axis=axis)


@_export("dice")
def dice(y_true, y_pred, axis=None):
    y_true, y_pred = _floats(y_true, y_pred)
    intersection = reduction.reduce_sum(y_true * y_pred, axis=axis)
    score = 2.0 * intersection / (reduction.reduce_sum(y_true, axis=axis) +
                                  reduction.reduce_sum(y_pred, axis=axis) + EPSILON)
    return 1 - score


@_export("tversky")
def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    y_true, y_pred = _floats(y_true, y_pred)
    intersection = reduction.reduce_sum(y_true * y_pred, axis=axis)
    a = reduction.reduce_sum((1 - y_pred) * y_true, axis=axis)
    b = reduction.reduce_sum(y_pred * (1 - y_true), axis=axis)
    return 1 - intersection / (intersection + a * alpha + b * beta + EPSILON)


def _pos_neg_masks(query_labels, key_labels, remove_diagonal=True):
    if query_labels.shape.rank == 1:
        query_labels = reshape(query_labels, [-1, 1])
    if key_labels.shape.rank == 1:
        key_labels = reshape(key_labels, [-1, 1])
    positive = comparison.equal(query_labels, transpose(key_labels))
    negative = comparison.logical_not(positive)
    if remove_diagonal:
        off_diagonal = comparison.logical_not(cast(
            eye(size(query_labels), size(key_labels), dtype=dtypes.int32), dtypes.bool))
        positive = comparison.logical_and(positive, off_diagonal)
    return positive, negative


@_export("circle")
def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True,
           gamma=80, margin=0.4):
    y_pred = convert_to_tensor(y_pred)
    y_true = cast(convert_to_tensor(y_true), dtypes.int32)
    ref_embeddings = y_pred if ref_embeddings is None else convert_to_tensor(ref_embeddings)
    ref_labels = y_true if ref_labels is None else cast(convert_to_tensor(ref_labels),
                                                        dtypes.int32)
    dt = y_pred.dtype
    distances = arithmetic.maximum(1 - linalg.matmul(y_pred, transpose(ref_embeddings)), 0.0)
    positive, negative = _pos_neg_masks(y_true, ref_labels, remove_diagonal)
    pos_weights = arithmetic.maximum((margin + distances) * cast(positive, dt), 0.0)
    neg_weights = arithmetic.maximum((1 + margin - distances) * cast(negative, dt), 0.0)
    pos_wdists = -1 * gamma * pos_weights * (margin - distances)
    neg_wdists = gamma * neg_weights * (1 - margin - distances)
    minus_inf = convert_to_tensor(float("-inf"), dt)
    p_loss = math.reduce_logsumexp(arithmetic.select_v2(positive, pos_wdists, minus_inf), 1)
    n_loss = math.reduce_logsumexp(arithmetic.select_v2(negative, neg_wdists, minus_inf), 1)
    return nn_activation.softplus(p_loss + n_loss)


@_export("categorical_generalized_cross_entropy")
def categorical_generalized_cross_entropy(y_true, y_pred, q):
    y_pred = convert_to_tensor(y_pred)
    labels = cast(convert_to_tensor(y_true), dtypes.int32)
    p = reduction.reduce_sum(y_pred * cast(one_hot(labels, shape(y_pred)[-1]), y_pred.dtype),
                             axis=-1)
    return (1 - arithmetic.pow(p, convert_to_tensor(q, y_pred.dtype))) / q


# -- classes -----------------------------------------------------------------------------------

BinaryFocalCrossentropy = base._wrapper(
    "BinaryFocalCrossentropy", binary_focal_crossentropy, "binary_focal_crossentropy",
    (("apply_class_balancing", False), ("alpha", 0.25), ("gamma", 2.0), ("from_logits", False),
     ("label_smoothing", 0.0), ("axis", -1)))
CategoricalFocalCrossentropy = base._wrapper(
    "CategoricalFocalCrossentropy", categorical_focal_crossentropy,
    "categorical_focal_crossentropy",
    (("alpha", 0.25), ("gamma", 2.0), ("from_logits", False), ("label_smoothing", 0.0),
     ("axis", -1)))
CosineSimilarity = base._wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity",
                                 (("axis", -1),), config_keys=())   # Keras shows no axis
Dice = base._wrapper("Dice", dice, "dice", (("axis", None),))
Tversky = base._wrapper("Tversky", tversky, "tversky",
                        (("alpha", 0.5), ("beta", 0.5), ("axis", None)))


@_export("CategoricalGeneralizedCrossEntropy")
class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    def __init__(self, q=0.5, reduction="sum_over_batch_size",
                 name="categorical_generalized_cross_entropy", dtype=None):
        if not 0 < q < 1:
            raise ValueError("q must be in the interval (0, 1)")
        super().__init__(categorical_generalized_cross_entropy, reduction=reduction,
                         name=name, dtype=dtype, q=q)
        self.q = q


@_export("Circle")
class Circle(LossFunctionWrapper):
    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True,
                 reduction="sum_over_batch_size", name="circle", dtype=None):
        super().__init__(circle, reduction=reduction, name=name, dtype=dtype, gamma=gamma,
                         margin=margin, remove_diagonal=remove_diagonal)

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = convert_to_tensor(y_pred)
        if y_pred.dtype is not self._dtype and y_pred.dtype.is_floating:
            y_pred = cast(y_pred, self._dtype)
        losses = self.call(y_true, y_pred)
        mask = comparison.greater(losses, convert_to_tensor(0, losses.dtype))
        float_mask = cast(mask, losses.dtype)
        if self.reduction in ("mean", "sum_over_batch_size"):
            total = cast(size(mask), losses.dtype)
            valid = reduction.reduce_sum(float_mask)
            float_mask = float_mask * arithmetic.div_no_nan(total, valid)
        if sample_weight is not None:
            sample_weight = cast(convert_to_tensor(sample_weight), losses.dtype)
            float_mask, sample_weight = base.squeeze_or_expand_to_same_rank(float_mask,
                                                                            sample_weight)
            sample_weight = sample_weight * float_mask
        else:
            sample_weight = float_mask
        return base.reduce_weighted_values(losses, sample_weight, self.reduction)


_CLASSES = (BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CosineSimilarity, Dice,
            Tversky, CategoricalGeneralizedCrossEntropy, Circle)
_FUNCTIONS = (binary_focal_crossentropy, categorical_focal_crossentropy, cosine_similarity,
              dice, tversky, circle, categorical_generalized_cross_entropy)
# `tf.keras.losses.get("dice")`, deserialize({"class_name": "Dice", ...}) and compile(loss=...)
base._ALL.update({c.__name__: c for c in _CLASSES})
base._FUNCTIONS.update({f.__name__: f for f in _FUNCTIONS})
for _fn in (binary_focal_crossentropy, categorical_focal_crossentropy):
    register_function(_fn)   # metric functions by name (MeanMetricWrapper configs)


docstrings.attach(globals(), loss_class_docs.EXTRA_DOCS)

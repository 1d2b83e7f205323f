"""`tf.keras.metrics.AUC` (Keras 3): the area under the ROC, precision-recall or PR-gain
curve, approximated by a Riemann sum over `num_thresholds` thresholds (0 - epsilon, evenly
spaced ones, 1 + epsilon) from the accumulated confusion counts. "interpolation" sums
trapezoids (for PR, Davis & Goadrich's interpolation of the counts); "minoring" and
"majoring" take the lower or upper height of each interval. With `multi_label`, one curve per
label (variables of shape (thresholds, labels)), averaged (or weighted by `label_weights`)."""

from __future__ import annotations

import numpy as np

from ndflow.keras.metrics import confusion_utils as utils
from ndflow.keras.metrics.base_metric import EPSILON, Metric, export
from ndflow.ops import arithmetic, comparison, math, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_fill import ones_like, zeros

_CM = utils.ConfusionMatrix
_VARIABLES = ("true_positives", "false_positives", "true_negatives", "false_negatives")


@export("AUC")
class AUC(Metric):
    """Area under the ROC (or precision-recall) curve, approximated from confusion counts
    accumulated at `num_thresholds` thresholds over the batches.

    Args:
      num_thresholds: how many thresholds (evenly spaced in [0, 1]) are used.
      curve: "ROC" (the default) or "PR" (precision-recall).
      summation_method: how the area is summed: "interpolation" (the default),
        "minoring" (a lower bound) or "majoring" (an upper bound).
      name: the metric's name.
      dtype: the dtype of the state and result.
      thresholds: optional explicit list of thresholds (then `num_thresholds` is
        ignored).
      multi_label: whether `y_pred` holds several independent labels (one curve each,
        then averaged) rather than one.
      num_labels: the number of labels with `multi_label` (else inferred).
      label_weights: optional per-label weights for the average (or for the PR curve).
      from_logits: whether predictions are logits (a sigmoid is applied first).

    Raises:
      ValueError: `num_thresholds` below 2, an unknown `curve` or `summation_method`,
        or `num_labels` without `multi_label`.

    Example:

    >>> m = tf.keras.metrics.AUC()
    >>> m.update_state([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> round(float(m.result()), 2)
    0.75
    """

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        self._direction = "up"
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            thresholds = sorted(thresholds)
            self._thresholds_distributed_evenly = utils.is_evenly_distributed_thresholds(
                np.array([0.0] + thresholds + [1.0]))
        else:
            if num_thresholds <= 1:
                raise ValueError("Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            self.num_thresholds = num_thresholds
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1)
                          for i in range(num_thresholds - 2)]
            self._thresholds_distributed_evenly = True
        # Epsilons at the ends: predictions of exactly 0 and 1 are counted.
        self._thresholds = np.array([0.0 - EPSILON] + thresholds + [1.0 + EPSILON])
        self.curve = curve if isinstance(curve, utils.AUCCurve) else \
            utils.AUCCurve.from_str(curve)
        self.summation_method = summation_method if isinstance(
            summation_method, utils.AUCSummationMethod) else \
            utils.AUCSummationMethod.from_str(summation_method)
        super().__init__(name=name, dtype=dtype)
        self.multi_label = multi_label
        self.num_labels = num_labels
        self.label_weights = None if label_weights is None else \
            convert_to_tensor(np.asarray(label_weights, dtype=self.dtype))
        self._from_logits = from_logits
        self._built = False
        if multi_label:
            if num_labels:
                self._build([None, num_labels])
        else:
            if num_labels:
                raise ValueError("`num_labels` is needed only when `multi_label` is True.")
            self._build(None)

    @property
    def thresholds(self) -> list:
        """The thresholds, the two end ones included."""
        return list(self._thresholds)

    def _build(self, shape) -> None:
        if self.multi_label:
            if len(shape) != 2:
                raise ValueError("`y_pred` must have rank 2 when `multi_label=True`. Found rank "
                                 f"{len(shape)}. Full shape received for `y_pred`: {shape}")
            self._num_labels = shape[1]
            variable_shape = [self.num_thresholds, self._num_labels]
        else:
            variable_shape = [self.num_thresholds]
        self._build_input_shape = shape
        for var_name in _VARIABLES:
            setattr(self, var_name, self.add_variable(shape=variable_shape,
                                                      initializer="zeros", name=var_name))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = convert_to_tensor(y_pred)
        if not self._built:
            self._build(tuple(y_pred.shape.as_list()))
        if self._from_logits:
            y_pred = math.sigmoid(y_pred)
        utils.update_confusion_matrix_variables(
            {_CM.TRUE_POSITIVES: self.true_positives, _CM.TRUE_NEGATIVES: self.true_negatives,
             _CM.FALSE_POSITIVES: self.false_positives,
             _CM.FALSE_NEGATIVES: self.false_negatives},
            y_true, y_pred, self._thresholds,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
            sample_weight=sample_weight, multi_label=self.multi_label,
            label_weights=None if self.multi_label else self.label_weights)

    def _counts(self):
        return tuple(getattr(self, v).value() for v in _VARIABLES)

    def _reduce_labels(self, terms):
        if not self.multi_label:
            return reduction.reduce_sum(terms)
        by_label = reduction.reduce_sum(terms, axis=0)
        if self.label_weights is None:
            return reduction.reduce_mean(by_label)
        return arithmetic.div_no_nan(reduction.reduce_sum(by_label * self.label_weights),
                                     reduction.reduce_sum(self.label_weights))

    def interpolate_pr_auc(self):
        """Davis & Goadrich's PR AUC: precision interpolated between thresholds as
        tp = slope * p + intercept in the number of predicted positives p."""
        tp, fp, _, fn = self._counts()
        n = self.num_thresholds
        dtp = tp[: n - 1] - tp[1:]
        p = tp + fp
        dp = p[: n - 1] - p[1:]
        prec_slope = arithmetic.div_no_nan(dtp, arithmetic.maximum(dp, 0.0))
        intercept = tp[1:] - prec_slope * p[1:]
        safe_p_ratio = arithmetic.select_v2(
            comparison.logical_and(comparison.greater(p[: n - 1], 0.0),
                                   comparison.greater(p[1:], 0.0)),
            arithmetic.div_no_nan(p[: n - 1], arithmetic.maximum(p[1:], 0.0)),
            ones_like(p[1:]))
        increments = arithmetic.div_no_nan(
            prec_slope * (dtp + intercept * arithmetic.log(safe_p_ratio)),
            arithmetic.maximum(tp[1:] + fn[1:], 0.0))
        return self._reduce_labels(increments)

    def result(self):
        if (self.curve == utils.AUCCurve.PR
                and self.summation_method == utils.AUCSummationMethod.INTERPOLATION):
            return self.interpolate_pr_auc()
        tp, fp, tn, fn = self._counts()
        recall = arithmetic.div_no_nan(tp, tp + fn)
        if self.curve == utils.AUCCurve.ROC:
            x, y = arithmetic.div_no_nan(fp, fp + tn), recall
        elif self.curve == utils.AUCCurve.PR:
            x, y = recall, arithmetic.div_no_nan(tp, tp + fp)
        else:  # PR gain
            scaling = arithmetic.div_no_nan(tp + fn, tn + fp)
            recall_gain = 1.0 - scaling * arithmetic.div_no_nan(fn, tp)
            precision_gain = 1.0 - scaling * arithmetic.div_no_nan(fp, tp)
            no_tp = comparison.equal(tp, 0.0)
            recall_gain = arithmetic.select_v2(no_tp, 0.0, recall_gain)
            precision_gain = arithmetic.select_v2(no_tp, 1.0, precision_gain)
            x, y = arithmetic.maximum(recall_gain, 0.0), precision_gain
        n = self.num_thresholds
        if self.summation_method == utils.AUCSummationMethod.INTERPOLATION:
            heights = (y[: n - 1] + y[1:]) / 2.0
        elif self.summation_method == utils.AUCSummationMethod.MINORING:
            heights = arithmetic.minimum(y[: n - 1], y[1:])
        else:
            heights = arithmetic.maximum(y[: n - 1], y[1:])
        return self._reduce_labels((x[: n - 1] - x[1:]) * heights)

    def reset_state(self):
        if not self._built:
            return
        shape = (self.num_thresholds, self._num_labels) if self.multi_label else \
            (self.num_thresholds,)
        for var_name in _VARIABLES:
            getattr(self, var_name).assign(zeros(shape))

    def get_config(self):
        config = {**super().get_config(), "num_thresholds": self.num_thresholds,
                  "curve": self.curve.value, "summation_method": self.summation_method.value,
                  "multi_label": self.multi_label, "num_labels": self.num_labels,
                  "label_weights": self.label_weights, "from_logits": self._from_logits}
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config

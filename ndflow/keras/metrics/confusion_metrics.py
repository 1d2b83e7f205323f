"""`tf.keras.metrics` built on confusion counts (Keras 3): TruePositives, FalsePositives,
TrueNegatives, FalseNegatives, Precision, Recall and the constrained ones
(SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision).
A prediction is positive when it is strictly above a threshold; with one threshold the
result is a scalar, with several a vector (one value per threshold)."""

from __future__ import annotations

from ndflow.core.doc_tables import attach
from ndflow.keras.metrics import confusion_docs
from ndflow.keras.metrics import confusion_utils as utils
from ndflow.keras.metrics.base_metric import Metric, export
from ndflow.ops import arithmetic, comparison, reduction
from ndflow.ops.array_fill import zeros

_CM = utils.ConfusionMatrix


def _ratio(a, b):
    """a / (a + b), 0 where both are 0."""
    return arithmetic.div_no_nan(a, a + b)


class _ConfusionMatrixConditionCount(Metric):
    """The weighted count of one confusion-matrix condition, per threshold."""

    _condition = None  # the ConfusionMatrix key a subclass counts

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = utils.parse_init_thresholds(thresholds, default_threshold=0.5)
        self._thresholds_distributed_evenly = utils.is_evenly_distributed_thresholds(
            self.thresholds)
        self.accumulator = self.add_variable(shape=(len(self.thresholds),),
                                             initializer="zeros", name="accumulator")

    def update_state(self, y_true, y_pred, sample_weight=None):
        utils.update_confusion_matrix_variables(
            {self._condition: self.accumulator}, y_true, y_pred,
            thresholds=self.thresholds,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
            sample_weight=sample_weight)

    def result(self):
        value = self.accumulator.value()
        return value[0] if len(self.thresholds) == 1 else value

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


@export("FalsePositives")
class FalsePositives(_ConfusionMatrixConditionCount):
    _condition = _CM.FALSE_POSITIVES


@export("FalseNegatives")
class FalseNegatives(_ConfusionMatrixConditionCount):
    _condition = _CM.FALSE_NEGATIVES


@export("TrueNegatives")
class TrueNegatives(_ConfusionMatrixConditionCount):
    _condition = _CM.TRUE_NEGATIVES


@export("TruePositives")
class TruePositives(_ConfusionMatrixConditionCount):
    _condition = _CM.TRUE_POSITIVES


class _PrecisionRecall(Metric):
    """tp / (tp + other) per threshold, `other` being the false positives (precision) or the
    false negatives (recall); `top_k` keeps each row's k largest predictions (all above the
    default threshold), `class_id` looks at one class only."""

    _other = None  # the second count: (ConfusionMatrix key, variable name)

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._direction = "up"
        self.init_thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        default = 0.5 if top_k is None else utils.NEG_INF
        self.thresholds = utils.parse_init_thresholds(thresholds, default_threshold=default)
        self._thresholds_distributed_evenly = utils.is_evenly_distributed_thresholds(
            self.thresholds)
        n = len(self.thresholds)
        self.true_positives = self.add_variable(shape=(n,), initializer="zeros",
                                                name="true_positives")
        key, var_name = self._other
        setattr(self, var_name, self.add_variable(shape=(n,), initializer="zeros",
                                                  name=var_name))

    def update_state(self, y_true, y_pred, sample_weight=None):
        key, var_name = self._other
        utils.update_confusion_matrix_variables(
            {_CM.TRUE_POSITIVES: self.true_positives, key: getattr(self, var_name)},
            y_true, y_pred, thresholds=self.thresholds,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
            top_k=self.top_k, class_id=self.class_id, sample_weight=sample_weight)

    def result(self):
        value = _ratio(self.true_positives.value(), getattr(self, self._other[1]).value())
        return value[0] if len(self.thresholds) == 1 else value

    def reset_state(self):
        n = len(self.thresholds)
        self.true_positives.assign(zeros((n,)))
        getattr(self, self._other[1]).assign(zeros((n,)))

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds,
                "top_k": self.top_k, "class_id": self.class_id}


@export("Precision")
class Precision(_PrecisionRecall):
    _other = (_CM.FALSE_POSITIVES, "false_positives")


@export("Recall")
class Recall(_PrecisionRecall):
    _other = (_CM.FALSE_NEGATIVES, "false_negatives")


class SensitivitySpecificityBase(Metric):
    """All four confusion counts at `num_thresholds` evenly spaced thresholds; the result is
    the best value of one rate where another meets its constraint `value`."""

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._direction = "up"
        if num_thresholds <= 0:
            raise ValueError("Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        self.value = value
        self.class_id = class_id
        if num_thresholds == 1:
            self.thresholds = [0.5]
            self._thresholds_distributed_evenly = False
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self.thresholds = [0.0] + inner + [1.0]
            self._thresholds_distributed_evenly = True
        n = len(self.thresholds)
        for var_name in ("true_positives", "false_positives", "true_negatives",
                         "false_negatives"):
            setattr(self, var_name, self.add_variable(shape=(n,), initializer="zeros",
                                                      name=var_name))

    def update_state(self, y_true, y_pred, sample_weight=None):
        utils.update_confusion_matrix_variables(
            {_CM.TRUE_POSITIVES: self.true_positives, _CM.TRUE_NEGATIVES: self.true_negatives,
             _CM.FALSE_POSITIVES: self.false_positives,
             _CM.FALSE_NEGATIVES: self.false_negatives},
            y_true, y_pred, thresholds=self.thresholds,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
            class_id=self.class_id, sample_weight=sample_weight)

    def reset_state(self):
        n = len(self.thresholds)
        for v in (self.true_positives, self.false_positives, self.true_negatives,
                  self.false_negatives):
            v.assign(zeros((n,)))

    def get_config(self):
        return {**super().get_config(), "class_id": self.class_id}

    def _rates(self):
        tp, fp = self.true_positives.value(), self.false_positives.value()
        tn, fn = self.true_negatives.value(), self.false_negatives.value()
        return {"sensitivity": _ratio(tp, fn), "specificity": _ratio(tn, fp),
                "precision": _ratio(tp, fp), "recall": _ratio(tp, fn)}

    def _max_under_constraint(self, constrained, dependent):
        feasible = comparison.greater_equal(constrained, self.value)
        best = reduction.reduce_max(arithmetic.select_v2(feasible, dependent, 0.0))
        return arithmetic.maximum(best, 0.0)


class _RateAtRate(SensitivitySpecificityBase):
    """The best `_dependent` rate where the `_constrained` rate is at least the value of the
    constructor's argument `_arg`."""

    _arg = _constrained = _dependent = ""

    def _setup(self, value, num_thresholds, class_id, name, dtype) -> None:
        if value < 0 or value > 1:
            raise ValueError(f"Argument `{self._arg}` must be in the range [0, 1]. Received: "
                             f"{self._arg}={value}")
        setattr(self, self._arg, value)
        self.num_thresholds = num_thresholds
        SensitivitySpecificityBase.__init__(self, value, num_thresholds=num_thresholds,
                                            class_id=class_id, name=name, dtype=dtype)

    def result(self):
        rates = self._rates()
        return self._max_under_constraint(rates[self._constrained], rates[self._dependent])

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds,
                self._arg: getattr(self, self._arg)}


@export("SensitivityAtSpecificity")
class SensitivityAtSpecificity(_RateAtRate):
    _arg, _constrained, _dependent = "specificity", "specificity", "sensitivity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        self._setup(specificity, num_thresholds, class_id, name, dtype)


@export("SpecificityAtSensitivity")
class SpecificityAtSensitivity(_RateAtRate):
    _arg, _constrained, _dependent = "sensitivity", "sensitivity", "specificity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        self._setup(sensitivity, num_thresholds, class_id, name, dtype)


@export("PrecisionAtRecall")
class PrecisionAtRecall(_RateAtRate):
    _arg, _constrained, _dependent = "recall", "recall", "precision"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        self._setup(recall, num_thresholds, class_id, name, dtype)


@export("RecallAtPrecision")
class RecallAtPrecision(_RateAtRate):
    _arg, _constrained, _dependent = "precision", "precision", "recall"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        self._setup(precision, num_thresholds, class_id, name, dtype)


attach(globals(), confusion_docs.DOCS)

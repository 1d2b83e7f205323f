"""The dual loss updaters of TensorFlow's SDCA kernels (logistic-loss.h, squared-loss.h,
hinge-loss.h, smooth-hinge-loss.h, poisson-loss.h), in double precision as there: the
updated dual of one example, its primal and dual losses, the primal loss derivative and
smoothness constant (adaptive sampling) and the label conversion."""

from __future__ import annotations

import math
import sys

from ndflow.core.errors import InvalidArgumentError

_DBL_MAX = sys.float_info.max


def _binary_label(label: float) -> float:
    """0 -> -1, 1 -> 1 (TF's ConvertLabel for the binary losses)."""
    if label == 0.0:
        return -1.0
    if label == 1.0:
        return 1.0
    raise InvalidArgumentError(None, None, "Only labels of 0.0 or 1.0 are supported right now. "
                               f"Found example with label: {_fmt(label)}")


def _fmt(x: float) -> str:
    """A float as TensorFlow's StrCat writes it (%.6g)."""
    return f"{x:.6g}"


class LogisticLoss:
    smoothness = 4.0
    convert_label = staticmethod(_binary_label)

    @staticmethod
    def _newton_step(x, parts, label, wx, weight, norm, dual):
        t = math.tanh(x)
        numerator = (-2 * label * x - wx
                     - parts * norm * weight * (0.5 * (1 + t) / label - dual))
        denominator = -2 * label - parts * norm * weight * (1 - t * t) * 0.5 / label
        return x - numerator / denominator

    def updated_dual(self, parts, label, weight, dual, wx, norm):
        x = 0.0
        for _ in range(10):  # Newton converges quadratically: TF takes 10 steps
            x = self._newton_step(x, parts, label, wx, weight, norm, dual)
        return 0.5 * (1 + math.tanh(x)) / label

    @staticmethod
    def dual_loss(dual, label, weight):
        ay = dual * label
        log_ay = math.log(ay) if ay > 0 else 0.0
        rest = 1 - ay
        log_rest = math.log(rest) if rest > 0 else 0.0
        return (ay * log_ay + rest * log_rest) * weight

    @staticmethod
    def primal_loss(wx, label, weight):
        y_wx = label * wx
        if y_wx > 0:
            return math.log1p(_exp(-y_wx)) * weight
        return (math.log1p(_exp(y_wx)) - y_wx) * weight

    @staticmethod
    def derivative(wx, label, weight):
        if label * wx > 0:
            e = _exp(-label * wx)
            inverse = e / (1 + e)
        else:
            inverse = 1 / (1 + _exp(label * wx))
        return -inverse * label * weight


class SquaredLoss:
    smoothness = 1.0

    @staticmethod
    def convert_label(label):
        return label

    @staticmethod
    def updated_dual(parts, label, weight, dual, wx, norm):
        return dual + (label - dual - wx) / (1 + parts * norm * weight)

    @staticmethod
    def dual_loss(dual, label, weight):
        return dual * (0.5 * dual - label) * weight

    @staticmethod
    def primal_loss(wx, label, weight):
        error = wx - label
        return error * error * weight * 0.5

    @staticmethod
    def derivative(wx, label, weight):
        return (wx - label) * weight


class HingeLoss:
    smoothness = 0.0
    convert_label = staticmethod(_binary_label)

    @staticmethod
    def updated_dual(parts, label, weight, dual, wx, norm):
        candidate = dual + _div(label - wx, parts * weight * norm)
        if label * candidate < 0:
            return 0.0
        if label * candidate > 1.0:
            return label
        return candidate

    @staticmethod
    def dual_loss(dual, label, weight):
        y_alpha = dual * label
        if y_alpha < 0 or y_alpha > 1.0:
            return _DBL_MAX
        return -y_alpha * weight

    @staticmethod
    def primal_loss(wx, label, weight):
        return max(0.0, 1 - label * wx) * weight

    @staticmethod
    def derivative(wx, label, weight):
        return -label * weight if label * wx < 1 else 0.0


class SmoothHingeLoss:
    gamma = 1.0
    smoothness = 1.0
    convert_label = staticmethod(_binary_label)

    def updated_dual(self, parts, label, weight, dual, wx, norm):
        candidate = dual + _div(label - wx - self.gamma * dual,
                                parts * weight * norm + self.gamma)
        if label * candidate < 0:
            return 0.0
        if label * candidate > 1.0:
            return label
        return candidate

    def dual_loss(self, dual, label, weight):
        y_alpha = dual * label
        if y_alpha < 0 or y_alpha > 1.0:
            return _DBL_MAX
        return (-y_alpha + 0.5 * self.gamma * dual * dual) * weight

    def primal_loss(self, wx, label, weight):
        y_wx = label * wx
        if y_wx >= 1:
            return 0.0
        if y_wx <= 1 - self.gamma:
            return (1 - y_wx - self.gamma / 2) * weight
        return (1 - y_wx) * (1 - y_wx) * weight * 0.5 / self.gamma

    def derivative(self, wx, label, weight):
        if label * wx >= 1:
            return 0.0
        if label * wx <= 1 - self.gamma:
            return -label
        return (wx - label) / self.gamma


class PoissonLoss:
    smoothness = 1.0

    @staticmethod
    def convert_label(label):
        if label < 0.0:
            raise InvalidArgumentError(
                None, None, "Only non-negative labels can be used with the Poisson log loss. "
                f"Found example with label: {_fmt(label)}")
        return label

    @staticmethod
    def _newton_step(x, parts, label, wx, weight, norm, dual):
        e = _exp(x)
        numerator = x - wx - parts * norm * weight * (label - dual - e)
        return x - numerator / (1 + parts * norm * weight * e)

    def updated_dual(self, parts, label, weight, dual, wx, norm):
        y_minus_a = label - dual
        x = math.log(y_minus_a) if y_minus_a > 0 else 0.0
        for _ in range(10):
            x = self._newton_step(x, parts, label, wx, weight, norm, dual)
        return label - _exp(x)

    @staticmethod
    def dual_loss(dual, label, weight):
        y_minus_a = label - dual
        if y_minus_a == 0.0:
            return 0.0
        if y_minus_a < 0.0:
            return _DBL_MAX
        return y_minus_a * (math.log(y_minus_a) - 1) * weight

    @staticmethod
    def primal_loss(wx, label, weight):
        return (_exp(wx) - wx * label) * weight

    @staticmethod
    def derivative(wx, label, weight):
        return (_exp(wx) - label) * weight


def _exp(x: float) -> float:
    """C's exp: +inf on overflow instead of Python's OverflowError."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _div(a: float, b: float) -> float:
    """IEEE division as C++ does it (x/0 is +-inf or nan, never an exception)."""
    try:
        return a / b
    except ZeroDivisionError:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * \
            math.copysign(1.0, b)


LOSSES = {"logistic_loss": LogisticLoss, "squared_loss": SquaredLoss,
          "hinge_loss": HingeLoss, "smooth_hinge_loss": SmoothHingeLoss,
          "poisson_loss": PoissonLoss}

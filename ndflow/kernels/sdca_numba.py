"""SdcaOptimizer's pass over a mini-batch (kernels/sdca_optimizer.py) in one numba loop: the
examples' sparse entries as flat arrays (a weight position and a double value per entry,
each example's entries of group g at ptr[g, i]:ptr[g, i + 1]), the dense groups as the
columns of one float32 matrix, and the five losses of kernels/sdca_losses.py transcribed
(the same double arithmetic). The sums over an example's group (squared norms, dense dot
products) are sequential, in float32 for dense rows, as in the Python reference (which runs
without numba), so the two agree bit for bit. `kernels()` is None without numba."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ndflow.kernels.build_once import built_once

# loss codes (sdca_losses.LOSSES' keys)
LOSS_CODES = {"logistic_loss": 0, "squared_loss": 1, "hinge_loss": 2,
              "smooth_hinge_loss": 3, "poisson_loss": 4}
_DBL_MAX = 1.7976931348623157e308

class Kernels(NamedTuple):
    run: object             # the pass
    runs: object            # a group's entry runs per example
    squared_norms: object
    initial_wx: object      # each example's wx before the pass (adaptive sampling)
    adaptive_probs: object
    accept: object          # the adaptive draws kept
    duplicates: object      # whether a run repeats a feature id


# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
shrink_double = shrink_float = updated_dual = primal_loss = None
dual_loss = statistics = derivative = None


def accept_draws(picks: np.ndarray, keeps: np.ndarray, order: np.ndarray) -> None:
    """TensorFlow's sampling: a repeat kept with probability 0.1^(times drawn), at most n
    rejections; the positions left undrawn keep index 0. Plain Python without numba, the
    numba kernel `accept` with it."""
    n = order.shape[0]
    counts = np.zeros(n, np.int64)
    drawn = retries = t = 0
    while drawn < n and retries < n:
        picked = int(picks[t])
        if keeps[t] > 0.1 ** counts[picked]:
            retries += 1
        else:
            counts[picked] += 1
            order[drawn] = picked
            drawn += 1
        t += 1


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first SdcaOptimizer, not with ndflow
    except ImportError:
        return None
    global shrink_double, shrink_float, updated_dual, primal_loss
    global dual_loss, statistics, derivative
    njit = numba.njit

    @njit(cache=True, inline="always", error_model="numpy")
    def shrink_double(w, s):
        shrunk = abs(w) - s
        return math.copysign(shrunk, w) if shrunk > 0.0 else 0.0

    @njit(cache=True, inline="always", error_model="numpy")
    def shrink_float(w, s):
        """sign(w) * max(|w| - s, 0) in float32, as NumPy's (NaN propagates)."""
        m = abs(w) - s
        if m < 0:
            m = np.float32(0)
        if w > 0:
            sign = np.float32(1)
        elif w < 0:
            sign = np.float32(-1)
        elif w == 0:
            sign = np.float32(0)
        else:
            sign = w    # NaN
        return sign * m

    @njit(cache=True, error_model="numpy")
    def updated_dual(loss, parts, label, weight, dual, wx, norm):
        if loss == 0:       # logistic: ten Newton steps
            x = 0.0
            for _ in range(10):
                t = math.tanh(x)
                numerator = (-2 * label * x - wx
                             - parts * norm * weight * (0.5 * (1 + t) / label - dual))
                denominator = -2 * label - parts * norm * weight * (1 - t * t) * 0.5 / label
                x = x - numerator / denominator
            return 0.5 * (1 + math.tanh(x)) / label
        if loss == 1:       # squared
            return dual + (label - dual - wx) / (1 + parts * norm * weight)
        if loss == 2 or loss == 3:   # hinge, smooth hinge (gamma 1)
            if loss == 2:
                candidate = dual + (label - wx) / (parts * weight * norm)
            else:
                candidate = dual + (label - wx - dual) / (parts * weight * norm + 1.0)
            if label * candidate < 0:
                return 0.0
            if label * candidate > 1.0:
                return label
            return candidate
        y_minus_a = label - dual   # poisson
        x = math.log(y_minus_a) if y_minus_a > 0 else 0.0
        for _ in range(10):
            e = math.exp(x)
            numerator = x - wx - parts * norm * weight * (label - dual - e)
            x = x - numerator / (1 + parts * norm * weight * e)
        return label - math.exp(x)

    @njit(cache=True, error_model="numpy")
    def dual_loss(loss, dual, label, weight):
        if loss == 0:
            ay = dual * label
            log_ay = math.log(ay) if ay > 0 else 0.0
            rest = 1 - ay
            log_rest = math.log(rest) if rest > 0 else 0.0
            return (ay * log_ay + rest * log_rest) * weight
        if loss == 1:
            return dual * (0.5 * dual - label) * weight
        if loss == 2 or loss == 3:
            y_alpha = dual * label
            if y_alpha < 0 or y_alpha > 1.0:
                return _DBL_MAX
            if loss == 2:
                return -y_alpha * weight
            return (-y_alpha + 0.5 * dual * dual) * weight
        y_minus_a = label - dual
        if y_minus_a == 0.0:
            return 0.0
        if y_minus_a < 0.0:
            return _DBL_MAX
        return y_minus_a * (math.log(y_minus_a) - 1) * weight

    @njit(cache=True, error_model="numpy")
    def primal_loss(loss, wx, label, weight):
        if loss == 0:
            y_wx = label * wx
            if y_wx > 0:
                return math.log1p(math.exp(-y_wx)) * weight
            return (math.log1p(math.exp(y_wx)) - y_wx) * weight
        if loss == 1:
            error = wx - label
            return error * error * weight * 0.5
        if loss == 2:
            return max(0.0, 1 - label * wx) * weight
        if loss == 3:
            y_wx = label * wx
            if y_wx >= 1:
                return 0.0
            if y_wx <= 0.0:
                return (1 - y_wx - 0.5) * weight
            return (1 - y_wx) * (1 - y_wx) * weight * 0.5
        return (math.exp(wx) - wx * label) * weight

    @njit(cache=True, error_model="numpy")
    def statistics(i, parts, shrinkage, ptr, pos, val, sp_nominal, sp_delta, dense, cols,
                   woff, d_nominal, d_delta):
        """(wx, prev_wx) of example i: _statistics."""
        wx = 0.0
        prev = 0.0
        fparts = np.float32(parts)
        for g in range(ptr.shape[0]):
            for k in range(ptr[g, i], ptr[g, i + 1]):
                j = pos[k]
                nominal = sp_nominal[j]
                weight = np.float32(nominal + np.float32(sp_delta[j] * fparts))
                prev += val[k] * shrink_double(np.float64(nominal), shrinkage)
                wx += val[k] * shrink_double(np.float64(weight), shrinkage)
        s = np.float32(shrinkage)
        for g in range(woff.shape[0]):
            c0, w0 = cols[g], woff[g]
            acc_prev = np.float32(0)
            acc = np.float32(0)
            for c in range(cols[g + 1] - c0):
                x = dense[i, c0 + c]
                acc_prev += x * shrink_float(d_nominal[w0 + c], s)
                acc += x * shrink_float(d_nominal[w0 + c] + d_delta[w0 + c] * fparts, s)
            prev += np.float64(acc_prev)
            wx += np.float64(acc)
        return wx, prev

    @njit(cache=True, error_model="numpy")
    def squared_norms(ptr, val, dense, cols, out):
        """Each example's squared norm (_examples): per group a sequential sum, of the
        sparse values' squares in double, of the dense row's in float32."""
        for i in range(out.shape[0]):
            norm = 0.0
            for g in range(ptr.shape[0]):
                acc = 0.0
                for k in range(ptr[g, i], ptr[g, i + 1]):
                    acc += val[k] * val[k]
                norm += acc
            for g in range(cols.shape[0] - 1):
                acc32 = np.float32(0)
                for c in range(cols[g], cols[g + 1]):
                    acc32 += dense[i, c] * dense[i, c]
                norm += np.float64(acc32)
            out[i] = norm

    @njit(cache=True, error_model="numpy")
    def initial_wx(parts, shrinkage, ptr, pos, val, sp_nominal, sp_delta, dense, cols, woff,
                   d_nominal, d_delta, out):
        for i in range(out.shape[0]):
            out[i] = statistics(i, parts, shrinkage, ptr, pos, val, sp_nominal, sp_delta,
                                dense, cols, woff, d_nominal, d_delta)[0]

    @njit(cache=True, error_model="numpy")
    def run(order, loss, parts, l2, shrinkage, labels, weights, norms, ptr, pos, val,
            sp_nominal, sp_delta, dense, cols, woff, d_nominal, d_delta, state):
        """The pass: each example in `order` updates its dual, the deltas and its state."""
        for t in range(order.shape[0]):
            i = order[t]
            dual = np.float64(state[i, 0])
            weight = weights[i]
            label = labels[i]
            wx, prev = statistics(i, parts, shrinkage, ptr, pos, val, sp_nominal, sp_delta,
                                  dense, cols, woff, d_nominal, d_delta)
            new_dual = updated_dual(loss, np.float64(parts), label, weight, dual, wx,
                                    norms[i] / l2)
            delta = (new_dual - dual) * weight / l2
            for g in range(ptr.shape[0]):
                for k in range(ptr[g, i], ptr[g, i + 1]):
                    j = pos[k]
                    sp_delta[j] = np.float32(np.float64(sp_delta[j]) + val[k] * delta)
            fdelta = np.float32(delta)
            for g in range(woff.shape[0]):
                c0, w0 = cols[g], woff[g]
                for c in range(cols[g + 1] - c0):
                    d_delta[w0 + c] += dense[i, c0 + c] * fdelta
            state[i, 0] = np.float32(new_dual)
            state[i, 1] = np.float32(primal_loss(loss, prev, label, weight))
            state[i, 2] = np.float32(dual_loss(loss, dual, label, weight))
            state[i, 3] = np.float32(weight)

    @njit(cache=True, error_model="numpy")
    def derivative(loss, wx, label, weight):
        if loss == 0:
            if label * wx > 0:
                e = math.exp(-label * wx)
                inverse = e / (1 + e)
            else:
                inverse = 1 / (1 + math.exp(label * wx))
            return -inverse * label * weight
        if loss == 1:
            return (wx - label) * weight
        if loss == 2:
            return -label * weight if label * wx < 1 else 0.0
        if loss == 3:
            if label * wx >= 1:
                return 0.0
            if label * wx <= 0.0:
                return -label
            return wx - label
        return (math.exp(wx) - label) * weight

    @njit(cache=True, error_model="numpy")
    def adaptive_probs(loss, smoothness, l2, labels, weights, norms, wx, state, out):
        """Each example's sampling weight (sdca_optimizer._adaptive_probs)."""
        for i in range(out.shape[0]):
            kappa = np.float64(state[i, 0]) + derivative(loss, wx[i], labels[i], 1.0)
            out[i] = np.float32(weights[i] * math.sqrt(norms[i] + l2 * smoothness)
                                * abs(kappa))

    accept = njit(cache=True)(accept_draws)

    @njit(cache=True)
    def duplicates(fi, ptr):
        """Whether a run fi[ptr[i]:ptr[i + 1]] repeats an id."""
        for i in range(ptr.shape[0] - 1):
            lo, hi = ptr[i], ptr[i + 1]
            if hi - lo > 32:
                run = np.sort(fi[lo:hi])
                for k in range(1, run.shape[0]):
                    if run[k] == run[k - 1]:
                        return True
                continue
            for a in range(lo, hi):
                for b in range(a + 1, hi):
                    if fi[a] == fi[b]:
                        return True
        return False

    @njit(cache=True)
    def runs(ei, n, ptr):
        """ptr[i]:ptr[i + 1]: the run of entries of example i, scanning in order."""
        end = 0
        for example in range(n):
            ptr[example] = end
            while end < ei.shape[0] and ei[end] == example:
                end += 1
        ptr[n] = end

    return Kernels(run, runs, squared_norms, initial_wx, adaptive_probs, accept, duplicates)


kernels = built_once(_build)

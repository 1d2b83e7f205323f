"""SdcaOptimizer / SdcaOptimizerV2's kernel (TensorFlow's sdca_ops.cc and sdca_internal.cc):
one pass of stochastic dual coordinate ascent over a mini-batch, in TensorFlow's precision -
weights, deltas and example state in float32, the per-example statistics and dual updates
in double (kernels/sdca_losses.py).

TensorFlow visits the examples in an order drawn from `std::random_device` (a fresh shuffle,
or with `adaptive` a sampling weighted by each example's dual residual, which repeats
example 0 for the draws it does not fill) and on several threads, so its results vary from
run to run whenever examples share features; ndflow draws its order from an unseeded NumPy
generator and visits the examples one at a time. With examples on disjoint features (or one
example) both give the same numbers.

The pass runs in numba over the whole batch (kernels/sdca_numba.py, its arrays built by
kernels/sdca_batch.py); the Python pass here is its reference, bit for bit the same, and
runs without numba. Sums over an example's group are sequential (`_sum`)."""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import sdca_batch, sdca_numba
from ndflow.kernels.registry import kernel
from ndflow.kernels.sdca_losses import LOSSES
from ndflow.ops import sdca_ops as ops

_F = np.float32
_rng = np.random.default_rng   # the examples' order: unseeded, as TF's random_device (tests
                               # seed it)


def _shape_text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _shrink_double(w: float, shrinkage: float) -> float:
    shrunk = max(abs(w) - shrinkage, 0.0)
    return math.copysign(shrunk, w) if shrunk > 0.0 else 0.0


def _shrink_float(w: np.ndarray, shrinkage: np.float32) -> np.ndarray:
    return np.sign(w) * np.maximum(np.abs(w) - shrinkage, _F(0))


def _sum(x: np.ndarray) -> float:
    """x's elements added in order in x's precision (as the numba kernel does)."""
    return float(np.cumsum(x)[-1]) if x.size else 0.0


class _Example:
    __slots__ = ("weight", "label", "sparse", "dense", "squared_norm")


def _examples(n: int, n_sparse: int, n_values: int, ex_idx, feat_idx, values, dense,
              weights, labels, maps, dense_sizes) -> list:
    """TensorFlow's Examples::Initialize: per example, its (feature index, value) pairs per
    sparse group (the run of entries whose example index is the example's, scanning in
    order), its row of each dense group, and its squared norm."""
    examples = []
    for i in range(n):
        e = _Example()
        e.weight, e.label, e.sparse, e.dense = weights[i], labels[i], [], []
        examples.append(e)
    for g in range(n_sparse):
        ei, fi = ex_idx[g], feat_idx[g]
        if ei.size != fi.size:
            raise InvalidArgumentError(
                None, None, "Found mismatched example_indices and feature_indices "
                f"[{' '.join(map(str, ei.tolist()))}] vs [{' '.join(map(str, fi.tolist()))}]")
        vals = values[g] if g < n_values else None
        end = 0
        for example_id in range(n):
            start = end
            while end < ei.size and ei[end] == example_id:
                end += 1
            idx = fi[start:end]
            for f in idx.tolist():
                if f not in maps[g]:
                    raise InvalidArgumentError(
                        None, None, f"Found sparse feature indices out of valid range: {f}")
            val = vals[start:end].astype(np.float64) if vals is not None else None
            examples[example_id].sparse.append((idx, val))
    for g, d in enumerate(dense):
        if not 0 <= d.shape[1] - 1 < dense_sizes[g]:
            raise InvalidArgumentError(None, None, "More dense features than we have "
                                       f"parameters for: {d.shape[1]}")
        for example_id in range(n):
            examples[example_id].dense.append(d[example_id])
    for e in examples:
        norm = 0.0
        for idx, val in e.sparse:
            if len(set(idx.tolist())) != idx.size:
                raise InvalidArgumentError(None, None, "Duplicate index in sparse vector.")
            norm += float(idx.size) if val is None else _sum(val * val)
        for row in e.dense:
            norm += _sum(row * row)
        e.squared_norm = norm
    return examples


def _statistics(e, parts: int, maps, sparse_nominal, sparse_delta, dense_nominal,
                dense_delta, shrinkage: float, l2: np.float32) -> tuple:
    """(wx, prev_wx, normalized squared norm): ComputeWxAndWeightedExampleNorm."""
    wx = prev_wx = 0.0
    fparts = _F(parts)
    for g, (idx, val) in enumerate(e.sparse):
        ids = [maps[g][f] for f in idx.tolist()]
        for k, j in enumerate(ids):
            value = 1.0 if val is None else float(val[k])
            nominal = sparse_nominal[g][j]
            weight = _F(nominal + _F(sparse_delta[g][j] * fparts))
            prev_wx += value * _shrink_double(float(nominal), shrinkage)
            wx += value * _shrink_double(float(weight), shrinkage)
    s = _F(shrinkage)
    for g, row in enumerate(e.dense):
        n = row.shape[0]
        nominal = dense_nominal[g][:n]
        weights = nominal + dense_delta[g][:n] * fparts
        prev_wx += _sum(row * _shrink_float(nominal, s))
        wx += _sum(row * _shrink_float(weights, s))
    return wx, prev_wx, e.squared_norm / float(l2)


@kernel(ops.SdcaOptimizer)
@kernel(ops.SdcaOptimizerV2)
def _sdca_optimizer(node):
    a = node.attrs
    n_sparse, n_values = a["num_sparse_features"], a["num_sparse_features_with_values"]
    n_dense = a["num_dense_features"]
    if n_sparse + n_dense <= 0:
        raise InvalidArgumentError(None, None, "Requires at least one feature to train.")
    loss = LOSSES[a["loss_type"]]()
    adaptive = a.get("adaptive", a.get("adaptative", False))
    parts = int(a["num_loss_partitions"])
    device = node.device
    l1, l2 = _F(a["l1"]), _F(a["l2"])
    with np.errstate(divide="ignore", invalid="ignore"):
        shrinkage = float(l1 / l2)

    def run(*args):
        it = iter(args)

        def take(k):
            return [next(it).detach().cpu().numpy() for _ in range(k)]

        ex_idx, feat_idx = take(n_sparse), take(n_sparse)
        values, dense = take(n_values), take(n_dense)
        (weights,), (labels,) = take(1), take(1)
        weights, labels = weights.reshape(-1), labels.reshape(-1)
        sparse_indices, sparse_weights = take(n_sparse), take(n_sparse)
        dense_weights, (state_in,) = take(n_dense), take(1)
        sparse_nominal = [w.reshape(-1).astype(_F) for w in sparse_weights]
        sparse_delta = [np.zeros(w.size, _F) for w in sparse_weights]
        dense_nominal = [w.reshape(-1).astype(_F) for w in dense_weights]
        dense_delta = [np.zeros(w.size, _F) for w in dense_weights]
        n = weights.size
        if labels.size != n:
            raise InvalidArgumentError(None, None, f"Expected {n} example labels but got "
                                       f"{labels.size}")
        for g, d in enumerate(dense):
            if d.ndim != 2:
                raise InvalidArgumentError(None, None, f"Dense features at index {g} must be "
                                           f"rank 2 but is rank {d.ndim}")
        flat = ([x.reshape(-1) for x in ex_idx], [x.reshape(-1) for x in feat_idx],
                [x.reshape(-1) for x in values])
        quick = sdca_numba.kernels()
        if quick is not None:
            batch = sdca_batch.prepare(n, n_values, *flat, dense, sparse_indices,
                                       [w.size for w in dense_weights], quick.runs,
                                       quick.duplicates)
        else:
            maps = [{f: j for j, f in enumerate(ix.reshape(-1).tolist())}
                    for ix in sparse_indices]
            examples = _examples(n, n_sparse, n_values, *flat, dense, weights, labels, maps,
                                 [w.size for w in dense_weights])
        if state_in.ndim != 2:
            raise InvalidArgumentError(None, None, "example_state_data must be rank 2 but is "
                                       f"rank {state_in.ndim}")
        if state_in.shape != (n, 4):
            raise InvalidArgumentError(
                None, None, f"Expected shape {_shape_text((n, 4))} for example_state_data, "
                f"got {_shape_text(state_in.shape)}")
        state = state_in.astype(_F).copy()
        rng = _rng()
        if quick is not None:
            sparse_delta, dense_delta = _pass(
                quick, batch, loss, a["loss_type"], adaptive, parts, l2, shrinkage,
                weights, labels, sparse_nominal, dense_nominal, state, rng)
        else:
            _reference_pass(examples, loss, adaptive, parts, l2, shrinkage, maps,
                            sparse_nominal, sparse_delta, dense_nominal, dense_delta, state,
                            rng)
        outs = [torch.from_numpy(state).to(device)]
        outs += [torch.from_numpy(d.reshape(w.shape)).to(device) for d, w in
                 zip(sparse_delta + dense_delta, sparse_weights + dense_weights)]
        return tuple(outs) if len(outs) > 1 else outs[0]
    return run


def _reference_pass(examples, loss, adaptive, parts, l2, shrinkage, maps, sparse_nominal,
                    sparse_delta, dense_nominal, dense_delta, state, rng) -> None:
    """The pass one example at a time in Python (without numba)."""
    def stats(e):
        return _statistics(e, parts, maps, sparse_nominal, sparse_delta, dense_nominal,
                           dense_delta, shrinkage, l2)

    if adaptive:
        probs = _adaptive_probs(np.array([e.label for e in examples], np.float64),
                                np.array([e.weight for e in examples], np.float64),
                                np.array([e.squared_norm for e in examples]),
                                np.array([stats(e)[0] for e in examples]), state, loss, l2)
        order = np.zeros(len(examples), np.int64)
        sdca_numba.accept_draws(*_draws(probs, rng), order)
    else:
        order = rng.permutation(len(examples))
    for index in order.tolist():
        e = examples[index]
        dual = float(state[index, 0])
        weight = float(e.weight)
        label = float(loss.convert_label(float(e.label)))
        wx, prev_wx, norm = stats(e)
        new_dual = loss.updated_dual(parts, label, weight, dual, wx, norm)
        delta = (new_dual - dual) * weight / float(l2)
        for g, (idx, val) in enumerate(e.sparse):
            for k, f in enumerate(idx.tolist()):
                j = maps[g][f]
                value = 1.0 if val is None else float(val[k])
                sparse_delta[g][j] = _F(float(sparse_delta[g][j]) + value * delta)
        fdelta = _F(delta)
        for g, row in enumerate(e.dense):
            dense_delta[g][:row.shape[0]] += row * fdelta
        with np.errstate(over="ignore"):  # a double past float's range: inf, as in C++
            state[index] = [new_dual, loss.primal_loss(prev_wx, label, weight),
                            loss.dual_loss(dual, label, weight), weight]


def _adaptive_probs(labels, weights, norms, wx, state, loss, l2) -> np.ndarray:
    """TensorFlow's SampleAdaptiveProbabilities' weights: weight x sqrt(|x|^2 + l2 x
    smoothness) x |dual residual| (wx: each example's at the start), in float32."""
    n = len(labels)
    probs = np.zeros(n, _F)
    for i in range(n):
        label = float(labels[i])
        try:
            label = float(loss.convert_label(label))
        except InvalidArgumentError:
            pass  # TensorFlow ignores the conversion's status here
        kappa = float(state[i, 0]) + loss.derivative(float(wx[i]), label, 1.0)
        probs[i] = float(weights[i]) * math.sqrt(float(norms[i]) + float(l2) *
                                                 loss.smoothness) * abs(kappa)
    return probs


def _draws(probs: np.ndarray, rng) -> tuple:
    """2n draws of an example by `probs` (uniform where they do not sum to a positive
    number) and 2n uniforms deciding whether each draw is kept: the most the sampling
    looks at."""
    n = probs.size
    total = float(np.sum(probs, dtype=np.float64))
    if total > 0 and math.isfinite(total):
        cdf = np.cumsum(probs, dtype=np.float64)
        picks = np.searchsorted(cdf, rng.random(2 * n) * cdf[-1], side="right")
        picks = np.minimum(picks, n - 1)
    else:
        picks = rng.integers(0, n, 2 * n)
    return picks.astype(np.int64), rng.random(2 * n)


def _pass(kernels, batch, loss, loss_type, adaptive, parts, l2, shrinkage, weights, labels,
          sparse_nominal, dense_nominal, state, rng) -> tuple:
    """The pass in numba (kernels/sdca_numba.py): the groups' sparse and dense deltas."""
    n = labels.size
    norms = np.empty(n)
    kernels.squared_norms(batch.ptr, batch.val, batch.dense, batch.cols, norms)
    sp_nominal = np.concatenate(sparse_nominal) if sparse_nominal else np.zeros(0, _F)
    d_nominal = np.concatenate(dense_nominal) if dense_nominal else np.zeros(0, _F)
    sp_delta, d_delta = np.zeros_like(sp_nominal), np.zeros_like(d_nominal)
    woff = np.cumsum([0] + [w.size for w in dense_nominal])[:-1].astype(np.int64)
    common = (batch.ptr, batch.pos, batch.val, sp_nominal, sp_delta, batch.dense, batch.cols,
              woff, d_nominal, d_delta)
    weights64, labels64 = weights.astype(np.float64), labels.astype(np.float64)
    if adaptive:
        wx = np.empty(n)
        kernels.initial_wx(parts, shrinkage, *common, wx)
        probs = np.empty(n, _F)
        lenient = labels64 if loss_type in ("squared_loss", "poisson_loss") else \
            np.where(labels64 == 0.0, -1.0, labels64)    # as _adaptive_probs converts
        kernels.adaptive_probs(sdca_numba.LOSS_CODES[loss_type], float(loss.smoothness),
                               float(l2), lenient, weights64, norms, wx, state, probs)
        order = np.zeros(n, np.int64)
        kernels.accept(*_draws(probs, rng), order)
    else:
        order = rng.permutation(n)
    converted = _converted_labels(loss_type, loss, labels64, order)
    kernels.run(order.astype(np.int64), sdca_numba.LOSS_CODES[loss_type], parts, float(l2),
                shrinkage, converted, weights64, norms, *common, state)
    return _split(sp_delta, sparse_nominal), _split(d_delta, dense_nominal)


def _split(flat: np.ndarray, like: list) -> list:
    """`flat` cut into arrays the sizes of `like`'s."""
    ends = np.cumsum([w.size for w in like]).tolist()
    return [flat[end - w.size:end] for end, w in zip(ends, like)]


def _converted_labels(loss_type: str, loss, labels: np.ndarray,
                      order: np.ndarray) -> np.ndarray:
    """The loss's labels (binary: -1 / 1); the first example visited with a label the loss
    refuses raises its error, as the pass would."""
    if loss_type == "squared_loss":
        return labels
    binary = loss_type != "poisson_loss"
    bad = ((labels != 0.0) & (labels != 1.0)) if binary else labels < 0.0
    visited = bad[order]
    if visited.any():
        loss.convert_label(float(labels[order[np.argmax(visited)]]))
    return np.where(labels == 0.0, -1.0, 1.0) if binary else labels

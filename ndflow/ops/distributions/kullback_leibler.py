"""`tf.distributions.kl_divergence` and `RegisterKL`: KL(a || b) by the function registered
for the pair of classes nearest in the two MROs (TF's `kullback_leibler.py`)."""

from __future__ import annotations

import inspect

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.ops.array_core import identity
from ndflow.ops.comparison import is_nan, logical_not
from ndflow.ops.control_flow_assert import Assert
from ndflow.ops.reduction import reduce_any

_DIVERGENCES: dict = {}

__all__ = ["RegisterKL", "kl_divergence"]


def _registered_kl(type_a, type_b):
    """The registered function for the pair with the least summed MRO distance (the first
    registered one found, scanning a's MRO then b's, on a tie)."""
    best, best_dist = None, None
    for dist_a, parent_a in enumerate(inspect.getmro(type_a)):
        for dist_b, parent_b in enumerate(inspect.getmro(type_b)):
            fn = _DIVERGENCES.get((parent_a, parent_b))
            if fn is not None and (best is None or dist_a + dist_b < best_dist):
                best, best_dist = fn, dist_a + dist_b
    return best


@tf_export(v1=["distributions.kl_divergence"])
def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(distribution_a || distribution_b), batchwise; NotImplementedError for a pair with
    no registered function. With allow_nan_stats=False a NaN fails when it is computed."""
    kl_fn = _registered_kl(type(distribution_a), type(distribution_b))
    if kl_fn is None:
        raise NotImplementedError(
            "No KL(distribution_a || distribution_b) registered for distribution_a type "
            f"{type(distribution_a).__name__} and distribution_b type "
            f"{type(distribution_b).__name__}")
    with name_scope("KullbackLeibler"):
        kl_t = kl_fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl_t
        kl_t = identity(kl_t, name="kl")
        check = Assert(logical_not(reduce_any(is_nan(kl_t))), [
            f"KL calculation between {distribution_a.name} and {distribution_b.name} returned "
            "NaN values (and was called with allow_nan_stats=False). Values:", kl_t])
        with control_dependencies([check] if check is not None else []):
            return identity(kl_t, name="checked_kl")


def cross_entropy(ref, other, allow_nan_stats=True, name=None):
    """H[ref, other] = entropy(ref) + KL(ref || other)."""
    with name_scope(name, "cross_entropy"):
        return ref.entropy() + kl_divergence(ref, other, allow_nan_stats=allow_nan_stats)


@tf_export(v1=["distributions.RegisterKL"])
class RegisterKL:
    """Decorator registering a KL function for (dist_cls_a, dist_cls_b):

        @tf.distributions.RegisterKL(MyDist, MyDist)
        def _kl(a, b, name=None): ...
    """

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _DIVERGENCES:
            raise ValueError(f"KL({self._key[0].__name__} || {self._key[1].__name__}) has "
                             f"already been registered to: {_DIVERGENCES[self._key]}")
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn

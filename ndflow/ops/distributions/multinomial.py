"""`tf.distributions.Multinomial`: counts of `total_count` draws over the classes of the
last axis of `probs` (or softmax(`logits`))."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.array_builders import sequence_mask
from ndflow.ops.array_core import identity, reshape, shape
from ndflow.ops.array_fill import ones_like, tile
from ndflow.ops.array_gather import one_hot
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.distributions import distribution, util
from ndflow.ops.linalg import matmul
from ndflow.ops.linalg_diag import matrix_set_diag
from ndflow.ops.nn_activation import log_softmax
from ndflow.ops.random import multinomial
from ndflow.ops.reduction import reduce_max, reduce_sum


def draw_counts(flat_logits, flat_ndraws, n, k, dtype, seed):
    """[n, B, k] class counts: for each of the n samples of each of the B rows of
    `flat_logits`, `flat_ndraws[b]` categorical draws (one Multinomial op drawing the largest
    count for every row; the draws past a row's own count are masked out)."""
    rows = tile(flat_logits, [n, 1])                               # [n*B, k]
    counts = tile(flat_ndraws, [n])                                # [n*B]
    draws = multinomial(rows, reduce_max(counts), seed=seed)      # [n*B, max]
    mask = cast(sequence_mask(counts, shape(draws)[1]), dtype)
    x = reduce_sum(one_hot(draws, depth=k, dtype=dtype) * mask[..., None], axis=-2)
    return reshape(x, concat([[n], shape(flat_ndraws), [k]], 0))


@tf_export(v1=["distributions.Multinomial"])
class Multinomial(distribution.LogitsAndProbs, distribution.Distribution):
    """The multinomial distribution of `total_count` draws with class probabilities
    `probs` (or `logits`)."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        parameters = dict(locals())
        with name_scope(name, "Multinomial") as name:
            self._total_count = util.total_count_tensor(total_count, validate_args)
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, multidimensional=True,
                validate_args=validate_args, name=name)
            self._mean_val = self._total_count[..., None] * self._probs
        super().__init__(dtype=self._probs.dtype,
                         reparameterization_type=distribution.NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._total_count, self._logits, self._probs],
                         name=name)

    @property
    def total_count(self):
        return self._total_count

    def _batch_shape_tensor(self):
        return shape(self._mean_val)[:-1]

    def _batch_shape(self):
        return util.with_rank_at_least(self._mean_val.shape, 1)[:-1]

    def _event_shape_tensor(self):
        return shape(self._mean_val)[-1:]

    def _event_shape(self):
        return util.with_rank_at_least(self._mean_val.shape, 1)[-1:]

    def _sample_n(self, n, seed=None):
        n_draws = cast(self.total_count, dtype=dtypes.int32)
        k = self.event_shape_tensor()[0]
        n_draws = ones_like(self.logits[..., 0], dtype=n_draws.dtype) * n_draws
        logits = ones_like(n_draws[..., None], dtype=self.logits.dtype) * self.logits
        x = draw_counts(reshape(logits, [-1, k]), reshape(n_draws, [-1]), n, k, self.dtype,
                        seed)
        return reshape(x, concat([[n], self.batch_shape_tensor(), [k]], 0))

    def _log_prob(self, counts):
        return self._log_unnormalized_prob(counts) - self._log_normalization(counts)

    def _log_unnormalized_prob(self, counts):
        counts = self._maybe_assert_valid_sample(counts)
        return reduce_sum(counts * log_softmax(self.logits), -1)

    def _log_normalization(self, counts):
        counts = self._maybe_assert_valid_sample(counts)
        return -util.log_combinations(self.total_count, counts)

    def _mean(self):
        return identity(self._mean_val)

    def _covariance(self):
        p = self.probs * ones_like(self.total_count)[..., None]
        return matrix_set_diag(-matmul(self._mean_val[..., None], p[..., None, :]),
                               self._variance())

    def _variance(self):
        p = self.probs * ones_like(self.total_count)[..., None]
        return self._mean_val - self._mean_val * p

    def _maybe_assert_valid_sample(self, counts):
        if not self.validate_args:
            return counts
        return util.embed_check_counts(counts, self.total_count,
                                       "counts must sum to `self.total_count`")

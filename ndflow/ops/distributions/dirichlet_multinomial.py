"""`tf.distributions.DirichletMultinomial`: counts of `total_count` draws with class
probabilities drawn from Dirichlet(`concentration`)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.arithmetic import log
from ndflow.ops.array_core import reshape
from ndflow.ops.array_fill import ones_like, tile
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.check_ops import assert_positive_v1
from ndflow.ops.distributions import distribution, util
from ndflow.ops.distributions.concentration import ConcentrationShapes
from ndflow.ops.distributions.multinomial import draw_counts
from ndflow.ops.math import exp, sqrt
from ndflow.ops.math_special import lbeta
from ndflow.ops.random_gamma_poisson import random_gamma


@tf_export(v1=["distributions.DirichletMultinomial"])
class DirichletMultinomial(ConcentrationShapes):
    """The Dirichlet-multinomial compound distribution."""

    def __init__(self, total_count, concentration, validate_args=False, allow_nan_stats=True,
                 name="DirichletMultinomial"):
        parameters = dict(locals())
        with name_scope(name, "DirichletMultinomial") as name:
            self._total_count = util.total_count_tensor(total_count, validate_args)
            self._set_concentration(concentration, validate_args)
        super().__init__(dtype=self._concentration.dtype,
                         reparameterization_type=distribution.NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._total_count, self._concentration], name=name)

    @property
    def total_count(self):
        return self._total_count


    def _sample_n(self, n, seed=None):
        n_draws = cast(self.total_count, dtype=dtypes.int32)
        k = self.event_shape_tensor()[0]
        # Class probabilities per sample and batch member: normalized gamma draws.
        logits = reshape(log(random_gamma(shape=[n], alpha=self.concentration,
                                          dtype=self.dtype, seed=seed)), [-1, k])
        n_draws = reshape(ones_like(self.total_concentration, dtype=dtypes.int32) * n_draws,
                          [-1])
        x = draw_counts(logits, tile(n_draws, [n]), 1, k, self.dtype,
                        util.gen_new_seed(seed, salt="dirichlet_multinomial"))
        return reshape(x, concat([[n], self.batch_shape_tensor(), [k]], 0))

    def _log_prob(self, counts):
        counts = self._maybe_assert_valid_sample(counts)
        ordered_prob = lbeta(self.concentration + counts) - lbeta(self.concentration)
        return ordered_prob + util.log_combinations(self.total_count, counts)

    def _prob(self, counts):
        return exp(self._log_prob(counts))

    def _mean(self):
        return self.total_count * (self.concentration / self.total_concentration[..., None])

    def _variance(self):
        scale = self._variance_scale_term()
        x = scale * self._mean()
        return x * (self.total_count * scale - x)

    def _variance_scale_term(self):
        c0 = self.total_concentration[..., None]
        return sqrt((1.0 + c0 / self.total_count) / (1.0 + c0))

    @staticmethod
    def _maybe_assert_valid_concentration(concentration, validate_args):
        if not validate_args:
            return concentration
        concentration = util.embed_check_categorical_event_shape(concentration)
        return util.with_dependencies([assert_positive_v1(
            concentration, message="Concentration parameter must be positive.")],
            concentration)

    def _maybe_assert_valid_sample(self, counts):
        if not self.validate_args:
            return counts
        return util.embed_check_counts(
            counts, self.total_count, "counts last-dimension must sum to `self.total_count`")

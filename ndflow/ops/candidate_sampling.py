"""Candidate sampling (TF's candidate_sampling_ops): the log-uniform, uniform, learned and
fixed unigram and all-classes samplers draw the negative classes of sampled losses
(`tf.nn.nce_loss`, `tf.nn.sampled_softmax_loss`); ComputeAccidentalHits finds samples equal
to a true class."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def
from ndflow.ops.random_seed import op_seed_attrs


def _sampler_shape(ctx):
    true_classes = ctx.shapes[0]
    if true_classes.rank not in (None, 2):
        raise ValueError(f"Shape must be rank 2 but is rank {true_classes.rank}")
    batch = true_classes.dims[0] if true_classes.rank else None
    n, num_true = ctx.attrs["num_sampled"], ctx.attrs["num_true"]
    return [TensorShape([n]), TensorShape([batch, num_true]), TensorShape([n])]


_COMMON = ["num_true: int >= 1", "num_sampled: int >= 1", "unique: bool", "seed: int = 0",
           "seed2: int = 0"]


def _sampler(name: str, extra=("range_max: int >= 1",)):
    return op_def(
        name, inputs=["true_classes: int64"],
        outputs=["sampled_candidates: int64", "true_expected_count: float",
                 "sampled_expected_count: float"],
        attrs=_COMMON + list(extra), shape=_sampler_shape, stateful=True,
        gradient_undefined=True)


LogUniformCandidateSampler = _sampler("LogUniformCandidateSampler")
UniformCandidateSampler = _sampler("UniformCandidateSampler")
LearnedUnigramCandidateSampler = _sampler("LearnedUnigramCandidateSampler")
FixedUnigramCandidateSampler = _sampler("FixedUnigramCandidateSampler", (
    "range_max: int >= 1", "vocab_file: string = ''", "distortion: float = 1.0",
    "num_reserved_ids: int = 0", "num_shards: int >= 1 = 1", "shard: int >= 0 = 0",
    "unigrams: list(float) = []"))
AllCandidateSampler = _sampler("AllCandidateSampler", ())


def _sample(op, true_classes, num_true, num_sampled, unique, seed, name, **attrs):
    """The sampler op's three outputs; a range too small for `unique` is the kernel's
    InvalidArgumentError, as in TF."""
    attrs = dict(op_seed_attrs(seed), num_true=num_true, num_sampled=num_sampled,
                 unique=bool(unique), **attrs)
    return tuple(apply_op(op, [convert_to_tensor(true_classes, dtype=dtypes.int64)], attrs,
                          name=name).outputs)


@tf_export("random.log_uniform_candidate_sampler",
           v1=["random.log_uniform_candidate_sampler", "nn.log_uniform_candidate_sampler"])
def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None) -> tuple:
    """`tf.random.log_uniform_candidate_sampler`: classes drawn with P(c) = log((c + 2) /
    (c + 1)) / log(range_max + 1) (Zipf-like); (sampled, true expected counts, sampled
    expected counts)."""
    return _sample(LogUniformCandidateSampler, true_classes, num_true, num_sampled, unique,
                   seed, name, range_max=range_max)


@tf_export("random.uniform_candidate_sampler",
           v1=["random.uniform_candidate_sampler", "nn.uniform_candidate_sampler"])
def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None) -> tuple:
    """`tf.random.uniform_candidate_sampler`: classes drawn uniformly from [0, range_max)."""
    return _sample(UniformCandidateSampler, true_classes, num_true, num_sampled, unique,
                   seed, name, range_max=range_max)


@tf_export("random.learned_unigram_candidate_sampler",
           "nn.learned_unigram_candidate_sampler")
def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None) -> tuple:
    """`tf.random.learned_unigram_candidate_sampler`: classes drawn with probability
    proportional to how often they were true classes so far (each count starts at 1; the
    counts live as long as the op's kernel)."""
    return _sample(LearnedUnigramCandidateSampler, true_classes, num_true, num_sampled,
                   unique, seed, name, range_max=range_max)


@tf_export("random.fixed_unigram_candidate_sampler", "nn.fixed_unigram_candidate_sampler")
def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None,
                                    name=None) -> tuple:
    """`tf.random.fixed_unigram_candidate_sampler`: classes drawn with probability
    proportional to `unigrams` (or the last CSV field of each line of `vocab_file`) raised
    to `distortion`, after `num_reserved_ids` classes of weight 0; with `num_shards`, this
    `shard`'s ids only."""
    return _sample(FixedUnigramCandidateSampler, true_classes, num_true, num_sampled, unique,
                   seed, name, range_max=range_max, vocab_file=vocab_file,
                   distortion=float(distortion), num_reserved_ids=num_reserved_ids,
                   num_shards=num_shards, shard=shard,
                   unigrams=[float(u) for u in unigrams])


@tf_export("random.all_candidate_sampler", "nn.all_candidate_sampler")
def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None,
                          name=None) -> tuple:
    """`tf.random.all_candidate_sampler`: every class of [0, num_sampled), each expected
    once (a test sampler for the sampled losses)."""
    return _sample(AllCandidateSampler, true_classes, num_true, num_sampled, unique, seed,
                   name)


def _hits_shape(ctx):
    return [TensorShape([None])] * 3


ComputeAccidentalHits = op_def(
    "ComputeAccidentalHits", inputs=["true_classes: int64", "sampled_candidates: int64"],
    outputs=["indices: int32", "ids: int64", "weights: float"],
    attrs=["num_true: int", "seed: int = 0", "seed2: int = 0"], shape=_hits_shape,
    gradient_undefined=True)


@tf_export("nn.compute_accidental_hits")
def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None,
                            name=None) -> tuple:
    """`tf.nn.compute_accidental_hits`: (row indices, positions in `sampled_candidates`,
    weights of -FLT_MAX) for each sampled candidate equal to one of the row's true
    classes."""
    attrs = dict(op_seed_attrs(seed), num_true=num_true)
    return tuple(apply_op(ComputeAccidentalHits,
                          [convert_to_tensor(true_classes, dtype=dtypes.int64),
                           convert_to_tensor(sampled_candidates, dtype=dtypes.int64)],
                          attrs, name=name).outputs)

"""Kernels of the candidate samplers (TF's BaseCandidateSamplerOp: its checks, its Philox
reservation, the range samplers of kernels/range_samplers.py: a seed gives TensorFlow's
candidates) and of ComputeAccidentalHits (TF's order)."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError, NotFoundError
from ndflow.kernels import range_samplers as rs
from ndflow.kernels.random import _slot_fn, _state_fn
from ndflow.kernels.registry import kernel
from ndflow.ops import candidate_sampling as cs


def _check_true_classes(true: torch.Tensor, num_true: int, range_max: int) -> np.ndarray:
    if true.dim() != 2:
        raise InvalidArgumentError(None, None, "true_classes must be a matrix")
    if true.shape[1] != num_true:   # TF's message names the two the other way round
        raise InvalidArgumentError(None, None, f"true_classes must have num_true columns, "
                                   f"expected: {true.shape[1]} was: {num_true}")
    values = true.detach().cpu().numpy().astype(np.int64)
    bad = values[(values < 0) | (values >= range_max)]
    if bad.size:
        raise InvalidArgumentError(None, None, f"`true_candidate` out of range [0, "
                                   f"{range_max}), received {int(bad[0])}")
    return values


def _sampler_kernel(make_sampler, range_attr: str = "range_max"):
    """A candidate sampler's kernel: TF's BaseCandidateSamplerOp around the range sampler
    `make_sampler(attrs)` (kept with the kernel's Philox state: the learned unigram
    sampler's counts live as long as the kernel)."""
    def factory(node):
        a = node.attrs
        num_sampled, num_true, unique = a["num_sampled"], a["num_true"], bool(a["unique"])
        state_fn = _state_fn(node)
        sampler_fn = _slot_fn(node, "range_sampler", lambda: make_sampler(a))

        def sample(true_classes):
            sampler = sampler_fn()
            true = _check_true_classes(true_classes, num_true, sampler.range)
            if unique and num_sampled > sampler.range:
                raise InvalidArgumentError(None, None, "Sampler's range is too small.")
            state = state_fn()
            words = rs.Words(state.key, state.reserve((2048 * num_sampled + 3) // 4))
            sampled, tries = rs.sample(sampler, words, num_sampled, unique)
            true_expected = rs.expected_counts(sampler.probability(true), num_sampled, tries)
            sampled_expected = rs.expected_counts(sampler.probability(sampled), num_sampled,
                                                  tries)
            if hasattr(sampler, "update"):
                sampler.update(true)
            dev = true_classes.device
            return (torch.from_numpy(sampled).to(dev), torch.from_numpy(true_expected).to(dev),
                    torch.from_numpy(sampled_expected).to(dev))
        return sample
    return factory


class _AllClasses:
    """AllSampler: every class once, expected counts 1."""

    def __init__(self, n: int):
        self.range = n

    def probability(self, classes):
        return np.ones(classes.shape, np.float32)


def _all_kernel(node):
    a = node.attrs
    n, num_true = a["num_sampled"], a["num_true"]

    def sample(true_classes):
        true = _check_true_classes(true_classes, num_true, n)
        dev = true_classes.device
        return (torch.arange(n, dtype=torch.int64, device=dev),
                torch.ones(true.shape, dtype=torch.float32, device=dev),
                torch.ones(n, dtype=torch.float32, device=dev))
    return sample


def _fixed_unigram(attrs) -> rs.FixedUnigram:
    vocab, unigrams = attrs.get("vocab_file") or "", list(attrs.get("unigrams") or [])
    if not vocab and not unigrams:
        raise InvalidArgumentError(None, None, "Must provide either vocab_file or unigrams.")
    if vocab and unigrams:
        raise InvalidArgumentError(None, None, "Must only provide one of vocab_file and "
                                   "unigrams.")
    if vocab:
        unigrams = _vocab_weights(vocab)
    sampler = rs.FixedUnigram.build(unigrams, float(attrs["distortion"]),
                                    int(attrs["num_reserved_ids"]), int(attrs["num_shards"]),
                                    int(attrs["shard"]))
    if sampler.range != attrs["range_max"]:
        raise InvalidArgumentError(None, None, f"range is {attrs['range_max']} must be equal "
                                   f"to weights size  {sampler.range}")
    return sampler


def _vocab_weights(path: str) -> list:
    """The last comma-separated field of each line of a vocabulary file, as floats."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise NotFoundError(None, None, f"{path}; {e.strerror or e}") from None
    weights = []
    for line in lines:
        try:
            weights.append(float(line.split(",")[-1]))
        except ValueError:
            raise InvalidArgumentError(None, None, f"Wrong vocabulary format at line: "
                                       f"{line}") from None
    return weights


kernel(cs.LogUniformCandidateSampler)(
    _sampler_kernel(lambda a: rs.LogUniform(a["range_max"])))
kernel(cs.UniformCandidateSampler)(_sampler_kernel(lambda a: rs.Uniform(a["range_max"])))
kernel(cs.LearnedUnigramCandidateSampler)(
    _sampler_kernel(lambda a: rs.LearnedUnigram(a["range_max"])))
kernel(cs.FixedUnigramCandidateSampler)(_sampler_kernel(_fixed_unigram))
kernel(cs.AllCandidateSampler)(_all_kernel)


@kernel(cs.ComputeAccidentalHits)
def _accidental_hits(node):
    num_true = node.attrs["num_true"]

    def hits(true_classes, sampled):
        if true_classes.dim() != 2 or true_classes.shape[1] != num_true:
            raise InvalidArgumentError(None, None, "true_candidates must be a batch_size * "
                                       "num_true matrix")
        if sampled.dim() != 1:
            raise InvalidArgumentError(None, None, "sampled_candidates must be a vector, "
                                       "which is typically an output from CandidateSampler")
        # TF's order: rows, then their true classes; a class sampled twice: its last position
        position = {c: i for i, c in enumerate(sampled.tolist())}
        rows, ids = [], []
        for r, row in enumerate(true_classes.tolist()):
            for c in row:
                if c in position:
                    rows.append(r)
                    ids.append(position[c])
        dev = sampled.device
        return (torch.tensor(rows, dtype=torch.int32, device=dev),
                torch.tensor(ids, dtype=torch.int64, device=dev),
                torch.full((len(rows),), -torch.finfo(torch.float32).max, device=dev))
    return hits

"""Kernels of the candidate samplers (TF's range_sampler semantics: with `unique`, draws
are repeated until `num_sampled` distinct classes are found, and the expected counts use the
number of tries) and of ComputeAccidentalHits."""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.random import _generator_fn
from ndflow.kernels.registry import kernel
from ndflow.ops import candidate_sampling as cs


def _log_uniform(range_max: int):
    log_range = math.log(range_max + 1)

    def draw(n: int, gen) -> torch.Tensor:
        u = torch.rand(n, generator=gen, dtype=torch.float64)
        return (torch.exp(u * log_range).floor().long() - 1).clamp_(0, range_max - 1)

    def probability(classes: torch.Tensor) -> torch.Tensor:
        c = classes.double()
        return (torch.log(c + 2.0) - torch.log(c + 1.0)) / log_range
    return draw, probability


def _uniform(range_max: int):
    def draw(n: int, gen) -> torch.Tensor:
        return torch.randint(0, range_max, (n,), generator=gen)

    def probability(classes: torch.Tensor) -> torch.Tensor:
        return torch.full(classes.shape, 1.0 / range_max, dtype=torch.float64)
    return draw, probability


def _sampler_kernel(distribution):
    def factory(node):
        a = node.attrs
        num_sampled, num_true, unique, range_max = (a["num_sampled"], a["num_true"],
                                                    a["unique"], a["range_max"])
        draw, probability = distribution(range_max)
        generator = _generator_fn(node)

        def sample(true_classes):
            if true_classes.dim() != 2 or true_classes.shape[1] != num_true:
                raise InvalidArgumentError(None, None, f"true_classes must be a matrix of shape "
                                           f"[batch_size, {num_true}], got "
                                           f"{list(true_classes.shape)}")
            gen = generator()
            if unique:
                seen, order, tries = set(), [], 0
                while len(order) < num_sampled:
                    for c in draw(max(num_sampled, 16), gen).tolist():
                        tries += 1
                        if c not in seen:
                            seen.add(c)
                            order.append(c)
                            if len(order) == num_sampled:
                                break
                sampled = torch.tensor(order, dtype=torch.long)
            else:
                sampled, tries = draw(num_sampled, gen), num_sampled

            def expected(classes):
                p = probability(classes)
                if tries == num_sampled:
                    return (p * num_sampled).float()
                return (-torch.expm1(tries * torch.log1p(-p))).float()
            return (sampled.to(true_classes.device), expected(true_classes.cpu())
                    .to(true_classes.device), expected(sampled).to(true_classes.device))
        return sample
    return factory


kernel(cs.LogUniformCandidateSampler)(_sampler_kernel(_log_uniform))
kernel(cs.UniformCandidateSampler)(_sampler_kernel(_uniform))


@kernel(cs.ComputeAccidentalHits)
def _accidental_hits(node):
    def hits(true_classes, sampled):
        match = true_classes.unsqueeze(2) == sampled.view(1, 1, -1)   # [batch, num_true, S]
        rows, _, positions = match.nonzero(as_tuple=True)
        pairs = torch.unique(torch.stack([rows, positions], 1), dim=0) if rows.numel() else \
            torch.zeros((0, 2), dtype=torch.long, device=sampled.device)
        weights = torch.full((pairs.shape[0],), -torch.finfo(torch.float32).max,
                             device=sampled.device)
        return pairs[:, 0].int(), pairs[:, 1], weights  # (row, position in sampled)
    return hits

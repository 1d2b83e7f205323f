"""`Multinomial` (`tf.random.categorical`) and `StatelessMultinomial`
(`tf.random.stateless_categorical`) on TensorFlow's CPU algorithm, so that a seed gives
TensorFlow's draws (tensorflow/core/kernels/multinomial_op.cc).

One execution reserves `rows * ceil4(num_samples) * 2` outputs of the kernel's Philox state
(a stateless op starts at its seed's key and counter). The draws, row after row, read one
stream from that counter, two 32-bit words per draw made a double in [0, 1), scaled by the
row's unnormalized total: the class is the first whose running sum of exp(logit - max) over
finite logits exceeds it (upper bound), in float64. TensorFlow splits the rows among its
threads when a batch's estimated cost is large enough, each shard reading the stream skipped
`first row * ceil(num_samples / 4)` calls, so its draws then depend on its thread count;
here they are always one shard's, TensorFlow's values wherever it runs the batch as one.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import philox
from ndflow.kernels.random import _check_seed, _reserve_fn
from ndflow.kernels.registry import kernel
from ndflow.ops import random, stateless_random


def _check(logits: torch.Tensor, num_samples) -> int:
    if logits.dim() != 2:
        raise InvalidArgumentError(None, None, f"logits should be a matrix, got shape "
                                   f"{list(logits.shape)}")
    n = int(num_samples)
    if n < 0:
        raise InvalidArgumentError(None, None, f"num_samples should be non-negative, got {n}")
    if logits.shape[1] == 0 and logits.shape[0] and n:
        raise InvalidArgumentError(None, None, "num_classes should be positive, got 0")
    return n


def reserved_outputs(rows: int, n: int) -> int:
    """The outputs one execution reserves: TF's batch * ceil4(num_samples), doubled on CPU
    (each draw takes two 32-bit words)."""
    return rows * ((n + 3) // 4 * 4) * 2


def draw(logits: torch.Tensor, n: int, key, counter: list) -> np.ndarray:
    """int64 [rows, n] class indices of TF's CPU Multinomial at Philox (key, counter)."""
    x = logits.detach().cpu().to(torch.float64).numpy()
    rows, classes = x.shape
    out = np.zeros((rows, n), np.int64)
    if rows == 0 or n == 0:
        return out
    bits = philox.random_bits((rows * n + 1) // 2, key, counter).reshape(-1, 2)[:rows * n]
    u = philox.uniform_double_from_words(bits[:, 0], bits[:, 1]).reshape(rows, n)
    for b in range(rows):
        out[b] = classes_of_uniforms(logits, x[b], u[b])
    return out


def classes_of_uniforms(logits: torch.Tensor, row: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The classes of one float64 logits `row` (of `logits`' dtype) that doubles `u` in
    [0, 1) pick: TF's upper bound in the running sum of exp(logit - max)."""
    finite = np.isfinite(row)
    lowest = float(torch.finfo(logits.dtype).min if logits.dtype.is_floating_point
                   else torch.iinfo(logits.dtype).min)
    top = row[finite].max() if finite.any() else lowest
    with np.errstate(over="ignore", invalid="ignore"):
        cdf = np.cumsum(np.where(finite, np.exp(row - top), 0.0))
    return np.searchsorted(cdf, u * cdf[-1], side="right")


@kernel(random.Multinomial)
def _multinomial(node):
    reserve, out_dtype = _reserve_fn(node), node.attrs["output_dtype"].torch_dtype

    def run(logits, num_samples):
        n = _check(logits, num_samples)
        rows = logits.shape[0]
        if n == 0 or rows == 0:
            return torch.zeros((rows, n), dtype=out_dtype, device=logits.device)
        key, counter = reserve(reserved_outputs(rows, n))
        return torch.from_numpy(draw(logits, n, key, counter)).to(out_dtype).to(logits.device)
    return run


@kernel(stateless_random.StatelessMultinomial)
def _stateless_multinomial(node):
    out_dtype = node.attrs["output_dtype"].torch_dtype

    def run(logits, num_samples, seed):
        key, counter = philox.key_counter_from_seed(*_check_seed(seed))
        n = _check(logits, num_samples)
        return torch.from_numpy(draw(logits, n, key, counter)).to(out_dtype).to(logits.device)
    return run

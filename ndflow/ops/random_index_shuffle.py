"""`tf.random.experimental.index_shuffle`: the RandomIndexShuffle op, the position of an
index in a pseudorandom permutation of [0, max_index] chosen by a seed, without building the
permutation (TF's cycle-walking Simon cipher, kernels/random_index_shuffle.py).

As TensorFlow, the public function pads the usual two-integer seed to the op's three by a
leading 498247692, along the seed's first dimension (so a batch of [n, 2] seeds becomes
[n + 1, 2] and is refused, as TF 2.21 refuses it)."""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_fill import pad
from ndflow.ops.op_def import op_def

SEED_PAD = 498247692   # TF's value for the seed's extra word


def _at_most(shape: TensorShape, rank: int) -> None:
    if shape.rank is not None and shape.rank > rank:
        raise ValueError(f"Shape must be at most rank {rank} but is rank {shape.rank}")


def _dim(d) -> int:
    return -1 if d is None else d


def _batch(n, m, error: str):
    """The output length so far `n` merged with an input's batch `m` (TF: lengths 1 and
    unknown ones merge with anything)."""
    if n is None:
        return m
    if n > 1 and m is not None and m > 1 and m != n:
        raise ValueError(error)
    return n


def _shape(ctx):
    """TF's StatelessRandomPermuteShape: a scalar when every input is one (seed [3]), a
    vector when any is batched, else unknown."""
    if context.executing_eagerly():   # the kernel checks, with its own messages
        return [TensorShape(None)]
    index, seed, max_index = ctx.shapes
    _at_most(index, 1)
    if seed.rank == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    _at_most(seed, 2)
    _at_most(max_index, 1)
    if seed.rank == 1 and seed[0] != 3:
        raise ValueError(f"Seed must have shape [3] or [n, 3] but got [{_dim(seed[0])}].")
    if seed.rank == 2 and seed[1] != 3:
        raise ValueError(f"Seed must have shape [3] or [n, 3] but got [{_dim(seed[0])}, "
                         f"{_dim(seed[1])}].")
    if index.rank == 0 and seed.rank == 1 and max_index.rank == 0:
        return [TensorShape([])]
    if not (index.rank == 1 or seed.rank == 2 or max_index.rank == 1):
        return [TensorShape(None)]
    n = index[0] if index.rank == 1 else None
    if seed.rank == 2:
        n = _batch(n, seed[0], f"Seed has shape [{seed[0]}, 3] but must have shape [{n}, 3]. "
                               f"since index had shape [{n}].")
    if max_index.rank == 1:
        n = _batch(n, max_index[0], f"Max index has shape [{max_index[0]}] but must have "
                                    f"shape [{n}].")
    return [TensorShape([n])]


RandomIndexShuffle = op_def(
    "RandomIndexShuffle", inputs=["index: dtype", "seed: Tseed", "max_index: dtype"],
    outputs=["output: dtype"],
    attrs=["rounds: int = 4", "dtype: {int32, int64}", "Tseed: {int32, int64}"],
    shape=_shape, not_differentiable=True)


@tf_export("random_index_shuffle")
def random_index_shuffle(index, seed, max_index, rounds=4, name=None) -> Tensor:
    """`tf.random_index_shuffle` (the raw op): where `index` lands in the permutation of
    [0, max_index] that the three-integer `seed` chooses, after `rounds` Feistel rounds."""
    return apply_op(RandomIndexShuffle, [index, seed, max_index], {"rounds": int(rounds)},
                    name=name).outputs[0]


@tf_export("random.experimental.index_shuffle")
def index_shuffle(index, seed, max_index) -> Tensor:
    """`tf.random.experimental.index_shuffle`: where `index` lands in the permutation of
    [0, max_index] that `seed` (two integers, or [n, 2]) chooses."""
    seed = convert_to_tensor(seed)
    rank = seed.shape.rank
    paddings = [[1, 0]] + ([] if rank is None else (rank - 1) * [[0, 0]])
    seed = pad(seed, paddings, constant_values=SEED_PAD)
    return apply_op(RandomIndexShuffle, [index, seed, max_index], {"rounds": 4}).outputs[0]

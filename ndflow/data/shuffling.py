"""`Dataset.shuffle`: TensorFlow's shuffle buffer and seeds, so a seeded shuffle gives
TensorFlow 2.21's exact order (shuffle_buffer.py has the algorithm and the random streams).

Seeds follow tf.data's `get_seed` (the op seed, `tf.random.set_seed`'s global seed, both, or
neither: random seeds). Each iterator over the dataset takes the next seed pair of the
dataset's seed generator when it is created, so new iterators reshuffle
(`reshuffle_each_iteration=True`) or repeat the first order (False); a `repeat` after the
shuffle starts an iterator per epoch (ordering.py: TF's fused ShuffleAndRepeat draws one pair
per epoch, the unfused `repeat` one more after its last epoch). A shuffle built while a graph
is built (in a `tf.function`, a TF1 graph) is made anew each time the graph runs, as TF runs
its dataset op: its generator starts over then (graph_datasets.py renews it).

An iterator checkpoint records the number of pairs the generator has handed out
(`_pass_state`); a restore sets it and replays the pipeline.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core import errors as tf_errors
from ndflow.data import shuffle_buffer
from ndflow.data.dataset import UNKNOWN, DatasetV2, register_op
from ndflow.data.sources import TensorSliceDataset
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.ops.random_seed import get_seed

_WHOLE_INPUT = 2 ** 62  # buffer_size UNKNOWN_CARDINALITY: a buffer as large as the input


def _int(value) -> int:
    return int(value.numpy() if hasattr(value, "numpy") else value)


class ShuffleDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, buffer_size, seed=None,
                 reshuffle_each_iteration=True):
        self._input = input_dataset
        size = _int(buffer_size)
        if size <= 0 and size != UNKNOWN:  # tf.data.AUTOTUNE (-1) included
            raise tf_errors.InvalidArgumentError(
                None, None, "buffer_size must be greater than zero or UNKNOWN_CARDINALITY "
                "[Op:ShuffleDatasetV3]")
        self._size = _WHOLE_INPUT if size == UNKNOWN else size
        seed1, seed2 = get_seed(None if seed is None else _int(seed))
        self._generator = shuffle_buffer.SeedGenerator(seed1 or 0, seed2 or 0,
                                                       reshuffle_each_iteration)
        self._per_graph_run = not context.executing_eagerly()
        super().__init__(input_dataset.element_spec)

    # -- iterators ------------------------------------------------------------------------------
    def _iter_flat(self):
        # The seeds are taken on the first pull, when ndflow makes the iterators of a
        # pipeline (TF makes them, and takes the seeds, when the pipeline's iterator is
        # made; an iterator never read takes them when it goes: dataset.OwnedIterator).
        stream = shuffle_buffer.WordStream(*self._generator.next_seeds())
        yield from shuffle_buffer.shuffled(self._input._iter_flat, self._size, stream)

    def _scalar_chunks(self):
        """The input's lists of plain values shuffled alike (dataset.py `_scalar_chunks`),
        or None."""
        source = self._input._scalar_chunks()
        return None if source is None else self._shuffled_chunks(source)

    def _shuffled_chunks(self, source):
        stream = shuffle_buffer.WordStream(*self._generator.next_seeds())
        yield from shuffle_buffer.shuffled_chunks(lambda: source, self._size, stream)

    def _make_unread_iterator(self):
        self._generator.next_seeds()

    def _batches(self, size: int, drop_remainder: bool):
        """For tensor slices: the buffer's order computed on row indices, then one gather per
        batch (instead of moving elements one by one)."""
        if not isinstance(self._input, TensorSliceDataset):
            return None
        return self._bulk(size, drop_remainder)

    def _bulk(self, size: int, drop_remainder: bool):
        # a generator: the seeds are taken on the first pull, so a caller probing whether
        # bulk batches exist (and dropping the answer) draws none
        src = self._input
        stream = shuffle_buffer.WordStream(*self._generator.next_seeds())
        yield from src._slices(size, drop_remainder,
                               shuffle_buffer.order(src._n, self._size, stream))

    # -- state ----------------------------------------------------------------------------------
    # the seed pairs handed out, for iterator checkpoints (dataset.pass_states)
    def _pass_state(self) -> int:
        return self._generator.draws

    def _set_pass_state(self, draws: int) -> None:
        self._generator.draws = draws

    def _renew_for_graph_run(self) -> None:
        """Called on the copy a graph run iterates (graph_datasets.bind): a shuffle built in
        a graph is TF's dataset op, run again, with a new seed generator."""
        if self._per_graph_run:
            self._generator = self._generator.fresh()


register_op("shuffle")(ShuffleDataset)

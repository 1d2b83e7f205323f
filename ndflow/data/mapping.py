"""`map` (sequential or on a thread pool) and `filter` (`reduce` is in reducing.py).

A parallel map pulls input elements on the consumer's thread and runs the traced function
on `num_parallel_calls` worker threads (ATen kernels release the GIL, so the calls overlap);
results come back in input order, or as they finish with `deterministic=False`. With
`num_parallel_calls=AUTOTUNE` the number of calls in flight is measured and chosen
(parallelism_tuner.py); with one at a time, the call runs on the consumer's thread.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import itertools
import os
import time

from ndflow.core import determinism
from ndflow.core.nest import flatten
from ndflow.data import structure
from ndflow.data.dataset import AUTOTUNE, UNKNOWN, DatasetV2, register_op
from ndflow.data.options import pipeline_options
from ndflow.data.parallelism_tuner import Gate, ParallelismTuner
from ndflow.data.traced_function import TracedFunction, traced_predicate
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.data.vectorized_map import CHUNK as VECTOR_CHUNK
from ndflow.data.vectorized_map import vectorize
from ndflow.data.worker_threads import (
    init_worker_thread,
    intra_op_threads,
    pipeline_threads_live,
)
from ndflow.kernels.kernel_states import KernelStates, using

_CHUNK = 8  # elements per task of a parallel map whose calls are short
_SHORT_CALL_S = 5e-4  # longer calls (a map over whole batches) go one element per task


def parallelism(num_parallel_calls) -> int:
    """Worker count for `num_parallel_calls` (AUTOTUNE: the CPU count)."""
    n = int(num_parallel_calls.numpy() if hasattr(num_parallel_calls, "numpy")
            else num_parallel_calls)
    if n == AUTOTUNE:
        return max(2, os.cpu_count() or 2)
    if n <= 0:
        raise ValueError(f"num_parallel_calls must be positive or tf.data.AUTOTUNE, got {n}")
    return n


class MapDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, map_func, num_parallel_calls=None,
                 deterministic=None):
        self._input = input_dataset
        name = "MapDataset" if num_parallel_calls is None else "ParallelMapDatasetV2"
        self._fn = TracedFunction(map_func, input_dataset.element_spec, name)
        self._workers = None if num_parallel_calls is None else parallelism(num_parallel_calls)
        self._autotuned = num_parallel_calls is not None and int(
            getattr(num_parallel_calls, "numpy", lambda: num_parallel_calls)()) == AUTOTUNE
        self._deterministic = deterministic
        self._vectorized = False  # not tried yet; then None or the chunk-at-once callable
        self._tuned_parallelism = None  # AUTOTUNE's last measured choice (parallelism_tuner)
        super().__init__(self._fn.output_spec)

    def _vectorized_call(self):
        """The function rebuilt to run a chunk of elements at once (vectorized_map.py), or
        None when its graph has an op without a batching rule."""
        if self._vectorized is False:
            self._vectorized = vectorize(self._fn, flatten(self._input.element_spec))
        return self._vectorized

    def _batches(self, size: int, drop_remainder: bool):
        """`map(f).batch(n)` fused (TensorFlow's map_and_batch): a sequential map whose
        function vectorizes runs once per batch on the stacked inputs, its outputs are the
        batch (batch pulls those elements anyway). A batch that cannot run as a whole runs
        per element, with the unfused pipeline's results and errors."""
        if self._sequential_workers() not in (None, 1):
            return None
        optimization = pipeline_options(self).experimental_optimization
        if optimization.map_and_batch_fusion is False or \
                optimization.apply_default_optimizations is False:
            return None
        vectorized = self._vectorized_call()
        if vectorized is None:
            return None
        return self._fused_batches(vectorized, size, drop_remainder)

    def _fused_batches(self, vectorized, size: int, drop_remainder: bool):
        fn, source, index = self._fn, self._input._iter_flat(), 0
        states = KernelStates()  # this iterator's instance of the function's kernels
        specs = flatten(self.element_spec)
        while True:
            group = list(itertools.islice(source, size))
            if not group or (drop_remainder and len(group) < size):
                return
            try:
                with using(states):
                    batch = vectorized.batched(group)
            except Exception:  # noqa: BLE001 - run per element: exact results and errors
                outs = []
                for k, flat in enumerate(group):
                    try:
                        outs.append(fn(flat, states))
                    except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                        raise fn.error(e, index + k) from e
                batch = structure.batch_flat(outs, specs)
            yield batch
            index += len(group)

    def _sequential_workers(self):
        """The worker count this iteration uses: 1 in debug mode and for AUTOTUNE when the
        pipeline's options disable autotuning (TF then leaves parallelism at its start)."""
        if self._fn.debug_mode or (self._autotuned and
                                   pipeline_options(self).autotune.enabled is False):
            return 1
        return self._workers

    def _iter_flat(self):
        if self._sequential_workers() in (None, 1):
            fn, states = self._fn, KernelStates()  # TF instantiates the function per iterator
            for i, flat in enumerate(self._input._iter_flat()):
                try:
                    yield fn(flat, states)
                except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                    raise fn.error(e, i) from e
            return
        yield from self._parallel()

    def _parallel(self):
        """Workers each run the function on a chunk of consecutive elements (one task per
        element costs more in thread hand-offs than a small function takes)."""
        fn, workers = self._fn, self._workers
        states = KernelStates()  # this iterator's instance of the function's kernels
        deterministic = self._deterministic
        if determinism.enabled():  # enable_op_determinism overrides both, as in TF
            deterministic = True
        elif deterministic is None:  # tf.data.Options(deterministic=...) decides, else ordered
            deterministic = pipeline_options(self).deterministic is not False
        pending: collections.deque = collections.deque()
        pool = None   # started with the first task handed to a worker
        source = self._input._iter_flat()
        exhausted, index = False, 0
        vectorized = self._vectorized_call()
        # seconds per call, measured by the workers: tasks of one element while unknown or
        # long (a chunk of slow calls would keep the other workers waiting for input)
        call_s = [None]
        # AUTOTUNE: the calls in flight are measured and chosen (parallelism_tuner.py)
        if self._autotuned:   # a later iterator starts from what the last one measured
            tuner = ParallelismTuner(workers, start=self._tuned_parallelism)
        else:
            tuner = None
        gate = Gate(tuner) if tuner is not None else contextlib.nullcontext()

        def run_chunk(first: int, chunk: list):
            with gate:
                if tuner is None:
                    return call_chunk(first, chunk)
                return timed_chunk(first, chunk)

        def timed_chunk(first: int, chunk: list):
            start = time.perf_counter()
            try:
                return call_chunk(first, chunk)
            finally:
                tuner.task_time(time.perf_counter() - start)

        def call_chunk(first: int, chunk: list):
            if vectorized is not None and len(chunk) > 1:
                try:
                    with using(states):
                        return vectorized(chunk)
                except Exception:  # noqa: BLE001, S110 - run per element: exact results/errors
                    pass
            out = []
            start = time.perf_counter()
            for k, flat in enumerate(chunk):
                try:
                    out.append(fn(flat, states))
                except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                    raise fn.error(e, first + k) from e
            call_s[0] = (time.perf_counter() - start) / len(chunk)
            return out

        def next_chunk() -> list:
            nonlocal exhausted
            short = call_s[0] is not None and call_s[0] < _SHORT_CALL_S
            size = VECTOR_CHUNK if vectorized is not None else _CHUNK if short else 1
            chunk = list(itertools.islice(source, size))
            if len(chunk) < size:
                exhausted = True
            return chunk

        with pipeline_threads_live():   # the GIL changes hands sooner meanwhile
            try:
                while True:
                    limit = workers if tuner is None else tuner.limit
                    if limit == 1 and tuner is not None and not pending:
                        # one call at a time: it runs here, without two thread hand-offs
                        chunk = [] if exhausted else next_chunk()
                        if not chunk:
                            return
                        results = timed_chunk(index, chunk)
                        index += len(chunk)
                        self._tuned_parallelism = tuner.task_done()
                        yield from results
                        continue
                    while not exhausted and len(pending) <= limit:
                        chunk = next_chunk()
                        if chunk:
                            if pool is None:
                                pool = concurrent.futures.ThreadPoolExecutor(
                                    workers, "tf_data_map", initializer=init_worker_thread,
                                    initargs=(intra_op_threads(self),))
                            pending.append(pool.submit(run_chunk, index, chunk))
                            index += len(chunk)
                    if not pending:
                        return
                    if deterministic:
                        future = pending.popleft()
                    else:
                        done, _ = concurrent.futures.wait(pending, return_when="FIRST_COMPLETED")
                        future = next(f for f in pending if f in done)
                        pending.remove(future)
                    results = future.result()
                    if tuner is not None:
                        self._tuned_parallelism = tuner.task_done()
                    yield from results
            finally:
                for f in pending:
                    f.cancel()
                if pool is not None:
                    pool.shutdown(wait=False)


class FilterDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, predicate):
        self._input = input_dataset
        self._fn = traced_predicate(predicate, input_dataset.element_spec, "FilterDataset")
        super().__init__(input_dataset.element_spec)

    def _iter_flat(self):
        fn, states = self._fn, KernelStates()
        for i, flat in enumerate(self._input._iter_flat()):
            try:
                keep = fn(flat, states)[0]
            except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                raise fn.error(e, i) from e
            if bool(keep._value):
                yield flat

    def _cardinality(self):
        return UNKNOWN  # an element count that only running can tell


register_op("map")(MapDataset)
register_op("filter")(FilterDataset)


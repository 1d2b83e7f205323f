"""`prefetch`: a background thread runs the input pipeline ahead of the consumer.

The producer thread pulls elements from the input into a bounded queue; ATen kernels (map
functions, batching) release the GIL, so preparing the next elements overlaps the consumer's
work (a training step). Errors reach the consumer at the element where they happened; an
iterator dropped early stops its producer.
"""

from __future__ import annotations

import atexit
import queue
import threading
import weakref

from ndflow.data.dataset import AUTOTUNE, DatasetV2, register_op
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.data.worker_threads import (
    init_worker_thread,
    intra_op_threads,
    pipeline_threads_live,
)

AUTOTUNE_BUFFER = 8  # elements prefetched under tf.data.AUTOTUNE
_END = object()

# producer thread -> its stop event (a thread leaves when it is gone; threading keeps live
# ones referenced)
_producers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_producers_lock = threading.Lock()


@atexit.register
def _stop_producers_at_exit() -> None:
    """A daemon producer still inside an ATen kernel when the interpreter finalizes is ended
    by pthread_exit unwinding through C++ frames, which aborts the process ("terminate called
    without an active exception"): stop the producers, each after its current element."""
    with _producers_lock:
        producers = list(_producers.items())
    for _, stop in producers:
        stop.set()
    for thread, _ in producers:
        thread.join(timeout=30)


class PrefetchDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, buffer_size):
        self._input = input_dataset
        n = int(buffer_size.numpy() if hasattr(buffer_size, "numpy") else buffer_size)
        if n < 0 and n != AUTOTUNE:
            raise ValueError(f"buffer_size must be >= 0 or tf.data.AUTOTUNE, got {n}")
        self._buffer = AUTOTUNE_BUFFER if n == AUTOTUNE else n
        super().__init__(input_dataset.element_spec)

    def _batches(self, size: int, drop_remainder: bool):
        return None

    def _iter_flat(self):
        if self._buffer == 0:
            yield from self._input._iter_flat()
            return
        q: queue.Queue = queue.Queue(self._buffer)
        stop = threading.Event()
        source = self._input._iter_flat()

        def put(item) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        threads = intra_op_threads(self)

        def produce():
            init_worker_thread(threads)
            try:
                for flat in source:
                    if not put(flat):
                        return
                put(_END)
            except BaseException as e:  # noqa: BLE001 - handed to the consumer
                put(e)
            finally:
                if stop.is_set():
                    source.close()

        thread = threading.Thread(target=produce, name="tf_data_prefetch", daemon=True)
        with _producers_lock:
            _producers[thread] = stop
        with pipeline_threads_live():
            thread.start()
            try:
                while True:
                    item = q.get()
                    if item is _END:
                        return
                    if isinstance(item, BaseException):
                        raise item
                    yield item
            finally:
                stop.set()


register_op("prefetch")(PrefetchDataset)

"""`tf.train.Coordinator` and `tf.compat.v1.train.LooperThread`: stopping a set of threads
together (queue runners, training loops), TensorFlow's semantics: the first exception
reported to `request_stop` is re-raised by `join`; OutOfRangeError (the end of input) stops
cleanly; `join` gives threads `stop_grace_period_secs` after a stop before reporting
stragglers."""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from ndflow.core import errors, logging
from ndflow.core.api_export import tf_export


@tf_export("train.Coordinator", v1=["train.Coordinator"])
class Coordinator:
    """Coordinates the termination of threads."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _filter_exception(self, ex):
        instance = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(instance, self._clean_stop_exception_types) else ex

    def request_stop(self, ex=None):
        """Requests that the threads stop; `ex` (an exception or an exc_info tuple, the
        first one reported) is re-raised by `join`."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:  # too late to be reported by join: raise it here
                if isinstance(ex, tuple):
                    raise ex[1]
                if ex is not None:
                    raise ex
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    if isinstance(ex, tuple):
                        self._exc_info_to_raise = ex
                    else:
                        self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
                    logging.info(f"Error reported to Coordinator: {self._exc_info_to_raise[1]}")
                self._stop_event.set()

    def clear_stop(self):
        """Clears the stop flag (and a reported exception)."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context that reports any exception raised in it to `request_stop`."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - TF reports everything, as a bare except
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None) -> bool:
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for `threads` (and registered threads) to end, then re-raises a reported
        exception; RuntimeError names threads still alive after the grace period."""
        with self._lock:
            threads = list(self._registered_threads.union(threads or []))
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        wait = 0.001
        while any(t.is_alive() for t in threads) and stop_grace_period_secs >= 0.0:
            time.sleep(wait)
            stop_grace_period_secs -= wait
            wait = max(min(2 * wait, stop_grace_period_secs), 0.001)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1]
            if stragglers:
                if ignore_live_threads:
                    logging.info("Coordinator stopped with threads still running: "
                                 + " ".join(stragglers))
                else:
                    raise RuntimeError("Coordinator stopped with threads still running: "
                                       + " ".join(stragglers))

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception reported to `request_stop`, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1]


@tf_export(v1=["train.LooperThread"])
class LooperThread(threading.Thread):
    """A daemon thread calling `target(*args, **kwargs)` (or `run_loop`) repeatedly, every
    `timer_interval_secs` when given, until the coordinator stops."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if self._target:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass "
                             "'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target` and returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time() + self._timer_interval_secs
                while not self._coord.wait_for_stop(max(0.0, next_time - time.time())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once before the loop."""

    def stop_loop(self):
        """Called once after the loop."""

    def run_loop(self):
        """One iteration: calls the target."""
        if self._target:
            self._target(*self._args, **self._kwargs)

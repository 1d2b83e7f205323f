"""`tf.profiler.experimental`: start/stop, the `Profile` context and `Trace` spans.

    tf.profiler.experimental.start("logdir")
    for step in range(20):
        with tf.profiler.experimental.Trace("train", step_num=step):
            train_step()
    tf.profiler.experimental.stop()

`stop()` writes `logdir/plugins/profile/<run>/<host>.trace.json.gz` (Chrome / Perfetto trace
events: plans, nodes, kernels and the `Trace` spans) beside `nodes.csv`, `op_types.csv`,
`iterations.csv`, `reduced_precision.csv` and `profile.json`, where TensorBoard's profile
tooling looks. TensorFlow's errors: `AlreadyExistsError` when a profiler is running,
`UnavailableError` when `stop` finds none. There is no profiler server (`server`/`client`).
"""

from __future__ import annotations

import collections
import threading

from ndflow.core import errors
from ndflow.core.api_export import tf_export
from ndflow.profiler import advice, analysis, precision, recorder, report_files

_lock = threading.Lock()
_session: tuple | None = None  # (window, logdir) of the running profiler


@tf_export("profiler.experimental.ProfilerOptions", v1=[])
class ProfilerOptions(collections.namedtuple(
        "ProfilerOptions", ["host_tracer_level", "python_tracer_level", "device_tracer_level",
                            "delay_ms"])):
    """TensorFlow's options tuple; accepted for compatibility (ndflow always traces plans,
    nodes and kernels, and starts at once)."""

    __slots__ = ()

    def __new__(cls, host_tracer_level=2, python_tracer_level=0, device_tracer_level=1,
                delay_ms=None):
        return super().__new__(cls, host_tracer_level, python_tracer_level,
                               device_tracer_level, delay_ms)


@tf_export("profiler.experimental.start", v1=[])
def start(logdir, options=None):
    """Starts profiling every plan run (Session.run, tf.function, Keras); `stop` writes it
    under `logdir`. AlreadyExistsError if a profiler is running."""
    global _session
    if options is not None and not isinstance(options, ProfilerOptions):
        raise TypeError(f"options must be a tf.profiler.experimental.ProfilerOptions, got "
                        f"{type(options).__name__}")
    with _lock:
        if _session is not None:
            raise errors.AlreadyExistsError(None, None, "Another profiler is running.")
        logdir = str(logdir)
        report_files.check_writable(logdir)
        _session = (recorder.Window(), logdir)


@tf_export("profiler.experimental.stop", v1=[])
def stop(save=True):
    """Stops profiling; with `save`, writes the trace and summaries (see the module doc)."""
    global _session
    with _lock:
        if _session is None:
            raise errors.UnavailableError(
                None, None, "Cannot export profiling results. No profiler is running.")
        window, logdir = _session
        _session = None
    cap = window.close()
    if save:
        write_capture(cap, logdir)


def write_capture(cap, logdir: str) -> str:
    """Writes a capture in TensorBoard's layout; returns the run directory."""
    profile = analysis.analyze(cap)
    prec = precision.report(profile)
    recs = advice.recommendations(profile, prec)
    run_dir = f"{logdir}/plugins/profile/{report_files.run_name()}"
    report_files.write(profile, prec, recs, run_dir, ("csv", "json", "trace"))
    return run_dir


@tf_export("profiler.experimental.Profile", v1=[])
class Profile:
    """`with Profile(logdir):` profiles the block (start on entry, stop and save on exit)."""

    def __init__(self, logdir, options=None):
        self._logdir = logdir
        self._options = options

    def __enter__(self):
        start(self._logdir, self._options)

    def __exit__(self, typ, value, tb):
        stop()


@tf_export("profiler.experimental.Trace", v1=[])
class Trace:
    """A named span in the trace (e.g. `Trace("train", step_num=step)`), with its keyword
    arguments as the span's args; costs nothing when no profiler is running."""

    def __init__(self, name, **kwargs):
        self._name = str(name)
        self._args = kwargs
        self._t0 = None

    def __enter__(self):
        if recorder.active_recorder() is not None:
            self._t0 = recorder.clock()
        return self

    def set_metadata(self, **kwargs):
        """Adds args to the span after it started (as TensorFlow's)."""
        self._args.update(kwargs)

    def __exit__(self, exc_type, exc_val, exc_tb):
        rec = recorder.active_recorder()
        if self._t0 is not None and rec is not None:
            rec.add_user_event(self._name, self._t0, recorder.clock(), self._args)
        self._t0 = None

"""Preemption handling: `tf.distribute.experimental.PreemptionCheckpointHandler`,
`TerminationConfig` and `PreemptionWatcher`, as TensorFlow 2.21's failure_handling.

A single worker (no cluster resolver, or a cluster of one task) watches for its own
termination notice: a SIGTERM (the handler installs a SIGTERM handler in the main thread), or
`termination_config.termination_watcher_fn()` returning True (polled once a second in a
thread). `handler.run(train_step, ...)` counts the steps; at the first call after the notice
it saves a checkpoint (the handler's manager or `save_fn`) and calls `exit_fn` — TensorFlow's
default `sys.exit(42)` off GCP, or 143 after the GCE maintenance watcher — unless a
`grace_period` leaves time to go on, then it saves again when that time is almost up. The
step count is saved with the checkpoint ('checkpointed_runs') and restored by the next run,
so training resumes where it stopped.

Several workers share the notice through TensorFlow's coordination service, which ndflow does
not have: a multi-worker cluster is a NotImplementedError (as TensorFlow's is for a cluster with
parameter servers). The platform (GCP or not, GPU, TPU) is detected as TensorFlow does it, by
asking the GCE metadata server (GCE_METADATA_IP) for 5 seconds at most.
"""

from __future__ import annotations

import contextlib
import enum
import os
import shutil
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

from ndflow.checkpoint.checkpoint_manager import CheckpointManager
from ndflow.core import dtypes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops.variables import Variable
from ndflow.runtime.device_config import list_logical_devices

_ITERATION_VARIABLE = "checkpointed_runs"
_RESTARTABLE_EXIT_CODE = 143
_GRACE_PERIOD_GCE = 3600


class PlatformDevice(enum.Enum):
    INTERNAL_CPU = "internal_CPU"
    INTERNAL_GPU = "internal_GPU"
    INTERNAL_TPU = "internal_TPU"
    GCE_GPU = "GCE_GPU"
    GCE_TPU = "GCE_TPU"
    GCE_CPU = "GCE_CPU"
    UNSUPPORTED = "unsupported"


def _metadata_url(path: str) -> str:
    host = os.environ.get("GCE_METADATA_IP", "metadata.google.internal")
    return f"http://{host}/computeMetadata/v1/{path}"


def _request_compute_metadata(path: str, timeout=None) -> str:
    req = urllib.request.Request(_metadata_url(path), headers={"Metadata-Flavor": "Google"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.read().decode("utf-8")


def on_gcp() -> bool:
    """Whether the GCE metadata server answers (5 s at most)."""
    try:
        _request_compute_metadata("instance/hostname", timeout=5)
        return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def detect_platform() -> PlatformDevice:
    gpu = bool(list_logical_devices("GPU"))
    tpu = bool(list_logical_devices("TPU"))
    if on_gcp():
        return PlatformDevice.GCE_GPU if gpu else \
            PlatformDevice.GCE_TPU if tpu else PlatformDevice.GCE_CPU
    return PlatformDevice.INTERNAL_GPU if gpu else \
        PlatformDevice.INTERNAL_TPU if tpu else PlatformDevice.INTERNAL_CPU


def termination_watcher_function_gce() -> bool:
    return _request_compute_metadata("instance/maintenance-event") == \
        "TERMINATE_ON_HOST_MAINTENANCE"


def gce_exit_fn():
    sys.exit(_RESTARTABLE_EXIT_CODE)


def _default_exit_fn():
    sys.exit(42)


@tf_export("distribute.experimental.TerminationConfig", v1=[])
class TerminationConfig:
    """How a worker learns it is being terminated and what it does then:
    `termination_watcher_fn()` (True once a notice arrived; default: SIGTERM),
    `exit_fn()` (default: exit with a code the platform restarts on), `grace_period`
    (seconds between the notice and the kill: training goes on and saves again near its
    end), `save_fn(*args, **kwargs)` (instead of the checkpoint manager's save)."""

    def __init__(self, termination_watcher_fn=None, exit_fn=None, grace_period=None,
                 save_fn=None):
        self.termination_watcher_fn = termination_watcher_fn
        self.exit_fn = exit_fn
        self.grace_period = grace_period
        self.save_fn = save_fn


def _complete_config(platform: PlatformDevice, config) -> TerminationConfig:
    """TensorFlow's per-platform defaults for what `config` leaves unset."""
    config = config or TerminationConfig()
    watcher, exit_fn, grace, save_fn = (config.termination_watcher_fn, config.exit_fn,
                                        config.grace_period, config.save_fn)
    if platform is PlatformDevice.GCE_GPU:
        return TerminationConfig(watcher or termination_watcher_function_gce,
                                 exit_fn or gce_exit_fn,
                                 grace if grace or grace == 0 else _GRACE_PERIOD_GCE, save_fn)
    if platform is PlatformDevice.GCE_CPU:
        return TerminationConfig(watcher or termination_watcher_function_gce,
                                 exit_fn or gce_exit_fn, grace or 0, save_fn)
    return TerminationConfig(watcher, exit_fn or _default_exit_fn, grace or 0, save_fn)


@tf_export("distribute.experimental.PreemptionCheckpointHandler", v1=[])
class PreemptionCheckpointHandler:
    """Saves a checkpoint and exits when this worker is told it will be terminated (see the
    module doc). `checkpoint_or_checkpoint_manager`: a `tf.train.Checkpoint` (then
    `checkpoint_dir` is required: the handler keeps one checkpoint there) or a
    `tf.train.CheckpointManager`."""

    def __init__(self, cluster_resolver, checkpoint_or_checkpoint_manager, checkpoint_dir=None,
                 termination_config=None):
        # (a Checkpoint is anything but a manager: ndflow.checkpoint imports this package)
        if not isinstance(checkpoint_or_checkpoint_manager, CheckpointManager) and \
                not checkpoint_dir:
            raise InvalidArgumentError(None, None, "When a checkpoint is passed, a "
                                       "checkpoint_dir must be passed as well.")
        self._cluster_resolver = cluster_resolver
        self._checkpoint_or_checkpoint_manager = checkpoint_or_checkpoint_manager
        self._checkpoint_dir = checkpoint_dir
        self._platform_device = detect_platform()
        completed = _complete_config(self._platform_device, termination_config)
        self._termination_watcher_fn = completed.termination_watcher_fn
        self._exit_fn = completed.exit_fn
        self._grace_period = completed.grace_period
        self._save_fn = completed.save_fn
        self._local_mode = True
        self._poll_thread = None
        if self._platform_device in (PlatformDevice.GCE_TPU, PlatformDevice.GCE_CPU):
            tf_logging.warning("PreemptionCheckpointHandler does not support usage with TPU "
                               "or CPU device on GCP.")
            return
        spec = cluster_resolver.cluster_spec() if cluster_resolver else None
        if spec is not None and "ps" in spec.as_dict():
            raise NotImplementedError("PreemptionCheckpointHandler does not supportusage with "
                                      "tf.distribute.experimental.ParameterServerStrategy.")
        if spec is not None and sum(spec.num_tasks(j) for j in spec.jobs) > 1:
            # one task (a one-worker MultiWorkerMirroredStrategy) needs no agreement
            raise NotImplementedError(
                "PreemptionCheckpointHandler with a multi-worker cluster needs TensorFlow's "
                "coordination service to agree on the step to save at, which ndflow does not "
                f"have (cluster jobs: {spec.jobs}); it supports a single worker.")
        self._initialize_single_worker()
        tf_logging.info("PreemptionCheckpointHandler initialized or restored.")

    def _initialize_single_worker(self) -> None:
        self._id_in_cluster, self._is_chief = "single_worker", True
        self._checkpointed_runs = Variable(0, dtype=dtypes.int64, trainable=False,
                                           name=_ITERATION_VARIABLE)
        if isinstance(self._checkpoint_or_checkpoint_manager, CheckpointManager):
            self._manager = self._checkpoint_or_checkpoint_manager
            self._api_made_checkpoint_manager = False
        else:
            self._manager = CheckpointManager(self._checkpoint_or_checkpoint_manager,
                                              directory=self._checkpoint_dir, max_to_keep=1)
            self._api_made_checkpoint_manager = True
        checkpoint = self._manager.checkpoint
        if _ITERATION_VARIABLE not in checkpoint._children:
            setattr(checkpoint, _ITERATION_VARIABLE, self._checkpointed_runs)
        else:  # a checkpoint reused by a second handler: count with the tracked variable
            self._checkpointed_runs = checkpoint._children[_ITERATION_VARIABLE]
        self._manager.restore_or_initialize()
        self._final_checkpoint_countdown = False
        self._estimated_run_time = 0.0
        self._run_counter = int(self._checkpointed_runs.numpy())
        self._received_own_sigterm = threading.Event()
        self._received_checkpoint_step = threading.Event()
        self._step_to_checkpoint = None
        if self._termination_watcher_fn:
            self._poll_should_stop = threading.Event()
            self._poll_thread = threading.Thread(
                target=self._poll_termination_signal, daemon=True,
                name=f"WorkerTerminationSignalWatcher-{self._id_in_cluster}")
            self._poll_thread.start()
        else:
            tf_logging.info("Start watcher for local signal.")
            signal.signal(signal.SIGTERM, self._sigterm_handler_fn)

    # the notice ------------------------------------------------------------------------------
    def _poll_termination_signal(self) -> None:
        while not (self._poll_should_stop.is_set() or self._final_checkpoint_countdown):
            if self._termination_watcher_fn():
                self._set_received_own_sigterm()
                return
            time.sleep(1)

    def _sigterm_handler_fn(self, signum, frame) -> None:
        self._set_received_own_sigterm()

    def _set_received_own_sigterm(self) -> None:
        tf_logging.info("Member %s has received termination notice.", self._id_in_cluster)
        self._received_own_sigterm_time = time.time()
        self._received_own_sigterm.set()

    def _stop_poll_thread(self) -> None:
        thread = getattr(self, "_poll_thread", None)
        if thread is not None:
            self._poll_should_stop.set()
            if thread is not threading.current_thread():
                thread.join()
            self._poll_thread = None

    def __del__(self):
        self._stop_poll_thread()

    # the steps -------------------------------------------------------------------------------
    @property
    def total_run_calls(self) -> int:
        """Deprecated in TensorFlow: the number of `run` calls, restored from checkpoints."""
        return self._run_counter

    def _gce(self) -> bool:
        return self._platform_device in (PlatformDevice.GCE_TPU, PlatformDevice.GCE_CPU)

    def run(self, distributed_train_function, *args, **kwargs):
        """Runs one training step, first saving and exiting if a termination notice came."""
        if self._gce():
            return distributed_train_function(*args, **kwargs)
        self._check_preemption_and_maybe_checkpoint()
        begin = time.time()
        result = distributed_train_function(*args, **kwargs)
        self._run_counter += 1
        # a running mean of the step time, for the grace period's last call
        self._estimated_run_time += (time.time() - begin - self._estimated_run_time) / \
            self._run_counter
        return result

    def save_checkpoint_if_preempted(self, *args, **kwargs) -> None:
        """For custom loops: saves (passing the arguments to the save) and exits if a notice
        came; call it once per step."""
        if self._gce():
            return
        self._check_preemption_and_maybe_checkpoint(*args, **kwargs)
        self._run_counter += 1
        self._estimated_run_time = 0

    @contextlib.contextmanager
    def watch_preemption_scope(self):
        """The scope to run training in (on a single worker errors pass through as is)."""
        yield

    def _save_checkpoint(self, *args, **kwargs) -> None:
        tf_logging.info("PreemptionCheckpointHandler: Starting saving a checkpoint.")
        self._checkpointed_runs.assign(self._run_counter)
        if self._save_fn:
            self._save_fn(*args, **kwargs)
        else:
            self._manager.save(*args, **kwargs)
        tf_logging.info("Checkpoint finished at path %s", self._manager.directory)

    def _check_preemption_and_maybe_checkpoint(self, *args, **kwargs) -> None:
        if self._received_checkpoint_step.is_set():
            if self._step_to_checkpoint == str(self._run_counter):
                self._save_checkpoint(*args, **kwargs)
                if self._grace_period <= 0 or self._final_checkpoint_countdown:
                    self._stop_poll_thread()
                    if self._api_made_checkpoint_manager and not self._is_chief:
                        shutil.rmtree(os.path.dirname(self._manager.directory),
                                      ignore_errors=True)
                    tf_logging.info("PreemptionCheckpointHandler: checkpoint saved. Exiting.")
                    self._exit_fn()
                else:
                    tf_logging.info("Continue training for the grace period.")
                    self._final_checkpoint_countdown = True
                    self._received_checkpoint_step.clear()
        elif self._received_own_sigterm.is_set():
            if self._final_checkpoint_countdown:
                if self._target_time_for_termination >= time.time():
                    return
                tf_logging.info("Grace period almost ended. Final call to save a checkpoint!")
            tf_logging.info("Termination caught in main thread on preempted worker")
            self._step_to_checkpoint = str(self._run_counter + 1)
            self._received_checkpoint_step.set()
            if self._grace_period > 0 and not self._final_checkpoint_countdown:
                # leave room for a few steps before the kill (TF's buffer of 3 x 2 steps)
                self._target_time_for_termination = (
                    self._received_own_sigterm_time + self._grace_period -
                    3 * self._estimated_run_time * 2)


@tf_export("distribute.experimental.PreemptionWatcher", v1=[])
class PreemptionWatcher:
    """Watches the coordination service for a preemption notice on Borg TPU jobs; elsewhere
    (all of ndflow's platforms) it logs that the environment is unsupported and
    `preemption_message` stays None."""

    def __init__(self):
        self._preemption_message = None
        self._platform = detect_platform()
        tf_logging.warning("Preemption watcher does not support environment: %s",
                           self._platform)

    @property
    def preemption_message(self):
        return self._preemption_message

    def block_until_worker_exit(self) -> None:
        """A no-op off TPU platforms."""

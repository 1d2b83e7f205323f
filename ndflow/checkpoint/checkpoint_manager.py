"""`tf.train.CheckpointManager`: numbered checkpoints in a directory, the oldest deleted
beyond `max_to_keep` (except one every `keep_checkpoint_every_n_hours`), the `checkpoint`
state file listing those kept with their timestamps, as TensorFlow's manager keeps it."""

from __future__ import annotations

import os
import time

from ndflow.checkpoint import checkpoint_management
from ndflow.core.api_export import tf_export


@tf_export("train.CheckpointManager", v1=["train.CheckpointManager"])
class CheckpointManager:
    """Saves `checkpoint` as `<directory>/<checkpoint_name>-<n>` and keeps the newest
    `max_to_keep` (None keeps all)."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None, last_checkpoint_step=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is "
                             "not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_checkpoint_step = last_checkpoint_step
        recovered = checkpoint_management.get_checkpoint_state(self._directory)
        now = time.time()
        self._maybe_delete: dict[str, float] = {}
        if recovered is None:
            self._latest_checkpoint = None
            self._last_preserved_timestamp = now
        else:
            self._latest_checkpoint = recovered.model_checkpoint_path
            self._last_preserved_timestamp = recovered.last_preserved_timestamp or now
            stamps = list(recovered.all_model_checkpoint_timestamps)
            paths = recovered.all_model_checkpoint_paths
            if len(stamps) != len(paths):
                stamps = [now] * len(paths)
            for path, stamp in zip(paths, stamps):
                # a file "from the future" (clock change) counts as saved now
                self._maybe_delete[path] = min(stamp, now)

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's prefix, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self) -> list[str]:
        """The prefixes of the checkpoints this manager keeps, oldest first."""
        return list(self._maybe_delete)

    def _sweep(self) -> list[str]:
        """Drops the checkpoints beyond max_to_keep from the list; returns those to delete
        (deleted after the state file stops naming them, so a kill in between loses no
        checkpoint the state file names)."""
        doomed = []
        if self._max_to_keep is None:
            return doomed
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = next(iter(self._maybe_delete.items()))
            del self._maybe_delete[path]
            hours = self._keep_checkpoint_every_n_hours
            if hours and stamp - hours * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = stamp
                continue
            doomed.append(path)
        return doomed

    def _record_state(self) -> None:
        checkpoint_management.update_checkpoint_state(
            self._directory, self._latest_checkpoint,
            all_model_checkpoint_paths=list(self._maybe_delete),
            all_model_checkpoint_timestamps=list(self._maybe_delete.values()),
            last_preserved_timestamp=self._last_preserved_timestamp)

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes a new numbered checkpoint (number: `checkpoint_number`, else the
        checkpoint's save counter), deletes old ones, updates the state file; returns its
        path, or None when `checkpoint_interval` steps have not passed yet."""
        if self._checkpoint_interval is not None and check_interval:
            step = int(_value(self._step_counter))
            if self._last_checkpoint_step is not None and \
                    step < self._last_checkpoint_step + self._checkpoint_interval:
                return None
        counter = getattr(self._checkpoint, "save_counter", None)
        if counter is not None:
            counter.assign_add(1)
        if checkpoint_number is None:
            if counter is None:
                raise ValueError("`checkpoint_number` is required when the checkpoint has "
                                 "no `save_counter`.")
            checkpoint_number = counter
        number = int(_value(checkpoint_number))
        path = self._checkpoint.write(f"{self._prefix}-{number}", options=options)
        if self._step_counter is not None:
            self._last_checkpoint_step = int(_value(self._step_counter))
        stamp = time.time()
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = stamp
        self._latest_checkpoint = path
        doomed = self._sweep()
        self._record_state()
        for old in doomed:
            checkpoint_management.remove_checkpoint(old)
        return path

    def restore_or_initialize(self):
        """Restores the latest checkpoint, else runs `init_fn`; returns the restored path or
        None."""
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            if self._step_counter is not None:
                self._last_checkpoint_step = int(_value(self._step_counter))
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

    def sync(self):
        """Saves are synchronous: nothing to wait for."""


def _value(x):
    return x.numpy() if hasattr(x, "numpy") else x

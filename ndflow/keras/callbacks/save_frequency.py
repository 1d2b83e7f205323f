"""The batch count behind `save_freq` (an int: save every that many batches; "epoch": at epoch
ends), which ModelCheckpoint and BackupAndRestore share."""

from __future__ import annotations


class SaveFrequency:
    """Mixin for a callback with `save_freq`, `_batches_seen_since_last_saving` and
    `_last_batch_seen` (None or the last batch index seen)."""

    def _should_save_on_batch(self, batch) -> bool:
        """Whether batch `batch` ends `save_freq` batches since the last save (counting
        across an epoch's end, where the batch index starts again at 0)."""
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            add_batches = batch + 1  # a new epoch: batches count from 0
        else:
            add_batches = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += add_batches
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

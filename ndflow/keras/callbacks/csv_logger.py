"""`tf.keras.callbacks.CSVLogger`: one CSV row per epoch.

The header is `epoch` then the first epoch's log keys, sorted (plus `val_<key>` for each when
the first epoch has no validation keys); a missing value is written `NA`, a vector as
`"[a, b]"`. Rows use the csv module's excel dialect (`\\r\\n` line ends) with `separator`;
the file is flushed after each epoch and closed at the end of training. With `append`, an
existing non-empty file gets no second header.
"""

from __future__ import annotations

import collections.abc
import csv
import os

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.callback import Callback


def _handle_value(k):
    is_zero_dim_ndarray = isinstance(k, np.ndarray) and k.ndim == 0
    if isinstance(k, str):
        return k
    if isinstance(k, collections.abc.Iterable) and not is_zero_dim_ndarray:
        return f'"[{", ".join(map(str, k))}]"'
    return k


@keras_export("keras.callbacks.CSVLogger")
class CSVLogger(Callback):
    """Writes each epoch's logs (loss, metrics) as a row of a CSV file, with a header of
    the column names.

    Args:
      filename: the file's path.
      separator: the column separator.
      append: whether to append to an existing file (else it is overwritten).
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename) if isinstance(filename, os.PathLike) else filename
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode)  # noqa: SIM115 - closed by on_train_end
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs.keys())
            if self.keys and not any(key.startswith("val_") for key in self.keys):
                self.keys.extend([f"val_{k}" for k in self.keys])
        if not self.writer:
            class CustomDialect(csv.excel):
                delimiter = self.sep

            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + (self.keys or []),
                                         dialect=CustomDialect)
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, _handle_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None

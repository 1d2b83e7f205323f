"""Whether a SavedModel is being written (TensorFlow's internal `save_context`): functions
traced inside `save_context()` are the ones the file keeps, so a layer that takes a fused op
TensorFlow runs on GPUs only (Keras' LSTM and GRU on CudnnRNNV3: keras/layers/rnn_fused.py)
traces its portable form there, and TensorFlow on any device can serve the file."""

from __future__ import annotations

import contextlib
import threading

_state = threading.local()


def in_save_context() -> bool:
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def save_context():
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1

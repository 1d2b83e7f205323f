"""The `checkpoint` state file and the helpers around it (`tf.train.latest_checkpoint`,
`get_checkpoint_state`, `checkpoints_iterator`, TF1's `checkpoint_exists` ...).

The state file is a `CheckpointState` proto (core/protos/checkpoint_state_pb.py) in text
format, as TensorFlow writes it:
    model_checkpoint_path: "ckpt-5"
    all_model_checkpoint_paths: "ckpt-4"
    all_model_checkpoint_paths: "ckpt-5"
    all_model_checkpoint_timestamps: 1795429772.39
    last_preserved_timestamp: 1795429771.39
Paths inside the checkpoint directory are written relative to it. The file is replaced
atomically (temporary file + rename), so a reader never sees half of it.
"""

from __future__ import annotations

import os
import time
import uuid

from google.protobuf import text_format

from ndflow.checkpoint import tensor_bundle
from ndflow.core import errors, logging
from ndflow.core.api_export import tf_export
from ndflow.core.file_io import _os_error
from ndflow.core.protos.checkpoint_state_pb import CheckpointState

STATE_FILENAME = "checkpoint"


def _state(model_checkpoint_path, all_paths=(), timestamps=(), last_preserved=0.0):
    return CheckpointState(model_checkpoint_path=model_checkpoint_path,
                           all_model_checkpoint_paths=list(all_paths),
                           all_model_checkpoint_timestamps=list(timestamps),
                           last_preserved_timestamp=last_preserved or 0.0)


def atomic_write_text(path: str, text: str) -> None:
    temp = f"{path}.tmp{uuid.uuid4().hex}"
    try:
        with open(temp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except OSError as e:
        if os.path.exists(temp):
            os.remove(temp)
        raise _os_error(path, e) from None


def _relative(path: str, directory: str) -> str:
    """`path` relative to `directory` when it lies directly in it, else unchanged."""
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory):
        return os.path.basename(path)
    return path


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=True) -> None:
    """Writes `save_dir/checkpoint` (paths in `save_dir` relative when asked)."""
    all_paths = list(all_model_checkpoint_paths or [])
    if not all_paths or all_paths[-1] != model_checkpoint_path:
        all_paths.append(model_checkpoint_path)
    if save_relative_paths:
        model_checkpoint_path = _relative(model_checkpoint_path, save_dir)
        all_paths = [_relative(p, save_dir) for p in all_paths]
    state = _state(model_checkpoint_path, all_paths, all_model_checkpoint_timestamps or (),
                   last_preserved_timestamp)
    atomic_write_text(os.path.join(save_dir, latest_filename or STATE_FILENAME),
                      text_format.MessageToString(state))


@tf_export("train.get_checkpoint_state")
def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The directory's CheckpointState (relative paths made absolute), or None."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    path = os.path.join(checkpoint_dir, latest_filename or STATE_FILENAME)
    if not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            state = text_format.Parse(f.read().decode("utf-8"), CheckpointState())
    except OSError as e:
        raise _os_error(path, e) from None
    except (UnicodeDecodeError, text_format.ParseError) as e:
        raise errors.DataLossError(None, None, f"{path}: not a checkpoint state file "
                                               f"({e})") from None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
    state.model_checkpoint_path = absolute(state.model_checkpoint_path)
    paths = [absolute(p) for p in state.all_model_checkpoint_paths]
    del state.all_model_checkpoint_paths[:]
    state.all_model_checkpoint_paths.extend(paths)
    return state


def checkpoint_prefix_exists(prefix: str) -> bool:
    return os.path.exists(tensor_bundle.index_filename(prefix)) or (
        os.path.exists(prefix) and not os.path.isdir(prefix))


@tf_export(v1=["train.checkpoint_exists"])
def checkpoint_exists(checkpoint_prefix) -> bool:
    """Whether a V2 checkpoint (its `.index`) exists under the prefix."""
    return checkpoint_prefix_exists(os.fspath(checkpoint_prefix))


@tf_export("train.latest_checkpoint")
def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint listed in `checkpoint_dir/checkpoint`, or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and checkpoint_prefix_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    if state:
        logging.error(f"Couldn't match files for checkpoint {state.model_checkpoint_path}")
    return None


@tf_export(v1=["train.get_checkpoint_mtimes"])
def get_checkpoint_mtimes(checkpoint_prefixes) -> list[float]:
    """The modification times of the checkpoints' `.index` files."""
    return [os.path.getmtime(tensor_bundle.index_filename(p)) for p in checkpoint_prefixes
            if os.path.exists(tensor_bundle.index_filename(p))]


@tf_export(v1=["train.remove_checkpoint"])
def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=2,
                      meta_graph_suffix="meta") -> None:
    """Deletes a checkpoint's files (`.index`, `.data-*`, `.meta`)."""
    prefix = os.fspath(checkpoint_prefix)
    directory = os.path.dirname(prefix) or "."
    base = os.path.basename(prefix)
    for name in os.listdir(directory):
        if name == f"{base}.index" or name.startswith(f"{base}.data-") or \
                name == f"{base}.{meta_graph_suffix}":
            try:
                os.remove(os.path.join(directory, name))
            except FileNotFoundError:
                pass


@tf_export("train.checkpoints_iterator")
def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new latest checkpoint of `checkpoint_dir` as it appears; stops after
    `timeout` seconds without a new one (unless `timeout_fn()` says to keep waiting)."""
    last = None
    while True:
        deadline = None if timeout is None else time.time() + timeout
        while True:
            path = latest_checkpoint(checkpoint_dir)
            if path is not None and path != last:
                break
            if deadline is not None and time.time() + 1 > deadline:
                path = None
                break
            time.sleep(1)
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        start = time.time()
        last = path
        yield path
        wait = start + min_interval_secs - time.time()
        if wait > 0:
            time.sleep(wait)


@tf_export(v1=["train.generate_checkpoint_state_proto"])
def generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None):
    """A CheckpointState proto (the latest path last in the list)."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    return _state(model_checkpoint_path, paths, all_model_checkpoint_timestamps or (),
                  last_preserved_timestamp)

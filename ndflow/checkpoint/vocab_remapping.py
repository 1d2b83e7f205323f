"""Warm-starting an embedding (or output layer) whose vocabulary changed:
`tf.compat.v1.train.VocabInfo` and the remapped initial values `warm_start` gives it, as
TensorFlow's GenerateVocabRemapping / LoadAndRemapMatrix compute them.

Row i of the new matrix (column i with `axis=1`) is the old row of the same token: the
new vocabulary is the first `new_vocab_size` lines of `new_vocab`, the old one the first
`old_vocab_size` lines of `old_vocab` (-1: all). Rows of tokens the old vocabulary lacks,
and the `num_oov_buckets` rows after the vocabulary, take the backup initializer's values
(zeros by default). A partitioned variable's parts get their slices of that matrix.
"""

from __future__ import annotations

import collections

import numpy as np

from ndflow.core import context, errors, file_io
from ndflow.core.api_export import tf_export
from ndflow.ops import array_core, state
from ndflow.ops.arithmetic import where


@tf_export(v1=["train.VocabInfo"])
class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """How to remap a warm-started variable's rows (or columns) between vocabularies."""

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                old_vocab_size=-1, backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError("The only supported values for the axis argument are 0 and 1.  "
                             f"Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)


def _vocabulary(path, size: int) -> list[bytes]:
    with file_io.GFile(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [line.rstrip(b"\r") for line in lines]
    if size is not None and size >= 0:
        if size > len(lines):
            raise errors.InvalidArgumentError(None, None, f"Vocabulary file {path} has "
                                              f"{len(lines)} lines, fewer than {size}")
        lines = lines[:size]
    return lines


def _remapping(info: VocabInfo) -> list:
    """Old index of each new index (None: not in the old vocabulary, or an OOV bucket)."""
    old = {}
    for i, token in enumerate(_vocabulary(info.old_vocab, info.old_vocab_size)):
        old.setdefault(token, i)
    new = _vocabulary(info.new_vocab, info.new_vocab_size)
    return [old.get(token) for token in new] + [None] * int(info.num_oov_buckets or 0)


def remapped_initializers(parts: list, reader, tensor_name: str, info: VocabInfo) -> None:
    """Gives each part (a variable, or a partitioned variable's part) its slice of the
    remapped matrix: as its initializer in a graph, assigned at once eagerly."""
    old = reader.read(tensor_name)
    mapping = _remapping(info)
    axis = info.axis
    for part in parts:
        shape = part.shape.as_list()
        if len(shape) != 2 or old.ndim != 2:
            raise ValueError(f"Warm-starting {part.name} with a vocabulary needs 2-D "
                             f"tensors; got {shape} and saved {list(old.shape)}")
        slice_info = part._get_save_slice_info()
        offset = slice_info.var_offset if slice_info is not None else [0, 0]
        full = slice_info.full_shape if slice_info is not None else shape
        if full[axis] != len(mapping):
            raise ValueError(f"{part.name}: {full[axis]} rows along axis {axis}, but the "
                             f"vocabulary gives {len(mapping)} (new_vocab_size + "
                             "num_oov_buckets)")
        value = np.zeros(shape, dtype=old.dtype)
        present = np.zeros(shape, dtype=bool)
        for i in range(shape[axis]):
            source = mapping[offset[axis] + i]
            if source is None:
                continue
            if axis == 0:
                value[i] = old[source, offset[1]:offset[1] + shape[1]]
                present[i] = True
            else:
                value[:, i] = old[offset[0]:offset[0] + shape[0], source]
                present[:, i] = True
        _set_value(part, value, present, info.backup_initializer, slice_info)


def _set_value(part, value, present, backup, slice_info) -> None:
    def initial():
        if backup is None:
            return array_core.constant(value, dtype=part.dtype)
        fallback = backup(part.shape.as_list(), dtype=part.dtype)
        return where(array_core.constant(present), array_core.constant(value, dtype=part.dtype),
                     fallback)
    if context.executing_eagerly():
        part.assign(initial())
        return
    graph = part.handle.graph
    with graph.as_default(), graph.control_dependencies(None), \
            graph.name_scope(part.handle.op.name + "/warm_start"):
        initial_value = initial()
        part._initializer_op = state.assign_variable_op(part.handle, initial_value)
        part._initial_value = initial_value

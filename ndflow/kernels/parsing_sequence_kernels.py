"""Host kernel of ParseSequenceExampleV2: `tf.train.SequenceExample` protos to the context's
tensors (as ParseExampleV2 parses an Example's features) and the feature lists' dense
(padded across a batch, with lengths) and sparse tensors, with TensorFlow's messages."""

from __future__ import annotations

import numpy as np
import torch
from google.protobuf.message import DecodeError

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.protos.example_pb import SequenceExample
from ndflow.core.shapes import TensorShape
from ndflow.kernels.parsing_kernels import (
    KIND,
    ExampleParser,
    feature_values,
    host_output,
    shape_str,
    to_array,
)
from ndflow.kernels.registry import host_kernel
from ndflow.ops import parsing_sequence_ops as ops


def _keys(x) -> list:
    return [k.decode() for k in np.asarray(x, object).reshape(-1)]


class _SequenceParser:
    def __init__(self, node):
        a = node.attrs
        self.context = ExampleParser(None, a["context_sparse_types"], a["Tcontext_dense"],
                                     a["context_dense_shapes"])
        self.sparse_types = list(a["feature_list_sparse_types"])
        self.dense_types = list(a["feature_list_dense_types"])
        self.dense_shapes = [TensorShape(s).as_list() for s in a["feature_list_dense_shapes"]]

    def __call__(self, serialized, debug_name, context_sparse_keys, context_dense_keys,
                 context_ragged_keys, list_sparse_keys, list_dense_keys, list_ragged_keys,
                 missing_assumed_empty, *context_defaults):
        ser = np.asarray(serialized, dtype=object)
        single = ser.ndim == 0
        names = np.asarray(debug_name, object).reshape(-1)
        seqs = []
        for i, record in enumerate(ser.reshape(-1)):
            try:
                seqs.append(SequenceExample.FromString(record))
            except (DecodeError, TypeError):
                raise InvalidArgumentError(None, None, f"{_name(names, i)}Could not parse "
                                           "example input, value: "
                                           f"'{record[:64]!r}'") from None
        outs = self.context.parse_maps([s.context.feature for s in seqs], names, single,
                                       context_sparse_keys, context_dense_keys,
                                       context_defaults)
        lists = [s.feature_lists.feature_list for s in seqs]
        empty_ok = np.asarray(missing_assumed_empty.cpu() if isinstance(
            missing_assumed_empty, torch.Tensor) else missing_assumed_empty).reshape(-1)
        sparse = [self._sparse(lists, names, key, dt, single)
                  for key, dt in zip(_keys(list_sparse_keys), self.sparse_types)]
        outs += [s[0] for s in sparse] + [s[1] for s in sparse] + [s[2] for s in sparse]
        dense = [self._dense(lists, names, key, dt, shape, bool(ok), single) for key, dt, shape,
                 ok in zip(_keys(list_dense_keys), self.dense_types, self.dense_shapes,
                           empty_ok)]
        outs += [d[0] for d in dense] + [d[1] for d in dense]
        return outs[0] if len(outs) == 1 else tuple(outs)

    @staticmethod
    def _steps(lists, names, key, dt, i):
        """The values of each step of feature list `key` in example `i`."""
        kind, type_name = KIND[dt]
        steps = []
        for t, f in enumerate(lists[i][key].feature):
            vals = feature_values(f, kind)
            if vals is None:
                raise InvalidArgumentError(None, None, f"{_name(names, i)}Feature list: {key}, "
                                           f"Index: {t}.  Data types don't match. Expected "
                                           f"type: {type_name}")
            steps.append(vals)
        return steps

    def _dense(self, lists, names, key, dt, shape, empty_ok, single):
        count = int(np.prod(shape)) if shape else 1
        per_example = []
        for i in range(len(lists)):
            if key not in lists[i]:
                if not empty_ok:
                    raise InvalidArgumentError(
                        None, None, f"{_name(names, i)}Feature list '{key}' is required but "
                        "could not be found.  Did you mean to include it in "
                        "feature_list_dense_missing_assumed_empty or "
                        "feature_list_dense_defaults?")
                per_example.append([])
                continue
            steps = self._steps(lists, names, key, dt, i)
            for t, vals in enumerate(steps):
                if len(vals) != count:
                    raise InvalidArgumentError(
                        None, None, f"{_name(names, i)}Key: {key}, Index: {t}.  Number of "
                        f"values != expected.  values size: {len(vals)} but output shape: "
                        f"{shape_str(shape)}")
            per_example.append(steps)
        longest = max((len(s) for s in per_example), default=0)
        np_dt = object if dt is dtypes.string else dt.np_dtype
        out = np.full([len(lists), longest, count], b"" if dt is dtypes.string else 0,
                      dtype=np_dt)
        for i, steps in enumerate(per_example):
            for t, vals in enumerate(steps):
                out[i, t, :] = to_array(vals, dt, count)
        out = out.reshape([len(lists), longest] + shape)
        lengths = np.array([len(s) for s in per_example], dtype=np.int64)
        if single:
            return host_output(out[0], dt), torch.tensor(int(lengths[0]))
        return host_output(out, dt), torch.from_numpy(lengths)

    def _sparse(self, lists, names, key, dt, single):
        index, values = [], []
        longest_steps = longest_values = 0
        for i in range(len(lists)):
            steps = self._steps(lists, names, key, dt, i) if key in lists[i] else []
            longest_steps = max(longest_steps, len(steps))
            for t, vals in enumerate(steps):
                longest_values = max(longest_values, len(vals))
                for j, v in enumerate(vals):
                    index.append((t, j) if single else (i, t, j))
                    values.append(v)
        rank = 2 if single else 3
        idx = np.array(index, dtype=np.int64).reshape(-1, rank)
        shape = [longest_steps, longest_values] if single else \
            [len(lists), longest_steps, longest_values]
        return (torch.from_numpy(idx), host_output(to_array(values, dt, len(values)), dt),
                torch.tensor(shape, dtype=torch.int64))


def _name(names, i: int) -> str:
    """TensorFlow's prefix naming the sequence example (given for single ones too)."""
    name = names[i].decode("utf-8", "replace") if i < len(names) and names[i] else "<unknown>"
    return f"Name: {name}, "


host_kernel(ops.ParseSequenceExampleV2)(_SequenceParser)

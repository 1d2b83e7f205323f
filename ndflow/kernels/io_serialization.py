"""Kernels of SerializeSparse / SerializeManySparse / DeserializeManySparse (each component a
TensorProto written as TensorFlow's Tensor::AsProtoTensorContent: raw little-endian
tensor_content, strings as varint lengths then bytes), DecodeJSONExample and MatchingFiles."""

from __future__ import annotations

import glob

import numpy as np
import torch
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from tensorboard.compat.proto import tensor_pb2

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph_def import (
    decode_string_content,
    dtype_from_enum,
    encode_string_content,
    ndarray_to_tensor_proto,
    shape_from_proto,
    shape_to_proto,
    tensor_proto_to_ndarray,
)
from ndflow.core.protos.example_pb import Example
from ndflow.core.shapes import TensorShape
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import io_serialization_ops as ops


def _np(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
    return np.asarray(x, dtype=object)


def tensor_content_proto(arr: np.ndarray, dt) -> bytes:
    """A serialized TensorProto as TensorFlow's AsProtoTensorContent writes it."""
    if dt is dtypes.string:
        p = tensor_pb2.TensorProto(dtype=dt.enum)
        p.tensor_shape.CopyFrom(shape_to_proto(TensorShape(arr.shape)))
        values = [bytes(v) for v in arr.reshape(-1)]
        content = encode_string_content(values)
        if content:
            p.tensor_content = content
        return p.SerializeToString()
    p = ndarray_to_tensor_proto(arr, dt)
    p.tensor_shape.SetInParent()
    return p.SerializeToString()


def parse_tensor_proto(data: bytes) -> tuple[np.ndarray, object]:
    """(array, dtype) of a serialized TensorProto (tensor_content or the typed fields)."""
    p = tensor_pb2.TensorProto()
    p.ParseFromString(data)
    dt = dtype_from_enum(p.dtype)
    if dt is dtypes.string:
        dims = shape_from_proto(p.tensor_shape).as_list()
        n = int(np.prod(dims, dtype=np.int64))
        values = decode_string_content(p.tensor_content, n) if p.tensor_content else \
            list(p.string_val) + [b""] * (n - len(p.string_val))
        arr = np.empty(n, dtype=object)
        arr[:] = values
        return arr.reshape(dims), dt
    return tensor_proto_to_ndarray(p)


def _check_sparse(indices, values, shape, many: bool):
    if indices.ndim != 2:
        raise InvalidArgumentError(None, None, "Input indices should be a matrix but received "
                                   f"shape {list(indices.shape)}")
    if values.ndim != 1:
        raise InvalidArgumentError(None, None, "Input values should be a vector but received "
                                   f"shape {list(values.shape)}")
    if shape.ndim != 1:
        raise InvalidArgumentError(None, None, "Input shape should be a vector but received "
                                   f"shape {list(shape.shape)}")
    if many and shape.shape[0] < 2:
        raise InvalidArgumentError(None, None, "Rank of input SparseTensor should be > 1, but "
                                   f"saw rank: {shape.shape[0]}")


def _serialize_sparse(node):
    dt = node.input_dtypes[1]

    def serialize(indices, values, shape):
        indices, values, shape = _np(indices), _np(values), _np(shape)
        _check_sparse(indices, values, shape, False)
        out = np.empty(3, dtype=object)
        out[:] = [tensor_content_proto(indices.astype(np.int64), dtypes.int64),
                  tensor_content_proto(values, dt),
                  tensor_content_proto(shape.astype(np.int64), dtypes.int64)]
        return out
    return serialize


def _check_ordered(indices: np.ndarray) -> None:
    """TF's SerializeManySparse needs lexicographically sorted indices."""
    for i in range(1, len(indices)):
        a, b = indices[i - 1], indices[i]
        diff = np.nonzero(a != b)[0]
        if len(diff) == 0 or a[diff[0]] > b[diff[0]]:
            raise InvalidArgumentError(
                None, None, f"indices[{i}] = [{','.join(str(int(v)) for v in b)}] is "
                f"{'repeated' if len(diff) == 0 else 'out of order'}. Many sparse ops require "
                "sorted indices.\n    Use `tf.sparse.reorder` to create a correctly ordered "
                "copy.\n\n")


def _serialize_many_sparse(node):
    dt = node.input_dtypes[1]

    def serialize_many(indices, values, shape):
        indices, values, shape = _np(indices), _np(values), _np(shape)
        _check_sparse(indices, values, shape, True)
        n = int(shape[0])
        rows = indices[:, 0] if len(indices) else np.zeros([0], np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= n):
            raise InvalidArgumentError(None, None, "Input SparseTensor has an index outside "
                                       f"the minibatch dimension [0, {n}).")
        _check_ordered(indices)
        bounds = np.searchsorted(rows, np.arange(n + 1))
        inner_shape = tensor_content_proto(shape[1:].astype(np.int64), dtypes.int64)
        out = np.empty((n, 3), dtype=object)
        for b in range(n):
            lo, hi = bounds[b], bounds[b + 1]
            out[b] = [tensor_content_proto(indices[lo:hi, 1:].astype(np.int64), dtypes.int64),
                      tensor_content_proto(values[lo:hi], dt), inner_shape]
        return out
    return serialize_many


for _op, _factory in ((ops.SerializeSparse, _serialize_sparse),
                      (ops.SerializeManySparse, _serialize_many_sparse)):
    host_kernel(_op)(_factory)
    kernel(_op)(_factory)


@host_kernel(ops.DeserializeManySparse)
def _deserialize_many_sparse(node):
    dt = node.attrs["dtype"]

    def deserialize(serialized):
        s = np.asarray(serialized, dtype=object)
        if s.ndim != 2 or s.shape[1] != 3:
            raise InvalidArgumentError(None, None, "Serialized sparse should be a matrix with "
                                       f"3 columns, got shape {list(s.shape)}")
        parts, rank = [], None
        for b in range(s.shape[0]):
            try:
                (ind, _), (val, vdt), (shp, _) = (parse_tensor_proto(bytes(x)) for x in s[b])
            except (DecodeError, ValueError, TypeError, KeyError):
                raise InvalidArgumentError(None, None, "Could not parse serialized_sparse"
                                           f"[{b}] as SparseTensor protos.") from None
            if vdt is not dt:
                raise InvalidArgumentError(None, None, f"Requested SparseTensor of type "
                                           f"{dt.name} but SparseTensor[{b}].values.dtype() "
                                           f"== {vdt.name}")
            ind = np.asarray(ind, np.int64).reshape(-1, len(shp))
            if rank is not None and len(shp) != rank:
                raise InvalidArgumentError(None, None, "Inconsistent shape across "
                                           f"SparseTensors: rank prior to SparseTensor[{b}] "
                                           f"was: {rank + 1} but rank of SparseTensor[{b}] "
                                           f"is: {len(shp) + 1}")
            rank = len(shp)
            parts.append((ind, np.asarray(val).reshape(-1), np.asarray(shp, np.int64)))
        n = len(parts)
        rank = 0 if rank is None else rank
        shape = np.zeros(rank, np.int64)
        for _, _, shp in parts:
            shape = np.maximum(shape, shp)
        indices = np.concatenate([np.concatenate([np.full((len(i), 1), b, np.int64), i], 1)
                                  for b, (i, _, _) in enumerate(parts)]) if n else \
            np.zeros((0, rank + 1), np.int64)
        values = np.concatenate([v for _, v, _ in parts]) if n else \
            np.zeros(0, object if dt is dtypes.string else dt.as_numpy_dtype)
        out_values = values.astype(object) if dt is dtypes.string else \
            torch.from_numpy(np.ascontiguousarray(values.astype(dt.as_numpy_dtype))).to(
                dt.torch_dtype)
        return (torch.from_numpy(indices.reshape(-1, rank + 1)), out_values,
                torch.from_numpy(np.concatenate([[n], shape]).astype(np.int64)))
    return deserialize


@host_kernel(ops.DecodeJSONExample)
def _decode_json_example(node):
    def decode(json_examples):
        x = np.asarray(json_examples, dtype=object)
        out = np.empty(x.shape, dtype=object)
        for idx in np.ndindex(x.shape):
            text = x[idx]
            try:
                msg = json_format.Parse(text.decode() if isinstance(text, bytes) else text,
                                        Example())
            except (json_format.ParseError, UnicodeDecodeError) as e:
                raise InvalidArgumentError(None, None, f"Error while parsing JSON: {e}") \
                    from None
            out[idx] = msg.SerializeToString()
        return out
    return decode


@host_kernel(ops.MatchingFiles)
def _matching_files(node):
    def matching(pattern):
        p = np.asarray(pattern, dtype=object)
        if p.ndim > 1:
            raise InvalidArgumentError(None, None, "Input pattern tensor must be scalar or "
                                       f"vector, but had shape: {list(p.shape)}")
        names = []  # as TF: every pattern's matches, duplicates kept, then sorted
        for pat in p.reshape(-1):
            pat = pat.decode() if isinstance(pat, bytes) else str(pat)
            names.extend(glob.glob(pat, include_hidden=True))
        out = np.empty(len(names), dtype=object)
        out[:] = [n.encode() for n in sorted(names)]
        return out
    return matching

"""Host kernels of ParseExampleV2 (tf.train.Example protos to dense and sparse tensors) and
SparseToDense, with TensorFlow's error messages.

Serialized examples arrive as a NumPy object array of bytes (scalar: one example, outputs
without a batch dimension; vector: a batch). Protos are decoded by the protobuf runtime
(upb) into `tf.train.Example` messages (core/protos/example_pb.py).
"""

from __future__ import annotations

import numpy as np
import torch
from google.protobuf.message import DecodeError

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.protos.example_pb import Example
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import parsing_ops, sparse_tensor

# dtype -> (Feature oneof field, TensorFlow's type name in messages)
_KIND = {dtypes.float32: ("float_list", "float"), dtypes.int64: ("int64_list", "int64"),
         dtypes.string: ("bytes_list", "string")}
_TYPE_OF_KIND = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _shape_str(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _np_dtype(dt):
    return object if dt is dtypes.string else dt.np_dtype


def _host(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x, dtype=object) if not isinstance(x, np.ndarray) else x


def _values(feature, kind: str):
    """The feature's values (a list), or None when its type is not `kind`."""
    which = feature.WhichOneof("kind")
    if which is None:
        return []  # a Feature with no list set reads as an empty list of any type
    if which != kind:
        return None
    return getattr(feature, kind).value


def _to_array(values, dt, n: int) -> np.ndarray:
    if dt is dtypes.string:
        out = np.empty(n, dtype=object)
        out[:] = list(values)
        return out
    return np.array(values, dtype=dt.np_dtype)


class _Dense:
    """One dense feature's parse plan: key, dtype, shape, default."""

    def __init__(self, key, dt, shape, default):
        self.key, self.dt = key, dt
        self.kind, self.type_name = _KIND[dt]
        self.dims = shape.as_list()
        self.seq = bool(self.dims) and self.dims[0] is None
        self.row = self.dims[1:] if self.seq else self.dims
        self.stride = int(np.prod(self.row)) if self.row else 1
        self.count = None if self.seq else int(np.prod(self.dims)) if self.dims else 1
        self.default = _host(default)


class _Parser:
    def __init__(self, node):
        a = node.attrs
        self.sparse_types = list(a["sparse_types"])
        self.dense_types = list(a["Tdense"])
        self.dense_shapes = list(a["dense_shapes"])

    def __call__(self, serialized, names, sparse_keys, dense_keys, ragged_keys, *defaults):
        ser = np.asarray(serialized, dtype=object)
        if ser.ndim > 1:
            raise InvalidArgumentError(None, None, "Expected serialized to be a scalar or "
                                       f"vector, got shape: {_shape_str(ser.shape)}")
        single = ser.ndim == 0
        flat = ser.reshape(-1)
        names = [n.decode("utf-8", "replace") for n in np.asarray(names, object).reshape(-1)]
        skeys = [k.decode() for k in np.asarray(sparse_keys, object).reshape(-1)]
        dkeys = [k.decode() for k in np.asarray(dense_keys, object).reshape(-1)]
        dense = [_Dense(k, t, s, d) for k, t, s, d in
                 zip(dkeys, self.dense_types, self.dense_shapes, defaults)]
        sparse_kinds = [_KIND[t] for t in self.sparse_types]
        b = len(flat)
        dense_vals = [[None] * b for _ in dense]
        sparse_vals = [[None] * b for _ in skeys]

        for i, record in enumerate(flat):
            name = names[i] if i < len(names) and names[i] else "<unknown>"
            where = "" if single else f"Name: {name}, "
            at = (lambda key: f"Key: {key}.  ") if single else \
                (lambda key, i=i, name=name: f"Name: {name}, Key: {key}, Index: {i}.  ")
            try:
                fmap = Example.FromString(record).features.feature
            except (DecodeError, TypeError):
                raise InvalidArgumentError(None, None, f"{where}Could not parse example input, "
                                           f"value: '{record[:64]!r}'") from None
            for j, d in enumerate(dense):
                f = fmap.get(d.key)
                vals = None if f is None else _values(f, d.kind)
                if f is None:
                    dense_vals[j][i] = self._missing(d, where)
                    continue
                if vals is None:
                    raise InvalidArgumentError(None, None, f"{at(d.key)}Data types don't match."
                                               f" Data type: "
                                               f"{_TYPE_OF_KIND[f.WhichOneof('kind')]} but "
                                               f"expected type: {d.type_name}")
                n = len(vals)
                if d.seq:
                    if n % d.stride:
                        raise InvalidArgumentError(
                            None, None, f"{at(d.key)}Number of {d.type_name} values is not a "
                            f"multiple of stride length. Saw {n} values but output shape is: "
                            f"{_shape_str(d.dims)}")
                    dense_vals[j][i] = _to_array(vals, d.dt, n).reshape([n // d.stride] + d.row)
                elif n != d.count:
                    if single:
                        raise InvalidArgumentError(None, None, f"{at(d.key)}Can't parse "
                                                   "serialized Example: Some "
                                                   f"{d.kind} slice was not parsed.")
                    raise InvalidArgumentError(
                        None, None, f"{at(d.key)}Number of {d.type_name} values != expected. "
                        f" Values size: {n} but output shape: {_shape_str(d.dims)}")
                else:
                    dense_vals[j][i] = _to_array(vals, d.dt, n).reshape(d.dims)
            for j, (key, (kind, type_name)) in enumerate(zip(skeys, sparse_kinds)):
                f = fmap.get(key)
                vals = [] if f is None else _values(f, kind)
                if vals is None:
                    actual = _TYPE_OF_KIND[f.WhichOneof("kind")]
                    raise InvalidArgumentError(None, None, f"{at(key)}Data types don't match. "
                                               f"Expected type: {type_name}, Actual type: "
                                               f"{actual}")
                sparse_vals[j][i] = _to_array(vals, self.sparse_types[j], len(vals))

        out_idx, out_val, out_shape = [], [], []
        for j, dt in enumerate(self.sparse_types):
            idx, val, shape = _sparse(sparse_vals[j], dt, single)
            out_idx.append(idx)
            out_val.append(val)
            out_shape.append(shape)
        out_dense = [_stack(dense_vals[j], d, single) for j, d in enumerate(dense)]
        outs = out_idx + out_val + out_shape + out_dense
        return outs[0] if len(outs) == 1 else tuple(outs)

    @staticmethod
    def _missing(d: _Dense, where: str):
        if d.seq:
            return np.empty([0] + d.row, dtype=_np_dtype(d.dt))
        if d.default.size == 0:
            raise InvalidArgumentError(None, None, f"{where}Feature: {d.key} (data type: "
                                       f"{d.type_name}) is required but could not be found.")
        return d.default.reshape(d.dims)


def _out(arr: np.ndarray, dt):
    if dt is dtypes.string:
        return arr
    arr = np.asarray(arr, dtype=dt.np_dtype)  # (ascontiguousarray would make a scalar 1-D)
    return torch.from_numpy(arr if arr.flags.c_contiguous else arr.copy())


def _stack(rows: list, d: _Dense, single: bool):
    if d.seq:
        longest = max((len(r) for r in rows), default=0)
        pad = d.default.reshape(()).item() if d.default.size == 1 else \
            (b"" if d.dt is dtypes.string else 0)
        out = np.full([len(rows), longest] + d.row, pad, dtype=_np_dtype(d.dt))
        for i, r in enumerate(rows):
            out[i, :len(r)] = r
    else:
        out = np.empty([len(rows)] + d.dims, dtype=_np_dtype(d.dt))
        per_row = out.reshape(len(rows), -1)  # element-wise (a 0-d object array is no value)
        for i, r in enumerate(rows):
            per_row[i, :] = r.reshape(-1)
    return _out(out[0] if single else out, d.dt)


def _sparse(per_example: list, dt, single: bool):
    counts = [len(v) for v in per_example]
    total = sum(counts)
    longest = max(counts, default=0)
    values = np.empty(total, dtype=_np_dtype(dt))
    if single:
        idx = np.arange(total, dtype=np.int64).reshape(-1, 1)
        shape = np.array([longest], dtype=np.int64)
    else:
        rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        cols = np.concatenate([np.arange(c, dtype=np.int64) for c in counts]) if counts else \
            np.zeros(0, np.int64)
        idx = np.stack([rows, cols], axis=1) if total else np.zeros((0, 2), np.int64)
        shape = np.array([len(counts), longest], dtype=np.int64)
    pos = 0
    for v in per_example:
        values[pos:pos + len(v)] = v
        pos += len(v)
    return torch.from_numpy(idx), _out(values, dt), torch.from_numpy(shape)


host_kernel(parsing_ops.ParseExampleV2)(_Parser)


def _sparse_to_dense(node):
    validate, device = node.attrs["validate_indices"], getattr(node, "device", None)

    def to_dense(indices, shape, values, default):
        idx = _host(indices).astype(np.int64).reshape(-1, _host(shape).size or 1)
        dims = [int(s) for s in _host(shape).reshape(-1)]
        vals, dflt = _host(values), _host(default)
        if validate and idx.size and ((idx < 0).any() or (idx >= np.array(dims)).any()):
            bad = int(np.nonzero(((idx < 0) | (idx >= np.array(dims))).any(axis=1))[0][0])
            raise InvalidArgumentError(None, None, f"indices[{bad}] = "
                                       f"{_shape_str(idx[bad].tolist())} is out of bounds: "
                                       f"need 0 <= index < {_shape_str(dims)}")
        out = np.full(dims, dflt.reshape(()).item() if dflt.size else 0, dtype=vals.dtype)
        if idx.size:
            out[tuple(idx.T)] = vals.reshape(-1) if vals.size > 1 or vals.ndim else vals
        return out if vals.dtype == object else torch.from_numpy(out).to(device or "cpu")
    return to_dense


host_kernel(sparse_tensor.SparseToDense)(_sparse_to_dense)
kernel(sparse_tensor.SparseToDense)(_sparse_to_dense)

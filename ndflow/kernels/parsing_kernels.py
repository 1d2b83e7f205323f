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
from ndflow.kernels.parsing_uniform import MIN_BATCH, parse_uniform
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.sparse_common import invalid_index
from ndflow.ops import parsing_ops, sparse_tensor

# dtype -> (Feature oneof field, TensorFlow's type name in messages)
KIND = {dtypes.float32: ("float_list", "float"), dtypes.int64: ("int64_list", "int64"),
         dtypes.string: ("bytes_list", "string")}
TYPE_OF_KIND = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def shape_str(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _np_dtype(dt):
    return object if dt is dtypes.string else dt.np_dtype


def _host(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x, dtype=object) if not isinstance(x, np.ndarray) else x


def feature_values(feature, kind: str):
    """The feature's values (a repeated field), or None when its type is not `kind`."""
    values = getattr(feature, kind).value
    if values:
        return values  # a oneof: values in `kind` mean the feature is of that kind
    which = feature.WhichOneof("kind")
    # a Feature with no list set reads as an empty list of any type
    return values if which is None or which == kind else None


def to_array(values, dt, n: int) -> np.ndarray:
    if dt is dtypes.string:
        out = np.empty(n, dtype=object)
        out[:] = list(values)
        return out
    return np.array(values, dtype=dt.np_dtype)


class _Dense:
    """One dense feature's parse plan: key, dtype, shape, default."""

    def __init__(self, key, dt, shape, default):
        self.key, self.dt = key, dt
        self.kind, self.type_name = KIND[dt]
        self.dims = shape.as_list()
        self.seq = bool(self.dims) and self.dims[0] is None
        self.row = self.dims[1:] if self.seq else self.dims
        self.stride = int(np.prod(self.row)) if self.row else 1
        self.count = None if self.seq else int(np.prod(self.dims)) if self.dims else 1
        self.default = _host(default)
        self.default_list = self.default.reshape(-1).tolist()
        self.fast = not self.seq and self.count > 0


class ExampleParser:
    """The kernel: examples decoded one by one; fixed-shape features gathered into one flat
    list per feature (one array built per batch, not one per example)."""

    def __init__(self, node=None, sparse_types=(), dense_types=(), dense_shapes=()):
        a = node.attrs if node is not None else {
            "sparse_types": sparse_types, "Tdense": dense_types, "dense_shapes": dense_shapes}
        self.sparse_types = list(a["sparse_types"])
        self.dense_types = list(a["Tdense"])
        self.dense_shapes = list(a["dense_shapes"])
        self.ragged_types = list(a.get("ragged_value_types", []))
        self.ragged_types_splits = list(a.get("ragged_split_types", []))
        self._ragged_parser = None
        self._plan_key = None

    def _plan(self, sparse_keys, dense_keys, defaults):
        # keys and defaults are usually the same constant objects call after call: plan once
        inputs = (sparse_keys, dense_keys, *defaults)
        if self._plan_key is not None and len(inputs) == len(self._inputs) and all(
                a is b for a, b in zip(inputs, self._inputs)):
            return self._dense, self._sparse
        key = (tuple(np.asarray(sparse_keys, object).reshape(-1)),
               tuple(np.asarray(dense_keys, object).reshape(-1)), tuple(map(id, defaults)))
        if key != self._plan_key:
            self._dense = [_Dense(k.decode(), t, s, d) for k, t, s, d in
                           zip(key[1], self.dense_types, self.dense_shapes, defaults)]
            self._sparse = [(k.decode(),) + KIND[t] for k, t in zip(key[0], self.sparse_types)]
            self._plan_key = key
        self._inputs = inputs  # (held, so that their ids stay unique)
        return self._dense, self._sparse

    def parse(self, serialized, names, sparse_keys, dense_keys, defaults) -> list:
        ser = np.asarray(serialized, dtype=object)
        if ser.ndim > 1:
            raise InvalidArgumentError(None, None, "Expected serialized to be a scalar or "
                                       f"vector, got shape: {shape_str(ser.shape)}")
        single = ser.ndim == 0
        if not single and ser.size >= MIN_BATCH:  # records alike but for their values
            dense, sparse = self._plan(sparse_keys, dense_keys, defaults)
            if not sparse:
                outs = parse_uniform(ser.tolist(), dense)
                if outs is not None:
                    return outs
        maps = []
        for i, record in enumerate(ser.reshape(-1)):
            try:
                maps.append(Example.FromString(record).features.feature)
            except (DecodeError, TypeError):
                raise InvalidArgumentError(None, None, f"{_where(names, i, single)}Could not "
                                           f"parse example input, value: '{record[:64]!r}'"
                                           ) from None
        return self.parse_maps(maps, names, single, sparse_keys, dense_keys, defaults)

    def parse_maps(self, maps, names, single, sparse_keys, dense_keys, defaults):
        """The op's outputs for decoded feature maps (`Features.feature` of each example)."""
        dense, sparse = self._plan(sparse_keys, dense_keys, defaults)
        b = len(maps)
        fixed = [[] for _ in dense]  # flat values of the fixed-shape features
        rows = [[None] * b if d.seq else None for d in dense]  # sequence features' rows
        sparse_vals = [[None] * b for _ in sparse]

        for i, fmap in enumerate(maps):
            for j, d in enumerate(dense):
                f = fmap.get(d.key)
                if d.fast and f is not None:  # the common case: present, right type and size
                    vals = getattr(f, d.kind).value
                    if len(vals) == d.count:
                        if d.count == 1:
                            fixed[j].append(vals[0])
                        else:
                            fixed[j].extend(vals)
                        continue
                if f is None:
                    if d.seq:
                        rows[j][i] = np.empty([0] + d.row, dtype=_np_dtype(d.dt))
                    elif d.default.size == 0:
                        raise InvalidArgumentError(
                            None, None, f"{_where(names, i, single)}Feature: {d.key} (data "
                            f"type: {d.type_name}) is required but could not be found.")
                    else:
                        fixed[j].extend(d.default_list)
                    continue
                vals = feature_values(f, d.kind)
                if vals is None:
                    raise InvalidArgumentError(None, None, f"{_at(names, i, single, d.key)}Data "
                                               "types don't match. Data type: "
                                               f"{TYPE_OF_KIND[f.WhichOneof('kind')]} but "
                                               f"expected type: {d.type_name}")
                n = len(vals)
                if d.seq:
                    if n % d.stride:
                        raise InvalidArgumentError(
                            None, None, f"{_at(names, i, single, d.key)}Number of "
                            f"{d.type_name} values is not a multiple of stride length. Saw {n}"
                            f" values but output shape is: {shape_str(d.dims)}")
                    rows[j][i] = to_array(vals, d.dt, n).reshape([n // d.stride] + d.row)
                elif n != d.count:
                    at = _at(names, i, single, d.key)
                    if single:
                        raise InvalidArgumentError(None, None, f"{at}Can't parse serialized "
                                                   f"Example: Some {d.kind} slice was not "
                                                   "parsed.")
                    raise InvalidArgumentError(
                        None, None, f"{at}Number of {d.type_name} values != expected.  Values"
                        f" size: {n} but output shape: {shape_str(d.dims)}")
                elif n == 1:
                    fixed[j].append(vals[0])
                else:
                    fixed[j].extend(vals)
            for j, (key, kind, type_name) in enumerate(sparse):
                f = fmap.get(key)
                vals = [] if f is None else feature_values(f, kind)
                if vals is None:
                    raise InvalidArgumentError(None, None, f"{_at(names, i, single, key)}Data "
                                               f"types don't match. Expected type: {type_name},"
                                               f" Actual type: "
                                               f"{TYPE_OF_KIND[f.WhichOneof('kind')]}")
                sparse_vals[j][i] = to_array(vals, self.sparse_types[j], len(vals))

        out_idx, out_val, out_shape = [], [], []
        for j, dt in enumerate(self.sparse_types):
            idx, val, shape = _sparse(sparse_vals[j], dt, single)
            out_idx.append(idx)
            out_val.append(val)
            out_shape.append(shape)
        out_dense = [_stack(rows[j], d, single) if d.seq else _fixed(fixed[j], d, b, single)
                     for j, d in enumerate(dense)]
        return out_idx + out_val + out_shape + out_dense

    def __call__(self, serialized, names, sparse_keys, dense_keys, ragged_keys, *defaults):
        ragged = np.asarray(ragged_keys, object).reshape(-1)
        if ragged.size:
            outs = self._parse_ragged(serialized, names, sparse_keys, dense_keys, ragged,
                                      defaults)
        else:
            outs = self.parse(serialized, names, sparse_keys, dense_keys, defaults)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _parse_ragged(self, serialized, names, sparse_keys, dense_keys, ragged, defaults):
        """RaggedFeature keys: parsed as extra sparse keys, their values then given row
        splits over the examples (the op's ragged_values and ragged_row_splits outputs)."""
        if self._ragged_parser is None:
            self._ragged_parser = ExampleParser(
                None, self.sparse_types + self.ragged_types, self.dense_types,
                self.dense_shapes)
        keys = np.concatenate([np.asarray(sparse_keys, object).reshape(-1), ragged])
        outs = self._ragged_parser.parse(serialized, names, keys, dense_keys, defaults)
        ns, nr = len(self.sparse_types), len(ragged)
        n = ns + nr
        idx, vals, shapes, dense = outs[:n], outs[n:2 * n], outs[2 * n:3 * n], outs[3 * n:]
        single = np.asarray(serialized, dtype=object).ndim == 0
        batch = 1 if single else int(np.asarray(serialized, dtype=object).size)
        values, splits = [], []
        for j, split_type in enumerate(self.ragged_types_splits):
            rows = np.zeros(len(idx[ns + j]), np.int64) if single else \
                idx[ns + j][:, 0].numpy()
            counts = np.bincount(rows, minlength=batch)
            values.append(vals[ns + j])
            splits.append(torch.from_numpy(np.concatenate([[0], np.cumsum(counts)]).astype(
                split_type.np_dtype)))
        return idx[:ns] + vals[:ns] + shapes[:ns] + dense + values + splits


def _where(names, i: int, single: bool) -> str:
    """TensorFlow's message prefix naming the example (nothing for a single one)."""
    if single:
        return ""
    names = np.asarray(names, object).reshape(-1)
    name = names[i].decode("utf-8", "replace") if i < len(names) and names[i] else "<unknown>"
    return f"Name: {name}, "


def _at(names, i: int, single: bool, key: str) -> str:
    if single:
        return f"Key: {key}.  "
    return f"{_where(names, i, False)[:-2]}, Key: {key}, Index: {i}.  "


def _fixed(values: list, d: _Dense, b: int, single: bool):
    shape = d.dims if single else [b] + d.dims
    if d.dt is dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)
    return torch.from_numpy(np.array(values, dtype=d.dt.np_dtype).reshape(shape))


def host_output(arr: np.ndarray, dt):
    if dt is dtypes.string:
        return arr
    arr = np.asarray(arr, dtype=dt.np_dtype)  # (ascontiguousarray would make a scalar 1-D)
    return torch.from_numpy(arr if arr.flags.c_contiguous else arr.copy())


def _stack(rows: list, d: _Dense, single: bool):
    """Sequence rows padded to the longest with the padding value."""
    longest = max((len(r) for r in rows), default=0)
    pad = d.default.reshape(()).item() if d.default.size == 1 else \
        (b"" if d.dt is dtypes.string else 0)
    out = np.full([len(rows), longest] + d.row, pad, dtype=_np_dtype(d.dt))
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return host_output(out[0] if single else out, d.dt)


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
    return torch.from_numpy(idx), host_output(values, dt), torch.from_numpy(shape)


host_kernel(parsing_ops.ParseExampleV2)(ExampleParser)


def _sparse_to_dense(node):
    validate, device = node.attrs["validate_indices"], getattr(node, "device", None)

    def to_dense(indices, shape, values, default):
        idx = _host(indices).astype(np.int64).reshape(-1, _host(shape).size or 1)
        dims = [int(s) for s in _host(shape).reshape(-1)]
        vals, dflt = _host(values), _host(default)
        if validate:   # TF's SparseTensor::IndicesValid: in bounds, sorted, unique
            problem = invalid_index(idx, np.array(dims, dtype=np.int64))
            if problem is not None:
                raise InvalidArgumentError(None, None, problem)
        elif idx.size and ((idx < 0).any() or (idx >= np.array(dims)).any()):
            # TF checks bounds either way (NumPy would wrap -1 silently)
            raise InvalidArgumentError(None, None, "Indices are not valid (out of "
                                       f"bounds).  Shape: {shape_str(dims)}")
        out = np.full(dims, dflt.reshape(()).item() if dflt.size else 0, dtype=vals.dtype)
        if idx.size:
            out[tuple(idx.T)] = vals.reshape(-1) if vals.size > 1 or vals.ndim else vals
        return out if vals.dtype == object else torch.from_numpy(out).to(device or "cpu")
    return to_dense


host_kernel(sparse_tensor.SparseToDense)(_sparse_to_dense)
kernel(sparse_tensor.SparseToDense)(_sparse_to_dense)

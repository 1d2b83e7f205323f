"""Python structures <-> `StructuredValue` protos, as TensorFlow's nested_structure_coder
writes them in a SavedModel's object graph (function input signatures, output signatures,
argument specs): None, bool, int, float, str, tuple, list, dict, named tuples, TensorShape,
DType, TensorSpec, RaggedTensorSpec and SparseTensorSpec."""

from __future__ import annotations

import collections

from tensorboard.compat.proto import struct_pb2

from ndflow.core import dtypes
from ndflow.core.graph_def import dtype_from_enum, shape_from_proto, shape_to_proto
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec


def _is_named_tuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def encode(value) -> struct_pb2.StructuredValue:
    """The StructuredValue of a nested Python structure of supported leaves."""
    p = struct_pb2.StructuredValue()
    if value is None:
        p.none_value.SetInParent()
    elif isinstance(value, bool):
        p.bool_value = value
    elif isinstance(value, int):
        p.int64_value = value
    elif isinstance(value, float):
        p.float64_value = value
    elif isinstance(value, str):
        p.string_value = value
    elif isinstance(value, TensorSpec):
        spec = p.tensor_spec_value
        if value.name:
            spec.name = value.name
        spec.shape.CopyFrom(shape_to_proto(value.shape))
        spec.dtype = value.dtype.enum
    elif isinstance(value, RaggedTensorSpec):  # TF's TypeSpecProto of a RaggedTensorSpec
        ts = p.type_spec_value
        ts.type_spec_class = struct_pb2.TypeSpecProto.RAGGED_TENSOR_SPEC
        ts.type_spec_class_name = "RaggedTensorSpec"
        ts.num_flat_components = value.ragged_rank + 1
        ts.type_state.CopyFrom(encode((value.shape, value.dtype, value.ragged_rank,
                                       value.row_splits_dtype)))
    elif isinstance(value, SparseTensorSpec):  # TF's: (shape, dtype), three components
        ts = p.type_spec_value
        ts.type_spec_class = struct_pb2.TypeSpecProto.SPARSE_TENSOR_SPEC
        ts.type_spec_class_name = "SparseTensorSpec"
        ts.num_flat_components = 3
        ts.type_state.CopyFrom(encode((value.shape, value.dtype)))
    elif isinstance(value, SparseTensor):   # an output's specs: TF writes its type spec
        n = value.dense_shape.shape.as_list()[0] if value.dense_shape.shape.rank else None
        p.CopyFrom(encode(SparseTensorSpec(None if n is None else [None] * n,
                                           value.values.dtype)))
    elif isinstance(value, TensorShape):
        p.tensor_shape_value.CopyFrom(shape_to_proto(value))
    elif isinstance(value, dtypes.DType):
        p.tensor_dtype_value = value.enum
    elif _is_named_tuple(value):
        p.named_tuple_value.name = type(value).__name__
        for k in value._fields:
            pair = p.named_tuple_value.values.add()
            pair.key = k
            pair.value.CopyFrom(encode(getattr(value, k)))
    elif isinstance(value, tuple):
        p.tuple_value.SetInParent()
        p.tuple_value.values.extend(encode(v) for v in value)
    elif isinstance(value, list):
        p.list_value.SetInParent()
        p.list_value.values.extend(encode(v) for v in value)
    elif isinstance(value, dict):
        p.dict_value.SetInParent()
        for k in value:
            if not isinstance(k, str):
                raise ValueError(f"Cannot encode a dict key {k!r} in a SavedModel signature "
                                 "(keys must be strings)")
            p.dict_value.fields[k].CopyFrom(encode(value[k]))
    else:
        raise ValueError(f"Cannot encode {value!r} (of type {type(value).__name__}) in a "
                         "SavedModel structure")
    return p


def decode(p: struct_pb2.StructuredValue):
    """The Python structure of a StructuredValue (named tuples come back as namedtuples)."""
    kind = p.WhichOneof("kind")
    if kind is None or kind == "none_value":
        return None
    if kind in ("bool_value", "int64_value", "float64_value", "string_value"):
        return getattr(p, kind)
    if kind == "tensor_spec_value":
        s = p.tensor_spec_value
        return TensorSpec(shape_from_proto(s.shape), dtype_from_enum(s.dtype), s.name or None)
    if kind == "bounded_tensor_spec_value":
        s = p.bounded_tensor_spec_value
        return TensorSpec(shape_from_proto(s.shape), dtype_from_enum(s.dtype), s.name or None)
    if kind == "tensor_shape_value":
        return shape_from_proto(p.tensor_shape_value)
    if kind == "tensor_dtype_value":
        return dtype_from_enum(p.tensor_dtype_value)
    if kind == "tuple_value":
        return tuple(decode(v) for v in p.tuple_value.values)
    if kind == "list_value":
        return [decode(v) for v in p.list_value.values]
    if kind == "dict_value":
        return {k: decode(v) for k, v in sorted(p.dict_value.fields.items())}
    if kind == "named_tuple_value":
        nt = p.named_tuple_value
        cls = collections.namedtuple(nt.name or "NamedTuple", [pair.key for pair in nt.values])
        return cls(*(decode(pair.value) for pair in nt.values))
    if kind == "type_spec_value":
        return _decode_type_spec(p.type_spec_value)
    raise ValueError(f"Cannot decode a StructuredValue holding {kind} (not supported by "
                     "ndflow)")


def _decode_type_spec(ts):
    if ts.type_spec_class_name == "TensorSpec":
        shape, dtype, name = decode(ts.type_state)
        return TensorSpec(shape, dtype, name)
    if ts.type_spec_class == struct_pb2.TypeSpecProto.RAGGED_TENSOR_SPEC or \
            ts.type_spec_class_name == "RaggedTensorSpec":
        state = decode(ts.type_state)
        return RaggedTensorSpec(*state[:4])
    if ts.type_spec_class == struct_pb2.TypeSpecProto.SPARSE_TENSOR_SPEC or \
            ts.type_spec_class_name == "SparseTensorSpec":
        return SparseTensorSpec(*decode(ts.type_state))
    raise ValueError(f"Cannot decode a {ts.type_spec_class_name or ts.type_spec_class} "
                     "type spec (ndflow supports TensorSpec, RaggedTensorSpec and "
                     "SparseTensorSpec signatures)")

"""Graphs as TensorFlow `GraphDef` protos (the real ones, shipped in the tensorboard package).

`graph_to_graph_def(graph)` writes each operation as a `NodeDef`: name, op type, inputs as
`"name"`, `"name:1"`, `"^control"`, device, and attrs converted from their Python values
(DType -> type enum, bool -> b, int -> i, float -> f, str -> s, TensorShape -> shape with
unknown dims -1 / unknown_rank, ndarray -> TensorProto, lists -> list). The conversions are
also used in reverse by the importer (`ndflow.ops.importer.import_graph_def`).

bfloat16 constants are held as float32 arrays inside ndflow; in a TensorProto they are
written as bfloat16 bits, as TensorFlow writes them.
"""

from __future__ import annotations

import numpy as np
import torch
from tensorboard.compat.proto import (
    attr_value_pb2,
    function_pb2,
    graph_pb2,
    node_def_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    types_pb2,
)

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape, as_shape

# The GraphDef version TensorFlow 2.21 writes; ndflow's ops follow that release's semantics.
GRAPH_DEF_VERSION = 2474

_VAL_FIELDS = {
    dtypes.float32: "float_val", dtypes.float64: "double_val", dtypes.int32: "int_val",
    dtypes.int16: "int_val", dtypes.int8: "int_val", dtypes.uint8: "int_val",
    dtypes.uint16: "int_val", dtypes.uint32: "uint32_val", dtypes.uint64: "uint64_val",
    dtypes.int64: "int64_val", dtypes.bool: "bool_val", dtypes.float16: "half_val",
    dtypes.bfloat16: "half_val", dtypes.complex64: "scomplex_val",
    dtypes.complex128: "dcomplex_val",
    # TF's fields for the quantized and narrow types (float8_val: one byte per value)
    **dict.fromkeys(dtypes.QUANTIZED + dtypes.NARROW_INT, "int_val"),
    **dict.fromkeys(dtypes.FLOAT8 + (dtypes.float4_e2m1fn,), "float8_val"),
}
_LIST_FIELDS = ("s", "i", "f", "b", "type", "shape", "tensor", "func")


def dtype_name(dtype) -> str:
    """TensorFlow's short name of a dtype in messages: float, double, int32, half, bfloat16."""
    return types_pb2.DataType.Name(dtypes.as_dtype(dtype).enum)[3:].lower()


def dtype_from_enum(enum: int):
    try:
        return dtypes.as_dtype(int(enum))
    except TypeError:
        name = types_pb2.DataType.Name(enum) if enum in types_pb2.DataType.values() else enum
        raise ValueError(f"Unsupported DataType {name} (ndflow has no such dtype)") from None


# -- shapes --------------------------------------------------------------------------------------

def shape_to_proto(shape) -> tensor_shape_pb2.TensorShapeProto:
    shape = as_shape(shape)
    p = tensor_shape_pb2.TensorShapeProto()
    if shape.rank is None:
        p.unknown_rank = True
    else:
        for d in shape.as_tuple():
            p.dim.add(size=-1 if d is None else d)
    return p


def shape_from_proto(p: tensor_shape_pb2.TensorShapeProto) -> TensorShape:
    if p.unknown_rank:
        return TensorShape(None)
    dims = []
    for d in p.dim:
        if d.size < -1:
            raise ValueError(f"Shape {[x.size for x in p.dim]} has a negative dimension")
        dims.append(None if d.size == -1 else d.size)
    return TensorShape(dims)


# -- tensors ---------------------------------------------------------------------------------------

def _bfloat16_bits(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.name == "bfloat16":  # an ml_dtypes array
        return arr.view(np.uint16)
    t = torch.from_numpy(np.ascontiguousarray(arr, dtype=np.float32)).to(torch.bfloat16)
    return t.view(torch.int16).numpy().view(np.uint16)


def _as_bytes(x) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, np.str_ | np.bytes_):
        return _as_bytes(x.item())
    raise TypeError(f"Expected a string or bytes element in a string tensor, got {x!r}")


def ndarray_to_tensor_proto(value, dtype=None) -> tensor_pb2.TensorProto:
    """A `TensorProto` holding `value`; `dtype` overrides the array's own dtype."""
    arr = np.asarray(value)
    if dtype is not None:
        dt = dtypes.as_dtype(dtype)
    elif arr.dtype.name == "bfloat16":
        dt = dtypes.bfloat16
    else:
        dt = dtypes.as_dtype(arr.dtype)
    p = tensor_pb2.TensorProto(dtype=dt.enum)
    p.tensor_shape.CopyFrom(shape_to_proto(TensorShape(arr.shape)))
    if dt is dtypes.string:
        p.string_val.extend(_as_bytes(x) for x in arr.reshape(-1))
    elif dt is dtypes.bfloat16:
        p.tensor_content = _bfloat16_bits(arr).astype("<u2").tobytes()
    elif dt.np_dtype is None:
        raise TypeError(f"Cannot serialize a tensor of dtype {dt.name}")
    elif dt in dtypes.NARROW_INT:   # TF writes int4 & co as int_val, one value each
        p.int_val.extend(np.asarray(arr, dtype=dt.np_dtype).astype(np.int32).reshape(-1)
                         .tolist())
    else:
        p.tensor_content = np.ascontiguousarray(arr, dtype=dt.np_dtype.newbyteorder("<")
                                                ).tobytes()
    return p


def _from_bfloat16_bits(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tensor_proto_to_ndarray(p: tensor_pb2.TensorProto) -> tuple[np.ndarray, object]:
    """(array, DType) of a `TensorProto`; bfloat16 comes back as float32, as ndflow holds it."""
    dt = dtype_from_enum(p.dtype)
    shape = shape_from_proto(p.tensor_shape)
    if not shape.is_fully_defined():
        raise ValueError(f"A constant tensor must have a fully defined shape, got {shape}")
    dims = shape.as_list()
    n = int(np.prod(dims, dtype=np.int64))
    if dt is dtypes.string:
        vals = list(p.string_val)
        flat = np.empty(n, dtype=object)
        flat[:] = _expand(vals, n, b"", "string_val")
        return flat.reshape(dims), dt
    if dt.np_dtype is None and dt is not dtypes.bfloat16:
        raise ValueError(f"Cannot read a constant tensor of dtype {dt.name}")
    if p.tensor_content:
        if dt is dtypes.bfloat16:
            flat = _from_bfloat16_bits(np.frombuffer(p.tensor_content, dtype="<u2"))
        else:
            flat = np.frombuffer(p.tensor_content, dtype=dt.np_dtype.newbyteorder("<"))
        if flat.size != n:
            raise ValueError(f"Tensor content holds {flat.size} values, but its shape "
                             f"{dims} needs {n}")
        out = flat.astype(flat.dtype.newbyteorder("="))
        return out.reshape(dims), dt
    vals = list(getattr(p, _VAL_FIELDS[dt]))
    if dt is dtypes.float16:
        flat = np.array(_expand(vals, n, 0, "half_val"), dtype=np.uint16).view(np.float16)
    elif dt is dtypes.bfloat16:
        flat = _from_bfloat16_bits(np.array(_expand(vals, n, 0, "half_val"), dtype=np.uint16))
    elif _VAL_FIELDS[dt] == "float8_val":   # bytes, one per value
        flat = np.frombuffer(p.float8_val, dtype=np.uint8).view(dt.np_dtype)
        flat = np.array(_expand(list(flat), n, 0, "float8_val"), dtype=dt.np_dtype)
    elif dt.is_complex:  # (real, imag) pairs
        pairs = [complex(re, im) for re, im in zip(vals[::2], vals[1::2])]
        flat = np.array(_expand(pairs, n, 0j, _VAL_FIELDS[dt]), dtype=dt.np_dtype)
    else:
        flat = np.array(_expand(vals, n, 0, _VAL_FIELDS[dt]), dtype=dt.np_dtype)
    return flat.reshape(dims), dt


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_string_content(values: list) -> bytes:
    """The `tensor_content` TensorFlow writes for a string tensor (AsProtoTensorContent):
    every length as a varint, then every string's bytes."""
    return b"".join(_varint(len(v)) for v in values) + b"".join(values)


def decode_string_content(content: bytes, n: int) -> list:
    """The `n` strings of a string tensor's `tensor_content`; ValueError when truncated or
    malformed."""
    lengths, pos = [], 0
    for _ in range(n):
        value, shift = 0, 0
        while True:
            if pos >= len(content):
                raise ValueError("truncated string tensor content")
            b = content[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        lengths.append(value)
    out = []
    for length in lengths:
        out.append(bytes(content[pos:pos + length]))
        pos += length
    if pos != len(content):
        raise ValueError("malformed string tensor content")
    return out


def _expand(vals: list, n: int, zero, field: str) -> list:
    """TensorFlow's rule: missing trailing values repeat the last one (zero if none)."""
    if len(vals) > n:
        raise ValueError(f"Tensor has {len(vals)} values in {field}, but its shape needs {n}")
    if not vals:
        return [zero] * n
    return vals + [vals[-1]] * (n - len(vals))


# -- attrs -----------------------------------------------------------------------------------------

def _is_function(v) -> bool:
    """A function attr value: a traced function graph (named, with inputs and outputs)."""
    return hasattr(v, "get_operations") and hasattr(v, "outputs") and hasattr(v, "name")


def _scalar(v, kind: str | None, dtype):
    """(AttrValue field, proto-ready value) for one attr value."""
    if kind == "func" or _is_function(v):
        return "func", attr_value_pb2.NameAttrList(name=v.name)
    if kind == "type" or (kind is None and isinstance(v, dtypes.DType)):
        return "type", dtypes.as_dtype(v).enum
    if kind == "shape" or (kind is None and isinstance(v, TensorShape)):
        return "shape", shape_to_proto(v)
    if kind == "tensor" or (kind is None and isinstance(v, np.ndarray)):
        return "tensor", ndarray_to_tensor_proto(v, dtype)
    if kind == "bool" or (kind is None and isinstance(v, bool | np.bool_)):
        if not isinstance(v, bool | np.bool_):
            raise TypeError(f"Expected bool, got {v!r}")
        return "b", bool(v)
    if kind == "int" or (kind is None and isinstance(v, int | np.integer)):
        if not isinstance(v, int | np.integer) or isinstance(v, bool):
            raise TypeError(f"Expected int, got {v!r}")
        return "i", int(v)
    if kind == "float" or (kind is None and isinstance(v, float | np.floating)):
        if not isinstance(v, int | float | np.integer | np.floating) or isinstance(v, bool):
            raise TypeError(f"Expected float, got {v!r}")
        return "f", float(v)
    if kind == "string" or (kind is None and isinstance(v, str | bytes)):
        return "s", _as_bytes(v)
    raise TypeError(f"unsupported value {v!r} of Python type {type(v).__name__}")


def _set(a, field: str, value) -> None:
    if field in ("shape", "tensor", "func"):
        getattr(a, field).CopyFrom(value)
    else:
        setattr(a, field, value)


def attr_to_proto(value, kind: str | None = None, dtype=None) -> attr_value_pb2.AttrValue:
    """An `AttrValue` for a Python attr value; `kind` is the OpDef's attr kind when known."""
    a = attr_value_pb2.AttrValue()
    is_list = kind.startswith("list(") if kind else isinstance(value, list | tuple)
    if not is_list:
        field, v = _scalar(value, kind, dtype)
        _set(a, field, v)
        return a
    if not isinstance(value, list | tuple):
        raise TypeError(f"Expected a list, got {value!r}")
    elem_kind = kind[5:-1] if kind else None
    items = [_scalar(v, elem_kind, dtype) for v in value]
    fields = {f for f, _ in items}
    if fields == {"i", "f"}:  # a float list written with some ints
        items = [("f", float(v)) for _, v in items]
        fields = {"f"}
    if len(fields) > 1:
        raise TypeError(f"list attr mixes value kinds {sorted(fields)}")
    a.list.SetInParent()
    for field, v in items:
        target = getattr(a.list, field)
        if field in ("shape", "tensor", "func"):
            target.add().CopyFrom(v)
        else:
            target.append(v)
    return a


def _decode(s: bytes):
    try:
        return s.decode("utf-8")
    except UnicodeDecodeError:
        return s


def _scalar_from_proto(field: str, v):
    if field == "type":
        return dtype_from_enum(v)
    if field == "shape":
        return shape_from_proto(v)
    if field == "tensor":
        return tensor_proto_to_ndarray(v)[0]
    if field == "s":
        return _decode(v)
    if field == "func":
        raise ValueError(f"function attrs are not supported (function '{v.name}')")
    return v  # i, f, b


def attr_from_proto(a: attr_value_pb2.AttrValue):
    """The Python value of an `AttrValue` (the reverse of `attr_to_proto`)."""
    which = a.WhichOneof("value")
    if which is None:
        raise ValueError("AttrValue has no value set")
    if which == "placeholder":
        raise ValueError(f"attr placeholder '{a.placeholder}' outside a function")
    if which != "list":
        return _scalar_from_proto(which, getattr(a, which))
    for field in _LIST_FIELDS:
        vals = getattr(a.list, field)
        if len(vals):
            return [_scalar_from_proto(field, v) for v in vals]
    return []


# -- graphs ----------------------------------------------------------------------------------------

def input_name(t) -> str:
    """How a NodeDef names a tensor input: `op` for output 0, else `op:i`."""
    return t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"


_KINDS = frozenset({"type", "shape", "tensor", "bool", "int", "float", "string"})


def _kind(attr_def) -> str | None:
    """The OpDef's attr kind when it is one we convert by, else None (convert by value)."""
    kind = getattr(attr_def, "kind", None)
    if not isinstance(kind, str):
        return None
    kind = kind.strip()
    if kind in _KINDS or (kind.startswith("list(") and kind[5:-1] in _KINDS):
        return kind
    return None


def _node_def(op, add_shapes: bool, name_of=input_name):
    nd = node_def_pb2.NodeDef(name=op.name, op=op.type)
    nd.input.extend(name_of(t) for t in op.inputs)
    nd.input.extend("^" + c.name for c in op.control_inputs)
    if op.device:
        nd.device = op.device
    attr_defs = getattr(op.op_def, "attrs", {}) or {}
    hint = op.attrs.get("dtype")
    hint = hint if isinstance(hint, dtypes.DType) else None
    for key, value in op.attrs.items():
        kind = _kind(attr_defs.get(key))
        try:
            nd.attr[key].CopyFrom(attr_to_proto(value, kind, hint if kind == "tensor" or
                                                isinstance(value, np.ndarray) else None))
        except (TypeError, ValueError) as e:
            raise TypeError(f"Cannot convert attr '{key}' of node '{op.name}' ({op.type}) to "
                            f"an AttrValue: {e}") from None
    if add_shapes and op.outputs:
        nd.attr["_output_shapes"].list.shape.extend(shape_to_proto(t.shape)
                                                    for t in op.outputs)
    return nd


def node_def(op) -> node_def_pb2.NodeDef:
    """One op's `NodeDef` (`tf.Operation.node_def`)."""
    return _node_def(op, add_shapes=False)


def graph_to_graph_def(graph, add_shapes: bool = False) -> graph_pb2.GraphDef:
    """The `GraphDef` of `graph`: its operations in creation order."""
    gd = graph_pb2.GraphDef()
    gd.node.extend(_node_def(op, add_shapes) for op in graph.get_operations())
    gd.versions.producer = GRAPH_DEF_VERSION
    functions: dict = {}
    _collect_functions(graph, functions)
    gd.library.function.extend(function_def(fg) for fg in functions.values())
    return gd


# -- functions (If/While branches) as FunctionDefs -----------------------------------------------

def _collect_functions(graph, found: dict) -> None:
    for op in graph.get_operations():
        for v in op.attrs.values():
            for f in (v if isinstance(v, list | tuple) else [v]):
                if _is_function(f) and f.name not in found:
                    found[f.name] = f
                    _collect_functions(f, found)


def arg_tensor_count(arg, attrs) -> int:
    """How many tensors ArgDef `arg` stands for, given its op's `attrs` (a `number_attr` or
    `type_list_attr` arg holds several)."""
    if arg.number_attr:
        return int(attrs[arg.number_attr])
    if arg.type_list_attr:
        return len(attrs[arg.type_list_attr])
    return 1


def _output_arg_names(op) -> list:
    """Per output of `op`: (output arg name, index within the arg), for FunctionDef inputs."""
    args = getattr(op.op_def, "outputs", None) or []
    names = []
    for arg in args:
        n = arg_tensor_count(arg, op.attrs)
        names.extend((arg.name, i) for i in range(n))
    return names if len(names) == len(op.outputs) else [("output", i)
                                                        for i in range(len(op.outputs))]


def function_def(fg) -> function_pb2.FunctionDef:
    """A traced function graph as TF's FunctionDef: its input placeholders become the
    signature's input args (shapes in `arg_attr` `_output_shapes`, as TF writes them), its
    outputs the output args (`output_<i>`), and node inputs use the function-body form
    `op:out_arg:index`."""
    fd = function_pb2.FunctionDef()
    fd.signature.name = fg.name
    ref: dict = {}
    for i, ph in enumerate(fg.inputs):
        arg = fd.signature.input_arg.add()
        arg.name = ph.op.name
        arg.type = ph.dtype.enum
        fd.arg_attr[i].attr["_output_shapes"].list.shape.add().CopyFrom(
            shape_to_proto(ph.shape))
        ref[ph] = ph.op.name
    for op in fg.get_operations():
        if op.outputs and op.outputs[0] in ref:
            continue
        for t, (arg_name, i) in zip(op.outputs, _output_arg_names(op)):
            ref[t] = f"{op.name}:{arg_name}:{i}"
        fd.node_def.append(_node_def(op, False, ref.__getitem__))
    for i, t in enumerate(fg.outputs):
        arg = fd.signature.output_arg.add()
        arg.name = f"output_{i}"
        arg.type = t.dtype.enum
        fd.ret[arg.name] = ref[t]
    return fd


tf_export(v1=["GraphDef"])(graph_pb2.GraphDef)  # the real protobuf message

"""Applying an OpDef: type-attr inference, input conversion, then eager run or graph node.

`apply_op` is the one entry point every op wrapper (`tf.add`, `tf.nn.conv2d`, ...) uses. It
returns an `Operation` (graph mode) or an `EagerOperation` (eager mode); both expose
`type`, `name`, `inputs`, `outputs`, `attrs`, `get_attr`, so gradient functions and tapes
treat them alike.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import context, devices, dtypes, narrow_dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import SymbolicTensor
from ndflow.core.graph_def import dtype_name
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.strings import as_bytes_array, is_string_value
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops import apply_docs, eager_keys
from ndflow.ops.constant_op import Const
from ndflow.ops.forward_copies import copy_of
from ndflow.ops.op_def import (
    InferenceContext,
    OpDef,
    ShapeTensorError,
    disallowed_value_message,
    list_too_short_message,
)

# (priority, order, type, fn(value, dtype, name, as_ref) -> Tensor | NotImplemented): how
# non-tensors (Variables, lists of tensors ...) convert.
_CONVERSIONS: list = []


class EagerOperation:
    """The record of one eagerly executed op (what tapes store and gradients read)."""

    __slots__ = ("op_def", "type", "name", "inputs", "outputs", "attrs", "device",
                 "skip_input_indices", "forward_copy")
    _eager = True

    def __init__(self, op_def, name, inputs, outputs, attrs, device):
        self.op_def = op_def
        self.type = op_def.name
        self.name = name or op_def.name
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.device = device
        self.skip_input_indices = None
        self.forward_copy = None   # when it runs an op of a function (ops/forward_copies.py)

    def get_attr(self, name):
        return self.attrs[name]

    @property
    def is_stateful(self):
        return self.op_def.is_stateful


@tf_export("register_tensor_conversion_function")
def register_tensor_conversion_function(base_type, conversion_func, priority: int = 100):
    """`tf.register_tensor_conversion_function`: `conversion_func(value, dtype, name, as_ref)`
    converts instances of `base_type`; lower priorities are tried first, and a function may
    return NotImplemented to pass a value on."""
    _CONVERSIONS.append((priority, len(_CONVERSIONS), base_type, conversion_func))
    _CONVERSIONS.sort(key=lambda c: c[:2])


_MIXED = "Can't convert Python sequence with mixed types to Tensor."


def _as_array(value, dtype=None) -> np.ndarray:
    """np.asarray with TF's error for a ragged nest of lists."""
    try:
        return np.asarray(value, dtype=dtype)
    except ValueError as e:
        if "inhomogeneous" in str(e) or "with a sequence" in str(e):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") \
                from None
        raise


def infer_numpy(value, dtype):
    """Python/NumPy value -> ndarray with TF's dtype rules (float->float32, int->int32)."""
    if dtype is dtypes.string or (dtype is None and is_string_value(value)):
        try:
            return as_bytes_array(value), dtypes.string
        except TypeError:
            if dtype is None and isinstance(value, (list, tuple)):   # strings, then others
                raise ValueError(_MIXED) from None
            raise
    if dtype is not None and narrow_dtypes.is_extra(dtype):   # qint8, float8, int4, ...
        return narrow_dtypes.as_numpy(_as_array(value), dtype, value), dtype
    if dtype is not None and dtype.np_dtype is not None:
        arr = _as_array(value)
        if arr.dtype.kind == "f" and arr.size and dtype.is_integer and \
                not isinstance(value, np.generic):
            # NumPy makes ints past int64 (uint64's top half) floats beside smaller ones
            exact = _as_array(value, object).reshape(-1)
            if all(type(v) is int for v in exact):
                if min(exact) < dtype.min or max(exact) > dtype.max:
                    raise ValueError(f"Can't convert Python int to {dtype.name} tensor "
                                     "(out of range)")
                return exact.astype(dtype.np_dtype).reshape(arr.shape), dtype
        if arr.dtype.kind == "O" and dtype is not dtypes.string:
            raise _unsupported(value)  # np would turn None into NaN
        if arr.dtype.kind in "US" and dtype is not dtypes.string:  # NumPy would parse "3"
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        # TF: Python floats never become integers, nor numbers booleans; NumPy values cast.
        if arr.size and not isinstance(value, (np.ndarray, np.generic)) and (
                (not dtype.is_complex and arr.dtype.kind == "c")
                or (dtype.is_integer and arr.dtype.kind == "f")
                or (dtype.is_bool and arr.dtype.kind in "iuf")):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        if dtype.is_integer and arr.dtype.kind in "iu" and arr.size and (
                arr.min() < dtype.min or arr.max() > dtype.max):
            raise ValueError(f"Can't convert Python int to {dtype.name} tensor (out of range)")
        return arr.astype(dtype.np_dtype, copy=False), dtype
    if dtype is dtypes.bfloat16:
        return _as_array(value, np.float32), dtype
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = _as_array(value)
        return arr, dtypes.as_dtype(arr.dtype)
    arr = _as_array(value)
    if arr.dtype == np.float64:
        if ((np.abs(arr) > _FLOAT32_MAX) & np.isfinite(arr)).any():   # TF's inferred float32
            raise ValueError("Can't convert Python sequence with a value out of range for a "
                             "double-precision float.")
        return arr.astype(np.float32), dtypes.float32
    if arr.dtype.kind in "iu":
        if arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31):
            return arr.astype(np.int32), dtypes.int32
        return arr.astype(np.int64), dtypes.int64
    if arr.dtype.kind == "O":
        raise _unsupported(value)
    if arr.dtype.kind in "US":   # NumPy made numbers and strings all strings
        raise ValueError(_MIXED)
    if arr.dtype.kind == "c" and arr.ndim and not isinstance(_first_leaf(value), complex):
        raise _unsupported(value)  # TF: a complex after real numbers mixes types
    return arr, dtypes.as_dtype(arr.dtype)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _first_leaf(value):
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value


def _unsupported(value) -> ValueError:
    """TF 2.21's error (a ValueError) for None, objects and mixed sequences; None in a graph
    is make_tensor_proto's "None values not supported."."""
    if value is None and not context.executing_eagerly():
        return ValueError("None values not supported.")
    if isinstance(value, (list, tuple)):
        return ValueError("Can't convert Python sequence with mixed types to Tensor.")
    return ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type "
                      f"({type(value)}) to a Tensor.")


def _eager_device() -> torch.device:
    return devices.eager_placement(context.eager_device(), context.soft_device_placement())


def numpy_to_torch(arr: np.ndarray, dtype, device=None) -> torch.Tensor:
    # (np.ascontiguousarray would turn a 0-d array into shape [1])
    if dtype is dtypes.string:  # strings stay NumPy object arrays of bytes on the host
        return as_bytes_array(arr)
    if arr.dtype.kind in "USO":
        raise TypeError(f"Cannot convert {arr.tolist()!r} to EagerTensor of dtype "
                        f"{dtype.name}")
    if narrow_dtypes.is_extra(dtype):
        t = narrow_dtypes.numpy_to_storage(arr, dtype)
    elif arr.dtype == dtypes.BFLOAT16_NUMPY:   # ml_dtypes' bfloat16: ATen's, bit for bit
        t = torch.from_numpy(np.ascontiguousarray(arr).reshape(arr.shape).view(np.int16))
        t = t.view(torch.bfloat16)
    else:
        if arr.dtype.kind in "iu" and arr.dtype.isnative:   # np.ulonglong -> np.uint64 ...:
            arr = arr.view(f"{arr.dtype.kind}{arr.dtype.itemsize}")  # the types ATen takes
        t = torch.from_numpy(np.ascontiguousarray(arr).reshape(arr.shape))
    if dtype.torch_dtype is not None and t.dtype != dtype.torch_dtype:
        t = t.to(dtype.torch_dtype)
    if device is not None and device.type != "cpu":
        t = devices.copy_to(t, device)
    return t


# Eager Python scalars -> EagerTensor (values are immutable, so equal scalars share one).
_SCALARS: dict = {}
_MAX_SCALARS = 4096


@tf_export("convert_to_tensor", v1=[])
def convert_to_tensor(value, dtype=None, name=None, dtype_hint=None) -> Tensor:
    """`tf.convert_to_tensor`: tensors pass through (dtype checked), values become constants."""
    vt = type(value)
    if (vt is float or vt is int or vt is bool) and context.executing_eagerly():
        if vt is not float or (value == value and value != 0.0):  # NaN, -0.0: not cached
            key = (vt, value, dtype, dtype_hint, context.eager_device())
            try:
                t = _SCALARS.get(key)
            except TypeError:  # an unhashable dtype spec
                t, key = None, None
            if t is None:
                t = _convert_to_tensor(value, dtype, name, dtype_hint)
                if key is not None:
                    if len(_SCALARS) > _MAX_SCALARS:
                        _SCALARS.clear()
                    _SCALARS[key] = t
            return t
    return _convert_to_tensor(value, dtype, name, dtype_hint)


@tf_export(v1=["convert_to_tensor"])
def convert_to_tensor_v1(value, dtype=None, name=None, preferred_dtype=None,
                         dtype_hint=None) -> Tensor:
    """`tf.compat.v1.convert_to_tensor` (`preferred_dtype` is TF1's name for `dtype_hint`)."""
    if preferred_dtype is not None and dtype_hint is not None:
        raise ValueError("Cannot specify both 'preferred_dtype' and 'dtype_hint'.")
    return convert_to_tensor(value, dtype, name, dtype_hint or preferred_dtype)


def _convert_to_tensor(value, dtype=None, name=None, dtype_hint=None) -> Tensor:
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with "
                             f"dtype {value.dtype.name}: {value!r}")
        return value
    for _, _, base, fn in _CONVERSIONS:
        if isinstance(value, base):
            converted = fn(value, dtype=dtype, name=name, as_ref=False)
            if converted is not NotImplemented:
                return converted
    if dtype is None and dtype_hint is not None:
        try:
            return convert_to_tensor(value, dtypes.as_dtype(dtype_hint), name)
        except (TypeError, ValueError):
            pass
    arr, dt = infer_numpy(value, dtype)
    if context.executing_eagerly():
        return EagerTensor(numpy_to_torch(arr, dt, _eager_device()),
                           dt)
    return _graph_const(context.get_default_graph(), arr, dt, name or "Const")


def _graph_const(graph, arr: np.ndarray, dt, name: str) -> SymbolicTensor:
    op_name = graph.unique_name(name)
    op = graph.create_op(Const, [], {"value": arr, "dtype": dt}, [(dt, TensorShape(arr.shape))],
                         op_name)
    return op.outputs[0]


@tf_export("get_static_value")
def constant_value(tensor, partial: bool = False):
    """`tf.get_static_value`: the value of `tensor` as a NumPy array when it is known without
    running the graph, else None. With `partial`, a 1-D int tensor whose value is known only in
    part (e.g. a shape with an unknown dimension) gives an object array with None entries."""
    if isinstance(tensor, EagerTensor):
        return tensor.numpy()
    if not isinstance(tensor, SymbolicTensor):
        return None
    fn = tensor.op.op_def.constant_value
    value = fn(tensor) if fn is not None else None
    if value is None and partial and tensor.op.op_def.partial_value is not None:
        known = tensor.op.op_def.partial_value(tensor)
        if isinstance(known, list):
            return np.array(known, dtype=object)
    return value


def capture_into(graph, t, name: str | None = None):
    """An eager tensor or a tensor of another graph used while building `graph` (`name`: the
    placeholder's, for an eager tensor)."""
    capture = getattr(graph, "capture", None)
    if capture is not None:
        return capture(t, name) if name is not None and isinstance(t, EagerTensor) \
            else capture(t)
    if isinstance(t, EagerTensor):
        if t.dtype is dtypes.resource:
            raise ValueError("Cannot use an eager resource handle in a graph; create the "
                             "variable inside the graph.")
        return _graph_const(graph, t.numpy(), t.dtype, "Const")
    raise ValueError(f"Tensor {t!r} must be from the same graph as the op being created.")


def _infer_type_attrs(op_def: OpDef, inputs, attrs: dict) -> None:
    for arg, val in zip(op_def.inputs, inputs):
        ta = arg.type_attr
        if ta is None or ta in attrs:
            continue
        vals = val if arg.number_attr else (val,)
        for v in vals:
            dt = getattr(v, "dtype", None)
            if isinstance(v, Tensor) or (isinstance(dt, dtypes.DType) and not
                                         isinstance(v, (np.ndarray, np.generic))):
                attrs[ta] = dt.base_dtype if hasattr(dt, "base_dtype") else dt
                break


def _convert_inputs(op_def: OpDef, inputs, attrs: dict) -> list:
    flat = []
    first_arg_for_attr = {}
    for arg, val in zip(op_def.inputs, inputs):
        if arg.type_list_attr:
            ts = [convert_to_tensor(v) for v in val]
            attrs.setdefault(arg.type_list_attr, [t.dtype for t in ts])
            flat.extend(ts)
            continue
        vals = list(val) if arg.number_attr else [val]
        if arg.type_attr and not isinstance(attrs.get(arg.type_attr, dtypes.string),
                                            dtypes.DType):   # a name ("float32") given
            attrs[arg.type_attr] = dtypes.as_dtype(attrs[arg.type_attr])
        if arg.number_attr:
            if not isinstance(val, (list, tuple)):
                raise TypeError(f"Expected list for '{arg.name}' argument to '{op_def.name}' "
                                f"Op, not {val!r}.")
            attrs.setdefault(arg.number_attr, len(vals))
        # A constant made from a Python value is named after its argument, as in TF
        # (`x + 1.0` gives the Const `add/y`).
        const_name = None if arg.number_attr else arg.name
        for v in vals:
            expected = arg.dtype or attrs.get(arg.type_attr)
            if expected is None:
                ad = op_def.attrs.get(arg.type_attr)
                hint = ad.default if ad is not None and ad.has_default else None
                t = convert_to_tensor(v, dtype_hint=hint, name=const_name)
            else:
                try:
                    t = convert_to_tensor(v, expected, name=const_name)
                except (TypeError, ValueError):  # TF: convert as is, then report the mismatch
                    t = convert_to_tensor(v, name=const_name)
            if arg.type_attr and arg.type_attr not in attrs:
                attrs[arg.type_attr] = t.dtype
            want = arg.dtype or attrs[arg.type_attr]
            if t.dtype is not want and context.executing_eagerly():
                # TF eager: the kernel's input check, not the graph builder's TypeError
                raise InvalidArgumentError(
                    None, None, f"cannot compute {op_def.name} as input #{len(flat)}"
                    f"(zero-based) was expected to be a {dtype_name(want)} tensor but is a "
                    f"{dtype_name(t.dtype)} tensor [Op:{op_def.name}]")
            if t.dtype is not want:
                if arg.dtype is not None:
                    raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type "
                                    f"{t.dtype.name} that does not match expected type of "
                                    f"{want.name}.")
                first = first_arg_for_attr.get(arg.type_attr, arg.name)
                raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type "
                                f"{t.dtype.name} that does not match type {want.name} of "
                                f"argument '{first}'.")
            if arg.type_attr:
                first_arg_for_attr.setdefault(arg.type_attr, arg.name)
            flat.append(t)
    return flat


_MAX_OUTPUTS = 2**31 - 1  # TF refuses more outputs before building anything


def _check_attrs(op_def: OpDef, attrs: dict, eager_name=False) -> None:
    """Completes `attrs` with defaults and checks them. A type (string) outside an attr's
    allowed list is a TypeError (ValueError) when building a graph, and, when running eagerly
    (`eager_name`: the op's name, None when it has none), the kernel lookup's
    InvalidArgumentError, as in TF."""
    for arg in op_def.outputs:
        if arg.number_attr and isinstance(attrs.get(arg.number_attr), int) and \
                attrs[arg.number_attr] > _MAX_OUTPUTS:
            raise ValueError(f"Number of outputs is too big: {attrs[arg.number_attr]}")
    for name, ad in op_def.attrs.items():
        if name not in attrs:
            if not ad.has_default:
                raise TypeError(f"Missing required attr '{name}' for op '{op_def.name}'.")
            attrs[name] = ad.default
            continue
        v = attrs[name]
        if ad.kind == "type":
            v = attrs[name] = dtypes.as_dtype(v)
            if ad.allowed is not None and v not in ad.allowed:
                if eager_name is not False:
                    raise InvalidArgumentError(None, None, disallowed_value_message(
                        op_def, name, v, ad.allowed, eager_name))
                allowed = ", ".join(d.name for d in ad.allowed)
                raise TypeError(f"Value passed to parameter '{_arg_for_attr(op_def, name)}' has "
                                f"DataType {v.name} not in list of allowed values: {allowed}")
        elif ad.kind == "string" and ad.allowed is not None:
            if isinstance(v, bytes):
                v = attrs[name] = v.decode()
            if v not in ad.allowed:
                if eager_name is not False:
                    raise InvalidArgumentError(None, None, disallowed_value_message(
                        op_def, name, v, ad.allowed, eager_name))
                raise ValueError(f"Attr '{name}' of '{op_def.name}' Op passed string '{v}' not "
                                 f"in: {', '.join(repr(a) for a in ad.allowed)}.")
        elif ad.kind == "int" and ad.minimum is not None and v < ad.minimum:
            raise ValueError(f"Attr '{name}' of '{op_def.name}' Op passed {v} less than "
                             f"minimum {ad.minimum}.")
        elif ad.kind.startswith("list(") and ad.minimum is not None and len(v) < ad.minimum:
            if eager_name is not False:
                raise InvalidArgumentError(None, None, list_too_short_message(
                    op_def, name, len(v), ad.minimum, eager_name))
            raise ValueError(f"Attr '{name}' of '{op_def.name}' Op passed list of length "
                             f"{len(v)} less than minimum {ad.minimum}.")
        elif ad.kind == "shape":
            attrs[name] = TensorShape(v) if not isinstance(v, TensorShape) else v


def _arg_for_attr(op_def: OpDef, attr: str) -> str:
    for arg in op_def.inputs + op_def.outputs:
        if arg.type_attr == attr:
            return arg.name
    return attr


def output_dtypes(op_def: OpDef, attrs: dict) -> list:
    out = []
    for arg in op_def.outputs:
        dt = arg.dtype or (attrs[arg.type_attr] if arg.type_attr else None)
        if arg.number_attr:
            out.extend([dt] * attrs[arg.number_attr])
        elif arg.type_list_attr:
            out.extend(attrs[arg.type_list_attr])
        else:
            out.append(dt)
    return out


def infer_shapes(op_def: OpDef, name: str, inputs, attrs: dict, n_out: int, eager: bool):
    """Runs the op's shape function; a failure becomes TF's error naming op and shapes."""
    shapes = [t.shape for t in inputs]
    if op_def.shape_fn is None:
        return [TensorShape(None)] * n_out
    ctx = InferenceContext(name, op_def.name, inputs, shapes, [t.dtype for t in inputs],
                           attrs, constant_value)
    try:
        out = op_def.shape_fn(ctx)
    except ShapeTensorError as e:
        if eager:
            raise InvalidArgumentError(None, None, f"{e} [Op:{op_def.name}] name: {name or ''}") \
                from None
        raise ValueError(str(e)) from None
    except ValueError as e:
        shown = ", ".join(fmt(s) for s in shapes)
        if eager:
            raise InvalidArgumentError(None, None, f"{e} [Op:{op_def.name}] name: {name or ''}") \
                from None
        raise ValueError(f"{e} for '{{{{node {name}}}}} = {_node_text(op_def, inputs, attrs)}' "
                         f"with input shapes: {shown}{ctx.error_context()}.") from None
    return [TensorShape(s) if not isinstance(s, TensorShape) else s for s in out]


def _node_text(op_def: OpDef, inputs, attrs: dict) -> str:
    """A NodeDef as TF shows it in build errors: `AddV2[T=DT_FLOAT](x, y)`."""
    def show(v):
        if isinstance(v, dtypes.DType):
            return f"DT_{dtype_name(v).upper()}"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(show(x) for x in v) + "]"
        return fmt(v) if isinstance(v, TensorShape) else str(v)
    shown = ", ".join(f"{k}={show(v)}" for k, v in sorted(attrs.items())
                      if not isinstance(v, np.ndarray))
    names = ", ".join(t.name[:-2] if t.name.endswith(":0") else t.name for t in inputs)
    return f"{op_def.name}[{shown}]({names})"


# Eager fast path: (op_def, input dtypes, user attrs) -> the checked, completed attrs dict.
# When every input is already an EagerTensor, type inference, conversion and attr checks
# depend on nothing else, so their result is computed once and shared (attrs are read-only).
_EAGER_ATTRS: dict = {}
_MAX_EAGER_ATTRS = 20000


def out_of_scope_error(t) -> TypeError:
    """TF's error for a graph tensor used where it does not exist (eagerly, another function)."""
    return TypeError(f"{t!r} is out of scope and cannot be used here. Use return values, "
                     "explicit Python locals or TensorFlow collections to access it.")


def _eager_copy(t: SymbolicTensor):
    """A graph tensor given to an eager op: its value from the function run a gradient
    function being computed stands for (ops/forward_copies.py), else TF's out-of-scope
    error."""
    u = copy_of(t)
    if u is None or isinstance(u, SymbolicTensor):
        raise out_of_scope_error(t)
    return u


def _foreign(graph, t, name: str):
    """A tensor not of `graph` given to an op built in it: the copy a gradient function
    being computed stands for (ops/forward_copies.py), or `t`, captured into `graph` (an
    eager tensor as the placeholder `name`)."""
    if isinstance(t, SymbolicTensor):
        u = copy_of(t)
        if u is not None:
            if isinstance(u, SymbolicTensor) and u.graph is graph:
                return u
            t = u
    return capture_into(graph, t, name)


def _flat_input_names(op_def: OpDef, inputs) -> list:
    """Each flat input's argument name as TF converts it: `y`, or `values_1` in a list."""
    names = []
    for arg, val in zip(op_def.inputs, inputs):
        if arg.type_list_attr or arg.number_attr:
            names.extend(f"{arg.name}_{i}" for i in range(len(val)))
        else:
            names.append(arg.name)
    return names


def _eager_attrs(op_def: OpDef, inputs, attrs, name=None):
    """(flat EagerTensor inputs, completed attrs, fast-path key or None) for an eager op."""
    key = eager_keys.eager_key(op_def, inputs, attrs)
    if key is not None:
        try:
            entry = _EAGER_ATTRS.get(key)
        except TypeError:  # an unhashable attr value
            entry, key = None, None
        if entry is not None:
            final, scalar_dtypes = entry
            if scalar_dtypes is None:
                return inputs, final, key
            try:
                flat = [t if d is None else convert_to_tensor(t, d)
                        for t, d in zip(inputs, scalar_dtypes)]
            except (TypeError, ValueError):
                pass  # the general path below raises TF's error for this value
            else:
                return flat, final, eager_keys.eager_key(op_def, flat, attrs)
    final = dict(attrs) if attrs else {}
    _infer_type_attrs(op_def, inputs, final)
    flat = _convert_inputs(op_def, inputs, final)
    if any(isinstance(t, SymbolicTensor) for t in flat):   # a graph's tensor reached an
        flat = [_eager_copy(t) if isinstance(t, SymbolicTensor) else t for t in flat]  # eager op
    _check_attrs(op_def, final, eager_name=name)
    if key is not None and not eager_keys.has_list_args(op_def):
        scalars = None
        if any(type(t) is not EagerTensor for t in inputs):
            scalars = eager_keys.scalar_dtypes(op_def, inputs, final)
        if scalars is not False:
            if len(_EAGER_ATTRS) > _MAX_EAGER_ATTRS:
                _EAGER_ATTRS.clear()
            _EAGER_ATTRS[key] = (final, scalars)
            if scalars is not None:
                flat_key = eager_keys.eager_key(op_def, flat, attrs)
                _EAGER_ATTRS[flat_key] = (final, None)
                return flat, final, flat_key
            return flat, final, key
    return flat, final, None


def apply_op(op_def: OpDef, inputs, attrs=None, name: str | None = None):
    """Creates (graph) or runs (eager) `op_def` on `inputs` (one entry per input arg)."""
    if len(inputs) != len(op_def.inputs):
        raise TypeError(f"{op_def.name} takes {len(op_def.inputs)} inputs, got {len(inputs)}")
    if context.executing_eagerly():
        flat, final, key = _eager_attrs(op_def, inputs, attrs, name)
        op = context.hooks.eager_execute(op_def, list(flat), final, name, key)
    else:
        attrs = dict(attrs) if attrs else {}
        graph = context.get_default_graph()
        _infer_type_attrs(op_def, inputs, attrs)
        # a scope's name ("scope/", as `name_scope` yields it) names the op exactly, as in TF
        op_name = name[:-1] if name and name.endswith("/") else \
            graph.unique_name(name or op_def.name)
        with graph.name_scope(op_name + "/"):
            flat = _convert_inputs(op_def, inputs, attrs)
        if not all(isinstance(t, SymbolicTensor) and t.graph is graph for t in flat):
            # TF names a captured eager tensor's placeholder after the op and argument
            # (`MatMul/ReadVariableOp/resource`)
            flat = [t if isinstance(t, SymbolicTensor) and t.graph is graph else
                    _foreign(graph, t, f"{op_name}/{n}")
                    for t, n in zip(flat, _flat_input_names(op_def, inputs))]
        _check_attrs(op_def, attrs)
        dts = output_dtypes(op_def, attrs)
        shapes = infer_shapes(op_def, op_name, flat, attrs, len(dts), eager=False)
        op = graph.create_op(op_def, flat, attrs, list(zip(dts, shapes)), op_name)
    for tape in context.active_tapes():
        tape.record(op)
    return op


attach(globals(), apply_docs.DOCS)

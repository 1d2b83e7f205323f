"""Custom ops registered from user code: a REGISTER_OP declaration, ATen kernels per device
type, an optional shape rule and gradient, and the Python op function built from them.

The op becomes an ordinary ndflow op: its `OpDef` sits in the op registry (so GraphDef
import finds it by name), its kernels in the kernel registry (eager execution, `tf.function`,
Sessions and the profiler run it like a built-in op), its gradient on the OpDef, and the
mixed-precision rewrite treats it as TensorFlow treats a custom op: unlisted (float32, casts
at its boundaries) until `TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_<LIST>_ADD` names it.

Every kernel call is checked against the op's declaration — the number of outputs, each
output's dtype and its shape against the statically inferred one — so a kernel returning
the wrong thing fails with an InvalidArgumentError naming the op, the output, and what was
expected, never later in an unrelated op. The check is a type test and a `torch.Size`
comparison per output.
"""

from __future__ import annotations

import collections
import inspect
from collections.abc import Callable, Mapping

import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.graph_def import dtype_name
from ndflow.core.shapes import TensorShape
from ndflow.kernels.registry import DEVICE_TYPES, NodeInfo, kernel
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import InferenceContext, OpDef, is_registered, op_def
from ndflow.ops.register_op_text import OpSpec, parse_register_ops, snake_case

_FROM_SPEC = object()   # `shape_fn` default: the one the REGISTER_OP text names
_ERRORS = ((NotImplementedError, tf_errors.UnimplementedError),
           (MemoryError, tf_errors.ResourceExhaustedError),
           ((ValueError, TypeError, RuntimeError, IndexError), tf_errors.InvalidArgumentError))


def register_op(spec: str, kernel_fn=None, *, shape_fn=_FROM_SPEC,
                gradient: Callable | None = None, not_differentiable: bool = False):
    """Registers a custom op; returns its Python op function (see ndflow/custom_op.py)."""
    if kernel_fn is None:
        return lambda fn: register_op(spec, fn, shape_fn=shape_fn, gradient=gradient,
                                      not_differentiable=not_differentiable)
    specs = parse_register_ops(spec) if isinstance(spec, str) else [spec]
    if len(specs) != 1:
        raise ValueError(f"register_op takes one REGISTER_OP(...) declaration, got "
                         f"{len(specs)} in {spec!r}")
    return register_spec(specs[0], kernel_fn, shape_fn, gradient, not_differentiable)


def register_spec(spec: OpSpec, kernel_fn, shape_fn=_FROM_SPEC, gradient=None,
                  not_differentiable: bool = False) -> Callable:
    """Declares `spec`'s op, registers its kernels and gradient, returns its op function."""
    kernels = _kernels_by_device(spec.name, kernel_fn)
    if is_registered(spec.name):
        raise tf_errors.AlreadyExistsError(
            None, None, f"Op with name {spec.name} already registered: ndflow and each "
            "custom op library must use distinct op names")
    od = op_def(spec.name, spec.inputs, spec.outputs, spec.attrs,
                spec.shape_fn if shape_fn is _FROM_SPEC else shape_fn,
                stateful=spec.stateful, commutative=spec.commutative,
                not_differentiable=not_differentiable, doc=spec.doc)
    for device_type, fn in kernels.items():
        kernel(od, devices=(device_type,))(checked_kernel_factory(od, fn))
    if gradient is not None:
        od.def_grad(gradient)
    return op_function(od, kernels)


def _kernels_by_device(name: str, kernel_fn) -> dict:
    if isinstance(kernel_fn, Mapping):
        out = {str(k).upper(): v for k, v in kernel_fn.items()}
        unknown = sorted(set(out) - set(DEVICE_TYPES))
        if unknown:
            raise ValueError(f"Op {name}: kernels are registered per device type "
                             f"({', '.join(DEVICE_TYPES)}), not {unknown}")
    else:
        out = dict.fromkeys(DEVICE_TYPES, kernel_fn)
    for fn in out.values():
        if not callable(fn):
            raise TypeError(f"Op {name}: a kernel must be callable, got {fn!r}")
    return out


# -- the kernel wrapper ---------------------------------------------------------------------

def kernel_params(fn) -> set | None:
    """The keyword names `fn` accepts (None: any). A `torch.ops` op lists its schema's; a
    builtin without a readable signature (`torch.relu`) gets no attrs."""
    schema = getattr(getattr(fn, "default", None), "_schema", None)
    if schema is not None:
        return {a.name for a in schema.arguments}
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return set()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _kernel_attr(value):
    """An attr as an ATen kernel takes it: DTypes as torch dtypes, shapes as lists."""
    if isinstance(value, dtypes.DType):
        return value.torch_dtype
    if isinstance(value, TensorShape):
        return None if value.rank is None else [d for d in value.as_list()]
    if isinstance(value, (list, tuple)):
        return [_kernel_attr(v) for v in value]
    return value


def _arg_sizes(args, attrs: dict) -> list[int | None]:
    """Per arg: the number of tensors of a list arg, None for a single tensor."""
    out = []
    for a in args:
        if a.number_attr:
            out.append(attrs[a.number_attr])
        elif a.type_list_attr:
            out.append(len(attrs[a.type_list_attr]))
        else:
            out.append(None)
    return out


def _output_names(od: OpDef, attrs: dict) -> list[str]:
    names = []
    for a, n in zip(od.outputs, _arg_sizes(od.outputs, attrs)):
        names.extend([a.name] if n is None else [f"{a.name}[{i}]" for i in range(n)])
    return names


def checked_kernel_factory(od: OpDef, fn) -> Callable[[NodeInfo], Callable]:
    """The kernel factory of custom op `od` around the user's kernel `fn`."""
    accepted = kernel_params(fn)

    def factory(node: NodeInfo):
        kwargs = {k: _kernel_attr(v) for k, v in node.attrs.items()
                  if not k.startswith("_") and (accepted is None or k in accepted)}
        sizes = _arg_sizes(od.inputs, node.attrs)
        grouped = any(n is not None for n in sizes)
        names = _output_names(od, node.attrs)
        static = _expectations(node.output_dtypes, node.output_shapes)
        n_out = len(static)
        # Partial static shapes (graphs with unknown dims): the shape rule is re-run on the
        # actual input shapes, once per distinct input signature.
        refine = od.shape_fn is not None and any(e[2] is None for e in static)
        refined: dict = {}

        def fail(message: str):
            return tf_errors.InvalidArgumentError(
                None, None, f"{od.name} (node {node.name}): the kernel {message}")

        def expectations(inputs) -> list:
            key = tuple(getattr(t, "shape", None) for t in inputs)
            found = refined.get(key)
            if found is None:
                ctx = InferenceContext(node.name, od.name, list(inputs),
                                       [TensorShape(k) for k in key], node.input_dtypes,
                                       node.attrs, lambda t: None)
                try:
                    shapes = [TensorShape(s) for s in od.shape_fn(ctx)]
                except ValueError as e:
                    raise fail(f"got inputs of shapes {[list(k) for k in key]}: {e}") from None
                found = _expectations(node.output_dtypes, shapes)
                if len(refined) < 64:
                    refined[key] = found
            return found

        def check(out, i: int, expect: list) -> None:
            if not isinstance(out, torch.Tensor):
                raise fail(f"returned {type(out).__name__} for output {i} '{names[i]}'; "
                           "expected a torch.Tensor")
            dt, shape, size = expect[i]
            if out.dtype is dt and (size == out.shape or (
                    size is None and shape.is_compatible_with(TensorShape(out.shape)))):
                return
            got = dtypes.as_dtype(out.dtype) if out.dtype in _TORCH_DTYPES else out.dtype
            got_name = dtype_name(got) if isinstance(got, dtypes.DType) else str(got)
            raise fail(f"returned output {i} '{names[i]}' with dtype {got_name} and shape "
                       f"{list(out.shape)}, but the op declares dtype "
                       f"{dtype_name(node.output_dtypes[i])} and shape {_shown(shape)}")

        def run(*inputs):
            expect = expectations(inputs) if refine else static
            if grouped:
                inputs = _group(inputs, sizes)
            try:
                out = fn(*inputs, **kwargs)
            except tf_errors.OpError:
                raise
            except Exception as e:  # noqa: BLE001 - a user kernel's failure becomes TF's error
                cls = next((c for py, c in _ERRORS if isinstance(e, py)), tf_errors.UnknownError)
                first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                raise cls(None, None, f"{od.name} (node {node.name}): the kernel raised "
                          f"{type(e).__name__}: {first}") from None
            if n_out == 1:
                e = expect[0]
                if type(out) is torch.Tensor and out.dtype is e[0] and e[2] == out.shape:
                    return out
                if isinstance(out, (tuple, list)) and len(out) == 1 and od.outputs[0].is_list:
                    out = out[0]
                check(out, 0, expect)
                return out
            flat = _flatten(out)
            if len(flat) != n_out:
                raise fail(f"returned {len(flat)} outputs; the op declares {n_out} "
                           f"({', '.join(names)})")
            for i, o in enumerate(flat):
                check(o, i, expect)
            return tuple(flat) if n_out else None
        return run
    return factory


def _expectations(out_dtypes, out_shapes) -> list:
    """Per output: (torch dtype, static TensorShape, torch.Size when fully defined)."""
    return [(d.torch_dtype, s, torch.Size(s.as_list()) if s.is_fully_defined() else None)
            for d, s in zip(out_dtypes, out_shapes)]


_TORCH_DTYPES = {d.torch_dtype for d in dtypes.NUMERIC + dtypes.COMPLEX + (dtypes.bool,)}


def _shown(shape: TensorShape) -> str:
    if shape.rank is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _group(flat, sizes):
    out, i = [], 0
    for n in sizes:
        if n is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + n]))
            i += n
    return out


def _flatten(out) -> list:
    if out is None:
        return []
    if isinstance(out, torch.Tensor):
        return [out]
    flat = []
    for item in out:
        flat.extend(item if isinstance(item, (list, tuple)) else [item])
    return flat


# -- the op function --------------------------------------------------------------------------

def op_function(od: OpDef, kernels: dict | None = None) -> Callable:
    """The Python function of `od`, as TensorFlow's generated op wrappers: inputs positional,
    attrs not inferred from the inputs as keywords, `name`; one output arg -> a tensor (or a
    list), several -> a namedtuple."""
    inferred = set()
    for a in od.inputs:
        inferred.update(x for x in (a.type_attr, a.number_attr, a.type_list_attr) if x)
    attr_names = [n for n in od.attrs if n not in inferred]
    outputs = collections.namedtuple(od.name, [a.name for a in od.outputs]) \
        if len(od.outputs) > 1 else None
    params = [inspect.Parameter(a.name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
              for a in od.inputs]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY,
                                 default=od.attrs[n].default if od.attrs[n].has_default
                                 else inspect.Parameter.empty) for n in attr_names]
    params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
    signature = inspect.Signature(params)

    fname = snake_case(od.name)
    input_names = [a.name for a in od.inputs]
    n_in = len(input_names)
    keywords = set(input_names) | set(attr_names) | {"name"}
    required = [n for n in attr_names if not od.attrs[n].has_default]
    single = len(od.outputs) == 1 and not od.outputs[0].is_list

    def call(*args, **kwargs):
        if len(args) == n_in and not kwargs and not required:   # the common call: no bind
            op = apply_op(od, list(args))
        else:
            inputs, attrs, name = _bind(fname, input_names, attr_names, keywords, required,
                                        args, kwargs)
            op = apply_op(od, inputs, attrs, name=name)
        if single:
            return op.outputs[0]
        results = list(op.outputs)
        per_arg, i = [], 0
        for n in _arg_sizes(od.outputs, op.attrs):
            per_arg.append(results[i] if n is None else results[i:i + n])
            i += 1 if n is None else n
        if outputs is not None:
            return outputs(*per_arg)
        return per_arg[0] if per_arg else op

    call.__name__ = call.__qualname__ = fname
    call.__signature__ = signature
    call.__doc__ = od.doc or f"The custom op {od.name}."
    call.op_def = od
    call.kernels = kernels or {}
    return call


def _bind(fname, input_names, attr_names, keywords, required, args, kwargs):
    """(inputs, attrs, name) from an op function's arguments, with Python's TypeErrors."""
    if len(args) > len(input_names):
        raise TypeError(f"{fname}() takes {len(input_names)} positional arguments but "
                        f"{len(args)} were given")
    unknown = sorted(set(kwargs) - keywords)
    if unknown:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{unknown[0]}'")
    values = dict(zip(input_names, args))
    for k, v in kwargs.items():
        if k in values:
            raise TypeError(f"{fname}() got multiple values for argument '{k}'")
        values[k] = v
    missing = [n for n in input_names + required if n not in values]
    if missing:
        raise TypeError(f"{fname}() missing required argument '{missing[0]}'")
    return ([values[n] for n in input_names], {n: values[n] for n in attr_names if n in values},
            values.get("name"))

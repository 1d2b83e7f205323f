"""OpDefs: each op declared once, TensorFlow-style, with its shape rule and gradient.

    AddV2 = op_def("AddV2", inputs=["x: T", "y: T"], outputs=["z: T"],
                   attrs=["T: {half, bfloat16, float, double, int32, int64}"],
                   shape=broadcast_shape, commutative=True)

    @AddV2.def_grad            # in the family's gradient module (ops/math_grad.py)
    def _add_grad(op, grad): ...

An op's properties are typed fields set where it is declared: `stateful` (never folded,
merged or pruned away as a target), `commutative` (CSE may reorder its inputs, as TF's
`SetIsCommutative`), `not_differentiable` (TF's `ops.NotDifferentiable`: its inputs get no
gradient) or `gradient_undefined` (TF registers no gradient: differentiating through it raises
`LookupError`), `functional` (holds function attrs run by the runtime: never constant-folded),
and the static-value rules `constant_value` / `partial_value` used by shape inference.

What passes, the JIT, the profiler and tf.data's vectorization need to know of an op's
arithmetic are `tags` on its OpDef (`POINTWISE`, `BROADCASTING`, `REDUCTION`, defined below),
not tables of op names kept beside each consumer: `tagged(tag)` is the set of registered op
types with a tag, read live (so an op registered later, a custom op, is in it), and
tests/ops/test_op_tags.py checks the tags against TensorFlow's own categories.

Arg specs use TF's REGISTER_OP syntax: `x: T` (type attr), `x: int32` (fixed type),
`values: N * T` (N tensors of type T), `inputs: T` where `T: list(type)` (a type list).
Attr specs: `name: kind [= default]`, kind one of `type`, `{t1, t2}` (allowed types),
`{'A', 'B'}` (allowed strings), `int [>= n]`, `float`, `bool`, `string`, `shape`, `tensor`,
`list(int)`, `list(float)`, `list(type)`, `list(shape)`, `func`.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ndflow.core import dtypes, lazy_api
from ndflow.core.errors import NotFoundError
from ndflow.core.graph_def import dtype_name
from ndflow.core.shapes import TensorShape, fmt

_TF_TYPE_NAMES = {
    "half": dtypes.float16, "bfloat16": dtypes.bfloat16, "float": dtypes.float32,
    "double": dtypes.float64, "int8": dtypes.int8, "int16": dtypes.int16,
    "int32": dtypes.int32, "int64": dtypes.int64, "uint8": dtypes.uint8,
    "uint16": dtypes.uint16, "uint32": dtypes.uint32, "uint64": dtypes.uint64, "bool": dtypes.bool,
    "string": dtypes.string, "resource": dtypes.resource, "variant": dtypes.variant,
    "complex64": dtypes.complex64, "complex128": dtypes.complex128,
    **{d.name: d for d in dtypes.QUANTIZED + tuple(dtypes.NARROW)},   # qint8, float8_e5m2, ...
}
# TF's type groups used in REGISTER_OP strings.
_TYPE_GROUPS = {
    "numbertype": dtypes.NUMERIC + dtypes.COMPLEX,
    "realnumbertype": dtypes.NUMERIC,
    "floattype": dtypes.FLOATING,
    "inttype": dtypes.INTEGER,
    "quantizedtype": dtypes.QUANTIZED,
}

REGISTRY: dict[str, OpDef] = {}

# Tags (OpDef.tags):
POINTWISE = "pointwise"        # each output element is a function of the inputs' elements at
                               # its position only (output shape = the inputs' shape)
BROADCASTING = "broadcasting"  # pointwise, with NumPy broadcasting of the inputs' shapes
REDUCTION = "reduction"        # reduces input 0 over the axes given by input 1
TAGS = frozenset({POINTWISE, BROADCASTING, REDUCTION})


class _Tagged:
    """The registered op types carrying a tag, as a container read live: `type in tagged(t)`."""

    __slots__ = ("tag",)

    def __init__(self, tag: str):
        self.tag = tag

    def __contains__(self, op_type) -> bool:
        d = REGISTRY.get(op_type)
        if d is None and lazy_api.load_op(op_type):   # an op of a family not loaded yet
            d = REGISTRY.get(op_type)
        return d is not None and self.tag in d.tags

    def __iter__(self):   # every op: those of families not loaded yet too
        lazy_api.load_all_ops()
        return iter(sorted(n for n, d in REGISTRY.items() if self.tag in d.tags))

    def __repr__(self):
        return f"tagged({self.tag!r})"


def tagged(tag: str) -> _Tagged:
    """The op types with `tag`: supports `in` (one dict lookup) and iteration."""
    if tag not in TAGS:
        raise ValueError(f"unknown op tag {tag!r}; tags: {sorted(TAGS)}")
    return _Tagged(tag)


@dataclass
class ArgDef:
    name: str
    dtype: dtypes.DType | None = None   # fixed type
    type_attr: str | None = None        # single tensor (or N) of type attrs[type_attr]
    number_attr: str | None = None      # N * T: a list of N tensors
    type_list_attr: str | None = None   # list of tensors with types attrs[type_list_attr]

    @property
    def is_list(self) -> bool:
        return self.number_attr is not None or self.type_list_attr is not None


@dataclass
class AttrDef:
    name: str
    kind: str                      # 'type', 'int', 'float', 'bool', 'string', 'shape', ...
    default: object = None
    has_default: bool = False
    allowed: tuple | None = None   # allowed dtypes or strings
    minimum: int | None = None


StaticValueFn = Callable[[object], object]  # fn(symbolic tensor) -> value or None


@dataclass(eq=False)
class OpDef:
    name: str
    inputs: list[ArgDef]
    outputs: list[ArgDef]
    attrs: dict[str, AttrDef]
    shape_fn: Callable | None = None   # fn(InferenceContext) -> list[TensorShape]
    grad_fn: Callable | None = None    # fn(op, *output_grads) -> list[input grad or None]
    is_stateful: bool = False
    is_commutative: bool = False
    not_differentiable: bool = False
    gradient_undefined: bool = False
    is_functional: bool = False
    # The NumPy value of an output, when it is known statically (shape inference).
    constant_value: StaticValueFn | None = None
    # What is known of an int output's value: an int|None scalar or a list of int|None.
    partial_value: StaticValueFn | None = None
    doc: str = ""
    tags: frozenset = frozenset()      # POINTWISE, BROADCASTING, REDUCTION (above)
    # the modules whose import defined the op and its gradient (the index's "ops" and
    # "gradients": those outside the base load on first use)
    module: str = ""
    grad_module: str = ""

    def def_grad(self, fn: Callable) -> Callable:
        """Decorator: registers `fn(op, *output_grads) -> [input_grads]` (once per op)."""
        if self.grad_fn is not None or self.not_differentiable or self.gradient_undefined:
            previous = "a gradient function" if self.grad_fn else "a no-gradient mark"
            raise KeyError(f"Registering two gradient with name '{self.name}'! (Previous "
                           f"registration was {previous})")
        self.grad_fn = fn
        self.grad_module = _importing_module()
        return fn

    def gradient(self) -> Callable | None:
        """The gradient function, its module imported first where `import ndflow` left it
        for first use (None: the op has none)."""
        if self.grad_fn is None:
            lazy_api.load_gradient(self.name)
        return self.grad_fn

    def def_constant_value(self, fn: StaticValueFn) -> StaticValueFn:
        """Decorator: registers the static-value rule of the op's (first) output."""
        self.constant_value = fn
        return fn

    def def_partial_value(self, fn: StaticValueFn) -> StaticValueFn:
        """Decorator: registers the partial static-value rule of an int output."""
        self.partial_value = fn
        return fn

    def __repr__(self):
        return f"<OpDef {self.name}>"


def summarize(d: OpDef) -> str:
    """The op as TensorFlow's SummarizeOpDef shows it in kernel errors:
    `Op<name=Sqrt; signature=x:T -> y:T; attr=T:type,allowed=[DT_HALF, DT_FLOAT]>`."""

    def enum(t) -> str:
        return f"DT_{dtype_name(t).upper()}"

    def arg(a: ArgDef) -> str:
        count = f"{a.number_attr}*" if a.number_attr else ""
        typ = dtype_name(a.dtype) if a.dtype is not None else a.type_attr or ""
        return f"{a.name}:{count}{typ}"

    def value(kind: str, v) -> str:
        if isinstance(v, (list, tuple)):
            inner = kind[5:-1] if kind.startswith("list(") else kind
            return "[" + ", ".join(value(inner, x) for x in v) + "]"
        if kind == "type":
            return enum(v)
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return f"{v:g}"
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, TensorShape):
            return "<unknown>" if v.rank is None else \
                "[" + ",".join("?" if n is None else str(n) for n in v.as_list()) + "]"
        return str(v)

    parts = [f"Op<name={d.name}; signature={', '.join(map(arg, d.inputs))} -> "
             f"{', '.join(map(arg, d.outputs))}"]
    for a in d.attrs.values():
        text = f"; attr={a.name}:{a.kind}"
        if a.has_default:
            text += f",default={value(a.kind, a.default)}"
        if a.minimum is not None:
            text += f",min={a.minimum}"
        if a.allowed is not None:
            text += f",allowed={value(a.kind, list(a.allowed))}"
        parts.append(text)
    parts += [flag for flag, on in (("; is_commutative=true", d.is_commutative),
                                    ("; is_stateful=true", d.is_stateful)) if on]
    return "".join(parts) + ">"


def disallowed_value_message(d: OpDef, attr: str, value, allowed, name) -> str:
    """TF's eager kernel-lookup error for an attr given a type (or string) outside its
    list."""
    def shown(v) -> str:
        return f'"{v}"' if isinstance(v, str) else dtype_name(v)
    return (f"Value for attr '{attr}' of {shown(value)} is not in the list of allowed "
            f"values: {', '.join(shown(v) for v in allowed)}\n\t; NodeDef: {{{{node "
            f"{d.name}}}}}; {summarize(d)} [Op:{d.name}] name: {name or ''}")


def list_too_short_message(d: OpDef, attr: str, length: int, minimum: int, name) -> str:
    """TF's eager error for a list attr shorter than its minimum."""
    return (f"Length for attr '{attr}' of {length} must be at least minimum {minimum}\n\t; "
            f"NodeDef: {{{{node {d.name}}}}}; {summarize(d)} [Op:{d.name}] name: {name or ''}")


def input_needed(op, index: int) -> bool:
    """Whether a gradient function must compute the gradient of input `index`.

    Eager backprop sets `op.skip_input_indices` (TF's name) to the inputs no source depends
    on, so gradient functions of expensive ops (conv, matmul) can skip them; graphs prune
    unused gradient nodes instead and never set it.
    """
    skip = getattr(op, "skip_input_indices", None)
    return not skip or index not in skip


def op_def(
    name: str,
    inputs=(),
    outputs=(),
    attrs=(),
    shape=None,
    *,
    stateful: bool = False,
    commutative: bool = False,
    not_differentiable: bool = False,
    gradient_undefined: bool = False,
    functional: bool = False,
    constant_value: StaticValueFn | None = None,
    partial_value: StaticValueFn | None = None,
    doc: str = "",
    tags=(),
) -> OpDef:
    """Declares and registers an op (TF REGISTER_OP syntax for args and attrs)."""
    module = _importing_module()
    if name in REGISTRY or lazy_api.index()["ops"].get(name, module) != module:
        raise ValueError(f"Op '{name}' is already registered")
    tags = frozenset(tags)
    if not tags <= TAGS:
        raise ValueError(f"Op '{name}': unknown tags {sorted(tags - TAGS)}")
    if BROADCASTING in tags:
        tags |= {POINTWISE}
    if not_differentiable and gradient_undefined:
        raise ValueError(
            f"Op '{name}': not_differentiable and gradient_undefined exclude each other"
        )
    attr_defs = dict(_parse_attr(a) for a in attrs)
    d = OpDef(
        name,
        [_parse_arg(a, attr_defs) for a in inputs],
        [_parse_arg(a, attr_defs) for a in outputs],
        attr_defs,
        shape_fn=shape,
        is_stateful=stateful,
        is_commutative=commutative,
        not_differentiable=not_differentiable,
        gradient_undefined=gradient_undefined,
        is_functional=functional,
        constant_value=constant_value,
        partial_value=partial_value,
        doc=doc,
        tags=tags,
        module=module,
    )
    REGISTRY[name] = d
    return d


def scalar_output(ctx) -> list:
    """The shape function of an op with one scalar output."""
    return [TensorShape([])]


def no_outputs(ctx) -> list:
    """The shape function of an op without outputs."""
    return []


def _importing_module() -> str:
    """The module whose body is running (a definition may come through a factory)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    return "" if frame is None else frame.f_globals.get("__name__", "")


def is_registered(name: str) -> bool:
    """Whether op `name` is ndflow's or registered (an op of a family not loaded yet is)."""
    return name in REGISTRY or name in lazy_api.index()["ops"]


def lookup(name: str) -> OpDef:
    """The OpDef registered as `name`; an op whose module `import ndflow` leaves for first
    use (a family such as nn_conv, checkpoint's SaveV2) is imported here (graph import needs
    every op by name)."""
    if name not in REGISTRY:
        lazy_api.load_op(name)
    try:
        return REGISTRY[name]
    except KeyError:
        raise NotFoundError(
            None, None, f"Op type not registered '{name}' in binary running on this host."
        ) from None


def _parse_arg(spec: str, attrs: dict[str, AttrDef]) -> ArgDef:
    name, _, rhs = (s.strip() for s in spec.partition(":"))
    if "*" in rhs:
        num, _, typ = (s.strip() for s in rhs.partition("*"))
        if typ in _TF_TYPE_NAMES:
            return ArgDef(name, dtype=_TF_TYPE_NAMES[typ], number_attr=num)
        return ArgDef(name, type_attr=typ, number_attr=num)
    if rhs in _TF_TYPE_NAMES:
        return ArgDef(name, dtype=_TF_TYPE_NAMES[rhs])
    if rhs in attrs and attrs[rhs].kind == "list(type)":
        return ArgDef(name, type_list_attr=rhs)
    if rhs in attrs:
        return ArgDef(name, type_attr=rhs)
    raise ValueError(f"Bad arg spec {spec!r}")


def _parse_types(text: str) -> tuple:
    out = []
    for t in text.split(","):
        t = t.strip()
        if t in _TYPE_GROUPS:
            out.extend(_TYPE_GROUPS[t])
        else:
            out.append(_TF_TYPE_NAMES[t])
    return tuple(out)


def _parse_attr(spec: str) -> tuple[str, AttrDef]:
    name, _, rest = (s.strip() for s in spec.partition(":"))
    # The default follows the first "=" that is not part of ">=" (e.g. "int >= 2 = 4").
    split = re.search(r"(?<![<>])=", rest)
    kind, eq, default = (
        (rest[: split.start()].strip(), "=", rest[split.end() :].strip())
        if split
        else (rest.strip(), "", "")
    )
    a = AttrDef(name, kind)
    if kind.startswith("{"):
        body = kind[1:-1].strip()
        if body.startswith("'") or body.startswith('"'):
            a.kind = "string"
            a.allowed = tuple(ast.literal_eval("[" + body + "]"))
        else:
            a.kind = "type"
            a.allowed = _parse_types(body)
    elif kind.startswith("int") and ">=" in kind:
        a.kind = "int"
        a.minimum = int(kind.split(">=")[1])
    elif kind.startswith("list(") and ">=" in kind:   # "list(type) >= 1": a minimum length
        a.kind = kind.split(">=")[0].strip()
        a.minimum = int(kind.split(">=")[1])
    elif kind in _TYPE_GROUPS:
        a.kind, a.allowed = "type", _TYPE_GROUPS[kind]
    if eq:
        a.has_default = True
        a.default = _parse_default(a.kind, default)
    return name, a


def _parse_default(kind: str, text: str):
    if kind == "type":
        return _TF_TYPE_NAMES[text[3:].lower()] if text.startswith("DT_") else _TF_TYPE_NAMES[text]
    if kind == "bool":
        return text == "true"
    if kind == "shape":
        return TensorShape(None) if text == "unknown" else TensorShape(ast.literal_eval(text))
    if kind == "list(type)" and text == "[]":
        return []
    return ast.literal_eval(text)


class ShapeTensorError(ValueError):
    """A shape tensor with a value below -1: TF's shape refiner rejects it before the shape
    function runs, so its message stands alone (no node or input shapes after it)."""


class InferenceContext:
    """What a shape function sees: flat input shapes/dtypes, attrs, and constant inputs.

    It remembers the input values and shape tensors a shape function read, which TF's
    errors name after the input shapes (`error_context`)."""

    __slots__ = ("op_name", "op_type", "shapes", "dtypes", "attrs", "_value_fn", "_inputs",
                 "_computed", "_as_shapes")

    def __init__(self, op_name, op_type, inputs, shapes, dtypes_, attrs, value_fn):
        self.op_name = op_name
        self.op_type = op_type
        self._inputs = inputs
        self.shapes = shapes
        self.dtypes = dtypes_
        self.attrs = attrs
        self._value_fn = value_fn
        self._computed: dict = {}    # input index -> the value the shape function read
        self._as_shapes: dict = {}   # input index -> the shape a shape tensor described

    def value(self, i: int):
        """The constant value of input `i` as a NumPy array, or None if not known statically."""
        v = self._value_fn(self._inputs[i])
        if v is not None and i not in self._as_shapes:
            self._computed[i] = v
        return v

    def read_as_shape(self, i: int, shape) -> None:
        """Records that input `i` was read as the (partial) `shape` (TF's
        MakeShapeFromShapeTensor), which TF's errors show instead of the value."""
        self._computed.pop(i, None)
        self._as_shapes[i] = shape

    def error_context(self) -> str:
        """TF's tail of a shape error after the input shapes: the input tensors the shape
        function computed (` and with computed input tensors: input[1] = <0 5>`) and those
        read as partial shapes (` and with input tensors computed as partial shapes:
        input[1] = [4,?]`)."""
        tail = ""
        if self._computed:
            tail += " and with computed input tensors: " + ", ".join(
                f"input[{i}] = <{summarize_value(v)}>" for i, v in sorted(self._computed.items()))
        if self._as_shapes:
            tail += " and with input tensors computed as partial shapes: " + ",".join(
                f"input[{i}] = {fmt(s)}" for i, s in sorted(self._as_shapes.items()))
        return tail

    def attr(self, name):
        return self.attrs[name]


def summarize_value(v, limit: int = 256) -> str:
    """TF's Tensor::SummarizeValue: the values space-separated, each dimension below the
    first in brackets (`[1 1][-5 0]`); past `limit` values, the first ones and `...`."""
    a = np.asarray(v)
    items = [x.decode(errors="replace") if isinstance(x, bytes) else str(x)
             for x in a.reshape(-1)[:limit]]
    if a.ndim <= 1 or a.size > limit:
        return " ".join(items + ["..."] * (a.size > limit))

    def nest(dims, part):
        if len(dims) == 1:
            return " ".join(part)
        n = len(part) // dims[0] if dims[0] else 0
        return "".join(f"[{nest(dims[1:], part[k * n:(k + 1) * n])}]" for k in range(dims[0]))
    return nest(a.shape, items)


def as_numpy_value(v):
    """Best-effort NumPy view of a constant attr value."""
    return v if isinstance(v, np.ndarray) else np.asarray(v)

"""TensorFlow's C++ `REGISTER_OP(...)` builder chains, read as text.

Custom ops (`ndflow.custom_op.register_op`, `tf.load_op_library`) are declared with the very
text a TensorFlow C++ op library holds, so an op ported from TensorFlow keeps its declaration:

    REGISTER_OP("ZeroOut")
        .Attr("T: {int32, float}")
        .Input("to_zero: T")
        .Output("zeroed: T")
        .SetShapeFn(::tensorflow::shape_inference::UnchangedShape);

`parse_register_ops(text)` returns one `OpSpec` per chain (C++ `//` and `/* */` comments,
adjacent string literals and raw strings `R"doc(...)doc"` are understood). A shape function
is C++ code ndflow cannot run: the common ones of `shape_inference` (UnchangedShape,
ScalarShape, UnknownShape) are recognised by name, anything else gives unknown output shapes
(pass a Python shape function to `register_op` to do better).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import output_dtypes
from ndflow.ops.op_def import lookup


@dataclass
class OpSpec:
    """One REGISTER_OP chain: the arguments `op_def(...)` takes."""

    name: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attrs: list[str] = field(default_factory=list)
    shape_fn: object = None            # a Python shape rule, or None (unknown shapes)
    stateful: bool = False
    commutative: bool = False
    doc: str = ""


def unchanged_shape(ctx) -> list:
    """TF's `shape_inference::UnchangedShape`: output 0 has input 0's shape."""
    return [ctx.shapes[0]]


def scalar_shape(ctx) -> list:
    """TF's `shape_inference::ScalarShape`: every output is a scalar."""
    return [TensorShape([])] * _num_outputs(ctx)


def unknown_shape(ctx) -> list:
    """TF's `shape_inference::UnknownShape`: nothing is known of any output."""
    return [TensorShape(None)] * _num_outputs(ctx)


def _num_outputs(ctx) -> int:
    return len(output_dtypes(lookup(ctx.op_type), ctx.attrs))


_SHAPE_FNS = {"UnchangedShape": unchanged_shape, "ScalarShape": scalar_shape,
              "UnknownShape": None}
_LIST_METHODS = {"Input": "inputs", "Output": "outputs", "Attr": "attrs"}
_FLAG_METHODS = {"SetIsStateful": "stateful", "SetIsCommutative": "commutative",
                 "SetDoNotOptimize": "stateful"}
_IGNORED = {"SetIsAggregate", "SetAllowsUninitializedInput", "Deprecated"}
_START = re.compile(r"REGISTER_OP\s*\(")


def parse_register_ops(text: str) -> list[OpSpec]:
    """Every `REGISTER_OP("Name")...;` chain in `text` (ValueError naming what is wrong)."""
    text = _strip_comments(text)
    specs = []
    pos = 0
    while True:
        m = _START.search(text, pos)
        if m is None:
            return specs
        args, pos = _call_args(text, m.end() - 1)
        spec = OpSpec(_string_arg(args, "REGISTER_OP"))
        if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", spec.name):
            raise ValueError(f"REGISTER_OP: op name {spec.name!r} must be CamelCase "
                             "(TensorFlow's rule: a capital letter, then letters, digits, _)")
        while True:
            method = re.compile(r"\s*\.\s*([A-Za-z_]\w*)\s*").match(text, pos)
            if method is None:
                break
            args, pos = _call_args(text, method.end())
            _apply(spec, method.group(1), args)
        specs.append(spec)


def _apply(spec: OpSpec, method: str, args: str) -> None:
    if method in _LIST_METHODS:
        getattr(spec, _LIST_METHODS[method]).append(_string_arg(args, method))
    elif method in _FLAG_METHODS:
        setattr(spec, _FLAG_METHODS[method], True)
    elif method == "Doc":
        spec.doc = _string_arg(args, method)
    elif method == "SetShapeFn":
        spec.shape_fn = _SHAPE_FNS.get(args.strip().rpartition("::")[2].strip())
    elif method not in _IGNORED:
        raise ValueError(f"REGISTER_OP(\"{spec.name}\"): unsupported builder method "
                         f".{method}(...)")


def _strip_comments(text: str) -> str:
    """Removes C++ comments outside string literals."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif text[i] == '"' or text.startswith('R"', i):
            end = _literal_end(text, i)
            out.append(text[i:end])
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _literal_end(text: str, i: int) -> int:
    """The index just past the string literal starting at `i`."""
    if text.startswith('R"', i):
        open_paren = text.find("(", i)
        delim = text[i + 2:open_paren]
        end = text.find(f"){delim}\"", open_paren)
        if open_paren < 0 or end < 0:
            raise ValueError("REGISTER_OP: unterminated raw string literal")
        return end + len(delim) + 2
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j + 1
        else:
            j += 1
    raise ValueError("REGISTER_OP: unterminated string literal")


def _call_args(text: str, open_paren: int) -> tuple[str, int]:
    """(the text between the parentheses at `open_paren` and its match, index after it)."""
    if open_paren >= len(text) or text[open_paren] != "(":
        raise ValueError(f"REGISTER_OP: expected '(' at {text[open_paren:open_paren + 20]!r}")
    depth, i = 0, open_paren
    while i < len(text):
        c = text[i]
        if c == '"' or text.startswith('R"', i):
            i = _literal_end(text, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1:i], i + 1
        i += 1
    raise ValueError("REGISTER_OP: unbalanced parentheses")


def _string_arg(args: str, method: str) -> str:
    """The value of a C++ string argument: adjacent literals concatenated, escapes decoded."""
    parts, i, args = [], 0, args.strip()
    while i < len(args):
        if args[i].isspace():
            i += 1
            continue
        if not (args[i] == '"' or args.startswith('R"', i)):
            raise ValueError(f"{method}(...) takes a string literal, got {args!r}")
        end = _literal_end(args, i)
        lit = args[i:end]
        if lit.startswith('R"'):
            delim = lit[2:lit.index("(")]
            parts.append(lit[len(delim) + 3:-(len(delim) + 2)])
        else:
            parts.append(lit[1:-1].encode("latin-1", "backslashreplace")
                         .decode("unicode_escape"))
        i = end
    if not parts:
        raise ValueError(f"{method}(...) takes a string literal")
    return "".join(parts)


def snake_case(op_name: str) -> str:
    """The Python function name TensorFlow gives an op (`ZeroOut` -> `zero_out`,
    `Conv2D` -> `conv2d`, `CTCLoss` -> `ctc_loss`, `BiasAddV1` -> `bias_add_v1`)."""
    return _SNAKE.sub("_", op_name).lower()


# An underscore before a capital that follows a lowercase letter, or that starts a word
# after an acronym (TF's python_op_gen ToSnakeCase; digits do not start a word: Conv2D).
_SNAKE = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

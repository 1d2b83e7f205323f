"""`tf.debugging.assert_*` (TensorFlow's check_ops.py): eagerly each checks now and raises
TensorFlow's error with TensorFlow's message; in a graph it returns the Assert op that checks
when it runs (a NoOp when the check is known statically to pass), so `tf.function` runs it on
every call. Static facts (rank, dtype, scalar shape) raise at build time, as in TensorFlow."""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import SymbolicTensor
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import comparison
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.array_core import no_op
from ndflow.ops.array_core import rank as tf_rank
from ndflow.ops.array_core import shape as shape_of
from ndflow.ops.array_core import stack as stack_
from ndflow.ops.check_ops_docs import binary_doc, unary_doc
from ndflow.ops.control_flow_assert import Assert
from ndflow.ops.math import abs as tf_abs
from ndflow.ops.reduction import reduce_all

_SYMBOLS = {"equal": "==", "none_equal": "!=", "less": "<", "less_equal": "<=",
            "greater": ">", "greater_equal": ">="}
_REFLEXIVE = ("equal", "less_equal", "greater_equal")
_COMPARE = {"equal": comparison.equal, "none_equal": comparison.not_equal,
            "less": comparison.less, "less_equal": comparison.less_equal,
            "greater": comparison.greater, "greater_equal": comparison.greater_equal}
_NUMPY = {"equal": np.equal, "none_equal": np.not_equal, "less": np.less,
          "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal}


def _pretty(d, summarize: int) -> str:
    """TF's _pretty_print: a tensor as the list of its first values' strings."""
    if isinstance(d, Tensor):
        values = np.asarray(d.numpy()).reshape(-1)
        if summarize >= 0:
            values = values[:summarize]
        return str([str(v) for v in values])
    return str(d)


def _eager_fail(data, summarize: int):
    raise InvalidArgumentError(None, None, "\n".join(_pretty(d, summarize) for d in data))


def _label(x: Tensor) -> str:
    """How an error names a tensor: its graph name, or (eagerly) its shape and dtype."""
    if isinstance(x, SymbolicTensor):
        return x.name
    return f"shape={x.shape} dtype={x.dtype.name}"


def _binary_assert(kind: str, x, y, data, summarize, message, name):
    symbol = _SYMBOLS[kind]
    with name_scope(name, f"assert_{kind}"):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y")
        limit = 3 if summarize is None else int(summarize)
        condition = _COMPARE[kind](x, y)
        if context.executing_eagerly():
            ok = np.asarray(condition.numpy())
            if ok.all():
                return None
            if data is not None:
                _eager_fail(data, limit)
            lines = [message] if message else []
            lines.append(f"Condition x {symbol} y did not hold.")
            xs, ys = x.numpy(), y.numpy()
            if xs.shape == ys.shape and xs.ndim:
                bad = ~ok
                n = min(limit, int(bad.sum())) if limit >= 0 else int(bad.sum())
                lines += [f"Indices of first {n} different values:", str(np.argwhere(bad)[:n]),
                          "Corresponding x values:", str(xs[bad].reshape(-1)[:n]),
                          "Corresponding y values:", str(ys[bad].reshape(-1)[:n])]
            if limit:
                fx, fy = xs.reshape(-1), ys.reshape(-1)
                nx = min(fx.size, limit) if limit >= 0 else fx.size
                ny = min(fy.size, limit) if limit >= 0 else fy.size
                lines += [f"First {nx} elements of x:", str(fx[:nx]),
                          f"First {ny} elements of y:", str(fy[:ny])]
            raise InvalidArgumentError(None, None, "\n".join(lines))
        condition = reduce_all(condition)
        static = constant_value(condition)
        if (static is not None and bool(static)) or (x is y and kind in _REFLEXIVE):
            return no_op()
        if data is None:
            data = [f"Condition x {symbol} y did not hold element-wise:", f"x ({_label(x)}) = ",
                    x, f"y ({_label(y)}) = ", y]
        if message is not None:
            data = [message] + list(data)
        xs, ys = constant_value(x), constant_value(y)
        if xs is not None and ys is not None and not np.all(_NUMPY[kind](xs, ys)):
            # known to fail: TF raises while building the graph (_assert_static)
            raise InvalidArgumentError(None, None, "\n".join(_static_text(d) for d in data))
        return Assert(condition, data, summarize)


def _static_text(d) -> str:
    """A data item of a statically failing assert as TF prints it: a tensor's constant value,
    anything else as str."""
    if isinstance(d, Tensor):
        value = constant_value(d)
        return str(d) if value is None else str(value)
    return str(d)


def _unary_assert(kind: str, text: str, x, data, summarize, message, name):
    """x {op} 0 element-wise (TF builds these on the binary asserts with its own data)."""
    with name_scope(name, f"assert_{text}"):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message or "", f"Condition x {_SYMBOLS[kind]} 0 did not hold element-wise:",
                    f"x ({_label(x)}) = ", x]
        return _binary_assert(kind, x, convert_to_tensor(0, x.dtype), data, summarize,
                              message, None)


def _binary(kind: str):
    @tf_export(f"debugging.assert_{kind}", *(["assert_" + kind] if kind in
                                            ("equal", "greater", "less") else []), v1=[])
    def assert_v2(x, y, message=None, summarize=None, name=None):
        return _binary_assert(kind, x, y, None, summarize, message, name)

    @tf_export(v1=[f"debugging.assert_{kind}", f"assert_{kind}"])
    def assert_v1(x, y, data=None, summarize=None, message=None, name=None):
        return _binary_assert(kind, x, y, data, summarize, message, name)

    assert_v2.__name__ = assert_v1.__name__ = f"assert_{kind}"
    assert_v2.__doc__, assert_v1.__doc__ = binary_doc(kind, False), binary_doc(kind, True)
    return assert_v2, assert_v1


assert_equal, assert_equal_v1 = _binary("equal")
assert_none_equal, assert_none_equal_v1 = _binary("none_equal")
assert_less, assert_less_v1 = _binary("less")
assert_less_equal, assert_less_equal_v1 = _binary("less_equal")
assert_greater, assert_greater_v1 = _binary("greater")
assert_greater_equal, assert_greater_equal_v1 = _binary("greater_equal")


def _unary(text: str, kind: str):
    @tf_export(f"debugging.assert_{text}", v1=[])
    def assert_v2(x, message=None, summarize=None, name=None):
        return _unary_assert(kind, text, x, None, summarize, message, name)

    @tf_export(v1=[f"debugging.assert_{text}", f"assert_{text}"])
    def assert_v1(x, data=None, summarize=None, message=None, name=None):
        return _unary_assert(kind, text, x, data, summarize, message, name)

    assert_v2.__name__ = assert_v1.__name__ = f"assert_{text}"
    assert_v2.__doc__, assert_v1.__doc__ = unary_doc(text, False), unary_doc(text, True)
    return assert_v2, assert_v1


assert_positive, assert_positive_v1 = _unary("positive", "greater")
assert_negative, assert_negative_v1 = _unary("negative", "less")
assert_non_negative, assert_non_negative_v1 = _unary("non_negative", "greater_equal")
assert_non_positive, assert_non_positive_v1 = _unary("non_positive", "less_equal")


@tf_export("debugging.assert_near", v1=[])
def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """|x - y| <= atol + rtol * |y| element-wise (default tolerances 10 eps of the dtype)."""
    return assert_near_v1(x, y, rtol, atol, None, summarize, message, name)


@tf_export(v1=["debugging.assert_near", "assert_near"])
def assert_near_v1(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                   name=None):
    """Checks `|x - y| <= atol + rtol * |y|` for every element (TF1 signature).

    Args:
      x: a numeric tensor.
      y: a tensor of x's dtype, broadcastable against `x`.
      rtol: relative tolerance; None means 10 * eps of the dtype.
      atol: absolute tolerance; None means 10 * eps of the dtype.
      data: optional list of tensors printed if the run-time check fails.
      summarize: how many entries of each tensor to print.
      message: text prefixed to the error message.
      name: optional name scope.

    Returns:
      None when executing eagerly (the check has passed); in a graph, the `Assert` op.

    Raises:
      InvalidArgumentError: if executing eagerly and some element is not close.

    Example:
      >>> tf.compat.v1.assert_near([1.0, 2.0], [1.0, 2.0 + 1e-7])
    """
    with name_scope(name, "assert_near"):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y")
        eps = np.finfo(x.dtype.np_dtype).eps if x.dtype.is_floating else 0
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, x.dtype, name="rtol")
        atol = convert_to_tensor(10 * eps if atol is None else atol, x.dtype, name="atol")
        if data is None:
            data = [message or "",
                    f"x and y not equal to tolerance rtol = {rtol!s}, atol = {atol!s}",
                    f"x ({_label(x)}) = ", x, f"y ({_label(y)}) = ", y]
        tol = atol + rtol * tf_abs(y)
        condition = reduce_all(comparison.less_equal(tf_abs(x - y), tol))
        return Assert(condition, data, summarize)


def _rank_assert(x, ok, want: str, data, summarize, message, name, default: str):
    with name_scope(name, default):
        x = convert_to_tensor(x, name="x")
        prefix = f"{message} " if message else ""
        label = "" if context.executing_eagerly() else x.name
        r = x.shape.rank
        if r is not None:
            if not ok(r):
                raise ValueError(f"{prefix}Tensor {label} must have rank {want}.  Received rank "
                                 f"{r}, shape {x.shape}")
            return None if context.executing_eagerly() else no_op()
        condition = ok(tf_rank(x))
        if data is None:
            data = [message or "", f"Tensor {x.name} must have rank {want}.", "Received shape: ",
                    x]
        return Assert(condition, data, summarize)


@tf_export("debugging.assert_rank", "assert_rank", v1=[])
def assert_rank(x, rank, message=None, name=None):
    return assert_rank_v1(x, rank, None, None, message, name)


@tf_export(v1=["debugging.assert_rank", "assert_rank"])
def assert_rank_v1(x, rank, data=None, summarize=None, message=None, name=None):
    want = int(rank)
    return _rank_assert(x, lambda r: r == want, str(want), data, summarize, message, name,
                        "assert_rank")


@tf_export("debugging.assert_rank_at_least", v1=[])
def assert_rank_at_least(x, rank, message=None, name=None):
    return assert_rank_at_least_v1(x, rank, None, None, message, name)


@tf_export(v1=["debugging.assert_rank_at_least", "assert_rank_at_least"])
def assert_rank_at_least_v1(x, rank, data=None, summarize=None, message=None, name=None):
    want = int(rank)
    return _rank_assert(x, lambda r: r >= want, f"at least {want}", data, summarize, message,
                        name, "assert_rank_at_least")


@tf_export("debugging.assert_rank_in", v1=[])
def assert_rank_in(x, ranks, message=None, name=None):
    return assert_rank_in_v1(x, ranks, None, None, message, name)


@tf_export(v1=["debugging.assert_rank_in", "assert_rank_in"])
def assert_rank_in_v1(x, ranks, data=None, summarize=None, message=None, name=None):
    wanted = tuple(int(r) for r in ranks)

    def ok(r):
        if isinstance(r, Tensor):
            out = comparison.equal(r, wanted[0])
            for w in wanted[1:]:
                out = comparison.logical_or(out, comparison.equal(r, w))
            return out
        return r in wanted
    return _rank_assert(x, ok, f"in {wanted}", data, summarize, message, name,
                        "assert_rank_in")


_RANK_DOC = """Checks that {what}{tf1}.

    In a graph whose shapes are not fully known, the remaining check becomes an `Assert` op that
    fails when it runs.

    Args:
      x: a tensor (or a value convertible to one).
      {arg}{data}
      message: text prefixed to the error message.
      name: optional name scope.

    Returns:
      None when executing eagerly; in a graph, an op to run (or depend on) for the check.

    Raises:
      ValueError: if the static rank {raises}.

    Example:
      >>> {example}
    """
_DATA = """
      data: optional list of tensors printed if the run-time check fails.
      summarize: how many entries of each tensor to print."""


def _rank_docs(name: str, what: str, arg: str, raises: str, example: str,
               example_v1: str) -> dict:
    """The docstrings of the rank assertion `name` and its TF1 spelling `<name>_v1`."""
    words = dict(what=what, arg=arg, raises=raises)
    return {name: _RANK_DOC.format(tf1="", data="", example=example, **words),
            f"{name}_v1": _RANK_DOC.format(tf1=" (TF1 signature)", data=_DATA,
                                           example=example_v1, **words)}


_RANK_DOCS = _rank_docs(
    "assert_rank", "`x` has exactly rank `rank`", "rank: the expected rank (an int).", "differs",
    "tf.debugging.assert_rank(tf.zeros([2, 3]), 2)",
    "tf.compat.v1.assert_rank(tf.zeros([2, 3]), 2)",
) | _rank_docs(
    "assert_rank_at_least", "`x` has rank `rank` or more", "rank: the minimum rank (an int).",
    "is lower", "tf.debugging.assert_rank_at_least(tf.zeros([2, 3]), 1)",
    "tf.compat.v1.assert_rank_at_least(tf.zeros([2, 3]), 2)",
) | _rank_docs(
    "assert_rank_in", "the rank of `x` is one of `ranks`", "ranks: a sequence of allowed ranks.",
    "is not in `ranks`", "tf.debugging.assert_rank_in(tf.zeros([2, 3]), [1, 2])",
    "tf.compat.v1.assert_rank_in(tf.zeros([2]), [1, 2])",
)


@tf_export("debugging.assert_type", v1=["debugging.assert_type", "assert_type"])
def assert_type(tensor, tf_type, message=None, name=None):
    """A static dtype check: TypeError when `tensor`'s dtype is not `tf_type`."""
    tf_type = dtypes.as_dtype(tf_type)
    with name_scope(name, "assert_type"):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype is not tf_type:
            label = "tensor" if context.executing_eagerly() else tensor.name
            raise TypeError(f"{message or ''}{label} must be of type {tf_type!r}; got "
                            f"{tensor.dtype!r}")
        return None if context.executing_eagerly() else no_op("statically_determined_correct_type")


@tf_export("debugging.assert_integer", v1=["debugging.assert_integer", "assert_integer"])
def assert_integer(x, message=None, name=None):
    """A static check that `x` has an integer dtype."""
    with name_scope(name, "assert_integer"):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            label = "tensor" if context.executing_eagerly() else x.name
            raise TypeError(f'{message or ""}Expected "x" to be integer type.  Found: {label} of '
                            f"dtype <dtype: '{x.dtype.name}'>")
        return None if context.executing_eagerly() else no_op("statically_determined_was_integer")


@tf_export("debugging.assert_scalar", v1=[])
def assert_scalar(tensor, message=None, name=None):
    """A static check that `tensor` is a scalar; returns it."""
    return assert_scalar_v1(tensor, name, message)


@tf_export(v1=["debugging.assert_scalar", "assert_scalar"])
def assert_scalar_v1(tensor, name=None, message=None):
    """Checks that `tensor` is a scalar and returns it (TF1 argument order).

    Args:
      tensor: a tensor (or a value convertible to one).
      name: optional name scope.
      message: text prefixed to the error message.

    Returns:
      `tensor` converted to a tensor.

    Raises:
      ValueError: if its static shape is not scalar.

    Example:
      >>> int(tf.compat.v1.assert_scalar(tf.constant(3)))
      3
    """
    with name_scope(name, "assert_scalar"):
        tensor = convert_to_tensor(tensor, name="tensor")
        shape = tensor.shape
        if shape.rank != 0:
            where = "" if context.executing_eagerly() else f" for {tensor.name}"
            raise ValueError(f"{message or ''}Expected scalar shape{where}, saw shape: {shape}.")
        return tensor


@tf_export("debugging.assert_proper_iterable", v1=["debugging.assert_proper_iterable",
                                                   "assert_proper_iterable"])
def assert_proper_iterable(values):
    """TypeError unless `values` is an iterable other than a tensor, array or string."""
    unintentional = (Tensor, np.ndarray, bytes, str)
    if isinstance(values, unintentional):
        raise TypeError('Expected argument "values" to be a "proper" iterable.  Found: '
                        f"{type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError('Expected argument "values" to be iterable.  Found: '
                        f"{type(values)}")


@tf_export("debugging.assert_same_float_dtype", v1=["debugging.assert_same_float_dtype",
                                                    "assert_same_float_dtype"])
def assert_same_float_dtype(tensors=None, dtype=None):
    """The one floating dtype of `tensors` (and `dtype`), float32 when none is given."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise ValueError(f"Expected floating point type, got {dtype!r}.")
    for t in tensors or []:
        if dtype is None:
            dtype = t.dtype
            if not dtype.is_floating:
                raise ValueError(f"Expected floating point type, got {dtype!r}.")
        elif t.dtype is not dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype!r} for Tensor with "
                             f"dtype {t.dtype!r}: {t!r}")
    return dtype or dtypes.float32


@tf_export("debugging.assert_shapes", v1=[])
def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Checks each (tensor, spec) pair: the spec's rank, its integer sizes, and that a symbol
    ('N') names the same size everywhere it appears. Known sizes are checked now (ValueError,
    TF's messages); sizes known only when a graph runs get an Assert op."""
    return assert_shapes_v1(shapes, data, summarize, message, name)


@tf_export(v1=["debugging.assert_shapes"])
def assert_shapes_v1(shapes, data=None, summarize=None, message=None, name=None):
    """Checks the shapes of several tensors against specs with named sizes (TF1 spelling).

    In a graph whose shapes are not fully known, the remaining check becomes an `Assert` op that
    fails when it runs.

    Args:
      shapes: a dict or list of `(tensor, spec)` pairs; a spec lists one entry per axis: an int
        size, a symbol (str) that must name the same size everywhere, or '.'/None for any size.
      data: optional list of tensors printed if the run-time check fails.
      summarize: how many entries of each tensor to print.
      message: text prefixed to the error message.
      name: optional name scope.

    Returns:
      None when executing eagerly or when every size was known; in a graph, an `Assert` op for the
      sizes known only at run time.

    Raises:
      ValueError: if a known rank or size does not match.

    Example:
      >>> tf.compat.v1.debugging.assert_shapes([(tf.zeros([2, 3]), ('N', 3)),
      ...                                       (tf.zeros([2]), ('N',))])
    """
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    prefix = f"{message} " if message else ""
    with name_scope(name, "assert_shapes"):
        symbols: dict = {}
        runtime = []
        for x, spec in items:
            x = convert_to_tensor(x)
            spec = (spec,) if isinstance(spec, (str, int)) and spec != "" else tuple(spec)
            dims = x.shape.as_tuple() if x.shape.rank is not None else None
            if dims is not None and len(dims) != len(spec):
                raise ValueError(f"{prefix}Tensor {_label(x)} must have rank {len(spec)}.  "
                                 f"Received rank {len(dims)}, shape {x.shape}")
            for i, want in enumerate(spec):
                got = None if dims is None else dims[i]
                if want is None or want == ".":
                    continue
                if isinstance(want, str):
                    if want not in symbols:
                        symbols[want] = (x, i, got)
                        continue
                    ref, ref_i, size = symbols[want]
                    if size is None:
                        continue
                    what = (f"Specified by tensor {_label(ref)} dimension {ref_i}.  Tensor "
                            f"{_label(x)} dimension {i} must have size {size}.")
                else:
                    size, what = int(want), (f"Tensor {_label(x)} dimension {i} must have "
                                             f"size {int(want)}.")
                if got is None:
                    runtime.append((x, i, size, what))
                elif got != size:
                    raise ValueError(f"{prefix}{what}  Received size {got}, shape {x.shape}")
        if not runtime or context.executing_eagerly():
            return None if context.executing_eagerly() else no_op()
        checks = [comparison.equal(shape_of(x)[i], size) for x, i, size, _ in runtime]
        condition = reduce_all(stack_(checks))
        text = "; ".join(what for *_, what in runtime)
        return Assert(condition, data if data is not None else [prefix + text], summarize)


attach(globals(), _RANK_DOCS)

"""AutoGraph's operators: what converted code calls (`ag__.if_stmt`, `ag__.for_stmt`, ...).

Each decides at run time, from the type of its condition or iterable, between Python
semantics (a Python bool, a Python iterable: the code runs as written) and staged TensorFlow
control flow (a tensor: `tf.cond`/`tf.while_loop` around the block functions, with the
statement's variables as outputs or loop variables). The checks and messages are
TensorFlow's (tensorflow/python/autograph/operators/control_flow.py), so a user sees the same
error naming the same variable.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.errors import OperatorNotAllowedInGraphError
from ndflow.core.graph import SymbolicTensor
from ndflow.core.nest import assert_same_structure, flatten, map_structure
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import add
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_fill import zeros
from ndflow.ops.comparison import greater, greater_equal, less, logical_and, logical_not, logical_or
from ndflow.ops.control_flow_assert import Assert
from ndflow.runtime import control_flow
from ndflow.runtime.func_graph import FuncGraph, tracing_scope

LEGAL_LOOP_TYPES = "Tensor, int, float, bool or a list, tuple or dict thereof"


# -- undefined values ------------------------------------------------------------------------

class Undefined:
    """The value of a variable that is not defined on some path (TF's `Undefined`)."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name: str):
        self.symbol_name = symbol_name

    def read(self):
        raise UnboundLocalError(f"'{self.symbol_name}' is used before assignment")

    def __repr__(self):
        return self.symbol_name


class UndefinedReturnValue:
    """The return value of a function before a (converted) return statement ran."""


def ld(value):
    """A read of a variable that may be undefined."""
    if isinstance(value, Undefined):
        return value.read()
    return value


def ld_or_undefined(read, symbol_name: str):
    """The variable's value, or `Undefined` where it is not bound yet."""
    try:
        return read()
    except NameError:
        return Undefined(symbol_name)


def retval(value):
    """A converted function's return value (None when no return statement ran)."""
    return None if isinstance(value, UndefinedReturnValue) else value


def _is_null(value) -> bool:
    return value is None or isinstance(value, (Undefined, UndefinedReturnValue))


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


# -- checks ----------------------------------------------------------------------------------

def _as_tensor_if_literal(v):
    if isinstance(v, (bool, int, float, str, np.ndarray)):
        return convert_to_tensor(v)
    return v


def _is_subshape(left: TensorShape, right: TensorShape) -> bool:
    if right.rank is None:
        return True
    if left.rank != right.rank:
        return False
    return all(r is None or l_ == r for l_, r in zip(left.as_tuple(), right.as_tuple()))


def _verify_condition(cond, tag: str):
    cond = convert_to_tensor(cond)
    hint = "to check for None, use `is not None`"
    if cond.dtype is not dtypes.bool:
        raise ValueError(f"condition of {tag} expected to be `tf.bool` scalar, got {cond}; "
                         f"to use as boolean Tensor, use `tf.cast`; {hint}")
    if cond.shape.rank is None:
        return reshape(cond, [])
    if cond.shape.rank > 0:
        known = [d for d in cond.shape.as_tuple() if d is not None]
        if int(np.prod(known)) > 1:
            raise ValueError(f"condition of {tag} expected to be `tf.bool` scalar, got {cond}; "
                             f"{hint}")
        return reshape(cond, [])
    return cond


def _verify_loop_init_vars(init_vars, names, first_iter_vars=None, extra: str | None = None):
    first_iter_vars = first_iter_vars or (None,) * len(names)
    for name, val, first in zip(names, init_vars, first_iter_vars):
        if isinstance(val, UndefinedReturnValue):
            if first:
                raise ValueError("the return value from a TensorFlow loop may only be a "
                                 f"{LEGAL_LOOP_TYPES}; got {type(first)}")
            raise NotImplementedError(
                "a return statement cannot be placed inside this TensorFlow loop; this may "
                "happen if a return statement depends on a static Python condition such as a "
                "hyperparameter")
        if val is None:
            raise ValueError(f"'{name}' is not allowed to be None before the loop")
        if isinstance(val, Undefined):
            raise ValueError(f"'{name}' must be defined before the loop" +
                             (f"\n{extra}" if extra else ""))


def _verify_loop_var(name: str, entry, exit_, invariant) -> None:
    if exit_ is None:
        raise ValueError(f"'{name}' is None at the end of the iteration.")
    entry, exit_ = _as_tensor_if_literal(entry), _as_tensor_if_literal(exit_)
    if not (is_tensor(entry) and is_tensor(exit_)):
        return
    if entry.dtype is not exit_.dtype:
        raise TypeError(f"'{name}' has dtype {entry.dtype.name} before the loop, but dtype "
                        f"{exit_.dtype.name} after one iteration")
    if invariant is None:
        if not _is_subshape(exit_.shape, entry.shape):
            raise ValueError(
                f"'{name}' has shape {entry.shape} before the loop, but shape {exit_.shape} "
                "after one iteration. Use tf.autograph.experimental.set_loop_options to set "
                "shape invariants.")
    elif not _is_subshape(exit_.shape, invariant):
        raise ValueError(f"'{name}' has shape {exit_.shape} after one iteration, which does "
                         f"not conform with the shape invariant {invariant}.")


def _paired_leaves(first, second, mismatch: str):
    """The leaves of `first` and `second` in pairs; TypeError(`mismatch` + why) where the
    two differ in structure."""
    try:
        assert_same_structure(first, second)
    except (ValueError, TypeError) as e:
        raise TypeError(f"{mismatch}{e}") from e
    return zip(flatten(first), flatten(second))


def _verify_loop_vars(init_vars, entry_vars, exit_vars, names, invariants) -> None:
    for name, entry, exit_, inv in zip(names, entry_vars, exit_vars, invariants):
        for en, ex in _paired_leaves(entry, exit_, f"'{name}' does not have the same nested "
                                     "structure after one iteration.\n\n"):
            _verify_loop_var(name, en, ex, inv)


def _verify_cond_branch_vars(vars_, names, branch: str) -> None:
    for name, v in zip(names, vars_):
        if isinstance(v, Undefined):
            raise ValueError(f"'{name}' must also be initialized in the {branch} branch")
        if isinstance(v, UndefinedReturnValue):
            raise ValueError(f"the {branch} branch must also have a return statement.")


def _verify_cond_vars(body_vars, orelse_vars, names) -> None:
    for name, b, o in zip(names, body_vars, orelse_vars):
        for bv, ov in _paired_leaves(b, o, f"'{name}' must have the same nested structure in "
                                     "the main and else branches:\n\n"):
            if bv is None:
                raise ValueError(f"'{name}' is None at the end of the main branch.")
            if ov is None:
                raise ValueError(f"'{name}' is None at the end of the else branch.")
            bv, ov = _as_tensor_if_literal(bv), _as_tensor_if_literal(ov)
            if is_tensor(bv) and is_tensor(ov) and bv.dtype is not ov.dtype:
                raise TypeError(f"'{name}' has dtype {bv.dtype.name} in the main branch, but "
                                f"dtype {ov.dtype.name} in the else branch")


# -- if --------------------------------------------------------------------------------------

def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts):
    """`if cond: body() else: orelse()`; a tensor `cond` stages tf.cond over the state."""
    if is_tensor(cond):
        _tf_if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts)
    elif cond:
        body()
    else:
        orelse()


def _tf_if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts):
    if not nouts:  # a conditional with no outputs still needs one (TF adds a dummy)
        prev_get, prev_set = get_state, set_state
        get_state = lambda: (0,) + prev_get()  # noqa: E731
        set_state = lambda v: prev_set(v[1:])  # noqa: E731
        symbol_names = ("<unused dummy>",) + tuple(symbol_names)
        nouts = 1
    init_vars = get_state()
    seen: dict = {}

    def branch(fn, label: str, other: str):
        def run():
            set_state(init_vars)
            fn()
            out = get_state()[:nouts]
            seen[label] = out
            _verify_cond_branch_vars(out, symbol_names, label)
            if other in seen:
                pair = (out, seen[other]) if label == "main" else (seen[other], out)
                _verify_cond_vars(*pair, symbol_names)
            return out
        return run

    final = control_flow.cond(cond, branch(body, "main", "else"), branch(orelse, "else", "main"))
    set_state(tuple(final) + tuple(init_vars[nouts:]))


def if_exp(cond, if_true, if_false, expr_repr: str):
    """`a if cond else b`."""
    if is_tensor(cond):
        return control_flow.cond(cond, if_true, if_false)
    return if_true() if cond else if_false()


# -- assert ----------------------------------------------------------------------------------

def assert_stmt(expression, message):
    """`assert expression, message()` (with the ASSERT_STATEMENTS feature); a tensor stages
    tf.debugging.Assert."""
    if not callable(message):
        raise ValueError(f"{message} must be a callable")
    if is_tensor(expression):
        data = message()
        return Assert(expression, data if isinstance(data, list) else [data])
    assert expression, message()
    return None


# -- logical operators -----------------------------------------------------------------------

def and_(a, b):
    """`a and b` with lazy operands; tensors stage `tf.cond` (b runs only where a holds)."""
    a_val = a()
    if is_tensor(a_val):
        return _tf_lazy(a_val, b, and_=True)
    return a_val and b()


def or_(a, b):
    a_val = a()
    if is_tensor(a_val):
        return _tf_lazy(a_val, b, and_=False)
    return a_val or b()


def _tf_lazy(a_val, b, and_: bool):
    if not isinstance(a_val, SymbolicTensor):  # eager: Python's short circuit on the value
        if bool(a_val) != and_:
            return a_val
        return convert_to_tensor(b())
    if and_:
        return control_flow.cond(a_val, lambda: convert_to_tensor(b()), lambda: a_val)
    return control_flow.cond(a_val, lambda: a_val, lambda: convert_to_tensor(b()))


def not_(a):
    if is_tensor(a):
        return logical_not(a)
    return not a


def _scratch_graph() -> FuncGraph:
    """A throwaway graph for staging code once to learn about it (TF's FuncGraph('tmp'))."""
    return FuncGraph("tmp", None if context.executing_eagerly() else
                     context.get_default_graph())


# -- while -----------------------------------------------------------------------------------

def while_stmt(test, body, get_state, set_state, symbol_names, opts):
    """`while test(): body()`; a tensor test stages tf.while_loop over the loop variables."""
    with tracing_scope(_scratch_graph()):  # the test is evaluated once to dispatch on its type
        init_test = test()
    if is_tensor(init_test):
        _tf_while_stmt(test, body, get_state, set_state, symbol_names, opts)
        return
    if not init_test:
        return
    body()
    _py_while_stmt(test, body)


def _py_while_stmt(test, body):
    while _python_bool(test(), "The condition of while loop started as non-Tensor, then "
                       "changed to Tensor. This may happen either because variables changed "
                       "type, or when a break or return statement inside the loop depends on "
                       "a Tensor condition. In both cases, changing to a TF loop should "
                       "remove the error."):
        body()


def _python_bool(value, message: str) -> bool:
    try:
        return bool(value)
    except OperatorNotAllowedInGraphError as e:
        raise NotImplementedError(message) from e


def _placeholder_value(like, original):
    """A zero value shaped as `like` (a loop variable after one iteration) to enter the loop
    with, for a variable undefined before it (TF's _placeholder_value)."""
    if like is None or isinstance(like, (Undefined, UndefinedReturnValue)):
        return original
    if isinstance(like, (bool, int, float)):
        return type(like)(0)
    if is_tensor(like):
        if like.shape.rank is None:
            return zeros([], like.dtype)
        return zeros([0 if d is None else d for d in like.shape.as_tuple()], like.dtype)
    if isinstance(like, (list, tuple, dict)):
        return map_structure(lambda v: _placeholder_value(v, original), like)
    raise TypeError(f"Found an unsupported type '{type(like).__name__}' while creating "
                    f"placeholder for {like}. Supported types include Tensor, int, float, "
                    "bool, list, tuple or dict.")


def _try_handling_undefineds(body, get_state, set_state, init_vars, nulls, symbol_names):
    """Stages one iteration in a scratch graph to learn the types of variables first defined
    inside the loop, and enters the loop with zeros of those types."""
    first_iter_vars, failure = None, None
    try:
        with tracing_scope(_scratch_graph()):
            set_state(tuple(_as_tensor_if_literal(v) if not _is_null(v) else v
                            for v in init_vars))
            body()
            first_iter_vars = get_state()
        init_vars = tuple(_placeholder_value(f, v) if n else v
                          for v, n, f in zip(init_vars, nulls, first_iter_vars))
    except (UnboundLocalError, TypeError, ValueError, KeyError) as e:
        failure = ("Note: AutoGraph tried to define it automatically, but ran into a "
                   f"{type(e).__name__}: {e}")
    finally:
        set_state(init_vars)
    _verify_loop_init_vars(init_vars, symbol_names, first_iter_vars, failure)
    return init_vars


def _tf_while_stmt(test, body, get_state, set_state, symbol_names, opts):
    init_vars = orig_init_vars = tuple(get_state())
    nulls = tuple(_is_null(v) for v in init_vars)
    require_one = any(nulls)
    if require_one:
        init_vars = _try_handling_undefineds(body, get_state, set_state, init_vars, nulls,
                                             symbol_names)
    else:
        _verify_loop_init_vars(init_vars, symbol_names)
    invariants = _invariants_by_position(opts.get("shape_invariants", ()), init_vars)

    def aug_test(*loop_vars):
        if require_one:
            loop_vars = loop_vars[1:]
        set_state(loop_vars)
        return _verify_condition(test(), "while loop")

    def aug_body(*loop_vars):
        if require_one:
            loop_vars = loop_vars[1:]
        set_state(loop_vars)
        body()
        new_vars = tuple(get_state())
        _verify_loop_vars(init_vars, loop_vars, new_vars, symbol_names, invariants)
        return ((True,) + new_vars) if require_one else new_vars

    loop_vars = ((False,) + init_vars) if require_one else init_vars
    kwargs = {}
    if any(i is not None for i in invariants):
        kwargs["shape_invariants"] = (([TensorShape([])] if require_one else []) +
                                      [_invariant_or_shape(i, v) for i, v in
                                       zip(invariants, init_vars)])
    for key in ("parallel_iterations", "swap_memory", "maximum_iterations"):
        if opts.get(key) is not None:
            kwargs[key] = opts[key]
    if not loop_vars:
        raise ValueError("'loop_vars' must be provided.")
    final = control_flow.while_loop(aug_test, aug_body, loop_vars, **kwargs)
    final = tuple(final) if isinstance(final, (list, tuple)) else (final,)
    if require_one:
        names = ", ".join("the function return value" if isinstance(v, UndefinedReturnValue)
                          else n for n, v, null in zip(symbol_names, orig_init_vars, nulls)
                          if null)
        Assert(final[0], [f"loop must iterate at least once to initialize {names}"])
        final = final[1:]
    set_state(final)


def _invariants_by_position(pairs, init_vars) -> list:
    """set_loop_options(shape_invariants=[(var, shape), ...]) matched to loop variables by
    identity, as TF does."""
    by_id = {id(v): TensorShape(s) if not isinstance(s, TensorShape) else s for v, s in pairs}
    return [by_id.get(id(v)) for v in init_vars]


def _invariant_or_shape(invariant, value):
    if invariant is not None:
        return invariant
    return [convert_to_tensor(v).shape for v in flatten(value)] if isinstance(
        value, (list, tuple, dict)) else convert_to_tensor(value).shape


# -- for -------------------------------------------------------------------------------------

def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """`for target in iter_: body(target)`: a tensor (its rows, or a tf.range's values)
    stages tf.while_loop; a tf.data dataset or iterator in a graph stages its own loop (its
    `_autograph_for_stmt`); anything else is a Python loop."""
    staged_loop = getattr(iter_, "_autograph_for_stmt", None)
    if staged_loop is not None and not context.executing_eagerly():
        staged_loop(extra_test, body, get_state, set_state, symbol_names, opts)
        return
    if is_tensor(iter_):
        if isinstance(iter_, SymbolicTensor) and iter_.op.type == "Range":
            _tf_range_for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names,
                               opts)
        else:
            _known_len_tf_for_stmt(iter_, extra_test, body, get_state, set_state,
                                   symbol_names, opts)
        return
    _py_for_stmt(iter_, extra_test, body)


def _py_for_stmt(iter_, extra_test, body):
    message = ("break and return statements which depend on a TF condition are not supported "
               "in Python for loops. Did you intend to make it a TF loop?")
    if extra_test is None:
        for target in iter_:
            body(target)
        return
    if not _python_bool(extra_test(), message):
        return
    for target in iter_:
        body(target)
        if not _python_bool(extra_test(), message):
            break


class _Ref:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _indexed_while(index: _Ref, step, main_test, extra_test, body_at, get_state, set_state,
                   symbol_names, opts, index_for=None):
    """The while loop a tensor for loop becomes: `index` is an extra loop variable."""
    iterate_names = opts.get("iterate_names")

    def aug_get_state():
        state = tuple(get_state())
        if index_for is not None:  # TF: an iterate undefined before the loop starts at `start`
            state = tuple(index_for(index.value) if n == iterate_names and
                          isinstance(v, Undefined) else v for n, v in zip(symbol_names, state))
        return (index.value,) + state

    def aug_set_state(values):
        index.value = values[0]
        set_state(tuple(values[1:]))

    def aug_body():
        body_at(index.value)
        index.value = step(index.value)

    def aug_test():
        test = main_test(index.value)
        if extra_test is not None:
            return control_flow.cond(test, lambda: convert_to_tensor(extra_test()),
                                     lambda: test)
        return test

    _tf_while_stmt(aug_test, aug_body, aug_get_state, aug_set_state,
                   ("<internal iterate>",) + tuple(symbol_names),
                   {k: v for k, v in opts.items() if k != "iterate_names"})


def _tf_range_for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    start, limit, delta = iter_.op.inputs
    static_delta = constant_value(delta)

    def main_test(i):
        if static_delta is not None:
            return less(i, limit) if static_delta >= 0 else greater(i, limit)
        return logical_or(logical_and(greater_equal(delta, 0), less(i, limit)),
                          logical_and(less(delta, 0), greater(i, limit)))

    _indexed_while(_Ref(start), lambda i: add(i, delta), main_test, extra_test, body,
                   get_state, set_state, symbol_names, opts, index_for=lambda i: i)


def _known_len_tf_for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    if iter_.shape.rank == 0:
        raise ValueError("len requires a non-scalar tensor, got one of shape []")
    n = iter_.shape.as_tuple()[0] if iter_.shape.rank is not None else None
    n = shape(iter_)[0] if n is None else convert_to_tensor(n, dtypes.int32)
    _indexed_while(_Ref(convert_to_tensor(0, dtypes.int32)), lambda i: add(i, 1),
                   lambda i: less(i, n), extra_test, lambda i: body(iter_[i]),
                   get_state, set_state, symbol_names, opts)

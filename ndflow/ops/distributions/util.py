"""Helpers of TF1's `tf.distributions` (TF's `ops/distributions/util.py`): logits and probs
from either one, the embedded argument checks (asserts run with the value that uses them),
`gen_new_seed` and `log_combinations`."""

from __future__ import annotations

import hashlib

import numpy as np

from ndflow.core import dtypes
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import check_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import log
from ndflow.ops.array_core import constant, identity, shape
from ndflow.ops.cast import cast
from ndflow.ops.math import log1p, sigmoid
from ndflow.ops.math_special import lgamma
from ndflow.ops.nn_activation import softmax
from ndflow.ops.reduction import reduce_sum


def with_dependencies(deps: list, t: Tensor) -> Tensor:
    """`t`, after `deps` (eager asserts have already run)."""
    deps = [d for d in deps if d is not None]
    if not deps:
        return t
    with control_dependencies(deps):
        return identity(t)


_KNOWN = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "bool")


def _is_known_dtype(dt) -> bool:
    return dt.base_dtype.name in _KNOWN


def _is_integer_like_by_dtype(dt) -> bool:
    if not _is_known_dtype(dt):
        raise TypeError(f"Unrecognized dtype: {dt.name}")
    return dt.is_integer or dt.base_dtype == dtypes.bool


def largest_integer_by_dtype(dt) -> int:
    """The largest integer a dtype holds exactly (2**(mantissa bits + 1) for floats)."""
    if not _is_known_dtype(dt):
        raise TypeError(f"Unrecognized dtype: {dt.name}")
    if dt.is_floating:
        return int(2 ** (np.finfo(dt.as_numpy_dtype).nmant + 1))
    if dt.is_integer:
        return int(np.iinfo(dt.as_numpy_dtype).max)
    return 1


def _smallest_integer_by_dtype(dt) -> int:
    if dt.base_dtype.name in ("bool", "uint8", "uint16"):
        return 0
    return -largest_integer_by_dtype(dt)


def assert_integer_form(x, message=None, int_dtype=None, name="assert_integer_form"):
    """Asserts that the floats of `x` are whole numbers (a cast round trip keeps them)."""
    with name_scope(name, "assert_integer_form"):
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_integer:
            return None
        if int_dtype is None:
            int_dtype = {dtypes.float16: dtypes.int16, dtypes.float32: dtypes.int32,
                         dtypes.float64: dtypes.int64}.get(x.dtype.base_dtype)
            if int_dtype is None:
                raise TypeError(f"Unrecognized type {x.dtype.name}")
        return check_ops.assert_equal_v1(x, cast(cast(x, int_dtype), x.dtype), message=message)


def embed_check_integer_casting_closed(x, target_dtype, assert_nonnegative=True,
                                       name="embed_check_casting_closed"):
    """`x`, checked (when used) to cast to `target_dtype` and back unchanged."""
    with name_scope(name, "embed_check_casting_closed"):
        x = convert_to_tensor(x, name="x")
        if not _is_integer_like_by_dtype(x.dtype) and not x.dtype.is_floating:
            raise TypeError(f"{x.dtype.name}.dtype must be floating- or integer-type.")
        if not _is_integer_like_by_dtype(target_dtype) and not target_dtype.is_floating:
            raise TypeError(f"target_dtype ({target_dtype.name}) must be floating- or "
                            "integer-type.")
        if not _is_integer_like_by_dtype(x.dtype) and \
                not _is_integer_like_by_dtype(target_dtype):
            raise TypeError(f"At least one of {x}.dtype ({x.dtype.name}) and target_dtype "
                            f"({target_dtype.name}) must be integer-type.")
        deps = []
        if assert_nonnegative:
            deps.append(check_ops.assert_non_negative_v1(
                x, message="Elements must be non-negative."))
        if x.dtype.is_floating:
            deps.append(assert_integer_form(
                x, int_dtype=target_dtype,
                message=f"Elements must be {target_dtype.name}-equivalent."))
        else:
            top = largest_integer_by_dtype(target_dtype)
            if largest_integer_by_dtype(x.dtype) > top:
                deps.append(check_ops.assert_less_equal_v1(
                    x, top, message=f"Elements cannot exceed {top}."))
            low = _smallest_integer_by_dtype(target_dtype)
            if not assert_nonnegative and _smallest_integer_by_dtype(x.dtype) < low:
                deps.append(check_ops.assert_greater_equal_v1(
                    x, low, message=f"Elements cannot be smaller than {low}."))
        return with_dependencies(deps, x)


def embed_check_categorical_event_shape(categorical_param,
                                        name="embed_check_categorical_event_shape"):
    """`categorical_param`, checked to have >= 2 events, no more than its dtype counts."""
    with name_scope(name, "embed_check_categorical_event_shape"):
        x = convert_to_tensor(categorical_param, name="categorical_param")
        x_dtype = x.dtype.base_dtype
        max_event_size = largest_integer_by_dtype(x_dtype) if x_dtype.is_floating else 0
        if max_event_size == 0:
            raise TypeError(f"Unable to validate size of unrecognized dtype ({x_dtype.name}).")
        try:
            static = with_rank_at_least(x.shape, 1)
        except ValueError:
            raise ValueError("A categorical-distribution parameter must have at least 1 "
                             "dimension.") from None
        if static.rank is not None and static[-1] is not None:
            event_size = static[-1]
            if event_size < 2:
                raise ValueError("A categorical-distribution parameter must have at least 2 "
                                 "events.")
            if event_size > max_event_size:
                raise ValueError(f"Number of classes exceeds `dtype` precision, i.e., "
                                 f"{x_dtype.name} implies shape ({event_size}) cannot exceed "
                                 f"{max_event_size}.")
            return x
        event_size = shape(x, name="x_shape")[-1]
        return with_dependencies([
            check_ops.assert_rank_at_least_v1(
                x, 1, message="A categorical-distribution parameter must have at least 1 "
                              "dimension."),
            check_ops.assert_greater_equal_v1(
                shape(x)[-1], 2,
                message="A categorical-distribution parameter must have at least 2 events."),
            check_ops.assert_less_equal_v1(
                event_size, max_event_size,
                message=f"Number of classes exceeds `dtype` precision, i.e., {x_dtype.name} "
                        f"dtype cannot exceed {max_event_size} shape."),
        ], x)


def embed_check_nonnegative_integer_form(x, name="embed_check_nonnegative_integer_form"):
    """`x`, checked to hold non-negative whole numbers."""
    with name_scope(name, "embed_check_nonnegative_integer_form"):
        x = convert_to_tensor(x, name="x")
        deps = [check_ops.assert_non_negative_v1(x, message=f"'{x}' must be non-negative.")]
        if not x.dtype.is_integer:
            deps.append(assert_integer_form(
                x, message=f"'{x}' cannot contain fractional components."))
        return with_dependencies(deps, x)


def total_count_tensor(total_count, validate_args: bool):
    """A (multinomial's) `total_count` as a tensor, checked to be non-negative integers with
    `validate_args`."""
    total_count = convert_to_tensor(total_count, name="total_count")
    return embed_check_nonnegative_integer_form(total_count) if validate_args else total_count


def embed_check_counts(counts, total_count, message: str):
    """`counts` checked to be non-negative integers summing to `total_count` over the last
    axis (`message` where they do not)."""
    counts = embed_check_nonnegative_integer_form(counts)
    return with_dependencies([check_ops.assert_equal_v1(
        total_count, reduce_sum(counts, -1), message=message)], counts)


def get_logits_and_probs(logits=None, probs=None, multidimensional=False, validate_args=False,
                         name="get_logits_and_probs", dtype=None):
    """(logits, probs) from exactly one of them: sigmoid/softmax of logits, or log-odds/log
    of probs (checked in [0, 1], summing to 1 when multidimensional, with validate_args)."""
    with name_scope(name, "get_logits_and_probs"):
        if (probs is None) == (logits is None):
            raise ValueError("Must pass probs or logits, but not both.")
        if probs is None:
            logits = convert_to_tensor(logits, dtype=dtype, name="logits")
            if not logits.dtype.is_floating:
                raise TypeError("logits must having floating type.")
            if multidimensional:
                if validate_args:
                    logits = embed_check_categorical_event_shape(logits)
                return logits, softmax(logits, name="probs")
            return logits, sigmoid(logits, name="probs")
        probs = convert_to_tensor(probs, dtype=dtype, name="probs")
        if not probs.dtype.is_floating:
            raise TypeError("probs must having floating type.")
        if validate_args:
            with name_scope("validate_probs"):
                one = constant(1.0, probs.dtype)
                deps = [check_ops.assert_non_negative_v1(probs)]
                if multidimensional:
                    probs = embed_check_categorical_event_shape(probs)
                    deps.append(check_ops.assert_near_v1(
                        reduce_sum(probs, -1), one, message="probs does not sum to 1."))
                else:
                    deps.append(check_ops.assert_less_equal_v1(
                        probs, one, message="probs has components greater than 1."))
                probs = with_dependencies(deps, probs)
        with name_scope("logits"):
            if multidimensional:
                return log(probs), probs
            return log(probs) - log1p(-1.0 * probs), probs


def gen_new_seed(seed, salt: str):
    """A new op seed from `seed` and `salt` (None stays None), as TF derives it."""
    if seed is None:
        return None
    return int(hashlib.md5((str(seed) + salt).encode("utf-8")).hexdigest()[:8], 16) & 0x7FFFFFFF


def log_combinations(n, counts, name="log_combinations"):
    """log(n! / prod(counts!)) over the last axis of counts."""
    with name_scope(name, "log_combinations"):
        n = convert_to_tensor(n, name="n")
        counts = convert_to_tensor(counts, name="counts")
        return lgamma(n + 1) - reduce_sum(lgamma(counts + 1), axis=[-1])


def with_rank_at_least(s: TensorShape, rank: int) -> TensorShape:
    """`s`, which must have at least `rank` dimensions when its rank is known."""
    if s.rank is not None and s.rank < rank:
        raise ValueError(f"Shape {s} must have rank at least {rank}")
    return s

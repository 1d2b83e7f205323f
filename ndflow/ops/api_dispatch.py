"""Dispatch of TensorFlow APIs to user functions for ExtensionType arguments:
`tf.experimental.dispatch_for_api`, `dispatch_for_unary_elementwise_apis`,
`dispatch_for_binary_elementwise_apis` and `unregister_dispatch_for`.

    @tf.experimental.dispatch_for_api(tf.math.add)
    def masked_add(x: MaskedTensor, y: MaskedTensor, name=None): ...

Registering for an API replaces its public object, in every `tf.*` namespace that holds it,
by a wrapper (until its last dispatch is unregistered); a call whose arguments hold no
ExtensionType goes straight through (one scan of the arguments), otherwise the first
registered target whose annotated parameters all match the arguments runs. Elementwise
handlers are called as TF calls them: `handler(api_func, x)` or `handler(api_func, x, y)`,
`api_func` being the API with its other arguments bound. The API lists are TensorFlow
2.21's (`dispatch._UNARY_ELEMENTWISE_APIS` and `_BINARY_ELEMENTWISE_APIS`); names ndflow
lacks are skipped.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import sys
import typing

import numpy as np

from ndflow.core import api_export, lazy_api
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.extension_type import ExtensionType
from ndflow.ops.extension_type_field import is_list, is_tuple, is_union, type_args

UNARY_ELEMENTWISE_APIS = """bitwise.invert cast clip_by_value debugging.check_numerics
dtypes.saturate_cast image.adjust_brightness image.adjust_gamma image.convert_image_dtype
image.random_brightness image.stateless_random_brightness io.decode_base64
io.decode_compressed io.encode_base64 math.abs math.acos math.acosh math.angle math.asin
math.asinh math.atan math.atanh math.bessel_i0 math.bessel_i0e math.bessel_i1 math.bessel_i1e
math.ceil math.conj math.cos math.cosh math.digamma math.erf math.erfc math.erfcinv math.erfinv
math.exp math.expm1 math.floor math.imag math.is_finite math.is_inf math.is_nan math.lgamma
math.log math.log1p math.log_sigmoid math.logical_not math.ndtri math.negative math.nextafter
math.real math.reciprocal math.reciprocal_no_nan math.rint math.round math.rsqrt math.sigmoid
math.sign math.sin math.sinh math.softplus math.special.bessel_j0 math.special.bessel_j1
math.special.bessel_k0 math.special.bessel_k0e math.special.bessel_k1 math.special.bessel_k1e
math.special.bessel_y0 math.special.bessel_y1 math.special.dawsn math.special.expint
math.special.fresnel_cos math.special.fresnel_sin math.special.spence math.sqrt math.square
math.tan math.tanh nn.elu nn.gelu nn.leaky_relu nn.log_softmax nn.relu nn.relu6 nn.selu
nn.silu nn.softsign ones_like strings.as_string strings.length strings.lower
strings.regex_full_match strings.regex_replace strings.strip strings.substr
strings.to_hash_bucket strings.to_hash_bucket_fast strings.to_hash_bucket_strong
strings.to_number strings.unicode_script strings.unicode_transcode strings.upper
zeros_like""".split()
BINARY_ELEMENTWISE_APIS = """bitwise.bitwise_and bitwise.bitwise_or bitwise.bitwise_xor
bitwise.left_shift bitwise.right_shift dtypes.complex math.add math.atan2 math.divide
math.divide_no_nan math.equal math.floordiv math.floormod math.greater math.greater_equal
math.less math.less_equal math.logical_and math.logical_or math.logical_xor math.maximum
math.minimum math.multiply math.multiply_no_nan math.not_equal math.pow math.scalar_mul
math.squared_difference math.subtract math.truediv math.xdivy math.xlog1py math.xlogy
math.zeta nn.sigmoid_cross_entropy_with_logits realdiv truncatediv truncatemod""".split()

# target function -> [(wrapper, entry)], for unregister_dispatch_for
_REGISTERED: dict = {}


# -- matching arguments against annotations ---------------------------------------------------

def _matches(value, t) -> bool:
    """Whether `value` fits annotation `t` (TF's dispatch type check)."""
    if t is typing.Any or t is inspect.Parameter.empty:
        return True
    if t is None or t is type(None):
        return value is None
    if t is Tensor:
        return isinstance(value, (Tensor, np.ndarray, int, float, bool, complex))
    if is_union(t):
        return any(_matches(value, option) for option in type_args(t))
    if is_list(t) or is_tuple(t):
        if not isinstance(value, (list, tuple)):
            return False
        args = type_args(t)
        if is_tuple(t) and not (len(args) == 2 and args[1] is Ellipsis):
            return len(value) == len(args) and all(map(_matches, value, args))
        return all(_matches(v, args[0]) for v in value) if args else True
    if typing.get_origin(t) is collections.abc.Mapping:
        key_t, value_t = type_args(t)
        return isinstance(value, collections.abc.Mapping) and all(
            _matches(k, key_t) and _matches(v, value_t) for k, v in value.items())
    if isinstance(t, type):
        return isinstance(value, t)
    return False


# Classes whose instances send a call through the dispatch tables: ExtensionType, and those
# an ndflow module registers with `dispatch_for_types` (tf.linalg.LinearOperator).
_DISPATCH_TYPES: tuple = (ExtensionType,)


def _has_extension_type(args, kwargs) -> bool:
    types = _DISPATCH_TYPES
    for v in (*args, *kwargs.values()):
        if isinstance(v, types):
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(x, types) for x in v):
            return True
    return False


class _Entry(typing.NamedTuple):
    target: object          # called with the bound API arguments
    annotations: dict       # parameter name -> annotation that must match
    registered: object      # the user's function (what unregister_dispatch_for takes)


# -- the wrappers ------------------------------------------------------------------------------

def _wrap(api):
    """The dispatching wrapper of public API object `api` (made and installed once)."""
    if hasattr(api, "_dispatch_entries"):
        return api
    signature = inspect.signature(api)
    entries: list = []

    @functools.wraps(api)
    def dispatching(*args, **kwargs):
        if entries and _has_extension_type(args, kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                bound = None
            if bound is not None:
                bound.apply_defaults()
                for e in entries:
                    if all(_matches(bound.arguments.get(name), t)
                           for name, t in e.annotations.items()):
                        return e.target(*args, **kwargs)
        return api(*args, **kwargs)

    dispatching._dispatch_entries = entries
    dispatching._dispatch_original = api
    dispatching._dispatch_signature = signature
    _replace_public(api, dispatching)
    return dispatching


def _replace_public(old, new) -> None:
    """`new` in place of `old` in every built `tf.*` namespace (they carry `_tf_exported`)
    and in the export declarations."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("ndflow") or module is None or \
                "_tf_exported" not in getattr(module, "__dict__", {}):
            continue
        for attr in module.__dict__["_tf_exported"]:
            if module.__dict__.get(attr) is old:
                setattr(module, attr, new)
    for i, e in enumerate(api_export.EXPORTS):
        if e.obj is old:
            api_export.EXPORTS[i] = e.replaced(new)


def _public(path: str):
    """The public object at v2 path `path` (its module imported first), or None."""
    try:
        return lazy_api.public(path)
    except KeyError:
        return None


def _add(api, entry: _Entry) -> None:
    wrapper = _wrap(api)
    wrapper._dispatch_entries.append(entry)
    _REGISTERED.setdefault(entry.registered, []).append((wrapper, entry))


# -- the public decorators ---------------------------------------------------------------------

def _annotations(fn, signature) -> dict:
    hints = typing.get_type_hints(fn)
    return {name: hints[name] for name in signature.parameters if name in hints}


def _check_signature(api_signature, target_signature) -> None:
    """TF's rule: the target takes (*args, **kwargs), or the API's leading parameters (same
    names and kinds; trailing ones such as `name` may be left out)."""
    params = list(target_signature.parameters.values())
    kinds = [p.kind for p in params]
    if kinds == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]:
        return
    api_params = list(api_signature.parameters.values())
    if len(params) > len(api_params) or any(
            (p.name, p.kind) != (q.name, q.kind) for p, q in zip(params, api_params)):
        raise ValueError(f"Dispatch function's signature {target_signature} does not match "
                         f"API's signature {api_signature}.")


@tf_export("experimental.dispatch_for_api")
def dispatch_for_api(api, *signatures):
    """Decorator: `target` overrides `api` when the arguments match `signatures` (dicts of
    parameter name -> type), or, with none given, the target's own annotations."""
    wrapper = _wrap(api)
    api_signature = wrapper._dispatch_signature

    def decorator(target):
        target_signature = inspect.signature(target)
        _check_signature(api_signature, target_signature)
        for sig in signatures or [_annotations(target, target_signature)]:
            unknown = set(sig) - set(api_signature.parameters)
            if unknown:
                raise ValueError(f"dispatch_for_api signature has unexpected parameters "
                                 f"{sorted(unknown)} for {api.__name__}")
            if not sig:
                raise ValueError(f"The dispatch target {target.__name__} has no type "
                                 f"annotations to dispatch on.")
            _add(wrapper, _Entry(target, dict(sig), target))
        return target
    return decorator


def dispatch_for_types(api, *types):
    """TF's internal `dispatch_for_types`: decorator, `target` (which takes `api`'s
    arguments) overrides `api` when any argument is an instance of one of `types`."""
    global _DISPATCH_TYPES
    _DISPATCH_TYPES = tuple(dict.fromkeys(_DISPATCH_TYPES + types))
    wrapper = _wrap(api)

    def decorator(target):
        for name in wrapper._dispatch_signature.parameters:
            for t in types:
                _add(wrapper, _Entry(target, {name: t}, target))
        return target
    return decorator


def _bound_call(api, signature, args, kwargs, n_operands: int):
    """(operands, api_func): the first `n_operands` parameters' values and the API with
    the other arguments bound."""
    bound = signature.bind(*args, **kwargs)
    names = list(signature.parameters)[:n_operands]
    operands = [bound.arguments.pop(n) for n in names]

    def api_func(*xs):
        return api(**dict(zip(names, xs)), **bound.arguments)
    return operands, api_func


def _elementwise(paths: list, types: tuple, handler) -> None:
    n = len(types)
    for path in paths:
        api = _public(path)
        if api is None:
            continue
        wrapper = _wrap(api)
        original, signature = wrapper._dispatch_original, wrapper._dispatch_signature
        names = list(signature.parameters)[:n]
        if len(names) < n:
            continue

        def target(*args, _api=original, _sig=signature, **kwargs):
            operands, api_func = _bound_call(_api, _sig, args, kwargs, n)
            return handler(api_func, *operands)
        _add(wrapper, _Entry(target, dict(zip(names, types)), handler))


@tf_export("experimental.dispatch_for_unary_elementwise_apis")
def dispatch_for_unary_elementwise_apis(x_type):
    """Decorator: `handler(api_func, x)` runs for every unary elementwise API called with an
    `x` of `x_type`."""
    def decorator(handler):
        _elementwise(UNARY_ELEMENTWISE_APIS, (x_type,), handler)
        return handler
    return decorator


@tf_export("experimental.dispatch_for_binary_elementwise_apis")
def dispatch_for_binary_elementwise_apis(x_type, y_type):
    """Decorator: `handler(api_func, x, y)` runs for every binary elementwise API called with
    `x` of `x_type` and `y` of `y_type`."""
    def decorator(handler):
        _elementwise(BINARY_ELEMENTWISE_APIS, (x_type, y_type), handler)
        return handler
    return decorator


@tf_export("experimental.unregister_dispatch_for")
def unregister_dispatch_for(dispatch_target) -> None:
    """Removes every dispatch `dispatch_target` was registered for."""
    found = _REGISTERED.pop(dispatch_target, None)
    if not found:
        raise ValueError(f"Function {dispatch_target} was not registered using a "
                         f"`@dispatch_for_*` decorator.")
    for wrapper, entry in found:
        wrapper._dispatch_entries.remove(entry)
        if not wrapper._dispatch_entries:   # the API's own object is public again
            _replace_public(wrapper, wrapper._dispatch_original)

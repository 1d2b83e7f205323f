"""`tf.experimental.dispatch_for_binary_elementwise_assert_apis`: one handler for every
binary elementwise assert API (`tf.debugging.assert_equal`, `assert_less`, ...) called with
arguments of the given types. The handler is called as TensorFlow calls it,
`handler(assert_func, x, y)`, `assert_func` being the assert with its other arguments
(message, summarize, name) bound. The list is TensorFlow 2.21's
`dispatch._BINARY_ELEMENTWISE_ASSERT_APIS`: the v2 and the v1 functions of each.
"""

from __future__ import annotations

from ndflow.core import lazy_api
from ndflow.core.api_export import tf_export
from ndflow.ops import api_dispatch
from ndflow.ops.api_dispatch import _add, _bound_call, _Entry, _wrap

BINARY_ELEMENTWISE_ASSERT_APIS = """assert_equal assert_none_equal assert_near assert_less
assert_less_equal assert_greater assert_greater_equal""".split()

_HANDLERS: dict = {}


def _assert_apis() -> list:
    """The public v2 and v1 `tf.debugging` assert functions (distinct objects)."""
    out = []
    for name in BINARY_ELEMENTWISE_ASSERT_APIS:
        for path in (f"debugging.{name}", f"compat.v1.debugging.{name}"):
            try:
                obj = lazy_api.public(path)   # its module imported first
            except KeyError:
                continue
            if all(obj is not o for o in out):
                out.append(obj)
    return out


@tf_export("experimental.dispatch_for_binary_elementwise_assert_apis")
def dispatch_for_binary_elementwise_assert_apis(x_type, y_type):
    """Decorator: `handler(assert_func, x, y)` runs for every binary elementwise assert API
    called with `x` of `x_type` and `y` of `y_type`."""
    def decorator(handler):
        key = (x_type, y_type)
        if key in _HANDLERS and _HANDLERS[key] in api_dispatch._REGISTERED:
            raise ValueError(f"A binary elementwise assert dispatch handler "
                             f"({_HANDLERS[key]}) has already been registered for "
                             f"({x_type}, {y_type}).")
        _HANDLERS[key] = handler
        for api in _assert_apis():
            wrapper = _wrap(api)
            original, signature = wrapper._dispatch_original, wrapper._dispatch_signature
            names = list(signature.parameters)[:2]

            def target(*args, _api=original, _sig=signature, **kwargs):
                operands, assert_func = _bound_call(_api, _sig, args, kwargs, 2)
                return handler(assert_func, *operands)
            _add(wrapper, _Entry(target, dict(zip(names, (x_type, y_type))), handler))
        return handler
    return decorator

"""`tf.py_function`, `tf.numpy_function` and TF1's `tf.py_func`: ops that call a Python
function when they run (TensorFlow's EagerPyFunc, PyFunc, PyFuncStateless). The function is
kept in a registry under the op's `token` attr; the kernel (kernels/script_ops.py) calls it
eagerly — with eager tensors for py_function, NumPy arrays for numpy_function — and converts
its results to `Tout`. A graph holding these ops runs only in the process that built it, as in
TensorFlow."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def

FUNCTIONS: dict[str, tuple[Callable, bool]] = {}  # token -> (func, takes eager tensors)
_tokens = itertools.count()


def _unknown_shapes(ctx):
    return [TensorShape(None)] * len(ctx.attrs["Tout"])


_ATTRS = ["token: string", "Tin: list(type)", "Tout: list(type)"]
PyFunc = op_def("PyFunc", inputs=["input: Tin"], outputs=["output: Tout"], attrs=_ATTRS,
                shape=_unknown_shapes, stateful=True, not_differentiable=True)
PyFuncStateless = op_def("PyFuncStateless", inputs=["input: Tin"], outputs=["output: Tout"],
                         attrs=_ATTRS, shape=_unknown_shapes, not_differentiable=True)
EagerPyFunc = op_def("EagerPyFunc", inputs=["input: Tin"], outputs=["output: Tout"],
                     attrs=_ATTRS + ["is_async: bool = false"], shape=_unknown_shapes,
                     stateful=True)


def register(func: Callable, eager: bool) -> str:
    token = f"pyfunc_{next(_tokens)}"
    FUNCTIONS[token] = (func, eager)
    return token


def _call(op, func, inp, Tout, name, eager: bool, default: str):
    if not callable(func):
        raise TypeError(f"func must be callable, got {func!r}")
    single = not isinstance(Tout, (list, tuple))
    touts = [] if Tout is None else ([Tout] if single else list(Tout))
    touts = [dtypes.as_dtype(t) for t in touts]
    with name_scope(name, default):
        inputs = [convert_to_tensor(x) for x in (inp or [])]
        out = apply_op(op, [inputs], {"token": register(func, eager), "Tout": touts}).outputs
        if Tout is None:
            return None
        return out[0] if single else list(out)


def _decorator_or_check(script_op, op_name, func, inp, Tout, **kwargs):  # noqa: N803
    """TF's argument rules: `Tout` is required; with `func=None` (and no `inp`) the call
    returns a decorator whose function runs as the op on its positional arguments."""
    if Tout is None:
        raise TypeError(
            "Missing required argument: 'Tout'\n"
            f"  If using {op_name} as a decorator, set `Tout`\n"
            "  **by name** above the function:\n"
            f"  `@{op_name}(Tout=tout)`")
    if func is None:
        if inp is not None:
            raise TypeError(f"Don't set the `inp` argument when using {op_name} as a "
                            "decorator (`func=None`).")

        def decorator(fun):
            @functools.wraps(fun)
            def wrapper(*args):
                return script_op(fun, inp=args, Tout=Tout, **kwargs)
            return wrapper
        return decorator
    if inp is None:
        raise TypeError(
            "Missing argument `inp`:\n"
            "  You must set the `inp` argument (the list of arguments to the\n"
            f"  function), unless you use `{op_name}` as a decorator(`func=None`).")
    return None


@tf_export("py_function", v1=["py_function"])
def py_function(func: Callable | None = None, inp=None, Tout=None, name=None):  # noqa: N803
    """Calls `func(*eager_tensors)` when the op runs (eagerly, in tf.function and Sessions);
    differentiable: its gradient re-runs `func` under a GradientTape. With `func=None` it is
    a decorator (`@tf.py_function(Tout=...)`)."""
    decorator = _decorator_or_check(py_function, "tf.py_function", func, inp, Tout, name=name)
    if decorator is not None:
        return decorator
    return _call(EagerPyFunc, func, inp, Tout, name, True, "EagerPyFunc")


@tf_export("numpy_function", v1=["numpy_function"])
def numpy_function(func: Callable | None = None, inp=None, Tout=None, stateful=True,  # noqa: N803
                   name=None):
    """Calls `func(*numpy_arrays)` when the op runs; not differentiable. With `func=None` it
    is a decorator (`@tf.numpy_function(Tout=...)`)."""
    decorator = _decorator_or_check(numpy_function, "tf.numpy_function", func, inp, Tout,
                                    stateful=stateful, name=name)
    if decorator is not None:
        return decorator
    op = PyFunc if stateful else PyFuncStateless
    return _call(op, func, inp, Tout, name, False, "PyFunc")


@tf_export(v1=["py_func"])
def py_func(func: Callable, inp, Tout, stateful=True, name=None):  # noqa: N803
    """TF1's name of numpy_function (no decorator form)."""
    return _call(PyFunc if stateful else PyFuncStateless, func, inp, Tout, name, False,
                 "PyFunc")

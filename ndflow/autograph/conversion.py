"""Converting a Python function: source -> AST -> transforms -> a new function object.

The function's source is parsed, its statements are transformed (canonicalize: jumps;
expressions: and/or/not, conditional expressions, calls; statements: if/while/for) and the
result is compiled with the original file name and line numbers, so tracebacks and AutoGraph's
error messages point at the user's code. The new function shares the original's globals and
closure cells; two extra free variables hold the operators module (`ag__`) and the conversion
options. Compiled code is cached per (code object, options).

A function AutoGraph cannot convert (no source, a generator, a syntax it does not handle) runs
as is, with TensorFlow's warning.
"""

from __future__ import annotations
import __future__

import ast
import functools
import inspect
import linecache
import os
import sys
import sysconfig
import textwrap
import types
import warnings

from ndflow.autograph import analysis, canonicalize, expressions, operators, py_builtins, statements
from ndflow.autograph.options import ConversionOptions, Feature
from ndflow.core import tf_logging
from ndflow.core.errors import OpError

_CACHE: dict = {}           # (code, options) -> (converted code object, converted source)
_CONVERTED_CODES: dict = {}  # code object of converted code -> the user function's name
_WARNED: set = set()

# Modules whose functions are never converted: ndflow itself and the libraries under it.
_LIBRARY_PACKAGES = {"ndflow", "numpy", "torch", "absl", "google", "tensorflow", "keras",
                     "builtins", "functools", "collections", "typing", "abc", "enum",
                     "threading", "contextlib", "inspect", "copy", "re", "math", "random"}
# ...and code living in those places, ndflow's own source tree included (a wrapper made with
# functools.wraps carries the user's __module__ but runs ndflow's code: custom_gradient)
_LIBRARY_PATHS = tuple(os.path.realpath(p) + os.sep for p in
                       {*(sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")),
                        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))})


# The user's `from __future__` imports, kept when the converted code is compiled.
_FUTURE_FLAGS = functools.reduce(
    lambda acc, name: acc | getattr(__future__, name).compiler_flag, __future__.all_feature_names,
    0)


class ConversionError(Exception):
    """A function AutoGraph could not convert."""


# -- which callables are converted --------------------------------------------------------------

def do_not_convert_marked(f) -> bool:
    return bool(getattr(f, "__ag_do_not_convert__", False))


def is_user_function(f) -> bool:
    if not isinstance(f, types.FunctionType) or do_not_convert_marked(f):
        return False
    if getattr(f, "__ag_converted__", False) or f.__code__ in _CONVERTED_CODES:
        return False  # converted already (a function defined inside converted code)
    module = (getattr(f, "__module__", None) or "").split(".")[0]
    if module in _LIBRARY_PACKAGES:
        return False
    code = f.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                        inspect.CO_ASYNC_GENERATOR):
        return False
    filename = os.path.realpath(code.co_filename)
    return not filename.startswith(_LIBRARY_PATHS) and f.__name__ != "<lambda>"


# -- the transformation ----------------------------------------------------------------------

def _parse(f) -> tuple[ast.FunctionDef, str]:
    try:
        lines, first = inspect.getsourcelines(f)
    except (OSError, TypeError) as e:
        raise ConversionError(str(e) or "could not get source code") from None
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise ConversionError(f"could not parse the source code: {e}") from None
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        raise ConversionError("the source code is not a single function definition")
    ast.increment_lineno(tree, first - 1)
    fdef = tree.body[0]
    fdef.decorator_list = []
    return fdef, inspect.getsourcefile(f) or f.__code__.co_filename


def _scope_declarations(body: list) -> tuple[set, set]:
    glob, nonloc = set(), set()
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Global):
            glob.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            nonloc.update(node.names)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                   ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return glob, nonloc


def _is_generator(fdef: ast.FunctionDef) -> bool:
    todo = list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _convert_nested_defs(stmts: list, options: ConversionOptions, has_class_cell: bool):
    for stmt in stmts:
        if isinstance(stmt, ast.FunctionDef):
            if not _is_generator(stmt):
                convert_function_def(stmt, options, has_class_cell)
            continue
        if isinstance(stmt, (ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                _convert_nested_defs(block, options, has_class_cell)
        for handler in getattr(stmt, "handlers", []) or []:
            _convert_nested_defs(handler.body, options, has_class_cell)


def convert_function_def(fdef: ast.FunctionDef, options: ConversionOptions,
                         has_class_cell: bool) -> None:
    """Transforms `fdef` in place (nested function definitions too, each as its own scope)."""
    _convert_nested_defs(fdef.body, options, has_class_cell)
    glob, nonloc = _scope_declarations(fdef.body)
    taken = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)}
    params = analysis.parameter_names(fdef.args)
    namer = canonicalize.Namer(taken | params | {"ag__", "ag__options"})

    statements.extract_loop_options(fdef.body)
    body = canonicalize.lower_jumps(fdef.body, namer)
    all_params = fdef.args.posonlyargs + fdef.args.args
    first = all_params[0].arg if all_params else None
    converter = expressions.ExpressionConverter(
        first, has_class_cell, options.uses(Feature.ASSERT_STATEMENTS))
    body = [converter.visit(stmt) for stmt in body]
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        extra = getattr(node, "ag_extra_test", None)
        if extra is not None:
            node.ag_extra_test = converter.visit(extra)

    analysis.annotate_liveness(body)
    analysis.definitely_defined_before(body, params)
    stmts = statements.StatementConverter(namer, glob, nonloc)
    body = stmts.block(body)
    if stmts.maybe_undefined:
        wrapper = statements.LoadWrapper(stmts.maybe_undefined)
        body = [wrapper.visit(stmt) for stmt in body]
    fdef.body = body or [ast.Pass()]


def _register_codes(code: types.CodeType, user_name: str) -> None:
    _CONVERTED_CODES[code] = user_name
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _register_codes(const, user_name)


def _compile(f, options: ConversionOptions) -> tuple[types.CodeType, str]:
    key = (f.__code__, options)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    fdef, filename = _parse(f)
    if _is_generator(fdef):
        raise ConversionError("generators are not supported")
    free = list(f.__code__.co_freevars)
    convert_function_def(fdef, options, "__class__" in free)
    ast.fix_missing_locations(fdef)
    source = ast.unparse(fdef)
    factory = ast.FunctionDef(
        name="ag__factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in
                                                 ["ag__", "ag__options"] + free],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                           defaults=[]),
        body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_comment=None,
        **({"type_params": []} if sys.version_info >= (3, 12) else {}))
    module = ast.Module(body=[factory], type_ignores=[])
    ast.copy_location(factory, fdef)
    ast.fix_missing_locations(module)
    try:
        code = compile(module, filename, "exec", flags=f.__code__.co_flags & _FUTURE_FLAGS,
                       dont_inherit=True)
    except SyntaxError as e:
        raise ConversionError(f"the converted code does not compile: {e}") from None
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts
                 if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    _register_codes(inner, f.__name__)
    linecache.checkcache(filename)
    _CACHE[key] = (inner, source)
    return inner, source


def convert(f, options: ConversionOptions):
    """The converted version of Python function `f` (raises ConversionError)."""
    if isinstance(f, types.MethodType):
        return types.MethodType(convert(f.__func__, options), f.__self__)
    if isinstance(f, functools.partial):
        return functools.partial(convert(f.func, options), *f.args, **f.keywords)
    if not isinstance(f, types.FunctionType):
        raise ConversionError(f"{f!r} is not a Python function")
    code, _ = _compile(f, options)
    cells = dict(zip(f.__code__.co_freevars, f.__closure__ or ()))
    cells["ag__"] = types.CellType(_AG)
    cells["ag__options"] = types.CellType(options)
    try:
        closure = tuple(cells[n] for n in code.co_freevars)
    except KeyError as e:
        raise ConversionError(f"unexpected free variable {e}") from None
    converted = types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__, closure)
    converted.__kwdefaults__ = f.__kwdefaults__
    converted.__dict__.update(f.__dict__)
    converted.__doc__, converted.__qualname__ = f.__doc__, f.__qualname__
    converted.__module__ = f.__module__
    converted.__ag_converted__ = True
    converted.__wrapped__ = f
    return converted


def converted_source(f, options: ConversionOptions) -> str:
    if isinstance(f, types.MethodType):
        f = f.__func__
    if not isinstance(f, types.FunctionType):
        raise ConversionError(f"{f!r} is not a Python function")
    return _compile(f, options)[1] + "\n"


def _warn_not_converted(f, cause: str) -> None:
    key = getattr(f, "__code__", None) or id(f)
    if key in _WARNED:
        return
    _WARNED.add(key)
    tf_logging.warning(f"AutoGraph could not transform {f} and will run it as-is.\n"
                    f"Cause: {cause}\nTo silence this warning, decorate the function with "
                    "@tf.autograph.experimental.do_not_convert")


def convert_or_original(f, options: ConversionOptions):
    """`f` converted, or `f` itself (with TF's warning) when it cannot be."""
    target = f.__func__ if isinstance(f, types.MethodType) else f
    if not is_user_function(target):
        return f
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            return convert(f, options)
    except Exception as e:  # noqa: BLE001 - as TF: an unconvertible function runs as is
        _warn_not_converted(target, str(e) if isinstance(e, ConversionError)
                            else f"{type(e).__name__}: {e}")
        return f


# -- calls inside converted code ---------------------------------------------------------------

def converted_call(f, args, kwargs, options: ConversionOptions):
    """A call in converted code: user functions are converted first (recursive conversion),
    some builtins become their tensor-aware versions, anything else is called as is."""
    kwargs = kwargs or {}
    try:
        builtin = py_builtins.ALWAYS.get(f)
        if builtin is None and options.uses(Feature.BUILTIN_FUNCTIONS):
            builtin = py_builtins.WITH_BUILTIN_FUNCTIONS.get(f)
    except TypeError:  # an unhashable callable
        builtin = None
    if builtin is not None:
        return builtin(*args, **kwargs)
    if options.recursive:
        f = convert_or_original(f, options)
    return f(*args, **kwargs)


# What converted code sees as `ag__`: the operators and converted_call.
_AG = types.SimpleNamespace(**{k: v for k, v in vars(operators).items() if not k.startswith("_")},
                            converted_call=converted_call)


# -- errors ------------------------------------------------------------------------------------

def _user_frames(tb) -> list:
    out = []
    while tb is not None:
        code = tb.tb_frame.f_code
        entry = (code.co_filename, tb.tb_lineno, _CONVERTED_CODES.get(code))
        if entry[2] is not None and (not out or out[-1] != entry):
            out.append(entry)
        tb = tb.tb_next
    return out


def user_error(e: BaseException):
    """`e` re-raised as TensorFlow's AutoGraph does: the same type, its message prefixed with
    the user's frames ('in user code: File ..., line N, in f'); None when no converted code is
    in its traceback or the type cannot be rebuilt."""
    if getattr(e, "ag_error_metadata", False):
        return None
    frames = _user_frames(e.__traceback__)
    if not frames:
        return None
    lines = ["in user code:", ""]
    for filename, lineno, fn_name in frames:
        text = linecache.getline(filename, lineno).strip()
        lines += [f'    File "{filename}", line {lineno}, in {fn_name}  *', f"        {text}", ""]
    message = e.message if isinstance(e, OpError) else str(e)
    lines.append(f"    {type(e).__name__}: {message}")
    text = "\n".join(lines) + "\n"
    try:
        if isinstance(e, OpError):
            new = type(e)(e.node_def, e.op, text)
        else:
            new = type(e)(text)
    except Exception:  # noqa: BLE001 - an exception type with another constructor
        return None
    new.ag_error_metadata = True
    return new

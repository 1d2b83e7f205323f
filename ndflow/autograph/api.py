"""`tf.autograph`: to_graph, to_code, the do_not_convert decorator, loop options, verbosity."""

from __future__ import annotations

import functools

from ndflow.autograph import conversion
from ndflow.autograph.options import ConversionOptions
from ndflow.core.api_export import tf_export

_verbosity = 0


@tf_export("autograph.to_graph", v1=[])
def to_graph(entity, recursive: bool = True, experimental_optional_features=None):
    """The converted version of a Python function: its tensor-dependent `if`/`while`/`for`
    become tf.cond/tf.while_loop when it runs in a graph (tf.function does this itself)."""
    try:
        return conversion.convert(entity, ConversionOptions.make(
            recursive, experimental_optional_features))
    except conversion.ConversionError as e:
        raise conversion.ConversionError(f"converting {entity}: {e}") from None


@tf_export("autograph.to_code", v1=[])
def to_code(entity, recursive: bool = True, experimental_optional_features=None) -> str:
    """The source code AutoGraph generates for `entity`."""
    try:
        return conversion.converted_source(entity, ConversionOptions.make(
            recursive, experimental_optional_features))
    except conversion.ConversionError as e:
        raise conversion.ConversionError(f"converting {entity}: {e}") from None


@tf_export(v1=["autograph.to_graph"])
def to_graph_v1(entity, recursive: bool = True, arg_values=None, arg_types=None,
                experimental_optional_features=None):
    """TF1's to_graph (`arg_values`/`arg_types` are ignored, as in TF 2)."""
    return to_graph(entity, recursive, experimental_optional_features)


@tf_export(v1=["autograph.to_code"])
def to_code_v1(entity, recursive: bool = True, arg_values=None, arg_types=None,
               indentation: str = "  ", experimental_optional_features=None) -> str:
    """TF1's to_code (`arg_values`/`arg_types`/`indentation` are ignored, as in TF 2)."""
    return to_code(entity, recursive, experimental_optional_features)


@tf_export("autograph.experimental.do_not_convert")
def do_not_convert(func=None):
    """Marks a function to be run as is by AutoGraph (usable with or without parentheses)."""
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    wrapper.__ag_do_not_convert__ = True
    return wrapper


@tf_export("autograph.experimental.set_loop_options")
def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None) -> None:
    """A directive for the loop around it (read when the loop is converted; a no-op when
    called)."""
    del parallel_iterations, swap_memory, maximum_iterations, shape_invariants


@tf_export("autograph.set_verbosity")
def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """AutoGraph's log verbosity (kept for compatibility: ndflow logs conversion failures as
    warnings at any level)."""
    global _verbosity
    _verbosity = int(level)


@tf_export("autograph.trace")
def trace(*args) -> None:
    """Prints its arguments at trace time (AutoGraph's debugging helper)."""
    print(*args)


def verbosity() -> int:
    return _verbosity


__all__ = ["to_graph", "to_code", "to_graph_v1", "to_code_v1", "do_not_convert",
           "set_loop_options", "set_verbosity", "trace"]

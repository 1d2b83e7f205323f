"""TensorFlow's text for a traced signature (`ConcreteFunction.pretty_printed_signature()`,
`Function.pretty_printed_concrete_signatures()`; `verbose=False`, a ConcreteFunction's repr:
`(x: TensorSpec(...), y: Literal[2]) -> TensorSpec(...)`):

    Input Parameters:
      x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.int32, name=None)
      y (POSITIONAL_OR_KEYWORD): Literal[2]
    Output Type:
      TensorSpec(shape=(), dtype=tf.int32, name=None)
    Captures:
      None
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.nest import is_nested, map_structure
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec


def value_text(value) -> str:
    """A parameter's or output's type: a TensorSpec for tensors, Literal[v] for Python
    values, containers as TensorFlow names them (List, Tuple, Dict)."""
    if isinstance(value, TensorSpec):   # (an input signature's spec keeps its name)
        return repr(TensorSpec(value.shape, value.dtype, value.name))
    if isinstance(value, Tensor) or isinstance(value, np.ndarray):
        return repr(TensorSpec(value.shape, _dtype(value)))
    if isinstance(value, dict):
        return "Dict[" + ", ".join(f"[Literal[{k!r}], {value_text(v)}]"
                                   for k, v in value.items()) + "]"
    if isinstance(value, (list, tuple)) and is_nested(value):
        kind = "List" if isinstance(value, list) else "Tuple"
        return f"{kind}[" + ", ".join(value_text(v) for v in value) + "]"
    if value is None:
        return "NoneTensorSpec()"
    return f"Literal[{value!r}]"


def _dtype(value):
    return value.dtype if isinstance(value, Tensor) else dtypes.as_dtype(value.dtype)


def signature_text(parameters: list, outputs, captures: list) -> str:
    """`parameters`: [(name, kind name, value or spec)]."""
    lines = ["Input Parameters:"]
    lines += [f"  {name} ({kind}): {value_text(v)}" for name, kind, v in parameters] or \
        ["  None"]
    lines += ["Output Type:", f"  {value_text(map_structure(lambda t: t, outputs))}",
              "Captures:"]
    lines += [f"  {id(c)}: {value_text(c)}" for c in captures] or ["  None"]
    return "\n".join(lines)


def short_signature_text(parameters: list, outputs) -> str:
    """The one-line form: `(name: type, ...) -> output type`."""
    params = ", ".join(f"{name}: {value_text(v)}" for name, _, v in parameters)
    return f"({params}) -> {value_text(map_structure(lambda t: t, outputs))}"

"""`tf.xla.experimental.compile` (deprecated in TensorFlow for `tf.function(jit_compile=True)`).

As TensorFlow 2.21: eagerly the computation runs as a `tf.function` (no error, despite the
docstring TensorFlow keeps); in a graph, each input passes through an Identity `input_<i>`,
`computation(*inputs)` is built, and its Tensors - with TensorFlow's flat/non-flat output
rules - come back as Identities `output_<i>` that depend on the Operations it returned. The
ops built for the computation are marked for ndflow's JIT as `jit_scope` marks them
(`_XlaCompile`, one `_XlaScope`), so they compile as one cluster when the graph runs; a
computation returning only Operations yields a NoOp `output_0` that runs them. TensorFlow's
XlaClusterOutput markers and its pivot NoOp carry no computation and are not built.
"""

from __future__ import annotations

import collections.abc as collections_abc
import sys

from ndflow.core import context, nest, strict_mode
from ndflow.core.api_export import tf_export
from ndflow.core.graph import Operation
from ndflow.jit.jit_scope import jit_scope
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import group, identity, no_op
from ndflow.runtime import function

_warned = False


def _warn_deprecated() -> None:
    global _warned
    if not _warned:  # TensorFlow's warn_once: the flag is set before strict mode raises
        _warned = True
        caller = sys._getframe(2)
        strict_mode.log_deprecation(
            "From %s:%d: compile (from tensorflow.python.compiler.xla.xla) is deprecated and "
            "will be removed in a future version.\nInstructions for updating:\n"
            "xla.experimental.compile is deprecated. Consider using "
            "`@tf.function(jit_compile=True)`.", caller.f_code.co_filename, caller.f_lineno)


@tf_export("xla.experimental.compile")
def compile(computation, inputs=None):  # noqa: A001 - TensorFlow's name
    """Builds `computation(*inputs)` for the JIT to compile and run as one cluster."""
    _warn_deprecated()
    if context.executing_eagerly():
        return function.function(lambda: _compile_internal(computation, inputs))()
    return _compile_internal(computation, inputs)


def _is_flat(outputs) -> bool:
    """TensorFlow's `is_flat`: None, one object, or a sequence holding no structures."""
    if isinstance(outputs, collections_abc.Sequence):
        for o in outputs:
            if isinstance(o, (collections_abc.Sequence, collections_abc.Mapping)) or \
                    hasattr(o.__class__, "__attrs_attrs__"):
                return False
    return not isinstance(outputs, collections_abc.Mapping) and \
        not hasattr(outputs.__class__, "__attrs_attrs__")


def _as_output(o):
    try:
        return o if isinstance(o, Operation) else convert_to_tensor(o)
    except Exception as e:  # noqa: BLE001 - TensorFlow wraps any conversion failure
        raise ValueError("XLA computation function return values must all either be "
                         f'Operations or convertible to Tensors. Got error: "{e}"') from None


def _flat_outputs(outputs):
    if outputs is None:
        outputs = ()
    if not isinstance(outputs, collections_abc.Sequence):
        outputs = (outputs,)
    outputs = [_as_output(o) for o in list(outputs) + [no_op()]]
    operations = [o for o in outputs if isinstance(o, Operation)]
    tensors = [o for o in outputs if not isinstance(o, Operation)]
    if outputs != tensors + operations:
        raise ValueError("XLA computation function must return zero or more Tensor values "
                         "followed by zero or more Operations.")
    return [identity(t) for t in tensors], operations


def _non_flat_outputs(outputs):
    tensors = []
    for o in nest.flatten(outputs):
        if isinstance(o, Operation):
            raise ValueError(
                "xla.compile does not support Operation as return value in non-flat output "
                "structure. You can set returned Operations as control dependencies of "
                "returned Tensors so Operations are triggered when Tensors are evaluated. "
                f'Operation found: "{o.name}"')
        tensors.append(identity(_as_output(o)))
    return tensors, []


def _compile_internal(computation, inputs):
    if inputs is None:
        inputs = []
    if not isinstance(inputs, collections_abc.Sequence):
        raise TypeError("inputs must be a list")
    flat_inputs = [convert_to_tensor(x) for x in nest.flatten(inputs)]
    with jit_scope():
        # Identities so that even unused inputs are consumed by the computation.
        flat_inputs = [identity(x, name=f"input_{i}") for i, x in enumerate(flat_inputs)]
        outputs = computation(*nest.pack_sequence_as(inputs, flat_inputs))
        flat = _is_flat(outputs)
        tensors, control_deps = _flat_outputs(outputs) if flat else _non_flat_outputs(outputs)
    if not tensors:
        return group(control_deps, name="output_0")
    graph = context.get_default_graph()
    with graph.control_dependencies(control_deps):
        tensors = [identity(t, name=f"output_{i}") for i, t in enumerate(tensors)]
    return tensors if flat else nest.pack_sequence_as(outputs, tensors)

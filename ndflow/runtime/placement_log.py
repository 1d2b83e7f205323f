"""`tf.debugging.set_log_device_placement`: where each op runs, in TensorFlow's words.

One mechanism for both of TensorFlow's switches (this one and a Session's
`ConfigProto(log_device_placement=True)`):

- a graph plan being built (a Session's step, a `tf.function`'s first call, an If/While body)
  reports each of its ops as TensorFlow's placer does, on stdout and as an INFO log line:

      MatMul: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0

- while the switch is on, each eager op and each `tf.function` call logs (INFO, stderr)

      Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0

Off (the default), nothing is wrapped: eager ops call the kernel path directly.
TensorFlow also prints the placement of each eager op's one-op function the first time it
is instantiated (`a: (_Arg)`, `product_RetVal: (_Retval)`); ndflow runs no such functions
and prints only the "Executing op" lines for eager ops.
"""

from __future__ import annotations

import sys

import torch

from ndflow.core import context, logging
from ndflow.core.api_export import tf_export
from ndflow.runtime import concrete_function, eager, plan

_enabled = False


def enabled() -> bool:
    return _enabled


def device_name(dev: torch.device) -> str:
    """TensorFlow's full name of the device an ATen device stands for."""
    kind = "GPU" if dev.type == "cuda" else "CPU"
    return f"/job:localhost/replica:0/task:0/device:{kind}:{dev.index or 0}"


def log_nodes(placements) -> None:
    """The placer's lines for (op, ATen device) pairs: printed on stdout and logged."""
    lines = [f"{op.name}: ({op.type}): {device_name(dev)}" for op, dev in placements]
    if lines:
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()
    for line in lines:
        logging.log(logging.INFO, line)


def _log_execution(op_type: str, spec: str) -> None:
    logging.log(logging.INFO, f"Executing op {op_type} in device "
                f"{device_name(eager.device_of(spec))}")


def _logging_execute(execute):
    def logged(op_def, inputs, attrs, name=None, attrs_key=None):
        _log_execution(op_def.name, context.eager_device())
        return execute(op_def, inputs, attrs, name, attrs_key)
    return logged


def _function_call(function) -> None:
    _log_execution(function.name, context.eager_device())


def _plan_built(built) -> None:
    log_nodes(built.placements)


@tf_export("debugging.set_log_device_placement")
def set_log_device_placement(enabled) -> None:
    """`tf.debugging.set_log_device_placement`: log where ops run (see the module's text)."""
    global _enabled
    _enabled = bool(enabled)
    eager.set_wrapper("0-placement", _logging_execute if _enabled else None)
    for observers, fn in ((concrete_function.CALL_OBSERVERS, _function_call),
                          (plan.BUILD_OBSERVERS, _plan_built)):
        if _enabled and fn not in observers:
            observers.append(fn)
        elif not _enabled and fn in observers:
            observers.remove(fn)


@tf_export("debugging.get_log_device_placement")
def get_log_device_placement() -> bool:
    """`tf.debugging.get_log_device_placement`: whether the switch above is on."""
    return _enabled

"""`tf.debugging.enable_check_numerics` / `disable_check_numerics`: every floating-point
output of an op checked for Infinity and NaN, with TensorFlow's error.

TensorFlow adds an op callback that, eagerly, runs CheckNumericsV2 on each floating output
of each op and, while a graph is built, inserts a CheckNumericsV2 op after each one. ndflow
checks at the same places without adding ops:

- eager ops: while on, `eager_execute` is wrapped (`eager.set_wrapper`) by a check of each
  floating output; off, nothing is wrapped;
- graphs (`tf.function`, Session, If/While bodies, tf.data functions): a plan built while on
  wraps each kernel with floating outputs (`plan.KERNEL_WRAPPERS`) and fails every run if
  a floating constant holds Infinity or NaN (`plan.BUILD_OBSERVERS`), so a plan built
  before stays unchecked and one built while on keeps checking after
  `disable_check_numerics`, as a graph TensorFlow instrumented keeps its CheckNumericsV2 ops.

The error is TensorFlow's InvalidArgumentError text ("!!! Detected Infinity or NaN in output
0 of eagerly-executing op "Log" (# of outputs: 1) !!!", the dtype, shape, counts, inputs;
for graph ops the graph's name and the op's creation stack) ending in CheckNumericsV2's
" : Tensor had -Inf values". Differences: the switch is process-wide (TensorFlow's is per
thread); graph checks follow the optimized graph, so an op the passes fused (`_FusedMatMul`)
is checked and named as the fused op, and a constant folded from ops is reported as a
"Const"; the outputs of a whole `tf.function` call are not checked again (TensorFlow checks
them too, as an eager op's).
"""

from __future__ import annotations

import threading

import numpy as np
import torch

from ndflow.core import tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.runtime import eager, plan

# TensorFlow's op callbacks skip these (control flow, calls) and these are "safe": they only
# move values their inputs, already checked, had (check_numerics_callback.py).
SKIPPED_OPS = frozenset("""
    Enter Exit Identity If LoopCond Merge NextIteration StatelessIf StatefulPartitionedCall
    Switch While RemoteCall DestroyResourceOp CheckNumericsV2
    Concat ConcatV2 ExpandDims Fill Gather Maximum Minimum Reshape Slice Squeeze Stack
    StridedSlice StridedSliceGrad TensorListConcatV2 TensorListGather TensorListGetItem
    TensorListPopBack TensorListStack Transpose Unpack""".split())

# Outputs that are NaN by design (the batch statistics of an empty batch).
IGNORED_OUTPUTS = frozenset(
    [("FusedBatchNorm", i) for i in (1, 2, 3, 4)]
    + [("FusedBatchNormV2", i) for i in (1, 2, 3, 4)]
    + [("FusedBatchNormV3", i) for i in (1, 2, 3, 4, 5)])

_limits: tuple | None = None  # (stack_height_limit, path_length_limit) while enabled


def enabled() -> bool:
    return _limits is not None


def _checked_slots(op_type: str, dtypes) -> list:
    if op_type in SKIPPED_OPS:
        return []
    return [i for i, d in enumerate(dtypes)
            if d.is_floating and (op_type, i) not in IGNORED_OUTPUTS]


def _finite(v) -> bool:
    return not isinstance(v, torch.Tensor) or bool(torch.isfinite(v).all())


def _kinds(v: torch.Tensor) -> tuple:
    """(# of -Inf, # of +Inf, # of NaN) elements."""
    inf = torch.isinf(v)
    return (int((inf & (v < 0)).sum()), int((inf & (v > 0)).sum()), int(torch.isnan(v).sum()))


def _had(counts: tuple) -> str:
    """CheckNumericsV2's "Tensor had ... values" wording."""
    names = [n for n, c in zip(("-Inf", "+Inf", "NaN"), counts) if c]
    if len(names) == 3:
        return "-Inf, +Inf, and NaN"
    return " and ".join(names)


def _header(slot, num_outputs, op_type, dtype, shape, graph: bool) -> str:
    where = "graph" if graph else "eagerly-executing"
    return (f"\n\n!!! Detected Infinity or NaN in output {slot} of {where} op \"{op_type}\" "
            f"(# of outputs: {num_outputs}) !!!\n  dtype: <dtype: '{dtype.name}'>\n"
            f"  shape: {shape}\n")


def _inputs_text(inputs) -> str:
    if len(inputs) > 1:
        return f"\n  Input tensors ({len(inputs)}):\n" + "".join(
            f"         {i}: {t!s}\n" for i, t in enumerate(inputs))
    if len(inputs) == 1:
        return f"\n  Input tensor: {inputs[0]!s}\n"
    return ""


def _limit(path: str, max_len) -> str:
    if max_len is None or len(path) <= max_len:
        return path
    return "..." + path[len(path) - max_len:]


def _stack_text(frames, height, path_len) -> str:
    if not frames:
        return ""
    out = "\n  Stack trace of op's creation (\"->\": inferred user code):\n"
    frames = list(frames)
    if height is not None and len(frames) > height:
        out += f"    + ... (Omitted {len(frames) - height} frames)\n"
        frames = frames[-height:] if height else []
    for file, line, name in frames:  # an op keeps only the user's frames
        out += f"    + {_limit(file, path_len)} (L{line}) {name}\n -> |   \n"
    return out


def eager_message(op_type, slot, outputs, inputs, value: torch.Tensor) -> str:
    """TensorFlow's text for an eager op's bad output `slot` (counts included)."""
    out = outputs[slot]
    counts = _kinds(value)
    text = _header(slot, len(outputs), op_type, out.dtype, out.shape, False)
    for label, c in zip(("-Inf", "+Inf", "+NaN"), counts):
        if c:
            text += f"  # of {label} elements: {c}\n"
    text += _inputs_text(inputs) + "\n"
    return f"{text} : Tensor had {_had(counts)} values"


def _checking_execute(execute):
    def checked(op_def, inputs, attrs, name=None, attrs_key=None):
        eop = execute(op_def, inputs, attrs, name, attrs_key)
        outs = eop.outputs
        for slot in _checked_slots(op_def.name, [t.dtype for t in outs]):
            v = outs[slot]._value
            if not _finite(v):
                raise InvalidArgumentError(
                    None, None, eager_message(op_def.name, slot, outs, list(inputs), v)
                    + " [Op:CheckNumericsV2]")
        return eop
    return checked


def _graph_message(built, op, slot, value, limits) -> str:
    out = op.outputs[slot]
    # TensorFlow strips the message's leading blank lines when a graph's node fails
    text = _header(slot, len(op.outputs), op.type, out.dtype, out.shape, True).lstrip("\n")
    text += _inputs_text(list(op.inputs))
    label = getattr(built, "label", None)
    if label and label != "tf_graph":
        text += f"  Graph name: \"{label}\"\n"
    text += _stack_text(op._traceback, *limits) + "\n"
    return f"{text} : Tensor had {_had(_kinds(value))} values"


def _checking_kernel(built, op, fn):
    slots = _checked_slots(op.type, [t.dtype for t in op.outputs])
    if not slots:
        return fn
    limits, single = _limits, len(op.outputs) == 1

    def checked(*args):
        res = fn(*args)
        values = (res,) if single else res
        for slot in slots:
            v = values[slot]
            if not _finite(v):
                err = InvalidArgumentError(None, op, _graph_message(built, op, slot, v, limits))
                err.reported_node = f"{op.name}/CheckNumericsV2"  # TF's node checking it
                err.failed_node = (err.reported_node, op._traceback)
                raise err
        return res
    return checked


def _check_constants(built) -> None:
    """A plan whose graph holds a floating constant with Infinity or NaN (written so, or
    made by constant folding) fails each run with that constant's report, as TensorFlow's
    check of the Const op fails when the graph runs."""
    for op in built.ops:
        if op.type == "Const" and op.outputs[0].dtype.is_floating:
            value = np.asarray(op.attrs["value"])
            if not np.isfinite(value).all():
                _fail_runs(built, op, torch.from_numpy(value.astype(np.float64)))
                return


def _fail_runs(built, op, value) -> None:
    limits, node = _limits, f"{op.name}/CheckNumericsV2"

    def failing(*args):
        message = _graph_message(built, op, 0, value, limits)  # the plan's label is set now
        err = InvalidArgumentError(None, op, f"{message}\n\t [[{{{{node {node}}}}}]]")
        err.failed_node = (node, op._traceback)
        raise err
    built._run = built._plain_run = failing


@tf_export("debugging.enable_check_numerics")
def enable_check_numerics(stack_height_limit=30, path_length_limit=50) -> None:
    """`tf.debugging.enable_check_numerics`: every op's floating outputs checked for
    Infinity and NaN from now on (idempotent; the first call's limits hold until disabled)."""
    global _limits
    if _limits is None:
        _limits = (stack_height_limit, path_length_limit)
    eager.set_wrapper("1-numerics", _checking_execute)
    if _checking_kernel not in plan.KERNEL_WRAPPERS:
        plan.KERNEL_WRAPPERS.append(_checking_kernel)
        plan.BUILD_OBSERVERS.append(_check_constants)
    tf_logging.info("Enabled check-numerics callback in thread %s",
                    threading.current_thread().name)


@tf_export("debugging.disable_check_numerics")
def disable_check_numerics() -> None:
    """`tf.debugging.disable_check_numerics`: eager ops and plans built from now on are not
    checked (idempotent)."""
    global _limits
    if _limits is None:
        return
    _limits = None
    eager.set_wrapper("1-numerics", None)
    if _checking_kernel in plan.KERNEL_WRAPPERS:
        plan.KERNEL_WRAPPERS.remove(_checking_kernel)
        plan.BUILD_OBSERVERS.remove(_check_constants)
    tf_logging.info("Disabled check-numerics callback in thread %s",
                    threading.current_thread().name)


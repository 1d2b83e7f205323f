"""ndflow graph -> ONNX ModelProto, op by op through the converter table.

    model = graph_to_onnx(inputs, outputs, constants, input_names, output_names, opset=17)

walks the ops the outputs need (stopping at `inputs`), converts each with its entry in
`builder.CONVERTERS`, and turns frozen variable values and Const ops into initializers
(through the converters' `b.constant`). A dimension TensorFlow leaves unknown (the batch)
becomes a symbolic ONNX dimension, so the model takes any batch size.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ndflow.core import errors
from ndflow.inference.onnx_export import backend, convert_array, convert_nn  # noqa: F401 - register converters
from ndflow.inference.onnx_export.builder import (
    CONVERTERS,
    OnnxBuilder,
    UnsupportedOpError,
    onnx_dtype,
)

DEFAULT_OPSET = 17
MIN_OPSET = 13  # Squeeze/Unsqueeze/ReduceSum with axes as inputs, Softmax over one axis


def _needed_ops(inputs: list, outputs: list, constants: dict) -> list:
    """The ops between `inputs` and `outputs`, in topological order (inputs' ops excluded;
    an op whose outputs are all frozen constants is a leaf)."""
    stop = {t.op for t in inputs}
    order, seen = [], set()
    for out in outputs:
        stack = [(out.op, False)]
        while stack:
            op, done = stack.pop()
            if done:
                order.append(op)
                continue
            if op in seen or op in stop:
                continue
            seen.add(op)
            stack.append((op, True))
            if op.outputs and all(t.name in constants for t in op.outputs):
                continue
            stack.extend((t.op, False) for t in reversed(op.inputs))
    return order


def _value_info(b: OnnxBuilder, name: str, tensor, dim_prefix: str):
    shape = None
    if tensor.shape.rank is not None:
        shape = [d if d is not None else (f"{dim_prefix}_batch" if i == 0 else
                                          f"{dim_prefix}_d{i}")
                 for i, d in enumerate(tensor.shape.as_list())]
    return b.helper.make_tensor_value_info(name, onnx_dtype(tensor.dtype), shape)


def _convert(b: OnnxBuilder, op, names: dict) -> None:
    if op.type == "Const":
        for t in op.outputs:
            names[t.name] = b.initializer(np.asarray(op.attrs["value"]), op.name)
        return
    frozen = b.constant(op.outputs[0]) if op.type == "ReadVariableOp" else None
    if op.type == "ReadVariableOp":
        if frozen is None:
            raise UnsupportedOpError(op, "it reads a variable that is not captured")
        names[op.outputs[0].name] = b.initializer(frozen, op.name)
        return
    fn = CONVERTERS.get(op.type)
    if fn is None:
        raise UnsupportedOpError(op)
    ins = []
    for t in op.inputs:
        if t.name not in names:
            raise UnsupportedOpError(op, f"its input {t.name} has no ONNX value")
        ins.append(names[t.name])
    outs = fn(b, op, ins)
    for t, n in zip(op.outputs, outs):
        if n is not None:
            names[t.name] = n


def is_convertible(op) -> bool:
    """Whether the exporter has a conversion for `op`'s type (attributes are checked when it
    converts)."""
    return op.type in CONVERTERS or op.type in ("Const", "ReadVariableOp")


def graph_to_onnx(inputs: list, outputs: list, constants: dict, input_names: list,
                  output_names: list, opset: int = DEFAULT_OPSET, graph_name: str = "ndflow"):
    """The ONNX model computing `outputs` from `inputs` (SymbolicTensors of one graph)."""
    if not isinstance(opset, int) or opset < MIN_OPSET:
        raise ValueError(f"ONNX export needs opset >= {MIN_OPSET}, got {opset!r}")
    b = OnnxBuilder(opset, constants)
    names = {}
    graph_inputs = []
    for t, n in zip(inputs, input_names):
        name = b.unique(n)
        names[t.name] = name
        graph_inputs.append(_value_info(b, name, t, name))
    for op in _needed_ops(inputs, outputs, constants):
        _convert(b, op, names)
    graph_outputs = []
    for t, n in zip(outputs, output_names):
        if t.name not in names:
            raise UnsupportedOpError(t.op, f"output {t.name} has no ONNX value")
        name = b.unique(n)
        b.nodes.append(b.helper.make_node("Identity", [names[t.name]], [name],
                                          name=b.unique(f"node/{name}")))
        graph_outputs.append(_value_info(b, name, t, name))
    # Converters read constant weights as arrays (a filter is stored transposed): drop the
    # initializers of constants that no node reads.
    used = {n for node in b.nodes for n in node.input}
    inits = [t for t in b.initializers if t.name in used]
    graph = b.helper.make_graph(b.nodes, graph_name, graph_inputs, graph_outputs,
                                initializer=inits)
    model = b.helper.make_model(graph, producer_name="ndflow",
                                opset_imports=[b.helper.make_opsetid("", opset)])
    # The IR version the opset was released with, so older runtimes read the file too.
    model.ir_version = min(model.ir_version, _ir_version_for(opset))
    return model


def _ir_version_for(opset: int) -> int:
    onnx = backend.onnx()
    for entry in onnx.helper.VERSION_TABLE:   # (release, ir, opset, ...)
        if entry[2] == opset:
            return entry[1]
    return onnx.IR_VERSION


def check_model(model) -> None:
    """onnx's checker (with shape inference), its errors as InvalidArgumentError."""
    onnx = backend.onnx()
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise errors.InvalidArgumentError(None, None, f"ONNX export produced an invalid "
                                                      f"model: {e}") from e


def save_model_atomic(model, path: str) -> None:
    """Writes the model to `path` through a temp file in the same directory."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".onnx-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the temp file, not the model
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise

"""QuantizedReluX's kernel as TensorFlow 2.21 ships it: none. Its pip build registers no
kernel for the op (`kernels.get_registered_kernels_for_op("QuantizedReluX")` is empty), so
building the op works and running it is TensorFlow's error naming the node and its types:
eagerly the kernel lookup's NotFoundError, in a graph the executor's InvalidArgumentError (a
graph's NodeInfo knows its inputs' readers; an eager one does not)."""

from __future__ import annotations

from ndflow.core.errors import InvalidArgumentError, NotFoundError
from ndflow.core.graph_def import dtype_name
from ndflow.kernels.registry import kernel
from ndflow.ops import quantized_nn_ops as ops


@kernel(ops.QuantizedReluX)
def _quantized_relu_x(node):
    name = "QuantizedReluX"
    attrs = ", ".join(f"{a}=DT_{dtype_name(node.attrs[a]).upper()}"
                      for a in ("Tinput", "out_type"))
    if node.input_readers:
        raise InvalidArgumentError(
            None, None, f"No OpKernel was registered to support Op '{name}' used by {{{{node "
            f"{node.name}}}}} with these attrs: [{attrs}]\nRegistered devices: [CPU]\n"
            "Registered kernels:\n  <no registered kernels>\n")
    raise NotFoundError(None, None, f"Could not find device for node: {{{{node {name}}}}} = "
                        f"{name}[{attrs}]\nAll kernels registered for op {name}:\n"
                        "  <no registered kernels>\n")

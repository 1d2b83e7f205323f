"""Batch-norm folding into convolutions, on a frozen inference GraphDef (TF-TRT's and
grappler's inference-time folding):

- `FusedBatchNorm{,V2,V3}(Conv2D(x, W), scale, offset, mean, var)` in inference mode, NHWC,
  all four statistics constant: W' = W * m with m = scale / sqrt(var + eps) per output
  channel, and the batch norm becomes `BiasAdd(conv, offset - mean * m)`;
- `Mul(Conv2D(x, W) [-> BiasAdd(b)], c)` with a constant per-channel (or scalar) c, which is
  what Keras 3's BatchNormalization leaves after constant folding: W' = W * c, b' = b * c,
  and the Mul becomes an Identity of the convolution.

A fold needs the filter to be a Const read only by this convolution, and the intermediate
values to have no other reader, so no other op sees a changed value.
"""

from __future__ import annotations

import numpy as np
from tensorboard.compat.proto import graph_pb2

from ndflow.core.graph_def import ndarray_to_tensor_proto, tensor_proto_to_ndarray
from ndflow.ops.graph_def_nodes import parse_tensor_name

_BATCH_NORMS = ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")


class _Index:
    def __init__(self, gd: graph_pb2.GraphDef, keep: set):
        self.nodes = {n.name: n for n in gd.node}
        self.readers: dict = {}
        for n in gd.node:
            for inp in n.input:
                src, idx = (inp[1:], -1) if inp.startswith("^") else parse_tensor_name(inp)
                self.readers.setdefault(src, []).append((n.name, idx))
        self.keep = keep

    def producer(self, inp: str):
        if inp.startswith("^"):
            return None, -1
        name, idx = parse_tensor_name(inp)
        return self.nodes.get(name), idx

    def only_reader(self, name: str, reader: str) -> bool:
        return (name not in self.keep and
                [r for r, _ in self.readers.get(name, [])] == [reader])

    def const(self, inp: str):
        node, idx = self.producer(inp)
        if node is None or node.op != "Const" or idx != 0:
            return None
        return tensor_proto_to_ndarray(node.attr["value"].tensor)[0]


def _set_const(node, value: np.ndarray) -> None:
    node.attr["value"].tensor.CopyFrom(ndarray_to_tensor_proto(value))


def _conv_filter(ix: _Index, conv):
    """The conv's filter Const node when this conv may have its filter rewritten."""
    if conv is None or conv.op != "Conv2D" or conv.attr["data_format"].s not in (b"", b"NHWC"):
        return None
    w_node, _ = ix.producer(conv.input[1])
    if w_node is None or w_node.op != "Const" or not ix.only_reader(w_node.name, conv.name):
        return None
    return w_node


def _fold_batch_norm(ix: _Index, bn, gd) -> bool:
    if bn.attr["is_training"].b or bn.attr["data_format"].s not in (b"", b"NHWC"):
        return False
    if any(idx > 0 for _, idx in ix.readers.get(bn.name, [])):
        return False  # the batch statistics outputs are read
    conv, idx = ix.producer(bn.input[0])
    w_node = _conv_filter(ix, conv)
    stats = [ix.const(i) for i in bn.input[1:5]]
    if w_node is None or idx != 0 or any(s is None for s in stats) \
            or not ix.only_reader(conv.name, bn.name):
        return False
    eps = bn.attr["epsilon"].f
    scale, offset, mean, var = (s.astype(np.float64) for s in stats)
    mul = scale / np.sqrt(var + eps)
    w = tensor_proto_to_ndarray(w_node.attr["value"].tensor)[0]
    _set_const(w_node, (w * mul).astype(w.dtype))
    bias = gd.node.add()
    bias.name, bias.op, bias.device = f"{bn.name}/folded_offset", "Const", bn.device
    _set_const(bias, (offset - mean * mul).astype(w.dtype))
    bias.attr["dtype"].type = bias.attr["value"].tensor.dtype
    t = bn.attr["T"].type
    inputs = [bn.input[0], bias.name] + [i for i in bn.input if i.startswith("^")]
    bn.ClearField("attr")
    bn.op = "BiasAdd"
    del bn.input[:]
    bn.input.extend(inputs)
    bn.attr["T"].type = t
    bn.attr["data_format"].s = b"NHWC"
    return True


def _fold_mul(ix: _Index, mul_node) -> bool:
    c_index = next((i for i in (1, 0) if ix.const(mul_node.input[i]) is not None), None)
    if c_index is None:
        return False
    c = ix.const(mul_node.input[c_index])
    src, idx = ix.producer(mul_node.input[1 - c_index])
    bias_node = src if src is not None and src.op == "BiasAdd" else None
    conv = ix.producer(bias_node.input[0])[0] if bias_node is not None else src
    w_node = _conv_filter(ix, conv)
    if w_node is None or idx != 0 or not ix.only_reader(src.name, mul_node.name):
        return False
    w = tensor_proto_to_ndarray(w_node.attr["value"].tensor)[0]
    if c.size not in (1, w.shape[-1]) or c.ndim > 4 or (c.ndim and c.shape[-1] != c.size):
        return False  # broadcasting over anything but the channels would change the shape
    per_channel = c.reshape(-1).astype(np.float64)
    if bias_node is not None:
        b_node, _ = ix.producer(bias_node.input[1])
        if b_node is None or b_node.op != "Const" or \
                not ix.only_reader(b_node.name, bias_node.name) or \
                not ix.only_reader(conv.name, bias_node.name):
            return False
        b = tensor_proto_to_ndarray(b_node.attr["value"].tensor)[0]
        _set_const(b_node, (b * per_channel).astype(b.dtype))
    _set_const(w_node, (w * per_channel).astype(w.dtype))
    t = mul_node.attr["T"].type
    inputs = [mul_node.input[1 - c_index]] + [i for i in mul_node.input if i.startswith("^")]
    mul_node.ClearField("attr")
    mul_node.op = "Identity"
    del mul_node.input[:]
    mul_node.input.extend(inputs)
    mul_node.attr["T"].type = t
    return True


def fold_batch_norms(gd: graph_pb2.GraphDef, keep: set = frozenset()) -> tuple:
    """Folds batch norms (and per-channel constant scales) into convolution filters, in
    place; `keep` names nodes whose values callers read. Returns (gd, number of folds)."""
    folds = 0
    for node in list(gd.node):
        ix = _Index(gd, keep)
        if node.name in keep:
            continue
        if node.op in _BATCH_NORMS and _fold_batch_norm(ix, node, gd):
            folds += 1
        elif node.op == "Mul" and _fold_mul(ix, node):
            folds += 1
    return gd, folds

"""Kernels of Conv (`tf.conv`) and Conv2DBackpropInputV2 / Conv2DBackpropFilterV2, on
ndflow's Conv2D / Conv3D / Conv2DBackpropInput / Conv2DBackpropFilter kernels
(kernels/nn_conv.py, kernels/nn_conv3d.py): the same ATen convolutions, NHWC layout handling,
autotuning and integer path.

Conv checks what TF's ConvOp::Compute checks, in its order and with its messages, then
flattens the `batch_dims` leading dimensions into one (a view; `batch_dims=0` adds a batch of
one), convolves with the Conv2D (2 spatial dims) or Conv3D (3) kernel built once per rank for
the node's attrs, and restores the batch dimensions. An empty output is returned without
convolving, an empty input gives zeros, as TF's. The V2 backprop ops pass the shape of their
`input` / `filter` tensor as the sizes input of the V1 kernels.
"""

from __future__ import annotations

import dataclasses
import math

import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import TensorShape
from ndflow.kernels import nn_conv, nn_conv3d
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_conv as conv_ops
from ndflow.ops import nn_conv3d as conv3d_ops
from ndflow.ops import nn_conv_generic as ops


def _bad(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


def output_size(size: int, k: int, stride: int, dilation: int, padding: str,
                before: int = 0, after: int = 0) -> int:
    """TF's GetWindowedOutputSizeVerbose (C++ integer division; its error)."""
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        return (size + stride - 1) // stride
    if padding == "VALID":
        before = after = 0
    n = size + before + after - eff + stride
    out = n // stride if n >= 0 else -((-n) // stride)
    if out < 0:
        raise _bad(f"Computed output size would be negative: {out} [input_size: {size}, "
                   f"effective_filter_size: {eff}, stride: {stride}]")
    return out


class _ConvAttrs:
    """One Conv node's attrs, checked on each call against the ranks of its inputs (TF's
    ConvOp::Compute), and the Conv2D / Conv3D kernel that computes it for each rank."""

    def __init__(self, node):
        a = node.attrs
        self.node = node
        self.batch_dims = int(a["batch_dims"])
        self.groups = int(a["groups"])
        self.channels_last = a["data_format"] == "CHANNELS_LAST"
        self.strides = [int(v) for v in a["strides"]]
        self.dilations = [int(v) for v in a["dilations"]]
        self.padding = a["padding"]
        self.explicit = [int(v) for v in a.get("explicit_paddings") or []]
        self._kernels: dict = {}

    def check(self, rank: int):
        """(spatial indices, channel index, dilations) for inputs of standard `rank`."""
        spatial, channel = ops.conv_layout(rank, self.channels_last)
        s = self.strides
        if len(s) != rank:
            raise _bad(f"Sliding window strides field must specify {rank} dimensions")
        if s[0] != 1 or s[channel] != 1:
            raise _bad("Current implementation does not support strides in the batch and "
                       "depth dimensions.")
        if any(s[d] <= 0 for d in spatial):
            raise _bad("Spatial strides should be larger than 0.")
        d = self.dilations or [1] * rank
        if len(d) != rank:
            raise _bad(f"Dilation rates field must specify{rank}dimensions")  # (TF's text)
        if d[0] != 1 or d[channel] != 1:
            raise _bad("Current implementation does not support dilation rates in the batch "
                       "and depth dimensions.")
        if any(d[i] <= 0 for i in spatial):
            raise _bad("Dilated rates should be larger than 0.")
        if rank == 5 and self.padding == "EXPLICIT":  # TF's CPU kernel aborts the process
            raise _bad("Explicit padding not supported for 3D Convolution")
        try:
            ops.check_explicit_paddings(self.padding, self.explicit, rank, channel)
        except ValueError as e:
            raise _bad(str(e)) from None
        return spatial, channel, d

    def kernel(self, rank: int, dilations: list):
        """The Conv2D (rank 4) or Conv3D (rank 5) kernel of the node's attrs."""
        fn = self._kernels.get(rank)
        if fn is None:
            node = self.node
            attrs = {"T": node.attrs["T"], "strides": self.strides, "padding": self.padding,
                     "dilations": dilations}
            if rank == 4:
                op_def, factory = conv_ops.Conv2D, nn_conv._forward
                attrs.update(data_format="NHWC" if self.channels_last else "NCHW",
                             explicit_paddings=self.explicit, use_cudnn_on_gpu=True)
            else:
                op_def, factory = conv3d_ops.Conv3D, nn_conv3d.conv3d_forward
                attrs["data_format"] = "NDHWC" if self.channels_last else "NCDHW"
            sub = dataclasses.replace(node, op_def=op_def, attrs=attrs,
                                      input_shapes=[TensorShape(None)] * 2,
                                      output_shapes=[TensorShape(None)])
            fn = self._kernels[rank] = nn_conv._int_safe(sub, factory(sub))
        return fn


@kernel(ops.Conv)
def _conv(node):
    c = _ConvAttrs(node)
    bd = c.batch_dims

    def conv(x, w):
        rank = x.dim() - bd + 1
        if rank - 2 not in (2, 3):
            raise _bad(f"The input must have 2 or 3 spatial dimensions but got {rank - 2}")
        if w.numel() == 0:
            raise _bad("filter must not have zero elements (i.e. all dimensions must be "
                       "non-zero)")
        if w.dim() not in (4, 5):
            raise _bad(f"The filter must be rank 4 or 5 but got {w.dim()}")
        if w.dim() != rank:  # TF's CPU kernel aborts the process
            raise _bad("Input tensor rank must be the same as filter rank.")
        spatial, channel, dilations = c.check(rank)
        batch_shape = list(x.shape[:bd])
        xf = x.reshape([math.prod(batch_shape)] + list(x.shape[bd:]))
        depth, f_depth, out_depth = xf.shape[channel], w.shape[-2], w.shape[-1]
        if depth != f_depth * c.groups:
            if c.groups == 1:
                raise _bad(f"Input depth must be equal to filter depth: {depth} vs {f_depth}")
            raise _bad(f"Input depth divided by filter input depth does not match with "
                       f"groups parameter ({c.groups})")
        if out_depth % c.groups:
            raise _bad("Number of groups should divide output depth")
        ex = c.explicit
        out = [output_size(xf.shape[d], w.shape[i], c.strides[d], dilations[d], c.padding,
                           *((ex[2 * d], ex[2 * d + 1]) if ex else (0, 0)))
               for i, d in enumerate(spatial)]
        shape = [xf.shape[0]] + out + [out_depth] if c.channels_last else \
            [xf.shape[0], out_depth] + out
        if math.prod(shape) == 0 or xf.numel() == 0:
            y = torch.zeros(shape, dtype=x.dtype, device=x.device)
        else:
            y = c.kernel(rank, dilations)(xf, w)
        return y.reshape(batch_shape + list(y.shape[1:]))
    return conv


def _sub_node(node, op_def):
    """`node` as the V1 backprop op `op_def` (whose sizes input is int32)."""
    t = node.attrs["T"]
    index = 0 if op_def is conv_ops.Conv2DBackpropInput else 1
    input_dtypes = [t, t, t]
    input_dtypes[index] = dtypes.int32
    return dataclasses.replace(node, op_def=op_def, input_dtypes=input_dtypes,
                               input_shapes=[TensorShape(None)] * 3)


@kernel(ops.Conv2DBackpropInputV2)
def _conv2d_backprop_input_v2(node):
    sub = _sub_node(node, conv_ops.Conv2DBackpropInput)
    fn = nn_conv._int_safe(sub, nn_conv._backprop_input(sub))

    def backprop_input_v2(x, w, g):
        return fn(torch.tensor(list(x.shape), dtype=torch.int64), w, g)
    return backprop_input_v2


@kernel(ops.Conv2DBackpropFilterV2)
def _conv2d_backprop_filter_v2(node):
    sub = _sub_node(node, conv_ops.Conv2DBackpropFilter)
    fn = nn_conv._backprop_filter(sub)

    def backprop_filter_v2(x, w, g):
        return fn(x, torch.tensor(list(w.shape), dtype=torch.int64), g)
    return backprop_filter_v2

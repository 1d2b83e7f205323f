"""Which values a plan or a compiled cluster on a GPU keeps in host memory, as TensorFlow's
GPU kernels declare some inputs and outputs host memory: scalars that variable updates read to
Python, and int32 shapes, sizes and axes that ops read only as such. Made on the GPU, each
would be a copy there and a wait to read it back (benchmarks/gpu_syncs.py counts the waits of
the MNIST step on a GPU). Copies to a GPU go through pinned memory (`devices.copy_to`)."""

from __future__ import annotations

import torch

from ndflow.core import devices, dtypes

HOST = torch.device("cpu")

# The ops that update variables and take their scalars (lr, momentum, an increment) to Python
# or to ATen as host scalars.
_UPDATES = ("ResourceApply", "ResourceSparseApply", "_ResourceApply", "_GroupedApply",
            "_MatMulApply", "AssignAddVariableOp", "AssignSubVariableOp")

# The int32 inputs (by op type) that TensorFlow's GPU kernels take in host memory (`HostMemory`
# in their registrations) and ndflow's kernels read to Python: shapes, sizes, axes, never
# computed on.
_HOST_INPUTS = {"Conv2DBackpropInput": (0,), "DepthwiseConv2dNativeBackpropInput": (0,),
                "Conv2DBackpropFilter": (1,), "DepthwiseConv2dNativeBackpropFilter": (1,),
                "RandomUniform": (0,), "RandomStandardNormal": (0,), "TruncatedNormal": (0,),
                "Reshape": (1,), "ExpandDims": (1,), "Transpose": (1,), "Tile": (1,),
                "Fill": (0,), "BroadcastTo": (1,), "Pad": (1,), "PadV2": (1,),
                "Slice": (1, 2), "StridedSlice": (1, 2, 3),
                "Sum": (1,), "Mean": (1,), "Max": (1,), "Min": (1,), "Prod": (1,),
                "UnsortedSegmentSum": (2,), "UnsortedSegmentMax": (2,),
                "UnsortedSegmentMin": (2,), "UnsortedSegmentProd": (2,), "ScatterNd": (2,)}


# Ops whose output holds an input's values in a larger tensor (a view or a copy made where
# that input is): a host scalar read by one of them on a GPU is copied there, else the op
# would make a host tensor that the GPU ops after it could not read as a scalar.
_SPREADS = frozenset({"Reshape", "ExpandDims", "Fill", "BroadcastTo", "Tile", "Pack",
                      "ConcatV2", "Concat", "Pad", "PadV2", "MirrorPad"})


def to_device(value, dev: torch.device, scalars_stay: bool = True):
    """`value` copied to `dev` for an op placed there, unless it stays where it is: int32
    tensors and scalars stay in host memory (TensorFlow's GPU kernels take int32 inputs, shapes
    and the like, in host memory; ATen reads a 0-d CPU tensor beside device tensors as a
    scalar, and a kernel reading it to Python then needs no copy back and no sync).
    `scalars_stay`: False for an op that `spreads` its input."""
    if (isinstance(value, torch.Tensor) and value.device != dev
            and not (value.device.type == "cpu" and ((scalars_stay and value.dim() == 0)
                                                     or value.dtype == torch.int32))):
        return devices.copy_to(value, dev)
    return value


def spreads(op) -> bool:
    """Whether `op` puts an input's values into a larger output (`_SPREADS`)."""
    return op.type in _SPREADS


def is_update(op) -> bool:
    return op.type.startswith(_UPDATES)


def device_scalar(value) -> bool:
    """Whether `value` is a 0-d tensor on an accelerator (a constant an update would read)."""
    return isinstance(value, torch.Tensor) and value.dim() == 0 and value.device.type != "cpu"


def shape_on_host(op, readers: dict) -> bool:
    """Whether `op` is an int32 Shape, ShapeN or Const whose every reader takes it in host
    memory (a convolution gradient's sizes, a random op's shape, reduction axes), as
    TensorFlow's GPU kernels of Shape and of int32 Const write host memory. (An int64 shape
    would be copied to the GPU op anyway: only int32 and scalars stay on the host there,
    `to_device`.)"""
    if op.type not in ("Shape", "ShapeN", "Const") \
            or any(t.dtype != dtypes.int32 for t in op.outputs):
        return False
    return read_in_host_memory(op.outputs, readers)


def read_in_host_memory(tensors, readers: dict) -> bool:
    """Whether `tensors` are read, and only at inputs TensorFlow's GPU kernels take in host
    memory (`readers`: tensor -> the ops reading it)."""
    for t in tensors:
        for u in readers.get(t, ()):
            slots = _HOST_INPUTS.get(u.type)
            if slots is None or any(x is t and j not in slots for j, x in enumerate(u.inputs)):
                return False
    return any(readers.get(t) for t in tensors)


# Scalar arithmetic that may run on the host for updates (`host_scalar_chains`)
_SCALAR_MATH = frozenset("""
Const Identity ReadVariableOp Cast AddV2 Add Sub Mul RealDiv Div DivNoNan Pow Sqrt Rsqrt
Reciprocal Neg Abs Sign Square Exp Log Maximum Minimum Floor Ceil Round FloorDiv FloorMod
Less LessEqual Greater GreaterEqual Equal NotEqual LogicalAnd LogicalOr LogicalNot
Select SelectV2
""".split())


def host_scalar_chains(ops, readers: dict, on_gpu, fetched) -> set:
    """The ops placed on a GPU (`on_gpu(op)`) that only compute scalars for variable updates
    (a learning rate read, a loss scale's reciprocal, Adam's bias corrections): each reads
    only host values or other such ops, and every reader of its outputs is an update or
    another such op. ndflow's updates read their scalars to Python, so computed on the GPU
    each would be a wait for the device; on the host they cost a few ATen scalar ops.
    (TensorFlow's GPU update kernels read them in device memory instead.) A read of a
    captured handle may not know its rank: what updates read through one are their scalars,
    and a vector read on the host would be copied over for them."""
    def scalar(op):
        return all(t.shape.rank == 0 or (t.shape.rank is None and op.type == "ReadVariableOp")
                   for t in op.outputs)
    chain = {op for op in ops
             if op.type in _SCALAR_MATH and on_gpu(op) and op.outputs and scalar(op)
             and not fetched.intersection(op.outputs)}
    changed = True
    while changed:
        changed = False
        for op in list(chain):
            users = [u for t in op.outputs for u in readers.get(t, ())]
            ok = users and all(u in chain or is_update(u) for u in users) and all(
                t.op in chain or t.op.type == "Const" or t.dtype == dtypes.resource
                or not on_gpu(t.op) for t in op.inputs)
            if not ok:
                chain.discard(op)
                changed = True
    return chain

"""Horovod's tensor collectives as graph-level ops: `allreduce`, `grouped_allreduce`,
`allgather`, `broadcast`, `broadcast_variables`, `broadcast_global_variables`, and
`allgather_object`/`broadcast_object` (JSON, eager).

Every all-reduce is TensorFlow's `CollectiveReduceV2` op (kernel on torch.distributed), so the
same code runs eagerly, inside `tf.function` and in TF1 Sessions. `grouped_allreduce` packs
gradients as DDP does: per dtype, flattened and concatenated into buckets of about 25 MB, one
collective per bucket, then split back. A broadcast in a graph is a sum in which only the root
contributes (its value; the others zeros), which is exact; eagerly, variables are broadcast
with torch.distributed's broadcast directly. Before the first collective over a set of
variables, their names, shapes and dtypes are compared across workers
(`collective.check_consistent`): a mismatch is an InvalidArgumentError naming the variable
and both shapes, instead of a hang or a silent divergence.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.tensor import EagerTensor
from ndflow.distribute import collective
from ndflow.distribute.horovod import basics
from ndflow.ops import collective_ops, variables
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import constant, group, identity, reshape
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split
from ndflow.ops.indexed_slices import IndexedSlices, densify

BUCKET_BYTES = collective.BUCKET_BYTES
_counter = {"instance": 0}


def _collective_reduce(tensor, op: basics.ReduceOp, name: str | None):
    _counter["instance"] += 1  # names the collective in errors
    return apply_op(collective_ops.CollectiveReduceV2,
                    [tensor, constant(basics.size(), name="group_size"),
                     constant(0, name="group_key"),
                     constant(_counter["instance"], name="instance_key"), []],
                    {"merge_op": op.merge_op, "final_op": op.final_op}, name=name).outputs[0]


def _scaled(tensor, factor: float):
    return tensor if factor == 1.0 else tensor * constant(factor, tensor.dtype)


def allreduce(tensor, average=None, device_dense="", device_sparse="",
              compression=basics.Compression.none, op=None, prescale_factor=1.0,
              postscale_factor=1.0, name=None, process_set=None, ignore_name_scope=False):
    """The element-wise reduction (default: average) of `tensor` over all workers."""
    return grouped_allreduce([tensor], average, device_dense, device_sparse, compression, op,
                             prescale_factor, postscale_factor, name)[0]


def grouped_allreduce(tensors, average=None, device_dense="", device_sparse="",
                      compression=basics.Compression.none, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, name=None, process_set=None,
                      bucket_bytes: int = BUCKET_BYTES):
    """`allreduce` of each tensor (None passes through), bucketed: one collective per ~25 MB
    of same-dtype tensors. IndexedSlices (sparse gradients) are densified first."""
    op = basics.reduce_op(op, average)
    out = [None if t is None else convert_to_tensor(densify(t) if isinstance(t, IndexedSlices)
                                                    else t) for t in tensors]
    if basics.size() == 1:
        return [None if t is None else identity(_scaled(t, prescale_factor * postscale_factor))
                for t in out]
    present = [i for i, t in enumerate(out) if t is not None]
    compressed = {}
    for i in present:
        value, ctx = compression.compress(_scaled(out[i], prescale_factor))
        compressed[i] = (value, ctx)
    for bucket in _buckets([compressed[i][0] for i in present], bucket_bytes):
        indices = [present[j] for j in bucket]
        values = [compressed[i][0] for i in indices]
        if len(values) == 1 or any(not v.shape.is_fully_defined() for v in values):
            reduced = [_collective_reduce(v, op, name) for v in values]
        else:
            sizes = [v.shape.num_elements() for v in values]
            flat = _collective_reduce(concat([reshape(v, [-1]) for v in values], 0), op, name)
            reduced = [reshape(piece, v.shape.as_list())
                       for piece, v in zip(split(flat, sizes), values)]
        for i, r in zip(indices, reduced):
            out[i] = _scaled(compression.decompress(r, compressed[i][1]), postscale_factor)
    return out


def _buckets(values, bucket_bytes: int) -> list[list[int]]:
    """Positions of `values` grouped by dtype into buckets of about `bucket_bytes`."""
    buckets, open_ = [], {}
    for j, v in enumerate(values):
        n = v.shape.num_elements() if v.shape.is_fully_defined() else None
        size = bucket_bytes if n is None else n * v.dtype.size
        b = open_.get(v.dtype)
        if b is None or b[1] + size > bucket_bytes:
            b = open_[v.dtype] = [[], 0]
            buckets.append(b[0])
        b[0].append(j)
        b[1] += size
    return buckets


def allgather(tensor, name=None, process_set=None, ignore_name_scope=False):
    """Every worker's `tensor` concatenated along the first dimension, in rank order (the
    first dimension may differ between workers)."""
    tensor = convert_to_tensor(tensor)
    if basics.size() == 1:
        return identity(tensor)
    _counter["instance"] += 1
    return apply_op(collective_ops.CollectiveGatherV2,
                    [tensor, constant(basics.size(), name="group_size"),
                     constant(0, name="group_key"),
                     constant(_counter["instance"], name="instance_key"), []],
                    {}, name=name).outputs[0]


def allgather_object(obj, name=None, process_set=None) -> list:
    """Every worker's `obj`, by rank. Objects travel as JSON (nothing from a peer is ever
    unpickled), so they must be JSON-serialisable."""
    return collective.all_gather_json(obj)


def broadcast_object(obj, root_rank: int = 0, name=None, process_set=None):
    """Rank `root_rank`'s `obj` on every worker (JSON-serialisable, as allgather_object)."""
    _check_root(root_rank)
    return collective.all_gather_json(obj if basics.rank() == root_rank else None)[root_rank]


def broadcast(tensor, root_rank: int, name=None, process_set=None, ignore_name_scope=False):
    """Rank `root_rank`'s value of `tensor`, on every worker."""
    tensor = convert_to_tensor(tensor)
    _check_root(root_rank)
    if basics.size() == 1:
        return identity(tensor)
    contribution = tensor if basics.rank() == root_rank else zeros_like(tensor)
    return _collective_reduce(contribution, basics.Sum, name)


def _check_root(root_rank: int) -> None:
    if not 0 <= root_rank < basics.size():
        raise ValueError(f"root_rank {root_rank} is not a rank of the {basics.size()} workers")


def _variable_name(v) -> str:
    return getattr(v, "path", None) or getattr(v, "name", None) or "<unnamed>"


def check_variables(vars_, what: str = "variable") -> None:
    """The variables' names, shapes and dtypes agree on every worker (InvalidArgumentError
    naming the first that does not)."""
    collective.check_consistent([(_variable_name(v), tuple(v.shape.as_list()), v.dtype.name)
                                 for v in vars_], what)


def broadcast_variables(variables_, root_rank: int, process_set=None, inplace=False):
    """Assigns rank `root_rank`'s values to `variables_` on every worker. Eagerly the
    assignment is done; in a graph the grouped assign op is returned."""
    vars_ = list(variables_)
    _check_root(root_rank)
    if basics.size() > 1:
        check_variables(vars_)
    if context.executing_eagerly():
        if basics.size() > 1 and vars_:
            values = collective.broadcast([v.read_value().value for v in vars_], root=root_rank)
            for v, value in zip(vars_, values):
                v.assign(EagerTensor(value, v.dtype), read_value=False)
        return None
    assigns = [v.assign(broadcast(v.read_value(), root_rank), read_value=False) for v in vars_]
    return group(*assigns, name="broadcast_variables")


def broadcast_global_variables(root_rank: int):
    """TF1: the op assigning rank `root_rank`'s values to every global variable."""
    if context.executing_eagerly():
        raise RuntimeError("hvd.broadcast_global_variables() does not support eager execution. "
                           "Please use `hvd.broadcast_variables(<model/optimizer variables>)` "
                           "instead.")
    return broadcast_variables(variables.global_variables(), root_rank)

"""ATen kernels for GatherNd, ScatterNd and the TensorScatter family: the K coordinates of
each index become one row number of the indexed tensor seen as [rows, slice...]."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph_def import dtype_name
from ndflow.kernels.registry import kernel, no_kernel_error
from ndflow.ops import array_nd

POLICIES = ("", "DEFAULT", "ERROR", "IGNORE")
# TF 2.21's GatherNd CPU kernels, in its registration order (listed by its no-kernel error)
_GATHER_ND_TYPES = (
    "FLOAT8_E4M3FN", "FLOAT8_E5M2", "QINT32", "QUINT8", "QINT8", "VARIANT", "RESOURCE",
    "STRING", "BOOL", "COMPLEX128", "COMPLEX64", "DOUBLE", "FLOAT", "BFLOAT16", "HALF", "INT32",
    "INT8", "UINT8", "INT16", "UINT16", "UINT32", "INT64", "UINT64")
_GATHER_ND_XLA = (
    "FLOAT", "DOUBLE", "INT32", "UINT8", "INT16", "INT8", "COMPLEX64", "INT64", "BOOL",
    "QINT8", "QUINT8", "QINT32", "BFLOAT16", "UINT16", "COMPLEX128", "HALF", "UINT32",
    "UINT64", "FLOAT8_E5M2", "FLOAT8_E4M3FN", "FLOAT8_E4M3FNUZ", "FLOAT8_E4M3B11FNUZ",
    "FLOAT8_E5M2FNUZ", "INT4", "UINT4")


def ignores(node) -> bool:
    """Whether the node's `bad_indices_policy` is "IGNORE": an out-of-range index then
    reads zeros (GatherNd) or is skipped (the scatters), as TF's CPU kernels. Another
    value than TF's four fails as TF's scatter kernels fail when made."""
    policy = node.attrs.get("bad_indices_policy", "")
    if policy not in POLICIES:
        raise InvalidArgumentError(None, None,
                                   f"Unknown bad indices handling attribute: {policy}")
    return policy == "IGNORE"


def gather_nd_node_name(node) -> str:
    """The node GatherNd's index error names: the graph's node, or eagerly the op type (an
    eager node knows no readers of its inputs)."""
    return node.name if node.input_readers else "GatherNd"


def gather_nd_ignores(node) -> bool:
    """`ignores` for GatherNd, whose kernels TF registers for the four policies only: another
    one is TF's no-kernel error."""
    policy = node.attrs.get("bad_indices_policy", "")
    if policy not in POLICIES:
        raise _gather_nd_no_kernel(node, policy)
    return policy == "IGNORE"


def _gather_nd_no_kernel(node, policy: str):
    def dt(attr):
        return "DT_" + dtype_name(node.attrs[attr]).upper()
    attrs = f'Tindices={dt("Tindices")}, Tparams={dt("Tparams")}, bad_indices_policy="{policy}"'
    allowed = ", ".join(f'"{p}"' for p in POLICIES)
    registered = [f"  device='XLA_CPU_JIT'; Tindices in [DT_INT32, DT_INT16, DT_INT64]; "
                  f"Tparams in [{', '.join('DT_' + t for t in _GATHER_ND_XLA)}]"]
    registered += [f"  device='CPU'; Tparams in [DT_{t}]; Tindices in [DT_{i}]; "
                   f"bad_indices_policy in [{allowed}]"
                   for t in _GATHER_ND_TYPES for i in ("INT64", "INT32", "INT16")]
    return no_kernel_error(node, "GatherNd", attrs, "\n".join(registered))


def _rows(indices: torch.Tensor, shape: tuple, what: str, ignore: bool = False,
          node_name: str | None = None):
    """(row numbers [N], K, keep) for `indices` [..., K] into a tensor of `shape`; TF's
    error for an index out of range (GatherNd's ends with ", node name: <node_name>"), or
    with `ignore` the mask `keep` [N] of the indices in range (their rows; the others' rows
    are 0), None when every index is in range."""
    if indices.dim() < 1:
        raise InvalidArgumentError(None, None, f"indices must be at least a vector, got "
                                   f"shape {list(indices.shape)}")
    k = indices.shape[-1]
    if k > len(shape):
        raise InvalidArgumentError(None, None, f"index innermost dimension length must be <= "
                                   f"{what} rank; saw: {k} vs. {len(shape)}")
    flat = indices.reshape(-1, k).long()
    dims = torch.tensor(shape[:k], dtype=torch.long, device=indices.device)
    bad = ((flat < 0) | (flat >= dims)).any(dim=1)
    keep = None
    if ignore and bool(bad.any()):
        keep = ~bad
        flat = flat.masked_fill(bad.unsqueeze(1), 0)
    elif bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        position = list(torch.unravel_index(torch.tensor(i), tuple(indices.shape[:-1]))) \
            if indices.dim() > 1 else []
        where = ",".join(str(int(p)) for p in position)
        raise InvalidArgumentError(None, None, f"indices[{where}] = "
                                   f"[{', '.join(str(int(v)) for v in flat[i])}] does not index "
                                   f"into {'param ' if what == 'param' else ''}shape "
                                   f"[{','.join(str(d) for d in shape)}]"
                                   + (f", node name: {node_name}" if node_name else ""))
    strides = [1] * k
    for j in range(k - 2, -1, -1):
        strides[j] = strides[j + 1] * shape[j + 1]
    rows = (flat * torch.tensor(strides, dtype=torch.long, device=indices.device)).sum(dim=1)
    return rows, k, keep


@kernel(array_nd.GatherNd)
def _gather_nd(node):
    ignore, node_name = gather_nd_ignores(node), gather_nd_node_name(node)

    def gather_nd(params, indices):
        rows, k, keep = _rows(indices, tuple(params.shape), "param", ignore, node_name)
        table = params.reshape((-1,) + tuple(params.shape[k:]))
        if keep is None:
            out = table[rows]
        else:   # IGNORE: zeros for the indices out of range
            out = table.new_zeros((rows.shape[0],) + tuple(params.shape[k:]))
            out[keep] = table[rows[keep]]
        return out.reshape(tuple(indices.shape[:-1]) + tuple(params.shape[k:]))
    return gather_nd


def _as_rows(out_shape: tuple, indices, updates, what: str, ignore: bool = False):
    rows, k, keep = _rows(indices, out_shape, what, ignore)
    tail = out_shape[k:]
    want = tuple(indices.shape[:-1]) + tuple(tail)
    if tuple(updates.shape) != want:
        got = list(updates.shape)[indices.dim() - 1:]
        raise InvalidArgumentError(None, None, f"Dimensions [{indices.dim() - 1},"
                                   f"{updates.dim()}) of updates[shape={list(updates.shape)}] = "
                                   f"{got} must match dimensions [{k},{len(out_shape)}) of "
                                   f"{what}[shape={list(out_shape)}] = {list(tail)}")
    values = updates.reshape((-1,) + tuple(tail))
    if keep is not None:   # IGNORE: the updates at indices out of range are dropped
        rows, values = rows[keep], values[keep]
    return rows, values, k


@kernel(array_nd.ScatterNd)
def _scatter_nd(node):
    ignore = ignores(node)

    def scatter_nd(indices, updates, shape):
        out_shape = tuple(int(d) for d in shape.tolist())
        if any(d < 0 for d in out_shape):
            raise InvalidArgumentError(None, None, f"Dimensions must be non-negative, got "
                                       f"{list(out_shape)}")
        rows, values, k = _as_rows(out_shape, indices, updates, "output", ignore)
        out = torch.zeros((int(torch.tensor(out_shape[:k]).prod()),) + out_shape[k:],
                          dtype=updates.dtype, device=updates.device)
        return out.index_add_(0, rows, values).reshape(out_shape)
    return scatter_nd


def _tensor_scatter(apply):
    def factory(node):
        ignore = ignores(node)

        def tensor_scatter(tensor, indices, updates):
            shape = tuple(tensor.shape)
            rows, values, k = _as_rows(shape, indices, updates, "tensor", ignore)
            out = tensor.reshape((-1,) + shape[k:]).clone()
            return apply(out, rows, values).reshape(shape)
        return tensor_scatter
    return factory


def _update(out, rows, values):
    out[rows] = values
    return out


def _reduce(mode: str):
    def apply(out, rows, values):
        index = rows.reshape((-1,) + (1,) * (values.dim() - 1)).expand_as(values)
        return out.scatter_reduce_(0, index, values, mode, include_self=True)
    return apply


kernel(array_nd.TensorScatterUpdate)(_tensor_scatter(_update))
kernel(array_nd.TensorScatterAdd)(_tensor_scatter(lambda out, r, v: out.index_add_(0, r, v)))
kernel(array_nd.TensorScatterSub)(_tensor_scatter(lambda out, r, v: out.index_add_(0, r, -v)))
kernel(array_nd.TensorScatterMin)(_tensor_scatter(_reduce("amin")))
kernel(array_nd.TensorScatterMax)(_tensor_scatter(_reduce("amax")))

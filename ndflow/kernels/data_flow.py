"""ATen kernels for DynamicPartition and DynamicStitch."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import data_flow


@kernel(data_flow.DynamicPartition)
def _dynamic_partition(node):
    num = node.attrs["num_partitions"]

    def dynamic_partition(data, partitions):
        rank = partitions.dim()
        if tuple(data.shape[:rank]) != tuple(partitions.shape):
            raise InvalidArgumentError(
                None, None, f"data.shape must start with partitions.shape, got data.shape = "
                f"{list(data.shape)}, partitions.shape = {list(partitions.shape)}")
        flat = partitions.reshape(-1)
        bad = (flat < 0) | (flat >= num)
        if bool(bad.any()):
            i = int(bad.nonzero()[0, 0])
            raise InvalidArgumentError(None, None, f"partitions[{i}] = {int(flat[i])} is not "
                                       f"in [0, {num})")
        rows = data.reshape((flat.numel(),) + tuple(data.shape[rank:]))
        return tuple(rows[flat == p] for p in range(num))
    return dynamic_partition


@kernel(data_flow.DynamicStitch)
def _dynamic_stitch(node):
    n = node.attrs["N"]

    def dynamic_stitch(*args):
        indices, data = args[:n], args[n:]
        element = None
        flat_indices, flat_data = [], []
        for m, (ind, d) in enumerate(zip(indices, data)):
            if tuple(d.shape[:ind.dim()]) != tuple(ind.shape):
                raise InvalidArgumentError(
                    None, None, f"data[{m}].shape = {list(d.shape)} does not start with "
                    f"indices[{m}].shape = {list(ind.shape)}")
            tail = tuple(d.shape[ind.dim():])
            if element is not None and tail != element:
                raise InvalidArgumentError(
                    None, None, f"Need data[0].shape[{indices[0].dim()}:] = {list(element)}, "
                    f"got data[{m}].shape[{ind.dim()}:] = {list(tail)}")
            element = tail
            flat_indices.append(ind.reshape(-1).long())
            flat_data.append(d.reshape((-1,) + tail))
        idx = torch.cat(flat_indices)
        values = torch.cat(flat_data)
        negative = (idx < 0).nonzero()
        if negative.numel():
            raise InvalidArgumentError(None, None, f"indices[{int(negative[0, 0])}] is out of "
                                       "range")
        rows = int(idx.max()) + 1 if idx.numel() else 0
        # The last writer of each row wins, as TensorFlow's kernel writes in order.
        position = torch.arange(idx.numel(), dtype=torch.long, device=idx.device)
        last = torch.full((rows,), -1, dtype=torch.long, device=idx.device).scatter_reduce(
            0, idx, position, reduce="amax")
        out = torch.zeros((rows,) + element, dtype=values.dtype, device=values.device)
        written = last >= 0
        out[written] = values[last[written]]
        return out
    return dynamic_stitch

"""ATen kernels for the segment reductions: one `scatter_reduce` into a buffer that holds
each reduction's value for an empty segment."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import segment

_REDUCE = {"Sum": "sum", "Mean": "mean", "Max": "amax", "Min": "amin", "Prod": "prod"}


def _fill_value(how: str, dtype: torch.dtype, unsorted: bool):
    if how == "prod":
        return 1
    if not unsorted or how in ("sum", "mean"):
        return 0
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.min if how == "amax" else info.max  # TF: lowest / highest value


def _reduce(values: torch.Tensor, ids: torch.Tensor, rows: int, how: str, unsorted: bool):
    out = torch.full((rows,) + tuple(values.shape[1:]), _fill_value(how, values.dtype, unsorted),
                     dtype=values.dtype, device=values.device)
    if ids.numel():
        index = ids.reshape((-1,) + (1,) * (values.dim() - 1)).expand_as(values)
        out.scatter_reduce_(0, index, values, how, include_self=False)
    return out


def _sorted_factory(how: str):
    def factory(node):
        def sorted_segment(data, ids):
            if ids.dim() != 1:
                raise InvalidArgumentError(None, None, "segment_ids should be a vector.")
            if data.dim() < 1 or ids.shape[0] != data.shape[0]:
                raise InvalidArgumentError(
                    None, None, "segment_ids should be the same size as dimension 0 of input.")
            ids = ids.long()
            if ids.numel():
                if int(ids[0]) < 0:
                    raise InvalidArgumentError(None, None, "segment ids must be >= 0")
                if bool((ids[1:] < ids[:-1]).any()):
                    raise InvalidArgumentError(None, None, "segment ids are not increasing")
            rows = int(ids[-1]) + 1 if ids.numel() else 0
            return _reduce(data, ids, rows, how, unsorted=False)
        return sorted_segment
    return factory


def _unsorted_factory(how: str):
    def factory(node):
        def unsorted_segment(data, ids, num_segments):
            num = int(num_segments)
            if num < 0:
                raise InvalidArgumentError(None, None, f"num_segments must be non-negative, got "
                                           f"{num}")
            if tuple(data.shape[:ids.dim()]) != tuple(ids.shape):
                raise InvalidArgumentError(
                    None, None, f"data.shape = {list(data.shape)} does not start with "
                    f"segment_ids.shape = {list(ids.shape)}")
            flat = ids.reshape(-1).long()
            values = data.reshape((flat.numel(),) + tuple(data.shape[ids.dim():]))
            too_big = (flat >= num).nonzero()
            if too_big.numel():
                i = int(too_big[0, 0])
                raise InvalidArgumentError(None, None, f"segment_ids[{i}] = {int(flat[i])} is "
                                           f"out of range [0, {num})")
            keep = flat >= 0
            if not bool(keep.all()):
                flat, values = flat[keep], values[keep]
            return _reduce(values, flat, num, how, unsorted=True)
        return unsorted_segment
    return factory


for _name, _how in _REDUCE.items():
    kernel(getattr(segment, f"Segment{_name}"))(_sorted_factory(_how))
for _name in ("Max", "Min", "Prod"):
    kernel(getattr(segment, f"UnsortedSegment{_name}"))(_unsorted_factory(_REDUCE[_name]))

"""Kernels of the conditional accumulator ops (ops/data_flow_accumulators.py), with
TensorFlow's rules and messages.

An accumulator handle's runtime value is the `Accumulator` itself, one per (container,
shared_name or node name) in the runtime context, so every plan of a Session (workers
applying gradients, a chief taking them) reaches the same one. `take` waits on its
condition variable until enough gradients arrived (or the run's deadline passes, or the
Session closes: CancelledError). Sparse gradients are merged as TF's kernel merges them:
a two-pointer merge of the accumulated indices with the new ones, equal indices summed and
counted, so the mean is per index and the output order is TF's.
"""

from __future__ import annotations

import threading

import torch

from ndflow.core import run_deadline, tf_logging
from ndflow.core.errors import (
    InvalidArgumentError,
    NotFoundError,
)
from ndflow.core.graph_def import dtype_name
from ndflow.core.shapes import TensorShape
from ndflow.kernels.registry import kernel
from ndflow.kernels.shared_resources import creator_kernel
from ndflow.ops import data_flow_accumulators as ops


def _dims(shape) -> str:
    """TF's (Partial)TensorShape::DebugString: `[2,?]`, `<unknown>`."""
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _check_leading(what: str, declared: list, got: list, rank: int, first: int) -> None:
    """TF's sparse accumulator rule: `got` has at least `declared`'s rank and equals it on
    `declared`'s known dims from `first` on."""
    if len(declared) > rank:
        raise InvalidArgumentError(None, None, f"Shape mismatch: expected {what} rank at "
                                   f"least {len(declared)}, got {rank}")
    for i in range(first, len(declared)):
        if declared[i] is not None and declared[i] != got[i]:
            raise InvalidArgumentError(None, None, f"Shape mismatch: expected {what} dim {i} "
                                       f"to be {declared[i]}, got {got[i]}")


class Accumulator:
    """One accumulator's state: global step, count, and the running sum."""

    def __init__(self, sparse: bool, attrs: dict):
        self.sparse = sparse
        self.dtype = attrs["dtype"]
        declared = TensorShape(attrs["shape"])
        self.shape = None if declared.rank is None else list(declared.as_list())
        self.mean = attrs.get("reduction_type", "MEAN") == "MEAN"
        self.global_step = 0
        self.counter = 0
        self.sum = None          # dense: the sum; sparse: the values, one row per index
        self.indices: list = []  # sparse: the accumulated indices, in merge order
        self.counts: list = []   # sparse: how many gradients added to each index
        self.cond = threading.Condition()
        self.session_closed = False

    def cancel_on_session_close(self) -> None:
        """Session.close: takes still waiting fail with CancelledError, as in TF."""
        with self.cond:
            self.session_closed = True
            self.cond.notify_all()

    # -- dense --------------------------------------------------------------------------------
    def apply_dense(self, local_step: int, grad: torch.Tensor) -> None:
        with self.cond:
            if local_step < self.global_step:
                return  # stale: dropped
            got = list(grad.shape)
            if self.shape is not None and (len(self.shape) != len(got) or any(
                    d is not None and d != g for d, g in zip(self.shape, got))):
                raise InvalidArgumentError(None, None, f"Shape mismatch: expected "
                                           f"{_dims(self.shape)}, got {_dims(got)}")
            if self.counter > 0 and list(self.sum.shape) != got:
                raise InvalidArgumentError(None, None, f"Shape mismatch: expected "
                                           f"{_dims(self.sum.shape)}, got {_dims(got)}")
            if self.counter == 0:
                self.sum = grad.detach().clone()   # our own buffer: later adds go in place
            else:
                self.sum.add_(grad)
            self.counter += 1
            self.cond.notify_all()

    # -- sparse -------------------------------------------------------------------------------
    def _check_sparse(self, indices, values, shape, has_shape: bool) -> None:
        """TF's checks: the declared shape bounds a gradient's leading dims only (`shape=()`,
        what SyncReplicasOptimizer declares, takes any rank); after the first gradient the
        values must match the accumulated ones."""
        if indices.dim() != 1:
            raise InvalidArgumentError(None, None, f"Input indices should be vector but "
                                       f"received shape: {_dims(indices.shape)}")
        if values.dim() == 0:
            raise InvalidArgumentError(None, None, "Values cannot be 0-dimensional.")
        if values.shape[0] != indices.shape[0]:
            raise InvalidArgumentError(None, None, f"Expected {indices.shape[0]} non-empty "
                                       f"input values, got {values.shape[0]}")
        declared = self.shape or []   # unknown rank: no constraint, as a rank-0 shape
        if has_shape:
            dims = [int(d) for d in shape.tolist()]
            _check_leading("shape", declared, dims, len(dims), 0)
        if declared and declared[0] is not None:
            for i, index in enumerate(indices.tolist()):
                if index >= declared[0]:
                    raise InvalidArgumentError(None, None, f"Shape mismatch: index of slice "
                                               f"{i} exceeded limits of shape; index is "
                                               f"{index} exceeded {declared[0]}")
        if self.counter > 0:
            acc = list(self.sum.shape)
            if len(acc) != values.dim():
                raise InvalidArgumentError(None, None, f"Shape mismatch: expected values "
                                           f"rank {len(acc)}, got {values.dim()}")
            _check_leading("values", acc, list(values.shape), values.dim(), 1)
        else:
            _check_leading("values", declared, list(values.shape), values.dim(), 1)

    def apply_sparse(self, local_step: int, indices, values, shape, has_shape: bool) -> None:
        with self.cond:
            if local_step < self.global_step:
                return
            self._check_sparse(indices, values, shape, has_shape)
            new = [int(i) for i in indices.tolist()]
            if self.counter == 0:
                self.indices, self.counts = new, [1] * len(new)
                self.sum = values.detach().clone()
            else:
                self._merge(new, values)
            self.counter += 1
            self.cond.notify_all()

    def _merge(self, new: list, values) -> None:
        old, rows, counts = self.indices, [], []
        out_idx: list = []
        i = j = 0
        while i < len(old) and j < len(new):
            if old[i] == new[j]:
                out_idx.append(old[i])
                rows.append(self.sum[i] + values[j])
                counts.append(self.counts[i] + 1)
                i, j = i + 1, j + 1
            elif old[i] < new[j]:
                out_idx.append(old[i])
                rows.append(self.sum[i])
                counts.append(self.counts[i])
                i += 1
            else:
                out_idx.append(new[j])
                rows.append(values[j])
                counts.append(1)
                j += 1
        for k in range(i, len(old)):
            out_idx.append(old[k])
            rows.append(self.sum[k])
            counts.append(self.counts[k])
        for k in range(j, len(new)):
            out_idx.append(new[k])
            rows.append(values[k])
            counts.append(1)
        self.indices, self.counts = out_idx, counts
        self.sum = torch.stack(rows) if rows else self.sum[:0]

    # -- taking -------------------------------------------------------------------------------
    def take(self, num_required: int):
        """Waits for `num_required` gradients; their mean (or sum), then a reset."""
        if num_required < 1:
            raise InvalidArgumentError(None, None, f"Argument num_required must be positive, "
                                       f"but was {num_required}")
        with self.cond:
            run_deadline.wait(self.cond, lambda: self.counter >= num_required,
                              lambda: self.session_closed)
            out = self._result()
            self.counter, self.sum, self.indices, self.counts = 0, None, [], []
            self.global_step += 1
            return out

    def _divide(self, total, by):
        if self.dtype.is_integer:
            return torch.div(total, by, rounding_mode="trunc").to(total.dtype)
        return total / by

    def _result(self):
        if not self.sparse:
            return self._divide(self.sum, self.counter) if self.mean else self.sum
        values = self.sum
        if self.mean and values.numel():
            counts = torch.tensor(self.counts, dtype=values.dtype if not self.dtype.is_integer
                                  else torch.int64).reshape([-1] + [1] * (values.dim() - 1))
            values = self._divide(values, counts)
        return (torch.tensor(self.indices, dtype=torch.int64), values,
                torch.tensor(self._dense_shape(values), dtype=torch.int64))

    def _dense_shape(self, values) -> list:
        """TF's: the declared first dim (-1 if unknown), then the accumulated values' dims
        (not the shape a gradient gave)."""
        first = self.shape[0] if self.shape and self.shape[0] is not None else -1
        return [first] + list(values.shape[1:])

    def set_global_step(self, step: int) -> None:
        with self.cond:
            if step < self.global_step:
                tf_logging.warning(f"Attempt to set current_global_step_ to smaller value: "
                                   f"current_global_step_ = {self.global_step} >= {step} = "
                                   f"new_global_step.")
            self.global_step = step


_KERNEL_TYPES = ("half", "float", "double")  # TF registers the accumulators for these only


def _no_kernel(node, shared: str):
    """TF's error for an accumulator of another type: the eager lookup's NotFoundError, the
    graph executor's InvalidArgumentError."""
    op = node.op_def.name
    registered = "\n".join(f"  device='CPU'; dtype in [DT_{t.upper()}]"
                           for t in ("double", "float", "half"))
    if shared.startswith(ops.ANONYMOUS_PREFIX):
        return NotFoundError(None, None, f"Could not find device for node: {{{{node {op}}}}} = "
                             f"{op}[dtype=DT_{dtype_name(node.attrs['dtype']).upper()}]\n"
                             f"All kernels registered for op {op}:\n{registered}")
    return InvalidArgumentError(None, None, f"No OpKernel was registered to support Op '{op}' "
                                f"used by {{{{node {node.name}}}}} with these attrs: [dtype=DT_"
                                f"{dtype_name(node.attrs['dtype']).upper()}]\nRegistered "
                                f"kernels:\n{registered}")


def _creator(sparse: bool):
    def check(acc: Accumulator, name: str) -> None:
        if acc.sparse != sparse:
            raise InvalidArgumentError(None, None, f"Shared accumulator '{name}' is of "
                                       "another kind")

    def factory(node):
        a = node.attrs
        if dtype_name(a["dtype"]) not in _KERNEL_TYPES:
            raise _no_kernel(node, a["shared_name"])
        return creator_kernel(node, "accumulator", ops.ANONYMOUS_PREFIX,
                              lambda _: Accumulator(sparse, a), check)
    return factory


kernel(ops.ResourceConditionalAccumulator)(_creator(False))
kernel(ops.SparseConditionalAccumulatorOp)(_creator(True))


@kernel(ops.ResourceAccumulatorApplyGradient)
def _apply_dense(node):
    return lambda acc, step, grad: acc.apply_dense(int(step), grad)


@kernel(ops.SparseAccumulatorApplyGradient)
def _apply_sparse(node):
    has_shape = bool(node.attrs["has_known_shape"])
    return lambda acc, step, idx, values, shape: acc.apply_sparse(int(step), idx, values,
                                                                  shape, has_shape)


@kernel(ops.ResourceAccumulatorTakeGradient)
def _take_dense(node):
    return lambda acc, n: acc.take(int(n))


@kernel(ops.SparseAccumulatorTakeGradient)
def _take_sparse(node):
    return lambda acc, n: acc.take(int(n))


def _num_accumulated(node):
    return lambda acc: torch.tensor(acc.counter, dtype=torch.int32)


def _set_global_step(node):
    return lambda acc, step: acc.set_global_step(int(step))


kernel(ops.ResourceAccumulatorNumAccumulated)(_num_accumulated)
kernel(ops.AccumulatorNumAccumulated)(_num_accumulated)
kernel(ops.ResourceAccumulatorSetGlobalStep)(_set_global_step)
kernel(ops.AccumulatorSetGlobalStep)(_set_global_step)

"""Kernels of TensorFlow's collective ops on torch.distributed's default process group
(gloo on CPU, NCCL on GPU), which ndflow.distribute.collective initialises.

`CollectiveReduceV2` all-reduces one tensor (merge_op Add/Mul/Min/Max, final_op Id/Div by the
group size); `CollectiveGatherV2` concatenates every worker's tensor along the first dimension
(the sizes may differ: they are exchanged first); a broadcast in a graph is a sum where only
the root contributes its value (exact: x + 0 == x). One default group serves every
collective: `group_size` must equal its world size, and `group_key`/`instance_key` only name
the collective in errors (torch orders collectives by call order, which identical graphs on
every worker give). Failures of the transport become TensorFlow's errors through
`collective_error`, which the Python-level collectives share.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from ndflow.core.errors import (
    DeadlineExceededError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    UnavailableError,
)
from ndflow.kernels.registry import kernel
from ndflow.ops import collective_ops

_MERGE_OPS = {"Add": dist.ReduceOp.SUM, "Mul": dist.ReduceOp.PRODUCT,
              "Min": dist.ReduceOp.MIN, "Max": dist.ReduceOp.MAX}


def collective_error(e: Exception, what: str):
    """The TensorFlow error for torch.distributed's failure `e` while doing `what`: a peer that
    went away -> UnavailableError; a timeout -> DeadlineExceededError; else InternalError."""
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    lowered = text.lower()
    if "timed out" in lowered or "timeout" in lowered or isinstance(e, TimeoutError):
        return DeadlineExceededError(None, None, f"{what}: timed out waiting for the other "
                                     f"workers ({text})")
    if any(s in lowered for s in ("connection reset", "connection closed", "connection refused",
                                  "broken pipe", "peer", "socket", "connect")):
        return UnavailableError(None, None, f"{what}: a peer worker is unreachable or has "
                                f"exited ({text})")
    return InternalError(None, None, f"{what}: {text}")


def group_world_size(what: str) -> int:
    """The default group's size; FailedPreconditionError when no group is initialised."""
    if not dist.is_available() or not dist.is_initialized():
        raise FailedPreconditionError(None, None, f"{what}: the collective group is not "
                                      "initialised (call hvd.init() or create a "
                                      "MultiWorkerMirroredStrategy first)")
    return dist.get_world_size()


def run_collective(fn, what: str):
    """`fn()` with torch.distributed's errors as TensorFlow's."""
    try:
        return fn()
    except (RuntimeError, TimeoutError, ValueError) as e:  # DistError is a RuntimeError
        raise collective_error(e, what) from None


def _check_group_size(node, group_size: torch.Tensor) -> int:
    world = group_world_size(f"{node.type} '{node.name}'")
    size = int(group_size.reshape(-1)[0])
    if size != world:
        raise InvalidArgumentError(None, None, f"{node.type} '{node.name}': group_size {size} "
                                   f"does not match the {world} processes of the group")
    return world


@kernel(collective_ops.CollectiveReduceV2)
def _collective_reduce(node):
    merge, final = node.attrs["merge_op"], node.attrs["final_op"]
    if merge not in _MERGE_OPS or final not in ("Id", "Div"):
        raise InvalidArgumentError(None, None, f"CollectiveReduceV2: merge_op {merge!r} / "
                                   f"final_op {final!r} unsupported")

    def reduce(x, group_size, group_key, instance_key, *ordering):
        world = _check_group_size(node, group_size)
        out = x.clone().contiguous()
        what = f"CollectiveReduceV2 '{node.name}' (instance {int(instance_key)})"
        run_collective(lambda: dist.all_reduce(out, op=_MERGE_OPS[merge]), what)
        if final == "Div":
            out = out / world if out.is_floating_point() else out // world
        return out
    return reduce


@kernel(collective_ops.CollectiveGatherV2)
def _collective_gather(node):
    def gather(x, group_size, group_key, instance_key, *ordering):
        world = _check_group_size(node, group_size)
        what = f"CollectiveGatherV2 '{node.name}' (instance {int(instance_key)})"
        x = x.contiguous() if x.dim() else x.reshape(1)
        sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
        run_collective(lambda: dist.all_gather(sizes, torch.tensor([x.shape[0]])), what)
        longest = int(max(int(s) for s in sizes))
        padded = torch.zeros((longest,) + tuple(x.shape[1:]), dtype=x.dtype)
        padded[:x.shape[0]] = x
        pieces = [torch.empty_like(padded) for _ in range(world)]
        run_collective(lambda: dist.all_gather(pieces, padded), what)
        return torch.cat([p[:int(s)] for p, s in zip(pieces, sizes)])
    return gather

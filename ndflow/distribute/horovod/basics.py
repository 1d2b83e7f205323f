"""Horovod's process queries and constants on ndflow's collective group: `init()`, `rank()`,
`size()`, `local_rank()`, `local_size()`, `cross_rank()`, `cross_size()`, the reduce ops
(`Average`, `Sum`, `Min`, `Max`, `Product`) and `Compression` (none / fp16)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.errors import UnimplementedError
from ndflow.distribute import collective
from ndflow.distribute.cluster_resolver.resolvers import resolver_from_environment
from ndflow.ops.cast import cast


class ReduceOp:
    """Horovod's reduce op names, with the CollectiveReduceV2 merge/final ops they become."""

    def __init__(self, name: str, merge_op: str, final_op: str):
        self.name, self.merge_op, self.final_op = name, merge_op, final_op

    def __repr__(self):
        return f"hvd.{self.name}"


Average = ReduceOp("Average", "Add", "Div")
Sum = ReduceOp("Sum", "Add", "Id")
Min = ReduceOp("Min", "Min", "Id")
Max = ReduceOp("Max", "Max", "Id")
Product = ReduceOp("Product", "Mul", "Id")
Adasum = ReduceOp("Adasum", "", "")  # accepted by name; refused when used


def reduce_op(op: ReduceOp | None, average: bool | None) -> ReduceOp:
    """Horovod's rule: `op` wins; else the deprecated `average` flag; default Average."""
    if op is not None and average is not None:
        raise ValueError("The op parameter supersedes average. Please provide only one of them.")
    if op is None:
        op = Sum if average is False else Average
    if op is Adasum:
        raise UnimplementedError(None, None, "Adasum is not implemented by ndflow's horovod API: "
                                 "use hvd.Average or hvd.Sum")
    if not isinstance(op, ReduceOp):
        raise ValueError(f"op must be one of hvd.Average, hvd.Sum, hvd.Min, hvd.Max, "
                         f"hvd.Product; got {op!r}")
    return op


class NoneCompressor:
    """No compression: tensors travel in their own dtype."""

    @staticmethod
    def compress(tensor):
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor


class FP16Compressor:
    """Floating-point tensors travel as float16 and are cast back after the all-reduce."""

    @staticmethod
    def compress(tensor):
        if tensor.dtype.is_floating and tensor.dtype is not dtypes.float16:
            return cast(tensor, dtypes.float16), tensor.dtype
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor if ctx is None else cast(tensor, ctx)


class Compression:
    """Horovod's `hvd.Compression.none` / `hvd.Compression.fp16`."""

    none = NoneCompressor
    fp16 = FP16Compressor


def init(comm=None, process_sets=None, *, timeout_seconds: float =
         collective.DEFAULT_TIMEOUT_SECONDS) -> None:
    """Joins the collective group the environment describes (the launcher's RANK/WORLD_SIZE/
    MASTER_ADDR/MASTER_PORT, or TF_CONFIG; one local process when neither is set).
    `timeout_seconds` (ndflow) bounds the rendezvous and every collective."""
    if comm is not None:
        raise UnimplementedError(None, None, "hvd.init(comm=...): MPI communicators are not "
                                 "supported; ndflow's horovod runs on torch.distributed")
    collective.initialize(resolver_from_environment(), timeout_seconds=timeout_seconds)


def shutdown() -> None:
    collective.shutdown()


def is_initialized() -> bool:
    return collective.is_initialized()


def rank() -> int:
    return collective.spec().rank


def size() -> int:
    return collective.spec().world_size


def local_rank() -> int:
    return collective.spec().local_rank


def local_size() -> int:
    return collective.spec().local_size


def cross_size() -> int:
    """The number of hosts (assuming the same number of processes on each)."""
    return size() // local_size()


def cross_rank() -> int:
    return rank() // local_size()


def is_homogeneous() -> bool:
    return size() % local_size() == 0


def mpi_threads_supported() -> bool:
    return False


def mpi_enabled() -> bool:
    return False


def gloo_enabled() -> bool:
    return True


def nccl_built() -> bool:
    return False

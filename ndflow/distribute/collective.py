"""The collective group of a multi-process job, on torch.distributed (gloo on CPU, NCCL on GPU).

One group per process (torch.distributed's default group), created from a cluster resolver:

    spec = collective.initialize()              # TF_CONFIG, or RANK/WORLD_SIZE/MASTER_*,
    spec.rank, spec.world_size, spec.is_chief   # or one local process
    grads = collective.all_reduce(grads, op=collective.MEAN)   # torch tensors, bucketed
    values = collective.broadcast(values, root=0)
    collective.check_consistent([("dense/kernel", (784, 10), "float32"), ...])

API (every function takes and returns torch tensors; EagerTensors are accepted too):

- `initialize(resolver=None, *, timeout_seconds=DEFAULT_TIMEOUT_SECONDS, backend=None)` ->
  `ProcessGroupSpec`. Idempotent for the same group (a one-process group may be re-described;
  another multi-process group is a FailedPreconditionError until `shutdown()`). The
  rendezvous (rank 0's address) and every later collective are bounded by
  `timeout_seconds`: a worker that cannot reach the others gets `DeadlineExceededError`
  naming the address, never a hang.
- `is_initialized()`, `spec()` (FailedPreconditionError before `initialize`), `shutdown()`.
- `all_reduce(tensors, op=SUM|MEAN, bucket_bytes=BUCKET_BYTES)`: new tensors; the inputs are
  flattened into buckets of about `bucket_bytes` (25 MB, as DDP) per dtype and device, one
  collective per bucket. A peer that died -> UnavailableError; a peer that stopped answering
  -> DeadlineExceededError after the timeout.
- `broadcast(tensors, root=0)`: new tensors holding rank `root`'s values (bucketed likewise).
- `check_consistent(entries, what="variable")`: entries `(name, shape, dtype)` must be the
  same on every worker; otherwise InvalidArgumentError naming the first entry that differs
  with both shapes/dtypes and ranks. Exchanged as JSON (nothing is unpickled from peers).
- `barrier()`.

With one process (world size 1) nothing is initialised in torch and every collective is the
identity (MEAN divides by 1), so single-process code runs unchanged.
"""

from __future__ import annotations

import atexit
import datetime
import fcntl
import json
import os
import socket
import struct
import time
from collections.abc import Sequence

import torch
import torch.distributed as dist

from ndflow.core.errors import (
    DeadlineExceededError,
    FailedPreconditionError,
    InvalidArgumentError,
    UnavailableError,
)
from ndflow.core.tensor import EagerTensor
from ndflow.distribute.cluster_resolver.process_group import ProcessGroupSpec
from ndflow.distribute.cluster_resolver.resolvers import (
    ClusterResolver,
    process_group_spec,
    resolver_from_environment,
)
from ndflow.kernels.collective_ops import collective_error, run_collective

SUM = "sum"
MEAN = "mean"
DEFAULT_TIMEOUT_SECONDS = 120.0
BUCKET_BYTES = 25 * 2 ** 20

_state: dict = {"spec": None, "timeout": DEFAULT_TIMEOUT_SECONDS}


def default_backend(spec_: ProcessGroupSpec) -> str:
    """gloo; beside GPUs, one for each of this host's workers, NCCL for CUDA tensors too.
    CPU tensors (ops without a device run on the CPU, and the metadata exchanged before each
    collective) always take gloo. NCCL refuses two ranks on one GPU ("invalid usage", seen
    with two workers on a one-GPU machine): with fewer GPUs than local workers, gloo carries
    CUDA tensors as well."""
    if torch.cuda.is_available() and spec_.local_size <= torch.cuda.device_count():
        return "cpu:gloo,cuda:nccl"
    return "gloo"


def initialize(resolver: ClusterResolver | None = None, *,
               timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
               backend: str | None = None) -> ProcessGroupSpec:
    """Joins this process to the collective group `resolver` (default: the environment's)
    describes; returns its ProcessGroupSpec."""
    spec_ = process_group_spec(resolver or resolver_from_environment())
    if _state["spec"] is not None and _state["spec"].world_size == spec_.world_size == 1:
        _state["spec"] = spec_  # one process: nothing in torch to re-create
        return spec_
    if _state["spec"] is not None:
        if _state["spec"] != spec_:
            raise FailedPreconditionError(None, None, "The collective group is already "
                                          f"initialised as {_state['spec']}, not {spec_}")
        return spec_
    if spec_.world_size > 1:
        backend = backend or default_backend(spec_)
        if "gloo" in backend:
            _choose_gloo_interface(spec_)
        if "nccl" in backend:  # one GPU per local worker, as Horovod's examples pin them
            torch.cuda.set_device(spec_.local_rank % torch.cuda.device_count())
        address = spec_.address
        if spec_.rank != 0:  # fail within the timeout, whatever the store's retry policy
            _wait_for_rendezvous(spec_, timeout_seconds)
        try:
            dist.init_process_group(
                backend, init_method=f"tcp://{_url_host(spec_.master_addr)}:{spec_.master_port}",
                rank=spec_.rank, world_size=spec_.world_size,
                timeout=datetime.timedelta(seconds=timeout_seconds))
        except (RuntimeError, TimeoutError, ValueError) as e:
            err = collective_error(e, f"Joining the collective group at {address} as rank "
                                      f"{spec_.rank} of {spec_.world_size}")
            if isinstance(err, UnavailableError):  # a rendezvous that never came is a timeout
                err = DeadlineExceededError(None, None, err.message)
            raise err from None
    _state["spec"], _state["timeout"] = spec_, timeout_seconds
    if not _state.get("atexit"):
        # a program that never calls shutdown() still leaves the group before the interpreter
        # tears down: gloo's threads destroyed at static destruction abort the process
        # ("terminate called without an active exception", seen once in CI after "done")
        atexit.register(_leave_at_exit)
        _state["atexit"] = True
    return spec_


def _leave_at_exit() -> None:
    try:
        shutdown()
    except Exception:  # noqa: BLE001 - exiting anyway; the group may already be broken
        pass


def _wait_for_rendezvous(spec_: ProcessGroupSpec, timeout_seconds: float) -> None:
    """Waits until rank 0's rendezvous port accepts connections; DeadlineExceededError naming
    the address after `timeout_seconds`."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            socket.create_connection((spec_.master_addr, spec_.master_port),
                                     timeout=max(0.1, min(2.0, deadline - time.monotonic()))
                                     ).close()
            return
        except OSError as e:
            if time.monotonic() >= deadline:
                raise DeadlineExceededError(
                    None, None, f"Rank {spec_.rank} of {spec_.world_size} could not reach rank "
                    f"0's rendezvous at {spec_.address} within {timeout_seconds:g} s: "
                    f"{e.strerror or e}") from None
            time.sleep(0.2)


def is_initialized() -> bool:
    return _state["spec"] is not None


def spec() -> ProcessGroupSpec:
    if _state["spec"] is None:
        raise FailedPreconditionError(None, None, "The collective group is not initialised: "
                                      "call hvd.init() (or collective.initialize()) first")
    return _state["spec"]


def shutdown() -> None:
    """Leaves the group (the process can initialise again afterwards)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
    _state["spec"] = None


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _choose_gloo_interface(spec_: ProcessGroupSpec) -> None:
    """Points gloo at the interface that routes to rank 0 (GLOO_SOCKET_IFNAME), unless the user
    chose one: gloo's default follows the hostname, which on multi-homed hosts or network
    namespaces may be an address the peers cannot reach."""
    if os.environ.get("GLOO_SOCKET_IFNAME") or spec_.master_addr in ("127.0.0.1", "localhost"):
        return
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((spec_.master_addr, spec_.master_port or 1))  # UDP: no packet is sent
            local_ip = s.getsockname()[0]
        name = _interface_with_address(local_ip)
    except OSError:
        return
    if name:
        os.environ["GLOO_SOCKET_IFNAME"] = name


def _interface_with_address(ip: str) -> str | None:
    siocgifaddr = 0x8915
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(s.fileno(), siocgifaddr,
                                     struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue
            if socket.inet_ntoa(packed[20:24]) == ip:
                return name
    return None


def _world() -> int:
    return spec().world_size


def _as_torch(t) -> torch.Tensor:
    if isinstance(t, EagerTensor):
        return t.value
    if isinstance(t, torch.Tensor):
        return t
    raise TypeError(f"collective ops take torch tensors or EagerTensors, got {type(t).__name__}")


def _buckets(tensors: list[torch.Tensor], bucket_bytes: int) -> list[list[int]]:
    """Indices of `tensors` grouped into buckets of one dtype and device, each about
    `bucket_bytes` (a larger tensor is a bucket alone), in the given order."""
    buckets: list[list[int]] = []
    open_: dict = {}
    for i, t in enumerate(tensors):
        key = (t.dtype, t.device)
        b = open_.get(key)
        size = t.numel() * t.element_size()
        if b is None or b[1] + size > bucket_bytes:
            b = open_[key] = [[], 0]
            buckets.append(b[0])
        b[0].append(i)
        b[1] += size
    return buckets


def _bucketed(tensors, bucket_bytes: int, collective, what: str) -> list[torch.Tensor]:
    """Runs `collective(flat)` in place on one flat tensor per bucket; returns new tensors of
    the inputs' shapes."""
    ts = [_as_torch(t) for t in tensors]
    out: list = [None] * len(ts)
    for bucket in _buckets(ts, bucket_bytes):
        flat = torch.cat([ts[i].reshape(-1) for i in bucket])
        run_collective(lambda flat=flat: collective(flat), what)
        offset = 0
        for i in bucket:
            n = ts[i].numel()
            out[i] = flat[offset:offset + n].view(ts[i].shape)
            offset += n
    return out


def all_reduce(tensors: Sequence, op: str = SUM, bucket_bytes: int = BUCKET_BYTES
               ) -> list[torch.Tensor]:
    """The element-wise sum (or mean) of each tensor over all workers."""
    if op not in (SUM, MEAN):
        raise InvalidArgumentError(None, None, f"all_reduce: op must be {SUM!r} or {MEAN!r}, "
                                   f"got {op!r}")
    world = _world()
    if world == 1:
        return [_as_torch(t).clone() for t in tensors]
    out = _bucketed(tensors, bucket_bytes, lambda flat: dist.all_reduce(flat),
                    f"all-reduce of {len(tensors)} tensors over {world} workers")
    if op == MEAN:
        out = [t / world if t.is_floating_point() else t // world for t in out]
    return out


def broadcast(tensors: Sequence, root: int = 0, bucket_bytes: int = BUCKET_BYTES
              ) -> list[torch.Tensor]:
    """Rank `root`'s value of each tensor, on every worker."""
    world = _world()
    if not 0 <= root < world:
        raise InvalidArgumentError(None, None, f"broadcast: root rank {root} is not in "
                                   f"[0, {world})")
    if world == 1:
        return [_as_torch(t).clone() for t in tensors]
    return _bucketed(tensors, bucket_bytes, lambda flat: dist.broadcast(flat, src=root),
                     f"broadcast of {len(tensors)} tensors from rank {root}")


def barrier() -> None:
    if _world() > 1:
        run_collective(dist.barrier, "barrier")


def all_gather_json(value) -> list:
    """Every worker's `value` (JSON-serialisable), by rank."""
    world = _world()
    if world == 1:
        return [value]
    data = torch.frombuffer(bytearray(json.dumps(value).encode()), dtype=torch.uint8)
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    run_collective(lambda: dist.all_gather(sizes, torch.tensor([data.numel()])),
                   "exchanging metadata")
    longest = int(max(s.item() for s in sizes))
    padded = torch.zeros(longest, dtype=torch.uint8)
    padded[:data.numel()] = data
    gathered = [torch.zeros(longest, dtype=torch.uint8) for _ in range(world)]
    run_collective(lambda: dist.all_gather(gathered, padded), "exchanging metadata")
    return [json.loads(bytes(g[:int(s.item())].tolist()).decode())
            for g, s in zip(gathered, sizes)]


def check_consistent(entries: Sequence[tuple], what: str = "variable") -> None:
    """Raises InvalidArgumentError unless every worker has the same `(name, shape, dtype)`
    entries in the same order (shapes as tuples of ints, dtypes by name)."""
    mine = [[str(n), [int(d) for d in s], str(dt)] for n, s, dt in entries]
    everyone = all_gather_json(mine)
    reference = everyone[0]
    for rank, theirs in enumerate(everyone[1:], start=1):
        if theirs == reference:
            continue
        if len(theirs) != len(reference):
            raise InvalidArgumentError(None, None, f"Workers disagree on the number of "
                                       f"{what}s: rank 0 has {len(reference)}, rank {rank} has "
                                       f"{len(theirs)}")
        for (n0, s0, d0), (n1, s1, d1) in zip(reference, theirs):
            if (n0, s0, d0) != (n1, s1, d1):
                raise InvalidArgumentError(None, None, f"Mismatched {what} across workers: "
                                           f"{n0!r} has shape {s0} ({d0}) on rank 0 but "
                                           f"{n1!r} has shape {s1} ({d1}) on rank {rank}")

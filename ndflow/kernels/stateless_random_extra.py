"""Kernels of StatelessRandomBinomial (and StatefulRandomBinomial, the same sampler on a
Generator's Philox state), StatelessParameterizedTruncatedNormal,
StatelessRandomGetKeyCounter and StatelessShuffle: TensorFlow's CPU values for the same seed
(the samplers are kernels/stateless_random_extra_numba.py, the shuffle kernels/philox_shuffle.py).

The checks and their order are TF's kernels', with TF's messages: the seed's shape, the
parameters' broadcast, the shape vector and its dimensions, the broadcast shape being the
trailing dimensions of `shape` (InvalidArgumentError); a binomial with integer counts has no
kernel in TF (NotFoundError).

The truncated normal's values depend on how TF's thread pool splits the outputs (each block
of outputs reads its own stream): `block_size` reproduces Eigen's parallelFor split for TF's
intra-op thread count, `intra_op_threads()` (TF_NUM_INTRAOP_THREADS, else the CPUs this
process may run on, TF's default; not ATen's pool size, which defaults to the physical
cores), so the values are TF's on a machine where TF runs with that many threads. Outputs
of at most 1122 float32 elements (981 float16, 813 float64) are one block on any thread
count. The blocks run on ATen's intra-op thread count of Python threads (the numba kernels
release the GIL), which changes no value; the binomial's outputs, each drawn from its own
sub-stream, are split the same way.

Speed (1M samples, AMD EPYC, 2 threads, against TF 2.21 on the same 2 threads, a shared
machine: best of 7): binomial count 10 p 0.5 65 ms (TF 99), count 1000 35 ms (TF 35);
truncated normal [-2, 2] 10 ms (TF 9), [3, inf) 16 ms (TF 11); one thread each: 0.9-1.0x
TF's time (benchmarks/stateless_random_extra.py).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from ndflow.core import config
from ndflow.core.errors import (
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    UnimplementedError,
)
from ndflow.kernels import philox, philox_shuffle
from ndflow.kernels import random as random_kernels
from ndflow.kernels import stateless_random_extra_numba as sampler
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import stateful_random
from ndflow.ops import stateless_random_extra as ops

# -- TF's thread-pool split (Eigen's ThreadPoolDevice::parallelFor) --------------------------

# TF's per-output cost estimate of the truncated normal (Eigen's op costs of its batch setup
# plus two uniform rejection rounds), by output dtype: 77 + sqrt + 3 exp for float32 (Eigen's
# costs of a build without FMA); fitted to TF 2.21's splits on 2-16 threads (float64 257-258,
# float16 214-215 fit)
TRUNCATED_NORMAL_COST = {torch.float16: 214, torch.float32: 187, torch.float64: 258}
_STARTUP_CYCLES = _PER_THREAD_CYCLES = 100000   # Eigen's TensorCostModel
_TASK_SIZE = 40000
_MIN_PARALLEL_OUTPUTS = 1 << 14   # below this the Python threads cost more than they save


def intra_op_threads() -> int:
    """TF's intra-op thread count: TF_NUM_INTRAOP_THREADS, else the CPUs this process may run
    on (port::MaxParallelism)."""
    n = config.num_intraop_threads()
    if n > 0:
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # no affinity on this platform
        return os.cpu_count() or 1


def block_size(n: int, cost: int, threads: int) -> int:
    """The block size of TF's Shard(threads, ..., n, cost): n (one block) when the estimated
    cost calls for one thread, else Eigen's CalculateParallelForBlock."""
    if n <= 1 or threads <= 1:
        return n
    parallel = (n * float(cost) - _STARTUP_CYCLES) / _PER_THREAD_CYCLES + 0.9
    if min(threads, max(1, int(min(parallel, 2**31 - 1)))) == 1:
        return n
    size = min(n, max(-(-n // (4 * threads)), int(1.0 / (float(cost) / _TASK_SIZE))))
    largest = min(n, 2 * size)
    count = -(-n // size)
    best = count / (-(-count // threads) * threads)
    previous = count
    while best < 1.0 and previous > 1:
        coarser = -(-n // (previous - 1))
        if coarser > largest:
            break
        coarser_count = -(-n // coarser)
        previous = coarser_count
        efficiency = coarser_count / (-(-coarser_count // threads) * threads)
        if efficiency + 0.01 >= best:
            size, count = coarser, coarser_count
            best = max(best, efficiency)
    return size


def _run_parallel(fn, pieces: int, work: int) -> None:
    """fn(first, last) over [0, pieces), split among ATen's intra-op threads when `work`
    (outputs) is large enough to pay for them."""
    threads = min(torch.get_num_threads(), pieces)
    if threads <= 1 or work < _MIN_PARALLEL_OUTPUTS:
        fn(0, pieces)
        return
    bounds = [pieces * t // threads for t in range(threads + 1)]
    with ThreadPoolExecutor(threads) as pool:
        for f in [pool.submit(fn, bounds[t], bounds[t + 1]) for t in range(threads)]:
            f.result()


# -- the shared checks ------------------------------------------------------------------------

def _kernels() -> dict:
    ks = sampler.kernels()
    if not ks:
        raise UnimplementedError(None, None, "The stateless binomial and truncated normal "
                                 "kernels need numba")
    return ks


def _check_seed(seed: torch.Tensor) -> list:
    if seed.dim() != 1 or seed.shape[0] != 2:
        raise InvalidArgumentError(None, None, f"seed must have shape [2], not "
                                   f"{_shape_str(seed.shape)}")
    return [int(v) for v in seed.tolist()]


def _shape_str(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _broadcast(shapes: list, error: str) -> list:
    """TF's BCast of the parameters' shapes (no dimension merging)."""
    try:
        return list(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise InvalidArgumentError(None, None, error + " vs. ".join(
            _shape_str(s) for s in shapes)) from None


def _output_dims(shape: torch.Tensor, batch: list) -> tuple[list, int, int]:
    """(output dims, samples per batch, batches): `shape` a vector of dims >= 0 ending with
    the parameters' broadcast shape `batch`."""
    if shape.dim() != 1:
        raise InvalidArgumentError(None, None, f"Input shape should be a vector, got shape: "
                                   f"{_shape_str(shape.shape)}")
    dims = [int(d) for d in shape.tolist()]
    for d in dims:
        if d < 0:
            raise InvalidArgumentError(None, None, f"Dimension {d} must be >= 0")
    if len(batch) > len(dims) or dims[len(dims) - len(batch):] != batch:
        raise InvalidArgumentError(None, None,
                                   "Shape passed in must end with broadcasted shape.")
    lead = len(dims) - len(batch)
    return dims, math.prod(dims[:lead]), math.prod(dims[lead:])


def _key_counter(seed: list) -> np.ndarray:
    key, counter = philox.key_counter_from_seed(*seed)
    return np.array([*key, *counter], np.uint64)


# -- StatelessRandomBinomial ------------------------------------------------------------------

def binomial_methods(counts: np.ndarray, probs: np.ndarray):
    """Per batch (the parameters broadcast, in their dtype T): TF's sampler choice, the count
    as a double and the probability the sampler takes. TF compares count * p (or count * q,
    q = 1 - p for p > 0.5) with 10 in T's arithmetic. A NaN count that TF would sample (it
    loops forever) gives NaN."""
    t = counts.dtype.type
    dcount = counts.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        q = t(1) - probs
        zero = (dcount <= 0) | (probs <= t(0))
        one = ~zero & (probs >= t(1))
        low = ~zero & ~one & (probs <= t(0.5))
        high = ~zero & ~one & (probs > t(0.5))
        method = np.full(counts.shape, sampler.NAN, np.int8)
        method[zero] = sampler.ZERO
        method[one] = sampler.COUNT
        big_low, big_high = counts * probs >= t(10), counts * q >= t(10)
    method[low & big_low] = sampler.BTRS
    method[low & ~big_low] = sampler.INVERSION
    method[high & big_high] = sampler.COUNT_MINUS_BTRS
    method[high & ~big_high] = sampler.COUNT_MINUS_INVERSION
    method[np.isnan(dcount) & (method >= sampler.BTRS)] = sampler.NAN
    prob = np.where(high, q, probs).astype(np.float64)
    return method, dcount, prob


def _to_output(values: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """TF's static_cast<U>(double): half through float, integers truncated (a NaN, which TF
    leaves unwritten in an integer output, as 0)."""
    if dtype == torch.float16:
        return torch.from_numpy(values.astype(np.float32).astype(np.float16))
    if dtype in (torch.float32, torch.float64):
        return torch.from_numpy(values).to(dtype)
    with np.errstate(invalid="ignore"):
        ints = np.where(np.isnan(values), 0.0, values).astype(
            np.int64 if dtype == torch.int64 else np.int32)
    return torch.from_numpy(ints)


def _binomial(shape, counts, probs, key_counter: np.ndarray, out_dtype) -> tuple:
    """(samples [shape], batches, samples per batch) of Binomial(counts, probs) drawn from
    the Philox key and counter `key_counter`, as TF's binomial functor."""
    batch = _broadcast([counts.shape, probs.shape], "counts and probs must have "
                       "compatible batch dimensions: ")
    dims, per_batch, batches = _output_dims(shape, batch)
    n = per_batch * batches
    values = np.empty(n, np.float64)
    if n:
        c = np.broadcast_to(counts.numpy(), batch).reshape(-1)
        p = np.broadcast_to(probs.numpy(), batch).reshape(-1)
        method, dcount, prob = binomial_methods(c, p)
        binomial = _kernels()["binomial"]
        _run_parallel(lambda lo, hi: binomial(values, lo, hi, key_counter, method, dcount,
                                              prob, per_batch, batches), n, n)
    return _to_output(values, out_dtype).reshape(dims), batches, per_batch


@kernel(ops.StatelessRandomBinomial)
def _stateless_binomial(node):
    param_dtype = node.attrs["T"]
    if param_dtype.is_integer:
        raise NotFoundError(None, None, f"Could not find device for node: {{{{node "
                            f"StatelessRandomBinomial}}}} = StatelessRandomBinomial[S=DT_"
                            f"{node.attrs['S'].name.upper()}, T=DT_{param_dtype.name.upper()}]")
    out_dtype, device = node.attrs["dtype"].torch_dtype, node.device

    def run(shape, seed, counts, probs):
        shape, seed, counts, probs = (t.cpu() for t in (shape, seed, counts, probs))
        seed = _check_seed(seed)
        return _binomial(shape, counts, probs, _key_counter(seed), out_dtype)[0].to(device)
    return run


@kernel(stateful_random.StatefulRandomBinomial)
def _stateful_binomial(node):
    """`tf.random.Generator.binomial`: TF reserves 50 (samples per batch + 3) Philox calls
    per batch (of 256 counter steps each) whatever the samples take."""
    attrs = ", ".join(f"{a}=DT_{node.attrs[a].name.upper()}" for a in ("dtype", "T", "S"))
    if node.attrs["T"].is_integer:
        raise InvalidArgumentError(None, None, "No OpKernel was registered to support Op "
                                   "'StatefulRandomBinomial' used by {{node "
                                   f"StatefulRandomBinomial}}}} with these attrs: [{attrs}]")
    out_dtype, device = node.attrs["dtype"].torch_dtype, node.device

    def run(res, alg, shape, counts, probs):
        if int(alg) != ops.PHILOX:       # TF's binomial kernel takes Philox alone
            raise InvalidArgumentError(None, None, f"Unsupported algorithm id: {int(alg)}")
        state, lo, hi, key = random_kernels.read_philox_state(res, alg)
        k, c = philox.key_counter_from_state(lo, hi, key)
        shape, counts, probs = (t.cpu() for t in (shape, counts, probs))
        out, batches, per_batch = _binomial(shape, counts, probs,
                                            np.array([*k, *c], np.uint64), out_dtype)
        reserved = batches * 50 * (per_batch + 3)
        random_kernels.advance_philox_state(res, state, lo, hi, reserved * 256)
        return out.to(device)
    return run


# -- StatelessParameterizedTruncatedNormal ----------------------------------------------------

_CONSTANTS = (0.0, 1.3, 2.0, 4.0, 0.5)   # T(0), kStdDevsInsideBoundsToUseRandnSampler, ...
_FAILED = {
    sampler.RANDN_FAILED: "TruncatedNormal randn rejection sampler failed to accept a sample.",
    sampler.UNIFORM_FAILED: "TruncatedNormal uniform rejection sampler failed to  accept a "
                            "sample.",
    sampler.EXPONENTIAL_FAILED: "TruncatedNormal exponential distribution rejection sampler "
                                "failed to accept a sample.",
}


@kernel(ops.StatelessParameterizedTruncatedNormal)
def _stateless_parameterized_truncated_normal(node):
    dtype, device = node.attrs["dtype"].torch_dtype, node.device
    double, half = dtype == torch.float64, dtype == torch.float16
    work = np.float64 if double else np.float32
    # T's constants (half's rounded to half)
    consts = np.array(_CONSTANTS, np.float16 if half else work).astype(work)

    def run(shape, seed, means, stddevs, minvals, maxvals):
        shape, seed = shape.cpu(), _check_seed(seed.cpu())
        params = [p.cpu() for p in (means, stddevs, minvals, maxvals)]
        batch = _broadcast([p.shape for p in params], "means, stddevs, minvals, maxvals must "
                           "have compatible batch dimensions: ")
        dims, per_batch, batches = _output_dims(shape, batch)
        n = per_batch * batches
        if n > 2**31 - 1:
            raise InvalidArgumentError(None, None, "ParameterizedTruncatedNormal does not "
                                       "support output shapes with more than 2**31 - 1 "
                                       "elements.")
        out = np.empty(n, work)
        if n:
            table = np.stack([np.broadcast_to(p.numpy(), batch).reshape(-1).astype(work)
                              for p in params])
            size = block_size(n, TRUNCATED_NORMAL_COST[dtype], intra_op_threads())
            count = -(-n // size)
            status = np.zeros(count, np.int64)
            fill, kc = _kernels()["truncated_normal"], _key_counter(seed)
            _run_parallel(lambda lo, hi: fill(out, n, size, lo, hi, kc, table, per_batch,
                                              batches, double, half, consts, status),
                          count, n)
            _raise_status(status)
        result = torch.from_numpy(out.astype(np.float16) if half else out)
        return result.reshape(dims).to(device)
    return run


def _raise_status(status: np.ndarray) -> None:
    bad = status[status != sampler.OK]
    if not bad.size:
        return
    if sampler.INVALID in bad:
        raise InvalidArgumentError(None, None, "Invalid parameters")
    raise InternalError(None, None, _FAILED[int(bad[0])])


# -- StatelessRandomGetKeyCounter and StatelessShuffle ----------------------------------------

@kernel(ops.StatelessRandomGetKeyCounter)
def _stateless_get_key_counter(node):
    device = node.device

    def run(seed):
        key, counter = philox.key_counter_words(*_check_seed(seed))
        return torch.from_numpy(key).to(device), torch.from_numpy(counter).to(device)
    return run


# the counter words each algorithm's kernels read (TF's CheckKeyCounterShape; Philox reads
# two but checks for one)
_COUNTER_SIZE = {ops.PHILOX: 1, ops.THREEFRY: 2, 4: 4}


def _shuffle_key_counter(key: torch.Tensor, counter: torch.Tensor, alg: torch.Tensor):
    """TF's GetKeyCounterAlgFromInputs: the Philox key and counter words of a V2 op's inputs
    (uint64 arrived as int64 bits)."""
    if alg.dim() != 0:
        raise InvalidArgumentError(None, None, f"input 3 (0-based) must have shape [], not "
                                   f"{_shape_str(alg.shape)}")
    alg_id = int(alg)
    if alg_id == ops.AUTO_SELECT:
        alg_id = ops.PHILOX
    if key.dim() != 1 or key.shape[0] != 1:
        raise InvalidArgumentError(None, None, f"key must have shape [1], not "
                                   f"{_shape_str(key.shape)}. (Note that batched keys are not "
                                   "supported yet.)")
    size = _COUNTER_SIZE.get(alg_id, 0)
    if counter.dim() != 1 or counter.shape[0] < size:
        raise InvalidArgumentError(None, None, f"counter must be a vector with length at "
                                   f"least {size}; got shape: {_shape_str(counter.shape)}. "
                                   "(Note that batched counters are not supported yet.)")
    if alg_id != ops.PHILOX:
        raise InvalidArgumentError(None, None, f"Unsupported algorithm id: {alg_id}")
    k = _words(key)[0]
    # a one-word counter: TF reads past it; its high word here is 0
    words = _words(counter)[:2] + [0]
    lo, hi = words[0], words[1]
    return ((k & 0xFFFFFFFF, k >> 32),
            [lo & 0xFFFFFFFF, lo >> 32, hi & 0xFFFFFFFF, hi >> 32])


def _words(t: torch.Tensor) -> list:
    """uint64 words of a uint64 tensor (or its int64 stand-in)."""
    if t.dtype == torch.uint64:
        t = t.view(torch.int64)
    return [int(v) & 0xFFFFFFFFFFFFFFFF for v in t.reshape(-1).tolist()]


@kernel(ops.StatelessShuffle)
@host_kernel(ops.StatelessShuffle)
def _stateless_shuffle(node):
    """ATen tensors, or NumPy object arrays of strings (the host kernel)."""
    def run(value, key, counter, alg):
        key_words, counter_words = _shuffle_key_counter(key.cpu(), counter.cpu(), alg.cpu())
        size = value.size if isinstance(value, np.ndarray) else value.numel()
        if value.ndim == 0 or size <= 1 or value.shape[0] <= 1:
            return value   # TF forwards the input and draws nothing
        perm = philox_shuffle.permutation(value.shape[0], key_words, counter_words)
        if isinstance(value, np.ndarray):
            return np.take(value, perm, axis=0)
        return value.index_select(0, torch.from_numpy(perm).to(value.device))
    return run

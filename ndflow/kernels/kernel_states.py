"""The states of stateful random kernels, living as long as TensorFlow's kernel instances.

TF keeps a random kernel's generator state in the kernel object, so a state lives as long as
the instantiation that created the kernel:
- eager ops: the eager kernel cache (the global `RuntimeContext`, keyed by the op's attrs);
- a Session's graph: the session (its `RuntimeContext`, keyed by node);
- a `tf.function`: each traced ConcreteFunction instantiates its own kernels, so two functions
  (or two traces of one) with the same op and seeds draw the same numbers, each continuing its
  own stream across calls (a function called inside another is inlined: the caller's);
- a `tf.data` map or filter function: instantiated per iterator, so a new iterator over a
  seeded pipeline replays its numbers (as Keras' `fit(shuffle=True)` on arrays gives the
  same order every epoch). The other dataset functions (scan, reduce, ...) keep one instance
  per dataset here; flat_map/interleave functions run eagerly.

A `KernelStates` holds the states of one such instantiation (a `RuntimeContext` holds one
for eager ops and a Session); `using(states)` makes it the current one on this thread while a
function's plan runs, and the random kernels (kernels/random.py) take their state from the
current one, else from their runtime context. `tf.random.set_seed` restarts every
instantiation's streams (TF clears its kernel caches): the kernels put the seed generation in
every key.
"""

from __future__ import annotations

import random
import threading

import torch

from ndflow.kernels.philox import GuardedPhilox

_local = threading.local()


class KernelStates:
    """The random kernels' states of one instantiation, by kernel key."""

    __slots__ = ("_states", "_lock", "__weakref__")

    def __init__(self):
        self._states: dict = {}
        self._lock = threading.Lock()

    def philox(self, key, seed: int, seed2: int) -> GuardedPhilox:
        """The Philox state of one stateful random kernel on the CPU (TF's GuardedPhiloxRandom:
        key `seed`, counter from `seed2`; both 0: random)."""
        with self._lock:
            g = self._states.get(key)
            if g is None:
                g = self._states[key] = GuardedPhilox(seed, seed2)
        return g

    def generator(self, key, seed: int, seed2: int, device: torch.device) -> torch.Generator:
        """The torch generator of one random kernel (GPU ones, and the ops TF's Philox streams
        are not reproduced for), seeded from (seed, seed2); both 0: a fresh random seed."""
        with self._lock:
            g = self._states.get(key)
            if g is None:
                g = torch.Generator(device=device)
                if seed == 0 and seed2 == 0:
                    g.manual_seed(random.SystemRandom().getrandbits(63))
                else:
                    g.manual_seed((int(seed) * 0x9E3779B97F4A7C15 + int(seed2)) % (2**63))
                self._states[key] = g
        return g

    def slot(self, key, make):
        """Another state of one kernel (a range sampler's learned counts), made by `make()`
        on first use."""
        with self._lock:
            value = self._states.get(key)
            if value is None:
                value = self._states[key] = make()
        return value

    def clear(self) -> None:
        with self._lock:
            self._states.clear()


def current() -> KernelStates | None:
    """The instantiation whose kernels run on this thread now (None: eager or a Session)."""
    return getattr(_local, "states", None)


class using:  # noqa: N801 - used as a context manager, like a function
    """`with using(states):` the kernels run on this thread draw from `states`. With `nested`
    (a tf.function's states) a plan run while other states are current (a function's plan
    compiled into another's) keeps the outer ones, as TF inlines a called function into its
    caller; a tf.data function always uses its iterator's."""

    __slots__ = ("_states", "_prev", "_nested")

    def __init__(self, states: KernelStates, nested: bool = False):
        self._states = states
        self._nested = nested

    def __enter__(self):
        self._prev = prev = getattr(_local, "states", None)
        if prev is None or not self._nested:
            _local.states = self._states
        return self

    def __exit__(self, *exc):
        _local.states = self._prev
        return False

"""Runtime state that kernels may touch: resources (variables) and random generator states.

Each Session owns one `RuntimeContext` (TF: a session's ResourceMgr, so two sessions on one
graph hold separate variable values); eager execution and `tf.function` share the global
one. Variable values are immutable ATen tensors: an assignment stores a new tensor, so a
value read earlier (or handed to NumPy without a copy) never changes under the reader.
"""

from __future__ import annotations

import random
import threading

import torch

from ndflow.kernels.philox import GuardedPhilox


class Resource:
    """A variable's storage: `value` is None until initialized."""

    __slots__ = ("name", "dtype", "shape", "value", "device", "__weakref__")

    def __init__(self, name: str, dtype, shape, device: torch.device):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value = None
        self.device = device

    def __repr__(self):
        state = "uninitialized" if self.value is None else f"shape={tuple(self.value.shape)}"
        return f"<Resource {self.name} {self.dtype.name} {state}>"


class RuntimeContext:
    """Resources by (container, shared_name) and per-kernel random generators."""

    def __init__(self):
        self.resources: dict = {}
        self._generators: dict = {}
        self._lock = threading.Lock()

    def resource(self, container: str, shared_name: str, dtype, shape, device) -> Resource:
        key = (container, shared_name)
        with self._lock:
            r = self.resources.get(key)
            if r is None:
                r = self.resources[key] = Resource(shared_name, dtype, shape, device)
        return r

    def generator(self, key, seed: int, seed2: int, device: torch.device) -> torch.Generator:
        """The torch generator of one random kernel (GPU ones, and the ops TF's Philox streams
        are not reproduced for); seeded from (seed, seed2).

        With seed == seed2 == 0 the op is not seeded and draws a fresh random seed.
        """
        with self._lock:
            g = self._generators.get(key)
            if g is None:
                g = torch.Generator(device=device)
                if seed == 0 and seed2 == 0:
                    g.manual_seed(random.SystemRandom().getrandbits(63))
                else:
                    g.manual_seed((int(seed) * 0x9E3779B97F4A7C15 + int(seed2)) % (2**63))
                self._generators[key] = g
        return g

    def philox(self, key, seed: int, seed2: int) -> GuardedPhilox:
        """The Philox state of one stateful random kernel on the CPU (TF's GuardedPhiloxRandom:
        key `seed`, counter from `seed2`; both 0: random)."""
        with self._lock:
            g = self._generators.get(key)
            if g is None:
                g = self._generators[key] = GuardedPhilox(seed, seed2)
        return g

    def clear(self) -> None:
        self.resources.clear()
        self._generators.clear()


EAGER_CONTEXT = RuntimeContext()

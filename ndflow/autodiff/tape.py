"""`tf.GradientTape`: records ops that touch watched tensors, then backpropagates.

Works in eager mode (records EagerOperations) and while tracing a `tf.function` (records
graph Operations, and `gradient` emits graph ops). Gradient computations run while outer
tapes keep recording, so nesting tapes gives higher-order gradients.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ndflow.autodiff.backprop import backprop, is_differentiable
from ndflow.autodiff.gradients import UnconnectedGradients, as_source
from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import constant, reshape, stack
from ndflow.ops.array_fill import ones_like, zeros_like


def _zeros(shape: list, dtype):
    return constant(np.zeros(shape, np.float32), dtype=dtype)


@tf_export("GradientTape")
class GradientTape:
    """Record operations for automatic differentiation (TF2 `tf.GradientTape`)."""

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._ops: list = []
        self._watched: dict = {}          # id -> tensor (keeps ids valid)
        self._watched_variables: list = []
        self._recording = False
        self._used = False

    # -- context manager -----------------------------------------------------------------------
    def __enter__(self):
        self._push()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._pop()

    def _push(self):
        context.state().tapes.append(self)
        self._recording = True

    def _pop(self):
        context.state().tapes.remove(self)
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stop recording on this tape."""
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self):
        self._ops.clear()
        self._watched.clear()
        self._watched_variables.clear()

    # -- watching ----------------------------------------------------------------------------
    def watch(self, tensor) -> None:
        for t in flatten(tensor):
            if hasattr(t, "handle") and not isinstance(t, Tensor):
                self._watch_variable(t)
                continue
            if not isinstance(t, Tensor):
                raise ValueError(f"Passed in object {t!r} of type '{type(t).__name__}', not "
                                 "tf.Tensor or tf.Variable or ExtensionType.")
            if is_differentiable(t.dtype):
                t = as_source(t)
                self._watched[id(t)] = t

    def _watch_variable(self, var) -> None:
        h = as_source(var)
        if id(h) not in self._watched:
            self._watched[id(h)] = h
            self._watched_variables.append(var)

    def variable_accessed(self, var) -> None:
        """Called by variables when read: trainable variables are watched automatically."""
        if self._watch_accessed_variables and getattr(var, "trainable", True):
            self._watch_variable(var)

    def watches(self, tensor) -> bool:
        """Whether gradients can flow to `tensor` (it is watched or computed from a watched one)."""
        return id(tensor) in self._watched

    def watched_variables(self) -> tuple:
        return tuple(self._watched_variables)

    def record(self, op) -> None:
        """Called by `apply_op` for every op created while this tape is active."""
        watched = self._watched
        if any(id(t) in watched for t in op.inputs):
            self._ops.append(op)
            for t in op.outputs:
                if is_differentiable(t.dtype):
                    watched[id(t)] = t

    # -- differentiation -----------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(target)/d(sources), with the nested structure of `sources`.

        Sources that the target does not depend on get None (or zeros with
        `unconnected_gradients="zero"`); integer targets have no gradient (None).
        """
        self._check_usable()
        unconnected_gradients = UnconnectedGradients(unconnected_gradients)
        if sources is None:
            raise ValueError("`sources` must not be None")
        targets = [convert_to_tensor(t) for t in flatten(target)]
        flat_sources = flatten(sources)
        for s in flat_sources:
            if s is None:
                raise ValueError("`sources` must not contain None")
        srcs = [as_source(s) for s in flat_sources]
        out_grads = [None] * len(targets) if output_gradients is None \
            else flatten(output_gradients)
        if len(out_grads) != len(targets):
            raise ValueError(f"output_gradients has {len(out_grads)} entries for "
                             f"{len(targets)} targets")
        with self._paused():
            grads = self._backward(targets, srcs, out_grads)
            if unconnected_gradients is UnconnectedGradients.ZERO:
                grads = [zeros_like(s) if g is None else g for s, g in zip(srcs, grads)]
        self._mark_used()
        return pack_sequence_as(sources, grads)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d(target)/d(sources): for each source, a tensor of shape target.shape + source.shape.

        Computed by one backward pass per element of `target` (seeded with a one-hot
        output gradient), so `target` needs a fully known static shape.
        """
        self._check_usable()
        unconnected_gradients = UnconnectedGradients(unconnected_gradients)
        t = convert_to_tensor(target)
        flat_sources = flatten(sources)
        srcs = [as_source(s) for s in flat_sources]
        if not t.shape.is_fully_defined():
            raise NotImplementedError("GradientTape.jacobian needs a target with a fully "
                                      f"defined static shape, got {t.shape}")
        tshape = t.shape.as_list()
        n = int(np.prod(tshape, dtype=np.int64))
        rows: list = [[] for _ in srcs]
        with self._paused():
            for i in range(n):
                onehot = np.zeros(n, dtype=t.dtype.np_dtype or np.float32)
                onehot[i] = 1
                seed = constant(onehot.reshape(tshape), dtype=t.dtype)
                for r, g in zip(rows, self._backward([t], srcs, [seed])):
                    r.append(g)
            result = []
            for s, r in zip(srcs, rows):
                if all(g is None for g in r):
                    if unconnected_gradients is UnconnectedGradients.ZERO:
                        sshape = s.shape.as_list()
                        result.append(_zeros(tshape + sshape, s.dtype))
                    else:
                        result.append(None)
                    continue
                r = [zeros_like(s) if g is None else g for g in r]
                packed = stack(r) if n else _zeros([0] + s.shape.as_list(), s.dtype)
                result.append(reshape(packed, tshape + s.shape.as_list()))
        self._mark_used()
        return pack_sequence_as(sources, result)

    # -- internals -------------------------------------------------------------------------------
    def _check_usable(self) -> None:
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")

    def _mark_used(self) -> None:
        if not self._persistent:
            self._used = True
            self._ops = []

    @contextlib.contextmanager
    def _paused(self):
        """Gradient ops are not recorded on this tape (outer tapes still record them)."""
        was_recording = self._recording
        if was_recording:
            self._pop()
        try:
            yield
        finally:
            if was_recording:
                self._push()

    def _backward(self, targets: list, srcs: list, out_grads: list) -> list:
        seeds: dict = {}
        for t, g in zip(targets, out_grads):
            if not is_differentiable(t.dtype) or t.dtype is dtypes.resource:
                continue
            if id(t) not in self._watched and not any(t is s for s in srcs):
                continue
            g = ones_like(t) if g is None else convert_to_tensor(g, dtype=t.dtype)
            seeds[t] = seeds[t] + g if t in seeds else g
        if not seeds:
            return [None] * len(srcs)
        watched = self._watched
        return backprop(self._ops, seeds, srcs,
                        needs_grad=lambda t: id(t) in watched)

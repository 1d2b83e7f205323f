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
from ndflow.core import context, dtypes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import constant, reshape, stack
from ndflow.ops.array_fill import ones_like, zeros_like


def _zeros(shape: list, dtype):
    return constant(np.zeros(shape, np.float32), dtype=dtype)


@tf_export("GradientTape", "autodiff.GradientTape", v1=["GradientTape"])
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
        """Forgets everything recorded so far (ops and watched tensors and variables), as if the
        tape had just been entered; recording continues.
        """
        self._ops.clear()
        self._watched.clear()
        self._watched_variables.clear()

    # -- watching ----------------------------------------------------------------------------
    def watch(self, tensor) -> None:
        """Records the ops that use `tensor` (a tensor, a variable or a nest of them) so that
        `gradient` can differentiate with respect to it; trainable variables are watched
        without this. Non-floating tensors are ignored (TF logs a warning).
        """
        for t in flatten(tensor):
            if hasattr(t, "handle") and not isinstance(t, Tensor):
                self._watch_variable(t)
                continue
            if not isinstance(t, Tensor):
                raise ValueError(f"Passed in object {t!r} of type '{type(t).__name__}', not "
                                 "tf.Tensor or tf.Variable or ExtensionType.")
            if not is_differentiable(t.dtype):
                tf_logging.warning("The dtype of the watched tensor must be floating (e.g. "
                                   f"tf.float32), got {t.dtype!r}")
            else:
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
        """The variables the tape has watched, in the order it first saw them (those read while
        it recorded and those passed to `watch`).
        """
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
        flat_targets = flatten(target)
        flat_sources = flatten(sources)
        for s in flat_sources:
            if s is None:
                raise ValueError("`sources` must not contain None")
        srcs = [as_source(s) for s in flat_sources]
        out_grads = [None] * len(flat_targets) if output_gradients is None \
            else flatten(output_gradients)
        if len(out_grads) != len(flat_targets):
            raise ValueError(f"output_gradients has {len(out_grads)} entries for "
                             f"{len(flat_targets)} targets")
        # A variable as a target (`result = v0` in a branch) is its own handle, as in TF: its
        # gradient with respect to itself is ones (or its output gradient), else nothing.
        variable_targets = [(t, g) for t, g in zip(flat_targets, out_grads) if _is_variable(t)]
        pairs = [(convert_to_tensor(t), g) for t, g in zip(flat_targets, out_grads)
                 if not _is_variable(t)]
        if self._recording and self._persistent:
            tf_logging.log_first_n(tf_logging.WARN, _RECORDING_GRADIENT, 1)
        # a persistent tape records its own gradient computation, as TF's, for higher orders
        with self._paused() if not self._persistent else contextlib.nullcontext():
            grads = self._backward([t for t, _ in pairs], srcs, [g for _, g in pairs]) \
                if pairs else [None] * len(srcs)
            for v, seed in variable_targets:
                for i, s in enumerate(flat_sources):
                    if s is v:
                        own = _ones_of(v) if seed is None else convert_to_tensor(seed)
                        grads[i] = own if grads[i] is None else grads[i] + own
            if unconnected_gradients is UnconnectedGradients.ZERO:
                grads = [_zeros_of(s) if g is None else g for s, g in zip(flat_sources, grads)]
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
            for s, r in zip(flat_sources, rows):   # the sources themselves: a variable's
                s = convert_to_tensor(s) if not hasattr(s, "dtype") else s   # shape and dtype
                if all(g is None for g in r):
                    if unconnected_gradients is UnconnectedGradients.ZERO:
                        sshape = s.shape.as_list()
                        result.append(_zeros(tshape + sshape, s.dtype.base_dtype))
                    else:
                        result.append(None)
                    continue
                r = [_zeros_of(s) if g is None else g for g in r]
                packed = stack(r) if n else _zeros([0] + s.shape.as_list(), s.dtype)
                result.append(reshape(packed, tshape + s.shape.as_list()))
        self._mark_used()
        return pack_sequence_as(sources, result)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per example i of the batch, d(target[i])/d(source[i]): shape target.shape +
        source.shape[1:]. One backward pass per element of an example's target, seeded at
        that element of every example (valid when examples do not interact, as TF assumes)."""
        self._check_usable()
        unconnected_gradients = UnconnectedGradients(unconnected_gradients)
        t = convert_to_tensor(target)
        src = source if _is_variable(source) else convert_to_tensor(source)
        if t.shape.rank is None or t.shape.rank < 1 or src.shape.rank is None \
                or src.shape.rank < 1:
            raise ValueError("Need first dimension of `target` shape "
                             f"({t.shape}) and `source` shape ({src.shape}) to be known and "
                             "at least rank 1")
        if t.shape[0] is not None and src.shape[0] is not None and t.shape[0] != src.shape[0]:
            raise ValueError(f"Need first dimension of `target` shape ({t.shape}) and `source` "
                             f"shape ({src.shape}) to match.")
        if not t.shape.is_fully_defined() or not src.shape.is_fully_defined():
            raise NotImplementedError("GradientTape.batch_jacobian needs `target` and `source` "
                                      f"with fully defined static shapes, got {t.shape} and "
                                      f"{src.shape}")
        tshape, sshape = t.shape.as_list(), src.shape.as_list()
        batch, per_example = tshape[0], int(np.prod(tshape[1:], dtype=np.int64))
        columns = []
        with self._paused():
            for j in range(per_example):
                onehot = np.zeros((batch, per_example), dtype=t.dtype.np_dtype or np.float32)
                onehot[:, j] = 1
                seed = constant(onehot.reshape(tshape), dtype=t.dtype)
                g, = self._backward([t], [as_source(source)], [seed])
                columns.append(g)
            if all(g is None for g in columns) and \
                    unconnected_gradients is UnconnectedGradients.NONE:
                result = None
            else:
                cols = [_zeros_of(src) if g is None else g for g in columns]
                packed = stack(cols, axis=1) if per_example else \
                    _zeros([batch, 0] + sshape[1:], src.dtype.base_dtype)
                result = reshape(packed, tshape + sshape[1:])
        self._mark_used()
        return result

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
        return backprop(list(self._ops), seeds, srcs,   # (a recording tape appends to them)
                        needs_grad=lambda t: id(t) in watched)


_RECORDING_GRADIENT = (
    "Calling GradientTape.gradient on a persistent tape inside its context is significantly "
    "less efficient than calling it outside the context (it causes the gradient ops to be "
    "recorded on the tape, leading to increased CPU and memory usage). Only call "
    "GradientTape.gradient inside the context if you actually want to trace the gradient in "
    "order to compute higher order derivatives.")


def _zeros_of(source):
    """Zeros shaped as a gradient source: a tensor, or a variable's value (not its handle)."""
    if _is_variable(source):
        return _zeros(source.shape.as_list(), source.dtype.base_dtype)
    return zeros_like(source)


def _is_variable(value) -> bool:
    return hasattr(value, "read_value") and not isinstance(value, Tensor)


def _ones_of(variable):
    return ones_like(variable.read_value())

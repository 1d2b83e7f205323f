"""Horovod's `DistributedOptimizer` and `DistributedGradientTape`.

- A TF1 optimizer (`tf.compat.v1.train.Optimizer`) is wrapped in `_DistributedOptimizer`,
  whose `compute_gradients` all-reduces (averages) the gradients; `apply_gradients` applies
  them with the wrapped optimizer.
- A Keras optimizer becomes an object of a subclass of its own class whose
  `apply_gradients` all-reduces first (sharing the original's state; as Horovod, use the
  returned optimizer from then on).

Mixed precision: the finiteness check of dynamic loss scaling must agree on every worker, or
one worker would skip a step the others take (and the next collective would pair the wrong
tensors). It does whenever the check sees all-reduced gradients, because a non-finite value
on any worker makes the sum non-finite on all of them: TF1 wrappers in either order
(`MixedPrecisionLossScaleOptimizer(DistributedOptimizer(opt))`, NVIDIA's automatic loss
scaling of `opt`, or `DistributedOptimizer(MixedPrecisionLossScaleOptimizer(opt))`) all-reduce
in `compute_gradients`, before the check in `apply_gradients`; for Keras, wrap the loss-scale
optimizer: `hvd.DistributedOptimizer(keras.mixed_precision.LossScaleOptimizer(opt))`, whose
`apply_gradients` all-reduces before the check. The opposite Keras order is refused (the
check would see local gradients).
"""

from __future__ import annotations

from ndflow.distribute.horovod import basics, tensor_ops
from ndflow.train.optimizer import Optimizer


def _allreduce_pairs(pairs, op, compression, sparse_as_dense, gradient_predivide_factor,
                     checked: set):
    pairs = list(pairs)
    vars_ = [v for _, v in pairs]
    key = tuple(id(v) for v in vars_)
    if basics.size() > 1 and key not in checked:
        tensor_ops.check_variables(vars_)
        checked.add(key)
    prescale = 1.0 / gradient_predivide_factor
    postscale = gradient_predivide_factor
    grads = tensor_ops.grouped_allreduce([g for g, _ in pairs], compression=compression, op=op,
                                         prescale_factor=prescale, postscale_factor=postscale)
    return list(zip(grads, vars_))


class _DistributedOptimizer(Optimizer):
    """A TF1 optimizer whose gradients are all-reduced in `compute_gradients`."""

    _AUTO_LOSS_SCALING = False  # the wrapped optimizer scales (or not) itself

    def __init__(self, optimizer, name=None, use_locking=False, compression=None,
                 sparse_as_dense=False, op=basics.Average, gradient_predivide_factor=1.0):
        super().__init__(use_locking, name or f"Distributed{type(optimizer).__name__}")
        self._optimizer = optimizer
        self._op, self._compression = op, compression or basics.Compression.none
        self._sparse_as_dense = sparse_as_dense
        self._predivide = gradient_predivide_factor
        self._checked: set = set()

    def compute_gradients(self, *args, **kwargs) -> list:
        pairs = self._optimizer.compute_gradients(*args, **kwargs)
        return _allreduce_pairs(pairs, self._op, self._compression, self._sparse_as_dense,
                                self._predivide, self._checked)

    def apply_gradients(self, *args, **kwargs):
        return self._optimizer.apply_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self, *args, **kwargs):
        return self._optimizer.variables(*args, **kwargs)

    def doing_loss_scaling(self) -> bool:
        return self._optimizer.doing_loss_scaling()

    def _checkpoint_children(self) -> list:
        return self._optimizer._checkpoint_children()


class _KerasDistributedMixin:
    """Put before a Keras optimizer class: `apply_gradients` all-reduces the gradients."""

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        pairs = _allreduce_pairs(grads_and_vars, self._hvd_op, self._hvd_compression,
                                 self._hvd_sparse_as_dense, self._hvd_predivide,
                                 self._hvd_checked)
        return super().apply_gradients(pairs, *args, **kwargs)


def _is_keras_optimizer(opt) -> bool:
    return hasattr(opt, "apply_gradients") and hasattr(opt, "iterations") \
        and not isinstance(opt, Optimizer)


def DistributedOptimizer(optimizer, name=None, use_locking=False, device_dense="",  # noqa: N802
                         device_sparse="", compression=basics.Compression.none,
                         sparse_as_dense=False, backward_passes_per_step=1, op=basics.Average,
                         gradient_predivide_factor=1.0, average_aggregated_gradients=False,
                         num_groups=0, groups=None, process_set=None,
                         scale_local_gradients=True):
    """An optimizer that averages gradients over the workers before applying them (TF1 or
    Keras optimizers; Horovod's signature)."""
    op = basics.reduce_op(op, None)
    if backward_passes_per_step != 1:
        raise ValueError("backward_passes_per_step > 1 (local gradient accumulation) is not "
                         "supported by ndflow's horovod API")
    if gradient_predivide_factor != 1.0 and op is not basics.Average:
        raise ValueError("gradient_predivide_factor not supported with op != Average")
    if isinstance(optimizer, _DistributedOptimizer) or \
            isinstance(optimizer, _KerasDistributedMixin):
        raise ValueError("The optimizer is already a hvd.DistributedOptimizer")
    if isinstance(optimizer, Optimizer):
        return _DistributedOptimizer(optimizer, name, use_locking, compression,
                                     sparse_as_dense, op, gradient_predivide_factor)
    if not _is_keras_optimizer(optimizer):
        raise ValueError(f"hvd.DistributedOptimizer takes a tf.compat.v1.train.Optimizer or a "
                         f"Keras optimizer, got {type(optimizer).__name__}")
    inner = getattr(optimizer, "inner_optimizer", None)
    if isinstance(inner, _KerasDistributedMixin):
        raise ValueError("Wrap the loss-scale optimizer, not the reverse: "
                         "hvd.DistributedOptimizer(LossScaleOptimizer(opt)), so that every worker "
                         "checks the same all-reduced gradients for overflow")
    cls = type(type(optimizer).__name__, (_KerasDistributedMixin, type(optimizer)), {})
    distributed = object.__new__(cls)
    distributed.__dict__.update(optimizer.__dict__)
    distributed._hvd_op, distributed._hvd_compression = op, compression
    distributed._hvd_sparse_as_dense = sparse_as_dense
    distributed._hvd_predivide, distributed._hvd_checked = gradient_predivide_factor, set()
    return distributed


class _DistributedGradientTape:
    """A GradientTape whose `gradient` all-reduces (averages) the gradients."""

    def __init__(self, tape, compression, sparse_as_dense, op, gradient_predivide_factor):
        self._tape = tape
        self._args = (op, compression, sparse_as_dense, gradient_predivide_factor)
        self._checked: set = set()

    def gradient(self, target, sources, output_gradients=None, **kwargs):
        flat, rebuild = _flatten_sources(sources)
        grads = self._tape.gradient(target, flat, output_gradients=output_gradients, **kwargs)
        pairs = _allreduce_pairs(list(zip(grads, flat)), *self._args, self._checked)
        return rebuild([g for g, _ in pairs])

    def __getattr__(self, name):
        return getattr(self._tape, name)

    def __enter__(self):
        self._tape.__enter__()
        return self

    def __exit__(self, *exc):
        return self._tape.__exit__(*exc)


def _flatten_sources(sources):
    if isinstance(sources, (list, tuple)):
        return list(sources), lambda gs: type(sources)(gs) if isinstance(sources, tuple) \
            else list(gs)
    if isinstance(sources, dict):
        keys = list(sources)
        return [sources[k] for k in keys], lambda gs: dict(zip(keys, gs))
    return [sources], lambda gs: gs[0]


def DistributedGradientTape(gradtape, device_dense="", device_sparse="",  # noqa: N802
                            compression=basics.Compression.none, sparse_as_dense=False,
                            op=basics.Average, gradient_predivide_factor=1.0, num_groups=0,
                            groups=None, process_set=None, scale_local_gradients=True):
    """Wraps `gradtape` so that `gradient()` returns gradients averaged over the workers."""
    return _DistributedGradientTape(gradtape, compression, sparse_as_dense,
                                    basics.reduce_op(op, None), gradient_predivide_factor)

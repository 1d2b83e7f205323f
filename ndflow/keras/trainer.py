"""Keras 3's training loop for `Model`: `compile`, `fit`, `evaluate`, `predict`, the
`*_on_batch` methods and the overridable steps (`train_step`, `test_step`,
`predict_step`, `compute_loss`, `compute_metrics`).

Each step runs as one `tf.function` graph (unless `run_eagerly`), so the whole pass
pipeline — constant folding, the remapper, the mixed-precision graph rewrite — applies to
the training step; batches come from data_adapter.py, and callbacks (History and the
progress bar included) are called in Keras' order."""

from __future__ import annotations

import warnings

import numpy as np

from ndflow.autodiff.tape import GradientTape
from ndflow.core.nest import flatten, map_structure, pack_sequence_as
from ndflow.data.structure import leaves
from ndflow.distribute import distribution_context
from ndflow.keras import (
    compile_utils,
    data_adapter,
    exhausted_step,
    global_config,
    replica_towers,
)
from ndflow.keras.callbacks.callback_list import CallbackList
from ndflow.keras.layers.layer_tracking import untracked
from ndflow.keras.metrics import reduction_metrics
from ndflow.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer
from ndflow.keras.optimizers import serialization as optimizers
from ndflow.ops.array_core import shape
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.runtime.function import Function, function


def _pythonify_logs(logs: dict) -> dict:
    """Keras' pythonify_logs, what evaluate / train_on_batch / test_on_batch return: by name,
    nested dicts flattened, values as Python floats."""
    out = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            out.update(_pythonify_logs(value))
        else:
            out.update(_pythonify({key: value}))
    return out


def _pythonify(logs: dict) -> dict:
    out = {}
    for key, value in (logs or {}).items():
        try:
            out[key] = float(np.asarray(value.numpy() if hasattr(value, "numpy") else value))
        except (TypeError, ValueError):
            out[key] = value
    return out


def _batch_size_of(x):
    first = next(t for t in leaves(x) if t is not None)
    if isinstance(first, SparseTensor):  # tf.shape of a SparseTensor: its dense_shape
        return first.dense_shape[0]
    return shape(first)[0]


class Trainer:
    """The training half of `tf.keras.Model` (mixed into it)."""

    compiled = False
    optimizer = None
    _compile_loss = None
    _compile_metrics = None
    _loss_tracker = None
    run_eagerly = False
    jit_compile = False
    stop_training = False
    history = None
    train_function = test_function = predict_function = None

    # -- compile -----------------------------------------------------------------------------
    @untracked   # its loss tracker is not an attribute metric (Keras' compile)
    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        """Configures the model for training."""
        self.optimizer = optimizers.get(optimizer)
        if (auto_scale_loss and self.dtype_policy.name == "mixed_float16"
                and not isinstance(self.optimizer, LossScaleOptimizer)):
            self.optimizer = LossScaleOptimizer(self.optimizer, name="loss_scale_optimizer")
            # Keras' compile config keeps the optimizer compile was given, not this wrapper
            self.optimizer._wrapped_by_compile = True
        output_names = getattr(self, "output_names", None)
        self._compile_loss = (compile_utils.CompileLoss(loss, loss_weights, output_names)
                              if loss is not None else None)
        self.loss = loss
        self._compile_metrics = None
        if metrics is not None or weighted_metrics is not None:
            self._compile_metrics = compile_utils.CompileMetrics(metrics, weighted_metrics,
                                                                 output_names)
        self._loss_tracker = reduction_metrics.Mean(name="loss")
        # compiled under `strategy.scope()`: fit's steps run one tower per replica
        self._distribute_strategy = (distribution_context.get_strategy()
                                     if distribution_context.has_strategy() else None)
        if jit_compile == "auto":
            jit_compile = False
        if jit_compile and run_eagerly:
            warnings.warn("If `run_eagerly` is True, then `jit_compile` cannot also be True. "
                          "Disabling `jit_compile`.", stacklevel=2)
            jit_compile = False
        self.jit_compile, self.run_eagerly = bool(jit_compile), bool(run_eagerly)
        self.steps_per_execution = steps_per_execution
        self.stop_training = False
        self.compiled = True
        self.train_function = self.test_function = self.predict_function = None

    def _assert_compile_called(self, method_name=None) -> None:
        if not self.compiled:
            msg = "You must call `compile()` before "
            msg += "using the model." if method_name is None else \
                f"calling `{method_name}()`."
            raise ValueError(msg)

    # -- metrics -----------------------------------------------------------------------------
    @property
    def metrics(self) -> list:
        """The model's metrics, in Keras 3's order: once compiled, the loss tracker, the
        compiled metrics and the per-output loss trackers; then the metrics assigned to its
        attributes, and those of the layers below it (not those of nested models)."""
        out = []
        if self.compiled:
            if self._loss_tracker is not None:
                out.append(self._loss_tracker)
            if self._compile_metrics is not None:
                out.append(self._compile_metrics)
            if self._compile_loss is not None:   # per-output losses (Keras 3's order)
                out.extend(self._compile_loss.metrics)
        out.extend(self._own_metrics())
        for layer in self._flatten_layers(include_self=False):
            if not isinstance(layer, Trainer):   # a nested model's are its own
                out.extend(layer.metrics)
        return out

    @property
    def metrics_names(self) -> list:
        """The names of `metrics`, in that order."""
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        """Resets the state of every metric in `metrics` (fit does each epoch, evaluate first)."""
        for m in self.metrics:
            m.reset_state()

    def get_metrics_result(self) -> dict:
        """The current results of `metrics` as a dict by name (a metric returning a dict,
        such as the compiled metrics, adds its entries)."""
        results = {}
        for metric in self.metrics:
            value = metric.result()
            if isinstance(value, dict):
                results.update(value)
            else:
                results[metric.name] = value
        return results

    # -- the steps ---------------------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss plus every `add_loss`/regularization loss of the model."""
        parts = []
        if self._compile_loss is not None and y is not None:
            parts.append(self._compile_loss(y, y_pred, sample_weight))
        extra = compile_utils.sum_losses(self.losses)
        if extra is not None:
            parts.append(extra)
        if not parts:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None) -> dict:
        """Updates the compiled metrics with a batch and returns every metric's result.

        Override it for custom metric logic (the steps call it after the loss).

        Args:
            x: The input data.
            y: The targets.
            y_pred: The model's predictions for `x`.
            sample_weight: Optional weights for the samples.

        Returns:
            `get_metrics_result()`: a dict of metric name to value.
        """
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    # Keras 3's backwards-compatibility shims for Keras 2 train steps.
    def compiled_loss(self, y, y_pred, sample_weight=None, regularization_losses=None):
        """Deprecated (Keras 2 train steps): warns and returns `compute_loss(y=y,
        y_pred=y_pred, sample_weight=sample_weight)`."""
        warnings.warn("`model.compiled_loss()` is deprecated. Instead, use "
                      "`model.compute_loss(x, y, y_pred, sample_weight, training)`.",
                      stacklevel=2)
        return self.compute_loss(x=None, y=y, y_pred=y_pred, sample_weight=sample_weight)

    @property
    def compiled_metrics(self):
        """Deprecated (Keras 2 train steps): an object whose `update_state(y, y_pred,
        sample_weight)` warns and updates every metric of `metrics`."""
        model = self

        class DeprecatedCompiledMetric:
            def update_state(self, y, y_pred, sample_weight=None):
                warnings.warn("`model.compiled_metrics()` is deprecated. Instead, use e.g.:\n"
                              "```\nfor metric in self.metrics:\n"
                              "    metric.update_state(y, y_pred)\n```\n", stacklevel=2)
                for metric in model.metrics:
                    if isinstance(metric, reduction_metrics.Mean):
                        metric.update_state(y_pred, sample_weight=sample_weight)
                    else:
                        metric.update_state(y, y_pred, sample_weight=sample_weight)
        return DeprecatedCompiledMetric()

    @property
    def distribute_strategy(self):
        """The strategy the model was compiled under (else the current one)."""
        return getattr(self, "_distribute_strategy", None) or \
            distribution_context.get_strategy()

    def train_step(self, data):
        """One training step on a batch: forward pass, loss, gradients applied by the
        optimizer, metrics updated.

        Override it to customize `fit` (it runs inside the train function).

        Args:
            data: The batch: `x`, `(x,)`, `(x, y)` or `(x, y, sample_weight)`.

        Returns:
            A dict of metric name to value (`compute_metrics`' result), which `fit` logs.
        """
        strategy = getattr(self, "_distribute_strategy", None)
        if strategy is not None and strategy.num_replicas_in_sync > 1:
            return replica_towers.train_step_on_replicas(self, data, strategy)
        x, y, sample_weight = data_adapter.unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
            self._loss_tracker.update_state(loss, sample_weight=_batch_size_of(x))
            scaled = (self.optimizer.get_scaled_loss(loss)
                      if isinstance(self.optimizer, LossScaleOptimizer) else loss)
        variables = self.trainable_weights
        if variables:
            grads = tape.gradient(scaled, variables)
            if isinstance(self.optimizer, LossScaleOptimizer):
                grads = self.optimizer.get_unscaled_gradients(grads)
            self.optimizer.apply_gradients(zip(grads, variables))
        else:
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data):
        """One evaluation step on a batch (`x`, `(x, y)` or `(x, y, sample_weight)`):
        forward pass in inference mode, loss and metrics updated; returns the metrics dict."""
        x, y, sample_weight = data_adapter.unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=False)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size_of(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        """One inference step: the model's outputs for the batch's `x` (`training=False`)."""
        x, _, _ = data_adapter.unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def _make_function(self, step):
        if self.run_eagerly:
            return step

        def multi_step_on_iterator(data):
            # Keras' one code object for every step function: TF's retracing warning counts
            # the train, test and predict functions of all models together, as in TF
            return step(data)

        return function(multi_step_on_iterator, name=getattr(step, "__name__", None),
                        jit_compile=self.jit_compile or None, reduce_retracing=True)

    def make_train_function(self, force=False):
        """The function `fit` runs per batch (`train_step` as a `tf.function`, or the plain
        method with `run_eagerly`), made once and cached; `force=True` remakes it."""
        if self.train_function is None or force:
            self.train_function = self._make_function(self.train_step)
        return self.train_function

    def make_test_function(self, force=False):
        """`evaluate`'s per-batch function: `test_step`, made as in `make_train_function`."""
        if self.test_function is None or force:
            self.test_function = self._make_function(self.test_step)
        return self.test_function

    def make_predict_function(self, force=False):
        """`predict`'s per-batch function: `predict_step`, made as in `make_train_function`."""
        if self.predict_function is None or force:
            self.predict_function = self._make_function(self.predict_step)
        return self.predict_function

    # -- loops -------------------------------------------------------------------------------
    def _built_for(self, step_fn, batches):
        """`step_fn`, first traced for a dataset's element_spec (a None batch dimension) if
        the model is unbuilt: Keras' TF trainer builds the model inside that trace."""
        if not self.built and isinstance(batches, data_adapter.DatasetAdapter) and \
                isinstance(step_fn, Function) and \
                getattr(self, "_distribute_strategy", None) is None:   # (a strategy's model
            # is built from a batch: _strategy_build_batch)
            step_fn.get_concrete_function(batches._dataset.element_spec)
        return step_fn

    def _callbacks(self, callbacks, verbose, epochs, steps, add_history=False):
        if isinstance(callbacks, CallbackList):
            return callbacks
        return CallbackList(callbacks, add_history=add_history, add_progbar=verbose != 0,
                            model=self, verbose=verbose, epochs=epochs, steps=steps)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        """Trains for `epochs` epochs; returns the History callback."""
        self._assert_compile_called("fit")
        verbose = 1 if verbose == "auto" else verbose
        if validation_split and validation_data is None:
            if not data_adapter.is_array_data(x):
                raise ValueError("Argument `validation_split` is only supported for tensors or "
                                 f"NumPy arrays.Found incompatible type in the input: {type(x)}")
            (x, y, sample_weight), validation_data = data_adapter.train_validation_split(
                (x, y, sample_weight), validation_split)
        epochs, steps_per_epoch = _capped(epochs, steps_per_epoch)
        batches = data_adapter.get_data_adapter(x, y, sample_weight, batch_size,
                                                steps_per_epoch, shuffle, class_weight)
        callbacks = self._callbacks(callbacks, verbose, epochs, batches.num_batches,
                                    add_history=True)
        self.stop_training = False
        train = self._built_for(self.make_train_function(), batches)
        self._strategy_build_batch(batches)
        strategy = getattr(self, "_distribute_strategy", None)
        if hasattr(getattr(strategy, "extended", None), "broadcast_variables"):
            strategy.extended.broadcast_variables(self.weights)  # workers start equal
        callbacks.on_train_begin()
        training_logs = None
        # a callback restoring a backup (BackupAndRestore) sets where to continue, as Keras
        initial_epoch = getattr(self, "_initial_epoch", None) or initial_epoch
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            runs_out = isinstance(train, Function) and \
                isinstance(batches, data_adapter.DatasetAdapter) and batches.runs_out
            if runs_out:
                generators = exhausted_step.seed_generators(self)
                states, step0 = exhausted_step.states(generators), self._step_count()
            logs = self._run_batches(batches, train, callbacks.on_train_batch_begin,
                                     callbacks.on_train_batch_end, "stop_training")
            if runs_out and not self.stop_training:   # TF's exhausted last call
                exhausted_step.run_exhausted_step(self, generators, states,
                                                  self._step_count() - step0)
            epoch_logs = self._metrics_result_or_logs(logs)
            if validation_data is not None and self._should_eval(epoch, validation_freq):
                vx, vy, vsw = data_adapter.unpack_x_y_sample_weight(validation_data)
                val_logs = self.evaluate(vx, vy, sample_weight=vsw,
                                         batch_size=validation_batch_size or batch_size,
                                         steps=validation_steps, callbacks=callbacks,
                                         return_dict=True)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        finalize = getattr(self.optimizer, "finalize_variable_values", None)
        if finalize is not None and epochs > 0:   # use_ema: the averages become the weights
            finalize(self.trainable_weights)
        callbacks.on_train_end(logs=training_logs)
        return self.history

    def _step_count(self) -> int:
        return int(self.optimizer.iterations.numpy())

    def _strategy_build_batch(self, batches) -> None:
        """Keras' TF trainer, for a model of a distribution strategy, first builds it from one
        batch of a fresh pass over a dataset (`_maybe_symbolic_build`): that pass takes its
        shuffles' seeds, so the epochs see the orders TF's do."""
        if getattr(self, "_distribute_strategy", None) is not None and \
                isinstance(batches, data_adapter.DatasetAdapter):
            batches.take_build_batch()

    def _run_batches(self, batches, step_fn, on_begin, on_end, stop_flag: str) -> dict:
        """One pass of `step_fn` over the batches with the batch hooks; the last logs."""
        logs = {}
        for step, data in enumerate(batches):
            on_begin(step)
            logs = _pythonify(step_fn(data))
            on_end(step, logs)
            if getattr(self, stop_flag):
                break
        return logs

    def _metrics_result_or_logs(self, logs: dict) -> dict:
        """The metrics' results when the step's logs are those metrics; else the last logs
        (a custom step returning other values)."""
        results = _pythonify(self.get_metrics_result())
        return results if set(logs) == set(results) else dict(logs)

    @staticmethod
    def _should_eval(epoch: int, validation_freq) -> bool:
        epoch += 1
        if isinstance(validation_freq, int):
            return epoch % validation_freq == 0
        if isinstance(validation_freq, (list, tuple)):
            return epoch in validation_freq
        raise ValueError("Expected `validation_freq` to be a list or int. Received: "
                         f"validation_freq={validation_freq} of the type "
                         f"{type(validation_freq)}.")

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False, **kwargs):
        """The loss and metrics on the data (a scalar, a list, or a dict with return_dict)."""
        self._assert_compile_called("evaluate")
        if kwargs:
            raise ValueError(f"Arguments not recognized: {kwargs}")
        verbose = 1 if verbose == "auto" else verbose
        batches = data_adapter.get_data_adapter(x, y, sample_weight, batch_size, steps)
        callbacks = self._callbacks(callbacks, verbose, 1, batches.num_batches)
        test = self._built_for(self.make_test_function(), batches)
        self._strategy_build_batch(batches)
        self.stop_evaluating = False
        callbacks.on_test_begin()
        self.reset_metrics()
        logs = self._run_batches(batches, test, callbacks.on_test_batch_begin,
                                 callbacks.on_test_batch_end, "stop_evaluating")
        logs = _pythonify_logs(self._metrics_result_or_logs(logs))
        callbacks.on_test_end(logs)
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs on `x`, batch by batch, as NumPy arrays."""
        verbose = 1 if verbose == "auto" else verbose
        batches = data_adapter.get_data_adapter(x, None, None, batch_size, steps)
        callbacks = self._callbacks(callbacks, verbose, 1, batches.num_batches)
        predict = self._built_for(self.make_predict_function(), batches)
        self.stop_predicting = False
        callbacks.on_predict_begin()
        outputs, structure = None, None
        for step, data in enumerate(batches):
            callbacks.on_predict_batch_begin(step)
            batch_out = predict(data)
            structure = batch_out
            flat = [np.asarray(t.numpy()) for t in flatten(batch_out)]
            outputs = [[f] for f in flat] if outputs is None else \
                [acc + [f] for acc, f in zip(outputs, flat)]
            callbacks.on_predict_batch_end(step, {"outputs": batch_out})
            if self.stop_predicting:
                break
        callbacks.on_predict_end()
        if outputs is None:
            raise ValueError("Unexpected result of `predict_function` (Empty batch_outputs). "
                             "Please use `Model.compile(..., run_eagerly=True)`, or "
                             "`tf.config.run_functions_eagerly(True)` for more information of "
                             "where went wrong, or file a issue/bug to `keras`.")
        return pack_sequence_as(structure, [np.concatenate(parts) for parts in outputs])

    # -- one batch ---------------------------------------------------------------------------
    def _one_batch(self, x, y, sample_weight, class_weight=None):
        adapter = data_adapter.ArrayDataAdapter(x, y, sample_weight,
                                                batch_size=None, class_weight=class_weight)
        adapter.batch_size = adapter.num_samples
        adapter.num_batches = 1
        return next(iter(adapter))

    def _flatten_metrics_in_order(self, logs: dict):
        """The values of `logs` in the order of `metrics` (compiled metrics expanded), then
        any others by name; a single value alone."""
        names = []
        for metric in self.metrics:
            names += ([m.name for m in metric.metrics]
                      if isinstance(metric, compile_utils.CompileMetrics) else [metric.name])
        results = [logs[name] for name in names if name in logs]
        results += [logs[key] for key in sorted(logs) if key not in names]
        return results[0] if len(results) == 1 else results

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       return_dict=False):
        """Runs one gradient update on one batch (the metrics are reset first).

        Args:
            x: The input data (arrays or tensors).
            y: The targets.
            sample_weight: Optional weights for the samples' losses.
            class_weight: Optional dict of class index to loss weight (not with
                `sample_weight`).
            return_dict: Whether to return the results as a dict by metric name.

        Returns:
            The loss alone when there are no metrics, else a list of the loss and the
            metric values, or a dict with `return_dict=True`.

        Raises:
            ValueError: The model is not compiled, or both `sample_weight` and
                `class_weight` were given.
        """
        self._assert_compile_called("train_on_batch")
        if class_weight is not None and sample_weight is not None:
            raise ValueError("Arguments `sample_weight` and `class_weight` cannot be specified "
                             f"at the same time. Received: sample_weight={sample_weight}, "
                             f"class_weight={class_weight}")
        train = self.make_train_function()
        self.reset_metrics()
        logs = _pythonify_logs(train(self._one_batch(x, y, sample_weight, class_weight)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """The loss and metrics on one batch, without training (the metrics are reset first).

        Args:
            x: The input data (arrays or tensors).
            y: The targets.
            sample_weight: Optional weights for the samples' losses.
            return_dict: Whether to return the results as a dict by metric name.

        Returns:
            The loss alone when there are no metrics, else a list of the loss and the
            metric values, or a dict with `return_dict=True`.

        Raises:
            ValueError: The model is not compiled.
        """
        self._assert_compile_called("test_on_batch")
        test = self.make_test_function()
        self.reset_metrics()
        logs = _pythonify_logs(test(self._one_batch(x, y, sample_weight)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict_on_batch(self, x):
        """The model's outputs for one batch `x`, as NumPy arrays (in the outputs' structure)."""
        out = self.make_predict_function()(self._one_batch(x, None, None))
        return map_structure(lambda t: np.asarray(t.numpy()), out)


def _capped(epochs, steps_per_epoch):
    """keras.config.set_max_epochs / set_max_steps_per_epoch: debugging caps, as Keras."""
    max_epochs = global_config.SETTINGS["max_epochs"]
    if max_epochs and max_epochs < epochs:
        warnings.warn(f"Limiting epochs to {max_epochs}", stacklevel=3)
        epochs = max_epochs
    max_steps = global_config.SETTINGS["max_steps_per_epoch"]
    if max_steps and (not steps_per_epoch or max_steps < steps_per_epoch):
        warnings.warn(f"Limiting steps_per_epoch to {max_steps}", stacklevel=3)
        steps_per_epoch = max_steps
    return epochs, steps_per_epoch

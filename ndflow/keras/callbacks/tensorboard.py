"""`tf.keras.callbacks.TensorBoard`: Keras 3's layout and tags.

`log_dir/train` gets `epoch_<name>` scalars per epoch (plus `epoch_learning_rate`), with
`update_freq='batch'|N` also `batch_<name>` every N global batches, `histogram_freq` weight
histograms `<weight.path>/histogram` (and `/image` with `write_images`); `log_dir/validation`
gets the `val_` metrics as `epoch_<name>` and `evaluation_<name>_vs_iterations` at the
optimizer's iteration. `write_graph=True` writes the Keras model config (plugin
"graph_keras_model", the conceptual graph) and the graph `fit` really runs: the train step's
`tf.function` after ndflow's pass pipeline (mixed-precision casts, fused ops), with node
attributes carrying the dtypes — recorded as the first training batch runs it — plus, under
tag "train_function", a RunMetadata holding the traced and the optimized graph.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
from google.protobuf import text_format
from tensorboard.compat.proto import summary_pb2
from tensorboard.plugins import projector

from ndflow import summary
from ndflow.core import logging
from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions
from ndflow.keras.callbacks.callback import Callback
from ndflow.keras.layers.embedding_layer import Embedding
from ndflow.keras.saving.keras_archive import model_to_json
from ndflow.profiler import profiler_api
from ndflow.runtime import concrete_function
from ndflow.summary.graph_summary import (
    graph_def_of,
    run_metadata_of,
    write_run_metadata_graphs,
)


class _FirstCall:
    """Records the first ConcreteFunction called while installed."""

    def __init__(self):
        self.function = None

    def __call__(self, fn) -> None:
        if self.function is None:
            self.function = fn


@keras_export("keras.callbacks.TensorBoard")
class TensorBoard(Callback):
    """Writes training logs for TensorBoard (`tensorboard --logdir log_dir`): the epoch
    (or batch) losses and metrics under `log_dir/train` and `log_dir/validation`, and
    optionally the model graph, weight histograms and images, embeddings and a profile.

    Args:
      log_dir: the directory of the event files.
      histogram_freq: every how many epochs to write weight histograms (0: never).
      write_graph: whether to write the model's graph.
      write_images: whether to also write the weights as images (with histograms).
      write_steps_per_second: whether to log the training speed.
      update_freq: "epoch" (the default), "batch", or an int N: also write the batch
        logs every N batches.
      profile_batch: the batch (an int) or range (a pair, or "a,b") to profile with
        `tf.profiler`; 0 disables profiling.
      embeddings_freq: every how many epochs to save Embedding layers' weights for the
        projector (0: never).
      embeddings_metadata: optional dict of Embedding layer name to metadata file.

    Raises:
      ValueError: a bad `update_freq` or `profile_batch`.
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None):
        super().__init__()
        self.log_dir = str(os.fspath(log_dir))
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        if self.update_freq != "epoch" and (not isinstance(self.update_freq, int)
                                           or self.update_freq < 1):
            raise ValueError(f"Unrecognized update_freq: {update_freq!r} (expected 'epoch', "
                             "'batch' or a positive integer)")
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._init_profile_batch(profile_batch)
        self._global_train_batch = 0
        self._global_test_batch = 0
        self._writers: dict = {}
        self._prev_summary_state: list = []
        self._graph_recorder = None
        self._should_write_train_graph = False

    def _init_profile_batch(self, profile_batch):
        """Keras' batch range to profile (`profile_batch`: an int, a pair, or "a,b"): those
        batches run under `tf.profiler.experimental` (a trace under
        `log_dir/train/plugins/profile/<run>/`), and their function graphs are exported as
        `batch_<stop>`, as Keras does."""
        message = ("profile_batch must be a non-negative integer or 2-tuple of positive "
                   "integers. A pair of positive integers signifies a range of batches to "
                   f"profile. Found: {profile_batch}")
        if isinstance(profile_batch, str):
            try:
                profile_batch = [int(p) for p in profile_batch.split(",")]
            except ValueError:
                raise ValueError(message) from None
        if isinstance(profile_batch, int):
            self._start_batch = self._stop_batch = profile_batch
        elif isinstance(profile_batch, (tuple, list)) and len(profile_batch) == 2:
            self._start_batch, self._stop_batch = profile_batch
        else:
            raise ValueError(message)
        if self._start_batch < 0 or self._stop_batch < self._start_batch:
            raise ValueError(message)
        self._is_tracing = False
        self._profiler_started = False
        self._should_trace = not (self._start_batch == 0 and self._stop_batch == 0)

    def _start_trace(self):
        summary.trace_on(graph=True, profiler=False)
        if not self._profiler_started:
            try:  # as Keras: a profiler already running is logged, not raised
                profiler_api.start(self._train_dir)
                self._profiler_started = True
            except Exception as e:  # noqa: BLE001 - Keras logs any failure to start
                logging.error(f"Failed to start profiler: {e}")
        self._is_tracing = True

    def _stop_trace(self, batch=None):
        batch = self._stop_batch if batch is None else batch
        with self._train_writer.as_default():
            summary.trace_export(name=f"batch_{batch}", step=batch)
        if self._profiler_started:
            try:
                profiler_api.stop()
            except Exception as e:  # noqa: BLE001 - Keras logs any failure to stop
                logging.error(f"Failed to stop profiler: {e}")
            finally:
                self._profiler_started = False
        self._is_tracing = False

    # -- writers -----------------------------------------------------------------------------
    def set_model(self, model):
        self._model = model
        self._log_write_dir = self.log_dir
        self._train_dir = os.path.join(self._log_write_dir, "train")
        self._val_dir = os.path.join(self._log_write_dir, "validation")
        self._writers = {}
        self._should_write_train_graph = False
        if self.write_graph:
            self._write_keras_model_summary()
            self._should_write_train_graph = True
        if self.embeddings_freq:
            self._configure_embeddings()

    @property
    def _train_writer(self):
        if "train" not in self._writers:
            self._writers["train"] = summary.create_file_writer(self._train_dir)
        return self._writers["train"]

    @property
    def _val_writer(self):
        if "val" not in self._writers:
            self._writers["val"] = summary.create_file_writer(self._val_dir)
        return self._writers["val"]

    def _push_writer(self, writer, step):
        """Makes `writer` the default for summaries the model writes per batch."""
        if self.update_freq == "epoch":
            return

        def should_record():
            return step % self.update_freq == 0
        contexts = (writer.as_default(step), summary.record_if(should_record))
        self._prev_summary_state.append(contexts)
        contexts[0].__enter__()
        contexts[1].__enter__()

    def _pop_writer(self):
        if self.update_freq == "epoch" or not self._prev_summary_state:
            return
        contexts = self._prev_summary_state.pop()
        contexts[1].__exit__(*sys.exc_info())
        contexts[0].__exit__(*sys.exc_info())

    def _close_writers(self):
        for writer in self._writers.values():
            writer.close()

    # -- graphs ------------------------------------------------------------------------------
    def _write_keras_model_summary(self):
        """The model's config as JSON (TensorBoard's conceptual graph of Keras models)."""
        if type(self.model).__name__ not in ("Functional", "Sequential"):
            return
        try:
            json_string = model_to_json(self.model)
        except Exception as exc:  # noqa: BLE001 - Keras warns and goes on
            warnings.warn(f"Model failed to serialize as JSON. Ignoring... {exc}",
                          stacklevel=2)
            return
        md = summary_pb2.SummaryMetadata()
        md.plugin_data.plugin_name = "graph_keras_model"
        md.plugin_data.content = b"1"
        with self._train_writer.as_default():
            summary.write(tag="keras", tensor=np.array(json_string.encode(), dtype=object),
                          step=0, metadata=md)

    def _start_graph_recording(self):
        self._graph_recorder = _FirstCall()
        concrete_function.CALL_OBSERVERS.append(self._graph_recorder)

    def _stop_graph_recording(self):
        if self._graph_recorder in concrete_function.CALL_OBSERVERS:
            concrete_function.CALL_OBSERVERS.remove(self._graph_recorder)
        recorder, self._graph_recorder = self._graph_recorder, None
        return None if recorder is None else recorder.function

    def _write_train_graph(self):
        fn = self._stop_graph_recording()
        if fn is None:  # run_eagerly: no graph
            return
        optimized = graph_def_of(fn.optimized_graph())
        with self._train_writer.as_default():
            summary.graph(optimized)  # the run's graph in the Graphs dashboard
            # ... and, as tag "train_function", the traced graph beside the optimized one.
            write_run_metadata_graphs("train_function", run_metadata_of([fn], [optimized]),
                                      step=0)

    # -- embeddings (TensorBoard's projector) ------------------------------------------------
    def _configure_embeddings(self):
        """`log_dir/projector_config.pbtxt` naming each Embedding layer's matrix, as Keras."""
        config = projector.ProjectorConfig()
        for layer in self.model.layers:
            if isinstance(layer, Embedding):
                embedding = config.embeddings.add()
                embedding.tensor_name = \
                    "layer_with_weights-0/embeddings/.ATTRIBUTES/VARIABLE_VALUE"
                if self.embeddings_metadata is not None:
                    if isinstance(self.embeddings_metadata, str):
                        embedding.metadata_path = self.embeddings_metadata
                    elif layer.name in self.embeddings_metadata:
                        embedding.metadata_path = self.embeddings_metadata.pop(layer.name)
        if self.embeddings_metadata and not isinstance(self.embeddings_metadata, str):
            raise ValueError("Unrecognized `Embedding` layer names passed to "
                             "`keras.callbacks.TensorBoard` `embeddings_metadata` argument: "
                             f"{self.embeddings_metadata.keys()}")
        os.makedirs(self._log_write_dir, exist_ok=True)
        path = os.path.join(self._log_write_dir, "projector_config.pbtxt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text_format.MessageToString(config))

    def _log_embeddings(self, epoch):
        self.model.save_weights(os.path.join(self._log_write_dir, "train",
                                             f"keras_embedding.ckpt-{epoch}.weights.h5"))

    # -- hooks -------------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._previous_epoch_iterations = 0
        self._push_writer(self._train_writer, self._global_train_batch)

    def on_train_end(self, logs=None):
        self._pop_writer()
        self._stop_graph_recording()
        if self._is_tracing:
            self._stop_trace()
        self._close_writers()

    def on_test_begin(self, logs=None):
        self._push_writer(self._val_writer, self._global_test_batch)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations") and logs:
            step = int(np.asarray(optimizer.iterations.numpy()))
            with self._val_writer.as_default():
                for name, value in logs.items():
                    summary.scalar(f"evaluation_{name}_vs_iterations", value, step=step)
        self._pop_writer()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self.update_freq != "epoch":
            self._pop_writer()
            self._push_writer(self._train_writer, self._global_train_batch)
        if self.write_steps_per_second:
            self._batch_start_time = time.time()
        if self._should_write_train_graph and self._graph_recorder is None:
            self._start_graph_recording()
        if self._should_trace and self._global_train_batch == self._start_batch:
            self._start_trace()

    def on_train_batch_end(self, batch, logs=None):
        if self._should_write_train_graph:
            self._write_train_graph()
            self._should_write_train_graph = False
        if self.write_steps_per_second:
            summary.scalar("batch_steps_per_second",
                           1.0 / max(time.time() - self._batch_start_time, 1e-9),
                           step=self._global_train_batch)
        if isinstance(logs, dict):
            for name, value in logs.items():
                summary.scalar(f"batch_{name}", value, step=self._global_train_batch)
        if self._is_tracing and self._global_train_batch >= self._stop_batch:
            self._stop_trace()

    def on_test_batch_begin(self, batch, logs=None):
        self._global_test_batch += 1
        if self.update_freq != "epoch":
            self._pop_writer()
            self._push_writer(self._val_writer, self._global_test_batch)

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._previous_epoch_iterations = int(self.model.optimizer.iterations.numpy())
            self._epoch_start_time = time.time()

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        if self.embeddings_freq and epoch % self.embeddings_freq == 0:
            self._log_embeddings(epoch)

    # -- epoch summaries ---------------------------------------------------------------------
    def _collect_learning_rate(self, logs):
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)
        if optimizer is not None and hasattr(optimizer, "learning_rate"):
            try:
                logs["learning_rate"] = float(np.asarray(optimizer.learning_rate))
            except (TypeError, ValueError):
                pass
        return logs

    def _log_epoch_metrics(self, epoch, logs):
        if not logs:
            return
        train_logs = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val_logs = {k: v for k, v in logs.items() if k.startswith("val_")}
        train_logs = self._collect_learning_rate(train_logs)
        if self.write_steps_per_second:
            steps = int(self.model.optimizer.iterations.numpy()) - \
                self._previous_epoch_iterations
            train_logs["steps_per_second"] = steps / max(time.time() - self._epoch_start_time,
                                                         1e-9)
        if train_logs:
            with self._train_writer.as_default():
                for name, value in train_logs.items():
                    summary.scalar(f"epoch_{name}", value, step=epoch)
        if val_logs:
            with self._val_writer.as_default():
                for name, value in val_logs.items():
                    summary.scalar(f"epoch_{name[4:]}", value, step=epoch)

    def _log_weights(self, epoch):
        with self._train_writer.as_default():
            for layer in self.model.layers:
                for weight in layer.weights:
                    weight_name = weight.path.replace(":", "_")
                    value = np.asarray(weight.numpy())
                    summary.histogram(f"{weight_name}/histogram", value, step=epoch)
                    if self.write_images:
                        self._log_weight_as_image(value, f"{weight_name}/image", epoch)
            self._train_writer.flush()

    def _log_weight_as_image(self, weight: np.ndarray, weight_name: str, epoch: int):
        """A weight as an image, reshaped as Keras does (bias [1, n, 1, 1]; a Dense kernel
        with its longer side first transposed; conv kernels one image per output channel)."""
        w = np.squeeze(weight)
        if w.ndim == 1:
            w = w.reshape(1, w.shape[0], 1, 1)
        elif w.ndim == 2:
            if w.shape[0] > w.shape[1]:
                w = w.T
            w = w.reshape(1, w.shape[0], w.shape[1], 1)
        elif w.ndim == 3:
            if backend_functions.image_data_format() == "channels_last":
                w = np.transpose(w, [2, 0, 1])
            w = w.reshape(w.shape[0], w.shape[1], w.shape[2], 1)
        if w.ndim == 4 and w.shape[-1] in (1, 3, 4):
            summary.image(weight_name, w, step=epoch)


__all__ = ["TensorBoard"]

"""keras.callbacks.TensorBoard: Keras 3's layout and tags (compared with the logs Keras 3.15
on TensorFlow 2.21 wrote for the same model, tests/fixtures/tensorboard/keras), read back
with TensorBoard's own loader, and the graph fit really runs."""

from __future__ import annotations

import os

import numpy as np
import pytest
from tensorboard.compat.proto import config_pb2, graph_pb2
from tensorboard.util import tensor_util

import ndflow as tf
from ndflow.core import errors
from tests.summary.events import (
    FIXTURES,
    accumulate,
    event_files,
    raw_events,
    summary_structure,
)

keras = tf.keras


def _model():
    keras.backend.clear_session()  # layer names as in a fresh program (Keras' tags use them)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    return model


def _data():
    x = np.random.RandomState(0).rand(16, 4).astype("float32")
    return x, x.sum(axis=1, keepdims=True)


def _fit(logdir, epochs=2, **kwargs):
    x, y = _data()
    model = _model()
    cb = keras.callbacks.TensorBoard(str(logdir), **kwargs)
    history = model.fit(x, y, batch_size=8, epochs=epochs, validation_data=(x, y),
                        callbacks=[cb], verbose=0)
    return model, history


def _scalars(run_dir):
    out = {}
    for e in raw_events(event_files(run_dir)[0]):
        for v in e.summary.value:
            if v.metadata.plugin_data.plugin_name == "scalars" or v.tag.startswith(("epoch_",
                                                                                    "batch_")):
                out.setdefault(v.tag, []).append((e.step, float(tensor_util.make_ndarray(
                    v.tensor))))
    return out


def test_layout_and_tags_are_keras(tmp_path):
    _fit(tmp_path, histogram_freq=1, write_images=True, write_graph=False)
    assert sorted(os.listdir(tmp_path)) == ["train", "validation"]
    for run in ("train", "validation"):
        ours = summary_structure(event_files(str(tmp_path / run))[0])
        theirs = summary_structure(event_files(os.path.join(FIXTURES, "keras", run))[0])
        assert ours == theirs, run


def test_epoch_values_and_steps(tmp_path):
    model, history = _fit(tmp_path, write_graph=False)
    train, val = _scalars(str(tmp_path / "train")), _scalars(str(tmp_path / "validation"))
    np.testing.assert_allclose([v for _, v in train["epoch_loss"]], history.history["loss"],
                               rtol=1e-6)
    np.testing.assert_allclose([v for _, v in val["epoch_mae"]], history.history["val_mae"],
                               rtol=1e-6)
    assert [s for s, _ in train["epoch_loss"]] == [0, 1]
    assert [v for _, v in train["epoch_learning_rate"]] == pytest.approx([0.01, 0.01])
    # Keras logs evaluation at the optimizer's iteration: 2 batches per epoch.
    assert [s for s, _ in val["evaluation_loss_vs_iterations"]] == [2, 4]


# What Keras 3.15 on TensorFlow 2.21 writes for these runs (checked with the oracle): the
# batch scalars are written under `record_if(global_batch % update_freq == 0)`, which is still
# in force at epoch end (update_freq=3: the epoch scalars at batch 4 are not written), and a
# summary inside the model's step records the step and condition of the batch that traced it.
KERAS_BATCH_TAGS = {
    "batch": [(1, "inside"), (1, "batch_loss"), (1, "inside"), (2, "batch_loss"),
              (1, "inside"), (3, "batch_loss"), (1, "inside"), (4, "batch_loss"),
              (0, "epoch_loss"), (0, "epoch_learning_rate")],
    2: [(2, "batch_loss"), (4, "batch_loss"), (0, "epoch_loss"), (0, "epoch_learning_rate")],
    3: [(3, "batch_loss")],
}


@pytest.mark.parametrize("update_freq", ["batch", 2, 3])
def test_update_freq_as_keras(tmp_path, update_freq):
    class Probe(keras.layers.Layer):
        def call(self, x):
            tf.summary.scalar("inside", tf.reduce_mean(x))
            return x

    x, y = _data()
    model = keras.Sequential([keras.Input((4,)), Probe(), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=4, epochs=1, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(str(tmp_path), update_freq=update_freq,
                                                     write_graph=False)])
    written = [(e.step, v.tag.rsplit("/", 1)[-1])
               for e in raw_events(event_files(str(tmp_path / "train"))[0])
               for v in e.summary.value]
    assert written == KERAS_BATCH_TAGS[update_freq]


def test_tensorboards_loader_reads_histograms_and_images(tmp_path):
    model, _ = _fit(tmp_path, epochs=1, histogram_freq=1, write_images=True,
                    write_graph=False)
    acc = accumulate(str(tmp_path / "train"))
    kernel = model.layers[0].kernel
    [h] = acc.Tensors(f"{kernel.path}/histogram")
    buckets = tensor_util.make_ndarray(h.tensor_proto)
    assert buckets.shape == (30, 3) and buckets[:, 2].sum() == 12
    assert buckets[0, 0] == pytest.approx(float(np.min(kernel.numpy())))
    [img] = acc.Tensors(f"{kernel.path}/image")
    width, height = tensor_util.make_ndarray(img.tensor_proto)[:2]
    assert (int(width), int(height)) == (4, 3)  # the [4, 3] kernel transposed, as Keras


def test_write_graph_writes_the_optimized_mixed_precision_graph(tmp_path):
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((8, 8, 1)),
                                  keras.layers.Conv2D(4, 3, activation="relu"),
                                  keras.layers.Flatten(),
                                  keras.layers.Dense(2, dtype="float32")])
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        x = np.random.RandomState(0).rand(8, 8, 8, 1).astype("float32")
        model.fit(x, np.arange(8) % 2, batch_size=8, epochs=1, verbose=0,
                  callbacks=[keras.callbacks.TensorBoard(str(tmp_path))])
    finally:
        keras.mixed_precision.set_global_policy("float32")
    events = raw_events(event_files(str(tmp_path / "train"))[0])
    [graph_event] = [e for e in events if e.graph_def]
    graph = graph_pb2.GraphDef.FromString(graph_event.graph_def)
    ops = {n.op for n in graph.node}
    bf16 = tf.bfloat16.as_datatype_enum
    casts_to_bf16 = [n for n in graph.node if n.op == "Cast" and n.attr["DstT"].type == bf16]
    assert casts_to_bf16, "the mixed-precision casts are in the graph"
    [conv] = [n for n in graph.node if n.op == "_FusedConv2D"]  # conv + bias + relu fused
    assert conv.attr["T"].type == bf16
    assert {"ResourceApplyGradientDescent", "Conv2DBackpropFilter"} <= ops  # the train step
    keras_model = [v for e in events for v in e.summary.value if v.tag == "keras"]
    assert keras_model[0].metadata.plugin_data.plugin_name == "graph_keras_model"
    acc = accumulate(str(tmp_path / "train"))
    assert acc.Graph().node  # TensorBoard's loader takes it
    [traced] = acc.Tensors("train_function")  # the traced graph beside the optimized one
    meta = config_pb2.RunMetadata.FromString(tensor_util.make_ndarray(traced.tensor_proto).item())
    [fn] = meta.function_graphs
    assert fn.post_optimization_graph == graph
    assert "_FusedConv2D" not in {n.op for n in fn.pre_optimization_graph.node}
    assert "Conv2D" in {n.op for n in fn.pre_optimization_graph.node}


def test_run_eagerly_writes_no_graph_and_does_not_fail(tmp_path):
    x, y = _data()
    model = _model()
    model.compile("sgd", "mse", run_eagerly=True)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(str(tmp_path))])
    events = raw_events(event_files(str(tmp_path / "train"))[0])
    assert not [e for e in events if e.graph_def]
    assert "epoch_loss" in _scalars(str(tmp_path / "train"))


def test_bad_arguments_and_log_dir(tmp_path):
    with pytest.raises(ValueError, match="update_freq"):
        keras.callbacks.TensorBoard(str(tmp_path), update_freq="sometimes")
    blocker = tmp_path / "file"
    blocker.write_text("keep")
    x, y = _data()
    model = _model()
    with pytest.raises(errors.FailedPreconditionError, match="is not a directory"):
        model.fit(x, y, epochs=1, verbose=0,
                  callbacks=[keras.callbacks.TensorBoard(str(blocker / "logs"))])
    assert blocker.read_text() == "keep"


def test_profile_batch_traces_the_step_graphs(tmp_path):
    x, y = _data()
    model = _model()
    cb = keras.callbacks.TensorBoard(str(tmp_path), profile_batch="2,3", write_graph=False)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[cb])
    # the profile of batches 2..3 (tests/profiler checks its contents)
    assert list((tmp_path / "train" / "plugins" / "profile").glob("*/*.trace.json.gz"))
    acc = accumulate(str(tmp_path / "train"))
    [trace] = acc.Tensors("batch_3")  # Keras' tag: the stop batch
    assert trace.step == 3
    assert acc.SummaryMetadata("batch_3").plugin_data.plugin_name == "graph_run_metadata_graph"
    meta = config_pb2.RunMetadata.FromString(tensor_util.make_ndarray(trace.tensor_proto).item())
    [step_fn] = meta.function_graphs  # the train step that ran in batches 2..3
    assert "ResourceApplyGradientDescent" in {n.op for n in step_fn.post_optimization_graph.node}
    for bad in (-1, (3, 2), "a,b", [1, 2, 3]):
        with pytest.raises(ValueError, match="profile_batch must be"):
            keras.callbacks.TensorBoard(str(tmp_path), profile_batch=bad)


def test_embeddings_projector_config_and_checkpoints(tmp_path):
    keras.backend.clear_session()
    model = keras.Sequential([keras.Input((3,), dtype="int32"), keras.layers.Embedding(10, 4),
                              keras.layers.Flatten(), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    cb = keras.callbacks.TensorBoard(str(tmp_path), embeddings_freq=1, write_graph=False,
                                     embeddings_metadata={"embedding": "meta.tsv"})
    model.fit(np.array([[1, 2, 3]] * 4), np.ones((4, 1)), epochs=2, verbose=0, callbacks=[cb])
    assert (tmp_path / "projector_config.pbtxt").read_text() == (
        "embeddings {\n"
        '  tensor_name: "layer_with_weights-0/embeddings/.ATTRIBUTES/VARIABLE_VALUE"\n'
        '  metadata_path: "meta.tsv"\n'
        "}\n")
    for epoch in (0, 1):
        assert (tmp_path / "train" / f"keras_embedding.ckpt-{epoch}.weights.h5").exists()
    with pytest.raises(ValueError, match="Unrecognized `Embedding` layer names"):
        model.fit(np.array([[1, 2, 3]]), np.ones((1, 1)), verbose=0, callbacks=[
            keras.callbacks.TensorBoard(str(tmp_path), embeddings_freq=1,
                                        embeddings_metadata={"nope": "x.tsv"})])

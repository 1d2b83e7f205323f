"""What the "Distributed input" guide relies on, against TF 2.21's results
(tests/fixtures/distributed_input: generate.py ran the same cases in TF on 2 logical CPUs):
MirroredStrategy's default devices, partial batches of `distribute_datasets_from_function`,
`get_next_as_optional` eagerly and in a tf.function, a tf.function whose input_signature is
a distributed dataset's element_spec, `tf.distribute.InputOptions` and a loaded SavedModel's
`signatures`."""

import json
import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.runtime import device_config

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "distributed_input",
                       "distributed_input.json")


@pytest.fixture(scope="module")
def tf_results():
    with open(FIXTURE) as f:
        return json.load(f)


@pytest.fixture
def strategy(monkeypatch):
    """Two logical CPU devices (set directly: other tests may already have listed devices)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    monkeypatch.setitem(device_config._logical, cpu,
                        [tf.config.LogicalDeviceConfiguration()] * 2)
    return tf.distribute.MirroredStrategy()


def _local(strategy, x):
    return [v.numpy().tolist() for v in strategy.experimental_local_results(x)]


def test_default_devices(strategy, tf_results):
    if tf.config.list_physical_devices("GPU"):
        pytest.skip("the default devices are the GPUs")
    assert list(strategy.extended.worker_devices) == tf_results["mirrored_default_devices"]
    central = tf.distribute.experimental.CentralStorageStrategy()
    assert [central.num_replicas_in_sync, list(central.extended.parameter_devices)] == \
        tf_results["central_default"]


def test_datasets_from_function_partial_batches(strategy, tf_results):
    def dataset_fn(ctx):
        return tf.data.Dataset.range(20).batch(4).batch(2)

    got = [[list(v.shape) for v in strategy.experimental_local_results(x)]
           for x in strategy.distribute_datasets_from_function(dataset_fn)]
    assert got == tf_results["from_function"]   # the last step: replica 1 an empty batch

    def dataset_fn_static(ctx):
        return tf.data.Dataset.range(6).batch(2, drop_remainder=True)

    got = [_local(strategy, x)
           for x in strategy.distribute_datasets_from_function(dataset_fn_static)]
    assert got == tf_results["from_function_static"]   # static shapes: no partial step


def test_get_next_as_optional(strategy, tf_results):
    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.range(9).batch(4))
    it = iter(dist)
    eager = []
    while True:
        opt = it.get_next_as_optional()
        if not opt.has_value():
            break
        eager.append(_local(strategy, opt.get_value()))
    assert eager == tf_results["optional_eager"]

    @tf.function
    def total(iterator):
        s = tf.constant(0, tf.int64)
        for _ in tf.range(5):
            opt = iterator.get_next_as_optional()
            if not opt.has_value():
                break
            parts = strategy.experimental_local_results(opt.get_value())
            s += tf.reduce_sum(parts[0]) * 10 + tf.reduce_sum(parts[1])
        return s

    assert int(total(iter(dist))) == tf_results["optional_function"]


def test_element_spec_as_input_signature(strategy, tf_results):
    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.range(8).batch(4))

    @tf.function(input_signature=[dist.element_spec])
    def double(x):
        return strategy.run(lambda v: 2 * v, args=(x,))

    assert [_local(strategy, double(x)) for x in dist] == tf_results["signature_results"]
    assert double.experimental_get_tracing_count() == tf_results["signature_tracing_count"]


def test_input_options_named_tuple(tf_results):
    opts = tf.distribute.InputOptions(experimental_fetch_to_device=False)
    assert repr(opts) == tf_results["input_options_repr"]
    assert repr(tf.distribute.InputOptions()) == tf_results["input_options_default_repr"]
    with pytest.raises(AttributeError) as e:
        opts.experimental_fetch_to_device = True
    assert [type(e.value).__name__, str(e.value)] == tf_results["input_options_setattr"]
    assert repr(opts._replace(experimental_per_replica_buffer_size=3)) == \
        tf_results["input_options_replace"]


def test_loaded_signatures_repr(tmp_path, tf_results):
    m = tf.Module()
    m.v = tf.Variable(1.0)
    tf.saved_model.save(m, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert repr(loaded.signatures) == tf_results["signatures_repr_empty"]
    assert dict(loaded.signatures) == {}


def test_loop_local_value_after_break_is_not_carried():
    # TF's liveness: a value assigned and used within one iteration (here after a
    # canonicalized `break`) is local to it, so a non-tensor one stages fine
    class Box:
        def __init__(self, v):
            self.v = v

    @tf.function
    def f(x):
        s = tf.constant(0.0)
        for i in tf.range(10):
            if i >= 4:
                break
            box = Box(x[i] * 2.0)
            s += box.v
        return s

    x = np.arange(10, dtype=np.float32)
    np.testing.assert_allclose(f(tf.constant(x)).numpy(), np.sum(x[:4].astype(np.float64) * 2))


def test_keras_build_batch_takes_a_shuffle_seed(strategy, tf_results):
    # a model made under the strategy: Keras first builds it from one batch of a fresh pass
    # (its shuffle takes a seed), then evaluates / trains: the passes see TF's orders
    tf.keras.utils.set_random_seed(0)
    seen = []

    def log(x):
        seen.append(x.numpy().tolist())
        return x

    ds = tf.data.Dataset.range(8).map(lambda i: tf.cast(i, tf.float32)).shuffle(100).batch(8)
    ds = ds.map(lambda x: tf.py_function(log, [x], tf.float32))
    ds = ds.map(lambda x: (tf.reshape(x, [-1, 1]), tf.reshape(x, [-1, 1])))
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Input((1,)), tf.keras.layers.Dense(1)])
        model.compile(loss="mse", optimizer="sgd")
    model.evaluate(ds, verbose=0)
    assert seen == tf_results["keras_evaluate_orders"]
    seen.clear()
    model.fit(ds, epochs=3, verbose=0)
    assert seen == tf_results["keras_fit_orders"]

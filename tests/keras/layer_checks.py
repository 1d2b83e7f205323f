"""Shared checks for the Keras layer tests: replaying a Keras 3 fixture case
(tests/fixtures/keras_norm_merge_layers), float64 finite-difference gradients, JSON-normal
configs, the op types a layer's graph or a SavedModel holds."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np

import ndflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_norm_merge_layers")
with open(os.path.join(FIXTURE, "layers.json")) as _f:
    META = json.load(_f)
with np.load(os.path.join(FIXTURE, "layers.npz")) as _z:
    ARRAYS = dict(_z)


def normal_config(config: dict) -> dict:
    """A config as JSON stores it (tuples -> lists), for comparison with Keras' dumps."""
    return json.loads(json.dumps(config))


def replay(name: str, rtol=1e-5, atol=1e-6):
    """Makes the fixture's layer, sets its weights, replays its calls; compares the config,
    weight names, outputs, output masks, losses and final weights with Keras'. Returns the
    layer."""
    meta = META[name]
    with warnings.catch_warnings():  # deprecation warnings are tested where they belong
        warnings.simplefilter("ignore", UserWarning)
        layer = getattr(tf.keras.layers, meta["cls"])(**meta["kwargs"])
    first = meta["calls"][0]
    shapes = [ARRAYS[f"{name}/c0/in{i}"].shape for i in range(first["n_inputs"])]
    layer.build(shapes if len(shapes) > 1 else shapes[0])
    layer.built = True
    n_weights = sum(1 for k in ARRAYS if k.startswith(f"{name}/w"))
    layer.set_weights([ARRAYS[f"{name}/w{i}"] for i in range(n_weights)])
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == \
        meta["weight_names"]
    assert len(layer.trainable_weights) == meta["n_trainable"]
    for k, c in enumerate(meta["calls"]):
        ins = []
        for i in range(c["n_inputs"]):
            t = tf.constant(ARRAYS[f"{name}/c{k}/in{i}"])
            if c["input_masks"][i]:
                t._keras_mask = tf.constant(ARRAYS[f"{name}/c{k}/inmask{i}"])
            ins.append(t)
        kwargs = {}
        if c["training"] is not None:
            kwargs["training"] = c["training"]
        if c["mask"]:
            kwargs["mask"] = tf.constant(ARRAYS[f"{name}/c{k}/mask"])
        out = layer(ins if len(ins) > 1 else ins[0], **kwargs)
        want = ARRAYS[f"{name}/c{k}/out"]
        assert out.dtype.name == want.dtype.name, f"{name} call {k} dtype"
        np.testing.assert_allclose(out.numpy(), want, rtol=rtol, atol=atol,
                                   err_msg=f"{name} call {k}")
        out_mask = getattr(out, "_keras_mask", None)
        assert (out_mask is not None) == c["has_out_mask"], f"{name} call {k} mask"
        if out_mask is not None:
            np.testing.assert_array_equal(out_mask.numpy(), ARRAYS[f"{name}/c{k}/outmask"])
        np.testing.assert_allclose([float(v) for v in layer.losses], c["losses"], rtol=1e-5)
    for i, w in enumerate(layer.get_weights()):
        np.testing.assert_allclose(w, ARRAYS[f"{name}/after{i}"], rtol=rtol, atol=atol,
                                   err_msg=f"{name} weight {i} after the calls")
    assert normal_config(layer.get_config()) == meta["config"]
    return layer


def numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar f at x (float64)."""
    x = np.array(x, np.float64)
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f(x)
        flat[i] = old - eps
        down = f(x)
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return g


def check_gradients(layer, inputs, weights=(), rtol=1e-5, atol=1e-7, **call_kwargs):
    """The tape's gradients of sum(layer(inputs) * R) with respect to the input(s) and
    `weights` against finite differences (float64)."""
    single = not isinstance(inputs, (list, tuple))
    inputs = [np.asarray(inputs, np.float64)] if single else [np.asarray(x, np.float64)
                                                              for x in inputs]
    out0 = layer(inputs[0] if single else inputs, **call_kwargs).numpy()
    proj = np.random.default_rng(0).normal(size=out0.shape)

    def loss_of(xs):
        return float(np.sum(layer(xs[0] if single else xs, **call_kwargs).numpy() * proj))

    ts = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        out = layer(ts[0] if single else ts, **call_kwargs)
        loss = tf.reduce_sum(out * tf.constant(proj))
    grads = tape.gradient(loss, ts + list(weights))
    for i, x in enumerate(inputs):
        def f(v, i=i):
            xs = list(inputs)
            xs[i] = v
            return loss_of(xs)
        np.testing.assert_allclose(grads[i].numpy(), numeric_grad(f, x), rtol=rtol, atol=atol)
    for j, w in enumerate(weights):
        base = w.numpy().copy()

        def fw(v, w=w):
            w.assign(v)
            return loss_of(inputs)
        want = numeric_grad(fw, base)
        w.assign(base)
        g = grads[len(inputs) + j]
        g = tf.convert_to_tensor(g) if not hasattr(g, "numpy") else g
        np.testing.assert_allclose(g.numpy(), want, rtol=rtol, atol=atol)


def op_types(layer, x, **call_kwargs) -> set:
    """The op types of a tf.function calling `layer(x, **call_kwargs)`."""
    f = tf.function(lambda v: layer(v, **call_kwargs))
    return {op.type for op in f.get_concrete_function(tf.constant(x)).graph.get_operations()}


def saved_op_types(module, path) -> set:
    """The op types (its function library's included) of `module.f`, a tf.function with an
    input signature, saved to `path` and loaded back."""
    tf.saved_model.save(module, str(path))
    graph_def = tf.saved_model.load(str(path)).f.get_concrete_function().graph.as_graph_def()
    return {n.op for n in graph_def.node} | {n.op for fn in graph_def.library.function
                                              for n in fn.node_def}

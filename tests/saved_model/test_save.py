"""`tf.saved_model.save` writes TensorFlow's SavedModel structure: compared with the
SavedModel TensorFlow 2.21 wrote for the same module (tests/fixtures/saved_model/tf_module),
loaded back by ndflow, and written atomically."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ndflow as tf
from ndflow.checkpoint.tensor_bundle import BundleReader
from ndflow.core.protos.saved_model_pb import FingerprintDef, SavedModel
from ndflow.saved_model import saving
from ndflow.saved_model.nested_structure_coder import decode

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "saved_model")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))
X = np.array([[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]], np.float32)


class Affine(tf.Module):
    """The module of generate.py, in ndflow."""

    def __init__(self):
        super().__init__()
        self.v = tf.Variable([1.0, 2.0, 3.0], name="v")
        self.w = tf.Variable(2.0, name="w", trainable=False)
        self.child = tf.Module()
        self.child.scale = tf.Variable(0.5, name="scale")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        return x * self.v + self.w

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def scaled(self, x):
        return {"scaled": tf.reduce_sum(x, axis=1) * self.child.scale,
                "relu": tf.nn.relu(x - 1.0)}


def save_affine(path, **kwargs):
    m = Affine()
    tf.saved_model.save(m, str(path), signatures={"serving_default": m.__call__,
                                                  "scaled": m.scaled}, **kwargs)
    return m


def meta_graph(path):
    sm = SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    assert sm.saved_model_schema_version == 1 and len(sm.meta_graphs) == 1
    return sm.meta_graphs[0]


def kinds_by_path(mg):
    """{path of local names: node kind} of a SavedObjectGraph (first paths)."""
    nodes = mg.object_graph_def.nodes
    out, queue = {(): nodes[0].WhichOneof("kind")}, [((), 0)]
    seen = {0}
    while queue:
        path, i = queue.pop(0)
        for ref in nodes[i].children:
            if ref.node_id in seen or ref.local_name.startswith("trace_"):
                continue
            seen.add(ref.node_id)
            out[path + (ref.local_name,)] = nodes[ref.node_id].WhichOneof("kind")
            queue.append((path + (ref.local_name,), ref.node_id))
    return out


def test_layout_and_checkpoint_keys_match_tensorflow(tmp_path):
    save_affine(tmp_path / "m")
    d = str(tmp_path / "m")
    assert sorted(os.listdir(d)) == ["assets", "fingerprint.pb", "saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(d, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    ours = BundleReader(os.path.join(d, "variables", "variables"))
    theirs = BundleReader(os.path.join(FIXTURES, "tf_module", "variables", "variables"))
    assert sorted(ours.keys()) == sorted(theirs.keys())
    for key in theirs.keys():
        if key != "_CHECKPOINTABLE_OBJECT_GRAPH":
            np.testing.assert_array_equal(ours.read(key), theirs.read(key))
    fp = FingerprintDef()
    with open(os.path.join(d, "fingerprint.pb"), "rb") as f:
        fp.ParseFromString(f.read())
    assert fp.saved_model_checksum and fp.checkpoint_hash


def test_signature_defs_match_tensorflow(tmp_path):
    save_affine(tmp_path / "m")
    ours, theirs = meta_graph(str(tmp_path / "m")), meta_graph(os.path.join(FIXTURES,
                                                                            "tf_module"))
    assert list(ours.meta_info_def.tags) == ["serve"]
    assert sorted(ours.signature_def) == sorted(theirs.signature_def)
    for key in ("serving_default", "scaled"):
        a, b = ours.signature_def[key], theirs.signature_def[key]
        assert a.method_name == b.method_name == "tensorflow/serving/predict"
        assert a.inputs == b.inputs  # names, dtypes and shapes
        assert sorted(a.outputs) == sorted(b.outputs)
        for k in b.outputs:
            assert a.outputs[k].dtype == b.outputs[k].dtype
            assert a.outputs[k].tensor_shape == b.outputs[k].tensor_shape
            node = a.outputs[k].name.split(":")[0]
            assert any(n.name == node and n.op == "StatefulPartitionedCall"
                       for n in ours.graph_def.node)


def test_object_graph_matches_tensorflow(tmp_path):
    save_affine(tmp_path / "m")
    ours, theirs = meta_graph(str(tmp_path / "m")), meta_graph(os.path.join(FIXTURES,
                                                                            "tf_module"))
    assert kinds_by_path(ours) == kinds_by_path(theirs)
    nodes = ours.object_graph_def.nodes
    root = {r.local_name: r.node_id for r in nodes[0].children}
    v = nodes[root["v"]].variable
    assert (v.name, v.trainable, [d.size for d in v.shape.dim]) == ("v", True, [3])
    assert nodes[root["w"]].variable.trainable is False
    call = nodes[root["__call__"]].function
    (name,) = call.concrete_functions
    cf = ours.object_graph_def.concrete_functions[name]
    assert sorted(cf.bound_inputs) == sorted([root["v"], root["w"]])
    args, kwargs = decode(cf.canonicalized_input_signature)
    assert kwargs == {} and args == (tf.TensorSpec([None, 3], tf.float32, "x"),)
    spec = decode(call.function_spec.fullargspec)
    assert spec.args == ["x"]
    library = {f.signature.name: f for f in ours.graph_def.library.function}
    assert sorted(n.op for n in library[name].node_def) == sorted(
        ["ReadVariableOp", "Mul", "ReadVariableOp", "AddV2", "Identity"])
    assert [a.type for a in library[name].signature.input_arg][1:] == [20, 20]  # resources


def test_round_trip_through_ndflow(tmp_path):
    m = save_affine(tmp_path / "m")
    m.w.assign(5.0)  # saved value is 2.0
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded(X).numpy(), EXPECTED["module_call"])
    out = loaded.signatures["scaled"](x=X)
    np.testing.assert_allclose(out["scaled"].numpy(), EXPECTED["module_scaled_scaled"])
    np.testing.assert_allclose(loaded.child.scale.numpy(), 0.5)


def test_default_signature_is_the_single_signature_function(tmp_path):
    class One(tf.Module):
        def __init__(self):
            super().__init__()
            self.k = tf.Variable(3.0)

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def triple(self, a):
            return [a * self.k, a]

    tf.saved_model.save(One(), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    out = loaded.signatures["serving_default"](a=2.0)
    assert sorted(out) == ["output_0", "output_1"]
    assert float(out["output_0"].numpy()) == 6.0 and float(out["output_1"].numpy()) == 2.0


def test_stateful_function_and_traced_functions_without_signature(tmp_path):
    class Counter(tf.Module):
        def __init__(self):
            super().__init__()
            self.n = tf.Variable(0, dtype=tf.int64)

        @tf.function
        def add(self, k):
            self.n.assign_add(k)
            return self.n.read_value()

    c = Counter()
    c.add(tf.constant(2, tf.int64))
    tf.saved_model.save(c, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert dict(loaded.signatures) == {}
    assert int(loaded.add(tf.constant(3, tf.int64)).numpy()) == 5
    assert int(loaded.n.numpy()) == 5


def test_keras_model_saves_through_the_module_path(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    serve = tf.function(lambda x: model(x), input_signature=[tf.TensorSpec([None, 3])])
    tf.saved_model.save(model, str(tmp_path / "m"), signatures=serve)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    (out,) = loaded.signatures["serving_default"](x=X).values()
    np.testing.assert_allclose(out.numpy(), model(X).numpy(), rtol=1e-6)


def test_untracked_variable_is_an_error(tmp_path):
    outside = tf.Variable(1.0)

    class Leaky(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def f(self, x):
            return x + outside

    with pytest.raises(AssertionError, match="untracked"):
        tf.saved_model.save(Leaky(), str(tmp_path / "m"))
    assert not os.path.exists(tmp_path / "m")


def test_bad_signatures_and_objects(tmp_path):
    m = Affine()
    with pytest.raises(ValueError, match="input_signature"):
        tf.saved_model.save(m, str(tmp_path / "m"), signatures=tf.function(lambda x: x))
    with pytest.raises(ValueError, match="Expected a TensorFlow function"):
        tf.saved_model.save(m, str(tmp_path / "m"), signatures={"s": 3})
    with pytest.raises(ValueError, match="Trackable"):
        tf.saved_model.save(object(), str(tmp_path / "m"))


def test_failed_save_keeps_the_previous_saved_model(tmp_path, monkeypatch):
    d = tmp_path / "m"
    save_affine(d)
    before = (d / "saved_model.pb").read_bytes()

    def no_space(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(saving, "write_variables", no_space)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="No space left"):
        save_affine(d)
    assert (d / "saved_model.pb").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m"]  # no temporary directory left
    np.testing.assert_allclose(tf.saved_model.load(str(d))(X).numpy(), EXPECTED["module_call"])


@pytest.mark.slow  # a fresh interpreter importing ndflow: seconds
def test_writer_killed_mid_save_leaves_the_previous_saved_model(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(os.path.join(FIXTURES, "tf_module"), d)
    # killed with the new tree written, before it replaces the old one
    script = ("import os, signal, sys; sys.path.insert(0, sys.argv[2]); import ndflow as tf\n"
              "from ndflow.saved_model import saving\n"
              "saving.replace_tree = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
              "from test_save import save_affine\n"
              "save_affine(sys.argv[1])\n")
    proc = subprocess.run([sys.executable, "-c", script, str(d), os.path.dirname(__file__)],
                          capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    loaded = tf.saved_model.load(str(d))
    np.testing.assert_allclose(loaded(X).numpy(), EXPECTED["module_call"])


def test_saving_again_replaces_the_tree_in_place(tmp_path):
    d = tmp_path / "m"
    save_affine(d)
    (d / "assets" / "stale.txt").write_text("from the previous save")
    m = save_affine(d)
    assert not (d / "assets" / "stale.txt").exists()
    assert sorted(os.listdir(tmp_path)) == ["m"]
    np.testing.assert_allclose(tf.saved_model.load(str(d))(X).numpy(), m(X).numpy())


def test_save_inside_a_function_is_an_error(tmp_path):
    @tf.function
    def f():
        tf.saved_model.save(Affine(), str(tmp_path / "m"))
        return 1.0

    with pytest.raises(AssertionError, match="not supported inside a traced"):
        f()


def test_assets_are_copied_and_bound(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("one\ntwo\n")

    class WithAsset(tf.Module):
        def __init__(self):
            super().__init__()
            self.vocab = tf.saved_model.Asset(str(vocab))

        @tf.function(input_signature=[])
        def read(self):
            return tf.io.read_file(self.vocab.asset_path)

    tf.saved_model.save(WithAsset(), str(tmp_path / "m"))
    assert (tmp_path / "m" / "assets" / "vocab.txt").read_text() == "one\ntwo\n"
    mg = meta_graph(str(tmp_path / "m"))
    assert [a.filename for a in mg.asset_file_def] == ["vocab.txt"]
    # graph-level loaders: the init op assigns the fed path to a variable the calls read
    init = mg.signature_def["__saved_model_init_op"].outputs["__saved_model_init_op"].name
    (init_node,) = [n for n in mg.graph_def.node if n.name == init]
    assert any(i.startswith("^asset_path") for i in init_node.input)
    theirs = meta_graph(os.path.join(FIXTURES, "tf_asset"))
    assert mg.asset_file_def[0].tensor_info.name == theirs.asset_file_def[0].tensor_info.name
    vocab.unlink()
    shutil.move(str(tmp_path / "m"), str(tmp_path / "moved"))
    loaded = tf.saved_model.load(str(tmp_path / "moved"))
    assert loaded.read().numpy() == b"one\ntwo\n"
    assert loaded.signatures["serving_default"]()["output_0"].numpy() == b"one\ntwo\n"
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        mg = tf.compat.v1.saved_model.load(sess, ["serve"], str(tmp_path / "moved"))
        out = mg.signature_def["serving_default"].outputs["output_0"].name
        assert sess.run(out) == b"one\ntwo\n"


def test_missing_asset_file_is_an_error(tmp_path):
    class Broken(tf.Module):
        def __init__(self):
            super().__init__()
            self.vocab = tf.saved_model.Asset(str(tmp_path / "nope.txt"))

    with pytest.raises(ValueError, match="nope.txt"):
        tf.saved_model.save(Broken(), str(tmp_path / "m"))
    assert not (tmp_path / "m").exists()


def test_traced_python_arguments_are_part_of_the_saved_signatures(tmp_path):
    class Poly(tf.Module):
        def __init__(self):
            super().__init__()
            self.k = tf.Variable(2.0)

        @tf.function
        def f(self, x, scale=1.0):
            return x * self.k * scale

    p = Poly()
    p.f(tf.constant(1.0))
    p.f(tf.constant([1.0, 2.0]))
    p.f(tf.constant(1.0), scale=3.0)
    tf.saved_model.save(p, str(tmp_path / "m"))
    mg = meta_graph(str(tmp_path / "m"))
    signatures = sorted(repr(decode(c.canonicalized_input_signature))
                        for c in mg.object_graph_def.concrete_functions.values())
    assert any("3.0" in s for s in signatures) and any("1.0" in s for s in signatures)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert float(loaded.f(tf.constant(1.0)).numpy()) == 2.0
    assert float(loaded.f(tf.constant(1.0), scale=3.0).numpy()) == 6.0
    np.testing.assert_allclose(loaded.f(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded.f(tf.constant(1.0), scale=5.0)


def test_checkpoint_object_as_root(tmp_path):
    root = tf.train.Checkpoint(v=tf.Variable(2.0))
    root.f = tf.function(lambda x: x * root.v, input_signature=[tf.TensorSpec([], tf.float32)])
    tf.saved_model.save(root, str(tmp_path / "m"))
    keys = BundleReader(str(tmp_path / "m" / "variables" / "variables")).keys()
    assert "v/.ATTRIBUTES/VARIABLE_VALUE" in keys
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert float(loaded.f(3.0).numpy()) == 6.0
    assert float(loaded.signatures["serving_default"](x=3.0)["output_0"].numpy()) == 6.0

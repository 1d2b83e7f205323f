"""tf.keras.utils.model_to_dot / plot_model against Keras 3.15 (tests/fixtures/keras_plot_model,
generated on TF 2.21's tf.keras): the DOT source of each model and option set, what plot_model
writes (file, format, source) and returns, and the errors: unbuilt models, removed or unknown
arguments, pydot or Graphviz missing (in a script and inside IPython). Rendering real files
needs Graphviz's `dot` program and is skipped without it."""

from __future__ import annotations

import json
import pathlib
import shutil
import sys
import types

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_plot_model")
KERAS = json.loads((fixture_modules.FIXTURES / "keras_plot_model" / "values.json").read_text())
MODELS = CONFIGS.build_models(tf.keras)
NOTEBOOK = "IPython.core.magics.namespace"


@pytest.fixture
def pydot():
    return pytest.importorskip("pydot")


@pytest.fixture
def no_ipython(monkeypatch):
    """IPython absent (plot_model then returns None), whatever this environment has."""
    monkeypatch.setitem(sys.modules, "IPython", None)
    monkeypatch.delitem(sys.modules, NOTEBOOK, raising=False)


@pytest.fixture
def no_pydot(monkeypatch):
    for name in ("pydot", "pydot_ng", "pydotplus"):
        monkeypatch.setitem(sys.modules, name, None)


def _outcome(call, capsys):
    """[error or returned type, what was printed], as generate.py records it."""
    try:
        result = f"returned {type(call()).__name__}"
    except Exception as e:   # recorded
        result = f"{type(e).__name__}: {e}"
    return [result, capsys.readouterr().out]


def test_exported_under_keras_utils():
    from ndflow.keras import utils_model_visualization as module
    assert tf.keras.utils.model_to_dot is module.model_to_dot
    assert tf.keras.utils.plot_model is module.plot_model
    assert tf.compat.v1.keras.utils.plot_model is module.plot_model


@pytest.mark.parametrize("name", sorted(CONFIGS.DOT_CASES))
def test_dot_source_matches_keras(name, pydot):
    assert CONFIGS.dot_source(tf.keras, MODELS, name) == KERAS["dot"][name]


def test_node_ids_are_the_layers_ids(pydot):
    """Keras names a node by id(layer): the normalization above hides the values, this checks
    them (and that a subgraph is a pydot.Cluster holding the layers' nodes)."""
    model = MODELS["cnn"]
    dot = tf.keras.utils.model_to_dot(model)
    assert isinstance(dot, pydot.Dot)
    assert [n.get_name() for n in dot.get_nodes() if n.get_name() != "node"] == \
        [str(id(layer)) for layer in model.layers]
    cluster = tf.keras.utils.model_to_dot(MODELS["encoder"], subgraph=True)
    assert isinstance(cluster, pydot.Cluster)
    assert cluster.get_name() == "cluster_encoder"
    assert {n.get_name() for n in cluster.get_nodes()} == \
        {str(id(layer)) for layer in MODELS["encoder"].layers}


@pytest.mark.parametrize("name", sorted(CONFIGS.PLOT_CASES))
def test_plot_model_writes_match_keras(name, pydot, no_ipython, tmp_path):
    assert CONFIGS.plot_writes(tf.keras, pydot, MODELS, name, str(tmp_path)) == \
        KERAS["plot"][name]


@pytest.mark.parametrize("name", sorted(CONFIGS.ERROR_CASES))
def test_argument_errors_match_keras(name, pydot, monkeypatch):
    monkeypatch.setattr(pydot.Dot, "create", lambda self, *a, **k: b"")  # Graphviz "works"
    assert CONFIGS.error(tf.keras, MODELS, name) == KERAS["errors"][name]


def test_unbuilt_model_raises_as_keras(capsys):
    model = CONFIGS.unbuilt_model(tf.keras)
    assert not model.built
    assert _outcome(lambda: tf.keras.utils.model_to_dot(model), capsys) == \
        KERAS["unbuilt"]["model_to_dot"]
    assert _outcome(lambda: tf.keras.utils.plot_model(model), capsys) == \
        KERAS["unbuilt"]["plot_model"]


@pytest.mark.parametrize("where", ["script", "ipython"])
def test_missing_pydot_as_keras(where, no_pydot, monkeypatch, capsys, tmp_path):
    if where == "ipython":   # inside IPython plot_model prints instead of raising
        monkeypatch.setitem(sys.modules, NOTEBOOK, types.ModuleType("namespace"))
    model = MODELS["cnn"]
    target = tmp_path / "model.png"
    assert _outcome(lambda: tf.keras.utils.model_to_dot(model), capsys) == \
        KERAS["missing"][f"pydot_{where}_model_to_dot"]
    assert _outcome(lambda: tf.keras.utils.plot_model(model, to_file=target), capsys) == \
        KERAS["missing"][f"pydot_{where}_plot_model"]
    assert not target.exists()


@pytest.mark.parametrize("where", ["script", "ipython"])
def test_missing_graphviz_as_keras(where, pydot, monkeypatch, capsys, tmp_path):
    if where == "ipython":
        monkeypatch.setitem(sys.modules, NOTEBOOK, types.ModuleType("namespace"))

    def no_dot_program(self, *args, **kwargs):
        raise OSError("dot not found")

    monkeypatch.setattr(pydot.Dot, "create", no_dot_program)
    target = tmp_path / "model.png"
    assert _outcome(lambda: tf.keras.utils.plot_model(MODELS["cnn"], to_file=target),
                    capsys) == KERAS["missing"][f"graphviz_{where}_plot_model"]
    assert not target.exists()
    # pydot's own failure (Graphviz present but failing) is the same
    def failing(self, *args, **kwargs):
        raise pydot.PydotException("dot failed")

    monkeypatch.setattr(pydot.Dot, "create", failing)
    assert _outcome(lambda: tf.keras.utils.plot_model(MODELS["cnn"], to_file=target),
                    capsys) == KERAS["missing"][f"graphviz_{where}_plot_model"]


def test_pydot_forks_are_used_when_pydot_is_missing(pydot, monkeypatch):
    """Keras falls back to pydot_ng, then pydotplus (older pydot forks)."""
    monkeypatch.setitem(sys.modules, "pydot", None)
    monkeypatch.setitem(sys.modules, "pydot_ng", None)
    monkeypatch.setitem(sys.modules, "pydotplus", pydot)
    got = CONFIGS.normalize(tf.keras.utils.model_to_dot(MODELS["cnn"]).to_string())
    assert got == KERAS["dot"]["cnn_default"]


def test_plot_model_returns_an_ipython_image(pydot, monkeypatch, tmp_path):
    """With IPython installed, plot_model returns `IPython.display.Image(filename=...)` of
    the written file (nothing for a PDF, which IPython cannot show)."""
    class Image:
        def __init__(self, filename):
            self.filename = filename

    ipython = types.ModuleType("IPython")
    ipython.display = types.ModuleType("IPython.display")
    ipython.display.Image = Image
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython.display)
    monkeypatch.setattr(pydot.Dot, "create", lambda self, *a, **k: b"")
    written = []
    monkeypatch.setattr(pydot.Dot, "write",
                        lambda self, path, prog=None, format="raw", encoding=None:
                        written.append((path, format)))
    image = tf.keras.utils.plot_model(MODELS["cnn"], to_file=tmp_path / "cnn.png")
    assert isinstance(image, Image) and image.filename == str(tmp_path / "cnn.png")
    assert tf.keras.utils.plot_model(MODELS["cnn"], to_file=tmp_path / "cnn.pdf") is None
    assert written == [(str(tmp_path / "cnn.png"), "png"), (str(tmp_path / "cnn.pdf"), "pdf")]


_MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF", ".svg": b"<?xml", ".dot": b"digraph",
          "": b"\x89PNG\r\n\x1a\n"}


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's `dot` program is absent")
@pytest.mark.parametrize("extension", sorted(_MAGIC))
def test_plot_model_renders_files(extension, pydot, no_ipython, tmp_path):
    target = tmp_path / f"model{extension}"
    result = tf.keras.utils.plot_model(MODELS["vae"], to_file=target, show_shapes=True,
                                       show_layer_names=True, expand_nested=True, dpi=48)
    assert result is None
    data = pathlib.Path(target).read_bytes()
    assert data.startswith(_MAGIC[extension])
    if extension in (".svg", ".dot"):   # the labels made it through Graphviz
        text = data.decode()
        for name in ("vae_in", "enc_hidden", "block_dense", "dec_out", "aux"):
            assert name in text
        assert "cluster_decoder" in text

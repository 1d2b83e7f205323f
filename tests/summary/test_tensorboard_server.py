"""TensorBoard itself serving what ndflow wrote: its server on loopback (in-process, the
`tensorboard` package ndflow depends on) answers the scalars and graph HTTP APIs, and a
headless Chromium renders the Time Series (scalars) dashboard with the run's tags and the
Graphs dashboard with the graph a mixed-precision Keras `fit` ran (fused bfloat16 ops)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest
from absl import logging as absl_logging
from tensorboard import default, program

import ndflow as tf
from ndflow.summary import tensorboard as tensorboard_cli
from tests.summary.chromium import Chromium, find_chromium

CHROMIUM = find_chromium()
NO_CHROMIUM = "headless Chromium is not installed (Debian: apt-get install -y chromium)"


def _write_logs(logdir: str) -> None:
    @tf.function
    def step_fn(x, w):
        return tf.nn.relu(tf.matmul(x, w))

    x, w = tf.ones([2, 3]), tf.ones([3, 4])
    for run, scale in (("train", 1.0), ("validation", 2.0)):
        writer = tf.summary.create_file_writer(f"{logdir}/{run}")
        with writer.as_default():
            for step in range(3):
                tf.summary.scalar("epoch_loss", scale / (step + 1), step=step)
            tf.summary.histogram("weights", np.arange(10.0), step=0)
            if run == "train":
                tf.summary.graph(step_fn.get_concrete_function(x, w).graph)
        writer.close()


@contextlib.contextmanager
def _serve(logdir: str, runs: list[str]):
    """TensorBoard on 127.0.0.1 (a free port) over `logdir`, once `runs` are loaded."""
    tb = program.TensorBoard(plugins=default.get_plugins())
    tb.configure(argv=[None, "--logdir", logdir, "--host", "127.0.0.1", "--port", "0",
                       "--load_fast", "false", "--reload_interval", "0"])
    srv = tb._make_server()  # launch() without keeping the server: we shut it down
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    url = srv.get_url().rstrip("/")
    deadline = time.time() + 20
    while time.time() < deadline:
        if sorted(json.loads(_get(url, "/data/runs"))) == sorted(runs):
            break
        time.sleep(0.05)
    try:
        yield url
    finally:
        srv.shutdown()
        thread.join(5)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    logdir = str(tmp_path_factory.mktemp("logs"))
    _write_logs(logdir)
    with _serve(logdir, ["train", "validation"]) as url:
        yield url


def _get(url: str, path: str, **params) -> bytes:
    query = ("?" + urllib.parse.urlencode(params)) if params else ""
    with urllib.request.urlopen(url + path + query, timeout=10) as r:
        return r.read()


def test_scalars_over_http(server):
    tags = json.loads(_get(server, "/data/plugin/scalars/tags"))
    assert set(tags) == {"train", "validation"}
    assert set(tags["train"]) == {"epoch_loss"}
    points = json.loads(_get(server, "/data/plugin/scalars/scalars", run="validation",
                             tag="epoch_loss"))
    assert [(step, round(value, 6)) for _, step, value in points] == \
        [(0, 2.0), (1, 1.0), (2, round(2 / 3, 6))]
    hist_tags = json.loads(_get(server, "/data/plugin/histograms/tags"))
    assert "weights" in hist_tags["train"]


def test_graph_over_http(server):
    info = json.loads(_get(server, "/data/plugin/graphs/info"))
    assert info["train"]["run_graph"]
    graph_text = _get(server, "/data/plugin/graphs/graph", run="train",
                      conceptual="false").decode()
    assert 'op: "MatMul"' in graph_text and 'op: "Relu"' in graph_text
    assert "type: DT_FLOAT" in graph_text  # node attributes carry the dtypes


@pytest.mark.slow  # a browser start: CI's slow pass runs it
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_browser_renders_the_scalars_dashboard(server):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--virtual-time-budget=15000", "--dump-dom", server + "/#timeseries"]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=90).stdout
    assert "TensorBoard" in dom
    assert "epoch_loss" in dom  # the tag's card, rendered by the dashboard's JavaScript
    assert "> train <" in dom and "> validation <" in dom  # the runs table


# The nodes of the graph TensorBoard's Graphs dashboard built (its tf-graph element, inside
# shadow roots): "op|name|dtype attrs" for each.
_GRAPH_NODES_JS = """(() => {
  let graph = null;
  const walk = (n) => {
    if (graph) return;
    if (n.tagName === 'TF-GRAPH') { graph = n; return; }
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const child of n.children || []) walk(child);
  };
  walk(document);
  if (!graph || !graph.graphHierarchy) return null;
  const nodes = graph.graphHierarchy.getNodeMap(), out = [];
  for (const name in nodes) {
    const node = nodes[name];
    if (!node.op) continue;
    const types = (node.attr || []).filter(a => a.value && a.value.type)
        .map(a => a.key + '=' + a.value.type).join(',');
    out.push(node.op + '|' + name + '|' + types);
  }
  return out.length ? out : null;
})()"""


@pytest.mark.slow  # ~9 s: a Keras fit, a server and a browser
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_browser_renders_the_graph_fit_ran_with_mixed_precision(tmp_path):
    keras = tf.keras
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        keras.backend.clear_session()
        model = keras.Sequential([keras.Input((8, 8, 1)),
                                  keras.layers.Conv2D(4, 3, activation="relu"),
                                  keras.layers.Flatten(), keras.layers.Dense(2, dtype="float32")])
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        x = np.random.RandomState(0).rand(8, 8, 8, 1).astype("float32")
        model.fit(x, np.arange(8) % 2, batch_size=8, epochs=1, verbose=0,
                  callbacks=[keras.callbacks.TensorBoard(str(tmp_path))])
    finally:
        keras.mixed_precision.set_global_policy("float32")
    with _serve(str(tmp_path), ["train"]) as url:
        with Chromium(CHROMIUM, url + "/#graphs&run=train") as browser:
            nodes = browser.wait_for(_GRAPH_NODES_JS, timeout=60)
    assert nodes, "the Graphs dashboard rendered no graph"
    ops = [n.split("|") for n in nodes]
    assert any(op == "_FusedConv2D" and "T=DT_BFLOAT16" in attrs for op, _, attrs in ops)
    assert any(op == "Cast" and "DstT=DT_BFLOAT16" in attrs for op, _, attrs in ops)


def test_module_entry_point_runs_tensorboards_cli(capsys, monkeypatch):
    monkeypatch.setattr(absl_logging, "set_verbosity", lambda level: None)  # process-global
    argv = list(sys.argv)
    with pytest.raises(SystemExit) as exit_info:  # absl's app.run ends with sys.exit
        tensorboard_cli.main(["--version_tb"])
    assert sys.argv == argv
    assert exit_info.value.code in (0, None)
    assert capsys.readouterr().out.strip().startswith("2.")

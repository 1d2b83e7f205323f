"""keras.callbacks.RemoteMonitor (ndflow/keras/callbacks/remote_monitor.py) against a real
HTTP server on 127.0.0.1: each epoch's logs posted as Keras posts them (a form field holding
JSON, or a JSON body), custom headers, the warning for an unreachable server, and Keras'
ImportError without `requests`."""

from __future__ import annotations

import http.server
import json
import socket
import sys
import threading
import urllib.parse

import numpy as np
import pytest

import ndflow as tf

keras = tf.keras
requests = pytest.importorskip("requests")


class _Recorder(http.server.BaseHTTPRequestHandler):
    def do_POST(self):   # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        self.server.posts.append((self.path, dict(self.headers), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    httpd.posts = []
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _fit(callback, epochs=2):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
    return model.fit(x, x[:, :1], epochs=epochs, batch_size=4, verbose=0,
                     callbacks=[callback])


def test_epoch_logs_are_posted_as_a_json_form_field(server):
    root = f"http://127.0.0.1:{server.server_address[1]}"
    history = _fit(keras.callbacks.RemoteMonitor(root=root))
    assert len(server.posts) == 2
    for epoch, (path, headers, body) in enumerate(server.posts):
        assert path == "/publish/epoch/end/"
        assert headers["Content-Type"] == "application/x-www-form-urlencoded"
        sent = json.loads(urllib.parse.parse_qs(body)["data"][0])
        assert sent["epoch"] == epoch
        assert sent["loss"] == pytest.approx(history.history["loss"][epoch], rel=1e-6)


def test_send_as_json_with_headers_and_a_custom_path(server):
    root = f"http://127.0.0.1:{server.server_address[1]}"
    monitor = keras.callbacks.RemoteMonitor(root=root, path="/logs", field="ignored",
                                            headers={"X-Run": "7"}, send_as_json=True)
    monitor.on_epoch_end(3, {"loss": np.float32(0.25), "acc": np.array(0.5), "lr": 0.1})
    (path, headers, body), = server.posts
    assert path == "/logs" and headers["X-Run"] == "7"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"epoch": 3, "loss": 0.25, "acc": 0.5, "lr": 0.1}


def test_an_unreachable_server_warns():
    with socket.socket() as sock:       # a port bound, then released: nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monitor = keras.callbacks.RemoteMonitor(root=f"http://127.0.0.1:{port}")
    with pytest.warns(UserWarning, match="Could not reach RemoteMonitor root server"):
        monitor.on_epoch_end(0, {"loss": 1.0})


def test_without_requests_it_raises_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "requests", None)
    monitor = keras.callbacks.RemoteMonitor()
    with pytest.raises(ImportError, match="RemoteMonitor requires the `requests` library"):
        monitor.on_epoch_end(0, {})


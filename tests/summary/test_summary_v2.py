"""tf.summary (TF2): event files read back with TensorBoard's own loaders, compared with the
files TensorFlow 2.21 wrote for the same calls (tests/fixtures/tensorboard/tf2)."""

from __future__ import annotations

import io
import os
import re
import socket
import time
import wave

import numpy as np
import pytest
from tensorboard.compat.proto import config_pb2, summary_pb2
from tensorboard.util import tensor_util

import ndflow as tf
from ndflow.core import errors
from ndflow.summary import encoders, event_file
from tests.summary.events import (
    FIXTURES,
    accumulate,
    decode_png,
    event_files,
    raw_events,
    summary_structure,
)


def _write_all(logdir):
    """The same calls as the fixture's generate.py (tf2())."""
    writer = tf.summary.create_file_writer(logdir)

    @tf.function
    def f(x):
        tf.summary.scalar("in_function", x * 2.0)
        return x + 1.0

    with writer.as_default(step=3):
        assert bool(tf.summary.scalar("loss", 0.25, description="the loss"))
        tf.summary.histogram("weights", np.linspace(-1.0, 1.0, 50).astype(np.float32))
        tf.summary.image("images", np.linspace(0, 1, 2 * 4 * 5 * 3).reshape(2, 4, 5, 3)
                         .astype(np.float32))
        tf.summary.text("notes", "hello *TensorBoard*")
        tf.summary.audio("sound", np.sin(np.linspace(0, 20, 160)).reshape(1, 160, 1)
                         .astype(np.float32), 8000)
        with tf.name_scope("outer"):
            tf.summary.scalar("inner", 1.5)
        for step in (7, 8):
            tf.summary.experimental.set_step(step)
            f(tf.constant(float(step)))
        tf.summary.graph(f.get_concrete_function(tf.constant(1.0)).graph)
    tf.summary.experimental.set_step(None)
    writer.close()
    return writer


def _tensors(path):
    out = {}
    for e in raw_events(path):
        for v in e.summary.value:
            out.setdefault(v.tag, []).append((e.step, tensor_util.make_ndarray(v.tensor), v))
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    logdir = str(tmp_path_factory.mktemp("tf2"))
    writer = _write_all(logdir)
    return logdir, writer


def test_file_name_and_version_record_as_tf2(written):
    logdir, writer = written
    [path] = event_files(logdir)
    name = os.path.basename(path)
    assert re.fullmatch(rf"events\.out\.tfevents\.\d{{10}}\.{re.escape(socket.gethostname())}"
                        rf"\.{os.getpid()}\.\d+\.v2", name), name
    [fixture] = event_files(os.path.join(FIXTURES, "tf2"))
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\.[^.]+\.\d+\.\d+\.v2",
                        os.path.basename(fixture))
    first = raw_events(path)[0]
    assert first.file_version == raw_events(fixture)[0].file_version == "brain.Event:2"


def test_same_tags_plugins_dtypes_and_shapes_as_tensorflow(written):
    logdir, _ = written
    ours = summary_structure(event_files(logdir)[0])
    theirs = summary_structure(event_files(os.path.join(FIXTURES, "tf2"))[0])
    assert ours == theirs


def test_same_values_and_metadata_as_tensorflow(written):
    ours = _tensors(event_files(written[0])[0])
    theirs = _tensors(event_files(os.path.join(FIXTURES, "tf2"))[0])
    for tag in ("loss", "weights", "notes", "outer/inner"):
        (s1, a1, v1), (s2, a2, v2) = ours[tag][0], theirs[tag][0]
        assert s1 == s2 == 3
        np.testing.assert_allclose(a1.astype(float) if a1.dtype != object else 0,
                                   a2.astype(float) if a2.dtype != object else 0, rtol=1e-12)
        assert a1.tolist() == a2.tolist() or tag == "weights"
        assert v1.metadata == v2.metadata
    # A step captured when the function was traced, as TensorFlow: both calls write step 7,
    # each with its own value.
    assert [(s, float(a)) for s, a, _ in ours["in_function"]] == \
           [(s, float(a)) for s, a, _ in theirs["in_function"]] == [(7, 14.0), (7, 16.0)]


def test_images_decode_to_tensorflows_pixels(written):
    ours = _tensors(event_files(written[0])[0])["images"][0][1]
    theirs = _tensors(event_files(os.path.join(FIXTURES, "tf2"))[0])["images"][0][1]
    assert list(ours[:2]) == list(theirs[:2]) == [b"5", b"4"]
    for a, b in zip(ours[2:], theirs[2:]):
        np.testing.assert_array_equal(decode_png(a), decode_png(b))


def test_audio_is_tensorflows_wav(written):
    ours = _tensors(event_files(written[0])[0])["sound"][0]
    theirs = _tensors(event_files(os.path.join(FIXTURES, "tf2"))[0])["sound"][0]
    assert ours[1].tolist() == theirs[1].tolist()  # byte-identical WAV, empty label
    assert ours[2].metadata == theirs[2].metadata
    with wave.open(io.BytesIO(ours[1][0, 0])) as w:
        assert (w.getframerate(), w.getnchannels(), w.getnframes()) == (8000, 1, 160)


def test_tensorboards_accumulator_reads_everything(written):
    acc = accumulate(written[0])
    tags = acc.Tags()
    assert set(tags["tensors"]) == {"loss", "weights", "images", "notes", "sound", "outer/inner",
                                    "in_function"}
    assert tags["graph"]
    [loss] = acc.Tensors("loss")
    assert (loss.step, float(tensor_util.make_ndarray(loss.tensor_proto))) == (3, 0.25)
    assert acc.SummaryMetadata("loss").summary_description == "the loss"
    assert acc.SummaryMetadata("weights").plugin_data.plugin_name == "histograms"
    graph = acc.Graph()
    assert {n.op for n in graph.node} >= {"Mul", "AddV2"}


def test_histogram_buckets_against_numpy():
    data = np.random.RandomState(0).randn(1000)
    b = encoders.histogram_buckets(data, 7)
    assert b.shape == (7, 3) and b[:, 2].sum() == 1000
    edges = np.linspace(data.min(), data.max(), 8)
    np.testing.assert_allclose(b[:, 0], edges[:-1])
    np.testing.assert_array_equal(b[:, 2], np.histogram(data, edges)[0])
    np.testing.assert_array_equal(encoders.histogram_buckets([], None), np.zeros((30, 3)))
    same = encoders.histogram_buckets([2.0, 2.0, 2.0], 3)
    np.testing.assert_array_equal(same, [[2, 2, 0], [2, 2, 0], [2, 2, 3]])


def test_variable_step_is_read_when_the_function_runs(tmp_path):
    step = tf.Variable(0, dtype=tf.int64)
    writer = tf.summary.create_file_writer(str(tmp_path))

    @tf.function
    def train(x):
        with writer.as_default(step=step):
            tf.summary.scalar("x", x)
            tf.summary.histogram("h", tf.fill([4], x))
        step.assign_add(1)

    for i in range(3):
        train(tf.constant(float(i)))
    writer.close()
    found = _tensors(event_files(str(tmp_path))[0])
    assert [(s, float(a)) for s, a, _ in found["x"]] == [(0, 0.0), (1, 1.0), (2, 2.0)]
    assert [s for s, _, _ in found["h"]] == [0, 1, 2]


def test_record_if_and_no_writer(tmp_path):
    assert not bool(tf.summary.scalar("a", 1.0, step=1))  # no default writer: False
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=1):
        assert bool(tf.summary.should_record_summaries())
        with tf.summary.record_if(False):
            assert not bool(tf.summary.scalar("off", 1.0))
            assert not bool(tf.summary.should_record_summaries())
        with tf.summary.record_if(lambda: True):
            assert bool(tf.summary.scalar("on", 1.0))

        @tf.function
        def f(flag):
            with tf.summary.record_if(flag):
                return tf.summary.scalar("cond", 5.0)
        assert bool(f(tf.constant(True))) and not bool(f(tf.constant(False)))
    with tf.summary.create_noop_writer().as_default(step=1):
        assert not bool(tf.summary.scalar("noop", 1.0))
    writer.close()
    tags = [v.tag for e in raw_events(event_files(str(tmp_path))[0]) for v in e.summary.value]
    assert tags == ["on", "cond"]


def test_errors_as_tensorflow(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tf.summary.scalar("a", 1.0)
        with pytest.raises(ValueError, match=r"Expected scalar shape, saw shape: \(2,\)"):
            tf.summary.scalar("a", [1.0, 2.0], step=1)
        with pytest.raises(ValueError, match="must have rank 4"):
            tf.summary.image("a", [1.0, 2.0], step=1)
        with pytest.raises(ValueError, match="not tf.Graph"):
            tf.summary.graph("nope")
    writer.close()
    with pytest.raises(RuntimeError, match="already closed"):
        writer.as_default()
    writer.close()  # twice is fine


def test_bad_log_directories(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(errors.FailedPreconditionError, match="is not a directory"):
        tf.summary.create_file_writer(str(a_file))
    with pytest.raises(errors.FailedPreconditionError, match=re.escape(str(a_file))):
        tf.summary.create_file_writer(str(a_file / "sub"))
    with pytest.raises(errors.NotFoundError):
        tf.summary.create_file_writer("/proc/no_such_dir/logs")
    with pytest.raises(ValueError):
        tf.summary.create_file_writer(None)
    assert a_file.read_text() == "x"  # nothing clobbered


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_log_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    with pytest.raises(errors.PermissionDeniedError):
        tf.summary.create_file_writer(str(ro))


def test_writers_left_open_are_closed_at_exit(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path), flush_millis=10 ** 7)
    with writer.as_default(step=1):
        for i in range(50):
            tf.summary.scalar("s", float(i))
    event_file._close_all()  # what the atexit handler runs
    values = [v for e in raw_events(event_files(str(tmp_path))[0]) for v in e.summary.value]
    assert len(values) == 50
    assert writer._file.closed


def test_trace_export_writes_pre_and_post_optimization_graphs(tmp_path):
    @tf.function
    def f(x):
        return tf.nn.relu(tf.matmul(x, x)) + 1.0

    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        tf.summary.trace_on(graph=True)
        f(tf.ones([2, 2]))
        tf.summary.trace_export("my_func", step=0)
    writer.close()
    acc = accumulate(str(tmp_path))
    [event] = acc.Tensors("my_func")
    assert acc.SummaryMetadata("my_func").plugin_data.plugin_name == "graph_run_metadata_graph"

    meta = config_pb2.RunMetadata.FromString(tensor_util.make_ndarray(event.tensor_proto).item())
    [fg] = meta.function_graphs
    assert "MatMul" in {n.op for n in fg.pre_optimization_graph.node}
    assert {n.op for n in fg.post_optimization_graph.node}  # the optimized graph, not empty
    with pytest.raises(ValueError, match="Must enable trace"):
        tf.summary.trace_export("again", step=1)


def test_write_with_metadata_bytes(tmp_path):
    md = summary_pb2.SummaryMetadata()
    md.plugin_data.plugin_name = "custom"
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        assert bool(tf.summary.write("raw", tf.constant([1, 2, 3]), step=5,
                                     metadata=md.SerializeToString()))
    writer.close()
    [(step, arr, value)] = _tensors(event_files(str(tmp_path))[0])["raw"]
    assert step == 5 and arr.tolist() == [1, 2, 3] and arr.dtype == np.int32
    assert value.metadata.plugin_data.plugin_name == "custom"


def test_summary_scope_and_write_raw_pb(tmp_path):
    with tf.name_scope("outer"):
        with tf.summary.experimental.summary_scope("my sum", "default") as (tag, scope):
            assert tag == "outer/my sum"  # the tag keeps the name; the scope drops spaces
            assert scope == "outer/mysum/"
    raw = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="legacy", simple_value=7.0)])
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=2):
        assert bool(tf.summary.experimental.write_raw_pb(raw.SerializeToString()))
    writer.close()
    acc = accumulate(str(tmp_path))
    assert [(s.step, s.value) for s in acc.Scalars("legacy")] == [(2, 7.0)]


def test_dropped_writer_is_flushed_and_closed(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path), flush_millis=10 ** 7)
    with writer.as_default(step=1):
        tf.summary.scalar("s", 1.0)
    events = writer._file
    del writer  # the last reference, as TF's writer resource is deleted
    assert events.closed
    assert len(raw_events(event_files(str(tmp_path))[0])) == 2


@pytest.mark.slow
def test_program_exit_closes_open_writers(tmp_path):
    """A real process that never closes its writer: the atexit handler completes the file."""
    import subprocess
    import sys
    program = (
        "import ndflow as tf, numpy as np\n"
        f"w = tf.summary.create_file_writer({str(tmp_path)!r}, flush_millis=10**8, "
        "max_queue=1000)\n"
        "with w.as_default(step=0):\n"
        "    for i in range(200):\n"
        "        tf.summary.histogram('h', np.arange(100.0) * i, step=i)\n"
        "keep = w\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert len(accumulate(str(tmp_path)).Tensors("h")) == 200


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_full_disk_is_resource_exhausted(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    writer._file._records._file = open("/dev/full", "wb", buffering=0)  # noqa: SIM115
    with pytest.raises(errors.ResourceExhaustedError, match="No space left on device"):
        with writer.as_default(step=1):
            tf.summary.scalar("a", 1.0)
    with pytest.raises(errors.ResourceExhaustedError):
        writer.close()
    assert tf.summary.experimental.get_step() is None  # the default step was restored
    event_file._close_all()  # nothing left to fail at exit


def test_summary_iterator_reads_tensorflows_files_and_checks_crcs(tmp_path):
    [path] = event_files(os.path.join(FIXTURES, "tf2"))
    ours = list(tf.compat.v1.train.summary_iterator(path))
    assert ours == raw_events(path)  # the same Events TensorBoard's loader reads
    data = open(path, "rb").read()
    corrupt = tmp_path / "corrupt"
    corrupt.write_bytes(data[:200] + bytes([data[200] ^ 1]) + data[201:])
    with pytest.raises(errors.DataLossError, match="corrupted record at"):
        list(tf.compat.v1.train.summary_iterator(str(corrupt)))
    truncated = tmp_path / "truncated"
    truncated.write_bytes(data[:-7])
    with pytest.raises(errors.DataLossError, match="truncated record"):
        list(tf.compat.v1.train.summary_iterator(str(truncated)))
    with pytest.raises(errors.NotFoundError):
        list(tf.compat.v1.train.summary_iterator(str(tmp_path / "missing")))


def test_flush_inside_a_function_flushes_when_it_runs(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path), flush_millis=10 ** 8)

    @tf.function
    def f(x):
        with writer.as_default(step=1):
            tf.summary.scalar("x", x)
        tf.summary.flush(writer)
        return x

    for i in range(2):
        f(tf.constant(float(i)))
        assert len(raw_events(writer.path)) == 2 + i  # on disk without closing
    writer.close()


def test_events_reach_the_file_when_the_queue_overflows(tmp_path):
    """TF's policy: up to max_queue events wait; one more writes them all (flushed)."""
    writer = tf.summary.create_file_writer(str(tmp_path), max_queue=3, flush_millis=10 ** 8)
    with writer.as_default(step=1):
        for i in range(3):
            tf.summary.scalar("s", float(i))
        assert len(raw_events(writer.path)) == 1  # the file_version record only
        tf.summary.scalar("s", 3.0)
        deadline = time.time() + 10
        while len(raw_events(writer.path)) < 5 and time.time() < deadline:
            time.sleep(0.01)  # written by the writer thread
        assert len(raw_events(writer.path)) == 5
    writer.close()


def test_function_using_a_closed_writer_fails_when_it_runs(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))

    @tf.function
    def f(x):
        with writer.as_default(step=1):
            return tf.summary.scalar("x", x)

    assert bool(f(tf.constant(1.0)))
    writer.close()
    with pytest.raises(errors.NotFoundError, match="was closed"):  # TF: NotFoundError too
        f(tf.constant(2.0))
    with pytest.raises(errors.NotFoundError, match="was closed"):  # traced after close()
        f(3.0)

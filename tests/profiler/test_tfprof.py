"""`tf.compat.v1.profiler` (tfprof): FLOP and parameter counts, the scope/graph/op/code
views, their text reports and protos, compared with TF 2.21's (tests/fixtures/tfprof);
the option builder, write_op_log, Profiler and advise."""

from __future__ import annotations

import inspect
import json
import os

import pytest

import ndflow as tf
from ndflow.core import errors
from ndflow.core.protos import tfprof_pb
from tests import fixture_modules

GRAPHS = fixture_modules.load("tfprof", "graphs")
with open(os.path.join(fixture_modules.FIXTURES, "tfprof", "reports.json")) as _f:
    FIXTURE = json.load(_f)
P = tf.compat.v1.profiler

# Where ndflow's graph differs from TensorFlow's in ops no statistic counts, so a view that
# shows them (or counts them in total_definition_count) differs while every count agrees:
# ndflow's tf.function graph has no NoOp for its control outputs, its depthwise_conv2d makes
# no Shape/dilation_rate constants (TF's with_space_to_batch), and its default grad_ys reads
# the loss through a Shape op.
REPORT_DIFFERS = {"cnn_grads_v1/flops_graph"}
PROTO_DIFFERS = REPORT_DIFFERS | {"function_graph/all_params_scope", "cnn_v1/all_params_scope",
                                  "cnn_grads_v1/all_params_scope"}

CASES = [(g, o, c, opts) for g in GRAPHS.GRAPHS for o, c, opts in GRAPHS.option_sets(tf)]


@pytest.fixture(scope="module")
def graphs():
    return {name: build(tf) for name, build in GRAPHS.GRAPHS.items()}


@pytest.mark.parametrize("gname,oname,cmd,opts", CASES,
                         ids=[f"{g}/{o}" for g, o, _, _ in CASES])
def test_report_and_proto_match_tensorflow(graphs, tmp_path, gname, oname, cmd, opts):
    key = f"{gname}/{oname}"
    want = FIXTURE["reports"][key]
    path = tmp_path / "report.txt"
    res = P.profile(graphs[gname], run_meta=tf.compat.v1.RunMetadata(), cmd=cmd,
                    options=dict(opts, output=f"file:outfile={path}"))
    expected_type = P.MultiGraphNodeProto if cmd == "op" else P.GraphNodeProto
    assert type(res) is expected_type
    assert res.total_float_ops == want["total_float_ops"]
    assert res.total_parameters == want["total_parameters"]
    if key not in REPORT_DIFFERS:
        assert path.read_text() == want["report"]
    if key not in PROTO_DIFFERS:
        assert res == expected_type.FromString(bytes.fromhex(want["proto"]))


def test_flops_of_the_task_example():
    # the usual FLOP count of a Keras model's traced graph
    model = tf.keras.Sequential([
        tf.keras.Input((8, 8, 1)), tf.keras.layers.Conv2D(4, 3),
        tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)])
    g = tf.function(model).get_concrete_function(tf.TensorSpec([1, 8, 8, 1])).graph
    opts = (P.ProfileOptionBuilder(P.ProfileOptionBuilder.float_operation())
            .with_empty_output().build())
    flops = P.profile(graph=g, run_meta=tf.compat.v1.RunMetadata(), cmd="op", options=opts)
    conv = 6 * 6 * 4 * 9 * 2  # output elements * (kh*kw*cin) * 2
    dense = 144 * 3 * 2
    biases = 6 * 6 * 4 + 3
    assert flops.total_float_ops == conv + dense + biases


def test_stdout_report(capsys):
    g = GRAPHS.mlp_v1(tf)
    P.profile(g, cmd="op", options=P.ProfileOptionBuilder.float_operation())
    assert capsys.readouterr().out == FIXTURE["stdout_mlp_op"]


def test_none_output_prints_nothing(capsys):
    g = GRAPHS.mlp_v1(tf)
    opts = P.ProfileOptionBuilder(P.ProfileOptionBuilder.float_operation()).with_empty_output()
    res = P.profile(g, cmd="scope", options=opts.build())
    assert res.total_float_ops == 1955
    assert capsys.readouterr().out == ""


def test_ops_with_unknown_shapes_have_no_flops(capsys):
    g = GRAPHS.partial_shapes_v1(tf)
    opts = dict(P.ProfileOptionBuilder.float_operation(), output="none")
    res = P.profile(g, cmd="op", options=opts)
    # the [3, 8] x [8, 4] product, its Sum (12 in, 1 out: 12 - 1) and the scalar AddV2; the
    # [None, 8] batch's MatMul and Sum count 0
    assert res.total_float_ops == 3 * 4 * 8 * 2 + 11 + 1 == 204
    assert capsys.readouterr().err == "2 ops no flops stats due to incomplete shapes.\n"


def test_default_options_count_trainable_parameters(capsys):
    g = GRAPHS.mlp_v1(tf)
    with g.as_default():
        res = P.profile()  # default graph, scope view, trainable_variables_parameter
    assert res.total_parameters == 8 * 16 + 16 + 16 * 3
    assert "_TFProfRoot (--/192 params)" in capsys.readouterr().out


def test_option_builder_dicts_match_tensorflow():
    got = GRAPHS.builder_dicts(tf)
    assert json.loads(json.dumps(got)) == FIXTURE["builder"]
    # build() returns a copy
    b = P.ProfileOptionBuilder()
    b.build()["select"].append("params")
    assert b.build()["select"] == ["micros"]


def test_write_op_log(tmp_path):
    g = GRAPHS.mlp_v1(tf)
    P.write_op_log(g, str(tmp_path), add_trace=False)
    log = P.OpLogProto.FromString((tmp_path / "tfprof_log").read_bytes())
    got = {e.name: [e.float_ops, list(e.types)] for e in log.log_entries}
    assert got == FIXTURE["op_log"]
    assert dict(log.id_to_string) == {0: "none"}


def test_write_op_log_merges_the_callers_log_and_traces(tmp_path):
    g = GRAPHS.mlp_v1(tf)
    mine = P.OpLogProto()
    mine.log_entries.add(name="dense/MatMul", types=["my_type"])
    P.write_op_log(g, str(tmp_path), op_log=mine)
    log = P.OpLogProto.FromString((tmp_path / "tfprof_log").read_bytes())
    entries = {e.name: e for e in log.log_entries}
    assert list(entries["dense/MatMul"].types) == ["my_type"]
    assert entries["dense/MatMul"].float_ops == 1024
    trace = entries["dense/MatMul"].code_def.traces
    assert any(log.id_to_string[t.file_id].endswith("graphs.py") for t in trace)
    # a caller's types can be accounted: only dense/MatMul is of my_type
    opts = (P.ProfileOptionBuilder(P.ProfileOptionBuilder.float_operation())
            .with_accounted_types(["my_type"]).with_empty_output().build())
    assert P.profile(g, op_log=mine, cmd="op", options=opts).total_float_ops == 1024


def test_code_view():
    g = GRAPHS.mlp_v1(tf)
    opts = (P.ProfileOptionBuilder(P.ProfileOptionBuilder.float_operation())
            .with_empty_output().build())
    res = P.profile(g, cmd="code", options=opts)
    assert isinstance(res, P.MultiGraphNodeProto)
    assert res.name == "_TFProfRoot" and res.total_float_ops == 1955
    assert sum(c.total_float_ops for c in res.children) == 1955
    # the tree follows the call stacks down to the graph builder's lines
    lines, first = inspect.getsourcelines(GRAPHS.mlp_v1)
    matmul = first + next(i for i, t in enumerate(lines) if "tf.matmul(h, w2)" in t)
    found = {}

    def walk(node):
        found[node.name] = node
        for c in node.children:
            walk(c)
    walk(res)
    node = found[f"graphs.py:{matmul}:mlp_v1"]
    # out/MatMul (384), out/add (12) and out/Softmax (60) are made on that line
    assert node.total_float_ops == 384 + 12 + 60


def test_profiler_class(capsys):
    g = GRAPHS.mlp_v1(tf)
    profiler = P.Profiler(g)
    run_meta = tf.compat.v1.RunMetadata()
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(g.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)[0].initializer,
                 options=tf.compat.v1.RunOptions(
                     trace_level=tf.compat.v1.RunOptions.FULL_TRACE),
                 run_metadata=run_meta)
    profiler.add_step(0, run_meta)
    quiet = P.ProfileOptionBuilder.trainable_variables_parameter()
    quiet["output"] = "none"
    assert profiler.profile_name_scope(quiet).total_parameters == 192
    assert profiler.profile_graph(quiet).total_parameters == 192
    flops = dict(P.ProfileOptionBuilder.float_operation(), output="none")
    assert profiler.profile_operations(flops).total_float_ops == 1955
    assert profiler.profile_python(flops).total_float_ops == 1955
    assert profiler.profile_operations(dict(flops, step=0)).total_float_ops == 1955
    missing = profiler.profile_operations(dict(flops, step=7))
    assert missing == P.MultiGraphNodeProto()
    assert "Options -step=7 not found.\nAvailable steps: 0 \n" in capsys.readouterr().err
    profile = tfprof_pb.ProfileProto.FromString(profiler.serialize_to_string())
    assert len(profile.nodes) == len(g.get_operations())
    assert list(profile.steps) == [0] and profile.has_trace
    node = next(n for n in profile.nodes.values() if n.name == "dense/MatMul")
    assert node.op == "MatMul" and node.float_ops == 1024
    assert profile.nodes[node.inputs[0]].name == "x"
    advice = profiler.advise(None)  # all the default checkers
    assert sorted(advice.checkers) == ["AcceleratorUtilizationChecker",
                                       "ExpensiveOperationChecker", "OperationChecker"]


def test_advise(capsys):
    g = GRAPHS.mlp_v1(tf)
    advice = P.advise(g)
    assert isinstance(advice, P.AdviceProto)
    assert sorted(advice.checkers) == ["AcceleratorUtilizationChecker",
                                       "ExpensiveOperationChecker", "OperationChecker"]
    assert all(not c.reports for c in advice.checkers.values())
    assert capsys.readouterr().out == ("\nOperationChecker:\n\nExpensiveOperationChecker:\n"
                                       "\nAcceleratorUtilizationChecker:\n")
    only = P.advise(g, options={"OperationChecker": {}})
    assert list(only.checkers) == ["OperationChecker"]


def test_bad_input():
    g = GRAPHS.mlp_v1(tf)
    with pytest.raises(errors.InvalidArgumentError, match="unknown cmd: foo"):
        P.profile(g, cmd="foo")
    opts = dict(P.ProfileOptionBuilder.float_operation(), output="paper")
    with pytest.raises(errors.InvalidArgumentError,
                       match="Unknown output type: paper, Valid types: "
                             "file,none,pprof,stdout,timeline"):
        P.profile(g, options=opts)
    opts = dict(P.ProfileOptionBuilder.float_operation(), output="file")
    with pytest.raises(errors.InvalidArgumentError,
                       match="Missing required output_options for file"):
        P.profile(g, options=opts)
    with pytest.raises(TypeError, match="options must be a dict"):
        P.profile(g, options=["max_depth"])


def test_namespace():
    names = {"Profiler", "ProfileOptionBuilder", "profile", "advise", "write_op_log",
             "AdviceProto", "GraphNodeProto", "MultiGraphNodeProto", "OpLogProto"}
    assert names <= set(dir(tf.compat.v1.profiler))
    assert P.GraphNodeProto.DESCRIPTOR.full_name == "tensorflow.tfprof.GraphNodeProto"

"""Auto-clustering (ndflow/passes/mark_for_compilation.py): TensorFlow's acceptance cases from
mark_for_compilation_pass_test.cc (xla.md section 5) and the pass's own rules.

Harness as TF's: level ON_2, `--tf_xla_cpu_global_jit`, `--tf_xla_min_cluster_size=2`,
unplaced nodes on CPU:0. Graphs are built node by node (`_node`) so each case is exactly TF's;
ops ndflow lacks are registered here as stand-ins with no kernel (`U`, v1 loop ops, Stage).
"""

from __future__ import annotations

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape
from ndflow.jit import fusible_ops
from ndflow.jit.flags import parse_flags
from ndflow.ops.op_def import is_registered, lookup, op_def
from ndflow.passes import mark_for_compilation as mfc
from ndflow.passes.cycle_graph import CycleGraph
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext

F32 = dtypes.float32


def _standin(name: str, inputs: list, outputs: list, attrs=()):
    if is_registered(name):
        return lookup(name)
    return op_def(name, inputs=inputs, outputs=outputs, attrs=list(attrs))


U = _standin("U", ["x: N * float"], ["y: float"], ["N: int"])  # no XLA (or any) kernel
for _loop_op in ("Enter", "NextIteration", "Exit"):
    _standin(_loop_op, ["data: T"], ["output: T"], ["T: type", "frame_name: string = ''"])
_standin("Stage", ["values: float"], [])
_standin("Unstage", [], ["values: float"])
_standin("StringSplit", ["input: string"], ["values: string"])


def _node(g: Graph, op_type: str, inputs=(), name=None, device="", dtype=F32, attrs=None,
          shape=(2, 2), outputs=1, controls=()):
    name = name or g.unique_name(op_type)
    specs = [(dtype, TensorShape(shape))] * outputs
    op = g.create_op(lookup(op_type), list(inputs), dict(attrs or {}), specs, name,
                     list(controls), device)
    return op.outputs[0] if outputs else op


def _const(g, name="c", value=None, device="", dtype=F32, **attrs):
    value = np.ones((2, 2), np.float32) if value is None else value
    return _node(g, "Const", name=name, device=device, dtype=dtype,
                 attrs={"value": value, "dtype": dtype, **attrs}, shape=np.shape(value))


def _placeholder(g, name="x", device=""):
    return _node(g, "Placeholder", name=name, device=device,
                 attrs={"dtype": F32, "shape": TensorShape((2, 2))})


HARNESS = "--tf_xla_cpu_global_jit --tf_xla_min_cluster_size=2"


def _clusters(g: Graph, level: int = 2, flags: str = HARNESS, fetches=(), feeds=(),
              targets=()) -> dict:
    """op name -> cluster name for the ops the pass marks."""
    ctx = PassContext(fetches=list(fetches), feeds=list(feeds), targets=list(targets),
                      config=PassConfig(global_jit_level=level))
    marked = mfc.find_clusters(g, ctx, parse_flags(flags))
    return {op.name: c.name for c in marked for op in c.ops}


def _groups(assignment: dict) -> list:
    by = {}
    for op, c in assignment.items():
        by.setdefault(c, set()).add(op)
    return sorted((frozenset(v) for v in by.values()), key=sorted)


# -- 1-4: chains, cycles, strings, loops ------------------------------------------------------

def test_chains():
    g = Graph()
    a = _node(g, "U", [], "A", attrs={"N": 0})
    b = _node(g, "Relu", [a], "B")
    c = _node(g, "Relu", [b], "C")
    d = _node(g, "U", [c], "D", attrs={"N": 1})
    e = _node(g, "Relu", [d], "E")
    _node(g, "Relu", [e], "F")
    got = _clusters(g)
    assert _groups(got) == [{"B", "C"}, {"E", "F"}]
    assert got["B"] != got["E"] and "A" not in got and "D" not in got


def test_uncompilable_cycles_and_compilable_cycles():
    g = Graph()
    a = _const(g, "A")
    b = _node(g, "U", [a], "B", attrs={"N": 1})
    _node(g, "MatMul", [a, b], "C")
    assert _clusters(g) == {}
    g = Graph()
    a = _const(g, "A")
    b = _node(g, "Relu", [a], "B")
    _node(g, "MatMul", [a, b], "C")
    assert _groups(_clusters(g)) == [{"A", "B", "C"}]


def test_string_ops_are_unsupported():
    g = Graph()
    s = _const(g, "A", np.array([b"a"], object), dtype=dtypes.string)
    b = _node(g, "EncodeBase64", [s], "B", dtype=dtypes.string, shape=(1,))
    _node(g, "StringSplit", [b], "C", dtype=dtypes.string, shape=(None,))
    assert _clusters(g) == {}


def test_v1_loops_are_not_clustered_across_their_frame():
    g = Graph()
    a, b = _const(g, "A"), _const(g, "B")
    c = _node(g, "Add", [a, b], "C")
    enter = _node(g, "Enter", [c], "enter", attrs={"frame_name": "frame"})
    nxt = _node(g, "NextIteration", [enter], "next")
    exit_ = _node(g, "Exit", [nxt], "exit")
    _node(g, "Add", [c, exit_], "D")
    assert _clusters(g) == {}


# -- 5: scopes ------------------------------------------------------------------------------

def _scoped_graph(scopes, compile_attr=None, with_d=False):
    g = Graph()
    attrs = [{"_XlaScope": s} for s in scopes]
    for i, on in enumerate(compile_attr or []):
        if on:
            attrs[i]["_XlaCompile"] = True
    a = _const(g, "A", **attrs[0])
    b = _node(g, "Relu", [a], "B", attrs=attrs[1])
    c = _node(g, "MatMul", [a, b], "C", attrs=attrs[2])
    if with_d:
        _node(g, "Add", [b, c], "D", attrs=attrs[3])
    return g


def test_scopes_are_ignored_with_the_jit_on():
    g = _scoped_graph(["ScopeA", "ScopeB", "ScopeC"])
    assert _groups(_clusters(g)) == [{"A", "B", "C"}]


def test_jit_off_clusters_nothing_without_xla_compile():
    assert _clusters(_scoped_graph(["ScopeA", "ScopeB", "ScopeC"]), level=-1) == {}


def test_jit_off_scopes_split_xla_compile_clusters():
    g = _scoped_graph(["Scope1", "Scope1", "Scope2", "Scope2"], [1, 1, 1, 1], with_d=True)
    assert _groups(_clusters(g, level=-1)) == [{"A", "B"}, {"C", "D"}]


def test_jit_off_marked_ops_in_different_scopes_are_singletons():
    g = _scoped_graph(["ScopeA", "ScopeB", "ScopeC"], [1, 1, 0])
    got = _clusters(g, level=-1)
    assert _groups(got) == [{"A"}, {"B"}] and "C" not in got


def test_cluster_scoping_keeps_pipeline_stages_apart():
    g = Graph()
    x = _placeholder(g)
    a = _node(g, "Relu", [x], "a")
    b = _node(g, "Relu", [a], "b")
    _node(g, "Stage", [b], "stage", outputs=0)
    u = _node(g, "Unstage", [], "unstage", controls=[])
    c = _node(g, "Relu", [u], "c")
    d = _node(g, "Relu", [c], "d")
    _node(g, "Add", [b, d], "e")
    got = _clusters(g)
    # b feeds both the Stage (scope _0) and e (scope _1 via Unstage's successors): apart.
    assert got["a"] == got["b"] and got["c"] == got["d"] and got["a"] != got["c"]


# -- 6: size counting -----------------------------------------------------------------------

def test_identity_and_const_count_zero():
    g = Graph()
    x = _placeholder(g)
    i = _node(g, "Identity", [x], "i1")
    _node(g, "Identity", [i], "i2")
    assert _clusters(g, fetches=["i2:0"]) == {}
    g = Graph()
    _node(g, "Relu", [_const(g)], "r")
    assert _clusters(g, fetches=["r:0"]) == {}


def test_a_lone_marked_const_is_a_cluster_unless_it_is_a_string():
    g = Graph()
    _const(g, "c", _XlaCompile=True)
    assert _groups(_clusters(g)) == [{"c"}]
    g = Graph()
    _const(g, "s", np.array([b"a"], object), dtype=dtypes.string, _XlaCompile=True)
    assert _clusters(g) == {}


def test_min_and_max_cluster_size():
    g = Graph()
    t = _placeholder(g)
    for i in range(5):
        t = _node(g, "Relu", [t], f"r{i}")
    assert len(_clusters(g, flags="--tf_xla_min_cluster_size=6")) == 0
    assert len(_clusters(g, flags="--tf_xla_min_cluster_size=5")) == 5
    got = _clusters(g, flags="--tf_xla_min_cluster_size=1 --tf_xla_max_cluster_size=2")
    assert sorted(map(len, _groups(got))) == [1, 2, 2]


# -- 7-8: devices -------------------------------------------------------------------------------

def test_gpu_and_cpu_ops_share_a_cluster():
    g = Graph()
    x = _placeholder(g)
    a = _node(g, "Add", [x, x], "a", device="/device:GPU:0")
    m = _node(g, "MatMul", [a, a], "m", device="/device:CPU:0")
    _node(g, "Add", [m, m], "b", device="/device:GPU:0")
    assert _groups(_clusters(g)) == [{"a", "m", "b"}]


@pytest.mark.parametrize("first, second", [("/device:GPU:0", "/device:GPU:1"),
                                           ("/device:CPU:0", "/device:XLA_GPU:0")])
def test_incompatible_devices_do_not_merge(first, second):
    g = Graph()
    x = _placeholder(g)
    a = _node(g, "Add", [x, x], "a", device=first)
    _node(g, "Add", [a, a], "b", device=second)
    assert _clusters(g) == {}


def test_shape_consumers_join_their_producer_first():
    g = Graph()
    x = _placeholder(g)
    m = _node(g, "MatMul", [x, x], "x", device="/device:GPU:0")
    y = _node(g, "Size", [m], "y", device="/device:CPU:0", dtype=dtypes.int32, shape=())
    _node(g, "Add", [y, y], "z", device="/device:GPU:1", dtype=dtypes.int32, shape=())
    assert _groups(_clusters(g)) == [{"x", "y"}]
    g = Graph()
    x = _placeholder(g)
    m = _node(g, "MatMul", [x, x], "x")
    y = _node(g, "Size", [m], "y", dtype=dtypes.int32, shape=())
    _node(g, "Add", [y, y], "z", dtype=dtypes.int32, shape=())
    assert _groups(_clusters(g)) == [{"x", "y", "z"}]


# -- 9-10: RNG, assertions, variants, variables -------------------------------------------------

@pytest.mark.parametrize("device, clustered", [("", False), ("/device:XLA_CPU:0", True)])
def test_stateful_rng_only_on_xla_devices(device, clustered):
    g = Graph()
    shape = _const(g, "shape", np.array([2, 2], np.int32), device=device, dtype=dtypes.int32)
    r = _node(g, "RandomUniform", [shape], "rng", device=device)
    _node(g, "Relu", [r], "relu", device=device)
    assert ("rng" in _clusters(g)) == clustered


def test_assert_check_numerics_and_variants_are_not_clustered():
    g = Graph()
    x = _placeholder(g)
    a = _node(g, "Relu", [x], "a")
    chk = _node(g, "CheckNumerics", [a], "check", attrs={"message": "m"})
    b = _node(g, "Relu", [chk], "b")
    cond = _node(g, "Less", [b, b], "cond", dtype=dtypes.bool)
    _node(g, "Assert", [cond, b], "assert", outputs=0)
    n = _const(g, "n", np.array(3, np.int32), dtype=dtypes.int32)
    _node(g, "TensorListReserve", [n, n], "list", dtype=dtypes.variant, shape=())
    got = _clusters(g, flags="--tf_xla_min_cluster_size=1")
    assert not {"check", "assert", "list"} & set(got)


def test_rng_feeding_a_reshape_shape_is_not_clustered():
    g = Graph()
    x = _placeholder(g)
    shape = _const(g, "s", np.array([2], np.int32), dtype=dtypes.int32)
    lo = _const(g, "lo", np.array(1, np.int32), dtype=dtypes.int32)
    r = _node(g, "RandomUniformInt", [shape, lo, lo], "rng", dtype=dtypes.int32, shape=(2,))
    _node(g, "Reshape", [_node(g, "Relu", [x], "relu"), r], "reshape")
    assert "rng" not in _clusters(g, flags="--tf_xla_min_cluster_size=1")


def test_variable_handles_stay_out_of_clusters():
    # TF's RefIdentity case with resource variables: the handle is not compiled; the read
    # (an XLA kernel in TF, a library call here) is, with its consumers.
    g = Graph()
    h = _node(g, "VarHandleOp", [], "v", dtype=dtypes.resource, shape=(),
              attrs={"dtype": F32, "shape": TensorShape((2, 2)), "shared_name": "v"})
    r = _node(g, "ReadVariableOp", [h], "read", attrs={"dtype": F32})
    neg = _node(g, "Neg", [r], "negate")
    _node(g, "Add", [neg, neg], "add")
    assert _groups(_clusters(g)) == [{"read", "negate", "add"}]


def test_variable_write_then_read_never_share_a_cluster(monkeypatch):
    monkeypatch.setattr(fusible_ops, "COMPILABLE_OPS", fusible_ops.COMPILABLE_OPS
                        | {"AssignVariableOp", "ReadVariableOp"})
    g = Graph()
    h = _node(g, "VarHandleOp", [], "v", dtype=dtypes.resource, shape=(),
              attrs={"dtype": F32, "shape": TensorShape((2, 2)), "shared_name": "v"})
    c = _const(g, "c")
    w = _node(g, "AssignVariableOp", [h, c], "write", outputs=0, attrs={"dtype": F32})
    r = _node(g, "ReadVariableOp", [h], "read", attrs={"dtype": F32}, controls=[w])
    _node(g, "Relu", [r], "relu")
    got = _clusters(g, flags="--tf_xla_min_cluster_size=1")
    assert got["write"] != got["read"] and got["read"] == got["relu"]
    unsafe = "--tf_xla_min_cluster_size=1 " \
             "--tf_xla_disable_resource_variable_safety_checks_for_debugging"
    got = _clusters(g, flags=unsafe)
    assert got["write"] == got["read"]


# -- flags, vetoes and the graph's interface ----------------------------------------------------

def _relu_chain(g, n=4, **attrs):
    t = _placeholder(g)
    for i in range(n):
        t = _node(g, "Relu", [t], f"r{i}", attrs=attrs if i == 1 else None)
    return t


def test_compile_ops_false_vetoes_and_feeds_targets_stay_out():
    g = Graph()
    _relu_chain(g, _XlaCompile=False)
    got = _clusters(g, flags="--tf_xla_min_cluster_size=1")
    assert "r1" not in got and got["r2"] == got["r3"]
    got = _clusters(g, flags="--tf_xla_min_cluster_size=1", feeds=["r2:0"], targets=["r3"])
    assert set(got) == {"r0"}


def test_auto_jit_flag_overrides_the_session_level():
    g = Graph()
    _relu_chain(g)
    assert _clusters(g, level=-1, flags="--tf_xla_auto_jit=2")
    assert not _clusters(g, level=2, flags="--tf_xla_auto_jit=-1")
    assert _clusters(g, level=1, flags="--tf_xla_auto_jit=0")
    assert not _clusters(g, level=-1, flags="--tf_xla_auto_jit=single-gpu(2)")
    one_gpu = Graph()
    t = _placeholder(one_gpu)
    for i in range(4):
        t = _node(one_gpu, "Relu", [t], f"r{i}", device="/device:GPU:0")
    assert len(_clusters(one_gpu, level=-1, flags="--tf_xla_auto_jit=single-gpu(2)")) == 4
    _node(one_gpu, "Relu", [t], "other", device="/device:GPU:1")
    assert not _clusters(one_gpu, level=-1, flags="--tf_xla_auto_jit=single-gpu(2)")


def test_ops_to_cluster_and_exclude_ops():
    g = Graph()
    x = _placeholder(g)
    m = _node(g, "MatMul", [x, x], "mm")
    r = _node(g, "Relu", [m], "relu")
    e = _node(g, "Exp", [r], "exp")
    w = _node(g, "Where", [e], "where", dtype=dtypes.int64, shape=(None, 2))
    assert set(_clusters(g)) == {"mm", "relu", "exp", "where"}
    assert set(_clusters(g, flags=HARNESS + " --tf_xla_ops_to_cluster=FUSIBLE")) == {"relu", "exp"}
    assert set(_clusters(g, flags=HARNESS + " --tf_xla_auto_jit=fusible")) == {"relu", "exp"}
    assert set(_clusters(g, flags=HARNESS + " --tf_xla_ops_to_cluster=PW,MatMul")) == \
        {"mm", "relu", "exp"}
    assert "where" not in _clusters(g, flags=HARNESS + " --tf_xla_cluster_exclude_ops=Where")
    with pytest.raises(InvalidArgumentError, match="'Frobnicate' passed to "
                                                   "--tf_xla_ops_to_cluster"):
        _clusters(g, flags="--tf_xla_ops_to_cluster=PW,Frobnicate")
    with pytest.raises(InvalidArgumentError, match="The operation 'MatMul' passed to "
                                                   "--tf_xla_cluster_exclude_ops is not "
                                                   "supported by XLA."):
        _clusters(g, flags="--tf_xla_cluster_exclude_ops=MatMul")
    del w


def test_clustering_fuel_limits_candidates():
    g = Graph()
    _relu_chain(g, n=6)
    got = _clusters(g, flags="--tf_xla_min_cluster_size=1 --tf_xla_clustering_fuel=3")
    assert set(got) == {"r0", "r1", "r2"}


def test_cluster_names_follow_the_lowest_node_id_and_deterministic_names():
    g = Graph()
    a = _node(g, "U", [], "A", attrs={"N": 0})
    b = _node(g, "Relu", [a], "B")
    c = _node(g, "Relu", [b], "C")
    d = _node(g, "U", [c], "D", attrs={"N": 1})
    _node(g, "Relu", [_node(g, "Relu", [d], "E")], "F")
    got = _clusters(g)
    first, second = int(got["B"].split("_")[1]), int(got["E"].split("_")[1])
    assert second == first + 1
    det = _clusters(g, flags=HARNESS + " --tf_xla_deterministic_cluster_names")
    again = _clusters(g, flags=HARNESS + " --tf_xla_deterministic_cluster_names")
    fp = det["B"].split("_")[1]
    assert det["B"] == f"cluster_{fp}_0" and det["E"] == f"cluster_{fp}_1"
    assert again["B"] == f"cluster_{fp}_2"  # the per-graph sequence goes on


def test_already_clustered_graphs_are_left_alone():
    g = Graph()
    t = _placeholder(g)
    for i in range(4):
        t = _node(g, "Relu", [t], f"r{i}", attrs={"_XlaAlreadyClustered": True} if i else None)
    assert _clusters(g) == {}


def test_fill_feeding_only_other_clusters_is_declustered():
    g = Graph()
    dims = _const(g, "dims", np.array([2, 2], np.int32), dtype=dtypes.int32)
    v = _const(g, "v", np.array(1.0, np.float32))
    f = _node(g, "Fill", [dims, v], "fill")
    u = _node(g, "U", [f], "u", attrs={"N": 1})
    _node(g, "Relu", [_node(g, "Relu", [u], "r1")], "r2")
    got = _clusters(g, flags="--tf_xla_min_cluster_size=1")
    assert "fill" not in got and got["r1"] == got["r2"]


# -- the cycle graph ----------------------------------------------------------------------------

def test_cycle_graph_contraction_and_reordering():
    c = CycleGraph(4)
    assert c.insert_edge(0, 1) and c.insert_edge(1, 2) and c.insert_edge(0, 2)
    assert not c.insert_edge(2, 0)  # would close a cycle
    assert c.contract_edge(0, 2) is None  # 0 -> 1 -> 2 is another path
    assert c.contract_edge(0, 1) == 0 and c.has_edge(0, 2) and not c.alive[1]
    assert c.insert_edge(3, 0) and c.is_reachable(3, 2) and not c.is_reachable(2, 3)
    assert c.rank[3] < c.rank[0] < c.rank[2]  # re-ranked after the backward edge
    assert c.nodes_in_post_order() == [2, 0, 3]


# -- logs -----------------------------------------------------------------------------------------

def test_vlog_summary_histograms_and_contraction_reasons(monkeypatch, capfd):
    monkeypatch.setenv("TF_CPP_VMODULE", "mark_for_compilation_pass=3")
    g = Graph()
    x = _placeholder(g)
    a = _node(g, "Add", [x, x], "a", device="/device:GPU:0")
    b = _node(g, "Relu", [a], "b", device="/device:GPU:0")
    _node(g, "Add", [b, b], "c", device="/device:GPU:1")
    got = _clusters(g)
    err = capfd.readouterr().err
    name = got["a"]
    assert "*** Clustering info for graph of size 6\n" in err
    assert " Built 1 clusters, size 2 / 6 (33.33%)\n" in err
    assert f"  {name} 2 / 6 (33.33%)\n" in err
    assert "   AddV2: 1 instances\n" not in err and "   Add: 1 instances\n" in err
    assert " Unclustered nodes: 4 / 6 (66.67%)\n" in err
    assert "  Placeholder: 1 instances\n" in err
    assert "Could not contract <a + 1 others #1> -> <c #3> because the two nodes have " \
           "incompatible devices." in err
    assert f"Assigning node a to cluster {name}" in err
    monkeypatch.setenv("TF_CPP_VMODULE", "mark_for_compilation_pass=2")
    _clusters(g)
    err = capfd.readouterr().err
    assert "*** Clustering info" in err and "instances" not in err
    assert "Could not contract" not in err


def test_clustering_debug_dumps_the_annotated_graph(monkeypatch, tmp_path, capfd):
    g = Graph()
    _relu_chain(g)
    debug = HARNESS + " --tf_xla_clustering_debug"
    monkeypatch.delenv("TF_DUMP_GRAPH_PREFIX", raising=False)
    _clusters(g, flags=debug)
    assert "Failed to dump mark_for_compilation_annotated because dump location is not " \
           "specified" in capfd.readouterr().err
    monkeypatch.setenv("TF_DUMP_GRAPH_PREFIX", str(tmp_path))
    got = _clusters(g, flags=debug)
    (path,) = tmp_path.glob("mark_for_compilation_annotated_*.pbtxt")
    gd = text_format.Parse(path.read_text(), graph_pb2.GraphDef())
    marks = {n.name: n.attr["_XlaCluster"].s.decode() for n in gd.node if "_XlaCluster" in n.attr}
    assert marks == got and len(marks) == 4


def test_a_cycle_through_a_loop_frame_skips_the_graph():
    g = Graph()
    a = _const(g, "A")
    b = _node(g, "Relu", [a], "B")
    enter = _node(g, "Enter", [b], "enter", attrs={"frame_name": "f"})
    exit_ = _node(g, "Exit", [enter], "exit")
    c = _node(g, "Relu", [exit_], "C")
    _node(g, "Enter", [c], "enter2", attrs={"frame_name": "f"})  # frame -> C -> frame
    d = _node(g, "Relu", [b], "D")
    _node(g, "Relu", [d], "E")
    assert _clusters(g) == {}

"""The pass configuration: resolved once from TensorFlow's sources, honoured by every way of
running a graph (tf.function, Session with and without a ConfigProto, control-flow bodies)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import optimizer_options
from ndflow.passes import pipeline
from ndflow.passes.pass_config import PassConfig, resolve_pass_config
from ndflow.passes.pipeline import PassSpec
from ndflow.runtime.config_proto import ConfigProto, OptimizerOptions, RewriterConfig

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def _fresh_options():
    optimizer_options.reset()
    yield
    optimizer_options.reset()


@pytest.fixture
def spy(monkeypatch):
    """Records (graph_id, op types, config) of every graph leaving the pipeline."""
    seen = []

    def record(graph, ctx):
        seen.append((ctx.graph_id, {op.type for op in graph.get_operations()}, ctx.config))
        return graph
    monkeypatch.setattr(pipeline, "PIPELINE", list(pipeline.PIPELINE) +
                        [PassSpec("spy", record, required=True)])
    return seen


def _dense_relu(x):
    w = tf.constant(np.ones((3, 5), np.float32))
    b = tf.constant(np.ones(5, np.float32))
    return tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b)) * tf.add(tf.constant(1.0),
                                                                   tf.constant(2.0))


def _function_graph_ops():
    f = tf.function(_dense_relu)
    return {op.type for op in f.get_concrete_function(tf.TensorSpec([4, 3])).optimized_graph()
            .get_operations()}


def test_experimental_options_switch_tf_function_passes():
    ops = _function_graph_ops()
    assert "_FusedMatMul" in ops and "AddV2" not in ops  # remapped, the Add folded
    optimizer_options.set_experimental_options({"constant_folding": False, "remapping": False})
    ops = _function_graph_ops()
    assert "_FusedMatMul" not in ops and {"MatMul", "BiasAdd", "AddV2"} <= ops


def test_sessions_follow_the_options_only_without_a_config_proto(spy):
    """As TF 2.21: Session() takes the eager context's config (and its experimental options),
    Session(config=ConfigProto()) does not."""
    optimizer_options.set_experimental_options({"constant_folding": False, "remapping": False})
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [4, 3])
        y = _dense_relu(x)
    feed = {x: np.ones((4, 3), np.float32)}
    for config, fused in ((None, False), (ConfigProto(), True)):
        spy.clear()
        with v1.Session(graph=g, config=config) as sess:
            np.testing.assert_allclose(sess.run(y, feed), np.full((4, 5), 12.0))
        (_, ops, _), = spy
        assert ("_FusedMatMul" in ops) is fused and ("AddV2" not in ops) is fused


def test_control_flow_bodies_compile_with_the_enclosing_config(spy):
    cfg = ConfigProto()
    cfg.graph_options.optimizer_options.max_folded_constant_in_bytes = 123
    cfg.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    g = tf.Graph()
    with g.as_default():
        p = v1.placeholder(tf.bool, [])
        x = v1.placeholder(tf.float32, [4, 3])
        y = tf.cond(p, lambda: _dense_relu(x), lambda: tf.zeros([4, 5]))
    with v1.Session(graph=g, config=cfg) as sess:
        out = sess.run(y, {p: True, x: np.ones((4, 3), np.float32)})
    np.testing.assert_allclose(out, np.full((4, 5), 12.0))
    ids = [graph_id for graph_id, _, _ in spy]
    assert ids[0] == "tf_graph" and len(ids) == 3  # the graph, then both branches
    for _, ops, config in spy:
        assert config.max_constant_size_in_bytes == 123 and "_FusedMatMul" not in ops


def test_resolution_from_a_config_proto():
    assert resolve_pass_config(ConfigProto()) == PassConfig()
    cfg = ConfigProto()
    cfg.graph_options.optimizer_options.opt_level = OptimizerOptions.L0
    off = resolve_pass_config(cfg)
    assert not off.pass_enabled("constant_folding", "constant_folding")
    assert not off.pass_enabled("cse", "common_subgraph_elimination")
    assert off.pass_enabled("auto_mixed_precision")
    cfg = ConfigProto()
    rw = cfg.graph_options.rewrite_options
    rw.disable_meta_optimizer, rw.min_graph_nodes = True, -1
    meta = resolve_pass_config(cfg)
    assert not meta.pass_enabled("auto_mixed_precision") and meta.effective_min_graph_nodes() < 0
    rw.disable_meta_optimizer = False
    rw.auto_mixed_precision_onednn_bfloat16 = RewriterConfig.AGGRESSIVE
    assert resolve_pass_config(cfg).auto_mixed_precision_onednn_bfloat16


def test_resolution_from_the_experimental_options_and_the_environment(monkeypatch):
    optimizer_options.set_experimental_options({"common_subgraph_elimination": False,
                                                "min_graph_nodes": 2})
    config = resolve_pass_config()
    # Not one of TF's context options: accepted and ignored, as TensorFlow does.
    assert config.pass_enabled("cse", "common_subgraph_elimination")
    assert config.effective_min_graph_nodes() == 2 and not config.auto_mixed_precision
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    assert resolve_pass_config().auto_mixed_precision
    optimizer_options.set_experimental_options({"auto_mixed_precision": False})
    assert not resolve_pass_config().auto_mixed_precision  # an explicit OFF wins
    optimizer_options.set_jit(True)
    assert resolve_pass_config().jit == "autoclustering"


def test_a_new_pass_is_switched_by_its_declared_option(monkeypatch):
    ran = []

    def mark(graph, ctx):
        ran.append(ctx.graph_id)
        return graph
    monkeypatch.setattr(pipeline, "PIPELINE", list(pipeline.PIPELINE))
    pipeline.register_pass("mark", mark, after="remapper", option="loop_optimization")
    f = tf.function(lambda x: x * 2.0)
    f.get_concrete_function(tf.TensorSpec([2])).optimized_graph()
    assert len(ran) == 1
    optimizer_options.set_experimental_options({"loop_optimization": False})
    f.get_concrete_function(tf.TensorSpec([2])).optimized_graph()
    assert len(ran) == 1
    assert not dataclasses.replace(PassConfig(), disabled_passes=frozenset({"mark"})) \
        .pass_enabled("mark", "loop_optimization")


def test_a_function_keeps_its_plan_per_setting_of_the_options(spy):
    """As TF caches a function's instantiation per config: turning auto-jit off and on again
    between calls reuses the plans built for each setting (no graph pass runs again), and each
    plan is the one its setting asks for; reset() forgets them."""
    f = tf.function(_dense_relu)
    x = tf.constant(np.ones((4, 3), np.float32))
    cf = f.get_concrete_function(x)
    plans = {}
    for jit in (True, False, True, False):
        optimizer_options.set_jit(jit)
        np.testing.assert_allclose(f(x).numpy(), np.full((4, 5), 12.0))
        plans.setdefault(jit, cf._plan)
        assert cf._plan is plans[jit]
    assert plans[True] is not plans[False]
    assert len(spy) == 2   # one pass over the pipeline per setting
    optimizer_options.set_experimental_options({"remapping": False})   # a third setting
    f(x)
    assert len(spy) == 3 and cf._plan not in plans.values()
    optimizer_options.reset()
    f(x)
    assert len(spy) == 4


def test_a_function_keeps_a_bounded_number_of_plans():
    from ndflow.runtime import concrete_function
    f = tf.function(_dense_relu)
    x = tf.constant(np.ones((4, 3), np.float32))
    cf = f.get_concrete_function(x)
    for n in range(concrete_function.PLANS_KEPT + 3):
        optimizer_options.set_experimental_options({"min_graph_nodes": n})
        f(x)
    assert len(cf._plans) == concrete_function.PLANS_KEPT


def test_remapper_steps_are_passes_switched_by_name_or_group():
    """The remapper's steps are pipeline passes of the group "remapper": the group's name
    or the `remapping` toggle switches all off, a step's own name that step alone, and outside
    Sessions `set_experimental_options({name: False})` reaches the PassConfig (TF keeps
    unknown keys without effect); a pass registered after the group runs after all of it."""
    names = pipeline.pass_names()
    steps = [name for name, _ in pipeline.remapper.STEPS]
    assert names[names.index(steps[0]):names.index(steps[-1]) + 1] == steps
    assert "grouped_updates" in steps and "conv_pool_fusion" in steps
    cfg = PassConfig(disabled_passes=frozenset({"grouped_updates"}))
    assert not cfg.pass_enabled("grouped_updates", "remapping", "remapper")
    assert cfg.pass_enabled("conv_pool_fusion", "remapping", "remapper")
    group_off = PassConfig(disabled_passes=frozenset({"remapper"}))
    assert not any(group_off.pass_enabled(s, "remapping", "remapper") for s in steps)
    toggle_off = PassConfig(options_off=frozenset({"remapping"}))
    assert not any(toggle_off.pass_enabled(s, "remapping", "remapper") for s in steps)
    optimizer_options.set_experimental_options({"grouped_updates": False, "remapping": True})
    resolved = resolve_pass_config()
    assert resolved.disabled_passes == frozenset({"grouped_updates"})
    assert "grouped_updates" not in tf.config.optimizer.get_experimental_options()
    spec = pipeline.PassSpec("after_group", lambda g, c: g)
    saved = list(pipeline.PIPELINE)
    try:
        pipeline.register_pass(spec.name, spec.fn, after="remapper")
        now = pipeline.pass_names()
        assert now.index("after_group") == now.index(steps[-1]) + 1
    finally:
        pipeline.PIPELINE[:] = saved

"""Initializers: TF's fan computations (exact), variance-scaling statistics, Keras and v1
defaults, `get`/config round trips, seeding, graph-mode use."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ndflow  # noqa: F401 - registers ops and kernels
from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.ops import init_ops as I
from ndflow.ops import init_ops_v1 as I1
from ndflow.ops import random_seed
from ndflow.ops import variables as V
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext

TRUNC = 0.87962566103423978


@pytest.fixture(autouse=True)
def _no_global_seed():
    random_seed.set_seed(None)
    yield
    random_seed.set_seed(None)


@pytest.mark.parametrize("shape, fans", [
    ([], (1, 1)), ([5], (5, 5)), ([3, 4], (3, 4)), ([3, 3, 16, 32], (144, 288)),
    ([2, 5, 5, 4, 8], (200, 400)), ([1, 7, 2, 3], (14, 21)),
])
def test_compute_fans_exact(shape, fans):
    assert I.compute_fans(shape) == fans


def _sample(init, shape, dtype=None):
    out = init(shape) if dtype is None else init(shape, dtype=dtype)
    return out.numpy().astype(np.float64)


def _uniform_checks(x, limit):
    assert np.abs(x).max() <= limit * (1 + 1e-6)
    assert np.abs(x).max() > 0.97 * limit
    assert abs(x.var() / (limit**2 / 3) - 1) < 0.05
    assert abs(x.mean()) < 0.03 * limit


def _truncated_checks(x, std):
    """`std` is the target standard deviation of the samples (TF divides by TRUNC)."""
    assert abs(x.std() / std - 1) < 0.05
    assert np.abs(x).max() <= 2 * std / TRUNC * (1 + 1e-6)
    assert np.abs(x).max() > 1.9 * std / TRUNC


def test_glorot_uniform():
    shape = [200, 300]
    _uniform_checks(_sample(I.GlorotUniform(), shape), math.sqrt(6.0 / 500))
    _uniform_checks(_sample(I1.glorot_uniform_initializer(), shape), math.sqrt(6.0 / 500))


def test_glorot_normal_conv_kernel():
    shape = [3, 3, 64, 32]                                 # fan_in 576, fan_out 288
    _truncated_checks(_sample(I.GlorotNormal(), shape), math.sqrt(2.0 / (576 + 288)))


def test_he_and_lecun():
    shape = [3, 3, 64, 32]
    _truncated_checks(_sample(I.HeNormal(), shape), math.sqrt(2.0 / 576))
    _uniform_checks(_sample(I.HeUniform(), shape), math.sqrt(6.0 / 576))
    _truncated_checks(_sample(I.LecunNormal(), shape), math.sqrt(1.0 / 576))
    _uniform_checks(_sample(I.LecunUniform(), shape), math.sqrt(3.0 / 576))
    _truncated_checks(_sample(I1.he_normal_initializer(), shape), math.sqrt(2.0 / 576))


def test_variance_scaling_modes_and_distributions():
    shape = [400, 100]
    x = _sample(I.VarianceScaling(2.0, "fan_out", "untruncated_normal"), shape)
    assert abs(x.std() / math.sqrt(2.0 / 100) - 1) < 0.05
    assert np.abs(x).max() > 2.5 * math.sqrt(2.0 / 100)   # not truncated
    _uniform_checks(_sample(I.VarianceScaling(3.0, "fan_avg", "uniform"), shape),
                    math.sqrt(9.0 / 250))
    _truncated_checks(_sample(I.VarianceScaling(), shape), math.sqrt(1.0 / 400))
    _truncated_checks(_sample(I1.variance_scaling_initializer(distribution="normal"), shape),
                      math.sqrt(1.0 / 400))
    x = _sample(I.VarianceScaling(4.0, "fan_in", "uniform"), [])   # scalar: fans are 1
    assert abs(x) <= math.sqrt(12.0)
    with pytest.raises(ValueError, match="must be positive"):
        I.VarianceScaling(0.0)
    with pytest.raises(ValueError, match="Invalid `mode`"):
        I.VarianceScaling(mode="fan")
    with pytest.raises(ValueError, match="Invalid `distribution`"):
        I.VarianceScaling(distribution="cauchy")


def test_keras_random_defaults():
    x = _sample(I.RandomNormal(), [50000])
    assert abs(x.std() - 0.05) < 0.002 and abs(x.mean()) < 0.002
    x = _sample(I.RandomUniform(), [50000])
    assert x.min() >= -0.05 and x.max() < 0.05 and x.max() > 0.049
    x = _sample(I.TruncatedNormal(mean=1.0, stddev=0.1), [50000])
    assert x.min() >= 0.8 and x.max() <= 1.2 and abs(x.std() - 0.1 * TRUNC) < 0.003


def test_v1_random_defaults():
    x = _sample(I1.random_normal_initializer(), [50000])
    assert abs(x.std() - 1.0) < 0.03
    x = _sample(I1.random_uniform_initializer(), [50000])
    assert x.min() >= 0.0 and x.max() < 1.0 and x.max() > 0.99
    x = _sample(I1.truncated_normal_initializer(stddev=2.0), [50000])
    assert np.abs(x).max() <= 4.0 and abs(x.std() - 2.0 * TRUNC) < 0.05
    assert I1.random_uniform_initializer(0, 10)([100], dtype=dtypes.int32).dtype is dtypes.int32


def test_constant_family_and_dtypes():
    z = I.Zeros()([2, 3], dtype=dtypes.int32)
    assert z.dtype is dtypes.int32 and z.numpy().tolist() == [[0] * 3] * 2
    assert I1.zeros_initializer()([2]).dtype is dtypes.float32
    assert I1.ones_initializer(dtype=dtypes.float64)([2]).dtype is dtypes.float64
    np.testing.assert_array_equal(I.Ones()([2, 2]).numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(I.Constant(3.5)([2]).numpy(), [3.5, 3.5])
    np.testing.assert_array_equal(I1.constant_initializer([1, 2, 3, 4])([2, 2]).numpy(),
                                  [[1, 2], [3, 4]])
    np.testing.assert_array_equal(I.Identity(2.0)([2, 3]).numpy(), 2 * np.eye(2, 3))
    with pytest.raises(ValueError, match="only be used for 2D"):
        I.Identity()([2, 2, 2])
    with pytest.raises(ValueError, match="Expected floating point type, got int32"):
        I.GlorotUniform()([2, 2], dtype=dtypes.int32)
    assert I.GlorotUniform()([2, 2], dtype=dtypes.bfloat16).dtype is dtypes.bfloat16


def test_get_and_config_round_trip():
    assert I.get(None) is None
    assert isinstance(I.get("glorot_uniform"), I.GlorotUniform)
    assert isinstance(I.get("HeNormal"), I.HeNormal)
    assert isinstance(I.get("zeros"), I.Zeros)
    inst = I.RandomNormal(stddev=0.2)
    assert I.get(inst) is inst
    assert I.get(I.Ones).__class__ is I.Ones

    def fn(shape, dtype=None):
        return I.Zeros()(shape, dtype)

    assert I.get(fn) is fn
    with pytest.raises(ValueError, match="Could not interpret initializer identifier: foo"):
        I.get("foo")
    vsc = I.VarianceScaling(2.0, "fan_out", "uniform", seed=4)
    again = I.VarianceScaling.from_config(vsc.get_config())
    assert (again.scale, again.mode, again.distribution, again.seed) == (2.0, "fan_out",
                                                                          "uniform", 4)
    ser = I.serialize(I.GlorotUniform(seed=1))
    # Keras 3.15's config (TF 2.21): the fan axes are part of it.
    assert ser["class_name"] == "GlorotUniform" and ser["config"] == {
        "seed": 1, "input_axes": None, "output_axes": None}
    back = I.get({"class_name": "RandomUniform", "config": {"minval": -1.0, "maxval": 1.0}})
    assert isinstance(back, I.RandomUniform) and back.minval == -1.0
    assert I.glorot_uniform is I.GlorotUniform and I.he_normal is I.HeNormal


def test_fan_axes_choose_the_fans():
    """Keras 3's input_axes/output_axes: the fans are products over those axes."""
    assert I.compute_fans([3, 4, 5, 6], input_axes=[0, 2], output_axes=[3]) == (15, 6)
    init = I.VarianceScaling(1.0, "fan_in", "uniform", seed=7, input_axes=[1],
                             output_axes=[0])
    values = init([400, 25]).numpy()
    limit = np.sqrt(3.0 / 25)  # fan_in = shape[1] = 25, not shape[0] = 400
    assert values.max() <= limit and values.max() > 0.9 * limit
    again = I.HeUniform.from_config(I.HeUniform(input_axes=[0], output_axes=[1]).get_config())
    assert (again.input_axes, again.output_axes) == ([0], [1])


def test_seeded_initializers_reproduce_after_set_seed():
    random_seed.set_seed(7)
    a = I.GlorotUniform(seed=3)([4, 4]).numpy()
    random_seed.set_seed(7)
    b = I.GlorotUniform(seed=3)([4, 4]).numpy()
    np.testing.assert_array_equal(a, b)
    c = I.GlorotUniform(seed=4)([4, 4]).numpy()
    assert not np.array_equal(a, c)


def test_graph_mode_initializer_in_variable():
    g = Graph()
    g.seed = 1
    with g.as_default():
        v = V.Variable(lambda: I.HeUniform()([30, 40]), name="k")
        init = V.global_variables_initializer()
        read = v.value()
    types = {o.name: o.type for o in g.get_operations()}
    # Keras 3's initializers draw from the stateless ops (seeded [seed, 0]), as TF 2.21's
    assert any(n.startswith("k/Initializer/stateless_random_uniform/") and
               t.startswith("StatelessRandomUniform") for n, t in types.items()), types
    ctx = RuntimeContext()
    Plan(g, [], [], [init], ctx).run([])
    (x,) = Plan(g, [], [read], [], ctx).run([])
    assert isinstance(x, torch.Tensor) and tuple(x.shape) == (30, 40)
    assert float(x.abs().max()) <= math.sqrt(6.0 / 30) * (1 + 1e-6)

"""The op registry is complete and says what TensorFlow says about each op.

Every registered op has a CPU kernel and either a gradient function or an explicit mark
(`not_differentiable`, TF's ops.NotDifferentiable; or `gradient_undefined`, no gradient in TF).
Its flags are compared with TensorFlow 2.21's own registries (tests/fixtures/tf_ops, generated
by the script beside the fixture): is_stateful, is_commutative and the kind of gradient.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ndflow.kernels import registry as kernels
from ndflow.ops.op_def import REGISTRY, OpDef, lookup
from tests.conftest import NDFLOW_OP_NAMES

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tf_ops" / "tf_2_21_ops.json"
TF_OPS = json.loads(FIXTURE.read_text())["ops"]
# Internal ops of ndflow's own passes, which TensorFlow does not have.
NDFLOW_ONLY = {"_MatMulAddScaled", "_MatMulApplyGradientDescent", "_MatMulApplyMomentum",
               "_MaxPoolWithIndices", "_ResourceApplyMomentumWithDecay",
               "_ResourceApplyMomentumWithCastDecay", "_CastDecayedGradient",
               "_UpdateDynamicLossScale",
               "_GroupedApplyMomentum", "_GroupedApplyAdam", "_GroupedSparseApplyKerasAdam",
               "_DropoutSelect",
               "_GroupedApplyKerasRMSProp", "_AllFinite",
               "_MaxPoolGradWithIndices", "_Conv2DBiasReluMaxPool", "_Conv2DBiasReluMaxPoolGrad",
               "_PythonDataset", "_IteratorHasNext", "_PythonIterator",
               "_XlaClusterCall", "_GraphInputDataset", "_DatasetReduce",
               "_SerializeIteratorState", "_RestoreIteratorState",  # make_saveable_from_iterator
               "_EighTridiagonal",   # tf.linalg.eigh_tridiagonal: TF composes it in Python
               "_ScaledDotProductAttention", "_ScaledDotProductAttentionGrad",  # Keras' attention
               "_ResourceSparseApplyKerasAdam",   # Keras 3's Adam of IndexedSlices
               "_RecurrentDropoutRNN", "_RecurrentDropoutRNNBackprop",  # Keras' rec. dropout
               "_LayerNorm", "_LayerNormGrad",   # Keras' LayerNormalization
               "_Gelu", "_GeluGrad",   # Keras' exact "gelu" activation
               "OnnxEngineOp"}  # the inference converter's engine segments (TRTEngineOp's role)


def _gradient_kind(op: OpDef) -> str:
    if op.gradient() is not None:
        return "function"
    if op.not_differentiable:
        return "not_differentiable"
    return "undefined" if op.gradient_undefined else "unmarked"


@pytest.mark.parametrize("name", sorted(NDFLOW_OP_NAMES))
def test_every_op_has_a_cpu_kernel_and_a_gradient_or_a_mark(name):
    op = lookup(name)
    assert kernels.has_kernel(op, "CPU"), f"{name} has no CPU kernel"
    assert _gradient_kind(op) != "unmarked", (
        f"{name} has neither a gradient function nor a not_differentiable / "
        "gradient_undefined mark")
    assert not (op.gradient() is not None and (op.not_differentiable or op.gradient_undefined))


@pytest.mark.parametrize("name", sorted(NDFLOW_OP_NAMES & set(TF_OPS)))
def test_flags_match_tensorflow(name):
    op, tf_op = lookup(name), TF_OPS[name]
    if tf_op is None:
        assert name in NDFLOW_ONLY, f"{name} is not a TensorFlow op; list it in NDFLOW_ONLY"
        return
    assert op.is_stateful == tf_op["is_stateful"], f"{name}: is_stateful"
    assert op.is_commutative == tf_op["is_commutative"], f"{name}: is_commutative"
    assert _gradient_kind(op) == tf_op["gradient"], f"{name}: gradient"


def test_fixture_covers_the_registry():
    # The fixture holds every public TF op (tf.raw_ops) and the ops ndflow had when it was
    # generated, so a new op with a TF counterpart is compared without regenerating it; a new
    # internal or ndflow-only op needs the script run again.
    known = {name for name, tf_op in TF_OPS.items() if tf_op is not None}
    assert len(known) > 1400
    print(f"TensorFlow ops ndflow implements: {len(NDFLOW_OP_NAMES & known)} of {len(known)}")
    missing = sorted(NDFLOW_OP_NAMES - set(TF_OPS))
    assert not missing, f"not in {FIXTURE.name}: {missing}; regenerate it (see generate.py)"


def test_a_second_gradient_registration_is_refused():
    op = REGISTRY["Relu"]
    with pytest.raises(KeyError, match="Registering two gradient with name 'Relu'"):
        op.def_grad(lambda op_, grad: [grad])

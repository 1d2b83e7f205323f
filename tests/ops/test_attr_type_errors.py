"""An op given a type its attrs do not allow: TF's InvalidArgumentError when running eagerly,
its TypeError when building a graph, against TF 2.21 (tests/fixtures/attr_type_errors,
generate.py beside): the error type, the message up to the allowed types, the allowed types
(quantized ones aside: ndflow has none) and the op named at the end of eager messages."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("attr_type_errors")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "attr_type_errors" / "values.json").read_text())
CASES = CONFIGS.cases(tf)


# TF's MatMul declares the unsigned types but has no CPU kernel for them (NotFoundError when
# run); ndflow's declares the types it runs.
_UNDECLARED = {"matmul_bool": ("uint8", "uint16", "uint32", "uint64")}


def _declared(name: str, record: dict) -> dict:
    if record.get("allowed") is not None:
        left_out = _UNDECLARED.get(name, ())
        record = {**record, "allowed": [t for t in record["allowed"] if t not in left_out
                                        and not t.startswith(("qint", "quint"))]}
    return record


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_errors_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == _declared(name, TF_VALUES[name]["eager"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_errors_match_tensorflow(name):
    got = CONFIGS.record_in_graph(tf, CASES[name])
    assert got == _declared(name, TF_VALUES[name]["graph"])


def test_the_eager_message_shows_the_op_and_the_name_given():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.raw_ops.Sqrt(x=tf.constant([4]), name="root")
    text = str(info.value)
    assert text.endswith("[Op:Sqrt] name: root")
    assert "; NodeDef: {{node Sqrt}}; Op<name=Sqrt; signature=x:T -> y:T; attr=T:type," \
           "allowed=[" in text

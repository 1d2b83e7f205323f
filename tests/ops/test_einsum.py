"""Einsum (tf.einsum), table-driven (see harness.py), plus shape errors and names."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from ndflow.ops.einsum import einsum, einsum_op
from tests.ops.harness import OpCase, check_forward, check_gradients, check_shapes

rng = np.random.default_rng(11)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


_TOL = dict(rtol=1e-5, atol=1e-5)


def _case(eq, *shapes, ref_eq=None, **kw):
    return OpCase(f"einsum[{eq}]", lambda *xs: einsum(eq, *xs), [_r(*s) for s in shapes],
                  lambda *xs: np.einsum(ref_eq or eq, *xs), **{**_TOL, **kw})


CASES = [
    _case("ij,jk->ik", (3, 4), (4, 5)),
    _case("ij,jk", (3, 4), (4, 2)),
    _case("ba,ca", (2, 3), (4, 3)),
    _case("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
    _case("ij->ji", (3, 4)),
    _case("ij->", (3, 4)),
    _case("ijk->ki", (2, 3, 4)),
    _case("ii->i", (3, 3)),
    _case("ii", (3, 3)),
    _case("i,i->", (5,), (5,)),
    _case("i,j->ij", (3,), (4,)),
    _case("abc,cd->ad", (2, 3, 4), (4, 5)),
    _case("aab,bc->ca", (3, 3, 2), (2, 4)),
    _case("...ij,...jk->...ik", (2, 1, 3, 4), (3, 4, 2)),
    _case("...ij,jk->...ik", (2, 3, 4), (4, 5)),
    _case("b...i,ij->b...j", (2, 3, 4), (4, 2)),
    _case("a...->...a", (2, 3, 4)),
    _case("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    _case("i j , j k -> i k", (2, 3), (3, 2), ref_eq="ij,jk->ik"),
]



DIAG = OpCase("einsum_op[i->ii]", lambda x: einsum_op([x], "i->ii"), [_r(4)], np.diag, **_TOL)
UNTRACE = OpCase("einsum_op[ab->aab]", lambda x: einsum_op([x], "ab->aab"), [_r(3, 2)],
                 lambda x: np.einsum("ab,ac->acb", x, np.eye(3)), **_TOL)


@pytest.mark.parametrize("case", [DIAG, UNTRACE], ids=str)
def test_repeated_output_labels(case):
    check_forward(case)
    check_shapes(case)
    check_gradients(case)


def test_int_einsum():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(einsum("ij,jk->ik", a, a.T).numpy(), a @ a.T)


def test_names_and_pairwise_chain():
    with Graph().as_default() as g:
        a, b, c = (placeholder(tf.float32, s) for s in ([2, 3], [3, 4], [4, 5]))
        out = einsum("ij,jk->ik", a, b)
        assert out.op.type == "Einsum" and out.op.name == "einsum/Einsum"
        assert out.op.get_attr("equation") == "ij,jk->ik" and out.op.get_attr("N") == 2
        out = tf.einsum("ij,jk,kl->il", a, b, c, name="foo")
        assert out.shape.as_list() == [2, 5]
        ops = [o for o in g.get_operations() if o.name.startswith("foo/")]
        assert [o.type for o in ops] == ["Einsum", "Einsum"]


def test_shape_errors():
    with Graph().as_default():
        a = placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            einsum("ij,jk->ik", a, placeholder(tf.float32, [4, 5]))
        with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 3"):
            einsum("ij,jk->ik", placeholder(tf.float32, [2, 3, 4]), a)
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 5"):
            einsum("...ab,...bc->...ac", placeholder(tf.float32, [7, 2, 2, 3]),
                   placeholder(tf.float32, [5, 3, 4]))
        with pytest.raises(ValueError, match="has label 'd' which is not present"):
            einsum_op([a, a], "ab,bc->ad")
        with pytest.raises(ValueError, match="Expecting exactly one '->'"):
            einsum_op([a], "ab")
        with pytest.raises(ValueError, match='Got 1 inputs for equation "ij,jk->ik", expecting 2'):
            einsum("ij,jk->ik", a)
        with pytest.raises(ValueError, match="more than once"):
            einsum("i->ii", placeholder(tf.float32, [3]))
        unknown = einsum("...ab,bc->...ac", placeholder(tf.float32, None),
                         placeholder(tf.float32, [3, 4]))
        assert unknown.shape.rank is None
        part = einsum("...ab,...bc->...ac", placeholder(tf.float32, [None, None, 3]),
                      placeholder(tf.float32, [5, 3, 4]))
        assert part.shape.as_list() == [5, None, 4]


def test_bfloat16_einsum():
    a, b = _r(3, 4), _r(4, 2)
    out = einsum("ij,jk->ik", tf.cast(a, tf.bfloat16), tf.cast(b, tf.bfloat16))
    assert out.dtype == tf.bfloat16
    np.testing.assert_allclose(tf.cast(out, tf.float32).numpy(), a @ b, atol=5e-2)

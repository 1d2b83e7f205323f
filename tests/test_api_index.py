"""The lazy namespaces (ndflow/core/lazy_api.py) and the index they serve from
(ndflow/core/api_index.json, written by `python -m ndflow.tools.gen_api_index`).

The checked-in index equals the one generated from the declarations: a declared name missing
from the index fails, and so does an indexed name nothing declares (or one whose module moved).
Each check that depends on what `import ndflow` loads runs in a process that has not
imported ndflow.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import ndflow as tf
from ndflow.core import lazy_api
from ndflow.ops import op_def

# A fresh interpreter costs ~1.5 s of torch's import; the checks below fork theirs from one
# process that has imported torch and NumPy but nothing of ndflow, which is the same state
# for what they check (the ndflow modules loaded).
_FORK_SERVER = r"""
import json, os, signal, sys, tempfile, traceback
import numpy, torch  # noqa: F401
for line in sys.stdin:
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        pid = os.fork()
        if pid == 0:
            signal.alarm(300)  # a hung check fails instead of hanging the suite
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            rc = 0
            try:
                exec(compile(json.loads(line), "<fresh>", "exec"), {"__name__": "__main__"})
            except BaseException:
                traceback.print_exc()
                rc = 1
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(rc)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        print(json.dumps([os.waitstatus_to_exitcode(status), out.read(), err.read()]), flush=True)
"""
_server = None


def _fresh(code: str) -> str:
    """stdout of `code` run in a process that has not imported ndflow (forked, see above)."""
    global _server
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen([sys.executable, "-c", _FORK_SERVER], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
    _server.stdin.write(json.dumps(code) + "\n")
    _server.stdin.flush()
    rc, out, err = json.loads(_server.stdout.readline())
    assert rc == 0, err[-3000:]
    return out


@pytest.fixture(scope="module", autouse=True)
def _stop_fork_server():
    yield
    if _server is not None:
        _server.stdin.close()
        _server.wait(timeout=60)


@pytest.fixture(scope="module")
def generated():
    return json.loads(_fresh(
        "import json; from ndflow.tools import gen_api_index as g\n"
        "print(json.dumps(g.generate()))"))


def test_index_holds_every_declared_name_and_no_other(generated):
    checked_in = lazy_api.index()
    missing = sorted(set(generated["names"]) - set(checked_in["names"]))
    extra = sorted(set(checked_in["names"]) - set(generated["names"]))
    moved = sorted(p for p in set(generated["names"]) & set(checked_in["names"])
                   if generated["names"][p] != checked_in["names"][p])
    hint = "; run python -m ndflow.tools.gen_api_index"
    assert not missing, f"declared but not in the index{hint}: {missing[:50]}"
    assert not extra, f"in the index but declared nowhere{hint}: {extra[:50]}"
    assert not moved, f"declared in another module than the index says{hint}: {moved[:50]}"


@pytest.mark.parametrize("section", ["ops", "gradients", "composites"])
def test_op_index_holds_every_op_gradient_and_composite_outside_the_base(generated, section):
    assert generated[section] == lazy_api.index()[section], \
        "run python -m ndflow.tools.gen_api_index"


def test_op_families_load_at_first_use():
    """`import ndflow` leaves the op families nothing in the base uses; a public name, an op
    looked up by name (tf.raw_ops, GraphDef import), a gradient and a RaggedTensor method
    each import theirs, and the dispatch of the public APIs they declare then is in place."""
    out = json.loads(_fresh(
        "import sys, json, ndflow as tf\n"
        "from ndflow.ops import op_def\n"
        "families = ('ndflow.ops.math_special', 'ndflow.ops.string_ops',"
        " 'ndflow.ops.image_colorspace', 'ndflow.ops.nn_grad')\n"
        "before = [m for m in families if m in sys.modules]\n"
        "rt = tf.ragged.constant([['A', 'b'], ['C']])\n"
        # ragged dispatch of an API whose family (string_ops) loads then
        "lower = [[s.decode() for s in r] for r in tf.strings.lower(rt).to_list()]\n"
        "st = tf.sparse.SparseTensor([[0, 1]], [2.0], [2, 2])\n"
        "i0e = tf.sparse.to_dense(tf.math.bessel_i0e(st)).numpy().tolist()\n"
        "x = tf.Variable(tf.ones([1, 3, 3, 1]))\n"
        "with tf.GradientTape() as tape:\n"
        "    y = tf.reduce_sum(tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), 1, 'VALID'))\n"
        "grad = tape.gradient(y, x).numpy().sum().item()\n"
        "raw = tf.raw_ops.RGBToHSV(images=tf.constant([[0.0, 0.0, 1.0]])).numpy()[0, 0].item()\n"
        "try:\n"
        "    tf.RegisterGradient('Lgamma')(lambda op, g: g)\n"
        "    taken = False\n"
        "except KeyError:\n"
        "    taken = True\n"
        "merged = tf.ragged.constant([[[1], [2]], [[3]]]).merge_dims(0, 1).to_list()\n"
        "n = sum(1 for m in sys.modules if m == 'ndflow' or m.startswith('ndflow.'))\n"
        "print(json.dumps([before, lower, i0e, grad, raw, taken, merged]))"))
    before, lower, i0e, grad, raw, taken, merged = out
    assert before == []
    assert lower == [["a", "b"], ["c"]]
    assert i0e[0][1] == pytest.approx(0.3085083, rel=1e-6) and i0e[0][0] == 0.0
    assert grad == 16.0   # each of the 4 windows adds 1 to each of its 4 pixels
    assert raw == pytest.approx(2 / 3)   # blue's hue
    assert taken, "RegisterGradient of an op of a family not loaded yet must find its gradient"
    assert merged == [[1], [2], [3]]


def test_import_leaves_the_areas_for_first_use():
    out = json.loads(_fresh(
        "import sys, json, ndflow as tf\n"
        "before = sorted({m.split('.')[1] for m in sys.modules if m.startswith('ndflow.')})\n"
        "tf.keras.layers.Dense\n"
        "after = sorted({m.split('.')[1] for m in sys.modules if m.startswith('ndflow.')})\n"
        "print(json.dumps([before, after]))"))
    before, after = out
    for area in ("keras", "train", "data", "distribute", "checkpoint", "saved_model",
                 "summary", "profiler", "feature_column", "inference"):
        assert area not in before, f"`import ndflow` imported ndflow.{area}"
    assert "keras" in after


def test_eager_arithmetic_loads_the_eager_base_only():
    """Issue 57's bar: `tf.constant(1.0) + 1` loads at most 250 of ndflow's modules (the op
    families, sessions, tf.function, the passes and the JIT load at first use)."""
    out = json.loads(_fresh(
        "import sys, json, ndflow as tf\n"
        "tf.constant(1.0) + 1\n"
        "mods = [m for m in sys.modules if m == 'ndflow' or m.startswith('ndflow.')]\n"
        "print(json.dumps([len(mods), [m for m in mods if m.startswith(("
        "'ndflow.passes', 'ndflow.jit', 'ndflow.runtime.function', 'ndflow.runtime.session'))]]))"))
    count, deferred = out
    assert count <= 250, f"{count} modules"
    assert deferred == []


def test_namespaces_import_by_module_name_before_first_use():
    out = _fresh(
        "import ndflow.compat.v1.nn as v1nn\n"
        "from ndflow.compat.v1 import train\n"
        "from ndflow.nn import relu\n"
        "import ndflow as tf\n"
        "assert v1nn is tf.compat.v1.nn and relu is tf.nn.relu\n"
        "assert train.AdamOptimizer is tf.compat.v1.train.AdamOptimizer\n"
        "assert tf.compat.v2 is tf and tf.raw_ops is tf.compat.v1.raw_ops\n"
        "print('ok')")
    assert out.strip() == "ok"


def test_kernel_index_names_each_ops_kernel_modules(generated):
    assert generated["kernels"] == lazy_api.index()["kernels"], \
        "run python -m ndflow.tools.gen_api_index"


def test_ops_and_kernels_outside_the_base_load_at_first_use():
    out = _fresh(
        "import sys, ndflow as tf\nfrom ndflow.ops import op_def\n"
        "assert 'ndflow.checkpoint.io_ops' not in sys.modules\n"
        "print(op_def.lookup('SaveV2').name)\n"
        "conv = 'ndflow.kernels.nn_conv'\n"
        "print(conv in sys.modules)\n"
        "tf.nn.conv2d(tf.ones([1, 4, 4, 1]), tf.ones([2, 2, 1, 1]), 1, 'VALID')\n"
        "print(conv in sys.modules)")
    assert out.split() == ["SaveV2", "False", "True"]


def test_dir_lists_the_index_names():
    assert set(lazy_api.index()["namespaces"]["nn"]) <= set(dir(tf.nn))
    assert "keras" in dir(tf) and "v1" in dir(tf.compat)
    assert not [n for n in dir(tf.nn) if not n.startswith("_")
                and f"nn.{n}" not in lazy_api.index()["names"]
                and f"nn.{n}" not in lazy_api.index()["namespaces"]]   # tf.nn.experimental


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        tf.nn.not_a_name  # noqa: B018
    assert not hasattr(tf, "not_a_name")
    with pytest.raises(Exception, match="Op type not registered 'NoSuchOp'"):
        op_def.lookup("NoSuchOp")

"""`tf.summary.trace_on(profiler=True)` / `trace_export` as TensorFlow 2.21: with a
`profiler_outdir` on trace_on, the run metadata under plugin "graph_run_metadata" (not the
graph-only "graph_run_metadata_graph") and a profile; without one (as TensorBoard's graphs
guide calls it), a warning, nothing recorded, an empty run metadata written and then
UnavailableError from stopping the profiler that never ran; the traced function's graph as
TF's runtime instantiates it (_Arg and _Retval nodes). Compared with
tests/fixtures/summary_trace_profiler/expected.json (TensorFlow 2.21 running configs.py)."""

import json

import pytest

import ndflow as tf
from tests import fixture_modules
from tests.fixture_modules import FIXTURES

EXPECTED = json.loads((FIXTURES / "summary_trace_profiler" / "expected.json").read_text())
_configs = fixture_modules.load("summary_trace_profiler")


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    return _configs.program(tf, str(tmp_path_factory.mktemp("trace")))


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_trace_export_as_tensorflow(observed, case):
    assert json.loads(json.dumps(observed[case])) == EXPECTED[case]

"""ndflow runs the pipelines of tests/fixtures/tf_data_pipelines and gets TensorFlow 2.21's
element_specs, cardinalities and elements exactly (recorded by generate.py there)."""

import importlib.util
import json
from pathlib import Path

import pytest

import ndflow as tf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_data_pipelines"
_spec = importlib.util.spec_from_file_location("tf_data_pipelines", FIXTURES / "pipelines.py")
pipelines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pipelines)
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())["pipelines"]


@pytest.mark.parametrize("name", sorted(pipelines.PIPELINES))
def test_pipeline_matches_tensorflow(name):
    got = pipelines.describe(tf, pipelines.PIPELINES[name](tf))
    want = EXPECTED[name]
    assert got["spec"] == want["spec"]
    assert got["cardinality"] == want["cardinality"]
    assert got["values"] == want["values"]

"""`python -m ndflow.info` and tf.sysconfig.get_build_info()."""

import os
import re

import torch

import ndflow as tf
from ndflow import info
from ndflow.core import build_info, config

ENVIRONMENT_PAGE = os.path.join(os.path.dirname(__file__), "..", "docs", "environment.md")


def test_build_info_has_tensorflows_keys():
    got = tf.sysconfig.get_build_info()
    # TensorFlow 2.21's CPU build answers exactly these three (tensorflow-cpu==2.21.0)
    assert list(got)[:3] == ["is_cuda_build", "is_rocm_build", "is_tensorrt_build"]
    assert got["is_tensorrt_build"] is False
    assert got["is_cuda_build"] == (torch.version.cuda is not None)


def test_report_names_versions_cpu_variables_and_caches(monkeypatch):
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    monkeypatch.setenv("TF_AUTOTUNE_THRESHOLD", "2")
    monkeypatch.setenv("TF_CPP_VMODULE", "not-a-level")
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    text = info.report()
    model, flags = build_info.cpu_model_and_flags()
    assert f"CPU: {model}, {os.cpu_count()} cores" in text
    assert f"TensorFlow API {tf.__version__}" in text
    assert "TF_ENABLE_AUTO_MIXED_PRECISION='1': in effect" in text
    assert "TF_AUTOTUNE_THRESHOLD='2': parsed only" in text
    assert "TF_CPP_VMODULE='not-a-level': malformed: Failed to parse the env-var" in text
    assert "TF_XLA_FLAGS" not in text  # only the variables that are set
    assert f"package: {os.path.dirname(tf.__file__)}" in text
    bf16 = "bf16 units: yes" if flags & {"avx512_bf16", "amx_bf16"} else "bf16 units: no"
    assert bf16 in text


def test_docs_in_effect_column_matches_the_code():
    """docs/environment.md's table says "parsed only" exactly for config.PARSED_ONLY."""
    with open(ENVIRONMENT_PAGE, encoding="utf-8") as f:
        rows = re.findall(r"^\| `([A-Z0-9_]+)` \|.*\| (yes|parsed only) \|$", f.read(), re.M)
    assert len(rows) > 15
    assert {name for name, effect in rows if effect == "parsed only"} == set(config.PARSED_ONLY)

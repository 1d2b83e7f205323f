"""Issue 55 for tf.keras: every public keras object of the modules documented so far has a
docstring (the list grows to all of ndflow/keras), and every `>>>` example in a public keras
docstring runs as a doctest with `tf` being ndflow and `np` numpy, so the examples stay
true."""

from __future__ import annotations

import doctest
import importlib
import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

INDEX = Path(tf.__file__).resolve().parent / "core" / "api_index.json"

# Modules whose every exported callable or class has a docstring.
DOCUMENTED_MODULES = {
    "ndflow.keras.applications._convnext",
    "ndflow.keras.applications._densenet",
    "ndflow.keras.applications._efficientnet",
    "ndflow.keras.applications._efficientnet_v2",
    "ndflow.keras.applications._imagenet_utils",
    "ndflow.keras.applications._inception_resnet_v2",
    "ndflow.keras.applications._inception_v3",
    "ndflow.keras.applications._mobilenet",
    "ndflow.keras.applications._mobilenet_v2",
    "ndflow.keras.applications._mobilenet_v3",
    "ndflow.keras.applications._nasnet",
    "ndflow.keras.applications._resnet",
    "ndflow.keras.applications._vgg",
    "ndflow.keras.applications._xception",
    "ndflow.keras.activation_functions",
    "ndflow.keras.activation_functions_extra",
    "ndflow.keras.backend_functions",
    "ndflow.keras.backend_legacy",
    "ndflow.keras.backend_legacy_nn",
    "ndflow.keras.config_functions",
    "ndflow.keras.constraint_functions",
    "ndflow.keras.datasets._text_sequences",
    "ndflow.keras.layers.category_encoding",
    "ndflow.keras.layers.discretization",
    "ndflow.keras.layers.hashing_layers",
    "ndflow.keras.layers.index_lookup",
    "ndflow.keras.layers.layer_serialization",
    "ndflow.keras.layers.normalization_preprocessing",
    "ndflow.keras.layers.text_vectorization",
    "ndflow.keras.loss_functions",
    "ndflow.keras.ops.core_functions",
    "ndflow.keras.ops.image_functions",
    "ndflow.keras.ops.image_scale_translate",
    "ndflow.keras.ops.linalg_functions",
    "ndflow.keras.ops.math_functions",
    "ndflow.keras.ops.nn_conv_functions",
    "ndflow.keras.ops.nn_functions",
    "ndflow.keras.ops.numpy_array",
    "ndflow.keras.ops.numpy_linear",
    "ndflow.keras.ops.numpy_math",
    "ndflow.keras.ops.numpy_misc",
    "ndflow.keras.ops.numpy_reduce",
    "ndflow.keras.ops.rearrange_elastic",
    "ndflow.keras.preprocessing_image_transforms",
    "ndflow.keras.optimizers.serialization",
    "ndflow.keras.random_functions",
    "ndflow.keras.regularizer_functions",
    "ndflow.keras.tree_functions",
    "ndflow.keras.utils_config",
}


def _keras_objects():
    """(public path, module, object) for each distinct keras callable or class exported."""
    names = json.loads(INDEX.read_text(encoding="utf-8"))["names"]
    seen = {}
    for path, target in sorted(names.items(), key=lambda kv: (kv[0].startswith("compat"), kv[0])):
        module, attr = target.split(":")
        if not attr or not module.startswith("ndflow.keras"):
            continue
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        if inspect.ismodule(obj) or not (callable(obj) or inspect.isclass(obj)):
            continue
        seen.setdefault(id(obj), (path, module, obj))
    return list(seen.values())


OBJECTS = _keras_objects()


def test_documented_modules_have_docstrings_everywhere():
    missing = [f"{path} ({module})" for path, module, obj in OBJECTS
               if module in DOCUMENTED_MODULES and not (obj.__doc__ or "").strip()]
    assert not missing, f"no docstring: {missing}"


EXAMPLES = [(path, obj.__doc__) for path, _, obj in OBJECTS if ">>>" in (obj.__doc__ or "")]


@pytest.mark.parametrize("path,doc", EXAMPLES, ids=[p for p, _ in EXAMPLES])
def test_docstring_example_runs(path, doc):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(doc, {"tf": tf, "np": np}, path, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0

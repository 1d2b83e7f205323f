"""tf.strings unicode_decode_with_offsets / unicode_split(_with_offsets) / unicode_transcode /
unicode_script against TensorFlow 2.21's results (tests/fixtures/unicode_ops), eagerly and in
tf.function."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "unicode_ops"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())
sys.path.insert(0, str(FIXTURE))
try:
    from unicode_cases import cases, to_python  # noqa: E402
finally:
    sys.path.remove(str(FIXTURE))

CASES = cases(tf)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_eager_matches_tensorflow(name):
    want = EXPECTED[name]
    if "error" in want:
        with pytest.raises(getattr(tf.errors, want["error"])) as e:
            CASES[name]()
        assert want["message"].split("}} ")[-1].split(" [Op:")[0] in str(e.value)
        return
    assert to_python(CASES[name]()) == want["value"]


@pytest.mark.parametrize("name", ["decode_offsets_2d", "split_offsets", "transcode_bad",
                                  "script"])
def test_tf_function_matches_tensorflow(name):
    assert to_python(tf.function(CASES[name])()) == EXPECTED[name]["value"]


def test_unicode_script_of_ragged_code_points():
    rt = tf.strings.unicode_script(tf.ragged.constant([[72, 0x3B1], [0x416]]))
    np.testing.assert_array_equal(rt.flat_values.numpy(), [25, 14, 8])
    assert rt.row_splits.numpy().tolist() == [0, 2, 3]


def test_unknown_encoding_is_an_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not create converter"):
        tf.strings.unicode_transcode("a", "NO-SUCH-CODEC", "UTF-8")

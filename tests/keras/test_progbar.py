"""tf.keras.utils.Progbar and the ProgbarLogger callback write exactly what Keras 3 writes.

Every scenario of tests/fixtures/keras_progbar/progbar_scenarios.py runs here on ndflow with
the code generate.py ran on Keras 3 (TF 2.21's), under the same fake clock, once with stdout
on a pipe and once on a pseudo-terminal; the bytes must equal Keras' transcripts
(transcripts.json). Keras redraws in place on both (it counts any POSIX system as a dynamic
display); the non-dynamic branch (a newline before each update) is the "static_display"
scenario.
"""

import inspect
import io
import json
import os
import pty
import sys
from pathlib import Path

import pytest

import ndflow as tf
from ndflow.keras.progbar import Progbar

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "keras_progbar"
sys.path.insert(0, str(FIXTURES))
from progbar_scenarios import (  # noqa: E402
    LOGGER_CASES,
    PROGBAR_CASES,
    capture,
    fake_clock,
    run_logger,
    run_progbar,
)

sys.path.pop(0)
EXPECTED = json.loads((FIXTURES / "transcripts.json").read_text(encoding="utf-8"))
KINDS = ("pipe", "pty")


def _show(text: str) -> str:
    """The transcript with its control characters visible, for assertion messages."""
    return text.replace("\x1b", "<ESC>").replace("\b", "<BS>").replace("\r", "<CR>")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", PROGBAR_CASES, ids=lambda c: c["name"])
def test_progbar_writes_what_keras_writes(case, kind):
    got = capture(lambda: run_progbar(tf.keras.utils.Progbar, case), kind)
    want = EXPECTED["progbar"][case["name"]][kind]
    assert got == want, f"\n got: {_show(got)}\nwant: {_show(want)}"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", LOGGER_CASES, ids=lambda c: c["name"])
def test_progbar_logger_writes_what_keras_writes(case, kind):
    got = capture(lambda: run_logger(tf.keras.callbacks.CallbackList, case), kind)
    want = EXPECTED["logger"][case["name"]][kind]
    assert got == want, f"\n got: {_show(got)}\nwant: {_show(want)}"


def test_transcripts_show_the_keras_3_bar():
    """The fixture itself: the format the module docstring promises."""
    basic = EXPECTED["progbar"]["basic"]["pty"]
    assert "\r\x1b[1m 1/10\x1b[0m \x1b[32m━━\x1b[0m\x1b[37m" in basic
    assert " 200ms/step - loss: 0.9000 - accuracy: 0.5000" in basic
    assert basic.endswith("\n") and basic.count("\n") == 1
    assert EXPECTED["progbar"]["verbose2"]["pipe"] == (
        "5/5 - 3s - 625ms/step - loss: -1.2500e-01 - mae: 0.2500\n")


@pytest.mark.parametrize("kind", KINDS)
def test_dynamic_display_follows_keras_rule(kind, monkeypatch):
    read_fd, write_fd = pty.openpty() if kind == "pty" else os.pipe()
    stream = os.fdopen(write_fd, "w", encoding="utf-8")
    try:
        monkeypatch.setattr(sys, "stdout", stream)
        assert Progbar(3)._dynamic_display  # "posix" is loaded: always dynamic here
        monkeypatch.delitem(sys.modules, "posix")
        assert Progbar(3)._dynamic_display == (kind == "pty")
        monkeypatch.setitem(sys.modules, "ipykernel", object())
        assert Progbar(3)._dynamic_display
    finally:
        monkeypatch.undo()
        stream.close()
        os.close(read_fd)


def test_unencodable_bar_falls_back_to_equals(monkeypatch):
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    monkeypatch.setattr(sys, "stdout", stream)
    with fake_clock() as clock:
        bar = Progbar(2)
        clock[0] += 0.1
        bar.update(2, [("loss", 0.5)])
    stream.flush()
    text = raw.getvalue().decode("ascii")
    assert "\x1b[32m" + "=" * 20 + "\x1b[0m" in text and text.endswith("loss: 0.5000\n")


def test_stateful_and_stateless_together_is_an_error():
    with pytest.raises(ValueError, match="Only one of `stateful_metrics` or "
                                         "`stateless_metrics` can be provided"):
        Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])


def test_public_names_and_signature():
    assert tf.keras.utils.Progbar is Progbar
    assert tf.compat.v1.keras.utils.Progbar is Progbar
    params = list(inspect.signature(Progbar).parameters)
    assert params == ["target", "width", "verbose", "interval", "stateful_metrics",
                      "stateless_metrics", "unit_name"]
    bar = Progbar(5)
    assert (bar.width, bar.verbose, bar.interval, bar.unit_name) == (20, 1, 0.05, "step")
    assert bar.stateful_metrics == set() and bar.stateless_metrics is None

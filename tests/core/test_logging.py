"""ndflow.core.logging: TF-style lines, TF_CPP_MIN_LOG_LEVEL, TF_CPP_VMODULE."""

from __future__ import annotations

import re

import pytest

from ndflow.core import config
from ndflow.core import logging as tflog

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}: ([IWEF]) (\S+):(\d+)\] (.*)$")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in config.VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _lines(capsys):
    return [LINE.match(line) for line in capsys.readouterr().err.splitlines()]


def test_format_and_caller_location(capsys):
    tflog.log("WARNING", "careful")
    (m,) = _lines(capsys)
    assert m is not None
    assert m.group(1) == "W"
    assert m.group(2).endswith("test_logging.py")
    assert m.group(4) == "careful"


def test_helpers_report_their_caller(capsys):
    tflog.info("hello")
    (m,) = _lines(capsys)
    assert m.group(1) == "I" and m.group(2).endswith("test_logging.py")


def test_format_line_fixed_time():
    line = tflog.format_line(tflog.ERROR, "ndflow/x.py:3", "boom", now=0.25)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.250000: E ndflow/x.py:3\] boom\n", line)


@pytest.mark.parametrize("level,shown", [("0", "IWEF"), ("1", "WEF"), ("2", "EF"), ("3", "F")])
def test_min_log_level(monkeypatch, capsys, level, shown):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", level)
    for severity in ("INFO", "WARNING", "ERROR", "FATAL"):
        tflog.log(severity, severity)
    assert "".join(m.group(1) for m in _lines(capsys)) == shown


def test_vlog_honours_vmodule(monkeypatch, capsys):
    tflog.vlog("ndflow.passes.cse", 1, "hidden")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("TF_CPP_VMODULE", "cse=2")
    tflog.vlog("ndflow.passes.cse", 1, "one")
    tflog.vlog("ndflow.passes.cse", 2, "two")
    tflog.vlog("ndflow.passes.cse", 3, "three")
    tflog.vlog("ndflow.runtime.plan", 1, "other module")
    assert [m.group(4) for m in _lines(capsys)] == ["one", "two"]
    assert tflog.vlog_is_on("ndflow.passes.cse", 2)
    assert not tflog.vlog_is_on("ndflow.passes.cse", 3)


def test_vlog_global_level_and_min_log_level(monkeypatch, capsys):
    monkeypatch.setenv("TF_CPP_MIN_VLOG_LEVEL", "1")
    tflog.vlog("anything", 1, "shown")
    assert [m.group(1) for m in _lines(capsys)] == ["I"]
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "1")  # VLOG lines are INFO lines
    tflog.vlog("anything", 1, "hidden")
    assert capsys.readouterr().err == ""


def test_malformed_variable_names_itself(monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "loud")
    with pytest.raises(ValueError, match="TF_CPP_MIN_LOG_LEVEL"):
        tflog.log("INFO", "x")
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL")
    monkeypatch.setenv("TF_CPP_VMODULE", "cse")
    with pytest.raises(ValueError, match="TF_CPP_VMODULE"):
        tflog.vlog("cse", 1, "x")


def test_unknown_severity():
    with pytest.raises(ValueError, match="severity"):
        tflog.log("DEBUG", "x")
    with pytest.raises(ValueError, match="severity"):
        tflog.log(7, "x")

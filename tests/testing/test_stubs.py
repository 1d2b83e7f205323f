"""tf.compat.v1.test.StubOutForTesting (Set/SmartSet and their undoing, staticmethods kept,
instance vs class stubbing) and test_src_dir_path (Bazel's runfiles layout)."""

from __future__ import annotations

import os
import types

import pytest

import ndflow as tf

v1 = tf.compat.v1


class _Base:
    def greet(self):
        return "base"

    @staticmethod
    def static():
        return "static"


class _Child(_Base):
    pass


def test_set_and_unset_in_reverse_order():
    mod = types.ModuleType("m")
    mod.f = lambda: 1
    stubs = v1.test.StubOutForTesting()
    stubs.Set(mod, "f", lambda: 2)
    stubs.Set(mod, "f", lambda: 3)
    assert mod.f() == 3
    stubs.UnsetAll()
    assert mod.f() == 1
    stubs.UnsetAll()  # again: nothing to undo
    assert mod.f() == 1


def test_staticmethods_come_back_as_staticmethods():
    with v1.test.StubOutForTesting() as stubs:
        stubs.Set(_Base, "static", staticmethod(lambda: "stub"))
        assert _Base.static() == "stub"
    assert _Base.static() == "static" and isinstance(_Base.__dict__["static"], staticmethod)
    with v1.test.StubOutForTesting() as stubs:
        stubs.SmartSet(_Base, "static", staticmethod(lambda: "smart"))
        assert _Child().static() == "smart"
    assert isinstance(_Base.__dict__["static"], staticmethod) and _Base.static() == "static"


def test_smart_set_stubs_the_class_of_an_instance():
    child, other = _Child(), _Child()
    stubs = v1.test.StubOutForTesting()
    stubs.SmartSet(child, "greet", lambda self: "stubbed")
    assert other.greet() == "stubbed"  # the class was stubbed, not just `child`
    assert _Base().greet() == "base"   # the base class is untouched
    stubs.CleanUp()
    assert other.greet() == "base"
    stubs.Set(child, "greet", lambda: "instance only")  # Set stubs the instance itself
    assert child.greet() == "instance only" and other.greet() == "base"
    stubs.CleanUp()
    with pytest.raises(AttributeError, match="Attribute not found"):
        stubs.SmartSet(_Base, "missing", 1)
    stubs.SmartSet(os.path, "exists", lambda p: "yes")
    assert os.path.exists("/nope") == "yes"
    stubs.CleanUp()
    assert os.path.exists("/nope") is False


def test_test_src_dir_path(monkeypatch):
    monkeypatch.setenv("TEST_SRCDIR", "/runfiles")
    monkeypatch.setenv("TEST_WORKSPACE", "org_tensorflow")
    assert v1.test.test_src_dir_path("core/platform") == \
        "/runfiles/org_tensorflow/tensorflow/core/platform"
    monkeypatch.delenv("TEST_SRCDIR")
    with pytest.raises(KeyError):
        v1.test.test_src_dir_path("x")

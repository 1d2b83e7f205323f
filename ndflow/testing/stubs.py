"""TF1's test helpers `tf.compat.v1.test.StubOutForTesting` (replace attributes for a test and
put them back) and `test_src_dir_path` (a path under the test's runfiles tree)."""

from __future__ import annotations

import inspect
import os

from ndflow.core.api_export import tf_export


@tf_export(v1=["test.test_src_dir_path"])
def test_src_dir_path(relative_path):
    """`$TEST_SRCDIR/$TEST_WORKSPACE/tensorflow/<relative_path>` (Bazel's runfiles layout; a
    KeyError when those variables are unset, as TF)."""
    return os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"], "tensorflow",
                        relative_path)


test_src_dir_path.__test__ = False  # a helper, not a test, for pytest's collection


@tf_export(v1=["test.StubOutForTesting"])
class StubOutForTesting:
    """Stubs attributes out; `CleanUp()` (or leaving the `with` block) restores them.

        stubs = StubOutForTesting()
        stubs.Set(os.path, "exists", lambda p: True)
        ...
        stubs.CleanUp()
    """

    def __init__(self):
        self.cache = []  # Set(): (parent, old value, name)
        self.stubs = []  # SmartSet(): (owner, name, old value)

    def __del__(self):
        self.CleanUp()

    def __enter__(self):
        return self

    def __exit__(self, unused_exc_type, unused_exc_value, unused_tb):
        self.CleanUp()

    def CleanUp(self):  # noqa: N802 - TF's names
        """Undoes every SmartSet() and Set()."""
        self.SmartUnsetAll()
        self.UnsetAll()

    def SmartSet(self, obj, attr_name, new_attr):  # noqa: N802
        """Replaces obj.attr_name; for an instance whose own dict lacks it, the attribute is
        replaced on its class (so inheritance is kept), as TF."""
        obj = inspect.unwrap(obj) if callable(obj) and not inspect.isclass(obj) else obj
        if inspect.ismodule(obj) or (not inspect.isclass(obj) and attr_name in obj.__dict__):
            owner = obj
            orig_attr = getattr(obj, attr_name)
        else:
            owner = obj if inspect.isclass(obj) else type(obj)
            try:
                orig_attr = getattr(obj, attr_name)
            except AttributeError:
                raise AttributeError("Attribute not found.") from None
        old = getattr(obj, "__dict__", {}).get(attr_name)
        if isinstance(old, staticmethod):  # getattr unwrapped it: put it back as one
            orig_attr = staticmethod(orig_attr)
        self.stubs.append((owner, attr_name, orig_attr))
        setattr(owner, attr_name, new_attr)

    def SmartUnsetAll(self):  # noqa: N802
        """Reverses SmartSet() calls, last first."""
        for args in reversed(self.stubs):
            setattr(*args)
        self.stubs = []

    def Set(self, parent, child_name, new_child):  # noqa: N802
        """Replaces parent.child_name (on `parent` itself, even an instance)."""
        old_child = getattr(parent, child_name)
        old = parent.__dict__.get(child_name)
        if isinstance(old, staticmethod):
            old_child = staticmethod(old_child)
        self.cache.append((parent, old_child, child_name))
        setattr(parent, child_name, new_child)

    def UnsetAll(self):  # noqa: N802
        """Reverses Set() calls, last first (so a name set twice gets its original back)."""
        for parent, old_child, child_name in reversed(self.cache):
            setattr(parent, child_name, old_child)
        self.cache = []

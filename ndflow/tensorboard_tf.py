"""ndflow as the TensorFlow of the `tensorboard` package's TensorFlow-side APIs.

TensorBoard's summary APIs (`tensorboard.plugins.hparams.api`, `tensorboard.summary.v2`, the
plugins' `summary_v2` modules) write through `import tensorflow as tf` (directly or through
`tensorboard.compat.tf`). Where TensorFlow itself is not installed, an `import tensorflow`
made for one of those modules gets ndflow: `hp.hparams(...)` then writes to the default
writer of the program's `import ndflow as tf`, as in TensorFlow. A finder at the end of
`sys.meta_path` does it, so an installed TensorFlow is always found first; TensorBoard's
reading side (event processing, the server) keeps its TensorFlow stub unless a TensorFlow-side
API resolved `tensorboard.compat.tf` first in the process (which caches it), and once served,
`sys.modules["tensorflow"]` is ndflow, as after any import.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

_API_MODULES = ("summary", "summary_v2", "api", "_keras")


def _tensorboard_api(name: str) -> bool:
    """A module of TensorBoard's TensorFlow-side API (the plugins' summary writers, the
    hparams API): `tensorboard.plugins.<plugin>.<one of _API_MODULES>`."""
    parts = name.split(".")
    return len(parts) == 4 and parts[:2] == ["tensorboard", "plugins"] and \
        parts[3] in _API_MODULES


def _from_tensorboard_api() -> bool:
    """Whether a TensorBoard API module's code is on the stack (the import is its own or
    its lazy `tensorboard.compat.tf` being resolved for it)."""
    frame = sys._getframe(2)
    while frame is not None:
        if _tensorboard_api(frame.f_globals.get("__name__", "")):
            return True
        frame = frame.f_back
    return False


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return sys.modules["ndflow"]

    def exec_module(self, module) -> None:
        """ndflow is imported already."""


class _TensorBoardFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorflow" or "ndflow" not in sys.modules:
            return None
        if not _from_tensorboard_api():
            return None
        return importlib.util.spec_from_loader(fullname, _Loader())


def install() -> None:
    """Adds the finder (once) after the standard ones."""
    if not any(isinstance(f, _TensorBoardFinder) for f in sys.meta_path):
        sys.meta_path.append(_TensorBoardFinder())


__all__ = ["install"]

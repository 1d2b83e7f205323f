"""`tf.compat.v1.app.run`: absl's `app.run` with TensorFlow's tolerant flag parsing."""

from __future__ import annotations

import sys

from absl import app as _absl_app

from ndflow.core import flags
from ndflow.core.api_export import tf_export


def _parse_flags_tolerate_undef(argv):
    """Parses the known flags; unknown ones stay in the returned argv (absl would exit)."""
    return flags.FLAGS(sys.argv if argv is None else argv, known_only=True)


@tf_export(v1=["app.run"])
def run(main=None, argv=None):
    """Runs `main(argv)` (default: the `main` of the program's `__main__` module) after
    parsing the command-line flags, then exits with its return value (absl's `app.run`)."""
    main = main or sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)

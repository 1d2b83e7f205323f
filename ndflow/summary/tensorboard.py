"""`python -m ndflow.summary.tensorboard --logdir DIR [--port N] [--host H]`: serves event
files with the `tensorboard` package ndflow depends on (the same as its `tensorboard`
command), so logs written by ndflow are viewed without installing TensorFlow."""

from __future__ import annotations

import sys

from tensorboard import main as tensorboard_main


def main(argv=None) -> int:
    """Runs TensorBoard's own command line on `argv` (default: sys.argv[1:]); absl's app.run
    parses sys.argv, which is restored afterwards."""
    saved = sys.argv
    sys.argv = ["tensorboard", *(sys.argv[1:] if argv is None else argv)]
    try:
        return tensorboard_main.run_main()
    finally:
        sys.argv = saved


if __name__ == "__main__":
    sys.exit(main())

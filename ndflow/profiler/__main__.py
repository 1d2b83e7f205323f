"""`python -m ndflow.profiler ... script.py [args]` (see ndflow/profiler/cli.py)."""

import sys

from ndflow.profiler.cli import main

sys.exit(main())

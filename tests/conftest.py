"""Test-session set-up shared by every directory.

`NDFLOW_OP_NAMES`: the ops ndflow itself registers, recorded before any test module registers
test ops of its own (tests/ops/test_registry.py checks only these).
"""

import ndflow  # noqa: F401 - registers every op, kernel and gradient
from ndflow.ops.op_def import REGISTRY

NDFLOW_OP_NAMES = frozenset(REGISTRY)

"""Atomic file writes: a file is either its old bytes or its new ones, never half-written
(checkpoints, logs, reports and caches all write through here)."""

from __future__ import annotations

import os
import uuid


def atomic_write(path: str, data: bytes) -> None:
    """Writes `data` to `path` through a temporary file and `os.replace`."""
    tmp = f"{path}.tmp{uuid.uuid4().hex}"
    try:
        with open(tmp, "xb") as f:  # default permissions, unlike mkstemp's 0600
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

"""Replacing a directory tree in one step.

On Linux, `renameat2(RENAME_EXCHANGE)` swaps the finished temporary tree and the existing
SavedModel atomically: a reader (or a crash) sees the old tree or the new one, never none.
Elsewhere (or on file systems without the flag) the old tree is renamed aside, the new one
renamed in, and the old one removed: two renames, a window of a few microseconds.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import uuid

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _libc_renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _libc_renameat2()


def _exchange(a: str, b: str) -> bool:
    """Swaps paths `a` and `b` atomically; False when the system cannot."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL / ENOSYS / EOPNOTSUPP: not supported here
        return False
    raise OSError(err, os.strerror(err), b)


def replace_tree(tmp: str, target: str) -> None:
    """Puts the directory `tmp` at `target`, replacing any directory there."""
    if not os.path.isdir(target):
        os.rename(tmp, target)
        return
    if _exchange(tmp, target):
        shutil.rmtree(tmp, ignore_errors=True)  # now the old tree
        return
    old = f"{target}.old-{uuid.uuid4().hex}"
    os.rename(target, old)
    os.rename(tmp, target)
    shutil.rmtree(old, ignore_errors=True)

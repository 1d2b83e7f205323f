"""Writing saved files whole or not at all: the content goes to a new file beside the target,
which replaces the target only once it is complete (`os.replace`), so a failure part-way
(an error, a full disk, an interrupt) leaves the previous file as it was and no partial one.
Also Keras' overwrite prompt."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets


def ask_to_proceed_with_overwrite(filepath: str) -> bool:
    """Keras' prompt (`input()`; without a terminal it raises EOFError, as Keras' does)."""
    answer = input(f"[WARNING] {filepath} already exists - overwrite? [y/n]").strip().lower()
    while answer not in ("y", "n"):
        answer = input('Enter "y" (overwrite) or "n" (cancel).').strip().lower()
    if answer == "n":
        return False
    print("[TIP] Next time specify overwrite=True!")
    return True


@contextlib.contextmanager
def atomic_path(filepath: str):
    """Yields a temporary path in `filepath`'s directory to write to; on success it replaces
    `filepath`, on failure it is removed."""
    directory = os.path.dirname(os.path.abspath(filepath))
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, f"No such directory to save into: '{directory}'",
                                filepath)
    base = os.path.basename(filepath)
    tmp = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
    # created like an ordinary new file (mode 0o666 less the umask), not mkstemp's 0o600
    os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    try:
        yield tmp
        os.replace(tmp, filepath)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise

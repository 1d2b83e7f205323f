"""A bundle tensor's bytes read with one copy: from the data file straight into the buffer
that becomes the tensor (`readinto`), then CRC-32C checked in place.

`google_crc32c.value` only takes `bytes` (a copy of 100 MiB costs more than the checksum), so
the check calls the same library's C function (`crc32c_extend` of the libcrc32c that the
`google_crc32c` wheel ships) on the buffer's address; where that library cannot be found,
it falls back to `google_crc32c.value` on a copy.
"""

from __future__ import annotations

import ctypes
import glob
import os

import google_crc32c

_CHUNK = 64 << 20  # readinto at most this much per call (some systems cap one read at 2 GiB)


def _load_extend():
    base = os.path.dirname(os.path.abspath(google_crc32c.__file__))
    for path in sorted(glob.glob(os.path.join(base, "..", "google_crc32c.libs", "libcrc32c*"))
                       + glob.glob(os.path.join(base, "libcrc32c*"))):
        try:
            fn = ctypes.CDLL(path).crc32c_extend
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_uint32
        fn.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
        if fn(0, b"123456789", 9) == 0xE3069283:  # the CRC-32C check value
            return fn
    return None


_EXTEND = _load_extend()


def buffer_at(address: int, nbytes: int) -> memoryview:
    """A writable byte view of memory that an ATen tensor or NumPy array owns (taking a
    tensor's `.numpy()` view instead would pin its storage: assigning it to a variable would
    then clone it)."""
    return memoryview((ctypes.c_char * nbytes).from_address(address)).cast("B")


def crc32c_at(address: int, nbytes: int) -> int:
    """CRC-32C of `nbytes` bytes at `address`, without copying them (ctypes releases the GIL
    while it runs)."""
    if not nbytes:
        return 0
    if _EXTEND is None:
        return google_crc32c.value(bytes(buffer_at(address, nbytes)))
    return _EXTEND(0, address, nbytes)


def read_into(f, offset: int, view: memoryview) -> int:
    """Reads file `f` (unbuffered, binary) from `offset` into the byte view `view`; the
    number of bytes read (less than its size at the end of the file)."""
    f.seek(offset)
    done = 0
    while done < len(view):
        n = f.readinto(view[done:done + _CHUNK])
        if not n:
            break
        done += n
    return done

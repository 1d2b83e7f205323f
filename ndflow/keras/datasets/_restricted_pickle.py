"""Reads the pickled CIFAR batches without running code from the file.

CIFAR's "python version" batches are Python 2 pickles (protocol 2) of a dict: byte-string
keys (b'data', b'labels', ...), lists of ints and byte strings, and one NumPy array. Plain
containers, numbers and strings are pickle opcodes that construct nothing by name; the array
is the only thing the stream names: `numpy.core.multiarray._reconstruct`, `numpy.ndarray`
and `numpy.dtype`. `find_class` resolves exactly those names (to the running NumPy's
objects, whatever its module layout) and refuses every other one, so a crafted file that
names `os.system`, `builtins.eval` or `subprocess.Popen` fails before anything runs.
"""

import io
import pickle

import numpy as np

# np.ndarray.__reduce__ names NumPy's array reconstructor (numpy.core.multiarray in NumPy 1,
# numpy._core.multiarray in NumPy 2); take the function from there, not by a private import.
_RECONSTRUCT = np.zeros(0).__reduce__()[0]
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy._core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
}


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickles arrays, lists, tuples, dicts, numbers and strings only."""

    def find_class(self, module, name):
        found = _ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(
                f"Refusing to load `{module}.{name}`: a dataset batch holds only arrays, "
                "lists, dicts, numbers and strings, and nothing else is unpickled from it. "
                "The file may be corrupted or malicious.")
        return found


def load_restricted(data: bytes):
    """The object pickled in `data`, Python 2 strings read as bytes (as Keras does)."""
    return RestrictedUnpickler(io.BytesIO(data), encoding="bytes").load()

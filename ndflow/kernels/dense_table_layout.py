"""TensorFlow's bucket layout of a `MutableDenseHashTable`, which its export and import use
and its checkpoints store ("-keys"/"-values" of shape [num_buckets, 1]).

ndflow keeps a dense table's entries in a dict like the other tables, but exports them as
TensorFlow's open-addressing array: `num_buckets` (a power of 2, from
`initial_num_buckets`, doubled as TensorFlow does when an insert would pass
`max_load_factor`) rows, free ones holding `empty_key` (values 0), each key in the bucket
TensorFlow's lookup probes for it: `hash & (num_buckets - 1)`, then quadratic probing
(+1, +2, +3, ...). The hash is TensorFlow's `HashScalar`: the integer itself as uint64, a
string's Hash64. TensorFlow's import copies the array as it is, so a checkpoint ndflow
writes is looked up correctly by TensorFlow; ndflow's import reads back every row that is
neither `empty_key` nor `deleted_key`.
"""

from __future__ import annotations

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.string_hash import legacy_hash64

_U64 = (1 << 64) - 1


class DenseLayout:
    """A dense table's reserved keys and bucket count."""

    def __init__(self, empty_key, deleted_key, num_buckets: int, max_load_factor: float):
        if num_buckets < 4 or num_buckets & (num_buckets - 1):
            raise InvalidArgumentError(None, None, f"Number of buckets must be at least 4 "
                                       f"and a power of 2, got: {num_buckets}")
        self.empty_key = empty_key
        self.deleted_key = deleted_key
        self.num_buckets = num_buckets
        self.max_load_factor = max_load_factor

    def grow_for(self, pending_entries: int) -> None:
        """Doubles the bucket count as TensorFlow's Insert does before adding entries."""
        if pending_entries > self.num_buckets * self.max_load_factor:
            n = self.num_buckets
            while pending_entries > n * self.max_load_factor:
                n <<= 1
            self.num_buckets = n

    def buckets(self, entries: dict, value_zero) -> tuple[list, list]:
        """(keys, values) bucket lists of length `num_buckets` holding `entries`."""
        self.grow_for(len(entries))
        mask = self.num_buckets - 1
        keys = [self.empty_key] * self.num_buckets
        values = [value_zero] * self.num_buckets
        for key, value in entries.items():
            index, probes = hash_scalar(key) & mask, 0
            while keys[index] != self.empty_key:
                probes += 1
                index = (index + probes) & mask
            keys[index], values[index] = key, value
        return keys, values

    def entries(self, keys: list, values: list) -> dict:
        """The {key: value} held by imported bucket rows (free and erased rows dropped); the
        bucket count becomes the rows' count, as TensorFlow's import makes it."""
        n = len(keys)
        if n >= 4 and not n & (n - 1):
            self.num_buckets = n
        return {k: v for k, v in zip(keys, values)
                if k != self.empty_key and k != self.deleted_key}


def hash_scalar(key) -> int:
    """TensorFlow's HashScalar of one key (lookup_table_op.cc)."""
    if isinstance(key, (bytes, str)):
        return legacy_hash64(key.encode() if isinstance(key, str) else key)
    return int(key) & _U64

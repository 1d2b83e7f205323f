"""`tf.nest`: nested structures of lists, tuples, namedtuples and dicts (dicts in sorted key
order, as TensorFlow flattens them)."""

from __future__ import annotations

from collections.abc import Callable

from ndflow.core.api_export import tf_export


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=repr)


# `expand_composites` (TF): whether composite tensors (SparseTensor, RaggedTensor) count as
# structures. ndflow has no composite tensors, so both settings give the same result.


@tf_export("nest.is_nested")
def is_nested(seq) -> bool:
    """Whether `seq` is a structure (list, tuple, namedtuple or dict) rather than a leaf."""
    return isinstance(seq, (list, tuple, dict))


@tf_export("nest.flatten")
def flatten(structure, expand_composites: bool = False) -> list:
    """The leaves of `structure`, depth first."""
    if isinstance(structure, dict):
        return [x for k in _sorted_keys(structure) for x in flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [x for s in structure for x in flatten(s)]
    return [structure]


def flatten_with_tuple_paths(structure, expand_composites: bool = False) -> list:
    """(path, leaf) pairs, depth first; a path is the tuple of keys and indices to a leaf."""
    if isinstance(structure, dict):
        return [((k,) + path, leaf) for k in _sorted_keys(structure)
                for path, leaf in flatten_with_tuple_paths(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [((i,) + path, leaf) for i, s in enumerate(structure)
                for path, leaf in flatten_with_tuple_paths(s)]
    return [((), structure)]


@tf_export("nest.pack_sequence_as")
def pack_sequence_as(structure, flat_sequence, expand_composites: bool = False) -> object:
    """`structure` rebuilt with its leaves taken in order from `flat_sequence`."""
    it = iter(flat_sequence)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in _sorted_keys(s)}
            return type(s)((k, built[k]) for k in s) if type(s) is not dict else \
                {k: built[k] for k in s}
        if isinstance(s, (list, tuple)):
            items = [build(x) for x in s]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return next(it)

    return build(structure)


@tf_export("nest.map_structure")
def map_structure(func: Callable, *structures):
    """`func` applied leafwise to structures of the same shape."""
    flats = [flatten(s) for s in structures]
    if any(len(f) != len(flats[0]) for f in flats):
        raise ValueError("The two structures don't have the same number of elements.")
    return pack_sequence_as(structures[0], [func(*xs) for xs in zip(*flats)])


def _shape_of(s, check_types: bool):
    if isinstance(s, dict):
        return ("dict" if not check_types else type(s).__name__,
                tuple((k, _shape_of(s[k], check_types)) for k in _sorted_keys(s)))
    if isinstance(s, (list, tuple)):
        kind = type(s).__name__ if check_types else "seq"
        return (kind, tuple(_shape_of(x, check_types) for x in s))
    return None


@tf_export("nest.assert_same_structure")
def assert_same_structure(nest1, nest2, check_types: bool = True,
                          expand_composites: bool = False) -> None:
    """Raises ValueError when the two structures nest differently (TypeError when only their
    sequence types differ and `check_types`)."""
    if _shape_of(nest1, False) != _shape_of(nest2, False):
        raise ValueError("The two structures don't have the same nested structure.\n\n"
                         f"First structure: {nest1}\n\nSecond structure: {nest2}")
    if check_types and _shape_of(nest1, True) != _shape_of(nest2, True):
        raise TypeError("The two structures don't have the same sequence type. First "
                        f"structure: {nest1}, second structure: {nest2}.")

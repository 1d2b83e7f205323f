"""`tf.nest`: nested structures of lists, tuples, namedtuples and dicts (dicts in sorted key
order, as TensorFlow flattens them)."""

from __future__ import annotations

from collections.abc import Callable

from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import is_composite


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=repr)


# `expand_composites` (TF): whether composite tensors (RaggedTensor and its RaggedTensorSpec,
# core/composite_tensor.py) count as structures of their component tensors. Inside ndflow
# they always do (the default of these functions): tf.function, tf.data and the other
# machinery carry a composite as its components, as they carry a SparseTensor's named tuple.
# The public `tf.nest` functions (the `*_public` wrappers below) keep TensorFlow's default,
# where a composite is one leaf unless `expand_composites=True`.


@tf_export("nest.is_nested")
def is_nested(seq) -> bool:
    """Whether `seq` is a structure (list, tuple, namedtuple or dict) rather than a leaf."""
    return isinstance(seq, (list, tuple, dict))


def flatten(structure, expand_composites: bool = True) -> list:
    """The leaves of `structure`, depth first (composites as their components)."""
    if isinstance(structure, dict):
        return [x for k in _sorted_keys(structure)
                for x in flatten(structure[k], expand_composites)]
    if isinstance(structure, (list, tuple)):
        return [x for s in structure for x in flatten(s, expand_composites)]
    if expand_composites and is_composite(structure):
        return flatten(structure._to_components(), True)
    return [structure]


@tf_export("nest.flatten")
def flatten_public(structure, expand_composites: bool = False) -> list:
    """`tf.nest.flatten`: the leaves of `structure`, depth first."""
    return flatten(structure, expand_composites)


def flatten_with_tuple_paths(structure, expand_composites: bool = True) -> list:
    """(path, leaf) pairs, depth first; a path is the tuple of keys and indices to a leaf."""
    if isinstance(structure, dict):
        return [((k,) + path, leaf) for k in _sorted_keys(structure)
                for path, leaf in flatten_with_tuple_paths(structure[k], expand_composites)]
    if isinstance(structure, (list, tuple)):
        return [((i,) + path, leaf) for i, s in enumerate(structure)
                for path, leaf in flatten_with_tuple_paths(s, expand_composites)]
    if expand_composites and is_composite(structure):
        return flatten_with_tuple_paths(structure._to_components(), True)
    return [((), structure)]


def pack_sequence_as(structure, flat_sequence, expand_composites: bool = True) -> object:
    """`structure` rebuilt with its leaves taken in order from `flat_sequence` (a composite
    rebuilt around the components taken for it)."""
    return _pack(structure, iter(flat_sequence), expand_composites)


def _pack(s, it, expand_composites: bool):
    # a module-level recursion, not a closure that names itself: such a closure is a
    # reference cycle that kept every packed leaf (a tf.function's output tensors) alive
    # until Python's cycle collector ran, so each step's buffers outlived the step
    if isinstance(s, dict):
        built = {k: _pack(s[k], it, expand_composites) for k in _sorted_keys(s)}
        return type(s)((k, built[k]) for k in s) if type(s) is not dict else \
            {k: built[k] for k in s}
    if isinstance(s, (list, tuple)):
        items = [_pack(x, it, expand_composites) for x in s]
        return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
    if expand_composites and is_composite(s):
        return s._from_components_like(_pack(s._to_components(), it, expand_composites))
    return next(it)


@tf_export("nest.pack_sequence_as")
def pack_sequence_as_public(structure, flat_sequence, expand_composites: bool = False):
    """`tf.nest.pack_sequence_as`: `structure` rebuilt with the leaves of `flat_sequence`."""
    return pack_sequence_as(structure, flat_sequence, expand_composites)


def map_structure(func: Callable, *structures, expand_composites: bool = True):
    """`func` applied leafwise to structures of the same shape."""
    flats = [flatten(s, expand_composites) for s in structures]
    if any(len(f) != len(flats[0]) for f in flats):
        raise ValueError("The two structures don't have the same number of elements.")
    return pack_sequence_as(structures[0], [func(*xs) for xs in zip(*flats)],
                            expand_composites)


@tf_export("nest.map_structure")
def map_structure_public(func: Callable, *structures, **kwargs):
    """`tf.nest.map_structure`: `func` applied leafwise to structures of the same shape
    (`check_types` is accepted; the structures' leaf counts are what is checked)."""
    expand = bool(kwargs.pop("expand_composites", False))
    kwargs.pop("check_types", None)
    if kwargs:
        raise TypeError(f"map_structure() got unexpected keyword arguments: {sorted(kwargs)}")
    return map_structure(func, *structures, expand_composites=expand)


def _shape_of(s, check_types: bool, expand: bool):
    if isinstance(s, dict):
        return ("dict" if not check_types else type(s).__name__,
                tuple((k, _shape_of(s[k], check_types, expand)) for k in _sorted_keys(s)))
    if isinstance(s, (list, tuple)):
        kind = type(s).__name__ if check_types else "seq"
        return (kind, tuple(_shape_of(x, check_types, expand) for x in s))
    if expand and is_composite(s):
        return ("composite", _shape_of(s._to_components(), check_types, expand))
    return None


@tf_export("nest.assert_same_structure")
def assert_same_structure(nest1, nest2, check_types: bool = True,
                          expand_composites: bool = False) -> None:
    """Raises ValueError when the two structures nest differently (TypeError when only their
    sequence types differ and `check_types`)."""
    e = bool(expand_composites)
    if _shape_of(nest1, False, e) != _shape_of(nest2, False, e):
        raise ValueError("The two structures don't have the same nested structure.\n\n"
                         f"First structure: {nest1}\n\nSecond structure: {nest2}")
    if check_types and _shape_of(nest1, True, e) != _shape_of(nest2, True, e):
        raise TypeError("The two structures don't have the same sequence type. First "
                        f"structure: {nest1}, second structure: {nest2}.")


for _public, _name in ((flatten_public, "flatten"), (pack_sequence_as_public, "pack_sequence_as"),
                       (map_structure_public, "map_structure")):
    _public.__name__ = _public.__qualname__ = _name

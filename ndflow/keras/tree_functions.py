"""`tf.keras.tree` (Keras 3's nested-structure utilities, optree semantics): lists, tuples,
namedtuples and dicts are nodes (dict children in sorted key order, OrderedDict in insertion
order), everything else (None, strings, arrays, tensors) is a leaf. (Not named tree.py: a
module named like a public namespace becomes that namespace.)"""

from __future__ import annotations

from collections import OrderedDict, defaultdict

from ndflow.core.api_export import keras_export


@keras_export("keras.tree.MAP_TO_NONE")
class MAP_TO_NONE:  # noqa: N801 - Keras' name
    """A marker a `traverse` function returns to replace the visited node with None (a
    plain None return means "keep going")."""


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_node(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def _keys(node) -> list:
    if isinstance(node, dict):
        if isinstance(node, OrderedDict):
            return list(node)
        try:
            return sorted(node)
        except TypeError:
            return sorted(node, key=repr)
    if _is_namedtuple(node):
        return list(node._fields)
    return list(range(len(node)))


def _children(node) -> list:
    if isinstance(node, dict):
        return [node[k] for k in _keys(node)]
    return list(node)


def _rebuild(node, children):
    if isinstance(node, dict):
        pairs = list(zip(_keys(node), children))
        if isinstance(node, defaultdict):
            out = defaultdict(node.default_factory)
            out.update(pairs)
            return out
        if isinstance(node, OrderedDict):
            return type(node)(pairs)
        rebuilt = type(node)(pairs) if type(node) is not dict else dict(pairs)
        return {k: rebuilt[k] for k in node} if type(node) is dict else rebuilt
    if _is_namedtuple(node):
        return type(node)(*children)
    if isinstance(node, tuple):
        return tuple(children) if type(node) is tuple else type(node)(children)
    return list(children) if type(node) is list else type(node)(children)


@keras_export("keras.tree.is_nested")
def is_nested(structure):
    """Whether `structure` is a node (a list, tuple, namedtuple or dict) rather than a leaf.

    Args:
      structure: any value.

    Returns:
      A bool.

    Example:

    >>> tf.keras.tree.is_nested([1, 2]), tf.keras.tree.is_nested("ab")
    (True, False)
    """
    return _is_node(structure)


@keras_export("keras.tree.flatten")
def flatten(structure):
    """The leaves of a nested structure, in order (dict values by sorted key).

    Args:
      structure: a leaf or a nest of lists, tuples, namedtuples and dicts.

    Returns:
      A list of the leaves (`[structure]` for a leaf).

    Example:

    >>> tf.keras.tree.flatten({"b": [2, 3], "a": 1})
    [1, 2, 3]
    """
    if not _is_node(structure):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child))
    return out


@keras_export("keras.tree.flatten_with_path")
def flatten_with_path(structure):
    """The leaves of a nested structure with their paths.

    Args:
      structure: a leaf or a nest.

    Returns:
      A list of `(path, leaf)` pairs; a path is the tuple of keys and indices leading to
      the leaf.

    Example:

    >>> tf.keras.tree.flatten_with_path({"a": [5, 6]})
    [(('a', 0), 5), (('a', 1), 6)]
    """
    def walk(node, path):
        if not _is_node(node):
            return [(path, node)]
        out = []
        for key, child in zip(_keys(node), _children(node)):
            out.extend(walk(child, path + (key,)))
        return out
    return walk(structure, ())


def _mismatch(a, b):
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        return f"Expected an instance of {type(a).__name__}, got {b!r}."
    if isinstance(a, dict):
        ka, kb = _keys(a), _keys(b)
        if set(ka) != set(kb):
            return (f"dictionary key mismatch; expected key(s): {ka}, got key(s): {kb}, "
                    f"missing key(s): {sorted(set(ka) - set(kb), key=repr)}, extra key(s): "
                    f"{sorted(set(kb) - set(ka), key=repr)}; dict: {b!r}.")
    elif len(a) != len(b):
        return f"{type(a).__name__} arity mismatch; expected: {len(a)}, got: {len(b)}; " \
               f"{type(a).__name__}: {b!r}."
    return None


def _zip_children(first, other):
    problem = _mismatch(first, other)
    if problem:
        raise ValueError(problem)
    if isinstance(first, dict):
        return [other[k] for k in _keys(first)]
    return list(other)


@keras_export("keras.tree.map_structure")
def map_structure(func, *structures, none_is_leaf=True):
    """Applies `func` to the leaves of one or more structures of the same shape, building
    a structure like the first.

    Args:
      func: a callable taking one leaf from each structure.
      *structures: nests with the same structure (dicts matched by key).
      none_is_leaf: whether None leaves are passed to `func` (else they stay None).

    Returns:
      A structure like `structures[0]` holding `func`'s results.

    Raises:
      TypeError: no structure given.
      ValueError: the structures differ (types, lengths or dict keys).

    Example:

    >>> tf.keras.tree.map_structure(lambda a, b: a + b, (1, [2]), (10, [20]))
    (11, [22])
    """
    if not structures:
        raise TypeError("Must provide at least one structure")
    return _map(func, none_is_leaf, list(structures))


# The walks below are module-level recursions, not closures that name themselves: such a
# closure is a reference cycle, which kept what it captured (the leaves, `func`) alive until
# Python's cycle collector ran.
def _map(func, none_is_leaf: bool, nodes: list):
    first = nodes[0]
    if first is None and not none_is_leaf:
        return None
    if not _is_node(first):
        return func(*nodes)
    columns = [_children(first)] + [_zip_children(first, n) for n in nodes[1:]]
    return _rebuild(first, [_map(func, none_is_leaf, list(c)) for c in zip(*columns)])


@keras_export("keras.tree.map_structure_up_to")
def map_structure_up_to(shallow_structure, func, *structures):
    """Like `map_structure`, but only down to the leaves of `shallow_structure`: deeper
    parts of `structures` are passed to `func` whole.

    Args:
      shallow_structure: the structure that decides where the "leaves" are.
      func: a callable taking one such sub-structure from each structure.
      *structures: nests that match `shallow_structure` at its levels.

    Returns:
      A structure like `shallow_structure` holding `func`'s results.

    Raises:
      ValueError: a structure does not match `shallow_structure`.

    Example:

    >>> tf.keras.tree.map_structure_up_to((None, None), len, ([1, 2], [3]))
    (2, 1)
    """
    return _map_up_to(func, shallow_structure, list(structures))


def _map_up_to(func, shallow, nodes: list):
    if not _is_node(shallow):
        return func(*nodes)
    columns = [_zip_children(shallow, n) for n in nodes]
    return _rebuild(shallow, [_map_up_to(func, s, list(c)) for s, c in
                              zip(_children(shallow), zip(*columns))])


@keras_export("keras.tree.assert_same_structure")
def assert_same_structure(a, b, check_types=None):
    """Checks that two structures have the same nesting (leaf values may differ).

    Args:
      a: a nest.
      b: a nest.
      check_types: accepted for Keras' signature (types are always compared, except that
        any two dicts match).

    Raises:
      ValueError: the nesting, node types, lengths or dict keys differ.
    """
    def walk(x, y):
        if _is_node(x) != _is_node(y):
            raise ValueError("Structures don't have the same nested structure.")
        if _is_node(x):
            for cx, cy in zip(_children(x), _zip_children(x, y)):
                walk(cx, cy)
    walk(a, b)


@keras_export("keras.tree.assert_same_paths")
def assert_same_paths(a, b):
    """Checks that two structures have the same set of leaf paths (node types may differ:
    a list and a tuple of the same length have the same paths).

    Args:
      a: a nest.
      b: a nest.

    Raises:
      ValueError: the paths differ (the message lists those missing on each side).
    """
    a_paths = {p for p, _ in flatten_with_path(a)}
    b_paths = {p for p, _ in flatten_with_path(b)}
    if a_paths != b_paths:
        msg = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            msg += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            msg += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(msg)


@keras_export("keras.tree.pack_sequence_as")
def pack_sequence_as(structure, flat_sequence):
    """The leaves of `flat_sequence` packed into the shape of `structure` (the inverse of
    `flatten`).

    Args:
      structure: a nest giving the shape.
      flat_sequence: as many leaves as `structure` has, in `flatten`'s order.

    Returns:
      A structure like `structure` holding the new leaves.

    Raises:
      ValueError: the number of leaves differs.

    Example:

    >>> tf.keras.tree.pack_sequence_as({"a": 0, "b": (0, 0)}, [1, 2, 3])
    {'a': 1, 'b': (2, 3)}
    """
    flat = list(flat_sequence)
    count = len(flatten(structure))
    if len(flat) != count:
        raise ValueError(f"Too {'few' if len(flat) < count else 'many'} leaves for "
                         f"PyTreeSpec; expected: {count}, got: {len(flat)}.")
    return _pack(structure, iter(flat))


def _pack(node, it):
    if not _is_node(node):
        return next(it)
    return _rebuild(node, [_pack(c, it) for c in _children(node)])


@keras_export("keras.tree.traverse")
def traverse(func, structure, top_down=True):
    """Calls `func` on every node and leaf of a structure, letting it replace them.

    Top-down, `func` sees each node before its children: a non-None result replaces the
    whole subtree (return `MAP_TO_NONE` to replace it with None); None means descend.
    Bottom-up, `func` sees each node after its children were traversed, the node rebuilt
    from them.

    Args:
      func: a callable on a node or leaf.
      structure: a nest.
      top_down: the order (default True).

    Returns:
      The new structure.

    Example:

    >>> tf.keras.tree.traverse(lambda x: x * 10 if isinstance(x, int) else None, [1, (2,)])
    [10, (20,)]
    """
    def children_done(node):
        if not _is_node(node):
            return node
        return _rebuild(node, [traverse(func, c, top_down) for c in _children(node)])

    if top_down:
        ret = func(structure)
        if ret is None:
            return children_done(structure)
    else:
        done = children_done(structure)
        ret = func(done)
        if ret is None:
            return done
    return None if ret is MAP_TO_NONE else ret


@keras_export("keras.tree.lists_to_tuples")
def lists_to_tuples(structure):
    """`structure` with every list (at any depth) turned into a tuple.

    Args:
      structure: a nest.

    Returns:
      The converted structure.

    Example:

    >>> tf.keras.tree.lists_to_tuples([1, [2, 3]])
    (1, (2, 3))
    """
    return traverse(lambda x: tuple(x) if isinstance(x, list) else None, structure,
                    top_down=False)


def _is_shape(x) -> bool:
    return isinstance(x, (list, tuple)) and all(isinstance(e, (int, type(None))) for e in x)


@keras_export("keras.tree.map_shape_structure")
def map_shape_structure(func, structure):
    """Applies `func` to each shape in a nest of shapes (a shape being a list or tuple of
    ints and None, which other maps would descend into).

    Args:
      func: a callable taking a shape (or another leaf).
      structure: a nest whose leaves are shapes.

    Returns:
      The structure with `func`'s results in place of the shapes.

    Example:

    >>> tf.keras.tree.map_shape_structure(len, {"a": (2, 3), "b": [(None, 4, 5)]})
    {'a': 2, 'b': [3]}
    """
    if _is_shape(structure) or not _is_node(structure):
        return func(structure)
    return _rebuild(structure, [map_shape_structure(func, c) for c in _children(structure)])

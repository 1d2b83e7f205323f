"""The walks over nested Python dicts and lists behind `StructuredTensor.from_pyval` /
`to_pyval` (ops/structured_tensor.py): depths, keys, field-major and node-major layouts."""

from __future__ import annotations


def list_depth(pyval) -> int:
    if not isinstance(pyval, (list, tuple)):
        return 0
    return 1 + max((list_depth(x) for x in pyval), default=0)


def dicts_to_zeros(pyval):
    if isinstance(pyval, dict):
        return 0
    return [dicts_to_zeros(x) for x in pyval]


def struct_keys_and_depth(pyval, keys: dict):
    """The depth of the dicts in a list nest (adding their keys), None if it holds none;
    ValueError when the dicts are at different depths."""
    if isinstance(pyval, dict):
        keys.update(dict.fromkeys(pyval))
        return 0
    if isinstance(pyval, (list, tuple)):
        depth = None
        for child in pyval:
            d = struct_keys_and_depth(child, keys)
            if d is not None:
                if depth is None:
                    depth = d + 1
                elif depth != d + 1:
                    raise ValueError("Inconsistent depth of dictionaries")
        return depth
    return None


def update_fields(pyval, fields: dict, depth: int):
    """TF's: appends the field values of `pyval` (a dict, or nested lists of dicts, at
    `depth`) to `fields`' nested lists (a structure missing a key: KeyError)."""
    if not isinstance(pyval, (dict, list, tuple)):
        raise ValueError("Expected dict or nested list/tuple of dict")
    for key, target in fields.items():
        for _ in range(1, depth):
            target = target[-1]
        target.append(pyval[key] if isinstance(pyval, dict) else [])
    if isinstance(pyval, (list, tuple)):
        for child in pyval:
            update_fields(child, fields, depth + 1)


def node_major(keys: list, values: list, depth: int):
    """Field-major values (one nested list per key) as a nested list of dicts."""
    if depth == 0:
        return dict(zip(keys, values))
    if not values:
        return []
    return [node_major(keys, list(row), depth - 1) for row in zip(*values)]


def empty_dicts(template):
    if isinstance(template, list):
        return [empty_dicts(x) for x in template]
    return {}

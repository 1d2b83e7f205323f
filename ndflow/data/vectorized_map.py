"""A per-element `map` function run on a chunk of elements at once (TensorFlow's
`map_vectorization`, a small `pfor`): the traced graph is rebuilt with every tensor that
depends on the element given a leading batch dimension, so a chunk of 32 elements costs one
run of ~15 kernels instead of 32 runs (each kernel call costs ~10 µs of dispatch whatever its
size, which dominates the per-element maps of input pipelines).

Only graphs made of ops with a known batching rule are rebuilt (elementwise math, casts,
reshapes, `parse_single_example` of fixed-shape dense features, `decode_raw`, random ops,
axis-taking ops with constant axes, ...); anything else (a stateful op, a capture, a control
edge, an unknown rank) leaves the map per element. A random op draws for the chunk at once,
each element from the kernel's stream as its own run would (so a seeded `map(f).batch(n)`
gives TensorFlow's numbers).

A chunk that fails as a whole (elements of different shapes, a bad record) is run again per
element, so errors and results are exactly the per-element ones.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import context
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import structure
from ndflow.ops import random_seed
from ndflow.ops.apply import constant_value, convert_to_tensor, infer_shapes, output_dtypes
from ndflow.ops.array_core import expand_dims, shape
from ndflow.ops.array_slicing import concat, strided_slice
from ndflow.ops.cast import cast
from ndflow.ops.op_def import BROADCASTING, POINTWISE, REDUCTION, tagged
from ndflow.runtime.function import Function

CHUNK = 64  # elements per vectorized call


class _Unsupported(Exception):
    """The graph has an op without a batching rule here."""


# A unary pointwise op runs on the stacked elements as it is; so do ops that map each leading
# index on its own (DecodeRaw appends a dimension, Bitcast may); a broadcasting op runs on
# operands aligned by `_aligned`; a reduction's axes shift by one (the op tags: ops/op_def.py).
_POINTWISE, _BROADCASTING, _REDUCTIONS = tagged(POINTWISE), tagged(BROADCASTING), tagged(REDUCTION)
_PER_LEADING_INDEX = frozenset({"DecodeRaw", "Bitcast"})
_RANDOM = frozenset("RandomUniform RandomStandardNormal TruncatedNormal RandomUniformInt".split())


def vectorize(traced, flat_specs: list):
    """A callable running `traced` (a TracedFunction) on a list of flat elements at once, or
    None when its graph cannot be rebuilt batched."""
    graph = traced.concrete.graph
    if len(graph.inputs) != len(flat_specs) or not flat_specs:
        return None  # captures (variables, tensors from outside) stay per element
    batched_specs = tuple(TensorSpec([None] + s.shape.as_list(), s.dtype) for s in flat_specs)

    def body(args):
        return _rebuild(graph, list(args))

    fn = Function(body, name=traced.concrete.name + "_vectorized",
                  input_signature=[batched_specs], autograph=False)
    try:
        with context.eager_scope():
            concrete = fn.get_concrete_function()
    except Exception:  # noqa: BLE001 - no batching rule (or a rule's limit): stay per element
        return None
    return VectorizedCall(concrete, flat_specs, traced._out_dtypes)


class VectorizedCall:
    """Runs the rebuilt graph on stacked elements and splits its outputs into elements."""

    def __init__(self, concrete, flat_specs: list, out_dtypes: list):
        self.concrete = concrete
        self._specs = flat_specs
        self._out_dtypes = out_dtypes

    def _run(self, elements: list) -> list:
        cf = self.concrete
        cf._captures()
        plan = cf._plan or cf._build_plan()
        stacked = structure.batch_flat(elements, self._specs)
        outs = plan.run([t._value for t in stacked])
        for v in outs:
            if v.shape[0] != len(elements):
                raise ValueError("a vectorized output lost its batch dimension")
        return outs

    def batched(self, elements: list) -> tuple:
        """The outputs for `elements` stacked: one flat batch."""
        return tuple(EagerTensor(v, dt) for v, dt in zip(self._run(elements), self._out_dtypes))

    def __call__(self, elements: list) -> list:
        """The outputs for `elements`, one flat tuple each."""
        n = len(elements)
        columns = []
        for v, dt in zip(self._run(elements), self._out_dtypes):
            parts = torch.unbind(v) if isinstance(v, torch.Tensor) else \
                [v[i, ...] for i in range(n)]
            columns.append([EagerTensor(p, dt) for p in parts])
        return list(zip(*columns))


# -- rebuilding the graph ------------------------------------------------------------------

def _key(t):
    return (t.op.name, t.value_index)


def _rebuild(graph, args: list) -> list:
    """The ops of `graph` re-created in the current (function) graph on batched `args`."""
    env = {_key(ph): (a, True) for ph, a in zip(graph.inputs, args)}
    count = shape(args[0])[0:1]  # the chunk's size, as a 1-vector
    for op in graph.get_operations():
        if op.type == "Placeholder" and _key(op.outputs[0]) in env:
            continue
        if op.control_inputs:
            raise _Unsupported(op.name)
        ins = [env[_key(t)] for t in op.inputs]
        if op.type in _RANDOM:
            outs, batched = _random(op, ins, count), True
        elif not any(b for _, b in ins):
            if op.is_stateful:
                raise _Unsupported(op.name)
            outs, batched = _clone(op, [t for t, _ in ins]), False
        else:
            outs, batched = _batched(op, ins), True
        for t, new in zip(op.outputs, outs):
            env[_key(t)] = (new, batched)
    result = []
    for t in graph.outputs:
        new, batched = env[_key(t)]
        if not batched:  # the same value for every element: repeated along the chunk
            raise _Unsupported("an output that does not depend on the element")
        result.append(new)
    return result


def _clone(op, inputs: list, attrs: dict | None = None) -> list:
    """`op` with new inputs (and attrs) in the current graph; shapes inferred again."""
    graph = context.get_default_graph()
    attrs = dict(op.attrs if attrs is None else attrs)
    name = graph.unique_name(op.name)
    dts = output_dtypes(op.op_def, attrs)
    shapes = infer_shapes(op.op_def, name, inputs, attrs, len(dts), eager=False)
    return graph.create_op(op.op_def, inputs, attrs, list(zip(dts, shapes)), name).outputs


def _rank(t, batched: bool) -> int:
    rank = t.shape.rank
    if rank is None:
        raise _Unsupported("unknown rank")
    return rank - 1 if batched else rank


def _static(t):
    value = constant_value(t)
    if value is None:
        raise _Unsupported("an axis that is not a constant")
    return np.asarray(value)


def _shift_axes(value, dtype) -> object:
    """Per-element axes -> batched axes: non-negative ones move past the batch dimension."""
    arr = _static(value)
    return convert_to_tensor(np.where(arr >= 0, arr + 1, arr).astype(arr.dtype), dtype)


def _random(op, ins, count) -> list:
    (dims, dims_batched), rest = ins[0], ins[1:]
    if dims_batched or any(b for _, b in rest):
        raise _Unsupported(op.name)
    dims = concat([cast(count, dims.dtype), dims], 0)
    attrs = {**op.attrs, random_seed.ELEMENT_DRAWS_ATTR: True}  # each element's own draw
    return _clone(op, [dims] + [t for t, _ in rest], attrs)


def _batched(op, ins) -> list:
    kind = op.type
    tensors = [t for t, _ in ins]
    if len(ins) == 1 and (kind in _POINTWISE or kind in _PER_LEADING_INDEX):
        return _clone(op, tensors)
    if kind in _BROADCASTING:
        return _clone(op, _aligned(ins))
    rule = _RULES.get(kind) or (_AXES_INPUT_1 if kind in _REDUCTIONS else None)
    if rule is None:
        raise _Unsupported(kind)
    return rule(op, ins)


def _aligned(ins) -> list:
    """Batched operands of an elementwise op given the same per-element rank (unit dims
    after the batch one), so broadcasting pairs element dims as the per-element op did."""
    ranks = [_rank(t, b) for t, b in ins]
    top = max(ranks)
    out = []
    for (t, b), r in zip(ins, ranks):
        for _ in range(top - r if b else 0):
            t = expand_dims(t, 1)
        out.append(t)
    return out


def _only_first_batched(op, ins):
    if not ins[0][1] or any(b for _, b in ins[1:]):
        raise _Unsupported(op.name)
    return [t for t, _ in ins]


def _reshape(op, ins):
    x, dims = _only_first_batched(op, ins)
    return _clone(op, [x, concat([cast(shape(x)[0:1], dims.dtype), dims], 0)])


def _axis_input(position: int):
    """Ops whose input `position` holds axes (ReverseV2, ExpandDims, reductions, ...)."""
    def rule(op, ins):
        tensors = _only_first_batched(op, ins)
        tensors[position] = _shift_axes(tensors[position], tensors[position].dtype)
        return _clone(op, tensors)
    return rule


_AXES_INPUT_1 = _axis_input(1)


def _prepend(position: int, lead):
    """Ops whose input `position` has one entry per dimension (Slice begin/size, Tile
    multiples, Pad paddings): the batch dimension's entry goes first."""
    def rule(op, ins):
        tensors = _only_first_batched(op, ins)
        arr = _static(tensors[position])
        first = np.full((1,) + arr.shape[1:], lead, dtype=arr.dtype)
        tensors[position] = convert_to_tensor(np.concatenate([first, arr]),
                                              tensors[position].dtype)
        return _clone(op, tensors)
    return rule


def _shape(op, ins):
    (x, _), = ins
    full = _clone(op, [x])[0]
    return [strided_slice(full, [1], [0], [1], end_mask=1)]


def _parse_example(op, ins):
    serialized, serialized_batched = ins[0]
    if (not serialized_batched or _rank(serialized, True) != 0
            or any(b for _, b in ins[1:]) or op.attrs.get("num_sparse", 0)
            or op.attrs.get("ragged_value_types")
            or not all(s.is_fully_defined() for s in op.attrs["dense_shapes"])):
        raise _Unsupported(op.name)
    return _clone(op, [t for t, _ in ins])


def _pack(op, ins):
    if not all(b for _, b in ins):
        raise _Unsupported(op.name)
    axis = op.attrs["axis"]
    return _clone(op, [t for t, _ in ins], dict(op.attrs, axis=axis + 1 if axis >= 0 else axis))


def _concat(op, ins):
    values, (axis, axis_batched) = ins[:-1], ins[-1]
    if axis_batched or not all(b for _, b in values):
        raise _Unsupported(op.name)
    return _clone(op, [t for t, _ in values] + [_shift_axes(axis, axis.dtype)])


def _squeeze(op, ins):
    (x, _), = ins
    dims = list(op.attrs.get("squeeze_dims") or [])
    if not dims:  # squeezing every unit dimension would take a chunk of one's batch dim
        raise _Unsupported(op.name)
    return _clone(op, [x], dict(op.attrs, squeeze_dims=[d + 1 if d >= 0 else d for d in dims]))


def _transpose(op, ins):
    x, perm = _only_first_batched(op, ins)
    arr = _static(perm)
    if (arr < 0).any():
        raise _Unsupported(op.name)
    return _clone(op, [x, convert_to_tensor(np.concatenate([[0], arr + 1]).astype(arr.dtype),
                                            perm.dtype)])


def _one_hot(op, ins):
    tensors = _only_first_batched(op, ins)
    axis = op.attrs.get("axis", -1)
    return _clone(op, tensors, dict(op.attrs, axis=axis + 1 if axis >= 0 else axis))


def _gather(op, ins):
    (params, pb), (indices, ib), (axis, ab) = ins
    if pb or not ib or ab or int(_static(axis)) != 0 or op.attrs.get("batch_dims", 0):
        raise _Unsupported(op.name)
    return _clone(op, [params, indices, axis])


def _strided_slice(op, ins):
    """A full slice of the batch dimension goes first: every mask moves up one bit."""
    x, begin, end, strides = _only_first_batched(op, ins)
    specs = []
    for t in (begin, end, strides):
        arr = _static(t)
        specs.append(convert_to_tensor(np.concatenate([[0 if t is not strides else 1], arr])
                                       .astype(arr.dtype), t.dtype))
    attrs = dict(op.attrs)
    for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                 "shrink_axis_mask"):
        attrs[mask] = int(attrs.get(mask, 0)) << 1
    attrs["begin_mask"] |= 1
    attrs["end_mask"] |= 1
    return _clone(op, [x] + specs, attrs)


_RULES = {
    "Reshape": _reshape,
    "StridedSlice": _strided_slice,
    "ReverseV2": _axis_input(1),
    "ExpandDims": _axis_input(1),
    "Shape": _shape,
    "ParseExampleV2": _parse_example,
    "Pack": _pack,
    "ConcatV2": _concat,
    "Squeeze": _squeeze,
    "Transpose": _transpose,
    "OneHot": _one_hot,
    "GatherV2": _gather,
    "Slice": None,  # set below: begin gets 0, size gets -1
    "Tile": _prepend(1, 1),
    "Pad": _prepend(1, 0),
    "PadV2": _prepend(1, 0),
    "MirrorPad": _prepend(1, 0),
}


def _slice(op, ins):
    x, begin, size = _only_first_batched(op, ins)
    b, s = _static(begin), _static(size)
    return _clone(op, [x, convert_to_tensor(np.concatenate([[0], b]).astype(b.dtype),
                                            begin.dtype),
                       convert_to_tensor(np.concatenate([[-1], s]).astype(s.dtype),
                                         size.dtype)])


_RULES["Slice"] = _slice

"""Higher-order functions on tensors, as TensorFlow builds them: `tf.map_fn`, `tf.scan`,
`tf.foldl`/`tf.foldr` (a `tf.while_loop` over TensorArrays of the unstacked elements: one
While op in a graph, a Python loop eagerly, differentiable either way), `tf.case` (nested
`tf.cond`s), `tf.tuple`, and `tf.vectorized_map` (run as map_fn: ndflow has no pfor)."""

from __future__ import annotations

from collections.abc import Callable

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import is_composite
from ndflow.core.doc_tables import attach
from ndflow.core.nest import flatten, map_structure, pack_sequence_as
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import group, identity, shape, stack
from ndflow.ops.cast import cast
from ndflow.ops.comparison import less
from ndflow.ops.control_flow_assert import Assert
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.reduction import reduce_any, reduce_sum
from ndflow.ops.tensor_array_ops import TensorArray
from ndflow.runtime import functional_ops_docs
from ndflow.runtime.control_flow import cond, while_loop


def _flat_elems(elems, what: str = "elems") -> list:
    flat = [convert_to_tensor(e, name=what) for e in flatten(elems)]
    if not flat:
        raise ValueError(f"{what} must be a Tensor or (possibly nested) sequence of Tensors. "
                         f"Got {elems}, which does not contain any Tensors.")
    for e in flat:
        if e.shape.rank == 0:
            raise ValueError(f"Elements in {what} must be 1+ dimensional Tensors, not scalars")
    return flat


def _length(flat: list):
    """The common first dimension: a Python int when known, else a tensor."""
    static = [e.shape.as_tuple()[0] for e in flat if e.shape.rank is not None]
    known = [s for s in static if s is not None]
    for k in known[1:]:
        if k != known[0]:
            raise ValueError(f"Dimensions {known[0]} and {k} are not compatible")
    return known[0] if known else shape(flat[0])[0]


def _unstacked(flat: list, n) -> list:
    return [TensorArray(e.dtype, size=n, dynamic_size=False, infer_shape=True,
                        element_shape=e.shape[1:] if e.shape.rank else None).unstack(e)
            for e in flat]


def _signature_structure(elems, fn_output_signature):
    """The outputs' structure of TensorSpecs (default: the elements' dtypes and structure)."""
    if fn_output_signature is None:
        return map_structure(lambda e: TensorSpec(None, convert_to_tensor(e).dtype), elems)

    def spec(s):
        if isinstance(s, TensorSpec):
            return s
        return TensorSpec(None, dtypes.as_dtype(s))
    return map_structure(spec, fn_output_signature)


@tf_export("map_fn", v1=["map_fn"])
def map_fn(fn: Callable, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):
    """`fn` applied to each slice of `elems` along its first dimension; the results stacked.
    `fn_output_signature` (or TF1's `dtype`) gives the output dtypes when they differ from
    the elements'."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}")
    if fn_output_signature is None:
        fn_output_signature = dtype
    if any(is_composite(e) for e in flatten(elems, expand_composites=False)):
        return _map_fn_ragged(fn, elems, fn_output_signature, parallel_iterations, back_prop,
                              swap_memory, infer_shape, name)
    with name_scope(name, "map"):
        flat = _flat_elems(elems)
        n = _length(flat)
        elem_tas = _unstacked(flat, n)
        out_specs = _signature_structure(elems, fn_output_signature)
        flat_specs = flatten(out_specs)
        result_tas = [TensorArray(s.dtype, size=n, dynamic_size=False, infer_shape=infer_shape,
                                  element_shape=s.shape if s.shape.rank is not None else None)
                      for s in flat_specs]

        def body(i, tas):
            value = fn(pack_sequence_as(elems, [ta.read(i) for ta in elem_tas]))
            outs = flatten(value)
            if len(outs) != len(flat_specs):
                raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                                 f"First structure: {out_specs}\n\nSecond structure: {value}")
            outs = [convert_to_tensor(o, dtype=s.dtype) for o, s in zip(outs, flat_specs)]
            return i + 1, [ta.write(i, o) for ta, o in zip(tas, outs)]

        _, result_tas = while_loop(lambda i, _: less(i, n), body, (0, result_tas),
                                   parallel_iterations=parallel_iterations or 10,
                                   back_prop=back_prop, swap_memory=swap_memory,
                                   maximum_iterations=n)
        results = [_stacked(ta, n) for ta in result_tas]
        return pack_sequence_as(out_specs, results)


def _map_fn_ragged(fn, elems, fn_output_signature, parallel_iterations, back_prop,
                   swap_memory, infer_shape, name):
    """map_fn over RaggedTensors: `fn` gets row i of each (`rt[i]`, a tensor or a ragged
    tensor of one rank less); its results must be dense (`fn_output_signature`)."""
    if fn_output_signature is None and isinstance(elems, RaggedTensor) and \
            elems.ragged_rank == 1:
        # TF's default signature: each result a row like the input's (a 1-D or more dense
        # tensor of its own length), the results a RaggedTensor of those rows
        return _map_rows_to_ragged(fn, elems, parallel_iterations, back_prop, swap_memory,
                                   name)
    out_specs = None if fn_output_signature is None else \
        _signature_structure(elems, fn_output_signature)
    if out_specs is None or any(is_composite(s) for s in
                                flatten(out_specs, expand_composites=False)):
        raise ValueError("ndflow's tf.map_fn over RaggedTensors needs a fn_output_signature "
                         "of dense tensors (dtypes or TensorSpecs); ragged results are not "
                         "supported yet.")
    leaves = flatten(elems, expand_composites=False)
    with name_scope(name, "map"):
        first = leaves[0]
        n = first.shape.as_list()[0] if first.shape.rank else None
        if n is None:
            n = first.nrows() if is_composite(first) else shape(first)[0]
        flat_specs = flatten(out_specs)
        result_tas = [TensorArray(s.dtype, size=n, dynamic_size=False, infer_shape=infer_shape,
                                  element_shape=s.shape if s.shape.rank is not None else None)
                      for s in flat_specs]

        def body(i, tas):
            row = pack_sequence_as(elems, [leaf[i] for leaf in leaves], expand_composites=False)
            outs = [convert_to_tensor(o, dtype=sp.dtype) for o, sp in
                    zip(flatten(fn(row)), flat_specs)]
            return i + 1, [ta.write(i, o) for ta, o in zip(tas, outs)]

        _, result_tas = while_loop(lambda i, _: less(i, n), body, (0, result_tas),
                                   parallel_iterations=parallel_iterations or 10,
                                   back_prop=back_prop, swap_memory=swap_memory,
                                   maximum_iterations=n)
        return pack_sequence_as(out_specs, [_stacked(ta, n) for ta in result_tas])


def _map_rows_to_ragged(fn, rt, parallel_iterations, back_prop, swap_memory, name):
    """map_fn of a ragged_rank-1 RaggedTensor with ragged results: row i's result (a dense
    tensor of its own length) becomes row i of the output."""
    with name_scope(name, "map"):
        n = cast(rt.nrows(), dtypes.int32)   # the loop counter's type
        values = TensorArray(rt.dtype, size=n, dynamic_size=False, infer_shape=False)
        lengths = TensorArray(dtypes.int64, size=n, dynamic_size=False)

        def body(i, tas):
            out = convert_to_tensor(fn(rt[i]))
            if out.shape.rank == 0:
                raise ValueError("tf.map_fn over a RaggedTensor with no fn_output_signature: "
                                 "each result must be a row (rank >= 1), got a scalar; give "
                                 "fn_output_signature for dense results.")
            return i + 1, [tas[0].write(i, out), tas[1].write(i, shape(out, dtypes.int64)[0])]

        _, (values, lengths) = while_loop(lambda i, _: less(i, n), body,
                                          (0, [values, lengths]),
                                          parallel_iterations=parallel_iterations or 10,
                                          back_prop=back_prop, swap_memory=swap_memory,
                                          maximum_iterations=n)
        return RaggedTensor.from_row_lengths(values.concat(), lengths.stack())


def _stacked(ta: TensorArray, n) -> Tensor:
    out = ta.stack()
    if isinstance(n, int) and out.shape.rank is not None and hasattr(out, "set_shape"):
        out.set_shape(TensorShape([n]).concatenate(out.shape[1:]))
    return out


def _scan(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, infer_shape,
          reverse: bool, name, default: str, keep_all: bool):
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}")
    with name_scope(name, default):
        flat = _flat_elems(elems)
        n = _length(flat)
        elem_tas = _unstacked(flat, n)

        def read(i):
            return pack_sequence_as(elems, [ta.read(i) for ta in elem_tas])

        def index(k):
            return (n - 1 - k) if reverse else k

        if initializer is None:  # empty elems: the TensorArray read raises TF's error
            acc, start = read(index(0)), 1
        else:
            acc, start = initializer, 0
        acc_struct = acc
        acc_flat = [convert_to_tensor(a) for a in flatten(acc)]
        out_tas = [TensorArray(a.dtype, size=n, dynamic_size=False, infer_shape=infer_shape,
                               element_shape=a.shape) for a in acc_flat]
        if keep_all and initializer is None:
            out_tas = [ta.write(index(0), a) for ta, a in zip(out_tas, acc_flat)]

        def body(k, a, tas):
            new = fn(pack_sequence_as(acc_struct, a), read(index(k)))
            new_flat = [convert_to_tensor(v, dtype=o.dtype) for v, o in
                        zip(flatten(new), acc_flat)]
            if len(flatten(new)) != len(acc_flat):
                raise ValueError("The accumulator returned by fn must have the structure of "
                                 f"the initializer: {acc_struct} vs {new}")
            if keep_all:
                tas = [ta.write(index(k), v) for ta, v in zip(tas, new_flat)]
            return k + 1, new_flat, tas

        _, final, out_tas = while_loop(lambda k, a, t: less(k, n), body,
                                       (start, acc_flat, out_tas),
                                       parallel_iterations=parallel_iterations,
                                       back_prop=back_prop, swap_memory=swap_memory)
        if keep_all:
            return pack_sequence_as(acc_struct, [_stacked(ta, n) for ta in out_tas])
        return pack_sequence_as(acc_struct, final)


@tf_export("scan", v1=["scan"])
def scan(fn: Callable, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """The successive accumulators of `a = fn(a, x)` over the slices `x` of `elems` (the first
    slice is the initial accumulator when `initializer` is None)."""
    return _scan(fn, elems, initializer, parallel_iterations, back_prop, swap_memory,
                 infer_shape, reverse, name, "scan", keep_all=True)


@tf_export("foldl", v1=["foldl"])
def foldl(fn: Callable, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """The final accumulator of `a = fn(a, x)` over `elems`, left to right."""
    return _scan(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, True,
                 False, name, "foldl", keep_all=False)


@tf_export("foldr", v1=["foldr"])
def foldr(fn: Callable, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """The final accumulator of `a = fn(a, x)` over `elems`, right to left."""
    return _scan(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, True,
                 True, name, "foldr", keep_all=False)


@tf_export("vectorized_map", v1=["vectorized_map"])
def vectorized_map(fn: Callable, elems, fallback_to_while_loop=True, warn=True):
    """`fn` over the slices of `elems`, results stacked (run as tf.map_fn: ndflow has no
    pfor vectorizer, so the values are the same and the loop is not vectorized)."""
    flat = _flat_elems(elems)
    probe = fn(pack_sequence_as(elems, [e[0] for e in flat])) if \
        isinstance(_length(flat), int) and _length(flat) > 0 else None
    signature = None if probe is None else map_structure(
        lambda t: TensorSpec(None, convert_to_tensor(t).dtype), probe)
    return map_fn(fn, elems, fn_output_signature=signature)


def _pairs(pred_fn_pairs) -> list:
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else \
        list(pred_fn_pairs)
    for p in pairs:
        if not (isinstance(p, tuple) and len(p) == 2):
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {p!r}")
        if not callable(p[1]):
            raise TypeError(f"fn for pred {p[0]!r} must be callable.")
    return pairs


def _case(pairs: list, default, exclusive: bool, name):
    if not pairs and default is None:
        raise ValueError("pred_fn_pairs must not be empty when default is None")
    with name_scope(name, "case"):
        preds = [convert_to_tensor(p, dtypes.bool) for p, _ in pairs]
        if context.executing_eagerly():  # as TF: the first true branch (no exclusive check)
            for pred, (_, fn) in zip(preds, pairs):
                if bool(pred.numpy()):
                    return fn()
            if default is None:
                Assert(reduce_any(stack(preds)),
                       ["Input error: None of conditions evaluated as True:", stack(preds)])
            return default()
        checks = []
        if exclusive:   # TF's _assert_at_most_n_true, its message
            stacked = stack(preds, name="preds_c")
            count = reduce_sum(cast(stacked, dtypes.int32), name="num_true_conds")
            names = ", ".join(p.name for p in preds)
            checks.append(Assert(less(count, 2), [
                f"Input error: exclusive=True: more than 1 conditions ({names}) evaluated as "
                "True:", stacked], summarize=len(preds)))
        if default is None:  # as TF: the last branch is the default, guarded by an Assert
            *pairs, (last_pred, last_fn) = pairs
            checks.append(Assert(reduce_any(stack(preds)), [
                "Input error: None of conditions evaluated as True:", stack(preds)]))
            default = last_fn
        fn = default
        for pred, branch in reversed(list(zip(preds, [f for _, f in pairs]))):
            fn = (lambda p, b, rest: lambda: cond(p, b, rest))(pred, branch, fn)
        if checks:
            with control_dependencies(checks):
                return map_structure(lambda t: identity(t) if isinstance(t, Tensor) else t, fn())
        return fn()


@tf_export("case", v1=[])
def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The result of the first `fn` whose `pred` holds (`default()` when none does)."""
    return _case(_pairs(pred_fn_pairs), default, exclusive, name)


@tf_export(v1=["case"])
def case_v1(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """TF1's tf.case (a dict of pairs is taken in insertion order)."""
    return _case(_pairs(pred_fn_pairs), default, exclusive, name)


@tf_export("tuple", v1=[])
def tuple_v2(tensors, control_inputs=None, name=None):
    """The tensors, each gated on all of them (and `control_inputs`) having been computed."""
    return tuple_v1(tensors, name, control_inputs)


@tf_export(v1=["tuple"])
def tuple_v1(tensors, name=None, control_inputs=None):
    """Groups tensors: the outputs are available only once all the inputs are computed.

    Args:
      tensors: a list of tensors (None entries are passed through).
      name: optional name scope.
      control_inputs: optional extra ops that must also run first.

    Returns:
      In a graph, a list of identities of `tensors` depending on all of them; executing
      eagerly, `tensors` as a list.

    Example:
      >>> [int(t) for t in tf.compat.v1.tuple([tf.constant(1), tf.constant(2)])]
      [1, 2]
    """
    if context.executing_eagerly():
        return list(tensors)
    with name_scope(name, "tuple"):
        present = [t for t in tensors if t is not None]
        gate = group(*(present + list(control_inputs or [])))
        with control_dependencies([gate]):
            return [identity(t) if t is not None else None for t in tensors]


context.hooks.case = case

__all__ = ["map_fn", "scan", "foldl", "foldr", "vectorized_map", "case", "case_v1", "tuple_v2",
           "tuple_v1"]


attach(globals(), functional_ops_docs.DOCS)

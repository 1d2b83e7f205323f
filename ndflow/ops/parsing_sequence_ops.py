"""`tf.io.parse_sequence_example` / `parse_single_sequence_example`: `tf.train.SequenceExample`
protos (context features + feature lists) to tensors by TensorFlow's ParseSequenceExampleV2
op. Context features are FixedLenFeature/VarLenFeature; sequence features are
FixedLenSequenceFeature (one row per step; `allow_missing` makes an absent list empty) or
VarLenFeature (a SparseTensor over [step, value]). Kernel in kernels/parsing_sequence_kernels.py.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def
from ndflow.ops.parsing_config import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    ParseParams,
    VarLenFeature,
)
from ndflow.ops.sparse_tensor import SparseTensor


def _shape_fn(ctx):
    a, rank = ctx.attrs, ctx.shapes[0].rank
    batch = [] if rank == 0 else (ctx.shapes[0].as_list() if rank is not None else None)

    def sparse(n, extra):
        r = None if rank is None else rank + extra
        return ([TensorShape([None, r])] * n + [TensorShape([None])] * n
                + [TensorShape([r])] * n)

    def with_batch(dims):
        return TensorShape(None) if batch is None else TensorShape(batch + dims)

    out = sparse(a["Ncontext_sparse"], 1)
    out += [with_batch(TensorShape(s).as_list()) for s in a["context_dense_shapes"]]
    out += sparse(a["Nfeature_list_sparse"], 2)
    out += [with_batch([None] + TensorShape(s).as_list())
            for s in a["feature_list_dense_shapes"]]
    out += [with_batch([])] * a["Nfeature_list_dense"]
    return out


ParseSequenceExampleV2 = op_def(
    "ParseSequenceExampleV2",
    inputs=["serialized: string", "debug_name: string", "context_sparse_keys: string",
            "context_dense_keys: string", "context_ragged_keys: string",
            "feature_list_sparse_keys: string", "feature_list_dense_keys: string",
            "feature_list_ragged_keys: string", "feature_list_dense_missing_assumed_empty: bool",
            "context_dense_defaults: Tcontext_dense"],
    outputs=["context_sparse_indices: Ncontext_sparse * int64",
             "context_sparse_values: context_sparse_types",
             "context_sparse_shapes: Ncontext_sparse * int64",
             "context_dense_values: Tcontext_dense",
             "context_ragged_values: context_ragged_value_types",
             "context_ragged_row_splits: context_ragged_split_types",
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             "feature_list_sparse_values: feature_list_sparse_types",
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             "feature_list_dense_values: feature_list_dense_types",
             "feature_list_dense_lengths: Nfeature_list_dense * int64",
             "feature_list_ragged_values: feature_list_ragged_value_types",
             "feature_list_ragged_outer_splits: feature_list_ragged_split_types",
             "feature_list_ragged_inner_splits: feature_list_ragged_split_types"],
    attrs=["Ncontext_sparse: int >= 0 = 0", "Tcontext_dense: list(type) = []",
           "context_sparse_types: list(type) = []",
           "context_ragged_value_types: list(type) = []",
           "context_ragged_split_types: list(type) = []",
           "context_dense_shapes: list(shape) = []",
           "Nfeature_list_sparse: int >= 0 = 0", "Nfeature_list_dense: int >= 0 = 0",
           "feature_list_dense_types: list(type) = []",
           "feature_list_sparse_types: list(type) = []",
           "feature_list_ragged_value_types: list(type) = []",
           "feature_list_ragged_split_types: list(type) = []",
           "feature_list_dense_shapes: list(shape) = []"],
    shape=_shape_fn, gradient_undefined=True)


class _SequenceParams:
    """The feature-list half of the op's arguments (keys sorted, as TensorFlow does)."""

    def __init__(self, features: dict):
        self.sparse_keys, self.sparse_types = [], []
        self.dense_keys, self.dense_types, self.dense_shapes, self.empty_ok = [], [], [], []
        for key in sorted(features or {}):
            f = features[key]
            if isinstance(f, VarLenFeature):
                self.sparse_keys.append(key)
                self.sparse_types.append(dtypes.as_dtype(f.dtype))
            elif isinstance(f, FixedLenSequenceFeature):
                if f.default_value is not None:
                    raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
                self.dense_keys.append(key)
                self.dense_types.append(dtypes.as_dtype(f.dtype))
                self.dense_shapes.append(TensorShape(f.shape))
                self.empty_ok.append(bool(f.allow_missing))
            else:
                raise ValueError(f"Unsupported {type(f).__name__} {f} for key '{key}'")


def _strings(values, name):
    return convert_to_tensor(list(values), dtypes.string, name=name)


def _parse(serialized, context_features, sequence_features, names, name):
    if not context_features and not sequence_features:
        raise ValueError("Both context_features and sequence_features are None, but at least "
                         "one should have values.")
    for key, f in (context_features or {}).items():
        if not isinstance(f, (FixedLenFeature, VarLenFeature)):
            raise ValueError(f"Unsupported {type(f).__name__} {f} for key '{key}'")
    ctx = ParseParams(context_features) if context_features else None
    seq = _SequenceParams(sequence_features)
    with name_scope(name or "ParseSequenceExample"):
        s = convert_to_tensor(serialized, dtypes.string, name="serialized")
        op = apply_op(ParseSequenceExampleV2, [
            s, _strings([] if names is None else names, "debug_name"),
            _strings(ctx.sparse_keys if ctx else [], "context_sparse_keys"),
            _strings(ctx.dense_keys if ctx else [], "context_dense_keys"),
            _strings([], "context_ragged_keys"),
            _strings(seq.sparse_keys, "feature_list_sparse_keys"),
            _strings(seq.dense_keys, "feature_list_dense_keys"),
            _strings([], "feature_list_ragged_keys"),
            convert_to_tensor(seq.empty_ok, dtypes.bool,
                              name="feature_list_dense_missing_assumed_empty"),
            ctx.dense_defaults() if ctx else []], {
                "Ncontext_sparse": len(ctx.sparse_keys) if ctx else 0,
                "Tcontext_dense": list(ctx.dense_types) if ctx else [],
                "context_sparse_types": list(ctx.sparse_types) if ctx else [],
                "context_dense_shapes": list(ctx.dense_shapes) if ctx else [],
                "Nfeature_list_sparse": len(seq.sparse_keys),
                "Nfeature_list_dense": len(seq.dense_keys),
                "feature_list_dense_types": seq.dense_types,
                "feature_list_sparse_types": seq.sparse_types,
                "feature_list_dense_shapes": seq.dense_shapes},
            name="ParseSequenceExampleV2")
    outs = list(op.outputs)

    def take(n):
        nonlocal outs
        part, outs = outs[:n], outs[n:]
        return part

    cs = len(ctx.sparse_keys) if ctx else 0
    ci, cv, cshape = take(cs), take(cs), take(cs)
    context = {k: SparseTensor(i, v, sh) for k, i, v, sh in
               zip(ctx.sparse_keys if ctx else [], ci, cv, cshape)}
    context.update(zip(ctx.dense_keys if ctx else [], take(len(ctx.dense_keys) if ctx else 0)))
    fs = len(seq.sparse_keys)
    fi, fv, fshape = take(fs), take(fs), take(fs)
    lists = {k: SparseTensor(i, v, sh) for k, i, v, sh in zip(seq.sparse_keys, fi, fv, fshape)}
    lists.update(zip(seq.dense_keys, take(len(seq.dense_keys))))
    lengths = dict(zip(seq.dense_keys, take(len(seq.dense_keys))))
    return context, lists, lengths


@tf_export("io.parse_sequence_example")
def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """Parses a vector of serialized `SequenceExample`s: (context dict, feature-list dict,
    lengths of the dense feature lists)."""
    return _parse(serialized, context_features, sequence_features, example_names, name)


@tf_export("io.parse_single_sequence_example",
           v1=["io.parse_single_sequence_example", "parse_single_sequence_example"])
def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """Parses one serialized `SequenceExample`: (context dict, feature-list dict)."""
    with name_scope(name or "ParseSingleSequenceExample"):
        s = convert_to_tensor(serialized, dtypes.string, name="serialized")
        if s.shape.rank is not None and s.shape.rank != 0:
            raise ValueError(f"Input serialized must be a scalar, got shape {s.shape}")
        names = None if example_name is None else [example_name]
        context, lists, _ = _parse(s, context_features, sequence_features, names, None)
    return context, lists

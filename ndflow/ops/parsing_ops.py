"""`tf.io.parse_example` / `parse_single_example`: `tf.train.Example` protos to tensors by
TensorFlow's ParseExampleV2 op (one op for a batch or a single example, as TensorFlow 2
builds it), so graphs, `tf.function`s and `Dataset.map` functions hold the op TensorFlow
would. Host kernel in kernels/parsing_kernels.py; feature configs in parsing_config.py.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops import parsing_composite
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def
from ndflow.ops.parsing_config import ParseParams, RaggedFeature, SparseFeature
from ndflow.ops.sparse_tensor import SparseTensor


def _parse_example_shape(ctx):
    serialized = ctx.shapes[0]
    a = ctx.attrs
    n_sparse, shapes = a["num_sparse"], a["dense_shapes"]
    rank = serialized.rank
    batch = [] if rank == 0 else (serialized.as_list() if rank is not None else None)
    out = [TensorShape([None, None if rank is None else rank + 1])] * n_sparse
    out += [TensorShape([None])] * n_sparse
    out += [TensorShape([None if rank is None else rank + 1])] * n_sparse
    for s in shapes:
        s = TensorShape(s)
        out.append(TensorShape(None) if batch is None else TensorShape(batch + s.as_list()))
    n_ragged = len(a.get("ragged_value_types", []))
    rows = None if batch is None else (batch[0] + 1 if batch and batch[0] is not None else
                                        None if batch else 2)
    out += [TensorShape([None])] * n_ragged + [TensorShape([rows])] * n_ragged
    return out


ParseExampleV2 = op_def(
    "ParseExampleV2",
    inputs=["serialized: string", "names: string", "sparse_keys: string",
            "dense_keys: string", "ragged_keys: string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: num_sparse * int64", "dense_values: Tdense",
             "ragged_values: ragged_value_types", "ragged_row_splits: ragged_split_types"],
    attrs=["Tdense: list(type) = []",  # TF: list({float, int64, string}) >= 0
           "num_sparse: int >= 0", "sparse_types: list(type) = []",
           "ragged_value_types: list(type) = []", "ragged_split_types: list(type) = []",
           "dense_shapes: list(shape) = []"],
    shape=_parse_example_shape, gradient_undefined=True)


def _keys(keys, name):
    return convert_to_tensor(list(keys), dtypes.string, name=name)


def _parse(serialized, features, example_names, name):
    params = ParseParams(features)
    with name_scope(name or "ParseExample"):
        s = convert_to_tensor(serialized, dtypes.string, name="serialized")
        if s.shape.rank is not None and s.shape.rank > 1:
            raise ValueError(f"Input serialized must be a scalar or a vector, got shape "
                             f"{s.shape}")
        names = convert_to_tensor([] if example_names is None else example_names,
                                  dtypes.string, name="names")
        if params.ragged_keys and s.shape.rank is None:
            raise ValueError("serialized must have statically-known rank to parse ragged "
                             "features.")
        defaults = params.dense_defaults()
        op = apply_op(ParseExampleV2, [
            s, names, _keys(params.sparse_keys, "sparse_keys"),
            _keys(params.dense_keys, "dense_keys"), _keys(params.ragged_keys, "ragged_keys"),
            defaults], {
                "Tdense": list(params.dense_types), "num_sparse": len(params.sparse_keys),
                "sparse_types": list(params.sparse_types),
                "ragged_value_types": list(params.ragged_value_types),
                "ragged_split_types": list(params.ragged_split_types),
                "dense_shapes": list(params.dense_shapes)},
            name="ParseExampleV2")
    outs, n = op.outputs, len(params.sparse_keys)
    nd, nr = len(params.dense_keys), len(params.ragged_keys)
    result = {}
    for i, key in enumerate(params.sparse_keys):
        result[key] = SparseTensor(outs[i], outs[n + i], outs[2 * n + i])
    for j, key in enumerate(params.dense_keys):
        result[key] = outs[3 * n + j]
    ragged_start = 3 * n + nd
    ragged = parsing_composite.ragged_outputs(
        s.shape.rank == 0, outs[ragged_start:ragged_start + nr],
        outs[ragged_start + nr:ragged_start + 2 * nr])
    result.update(zip(params.ragged_keys, ragged))
    if any(isinstance(f, (SparseFeature, RaggedFeature)) for f in features.values()):
        result = parsing_composite.construct(features, result)
    return result


@tf_export("io.parse_example", v1=[])
def parse_example_v2(serialized, features, example_names=None, name=None):
    """Parses a vector of serialized `Example`s into a dict of batched tensors
    (`SparseTensor`s for `VarLenFeature`s)."""
    return _parse(serialized, features, example_names, name)


@tf_export(v1=["io.parse_example", "parse_example"])
def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized `tf.train.Example` protos into a dict of tensors (TF1 order).

    Args:
      serialized: a rank-1 string tensor of serialized Examples.
      features: a dict from feature key to `tf.io.FixedLenFeature`, `VarLenFeature`,
        `SparseFeature`, `RaggedFeature` or `FixedLenSequenceFeature`.
      name: optional name for the operation.
      example_names: optional names of the examples, used in error messages.

    Returns:
      A dict from key to a dense tensor (with a leading batch axis), `tf.SparseTensor` or
      `tf.RaggedTensor`, as the feature's kind gives.

    Raises:
      InvalidArgumentError: if an Example cannot be parsed or lacks a required feature.

    Example:
      >>> ex = tf.train.Example(features=tf.train.Features(feature={
      ...     'x': tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))}))
      >>> out = tf.compat.v1.io.parse_example([ex.SerializeToString()] * 2,
      ...                                     {'x': tf.io.FixedLenFeature([], tf.int64)})
      >>> out['x'].numpy()
      array([7, 7])
    """
    return _parse(serialized, features, example_names, name)


@tf_export("io.parse_single_example", v1=[])
def parse_single_example_v2(serialized, features, example_names=None, name=None):
    """Parses one serialized `Example` (a scalar string) into a dict of tensors."""
    if features is None:
        raise ValueError("Invalid argument: features cannot be None.")
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    with name_scope(name or "ParseSingleExample"):
        s = convert_to_tensor(serialized, dtypes.string, name="serialized")
        if s.shape.rank is not None and s.shape.rank != 0:
            raise InvalidArgumentError(None, None, "Input serialized must be a scalar")
        return _parse(s, features, example_names, None)


@tf_export(v1=["io.parse_single_example", "parse_single_example"])
def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized `tf.train.Example` into a dict of tensors (TF1 order).

    Args:
      serialized: a scalar string tensor.
      features: a dict from feature key to `tf.io.FixedLenFeature`, `VarLenFeature`,
        `SparseFeature`, `RaggedFeature` or `FixedLenSequenceFeature`.
      name: optional name for the operation.
      example_names: optional names of the examples, used in error messages.

    Returns:
      A dict from key to a dense tensor, `tf.SparseTensor` or `tf.RaggedTensor`.

    Raises:
      ValueError: if `features` is None.
      InvalidArgumentError: if the Example cannot be parsed or lacks a required feature.

    Example:
      >>> ex = tf.train.Example(features=tf.train.Features(feature={
      ...     'x': tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))}))
      >>> out = tf.compat.v1.io.parse_single_example(ex.SerializeToString(),
      ...                                            {'x': tf.io.FixedLenFeature([], tf.int64)})
      >>> int(out['x'])
      7
    """
    return parse_single_example_v2(serialized, features, example_names, name)

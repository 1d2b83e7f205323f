"""TF1's model-input functions of feature columns: `tf.compat.v1.feature_column.input_layer`
(the columns' dense tensors side by side) and `linear_model` (a weighted sum of every
column plus a bias), with TF's variable scopes and names (`input_layer/<column>_embedding/
embedding_weights`, `linear_model/<column>/weights`, `linear_model/bias_weights`)."""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.feature_column.base import (
    CategoricalColumn,
    DenseColumn,
    FeatureColumn,
    LazyBuilder,
    ScopeStateManager,
    normalize_feature_columns,
    verify_static_batch_size_equality,
)
from ndflow.feature_column.deprecation_warnings import FEATURE_COLUMN_V1, deprecated
from ndflow.ops.arithmetic import add_n
from ndflow.ops.array_core import reshape
from ndflow.ops.array_slicing import concat
from ndflow.ops.embedding_sparse import safe_embedding_lookup_sparse
from ndflow.ops.init_ops_v1 import zeros_initializer
from ndflow.ops.linalg import matmul
from ndflow.ops.nn_conv import bias_add
from ndflow.ops.sparse_api import reshape as sparse_reshape
from ndflow.ops.variable_scope import get_variable, get_variable_scope, variable_scope


def _weight_collections(weight_collections):
    collections = list(weight_collections or [])
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        if key not in collections:
            collections.append(key)
    return collections


def _scope_variables() -> list:
    """The variables made in the current variable scope: TF reads the graph collection, so
    eagerly (no collections) the list is empty, as TF's is."""
    if context.executing_eagerly():
        return []
    return context.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=get_variable_scope().name)


def _v1_columns(feature_columns):
    return normalize_feature_columns(feature_columns, FeatureColumn, "_FeatureColumn")


@tf_export(v1=["feature_column.input_layer"])
@deprecated(FEATURE_COLUMN_V1)
def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """The dense columns' outputs for `features`, each reshaped to [batch, elements] and
    concatenated in column-name order: [batch, sum of elements], float32."""
    columns = _v1_columns(feature_columns)
    for column in columns:
        if not isinstance(column, DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a "
                             "categorical column with an embedding_column or indicator_column. "
                             f"Given: {column}")
    collections = _weight_collections(weight_collections)
    with variable_scope(None, default_name="input_layer", values=list(features.values())):
        builder = LazyBuilder(features)
        outputs = []
        for column in columns:
            with variable_scope(None, default_name=column._var_scope_name):
                manager = ScopeStateManager(collections, trainable)
                tensor = column._get_dense_tensor_with(builder, manager)
                elements = column._variable_shape.num_elements()
                # [-1, n], not TF's [shape(t)[0], n]: the same result, and no partial shape
                # of a tensor of unknown rank (a fed unknown-rank feature) to infer
                output = reshape(tensor, shape=(-1, elements))
                outputs.append(output)
                if cols_to_vars is not None:
                    cols_to_vars[column] = _scope_variables()
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        verify_static_batch_size_equality(outputs, columns)
        return concat(outputs, 1)


def _weighted_sum(column, builder, manager, units, sparse_combiner, weight):
    if isinstance(column, CategoricalColumn):
        pair = column.get_sparse_tensors(builder, manager)
        ids = sparse_reshape(pair.id_tensor, [pair.id_tensor.dense_shape[0], -1])
        weights = pair.weight_tensor
        if weights is not None:
            weights = sparse_reshape(weights, [weights.dense_shape[0], -1])
        return safe_embedding_lookup_sparse(weight, ids, sparse_weights=weights,
                                            combiner=sparse_combiner, name="weighted_sum")
    tensor = column._get_dense_tensor_with(builder, manager)
    elements = column._variable_shape.num_elements()
    tensor = reshape(tensor, shape=(-1, elements))
    return matmul(tensor, weight, name="weighted_sum")


@tf_export(v1=["feature_column.linear_model"])
@deprecated(FEATURE_COLUMN_V1)
def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """A linear prediction [batch, units]: each column's weighted sum (categorical columns
    as their ids' weight rows, combined by `sparse_combiner`) plus a bias."""
    columns = _v1_columns(feature_columns)
    collections = _weight_collections(weight_collections)
    for column in columns:
        if not isinstance(column, (DenseColumn, CategoricalColumn)):
            raise ValueError("Items of feature_columns must be either a _DenseColumn or "
                             f"_CategoricalColumn. Given: {column}")
    found = {}
    with variable_scope(None, default_name="linear_model"):
        builder = LazyBuilder(features)
        sums = []
        for column in columns:
            with variable_scope(None, default_name=column._var_scope_name):
                manager = ScopeStateManager(collections, trainable)
                if isinstance(column, CategoricalColumn):
                    rows = column._num_buckets
                else:
                    rows = column._variable_shape.num_elements()
                weight = get_variable("weights", shape=[rows, units], dtype=dtypes.float32,
                                      initializer=zeros_initializer(), trainable=trainable,
                                      collections=collections)
                sums.append(_weighted_sum(column, builder, manager, units, sparse_combiner,
                                          weight))
                found[column] = _scope_variables()
        verify_static_batch_size_equality(sums, columns)
        no_bias = add_n(sums, name="weighted_sum_no_bias")
        bias = get_variable("bias_weights", shape=[units], dtype=dtypes.float32,
                            initializer=zeros_initializer(), trainable=trainable,
                            collections=collections)
        predictions = bias_add(no_bias, bias, name="weighted_sum")
    found["bias"] = [bias]
    if cols_to_vars is not None:
        cols_to_vars.update(found)
    return predictions

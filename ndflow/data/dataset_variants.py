"""`tf.data.experimental.to_variant` / `from_variant`: a dataset as a scalar variant tensor
(the value iterators and graph functions pass around) and back."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten
from ndflow.data import graph_datasets
from ndflow.data import structure as structures
from ndflow.data.dataset import DatasetV2


@tf_export("data.experimental.to_variant")
def to_variant(dataset: DatasetV2):
    """The variant tensor of `dataset` (eagerly it holds the dataset; in a graph it is the
    op building it)."""
    if not isinstance(dataset, DatasetV2):
        raise TypeError(f"`dataset` must be a tf.data.Dataset, got {type(dataset).__name__}.")
    return graph_datasets.dataset_variant(dataset)


@tf_export("data.experimental.from_variant")
def from_variant(variant, structure):
    """The dataset of a variant tensor made by `to_variant`, with element spec `structure`."""
    structures.check_spec(structure, "structure")
    if getattr(variant, "dtype", None) is not dtypes.variant:
        raise TypeError(f"`variant` must be a tf.variant tensor, got {variant!r}.")
    value = getattr(variant, "_value", None)
    if isinstance(value, DatasetV2):  # eager: the dataset itself
        have, want = flatten(value.element_spec), flatten(structure)
        if len(have) != len(want) or any(not w.is_compatible_with(h)
                                         for h, w in zip(have, want)):
            raise TypeError(f"The dataset's element_spec {value.element_spec} is not "
                            f"compatible with `structure` {structure}.")
        return value
    return graph_datasets.GraphVariantDataset(variant, structure)

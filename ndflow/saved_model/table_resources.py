"""`tf.lookup` tables in a SavedModel, as TensorFlow writes a TrackableResource: a `resource`
node whose children are the functions `_create_resource` (makes the table op, e.g.
`HashTableV2`) and `_initialize` (fills it: the keys/values as constants, or the vocabulary
file as a `tf.saved_model.Asset` copied into `assets/`). A loader (TensorFlow's or ndflow's)
calls the first, then the second with the new table's handle; the functions capturing the
table take that handle.
"""

from __future__ import annotations

from ndflow.core.tensor import Tensor
from ndflow.ops.lookup_initializers import TextFileInitializer
from ndflow.ops.lookup_tables import LookupInterface
from ndflow.runtime.function import Function
from ndflow.saved_model.asset import Asset
from ndflow.saved_model.restored_resources import RestoredResource


def saves_as_resource(obj) -> bool:
    """A table with a resource (a StaticVocabularyTable without a vocabulary has none: its
    lookups are pure hashing, saved inside the functions that use it)."""
    if isinstance(obj, RestoredResource):
        return True
    return isinstance(obj, LookupInterface) and obj.resource_handle is not None


def _text_file_initializer(table):
    inner = getattr(table, "_table", None) or table
    init = getattr(inner, "_initializer", None)
    return init if isinstance(init, TextFileInitializer) else None


def table_children(table) -> list:
    """(name, child) pairs of a table node: its resource functions (made once per table, so
    saving twice writes the same functions), and the vocabulary file's Asset."""
    if not saves_as_resource(table):
        return []
    saved = getattr(table, "_saved_model_functions", None)
    if saved is None:
        init = _text_file_initializer(table)
        asset = None
        if init is not None and not isinstance(init.filename, Tensor):
            asset = Asset(init.filename)

        def create_resource():
            return table._create_resource()

        def initialize():
            if asset is None:
                table._initialize()
            else:
                table._initialize(filename=asset.asset_path)

        saved = [("_create_resource", Function(create_resource, name="_creator",
                                               input_signature=[], autograph=False)),
                 ("_initialize", Function(initialize, name="_initializer", input_signature=[],
                                          autograph=False))]
        if asset is not None:
            saved.append(("_vocabulary_file", asset))
        table._saved_model_functions = saved
    return list(saved)

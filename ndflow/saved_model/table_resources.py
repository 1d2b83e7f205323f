"""`tf.lookup` tables in a SavedModel, as TensorFlow writes a TrackableResource: a `resource`
node whose children are the functions `_create_resource` (makes the table op, e.g.
`HashTableV2`) and `_initialize` (fills it: the keys/values as constants, or the vocabulary
file as a `tf.saved_model.Asset` copied into `assets/`). A loader (TensorFlow's or ndflow's)
calls the first, then the second with the new table's handle; the functions capturing the
table take that handle.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.scopes import control_dependencies
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.array_core import constant
from ndflow.ops.lookup_initializers import TextFileInitializer
from ndflow.ops.lookup_tables import LookupInterface
from ndflow.runtime.function import Function
from ndflow.saved_model.asset import Asset
from ndflow.saved_model.restored_resources import RestoredResource
from ndflow.saved_model.trackable_resource import TrackableResource


def saves_as_resource(obj) -> bool:
    """A table with a resource (a StaticVocabularyTable without a vocabulary has none: its
    lookups are pure hashing, saved inside the functions that use it)."""
    if isinstance(obj, (RestoredResource, TrackableResource)):
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


def saveable_functions(table):
    """(save_fn, restore_fn) ConcreteFunctions of a table that checkpoints its contents
    (a mutable table), as TensorFlow traces them for a SavedModel's `saveable_objects`:
    `save_fn(checkpoint_key)` gives [{"name": key + suffix, "slice_spec": "", "tensor": t}]
    per tensor of `_serialize_to_tensors` (suffixes sorted), `restore_fn(*tensors)` calls
    `_restore_from_tensors`. A loader (TensorFlow's or ndflow's) restores the table with
    them from the `variables/` checkpoint. None for other tables."""
    if not callable(getattr(table, "_serialize_to_tensors", None)) or \
            not saves_as_resource(table) or isinstance(table, RestoredResource):
        return None
    saved = getattr(table, "_saved_model_saveables", None)
    if saved is not None:
        return saved
    suffixes = sorted(table._serialize_to_tensors())
    dtypes_ = {"-keys": table.key_dtype, "-values": table.value_dtype}

    def save_fn(checkpoint_key):
        tensors = table._serialize_to_tensors()
        return [{"name": checkpoint_key + suffix, "slice_spec": constant(""),
                 "tensor": tensors[suffix]} for suffix in suffixes]

    if len(suffixes) != 2:  # tables' "-keys", "-values"
        return None

    def restore_fn(restored_tensors_0, restored_tensors_1):
        op = table._restore_from_tensors(dict(zip(suffixes, (restored_tensors_0,
                                                             restored_tensors_1))))
        with control_dependencies([op] if op is not None else []):
            return constant(1)

    save_cf = Function(save_fn, name="save_fn", autograph=False, input_signature=[
        TensorSpec([], dtypes.string, name="checkpoint_key")]).get_concrete_function()
    restore_cf = Function(restore_fn, name="restore_fn", autograph=False, input_signature=[
        TensorSpec(None, dtypes_.get(s, dtypes.string), name=f"restored_tensors_{i}")
        for i, s in enumerate(suffixes)]).get_concrete_function()
    table._saved_model_saveables = (save_cf, restore_cf)
    return table._saved_model_saveables

"""The graph-level saver of a SavedModel (its MetaGraphDef's `saver_def`).

TF2 loaders restore variables through the object graph; graph-level loaders (TF1's
`tf.compat.v1.saved_model.load`, `saved_model_cli run`, TensorFlow Serving) run the
saver's restore op instead, feeding the variables prefix to `saver_filename`. These nodes
are TF1's `Saver` for the SavedModel's variables: RestoreV2 + AssignVariableOp per variable
(`save/restore_all`), and SaveV2 of their reads (`save/control_dependency`); a mutable
table's contents are saved from LookupTableExportV2 and restored by LookupTableImportV2.
"""

from __future__ import annotations

import numpy as np
from tensorboard.compat.proto import saver_pb2

from ndflow.core import dtypes
from ndflow.core.graph_def import attr_to_proto, ndarray_to_tensor_proto


def add_saver(gd, variables: list, tables=()) -> saver_pb2.SaverDef:
    """Adds saver nodes for `variables` [(checkpoint key, handle node name, Variable)] and
    `tables` [(checkpoint key prefix, handle node name, table)] to GraphDef `gd`; returns
    the SaverDef naming them."""
    fname = gd.node.add(name="saver_filename", op="Placeholder")
    fname.attr["dtype"].type = dtypes.string.enum
    fname.attr["shape"].shape.SetInParent()
    saver = saver_pb2.SaverDef(filename_tensor_name="saver_filename:0",
                               version=saver_pb2.SaverDef.V2)
    if not variables and not tables:
        done = gd.node.add(name="save/restore_all", op="NoOp")
        ident = gd.node.add(name="save/control_dependency", op="Identity", input=[fname.name])
        ident.attr["T"].type = dtypes.string.enum
        saver.save_tensor_name, saver.restore_op_name = f"{ident.name}:0", done.name
        return saver
    keys = np.array([k for k, _, _ in variables] +
                    [k + s for k, _, _ in tables for s in ("-keys", "-values")], dtype=object)
    slices = np.array([""] * len(keys), dtype=object)
    kinds = [v.dtype for _, _, v in variables] + \
        [d for _, _, t in tables for d in (t.key_dtype, t.value_dtype)]
    for name, value in (("save/tensor_names", keys), ("save/shape_and_slices", slices)):
        c = gd.node.add(name=name, op="Const")
        c.attr["dtype"].type = dtypes.string.enum
        c.attr["value"].tensor.CopyFrom(ndarray_to_tensor_proto(value, dtypes.string))
    common = [fname.name, "save/tensor_names", "save/shape_and_slices"]
    reads = []
    for i, (_, handle, var) in enumerate(variables):
        r = gd.node.add(name=f"save/read_{i}", op="ReadVariableOp", input=[handle])
        r.attr["dtype"].type = var.dtype.enum
        reads.append(r.name)
    for i, (_, handle, table) in enumerate(tables):
        e = gd.node.add(name=f"save/export_{i}", op="LookupTableExportV2", input=[handle])
        e.attr["Tkeys"].type, e.attr["Tvalues"].type = table.key_dtype.enum, \
            table.value_dtype.enum
        reads += [e.name, f"{e.name}:1"]
    save = gd.node.add(name="save/SaveV2", op="SaveV2", input=common + reads)
    save.attr["dtypes"].CopyFrom(attr_to_proto(kinds, "list(type)"))
    ident = gd.node.add(name="save/control_dependency", op="Identity",
                        input=[fname.name, "^save/SaveV2"])
    ident.attr["T"].type = dtypes.string.enum
    restore = gd.node.add(name="save/RestoreV2", op="RestoreV2", input=common)
    restore.attr["dtypes"].CopyFrom(attr_to_proto(kinds, "list(type)"))
    assigns = []
    for i, (_, handle, var) in enumerate(variables):
        a = gd.node.add(name=f"save/Assign_{i}", op="AssignVariableOp",
                        input=[handle, f"save/RestoreV2:{i}"])
        a.attr["dtype"].type = var.dtype.enum
        assigns.append("^" + a.name)
    for i, (_, handle, table) in enumerate(tables):
        at = len(variables) + 2 * i
        a = gd.node.add(name=f"save/table_import_{i}", op="LookupTableImportV2",
                        input=[handle, f"save/RestoreV2:{at}", f"save/RestoreV2:{at + 1}"])
        a.attr["Tin"].type, a.attr["Tout"].type = table.key_dtype.enum, table.value_dtype.enum
        assigns.append("^" + a.name)
    gd.node.add(name="save/restore_all", op="NoOp", input=assigns)
    saver.save_tensor_name = f"{ident.name}:0"
    saver.restore_op_name = "save/restore_all"
    return saver

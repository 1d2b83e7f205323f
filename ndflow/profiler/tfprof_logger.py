"""tfprof's OpLogProto (TensorFlow's python/profiler/tfprof_logger.py): each op's FLOPs
(tfprof_flops.py), the `_trainable_variables` type of the trainable variables' ops and the
ops' Python call stacks, merged with a caller's OpLogProto; `write_op_log` writes it to
`log_dir/tfprof_log`, a file TensorFlow's tfprof reads."""

from __future__ import annotations

import os
import sys

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.file_io import GFile
from ndflow.core.graph_keys import GraphKeys
from ndflow.core.protos import tfprof_pb
from ndflow.profiler import tfprof_flops

TRAINABLE_VARIABLES = "_trainable_variables"


def _str_id(s: str, str_to_id: dict) -> int:
    return str_to_id.setdefault(s, len(str_to_id))


def _logged_ops(graph, run_meta=None, add_trace=True, add_trainable_var=True):
    """{op name: OpLogEntry}, {string: id} (tfprof_logger._get_logged_ops). `run_meta` would
    complete unknown shapes from its StepStats; ndflow's carry none, so it is not read."""
    missing = 0
    logged, str_to_id = {}, {"none": 0}
    for op in graph.get_operations():
        try:
            flops = tfprof_flops.node_flops(op)
        except ValueError:
            missing += 1
            flops = None
        entry = tfprof_pb.OpLogEntry(name=op.name)
        add = False
        if flops:
            entry.float_ops = flops
            add = True
        if add_trace:
            for frame in op.traceback or ():
                t = entry.code_def.traces.add()
                t.file_id = _str_id(frame.filename, str_to_id) if frame.filename else 0
                t.lineno = frame.lineno if frame.lineno else -1
                t.function_id = _str_id(frame.name, str_to_id) if frame.name else 0
                t.line_id = _str_id(frame.line, str_to_id) if frame.line else 0
                t.func_start_line = -1
            add = True
        if add:
            logged[op.name] = entry
    if add_trainable_var:
        for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES):
            name = v.op.name
            if name not in logged:
                logged[name] = tfprof_pb.OpLogEntry(name=name)
            logged[name].types.append(TRAINABLE_VARIABLES)
    if missing and not run_meta:
        sys.stderr.write(f"{missing} ops no flops stats due to incomplete shapes.\n")
    return logged, str_to_id


def default_graph(graph):
    if not graph and not context.executing_eagerly():
        return context.get_default_graph()
    return graph


def merge_default_with_oplog(graph, op_log=None, run_meta=None, add_trace=True,
                             add_trainable_var=True):
    """The OpLogProto of `graph` merged with the caller's `op_log`."""
    graph = default_graph(graph)
    merged = tfprof_pb.OpLogProto()
    if not graph:
        return merged
    logged, str_to_id = _logged_ops(graph, run_meta, add_trace, add_trainable_var)
    if not op_log:
        merged.log_entries.extend(logged.values())
    else:
        all_ops = {e.name: e for e in op_log.log_entries}
        for name, entry in logged.items():
            if name in all_ops:
                mine = all_ops[name]
                mine.types.extend(entry.types)
                if entry.float_ops > 0 and mine.float_ops == 0:
                    mine.float_ops = entry.float_ops
                if entry.code_def.traces and not mine.code_def.traces:
                    mine.code_def.MergeFrom(entry.code_def)
            else:
                all_ops[name] = entry
        merged.log_entries.extend(all_ops.values())
    for s, i in str_to_id.items():
        merged.id_to_string[i] = s
    return merged


@tf_export(v1=["profiler.write_op_log"])
def write_op_log(graph, log_dir, op_log=None, run_meta=None, add_trace=True):
    """Writes `graph`'s OpLogProto (FLOPs, `_trainable_variables`, code traces), merged with
    `op_log`, to `log_dir/tfprof_log`."""
    graph = default_graph(graph)
    op_log = merge_default_with_oplog(graph, op_log, run_meta, add_trace)
    with GFile(os.path.join(log_dir, "tfprof_log"), "w") as log:
        log.write(op_log.SerializeToString())

"""Writing a profile: CSV and JSON summaries, the trace, and TensorBoard's profile layout.

Every file is written to a temporary name in its directory and renamed over the destination
(os.replace), so a reader never sees half a report, also when the profiled script failed.

    <out>/nodes.csv, op_types.csv, iterations.csv, reduced_precision.csv   (--format csv)
    <out>/profile.json                                                    (--format json)
    <out>/<host>.trace.json.gz                                            (--format trace)
    <out>/plugins/profile/<run>/<host>.trace.json.gz                      (--format tensorboard)
"""

from __future__ import annotations

import csv
import datetime
import gzip
import io
import json
import os
import socket
import tempfile

from ndflow.core import errors
from ndflow.core.atomic_file import atomic_write
from ndflow.profiler import trace_events

FORMATS = ("csv", "json", "tensorboard", "trace")


def run_name() -> str:
    """TensorBoard's run directory name for a profile taken now (TensorFlow's format)."""
    return datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S")


def check_writable(directory: str) -> None:
    """Creates `directory` and checks a file can be written there (PermissionDeniedError /
    FailedPreconditionError naming it otherwise), before anything is profiled."""
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".ndflow-profiler-check-", dir=directory)
        os.close(fd)
        os.remove(tmp)
    except PermissionError as e:
        raise errors.PermissionDeniedError(
            None, None, f"Cannot write the profile to {directory!r}: {e.strerror}") from None
    except OSError as e:
        raise errors.FailedPreconditionError(
            None, None, f"Cannot write the profile to {directory!r}: {e.strerror or e}") \
            from None


def write_atomic(path: str, data: bytes) -> str:
    """`data` to `path` through a temporary file (creating the directory); returns `path`."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    atomic_write(path, data)
    return path


def _csv(rows: list, columns: list) -> bytes:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v)
                    for k, v in r.items()})
    return buf.getvalue().encode()


NODE_COLUMNS = ["plan", "name", "op_type", "category", "device", "input_shapes", "input_dtypes",
                "output_shapes", "output_dtypes", "count", "total_us", "mean_us", "min_us",
                "max_us", "flops", "bytes", "gflops_per_s"]
OP_TYPE_COLUMNS = ["op_type", "category", "nodes", "count", "total_us", "share", "flops",
                   "gflops_per_s"]
ITERATION_COLUMNS = ["iteration", "kept", "start_us", "duration_us", "plans_us", "nodes_us",
                     "input_us"]
PRECISION_COLUMNS = ["plan", "name", "op_type", "device", "dtype", "reduced_precision",
                     "tensor_core_dims", "dims", "total_us", "reason"]


def summary(profile, precision: dict, advice: list) -> dict:
    kept = set(profile.kept)
    return {
        "key_node": profile.key, "key_reason": profile.key_reason,
        "iter_start": profile.iter_start, "iterations_kept": len(profile.kept),
        "iteration_us": profile.iteration_ns / 1e3,
        "mean_iteration_us": profile.iteration_ns / 1e3 / len(kept) if kept else 0.0,
        "op_time_us": profile.node_ns / 1e3,
        "iterations": [dict(it, kept=it["iteration"] in kept) for it in profile.iterations],
        "op_types": profile.op_types(), "plans": profile.plans(),
        "nodes": [s.row() for s in profile.nodes],
        "reduced_precision": precision, "recommendations": advice,
        "warnings": profile.warnings,
    }


def trace_bytes(cap) -> bytes:
    return gzip.compress(json.dumps(trace_events.trace(cap)).encode(), compresslevel=6)


def write(profile, precision: dict, advice: list, out_dir: str, formats, run: str | None = None
          ) -> list[str]:
    """Writes the requested formats under `out_dir`; returns the paths written."""
    host = socket.gethostname()
    paths = []
    doc = summary(profile, precision, advice)
    if "csv" in formats:
        paths.append(write_atomic(os.path.join(out_dir, "nodes.csv"),
                                  _csv(doc["nodes"], NODE_COLUMNS)))
        paths.append(write_atomic(os.path.join(out_dir, "op_types.csv"),
                                  _csv(doc["op_types"], OP_TYPE_COLUMNS)))
        paths.append(write_atomic(os.path.join(out_dir, "iterations.csv"),
                                  _csv(doc["iterations"], ITERATION_COLUMNS)))
        paths.append(write_atomic(os.path.join(out_dir, "reduced_precision.csv"),
                                  _csv(precision["nodes"], PRECISION_COLUMNS)))
    if "json" in formats:
        paths.append(write_atomic(os.path.join(out_dir, "profile.json"),
                                  json.dumps(doc, indent=1, default=str).encode()))
    if "trace" in formats or "tensorboard" in formats:
        data = trace_bytes(profile.capture)
        if "trace" in formats:
            paths.append(write_atomic(os.path.join(out_dir, f"{host}.trace.json.gz"), data))
        if "tensorboard" in formats:
            run_dir = os.path.join(out_dir, "plugins", "profile", run or run_name())
            paths.append(write_atomic(os.path.join(run_dir, f"{host}.trace.json.gz"), data))
    return paths

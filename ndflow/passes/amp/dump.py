"""TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LOG_PATH: the mixed-precision pass's debug files.

As AutoMixedPrecisionImpl::PrintDebugLogs: before painting it writes
`graphdef_preop_<id>_<ms>.pb` (binary GraphDef) and `.pb.txt` (text format); after the
rewrite `graphdef_AutoMixedPrecision_<id>_<ms>.pb` / `.pb.txt` and
`paintbuckets_AutoMixedPrecision_<id>_<ms>.txt` with the sections `AllowList:`,
`DenyList:`, `InferList:`, `ClearList:`. `<ms>` is the time in milliseconds, `<id>` the
graph's id (`tf_graph` for a Session graph, the function's name for a tf.function).
TensorFlow does not check that the files can be opened: a directory that does not exist
gives a WARNING here and the rewrite goes on.
"""

from __future__ import annotations

import os

from google.protobuf import text_format

from ndflow.core import config, logging
from ndflow.core.graph import Graph
from ndflow.core.graph_def import graph_to_graph_def
from ndflow.passes.amp.lists import AmpLists

LOG_PATH_VAR = config.TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LOG_PATH
SUFFIX = "AutoMixedPrecision"


def log_path() -> str:
    return config.get(config.TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LOG_PATH)


def _write(path: str, data: bytes | str, what: str) -> bool:
    try:
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(path, mode) as f:
            f.write(data)
    except OSError as e:
        logging.warning(f"Could not write the {what} to {path}: {e}")
        return False
    return True


def dump(graph: Graph, preop: bool, graph_id: str, timestamp_ms: int,
         lists: AmpLists | None = None) -> list[str]:
    """Writes the files for one stage; returns the paths written ([] when the variable is
    unset)."""
    prefix = log_path()
    if not prefix:
        return []
    suffix = f"_{'preop' if preop else SUFFIX}_{graph_id}_{timestamp_ms}"
    stage = "pre-optimization" if preop else "post-optimization"
    graph_def = graph_to_graph_def(graph)
    written = []
    path = os.path.join(prefix, f"graphdef{suffix}.pb")
    if _write(path, graph_def.SerializeToString(), "graph"):
        logging.info(f"Saved {stage} graph as binary to {path}")
        written.append(path)
    path = os.path.join(prefix, f"graphdef{suffix}.pb.txt")
    if _write(path, text_format.MessageToString(graph_def), "graph"):
        logging.info(f"Saved {stage} graph as text to {path}")
        written.append(path)
    if not preop and lists is not None:
        path = os.path.join(prefix, f"paintbuckets{suffix}.txt")
        sections = [("AllowList", lists.allow), ("DenyList", lists.deny),
                    ("InferList", lists.infer), ("ClearList", lists.clear)]
        text = "\n".join(f"{title}:\n" + "".join(f"{op}\n" for op in sorted(ops))
                         for title, ops in sections)
        if _write(path, text, "paint buckets"):
            logging.info(f"Saved paint bucket info to {path}")
            written.append(path)
    return written

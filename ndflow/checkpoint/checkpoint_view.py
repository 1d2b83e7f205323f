"""`tf.train.CheckpointView`: the object graph saved in a checkpoint file, by node id, and
how it lines up with live trackables (`match`, `diff`)."""

from __future__ import annotations

import collections

from tensorboard.compat.proto import trackable_object_graph_pb2

from ndflow.checkpoint import object_graph, tensor_bundle
from ndflow.checkpoint.trackable_view import TrackableView
from ndflow.core import errors, tf_logging
from ndflow.core.api_export import tf_export


@tf_export("train.CheckpointView", v1=[])
class CheckpointView:
    """The object graph of the checkpoint at `save_path` (a TF2, object-based one)."""

    def __init__(self, save_path):
        reader = tensor_bundle.BundleReader(save_path)
        key = object_graph.OBJECT_GRAPH_PROTO_KEY
        if not reader.has(key):
            raise ValueError(
                f"The specified checkpoint \"{save_path}\" does not appear to be object-based "
                f"(saved with TF2) since it is missing the key \"{key}\". Likely it was "
                "created with the TF1 name-based saver and does not contain an object "
                "dependency graph.")
        value = reader.read(key)
        proto = trackable_object_graph_pb2.TrackableObjectGraph()
        try:
            proto.ParseFromString(value.item() if hasattr(value, "item") else value)
        except Exception as e:  # noqa: BLE001 - a damaged graph is a data loss
            raise errors.DataLossError(None, None, f"The object graph in checkpoint "
                                       f"{save_path} cannot be parsed: {e}") from None
        self._object_graph_proto = proto

    def children(self, node_id):
        """{local name: node id} of the node's children."""
        return {c.local_name: c.node_id for c in self._object_graph_proto.nodes[node_id].children}

    def descendants(self):
        """Node ids reachable from the root, breadth first."""
        return list(self._descendants_with_paths().keys())

    def _descendants_with_paths(self):
        paths = {0: "root"}
        to_visit = collections.deque([0])
        while to_visit:
            node_id = to_visit.popleft()
            for child in self._object_graph_proto.nodes[node_id].children:
                if child.node_id == 0 or child.node_id in paths:
                    continue
                to_visit.append(child.node_id)
                paths[child.node_id] = paths[node_id] + "." + child.local_name
        return paths

    def match(self, obj):
        """{node id: trackable} of the nodes with a live object at the same path from
        `obj` (the root matches node 0)."""
        if not (object_graph.is_trackable(obj) or isinstance(obj, (list, tuple, dict))):
            raise ValueError(f"Expected a Trackable, got {obj} of type {type(obj)}.")
        overlapping = {0: obj}
        to_visit = collections.deque([(0, obj)])
        visited = set()
        while to_visit:
            node_id, trackable = to_visit.popleft()
            live = TrackableView.children(trackable)
            for name, child_id in self.children(node_id).items():
                if child_id in visited or child_id == 0 or name not in live:
                    continue
                current = overlapping.get(child_id)
                if current is None:
                    overlapping[child_id] = live[name]
                    to_visit.append((child_id, live[name]))
                elif current is not live[name]:
                    tf_logging.warning("Inconsistent references when matching the checkpoint into "
                                 "this object graph. The referenced objects are: (%s and %s).",
                                 current, live[name])
            visited.add(node_id)
        return overlapping

    def diff(self, obj):
        """(match(obj), node ids only in the checkpoint, objects only in `obj`'s graph)."""
        overlapping = self.match(obj)
        matched = {id(o) for o in overlapping.values()}
        only_in_checkpoint = [n for n in self.descendants() if n not in overlapping]
        only_in_trackable = [t for t in TrackableView(obj).descendants()
                             if id(t) not in matched]
        return overlapping, only_in_checkpoint, only_in_trackable

"""A checkpoint written through a sharding callback
(`CheckpointOptions(experimental_sharding_callback=...)`), as TF's MultiDeviceSaver does:
the saved tensors become `ShardableTensor`s grouped by device task, the callback splits
each task's tensors into shards, each shard is written as a bundle of its own under
`<prefix>_temp/part-0000i-of-0000N` (its tensors in the callback's order; slices as
TensorBundle slices), and the parts are merged into `<prefix>.index` +
`<prefix>.data-0000i-of-0000N` (bundle_merge.py), which TensorFlow reads.
"""

from __future__ import annotations

import os

import numpy as np

from ndflow.checkpoint import bundle_merge, saveables, tensor_bundle, tensor_slices
from ndflow.checkpoint.sharding import ShardableTensor
from ndflow.core import context, dtypes
from ndflow.core.devices import DeviceSpec
from ndflow.ops.array_core import constant

_DEFAULT_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def _task(spec: DeviceSpec) -> str:
    """The task a device belongs to, as TF groups tensors (its device set to CPU:0)."""
    return DeviceSpec(job=spec.job, replica=spec.replica, task=spec.task,
                      device_type="CPU", device_index=0).to_string()


def _numpy(tensor) -> np.ndarray:
    if hasattr(tensor, "numpy"):
        return saveables._host(tensor)
    return np.asarray(tensor)


def _shardable(items) -> dict[str, list[ShardableTensor]]:
    """{task: [ShardableTensor, ...]} of (key, value, dtype, device, trackable) items."""
    by_task: dict[str, list[ShardableTensor]] = {}
    for key, value, dtype, device, obj in items:
        tensor = constant(value, dtype=dtype)
        spec = DeviceSpec.from_string(device or _DEFAULT_DEVICE)
        by_task.setdefault(_task(spec), []).append(ShardableTensor(
            _tensor_save_spec=None, tensor=tensor, dtype=dtype, device=spec, name=key,
            shape=tensor.shape, slice_spec="", checkpoint_key=key, trackable=obj))
    return by_task


def _write_part(prefix: str, shard: dict) -> None:
    writer = tensor_bundle.BundleWriter(prefix)
    for key, slices in shard.items():
        for spec, tensor in slices.items():
            if tensor is None:  # recorded in the object graph, no value saved
                continue
            spec = spec.strip()
            if spec:
                full_shape, extents = tensor_slices.parse_spec(spec)
                writer.add_slice(key, full_shape, extents, _numpy(tensor))
            else:
                writer.add(key, _numpy(tensor))
    writer.finish()


def write_sharded(file_prefix: str, callback, items) -> None:
    """Writes the checkpoint of `items` [(checkpoint key, NumPy value, DType, device,
    trackable)] in the shards `callback` makes."""
    remove_stale_parts(file_prefix)
    with context.eager_scope():  # the values are fetched already; TF1 graphs too
        by_task = _shardable(items)
        shards = [shard for tensors in by_task.values() for shard in callback(tensors)]
        suffix = ".part" if file_prefix.startswith("s3://") else "_temp/part"
        parts = []
        for i, shard in enumerate(shards):
            part = f"{file_prefix}{suffix}-{i:05d}-of-{len(shards):05d}"
            _write_part(part, shard)
            parts.append(part)
    bundle_merge.merge_bundles(parts, file_prefix, delete_old_dirs=True)


def checkpoint_items(graph, variables, values, tables, serialized, proto_bytes) -> list:
    """The tensors an object-graph checkpoint saves, in TF's order: each node's tensors in
    node order, then the object graph."""
    items = []
    for (node_id, var), value in zip(variables, values):
        items.append((node_id, (graph.key(node_id), value, var.dtype, var.device, var)))
    for (node_id, obj), tensors in zip(tables, serialized):
        prefix = graph.saveable_key(node_id)
        for suffix, value in tensors.items():
            dtype = dtypes.string if value.dtype == object else dtypes.as_dtype(value.dtype)
            items.append((node_id, (prefix + suffix, value, dtype,
                                    getattr(obj, "device", None) or "", obj)))
    items.sort(key=lambda pair: pair[0])
    out = [item for _, item in items]
    out.append((OBJECT_GRAPH_KEY, np.array(proto_bytes, dtype=object), dtypes.string, "",
                None))
    return out


OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def remove_stale_parts(file_prefix: str) -> None:
    """Leaves no parts of an earlier, interrupted sharded save in the temp directory."""
    temp = f"{file_prefix}_temp"
    if os.path.isdir(temp):
        for name in os.listdir(temp):
            if name.startswith("part-"):
                tensor_bundle._remove_quietly(os.path.join(temp, name))

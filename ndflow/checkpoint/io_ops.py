"""TensorFlow's checkpoint ops (SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename) with
host kernels over the TensorBundle code, so graphs that TensorFlow's TF1 Saver built (a
`.meta` file from TensorFlow) import and run here: its `save/SaveV2` writes a bundle, its
`save/RestoreV2` reads one.

They are declared here rather than in ops/ because their kernels need the bundle format,
which lives in this package (layer 5); kernels/ (layer 2) could not import it.
"""

from __future__ import annotations

import os

import numpy as np
import torch

from ndflow.checkpoint import bundle_merge, tensor_slices
from ndflow.checkpoint.tensor_bundle import (
    BundleReader,
    BundleWriter,
    data_filename,
    index_filename,
    numpy_dtype_of,
)
from ndflow.core import errors, narrow_dtypes
from ndflow.core.shapes import TensorShape
from ndflow.kernels.registry import host_kernel
from ndflow.ops.op_def import op_def

SaveV2 = op_def(
    "SaveV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string",
                      "tensors: dtypes"],
    attrs=["dtypes: list(type)"], stateful=True, gradient_undefined=True, shape=lambda ctx: [])

RestoreV2 = op_def(
    "RestoreV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string"],
    outputs=["tensors: dtypes"], attrs=["dtypes: list(type)"], stateful=True,
    gradient_undefined=True, shape=lambda ctx: [TensorShape(None)] * len(ctx.attrs["dtypes"]))

MergeV2Checkpoints = op_def(
    "MergeV2Checkpoints", inputs=["checkpoint_prefixes: string", "destination_prefix: string"],
    attrs=["delete_old_dirs: bool = true", "allow_missing_files: bool = false"],
    stateful=True, gradient_undefined=True, shape=lambda ctx: [])

ShardedFilename = op_def(
    "ShardedFilename", inputs=["basename: string", "shard: int32", "num_shards: int32"],
    outputs=["filename: string"], gradient_undefined=True,
    shape=lambda ctx: [TensorShape([])])


def _str(value) -> str:
    value = np.asarray(value, dtype=object).reshape(-1)[0] if not isinstance(value, bytes) \
        else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _strings(value) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else str(v)
            for v in np.asarray(value, dtype=object).reshape(-1)]


def _slice_specs(shape_and_slices, count: int) -> list:
    """Per tensor: None (the whole tensor), or (full shape, extents) of a slice spec
    ("7 2 3,2:0,2": a partitioned variable's part, as TF's Saver writes them)."""
    specs = _strings(shape_and_slices)
    if len(specs) != count:
        raise errors.InvalidArgumentError(None, None, f"Expected {count} shape_and_slices, "
                                                      f"got {len(specs)}")
    try:
        return [tensor_slices.parse_spec(s) if s else None for s in specs]
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"Bad slice specs: {specs}") from None


def _to_numpy(value, dtype=None) -> np.ndarray:
    if isinstance(value, torch.Tensor) and dtype is not None and narrow_dtypes.is_extra(dtype):
        out = narrow_dtypes.storage_to_numpy(value.detach().cpu(), dtype)
        return out.view(dtype.as_numpy_dtype) if dtype.is_quantized else out
    if isinstance(value, torch.Tensor):
        if value.dtype is torch.bfloat16:
            return value.float().numpy().astype(numpy_dtype_of(14))
        return value.detach().cpu().numpy()
    return np.asarray(value)


@host_kernel(SaveV2)
def _save_v2(node):
    def save(prefix, tensor_names, shape_and_slices, *tensors):
        names = _strings(tensor_names)
        if len(names) != len(tensors):
            raise errors.InvalidArgumentError(None, None, f"Expected {len(tensors)} tensor "
                                                          f"names, got {len(names)}")
        writer = BundleWriter(_str(prefix))
        for name, spec, tensor, dtype in zip(names, _slice_specs(shape_and_slices, len(names)),
                                             tensors, node.input_dtypes[3:]):
            if spec is None:
                writer.add(name, _to_numpy(tensor, dtype))
            else:
                writer.add_slice(name, spec[0], spec[1], _to_numpy(tensor, dtype))
        writer.finish()
    return save


@host_kernel(RestoreV2)
def _restore_v2(node):
    dtypes = node.attrs["dtypes"]

    def restore(prefix, tensor_names, shape_and_slices):
        reader = BundleReader(_str(prefix))
        out = []
        names = _strings(tensor_names)
        for name, spec, dtype in zip(names, _slice_specs(shape_and_slices, len(names)),
                                     dtypes):
            value = reader.read(name) if spec is None else reader.read_slice(name, spec[1])
            saved = numpy_dtype_of(reader.dtype_enum(name))
            if dtype.name == "string":
                out.append(value)
                continue
            if dtype.name == "bfloat16":
                out.append(torch.from_numpy(value.astype(np.float32)).to(torch.bfloat16))
                continue
            if saved != np.dtype(dtype.as_numpy_dtype):
                raise errors.InvalidArgumentError(
                    None, None, f"tensor_name = {name}; expected dtype {dtype.name} does not "
                                f"equal original dtype {saved}")
            if narrow_dtypes.is_extra(dtype):   # qint8's structured values, float8's, ...
                plain = value.view(dtype.np_dtype) if dtype.is_quantized else value
                out.append(narrow_dtypes.numpy_to_storage(np.array(plain), dtype))
                continue
            out.append(torch.from_numpy(np.array(value)))
        return out[0] if len(out) == 1 else tuple(out)  # one output: the bare value
    return restore


@host_kernel(MergeV2Checkpoints)
def _merge_v2(node):
    delete_old_dirs = node.attrs.get("delete_old_dirs", True)

    def merge(checkpoint_prefixes, destination_prefix):
        prefixes = _strings(checkpoint_prefixes)
        destination = _str(destination_prefix)
        if len(prefixes) != 1:  # a sharded save's parts (bundle_merge.py: TF's MergeBundles)
            bundle_merge.merge_bundles(prefixes, destination, delete_old_dirs)
            return
        source = prefixes[0]
        reader = BundleReader(source)
        if source != destination:  # one shard: its files become the destination's
            writer = BundleWriter(destination)
            for key in reader.keys():
                writer.add(key, reader.read(key))
            writer.finish()
            for path in (index_filename(source), data_filename(source)):
                if os.path.exists(path):
                    os.remove(path)
            parent = os.path.dirname(source)
            if delete_old_dirs and parent and not os.listdir(parent):
                os.rmdir(parent)
    return merge


@host_kernel(ShardedFilename)
def _sharded_filename(node):
    def sharded(basename, shard, num_shards):
        return np.array(f"{_str(basename)}-{int(shard):05d}-of-{int(num_shards):05d}".encode(),
                        dtype=object)
    return sharded

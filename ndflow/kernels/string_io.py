"""Kernels of ReadFile/WriteFile, SerializeTensor/ParseTensor and DecodeCompressed, with
TensorFlow's error types and messages."""

from __future__ import annotations

import base64
import os
import re
import zlib

import numpy as np
import torch
from google.protobuf.message import DecodeError
from tensorboard.compat.proto import tensor_pb2

from ndflow.core import dtypes
from ndflow.core.errors import DataLossError, InvalidArgumentError, NotFoundError
from ndflow.core.graph_def import ndarray_to_tensor_proto, tensor_proto_to_ndarray
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import string_io_ops as ops

# TensorFlow's DataTypeString names in ParseTensor's message
_TF_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _name(path) -> str:
    return np.asarray(path, dtype=object).item().decode("utf-8", "replace")


@host_kernel(ops.ReadFile)
def _read_file(node):
    def read_file(filename):
        path = _name(filename)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{path}; No such file or directory") from None
        return np.array(data, dtype=object)
    return read_file


@host_kernel(ops.WriteFile)
def _write_file(node):
    def write_file(filename, contents):
        path = _name(filename)
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(np.asarray(contents, dtype=object).item())
    return write_file


def _serialize(node):
    dt = node.input_dtypes[0]

    def serialize(x):
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu()
            x = (x.float() if x.dtype == torch.bfloat16 else x).numpy()
        p = ndarray_to_tensor_proto(x, dt)
        p.tensor_shape.SetInParent()  # TF writes the (possibly empty) shape field
        return np.array(p.SerializeToString(), dtype=object)
    return serialize


host_kernel(ops.SerializeTensor)(_serialize)
kernel(ops.SerializeTensor)(_serialize)


@host_kernel(ops.ParseTensor)
def _parse_tensor(node):
    out = node.attrs["out_type"]

    def parse(serialized):
        data = np.asarray(serialized, dtype=object).item()
        p = tensor_pb2.TensorProto()
        try:
            p.ParseFromString(data)
            arr, dt = tensor_proto_to_ndarray(p)
        except (DecodeError, ValueError, TypeError, KeyError):
            raise InvalidArgumentError(None, None, "Could not parse `serialized` as "
                                       "TensorProto, base64: "
                                       f"{base64.b64encode(data).decode()}") from None
        if dt is not out:
            raise InvalidArgumentError(None, None, "Type mismatch between parsed tensor ("
                                       f"{_TF_NAMES.get(dt.name, dt.name)}) and dtype ("
                                       f"{_TF_NAMES.get(out.name, out.name)})")
        if out is dtypes.string:
            return arr
        return torch.from_numpy(np.array(arr)).to(out.torch_dtype)
    return parse


@host_kernel(ops.DecodeCompressed)
def _decode_compressed(node):
    kind = node.attrs["compression_type"]
    wbits = {"": None, "ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}
    if kind not in wbits:
        raise InvalidArgumentError(None, None, "Only ZLIB, GZIP or NONE are supported "
                                   "compressions")

    def one(v: bytes) -> bytes:
        if wbits[kind] is None:
            return v
        try:
            return zlib.decompress(v, wbits[kind])
        except zlib.error as e:  # zlib's "Error -3 while decompressing data: ..." as TF says it
            m = re.match(r"Error (-?\d+) while decompressing data: (.*)", str(e))
            text = f"with error {m[1]}: {m[2]}" if m else str(e)
            raise DataLossError(None, None, f"inflate() failed {text}") from None

    def decode(x):
        x = np.asarray(x, dtype=object)
        out = np.empty(x.shape, dtype=object)
        for idx in np.ndindex(x.shape):
            out[idx] = one(x[idx])
        return out
    return decode

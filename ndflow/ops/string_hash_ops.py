"""`tf.strings.to_hash_bucket{,_fast,_strong}`: TensorFlow's StringToHashBucket ops (kernels and
the hash functions in kernels/string_hash.py give TensorFlow's exact buckets)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _hash_op(name, input_name="input", attrs=()):
    return op_def(name, inputs=[f"{input_name}: string"], outputs=["output: int64"],
                  attrs=["num_buckets: int >= 1", *attrs], shape=lambda ctx: [ctx.shapes[0]],
                  not_differentiable=True)


StringToHashBucketFast = _hash_op("StringToHashBucketFast")
StringToHashBucketStrong = _hash_op("StringToHashBucketStrong", attrs=["key: list(int)"])
StringToHashBucket = _hash_op("StringToHashBucket", "string_tensor")


def _hash(op, input, num_buckets, attrs, name):  # noqa: A002 - TF's name
    x = convert_to_tensor(input, dtypes.string, name="input")
    return apply_op(op, [x], {"num_buckets": int(num_buckets), **attrs}, name=name).outputs[0]


@tf_export("strings.to_hash_bucket_fast", v1=["strings.to_hash_bucket_fast",
                                               "string_to_hash_bucket_fast"])
def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """Each string's FarmHash Fingerprint64 modulo `num_buckets` (int64)."""
    return _hash(StringToHashBucketFast, input, num_buckets, {}, name)


@tf_export("strings.to_hash_bucket_strong", v1=["strings.to_hash_bucket_strong",
                                                 "string_to_hash_bucket_strong"])
def string_to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """Each string's SipHash-2-4 under `key` (two ints) modulo `num_buckets` (int64)."""
    key = [int(k) for k in key]
    return _hash(StringToHashBucketStrong, input, num_buckets, {"key": key}, name)


@tf_export("strings.to_hash_bucket", v1=[])
def string_to_hash_bucket(input, num_buckets, name=None):  # noqa: A002
    """Each string's (legacy, unstable across TF builds in principle) Hash64 modulo
    `num_buckets`; prefer to_hash_bucket_fast."""
    return _hash(StringToHashBucket, input, num_buckets, {}, name)


@tf_export(v1=["strings.to_hash_bucket", "string_to_hash_bucket"])
def string_to_hash_bucket_v1(string_tensor=None, num_buckets=None, name=None, input=None):  # noqa: A002
    """Hashes each string to an int64 bucket in [0, num_buckets) (TF1 signature).

    This uses TensorFlow's legacy string hash (not the fingerprint of
    `tf.strings.to_hash_bucket_fast`), so the buckets match TensorFlow's.

    Args:
      string_tensor: a string tensor.
      num_buckets: the number of buckets (>= 1).
      name: optional name for the operation.
      input: the same as `string_tensor` (its TF2 name); takes precedence when given.

    Returns:
      An int64 tensor of the input's shape.

    Example:
      >>> tf.compat.v1.string_to_hash_bucket(["a", "b"], 10).numpy()
      array([8, 0])
    """
    return string_to_hash_bucket(input if input is not None else string_tensor, num_buckets,
                                 name)


def _fingerprint_shape(ctx):
    data = ctx.shapes[0]
    if data.rank is not None and data.rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {data.rank}")
    ctx.shapes[1].with_rank(0)
    return [TensorShape([data[0] if data.rank else None, 8])]


Fingerprint = op_def("Fingerprint", inputs=["data: T", "method: string"],
                     outputs=["fingerprint: uint8"], attrs=["T: type"],
                     shape=_fingerprint_shape, gradient_undefined=True)


@tf_export("fingerprint", v1=["fingerprint"])
def fingerprint(data, method="farmhash64", name=None):
    """Stable 64-bit fingerprints of the rows of a tensor.

    For numeric data the fingerprint covers each row's bytes; for strings it combines the
    fingerprints of the row's strings. The values match TensorFlow's (FarmHash Fingerprint64).

    Args:
      data: a tensor of rank >= 1; its first dimension indexes the rows.
      method: "farmhash64", the only method.
      name: optional name for the operation.

    Returns:
      A uint8 tensor [rows, 8]: each row's fingerprint as little-endian bytes.

    Example:
      >>> tf.fingerprint(tf.constant(["a", "b"])).shape
      TensorShape([2, 8])
    """
    return apply_op(Fingerprint, [data, convert_to_tensor(method, dtypes.string)],
                    name=name).outputs[0]

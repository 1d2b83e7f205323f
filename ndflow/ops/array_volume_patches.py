"""ExtractVolumePatches (`tf.extract_volume_patches`): the 3-D analogue of
ExtractImagePatches (ops/image_crops.py). Each `ksizes[1] x ksizes[2] x ksizes[3]` window of
a [batch, planes, rows, cols, depth] input, every `strides[1:4]`, SAME (zero padded, the
smaller half before; as TF's Eigen kernel, a negative "padding" where the stride passes the
end starts the windows inside the input) or VALID, flattened in (plane, row, col, depth)
order into the last dimension. Kernel: kernels/array_volume_patches.py (one strided view
of the padded input).

Its shape function is TF's (including its checks of the attrs' lengths), with one deviation:
where a spatial dimension is unknown, TF's claims a rank-4 [batch, ?, ?, depth] output for
this rank-5 op; ndflow's is [batch, ?, ?, ?, depth]. Running eagerly, the attrs are checked
as TF's kernel checks them (UnimplementedError for a window or stride across batch or depth,
OutOfRangeError below 1), before the input's rank.

The gradient is TF's array_grad.py `_ExtractVolumePatchesGrad`: the patches of a volume of
voxel numbers (1.., 0 for the padding) say where each patch entry came from, and the
gradient is summed back there (ndflow: an unsorted segment sum, where TF multiplies by a
sparse 0/1 matrix). Unlike TF's, it works with unknown spatial dimensions.
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError, OutOfRangeError, UnimplementedError
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_gather, array_range, array_transpose
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.nn_common import check_rank
from ndflow.ops.op_def import op_def

_T = ("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
      "uint64}")


def check_kernel_attrs(attrs) -> None:
    """TF's kernel constructor (ParseAttributeVec5): windows and strides across space only,
    each at least 1."""
    for name in ("ksizes", "strides"):
        v = attrs[name]
        if v[0] != 1 or v[4] != 1:
            raise UnimplementedError(None, None, f"Only support {name} across space.")
        if min(v[1], v[2], v[3]) < 1:
            raise OutOfRangeError(None, None, f"{name} is out of range.")


def patch_size(size: int, k: int, stride: int, padding: str) -> tuple[int, int]:
    """(output size, padding before) of one spatial dim, as TF's kernel: the output size of
    GetWindowedOutputSizeVerbose (ValueError when it would be negative; C++ integer
    division), the padding before as Eigen's volume patches take it for SAME: half the
    padding needed, truncated toward zero and NOT clamped at 0, so a stride past the end
    moves the first window into the input (size 4, window 1, stride 4: it starts at 1)."""
    if stride <= 0:
        raise ValueError(f"Stride must be > 0, but got {stride}")
    if padding == "SAME":
        out = (size + stride - 1) // stride
        needed = (out - 1) * stride + k - size
        return out, int(needed / 2)
    n = size - k + stride
    out = n // stride if n >= 0 else -((-n) // stride)
    if out < 0:
        raise ValueError(f"Computed output size would be negative: {out} [input_size: {size}, "
                         f"effective_filter_size: {k}, stride: {stride}]")
    return out, 0


def _multiply(a, b):
    """InferenceContext::Multiply of two dims (None: unknown)."""
    for x, y in ((a, b), (b, a)):
        if x == 0:
            return 0
        if x == 1 and y is not None and y >= 0:
            return y
    if a is None or b is None:
        return None
    if a * b < 0:
        raise ValueError(f"Negative dimension size caused by overflow when multiplying {a} "
                         f"and {b}")
    return a * b


def _shape(ctx):
    """TF's shape function. Running eagerly, TF runs none: its kernel checks the attrs and
    the input (kernels/array_volume_patches.py, TF's messages)."""
    k, s = list(ctx.attrs["ksizes"]), list(ctx.attrs["strides"])
    eager = context.executing_eagerly()
    for name, v in (("ksizes", k), ("strides", s)):
        if len(v) < 5:   # the OpDef's minimum length
            if eager:
                raise InvalidArgumentError(None, None, f"Length for attr '{name}' of {len(v)} "
                                           f"must be at least minimum 5")
            raise ValueError(f"Attr '{name}' of 'ExtractVolumePatches' Op passed list of "
                             f"length {len(v)} less than minimum 5.")
    if eager:
        return [TensorShape(None)]
    x = check_rank(ctx.shapes[0], 5)
    if len(k) != 5:
        raise ValueError(f"ExtractVolumePatches requires the ksizes attribute to contain 5 "
                         f"values, but got: {len(k)}")
    if len(s) != 5:
        raise ValueError(f"ExtractVolumePatches requires the stride attribute to contain 5 "
                         f"values, but got: {len(s)}")
    depth = _multiply(x[4], k[1] * k[2] * k[3])
    if any(x[d] is None for d in (1, 2, 3)):
        return [TensorShape([x[0], None, None, None, depth])]
    out = [patch_size(x[d], k[d], s[d], ctx.attrs["padding"])[0] for d in (1, 2, 3)]
    return [TensorShape([x[0]] + out + [depth])]


ExtractVolumePatches = op_def(
    "ExtractVolumePatches", inputs=["input: T"], outputs=["patches: T"],
    attrs=["ksizes: list(int) >= 5", "strides: list(int) >= 5", _T,
           "padding: {'SAME', 'VALID'}"], shape=_shape)


@tf_export("extract_volume_patches")
def extract_volume_patches(input, ksizes, strides, padding, name=None) -> Tensor:  # noqa: A002
    """`tf.extract_volume_patches` (the raw op): the `ksizes[1:4]` windows (every
    `strides[1:4]`) of a [batch, planes, rows, cols, depth] input, flattened into the depth
    dimension: [batch, out_planes, out_rows, out_cols, kp * kr * kc * depth]."""
    x = convert_to_tensor(input, name="input")
    if isinstance(padding, bytes):
        padding = padding.decode()
    attrs = {"ksizes": [int(v) for v in ksizes], "strides": [int(v) for v in strides],
             "padding": padding}
    return apply_op(ExtractVolumePatches, [x], attrs, name=name).outputs[0]


@ExtractVolumePatches.def_grad
def _extract_volume_patches_grad(op, grad):
    shape = array_core.shape(op.inputs[0], out_type=dtypes.int64)
    batch, planes, rows, cols, channels = array_core.unstack(shape, 5)
    out_shape = array_core.shape(op.outputs[0], out_type=dtypes.int64)
    ksizes = list(op.get_attr("ksizes"))
    voxels = planes * rows * cols
    # Voxel numbers from 1 (0 marks the padding), patched as the input was.
    numbers = array_core.reshape(array_range.range(1, voxels + 1, dtype=dtypes.int64),
                                 array_core.stack([1, planes, rows, cols, 1]))
    where = apply_op(ExtractVolumePatches, [numbers],
                     {"ksizes": ksizes, "strides": list(op.get_attr("strides")),
                      "padding": op.get_attr("padding")}).outputs[0]
    where = array_core.reshape(where, [-1])
    g = array_core.reshape(grad, array_core.stack(
        [batch, out_shape[1], out_shape[2], out_shape[3]] + [int(v) for v in ksizes[1:4]]
        + [channels]))
    g = array_core.reshape(array_transpose.transpose(g, [1, 2, 3, 4, 5, 6, 0, 7]),
                           array_core.stack([-1, batch * channels]))
    summed = array_gather.unsorted_segment_sum(g, where, voxels + 1)[1:]
    summed = array_core.reshape(summed, array_core.stack([planes, rows, cols, batch, channels]))
    return [array_transpose.transpose(summed, [3, 0, 1, 2, 4])]

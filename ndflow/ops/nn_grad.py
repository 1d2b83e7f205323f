"""Gradients of the nn family (TF's nn_grad.py): activations, convolutions and BiasAdd,
pooling, fused batch norm (and its backward op, TF's nn_fused_batch_norm_grad.py), the
cross-entropy losses, L2Loss and TopKV2.

Imported after every op family (ndflow/ops/__init__.py), so a gradient uses any op directly.
Second derivatives are TF's too (ReluGrad -> ReluGrad, Conv2DBackpropInput -> Conv2D, ...).
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.graph import SymbolicTensor
from ndflow.ops import nn_activation as act
from ndflow.ops import nn_conv as conv
from ndflow.ops import nn_loss as loss
from ndflow.ops import nn_lrn, nn_morphology, nn_pool_argmax, sort
from ndflow.ops import nn_norm as norm
from ndflow.ops import nn_pool as pool
from ndflow.ops.apply import apply_op
from ndflow.ops.arithmetic import (
    add,
    multiply,
    reciprocal,
    select_v2,
    squared_difference,
    subtract,
)
from ndflow.ops.array_core import (
    expand_dims,
    reshape,
    shape,
    shape_n,
    squeeze,
    stack,
    stop_gradient,
)
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.array_gather import unsorted_segment_sum
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.comparison import less
from ndflow.ops.linalg import matmul
from ndflow.ops.math import exp, rsqrt, sigmoid
from ndflow.ops.op_def import input_needed
from ndflow.ops.reduction import reduce_mean, reduce_prod, reduce_sum


def _apply(op_def_, inputs, attrs=None):
    return apply_op(op_def_, inputs, attrs).outputs[0]


def _shape(t):
    return shape(t, out_type=dtypes.int32)


# -- activations ---------------------------------------------------------------------------------


@act.Relu.def_grad
def _relu_grad(op, grad):
    return [_apply(act.ReluGrad, [grad, op.outputs[0]])]


@act.ReluGrad.def_grad
def _relu_grad_grad(op, grad):
    x = op.inputs[1]
    return [_apply(act.ReluGrad, [grad, x]), zeros_like(x)]


@act.Relu6.def_grad
def _relu6_grad(op, grad):
    return [_apply(act.Relu6Grad, [grad, op.outputs[0]])]


@act.Relu6Grad.def_grad
def _relu6_grad_grad(op, grad):
    x = op.inputs[1]
    return [_apply(act.Relu6Grad, [grad, x]), zeros_like(x)]


@act.Elu.def_grad
def _elu_grad(op, grad):
    return [_apply(act.EluGrad, [grad, op.outputs[0]])]


@act.Selu.def_grad
def _selu_grad(op, grad):
    return [_apply(act.SeluGrad, [grad, op.outputs[0]])]


def _where_negative(x, value):
    zeros = zeros_like(x)
    return select_v2(less(x, zeros), value, zeros)


@act.EluGrad.def_grad
def _elu_grad_grad(op, grad):
    elu_x = op.inputs[1]
    return [_apply(act.EluGrad, [grad, elu_x]), _where_negative(elu_x, grad * op.inputs[0])]


@act.SeluGrad.def_grad
def _selu_grad_grad(op, grad):
    selu_x = op.inputs[1]
    return [_apply(act.SeluGrad, [grad, selu_x]), _where_negative(selu_x, grad * op.inputs[0])]


@act.LeakyRelu.def_grad
def _leaky_relu_grad(op, grad):
    return [_apply(act.LeakyReluGrad, [grad, op.inputs[0]], {"alpha": op.get_attr("alpha")})]


@act.LeakyReluGrad.def_grad
def _leaky_relu_grad_grad(op, grad):
    x = op.inputs[1]
    return [_apply(act.LeakyReluGrad, [grad, x], {"alpha": op.get_attr("alpha")}),
            zeros_like(x)]


@act.Softplus.def_grad
def _softplus_grad(op, grad):
    return [grad * sigmoid(op.inputs[0])]


@act.SoftplusGrad.def_grad
def _softplus_grad_grad(op, grad):
    dy, x = op.inputs
    ddy = _apply(act.SoftplusGrad, [grad, x])
    d2x = grad * dy / (exp(-x) + 2.0 + exp(x))
    return [ddy, d2x]


@act.Softmax.def_grad
def _softmax_grad(op, grad_softmax):
    softmax = op.outputs[0]
    sum_channels = reduce_sum(grad_softmax * softmax, -1, keepdims=True)
    return [(grad_softmax - sum_channels) * softmax]


@act.LogSoftmax.def_grad
def _log_softmax_grad(op, grad):
    softmax = exp(op.outputs[0])
    return [grad - reduce_sum(grad, -1, keepdims=True) * softmax]



# -- convolutions, BiasAdd ---------------------------------------------------------------------


def _window_attrs(op, names=("strides", "padding", "explicit_paddings", "data_format",
                             "dilations")) -> dict:
    attrs = {n: op.get_attr(n) for n in names}
    if "use_cudnn_on_gpu" in op.attrs:
        attrs["use_cudnn_on_gpu"] = op.get_attr("use_cudnn_on_gpu")
    return attrs


@conv.Conv2D.def_grad
def _conv2d_grad(op, grad):
    attrs = _window_attrs(op)
    shape_0, shape_1 = shape_n([op.inputs[0], op.inputs[1]], out_type=dtypes.int32)
    return [_apply(conv.Conv2DBackpropInput, [shape_0, op.inputs[1], grad], attrs)
            if input_needed(op, 0) else None,
            _apply(conv.Conv2DBackpropFilter, [op.inputs[0], shape_1, grad], attrs)
            if input_needed(op, 1) else None]


@conv.Conv2DBackpropInput.def_grad
def _conv2d_backprop_input_grad(op, grad):
    attrs = _window_attrs(op)
    return [None,
            _apply(conv.Conv2DBackpropFilter, [grad, _shape(op.inputs[1]), op.inputs[2]], attrs),
            _apply(conv.Conv2D, [grad, op.inputs[1]], attrs)]


@conv.Conv2DBackpropFilter.def_grad
def _conv2d_backprop_filter_grad(op, grad):
    attrs = _window_attrs(op)
    return [_apply(conv.Conv2DBackpropInput, [_shape(op.inputs[0]), grad, op.inputs[2]], attrs),
            None,
            _apply(conv.Conv2D, [op.inputs[0], grad], attrs)]


@conv.DepthwiseConv2dNative.def_grad
def _depthwise_grad(op, grad):
    attrs = _window_attrs(op)
    return [_apply(conv.DepthwiseConv2dNativeBackpropInput,
                 [_shape(op.inputs[0]), op.inputs[1], grad], attrs)
            if input_needed(op, 0) else None,
            _apply(conv.DepthwiseConv2dNativeBackpropFilter,
                 [op.inputs[0], _shape(op.inputs[1]), grad], attrs)
            if input_needed(op, 1) else None]


@conv.DepthwiseConv2dNativeBackpropInput.def_grad
def _depthwise_backprop_input_grad(op, grad):
    attrs = _window_attrs(op)
    return [None,
            _apply(conv.DepthwiseConv2dNativeBackpropFilter,
                 [grad, _shape(op.inputs[1]), op.inputs[2]], attrs),
            _apply(conv.DepthwiseConv2dNative, [grad, op.inputs[1]], attrs)]


@conv.DepthwiseConv2dNativeBackpropFilter.def_grad
def _depthwise_backprop_filter_grad(op, grad):
    attrs = _window_attrs(op)
    return [_apply(conv.DepthwiseConv2dNativeBackpropInput,
                 [_shape(op.inputs[0]), grad, op.inputs[2]], attrs),
            None,
            _apply(conv.DepthwiseConv2dNative, [op.inputs[0], grad], attrs)]


@conv.BiasAdd.def_grad
def _bias_add_grad(op, received_grad):
    return [received_grad, _apply(conv.BiasAddGrad, [received_grad],
                                {"data_format": op.get_attr("data_format")})]


@conv.BiasAddGrad.def_grad
def _bias_add_grad_grad(op, received_grad):
    # TF reshapes received_grad to [1,..,C(,1,..)] and tiles it to the input's shape; a
    # conv.BiasAdd of the gradient onto zeros is the same broadcast in one node.
    fmt = op.get_attr("data_format")
    return [_apply(conv.BiasAdd, [zeros_like(op.inputs[0]), received_grad],
                 {"data_format": fmt})]



# -- pooling -----------------------------------------------------------------------------------


_POOL_ATTRS = ("ksize", "strides", "padding", "data_format")


def _attrs(op, names) -> dict:
    return {n: op.get_attr(n) for n in names}


@pool.MaxPool.def_grad
def _max_pool_grad(op, grad):
    return [_apply(pool.MaxPoolGrad, [op.inputs[0], op.outputs[0], grad],
                 _attrs(op, _POOL_ATTRS + ("explicit_paddings",)))]


@pool.MaxPoolGrad.def_grad
def _max_pool_grad_grad(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return [zeros_like(x), zeros_like(y),
            _apply(pool.MaxPoolGradGrad, [x, y, grad], _attrs(op, _POOL_ATTRS))]


@pool.MaxPoolGradGrad.def_grad
def _max_pool_grad_grad_grad(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return [zeros_like(x), zeros_like(y),
            _apply(pool.MaxPoolGrad, [x, y, grad], _attrs(op, _POOL_ATTRS))]


@pool.AvgPool.def_grad
def _avg_pool_grad(op, grad):
    return [_apply(pool.AvgPoolGrad, [_shape(op.inputs[0]), grad], _attrs(op, _POOL_ATTRS))]


@pool.AvgPoolGrad.def_grad
def _avg_pool_grad_grad(op, grad):
    return [None, _apply(pool.AvgPool, [grad], _attrs(op, _POOL_ATTRS))]


# -- batch norm --------------------------------------------------------------------------------


@norm.FusedBatchNormV3.def_grad
def _fused_batch_norm_v3_grad(op, *grads):
    is_training = op.get_attr("is_training")
    attrs = {
        "epsilon": op.get_attr("epsilon"),
        "data_format": op.get_attr("data_format"),
        "is_training": is_training,
    }
    if is_training:
        r1, r2 = op.outputs[3], op.outputs[4]
    else:
        r1, r2 = op.inputs[3], op.inputs[4]
    dx, dscale, doffset, _, _ = apply_op(
        norm.FusedBatchNormGradV3,
        [grads[0], op.inputs[0], op.inputs[1], r1, r2, op.outputs[5]],
        attrs,
    ).outputs
    return [dx, dscale, doffset, None, None]


def _batch_norm_grad(grad_y, x, scale, pop_mean, pop_var, epsilon: float, data_format: str,
                     is_training: bool) -> tuple:
    """FusedBatchNormGrad's (dx, dscale, doffset) written as ops (TF's `_BatchNormGrad`), so
    it can be differentiated again; float16/bfloat16 are computed in float32."""
    x_dtype = x.dtype
    if x_dtype in (dtypes.float16, dtypes.bfloat16):
        x, grad_y = cast(x, dtypes.float32), cast(grad_y, dtypes.float32)
    nchw = data_format == "NCHW"
    axes = [0, 2, 3] if nchw else [0, 1, 2]
    if nchw:
        channels = [1, -1, 1, 1]
        scale = reshape(scale, channels)
        if not is_training:
            pop_mean, pop_var = reshape(pop_mean, channels), reshape(pop_var, channels)
    if not is_training:
        var_rsqrt = rsqrt(add(pop_var, epsilon))
        grad_scale = reduce_sum(multiply(multiply(grad_y, subtract(x, pop_mean)), var_rsqrt),
                                axes)
        grad_x = multiply(multiply(grad_y, scale), var_rsqrt)
        return cast(grad_x, x_dtype), grad_scale, reduce_sum(grad_y, axes)
    mean_grad_y = reduce_mean(grad_y, axes, keepdims=nchw)
    mean_x = reduce_mean(x, axes, keepdims=nchw)
    var_x = reduce_mean(squared_difference(x, stop_gradient(mean_x)), axes, keepdims=nchw)
    x_offset = subtract(x, mean_x)
    mean = reduce_mean(multiply(grad_y, x_offset), axes, keepdims=nchw)
    var_eps = add(var_x, epsilon)
    grad_x = multiply(multiply(scale, rsqrt(var_eps)),
                      subtract(subtract(grad_y, mean_grad_y),
                               multiply(multiply(reciprocal(var_eps), mean), x_offset)))
    grad_scale = multiply(rsqrt(var_eps),
                          reduce_sum(multiply(grad_y, x_offset), axes, keepdims=nchw))
    if nchw:
        grad_scale = squeeze(grad_scale)
    return cast(grad_x, x_dtype), grad_scale, reduce_sum(grad_y, axes)


@norm.FusedBatchNormGradV3.def_grad
def _fused_batch_norm_grad_v3_grad(op, *grads):
    """TF's `_FusedBatchNormGradGradV3`: differentiates `_batch_norm_grad` at the op's inputs."""
    grad_y, x, scale, pop_mean, pop_var = op.inputs[:5]
    attrs = (op.get_attr("epsilon"), op.get_attr("data_format"), op.get_attr("is_training"))

    def backward(grad_y_, x_, scale_):
        return _batch_norm_grad(grad_y_, x_, scale_, pop_mean, pop_var, *attrs)

    dgrad_y, dx, dscale = context.hooks.vjp(backward, [grad_y, x, scale], list(grads[:3]))
    return [dgrad_y, dx, dscale, None, None, None]


# -- losses ------------------------------------------------------------------------------------


def _broadcast_mul(vec, mat):
    """TF's `_BroadcastMul`: vec [D0] times mat [D0, D1]."""
    return expand_dims(vec, -1) * mat


def _is_zeros(t) -> bool:
    """Whether a gradient is known to be zero: none, or a ZerosLike (TF's IsZero)."""
    return t is None or (isinstance(t, SymbolicTensor) and t.op.type == "ZerosLike")


def _second_order(grad, grad_grad, logits):
    if _is_zeros(grad_grad):
        return grad
    softmax = _apply(act.Softmax, [logits])
    inner = matmul(expand_dims(grad_grad, 1), expand_dims(softmax, 2))
    return grad + (grad_grad - squeeze(inner, axis=1)) * softmax


@loss.SoftmaxCrossEntropyWithLogits.def_grad
def _xent_grad(op, grad_loss, grad_grad):
    logits = op.inputs[0]
    grad = _second_order(_broadcast_mul(grad_loss, op.outputs[1]), grad_grad, logits)
    log_softmax = _apply(act.LogSoftmax, [logits])
    return [grad, _broadcast_mul(grad_loss, -log_softmax)]


@loss.SparseSoftmaxCrossEntropyWithLogits.def_grad
def _sparse_xent_grad(op, grad_loss, grad_grad):
    grad = _second_order(_broadcast_mul(grad_loss, op.outputs[1]), grad_grad, op.inputs[0])
    return [grad, None]


@loss.L2Loss.def_grad
def _l2_loss_grad(op, grad):
    return [op.inputs[0] * grad]


# -- TopKV2 ------------------------------------------------------------------------------------


@sort.ApproxTopK.def_grad
def _approx_top_k_grad(op, grad, _):
    """The value gradients scattered to their indices along the reduction dimension: there
    moved last, TopK's gradient, and moved back."""
    rank = op.inputs[0].shape.rank
    dim = op.attrs["reduction_dimension"] % rank
    if dim == rank - 1:
        return [_scatter_last_axis(grad, op.outputs[1], shape(op.inputs[0]))]
    perm = [d for d in range(rank) if d != dim] + [dim]
    back = [perm.index(d) for d in range(rank)]
    moved = _scatter_last_axis(transpose(grad, perm), transpose(op.outputs[1], perm),
                               shape(transpose(op.inputs[0], perm)))
    return [transpose(moved, back)]


@sort.TopKV2.def_grad
def _top_k_grad(op, grad, _):
    """TF's _TopKGrad: the value gradients scattered into zeros at the flat input indices
    (UnsortedSegmentSum; the indices of one row are distinct, so this is TF's ScatterNd)."""
    return [_scatter_last_axis(grad, op.outputs[1], shape(op.inputs[0])), None]


def _scatter_last_axis(grad, indices, in_shape):
    """`grad` [..., k] scattered into zeros of `in_shape` at `indices` of the last axis."""
    if indices.dtype is not dtypes.int32:
        indices = cast(indices, dtypes.int32)
    ind_shape = shape(indices)
    ind_lastdim = ind_shape[-1]
    ind_2d = reshape(indices, stack([-1, ind_lastdim]))
    in_lastdim = in_shape[-1]
    outerdim = shape(ind_2d)[0]
    offsets = range_(0, multiply(outerdim, in_lastdim), in_lastdim)
    ind = reshape(add(ind_2d, expand_dims(offsets, -1)), [-1])
    flat = unsorted_segment_sum(reshape(grad, [-1]), ind, reduce_prod(in_shape))
    return reshape(flat, in_shape)


# -- LRN ---------------------------------------------------------------------------------------


@nn_lrn.LRN.def_grad
def _lrn_grad(op, grad):
    """TF's _LRNGrad: LRNGrad(grad, input, output) with the forward op's attrs."""
    a = op.attrs
    return [nn_lrn.lrn_grad(grad, op.inputs[0], op.outputs[0], a["depth_radius"], a["bias"],
                            a["alpha"], a["beta"])]


@nn_pool_argmax.MaxPoolWithArgmax.def_grad
def _max_pool_with_argmax_grad(op, grad, _argmax_grad):
    """TF's _MaxPoolGradWithArgmax: the gradient summed into the argmax positions."""
    a = op.attrs
    return [nn_pool_argmax.max_pool_grad_with_argmax(
        op.inputs[0], grad, op.outputs[1], a["ksize"], a["strides"], a["padding"],
        a["include_batch_in_index"])]


@nn_morphology.Dilation2D.def_grad
def _dilation2d_grad(op, grad):
    """TF's _Dilation2DGrad: the two backprop ops with the forward attrs."""
    a = op.attrs
    args = (op.inputs[0], op.inputs[1], grad, a["strides"], a["rates"], a["padding"])
    return [nn_morphology.dilation2d_backprop_input(*args),
            nn_morphology.dilation2d_backprop_filter(*args)]

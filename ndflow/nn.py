"""`tf.nn`: the public neural-network namespace (TF2 names and signatures).

TF1 variants for `tf.compat.v1.nn` live beside them in ndflow.ops (`conv2d_v1`,
`max_pool_v1`, `avg_pool_v1`, `dropout_v1`, `softmax_v1`, `log_softmax_v1`, `moments_v1`,
`fused_batch_norm`, `softmax_cross_entropy_with_logits_v1`,
`sparse_softmax_cross_entropy_with_logits_v1`, `conv2d_backprop_input`,
`conv2d_backprop_filter`); see `compat_v1_names` below.
"""

from ndflow.ops.math import sigmoid, tanh
from ndflow.ops.nn_activation import (
    elu,
    leaky_relu,
    log_softmax,
    log_softmax_v1,
    relu,
    relu6,
    selu,
    softmax,
    softmax_v1,
    softplus,
)
from ndflow.ops.nn_conv import (
    bias_add,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    conv2d_v1,
    depthwise_conv2d,
    depthwise_conv2d_native,
)
from ndflow.ops.nn_dropout import dropout, dropout_v1
from ndflow.ops.nn_loss import (
    l2_loss,
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v1,
    sparse_softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits_v1,
)
from ndflow.ops.nn_norm import batch_normalization, fused_batch_norm, moments, moments_v1
from ndflow.ops.nn_pool import avg_pool, avg_pool2d, avg_pool_v1, max_pool, max_pool2d, max_pool_v1
from ndflow.ops.norms import l2_normalize
from ndflow.ops.sort import top_k

__all__ = [
    "avg_pool", "avg_pool2d", "batch_normalization", "bias_add", "conv2d", "conv2d_transpose",
    "depthwise_conv2d", "depthwise_conv2d_native", "dropout", "elu", "l2_loss", "l2_normalize",
    "leaky_relu",
    "log_softmax", "max_pool", "max_pool2d", "moments", "relu", "relu6", "selu",
    "sigmoid", "sigmoid_cross_entropy_with_logits", "softmax",
    "softmax_cross_entropy_with_logits", "softplus", "sparse_softmax_cross_entropy_with_logits",
    "tanh", "top_k",
]

# `tf.compat.v1.nn.<name>` -> the function implementing it (for the compat namespace).
compat_v1_names = {
    "avg_pool": avg_pool_v1, "avg_pool2d": avg_pool2d, "batch_normalization":
    batch_normalization, "bias_add": bias_add, "conv2d": conv2d_v1,
    "conv2d_backprop_filter": conv2d_backprop_filter,
    "conv2d_backprop_input": conv2d_backprop_input, "depthwise_conv2d": depthwise_conv2d,
    "depthwise_conv2d_native": depthwise_conv2d_native, "dropout": dropout_v1, "elu": elu,
    "fused_batch_norm": fused_batch_norm, "l2_loss": l2_loss, "l2_normalize": l2_normalize,
    "leaky_relu": leaky_relu,
    "log_softmax": log_softmax_v1, "max_pool": max_pool_v1, "max_pool2d": max_pool2d,
    "moments": moments_v1, "relu": relu, "relu6": relu6, "selu": selu, "sigmoid": sigmoid,
    "sigmoid_cross_entropy_with_logits": sigmoid_cross_entropy_with_logits,
    "softmax": softmax_v1,
    "softmax_cross_entropy_with_logits": softmax_cross_entropy_with_logits_v1,
    "softmax_cross_entropy_with_logits_v2": softmax_cross_entropy_with_logits,
    "softplus": softplus,
    "sparse_softmax_cross_entropy_with_logits": sparse_softmax_cross_entropy_with_logits_v1,
    "tanh": tanh, "top_k": top_k,
}

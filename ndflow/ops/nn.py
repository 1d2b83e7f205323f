"""Neural-network ops: one module per family, re-exported here (`ndflow.ops.nn.Relu`, ...).

- nn_activation: Relu, Relu6, Elu, Selu, LeakyRelu, Softplus, Softmax, LogSoftmax (+ grads)
- nn_conv: Conv2D, DepthwiseConv2dNative and their backprop ops, BiasAdd, BiasAddGrad
- nn_pool: MaxPool, AvgPool, MaxPoolGrad, MaxPoolGradGrad, AvgPoolGrad
- nn_norm: FusedBatchNormV3, FusedBatchNormGradV3; batch_normalization, moments
- nn_loss: (Sparse)SoftmaxCrossEntropyWithLogits, L2Loss; sigmoid cross entropy
- nn_dropout: dropout (composite over RandomUniform)
"""

from __future__ import annotations

from ndflow.ops.nn_activation import (  # noqa: F401
    Elu,
    EluGrad,
    LeakyRelu,
    LeakyReluGrad,
    LogSoftmax,
    Relu,
    Relu6,
    Relu6Grad,
    ReluGrad,
    Selu,
    SeluGrad,
    Softmax,
    Softplus,
    SoftplusGrad,
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
from ndflow.ops.nn_conv import (  # noqa: F401
    BiasAdd,
    BiasAddGrad,
    Conv2D,
    Conv2DBackpropFilter,
    Conv2DBackpropInput,
    DepthwiseConv2dNative,
    DepthwiseConv2dNativeBackpropFilter,
    DepthwiseConv2dNativeBackpropInput,
    bias_add,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    conv2d_v1,
    depthwise_conv2d,
    depthwise_conv2d_native,
)
from ndflow.ops.nn_dropout import dropout, dropout_v1  # noqa: F401
from ndflow.ops.nn_loss import (  # noqa: F401
    L2Loss,
    SoftmaxCrossEntropyWithLogits,
    SparseSoftmaxCrossEntropyWithLogits,
    l2_loss,
    sigmoid_cross_entropy_with_logits,  # noqa: F401
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v1,
    sparse_softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits_v1,
)
from ndflow.ops.nn_norm import (  # noqa: F401
    FusedBatchNormGradV3,
    FusedBatchNormV3,
    batch_normalization,
    fused_batch_norm,
    moments,
    moments_v1,
)
from ndflow.ops.nn_pool import (  # noqa: F401
    AvgPool,
    AvgPoolGrad,
    MaxPool,
    MaxPoolGrad,
    MaxPoolGradGrad,
    avg_pool,
    avg_pool2d,
    avg_pool_grad,
    avg_pool_v1,
    max_pool,
    max_pool2d,
    max_pool_grad,
    max_pool_v1,
)

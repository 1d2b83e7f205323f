"""`tf.compat.v1.nn`: TF1 signatures (`keep_prob`, `filter=`, `dim=`) of the nn family."""

from ndflow.ops.math import sigmoid, tanh
from ndflow.ops.nn_activation import elu, leaky_relu, relu, relu6, selu, softplus  # noqa: F401
from ndflow.ops.nn_activation import log_softmax_v1 as log_softmax  # noqa: F401
from ndflow.ops.nn_activation import softmax_v1 as softmax  # noqa: F401
from ndflow.ops.nn_conv import (  # noqa: F401
    bias_add,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    depthwise_conv2d,
    depthwise_conv2d_native,
)
from ndflow.ops.nn_conv import conv2d_v1 as conv2d  # noqa: F401
from ndflow.ops.nn_dropout import dropout_v1 as dropout  # noqa: F401
from ndflow.ops.nn_loss import l2_loss, sigmoid_cross_entropy_with_logits  # noqa: F401
from ndflow.ops.nn_loss import (  # noqa: F401
    softmax_cross_entropy_with_logits as softmax_cross_entropy_with_logits_v2,
)
from ndflow.ops.nn_loss import (  # noqa: F401
    softmax_cross_entropy_with_logits_v1 as softmax_cross_entropy_with_logits,
)
from ndflow.ops.nn_loss import (  # noqa: F401
    sparse_softmax_cross_entropy_with_logits_v1 as sparse_softmax_cross_entropy_with_logits,
)
from ndflow.ops.nn_norm import batch_normalization, fused_batch_norm  # noqa: F401
from ndflow.ops.nn_norm import moments_v1 as moments  # noqa: F401
from ndflow.ops.nn_pool import avg_pool2d, max_pool2d  # noqa: F401
from ndflow.ops.nn_pool import avg_pool_v1 as avg_pool  # noqa: F401
from ndflow.ops.nn_pool import max_pool_v1 as max_pool  # noqa: F401
from ndflow.ops.norms import l2_normalize  # noqa: F401
from ndflow.ops.sort import top_k  # noqa: F401

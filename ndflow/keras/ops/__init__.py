"""`tf.keras.ops` (Keras 3's backend-neutral ops: ops.numpy, ops.nn, ops.image, ops.linalg
and the core ops), written on ndflow's ops: they run eagerly, in tf.function graphs and on a
functional model's KerasTensors (each call a step of the model). This package is the
`tf.keras.ops` namespace: it imports its implementation modules, nothing else."""

from ndflow.keras.ops import (  # noqa: F401 - their exports
    core_functions,
    image_functions,
    image_scale_translate,
    linalg_functions,
    math_functions,
    nn_conv_functions,
    nn_functions,
    numpy_array,
    numpy_linear,
    numpy_math,
    numpy_misc,
    numpy_reduce,
    op_layer,
    operation_nodes,
    rearrange_elastic,
)

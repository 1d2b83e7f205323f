"""Layer 1: OpDefs (TensorFlow op names, attrs, shape rules), one module per op family, and
their gradients, one module per family of gradients (TF's math_grad.py / array_grad.py /
nn_grad.py pattern).

`import ndflow` imports only the families the execution base uses; the others load on first
use, through the generated index (ndflow/core/lazy_api.py): a public name imports its module,
an op looked up by name (GraphDef import, a SavedModel's functions) its family, and a
gradient asked for by backprop its gradient module.
"""

# Modules that add to classes and registries of the base (RaggedTensor's methods,
# SparseTensor's operators, Variable.SaveSliceInfo, Keras' initializers by name): a program
# holding one of these objects, or naming an initializer, may use them any time.
from ndflow.ops import (  # noqa: F401
    init_orthogonal,
    init_stft,
    partitioned_variables,
    ragged_array_ops,
    ragged_factory,
    ragged_tensor_value,
    sparse_dense_cwise,
)

# isort: split
# Wraps the public elementwise APIs, declared now or when their family loads, for
# RaggedTensor arguments, then the unary APIs that keep zeros zero for SparseTensor ones.
from ndflow.ops import ragged_dispatch  # noqa: F401

# isort: split
from ndflow.ops import sparse_dispatch  # noqa: F401

# isort: split
# `tf.shape`, `tf.ones`, `tf.reshape`, ... of RaggedTensors and DynamicRaggedShapes.
from ndflow.ops import dynamic_ragged_dispatch  # noqa: F401

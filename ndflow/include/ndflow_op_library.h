// ndflow's op-library convention (see ndflow/kernels/op_library.py): a PyTorch C++ extension
// whose ATen operators are registered with TORCH_LIBRARY(<namespace>, m), one per op and named
// like it, plus two C functions that tell `tf.load_op_library` the namespace and the ops'
// TensorFlow REGISTER_OP declarations (as text, exactly as a TensorFlow op library has them).
#pragma once

#define NDFLOW_OP_LIBRARY(NAMESPACE, REGISTER_OP_TEXT)                                      \
  extern "C" __attribute__((visibility("default"))) const char*                             \
  ndflow_op_library_namespace() {                                                           \
    return #NAMESPACE;                                                                      \
  }                                                                                         \
  extern "C" __attribute__((visibility("default"))) const char*                             \
  ndflow_op_library_specs() {                                                               \
    return REGISTER_OP_TEXT;                                                                \
  }

"""Layer 3: the XLA-style JIT (flags, op tables, cluster compiler, code generation) and
`tf.xla.experimental.jit_scope`."""

from ndflow.jit import jit_scope, mlir_bridge  # noqa: F401 - their tf_exports

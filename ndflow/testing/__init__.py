"""Layer 5: `tf.test` — TensorFlow's `TestCase` (absltest's, with TF's array assertions,
`evaluate` and test Sessions), gradient checking against finite differences, and the build
and device queries scripts start with (`tf.test.is_gpu_available()`)."""

from ndflow.testing import (  # noqa: F401 - importing a module declares its exports
    gradient_check,
    platform_queries,
    stubs,
    test_case,
)

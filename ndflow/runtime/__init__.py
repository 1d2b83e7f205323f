"""Layer 4: eager execution, execution plans, sessions, tf.function."""

from ndflow.runtime import eager  # noqa: F401 - eager execution of ops
from ndflow.runtime.memory import keep_freed_memory
from ndflow.runtime.threads import apply_thread_settings

keep_freed_memory()
apply_thread_settings()

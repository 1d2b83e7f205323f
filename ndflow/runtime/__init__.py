"""Layer 4: eager execution, execution plans, sessions, tf.function."""

from ndflow.runtime import eager  # noqa: F401 - installs the eager executor hook
from ndflow.runtime.memory import keep_freed_memory

keep_freed_memory()

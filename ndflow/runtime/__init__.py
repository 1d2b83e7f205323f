"""Layer 4: eager execution, execution plans, sessions, tf.function."""

from ndflow.runtime import control_flow_grad, eager, session  # noqa: F401 - hooks, If/While
from ndflow.runtime.memory import keep_freed_memory
from ndflow.runtime.threads import apply_thread_settings

keep_freed_memory()
apply_thread_settings()

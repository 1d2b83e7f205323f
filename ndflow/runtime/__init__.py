"""Layer 4: eager execution, execution plans, sessions, tf.function."""

from ndflow.runtime import (  # noqa: F401 - hooks, If/While kernels, public names
    async_execution,
    batch_function,
    control_flow_grad,
    control_flow_intermediates,
    device_config,
    eager,
    execution_config,
    function,
    functional_ops,
    memory_info,
    numerics_check,
    placement_log,
    rnn_raw_v1,
    rnn_v1,
    session,
    types_experimental,
    wrap_function,
    xla_cluster_kernel,
    xla_compile,
)
from ndflow.runtime.memory import keep_freed_memory
from ndflow.runtime.threads import apply_thread_settings

keep_freed_memory()
apply_thread_settings()

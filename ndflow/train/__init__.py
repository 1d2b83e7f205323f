"""Layer 5: TF1 optimizers, learning-rate schedules and decay functions, the global step, loss
scaling. Public names (mostly `tf.compat.v1.train`) are declared in the modules."""

from ndflow.train import (  # noqa: F401 - importing a module declares its exports
    adam,
    adaptive_optimizers,
    coordinator,
    cosine_schedules,
    gradient_descent,
    input_batching,
    input_producers,
    learning_rate_decay,
    learning_rate_schedule,
    loss_scale,
    loss_scale_optimizer,
    mixed_precision,
    momentum,
    monitored_session,
    moving_averages,
    optimizer,
    queue_runner,
    rmsprop,
    session_run_hook,
    session_run_hooks,
    session_run_hooks_more,
    training_util,
)

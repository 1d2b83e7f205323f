"""The docstrings of learning_rate_decay.py's functions (attached at its end): the arguments,
result and example every TF1 decay shares written once (`_decay`)."""

from __future__ import annotations

_RAISES = """
    Raises:
      ValueError: if `global_step` is None (in a graph at once, eagerly when the callable runs).
"""


def _decay(title: str, details: str, args: list, example: tuple, raises: bool = False) -> str:
    """The docstring of a TF1 decay function of `learning_rate` and `global_step` with the
    further arguments `args` (Args lines), whose example evaluates it eagerly."""
    lines = "\n      ".join(args)
    setup, call, out = example
    return f"""{title}

    {details}

    Args:
      learning_rate: the initial learning rate (a Python number or scalar tensor).
      global_step: the current step (an int, scalar tensor or variable).
      {lines}
      name: optional name scope.

    Returns:
      In a graph, the decayed learning rate as a scalar tensor; executing eagerly, a no-argument
      callable that computes it for the step's current value.
{_RAISES if raises else ""}
    Example:
      >>> {setup}
      >>> {call}
      {out}
    """


DOCS = {
    "inverse_time_decay": _decay(
        "Decays the learning rate as 1 / (1 + rate * t).",
        "The rate is `learning_rate / (1 + decay_rate * global_step / decay_steps)`, with the "
        "ratio\n    floored when `staircase`.",
        ["decay_steps: how many steps make one unit of decay.",
         "decay_rate: the decay rate.",
         "staircase: if True, decay in discrete steps."],
        ("lr = tf.compat.v1.train.inverse_time_decay(1.0, 2, 1, 0.5)",
         "float(lr())",
         "0.5"), raises=True),
    "polynomial_decay": _decay(
        "Decays the learning rate polynomially to `end_learning_rate`.",
        "The rate is `(learning_rate - end_learning_rate) * (1 - step / decay_steps) ** power "
        "+\n    end_learning_rate`, with the step capped at `decay_steps`; with `cycle`, "
        "`decay_steps` grows to\n    the next multiple of itself instead.",
        ["decay_steps: the steps over which to decay.",
         "end_learning_rate: the final learning rate.",
         "power: the polynomial's power (1 is linear).",
         "cycle: whether to restart the decay past `decay_steps`."],
        ("lr = tf.compat.v1.train.polynomial_decay(1.0, 5, 10, end_learning_rate=0.0)",
         "float(lr())",
         "0.5"), raises=True),
    "cosine_decay": _decay(
        "Decays the learning rate along a half cosine wave.",
        "The rate is `learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * t)) + alpha)` with `t "
        "=\n    min(global_step, decay_steps) / decay_steps`.",
        ["decay_steps: the steps over which to decay.",
         "alpha: the final rate as a fraction of `learning_rate`."],
        ("lr = tf.compat.v1.train.cosine_decay(1.0, 5, 10)",
         "round(float(lr()), 4)",
         "0.5")),
    "cosine_decay_restarts": _decay(
        "Cosine decay that restarts (SGDR: warm restarts).",
        "The first period lasts `first_decay_steps`; each next one is `t_mul` times as long and "
        "starts\n    from `m_mul` times the previous initial rate.",
        ["first_decay_steps: the length of the first period.",
         "t_mul: the factor by which each period grows.",
         "m_mul: the factor by which each restart's rate shrinks.",
         "alpha: the minimum rate as a fraction of `learning_rate`."],
        ("lr = tf.compat.v1.train.cosine_decay_restarts(1.0, 10, 10)",
         "round(float(lr()), 4)",
         "1.0")),
    "linear_cosine_decay": _decay(
        "Decays the learning rate by a linear ramp times a cosine.",
        "With `t = min(global_step, decay_steps)`, the rate is `learning_rate * ((alpha + "
        "(decay_steps -\n    t) / decay_steps) * 0.5 * (1 + cos(2 pi num_periods t / "
        "decay_steps)) + beta)`.",
        ["decay_steps: the steps over which to decay.",
         "num_periods: the number of cosine periods in the decay.",
         "alpha: see the formula.",
         "beta: see the formula."],
        ("lr = tf.compat.v1.train.linear_cosine_decay(1.0, 0, 10)",
         "round(float(lr()), 4)",
         "1.001")),
    "noisy_linear_cosine_decay": _decay(
        "Linear cosine decay with Gaussian noise added to the ramp.",
        "As `linear_cosine_decay`, with noise of variance `initial_variance / (1 + global_step) "
        "**\n    variance_decay` added to the linear term, so each evaluation differs.",
        ["decay_steps: the steps over which to decay.",
         "initial_variance: the initial variance of the noise.",
         "variance_decay: how fast the noise's variance decays.",
         "num_periods: the number of cosine periods in the decay.",
         "alpha: see `linear_cosine_decay`.",
         "beta: see `linear_cosine_decay`."],
        ("lr = tf.compat.v1.train.noisy_linear_cosine_decay(1.0, 0, 10)",
         "isinstance(float(lr()), float)",
         "True")),
}

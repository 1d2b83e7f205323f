"""What TF's train function does when Keras 3 calls it once more on the exhausted iterator of
a dataset of unknown size (how such an epoch ends there): the step's stateful ops that do not
wait for the data still run. The optimizer counts a step, and each seed generator the step
draws from (a Dropout's) advances as in a step; no weight changes."""

from __future__ import annotations

import numpy as np

from ndflow.keras.random_functions import SeedGenerator


def seed_generators(model) -> list:
    """The seed generators the model's layers hold."""
    found = []
    for layer in model._flatten_layers():
        found += [v for v in vars(layer).values() if isinstance(v, SeedGenerator)]
    return found


def states(generators) -> list:
    return [np.asarray(g.state.numpy()) for g in generators]


def run_exhausted_step(model, generators, before, steps: int) -> None:
    """The exhausted call's effects, `before` being the generators' states when the epoch
    began and `steps` the steps it ran."""
    model.optimizer.iterations.assign_add(1)
    if not steps:
        return
    for generator, old in zip(generators, before):
        new = np.asarray(generator.state.numpy())
        if (new != old).any():   # drawn from in the steps: one more step's draws
            generator.state.assign(new + (new - old) // steps)

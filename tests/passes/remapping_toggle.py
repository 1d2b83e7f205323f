"""The remapper switched for a block, for the tests of its rewrites."""

from __future__ import annotations

import ndflow as tf


class Remapping:
    """`remapping` (the RewriterConfig toggle) set inside the block, on again after."""

    def __init__(self, on: bool):
        self.on = on

    def __enter__(self):
        tf.config.optimizer.set_experimental_options({"remapping": self.on})

    def __exit__(self, *exc):
        tf.config.optimizer.set_experimental_options({"remapping": True})


class RemapperStep:
    """One step of the remapper, named by its function (`speculate_momentum`), on or off for
    a block, the other fusions unchanged: its pipeline pass switched by name."""

    def __init__(self, step: str, on: bool):
        from ndflow.passes import remapper
        (self.name,) = [name for name, fn in remapper.STEPS if fn.__name__ == step]
        self.on = on

    def __enter__(self):
        tf.config.optimizer.set_experimental_options({self.name: self.on})

    def __exit__(self, *exc):
        tf.config.optimizer.set_experimental_options({self.name: True})


class PassOff:
    """One of ndflow's own passes (a remapper step: "grouped_updates", "conv_pool_fusion")
    switched off by name inside the block (`set_experimental_options({name: False})`)."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        tf.config.optimizer.set_experimental_options({self.name: False})

    def __exit__(self, *exc):
        tf.config.optimizer.set_experimental_options({self.name: True})

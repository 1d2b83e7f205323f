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
    """One step of the remapper (`ndflow.passes.remapper.<step>`, a graph -> graph function)
    on or off for a block, the other fusions unchanged."""

    def __init__(self, step: str, on: bool):
        from ndflow.passes import remapper
        self.module, self.step, self.on = remapper, step, on
        self.saved = getattr(remapper, step)

    def __enter__(self):
        if not self.on:
            setattr(self.module, self.step, lambda graph, ctx: graph)

    def __exit__(self, *exc):
        setattr(self.module, self.step, self.saved)

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

"""What a graph pass knows about the run it optimizes for: fetches, feeds, targets, the pass
configuration and the graph's id.

Names are the user's names in the graph the pipeline started from. A pass that gives a
preserved tensor or op another name in its output graph records it with `rename`, so
`current_name` always finds a fetch, feed or target in the latest graph:

    ctx = PassContext(fetches=["loss:0"], feeds=["x:0"], targets=["train"])
    ctx.current_name("loss:0")      # -> "loss:0", or where a pass moved it
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ndflow.passes.pass_config import PassConfig


def op_name_of(name: str) -> str:
    """`"a/b:1"` -> `"a/b"`; op names pass through."""
    op, sep, idx = name.rpartition(":")
    return op if sep and idx.isdigit() else name


@dataclass
class PassContext:
    """Fetch tensor names, feed tensor names, target op names, and the pass configuration.

    `config` is the resolved `PassConfig` of this compile; `graph_id` names the graph in logs
    and dumps (TF's "tf_graph" for a Session's graph, the function's name for a function);
    `feed_specs` maps a feed name to the (dtype, shape) of the value fed in this run;
    `specialize`: the graph may be compiled for those shapes (passes/shape_specialization.py;
    a function's plans for the shapes it is called with, runtime/shape_plans.py).
    """

    fetches: tuple = ()
    feeds: tuple = ()
    targets: tuple = ()
    config: PassConfig = field(default_factory=PassConfig)
    graph_id: str = "tf_graph"
    feed_specs: dict = field(default_factory=dict)
    renames: dict = field(default_factory=dict)
    specialize: bool = False

    def __post_init__(self):
        self.fetches = tuple(self.fetches)
        self.feeds = tuple(self.feeds)
        self.targets = tuple(self.targets)
        for n in self.fetches + self.feeds:
            if not isinstance(n, str):
                raise TypeError(f"PassContext names must be strings, got {n!r}")
        if not isinstance(self.config, PassConfig):
            raise TypeError(f"PassContext.config must be a PassConfig, got {self.config!r}")

    # -- names across passes ------------------------------------------------------------------
    def rename(self, old: str, new: str) -> None:
        """Records that the tensor or op now called `old` is called `new` in the pass output."""
        if old != new:
            self.renames[old] = new

    def current_name(self, name: str) -> str:
        """Where the user's tensor/op `name` lives in the latest graph."""
        seen = set()
        while name in self.renames and name not in seen:
            seen.add(name)
            name = self.renames[name]
        return name

    def name_map(self) -> dict:
        """User name -> current name, for every fetch, feed and target."""
        return {n: self.current_name(n) for n in self.fetches + self.feeds + self.targets}

    # -- what must survive ----------------------------------------------------------------------
    def fed_tensor_names(self) -> set:
        return {self.current_name(n) for n in self.feeds}

    def fetched_tensor_names(self) -> set:
        return {self.current_name(n) for n in self.fetches}

    def preserved_op_names(self) -> set:
        """Ops a pass may not remove or merge: producers of fetches and feeds, and targets."""
        names = {op_name_of(self.current_name(n)) for n in self.fetches + self.feeds}
        names.update(self.current_name(n) for n in self.targets)
        return names

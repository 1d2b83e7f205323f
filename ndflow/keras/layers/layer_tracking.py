"""What Keras 3's tracker finds in a layer's attributes besides weights: its metrics, and
the order in which its sublayers are visited.

A `keras.metrics.Metric` assigned to an attribute of a layer or model (alone, or in a list,
tuple, dict or set, at any depth) is one of the layer's metrics, recorded in assignment order
and kept when the attribute is later reassigned (Keras' tracker never forgets it). Metrics
added to such a container after it was assigned (`self.trackers.append(...)`), which Keras'
tracked containers record as they come, are listed after the assigned ones. `Trainer.compile`
assigns its own loss tracker with tracking off (`untracked`), as Keras' compile does.

`layer.metrics` is the layer's own metrics, then each sublayer's `metrics`; a model's adds
the metrics of every layer below it (`_flatten_layers`, Keras' order), except those of the
nested models themselves, after its compiled ones (trainer.py)."""

from __future__ import annotations

import collections
import contextlib
import functools
import threading

_state = threading.local()
# Bookkeeping attributes `_own_metrics` does not look into (the constructor's arguments of
# a user's layer, kept for its config, are not its attributes).
_NOT_SCANNED = frozenset({"_metrics", "_auto_config", "_auto_config_error_args",
                          "_inbound_nodes", "_outbound_nodes"})


class TrackedMetric:
    """The base of `keras.metrics.Metric` that the tracker looks for (metrics sit above the
    layers, so the layers know them by this base)."""

    __slots__ = ()


def _metric_type():
    return TrackedMetric


def tracking_enabled() -> bool:
    return getattr(_state, "enabled", True)


@contextlib.contextmanager
def no_tracking():
    """Keras' `DotNotTrackScope`: metrics assigned inside are not the layer's."""
    saved = tracking_enabled()
    _state.enabled = False
    try:
        yield
    finally:
        _state.enabled = saved


def untracked(fn):
    """Keras' `no_automatic_dependency_tracking`: `fn` runs with tracking off."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_tracking():
            return fn(*args, **kwargs)
    return wrapper


def metrics_in(value, found=None, seen=None) -> list:
    """The metrics `value` is or holds (in lists, tuples, dicts and sets, at any depth)."""
    found = [] if found is None else found
    seen = set() if seen is None else seen
    if id(value) in seen:
        return found
    if isinstance(value, _metric_type()):
        seen.add(id(value))
        found.append(value)
    elif isinstance(value, (list, tuple, dict, set, frozenset)):
        seen.add(id(value))
        for item in (value.values() if isinstance(value, dict) else value):
            metrics_in(item, found, seen)
    return found


class LayerTracking:
    """The metrics and sublayer-order half of `Layer` (mixed into it)."""

    def _track_metrics(self, value) -> None:
        """Records the metrics an attribute assignment holds (`Layer.__setattr__`)."""
        if not tracking_enabled() or not isinstance(
                value, (_metric_type(), list, tuple, dict, set, frozenset)):
            return
        store = self.__dict__.get("_metrics")
        if store is None:   # (assigned before `Layer.__init__`: Keras tracks it too)
            store = self.__dict__["_metrics"] = []
        for metric in metrics_in(value):
            if not any(m is metric for m in store):
                store.append(metric)

    def _own_metrics(self) -> list:
        """The metrics tracked on this layer itself, in Keras' order."""
        out = list(self.__dict__.get("_metrics", ()))
        seen = {id(m) for m in out}
        for name, value in vars(self).items():
            if name not in _NOT_SCANNED and isinstance(value, (list, tuple, dict, set,
                                                                frozenset)):
                for metric in metrics_in(value):   # (added to the container later)
                    if id(metric) not in seen:
                        seen.add(id(metric))
                        out.append(metric)
        return out

    @property
    def metrics(self) -> list:
        """The layer's metrics (attributes holding `keras.metrics.Metric`s), then its
        sublayers' (a metric two levels down appears once per level, as in Keras 3)."""
        out = self._own_metrics()
        for layer in self._layers:
            out.extend(layer.metrics)
        return out

    @property
    def metrics_variables(self) -> list:
        """The state variables of every metric in `metrics`."""
        return [v for metric in self.metrics for v in metric.variables]

    def _flatten_layers(self, include_self=True, recursive=True) -> list:
        """This layer (`include_self`) and the layers below it, each once, in Keras 3's
        order: a layer's sublayers are visited, last one first, before its next sibling."""
        out = [self] if include_self else []
        seen = set()
        queue = collections.deque(self._layers)
        while queue:
            layer = queue.popleft()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            out.append(layer)
            if recursive:
                queue.extendleft(layer._layers)
        return out

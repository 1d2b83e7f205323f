"""The container's CNN helpers, on ndflow: `parse_cmdline` (imports nothing heavy, so bad
flags fail at once), `train` and `predict` (imported on first use)."""

from .cmdline import LAYERS, parse_cmdline

__all__ = ["LAYERS", "parse_cmdline", "predict", "train"]


def train(args) -> int:
    from .runner import train as _train
    return _train(args)


def predict(args) -> int:
    from .runner import predict as _predict
    return _predict(args)

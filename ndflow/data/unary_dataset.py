"""The base of the datasets made from one input dataset (map, batch, shuffle, take, ...):
their input is `self._input`, and by default they have its cardinality."""

from __future__ import annotations

from ndflow.data.dataset import DatasetV2


class UnaryDataset(DatasetV2):
    """A dataset of one input dataset, `self._input` (set before `DatasetV2.__init__`)."""

    def _inputs(self):
        return [self._input]

    def _cardinality(self):
        return self._input._cardinality()

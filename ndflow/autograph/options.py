"""`tf.autograph.experimental.Feature` and the options a conversion runs with."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ndflow.core.api_export import tf_export


@tf_export("autograph.experimental.Feature")
class Feature(enum.Enum):
    """AutoGraph's optional conversions (TensorFlow's names; off unless requested)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


@dataclass(frozen=True)
class ConversionOptions:
    recursive: bool = True
    optional_features: frozenset = frozenset()

    @staticmethod
    def make(recursive: bool = True, features=None) -> ConversionOptions:
        if features is None:
            feats: frozenset = frozenset()
        elif isinstance(features, Feature):
            feats = frozenset([features])
        else:
            feats = frozenset(features)
        return ConversionOptions(bool(recursive), feats)

    def uses(self, feature: Feature) -> bool:
        return feature in self.optional_features or Feature.ALL in self.optional_features

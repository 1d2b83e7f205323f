"""`tf.keras.optimizers.schedules`: the learning-rate schedules (defined in ndflow.train)."""

from ndflow.keras.optimizers.schedule_serialization import deserialize, serialize
from ndflow.train.cosine_schedules import CosineDecay, CosineDecayRestarts
from ndflow.train.learning_rate_schedule import (
    ExponentialDecay,
    InverseTimeDecay,
    LearningRateSchedule,
    PiecewiseConstantDecay,
    PolynomialDecay,
)

__all__ = ["CosineDecay", "CosineDecayRestarts", "ExponentialDecay", "InverseTimeDecay",
           "LearningRateSchedule", "PiecewiseConstantDecay", "PolynomialDecay", "deserialize",
           "serialize"]

"""`tf.dtypes`: element types."""

from ndflow.core.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bfloat16,
    bool,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    string,
    uint8,
    variant,
)

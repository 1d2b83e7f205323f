"""TF-TRT's conversion parameters: `TrtPrecisionMode` and
`tf.experimental.tensorrt.ConversionParams`, with TensorFlow's defaults and checks."""

from __future__ import annotations

import collections

from ndflow.core.api_export import tf_export


class TrtPrecisionMode:
    FP32 = "FP32"
    FP16 = "FP16"
    INT8 = "INT8"

    @staticmethod
    def supported_precision_modes() -> list:
        modes = [TrtPrecisionMode.FP32, TrtPrecisionMode.FP16, TrtPrecisionMode.INT8]
        return modes + [p.lower() for p in modes]


# TF's default without TensorRT >= 8.4 (1 GiB); ONNX Runtime sizes its own workspace.
DEFAULT_TRT_MAX_WORKSPACE_SIZE_BYTES = 1 << 30


@tf_export("experimental.tensorrt.ConversionParams", v1=[])
class TrtConversionParams(collections.namedtuple("TrtConversionParams", [
        "max_workspace_size_bytes", "precision_mode", "minimum_segment_size",
        "maximum_cached_engines", "use_calibration", "allow_build_at_runtime"])):
    """Parameters of a conversion (TF-TRT's fields and defaults)."""

    def __new__(cls, max_workspace_size_bytes=DEFAULT_TRT_MAX_WORKSPACE_SIZE_BYTES,
                precision_mode=TrtPrecisionMode.FP32, minimum_segment_size=3,
                maximum_cached_engines=1, use_calibration=True, allow_build_at_runtime=True):
        return super().__new__(cls, max_workspace_size_bytes, precision_mode,
                               minimum_segment_size, maximum_cached_engines, use_calibration,
                               allow_build_at_runtime)


DEFAULT_TRT_CONVERSION_PARAMS = TrtConversionParams()


def check_conversion_params(params: TrtConversionParams) -> None:
    """TF-TRT's `_check_conversion_params`, with its messages."""
    supported = TrtPrecisionMode.supported_precision_modes()
    if params.precision_mode not in supported:
        raise ValueError(f"precision mode '{params.precision_mode}' is not supported."
                         f"It should be one of {supported}")
    if params.minimum_segment_size <= 0 and params.minimum_segment_size != -1:
        raise ValueError("minimum segment size should be positive or -1 "
                         "(to disable main graph conversion).")


def precision_of(params: TrtConversionParams) -> str:
    return params.precision_mode.upper()

"""SavedModel constants (file and directory names, tags, signature keys), TensorFlow's
values under TensorFlow's public names."""

from __future__ import annotations

from ndflow.core.api_export import tf_export

_VALUES = {
    "ASSETS_DIRECTORY": "assets",
    "ASSETS_KEY": "saved_model_assets",
    "DEBUG_DIRECTORY": "debug",
    "DEBUG_INFO_FILENAME_PB": "saved_model_debug_info.pb",
    "SAVED_MODEL_FILENAME_PB": "saved_model.pb",
    "SAVED_MODEL_FILENAME_PBTXT": "saved_model.pbtxt",
    "SAVED_MODEL_SCHEMA_VERSION": 1,
    "VARIABLES_DIRECTORY": "variables",
    "VARIABLES_FILENAME": "variables",
    # tags
    "SERVING": "serve",
    "TRAINING": "train",
    "GPU": "gpu",
    "TPU": "tpu",
    # signatures
    "DEFAULT_SERVING_SIGNATURE_DEF_KEY": "serving_default",
    "CLASSIFY_INPUTS": "inputs",
    "CLASSIFY_METHOD_NAME": "tensorflow/serving/classify",
    "CLASSIFY_OUTPUT_CLASSES": "classes",
    "CLASSIFY_OUTPUT_SCORES": "scores",
    "PREDICT_INPUTS": "inputs",
    "PREDICT_METHOD_NAME": "tensorflow/serving/predict",
    "PREDICT_OUTPUTS": "outputs",
    "REGRESS_INPUTS": "inputs",
    "REGRESS_METHOD_NAME": "tensorflow/serving/regress",
    "REGRESS_OUTPUTS": "outputs",
}
_V1_ONLY = {"LEGACY_INIT_OP_KEY": "legacy_init_op", "MAIN_OP_KEY": "saved_model_main_op"}

ASSETS_DIRECTORY = _VALUES["ASSETS_DIRECTORY"]
SAVED_MODEL_FILENAME_PB = _VALUES["SAVED_MODEL_FILENAME_PB"]
SAVED_MODEL_FILENAME_PBTXT = _VALUES["SAVED_MODEL_FILENAME_PBTXT"]
SAVED_MODEL_SCHEMA_VERSION = _VALUES["SAVED_MODEL_SCHEMA_VERSION"]
VARIABLES_DIRECTORY = _VALUES["VARIABLES_DIRECTORY"]
VARIABLES_FILENAME = _VALUES["VARIABLES_FILENAME"]
SERVING = _VALUES["SERVING"]
DEFAULT_SERVING_SIGNATURE_DEF_KEY = _VALUES["DEFAULT_SERVING_SIGNATURE_DEF_KEY"]
PREDICT_METHOD_NAME = _VALUES["PREDICT_METHOD_NAME"]
FINGERPRINT_FILENAME = "fingerprint.pb"
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"

for _name, _value in _VALUES.items():
    tf_export(f"saved_model.{_name}")(_value)
for _name, _value in _V1_ONLY.items():
    tf_export(v1=[f"saved_model.{_name}"])(_value)
# TF1's modules of the same constants (`tf.compat.v1.saved_model.tag_constants.SERVING`, ...)
for _name in ("SERVING", "TRAINING", "GPU", "TPU"):
    tf_export(v1=[f"saved_model.tag_constants.{_name}"])(_VALUES[_name])
for _name in ("DEFAULT_SERVING_SIGNATURE_DEF_KEY", "CLASSIFY_INPUTS", "CLASSIFY_METHOD_NAME",
              "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "PREDICT_INPUTS",
              "PREDICT_METHOD_NAME", "PREDICT_OUTPUTS", "REGRESS_INPUTS", "REGRESS_METHOD_NAME",
              "REGRESS_OUTPUTS"):
    tf_export(v1=[f"saved_model.signature_constants.{_name}"])(_VALUES[_name])

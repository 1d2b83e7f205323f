"""SavedModel in TensorFlow's layout: `saved_model.pb` (MetaGraphDef, function library,
signatures, object graph), `variables/` (a TensorBundle checkpoint) and `assets/`.

saving.py writes one (object_graph.py walks the objects, function_serialization.py turns
traced functions into FunctionDefs, signatures.py picks the serving signatures,
saver_graph.py adds the graph-level saver); load_api.py / loading.py read one back
(call_inlining.py flattens function calls, restored_functions.py makes them callable);
builder_v1.py / loader_v1.py are the TF1 API; export_archive.py is Keras' `model.export`;
fingerprinting.py writes and reads `fingerprint.pb` (TensorFlow's FarmHash fingerprints).
"""

from ndflow.saved_model import (  # noqa: F401 - run their exports
    asset,
    builder_v1,
    constants,
    fingerprinting,
    load_api,
    options,
    saving,
    signature_utils_v1,
    trackable_resource,
)

"""SavedModel in TensorFlow's layout: `saved_model.pb` (MetaGraphDef, function library,
signatures, object graph), `variables/` (a TensorBundle checkpoint) and `assets/`."""

from ndflow.saved_model import asset, builder_v1, constants, load_api, options, saving  # noqa: F401 - run their exports

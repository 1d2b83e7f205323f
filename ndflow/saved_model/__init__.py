"""SavedModel in TensorFlow's layout: `saved_model.pb` (MetaGraphDef, function library,
signatures, object graph), `variables/` (a TensorBundle checkpoint) and `assets/`."""

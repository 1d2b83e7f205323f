"""`tf.profiler`: the DLProf-style profiler (`python -m ndflow.profiler script.py`, cli.py) and
`tf.profiler.experimental` (start/stop, Profile, Trace: profiler_api.py), on the plans'
instrumented code (recorder.py); and `tf.compat.v1.profiler`, TensorFlow's tfprof model analyzer
(FLOPs, parameters, the scope/graph/op/code views: model_analyzer.py)."""

from ndflow.profiler import (  # noqa: F401 - importing runs their tf_export declarations
    model_analyzer,
    profiler_api,
)

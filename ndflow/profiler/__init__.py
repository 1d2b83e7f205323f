"""`tf.profiler`: the DLProf-style profiler (`python -m ndflow.profiler script.py`, cli.py) and
`tf.profiler.experimental` (start/stop, Profile, Trace: profiler_api.py), on the plans'
instrumented code (recorder.py)."""

from ndflow.profiler import profiler_api  # noqa: F401 - importing runs its tf_export declarations

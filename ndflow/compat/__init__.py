"""`tf.compat`: the TF1 API (`tf.compat.v1`) and the TF2 one (`tf.compat.v2`)."""

from ndflow.compat import v1  # noqa: F401

"""ndflow: TensorFlow's dataflow graphs rebuilt in Python on ATen kernels.

    import ndflow as tf

The namespaces mirror TensorFlow's: `tf.*` is the TF2 API, `tf.compat.v1.*` the TF1 API
(graphs, placeholders, Sessions, `tf.compat.v1.train` optimizers). Every public name is
declared where it is defined (`@tf_export(...)`, ndflow/core/api_export.py); importing the
implementation packages below runs those declarations, and `_namespaces.build` turns them
into the namespace modules.
"""

from ndflow import (  # noqa: F401 - importing the packages runs their declarations
    _namespaces,
    autodiff,
    checkpoint,
    data,
    distribute,
    feature_column,
    inference,
    keras,
    kernels,
    ops,
    profiler,
    runtime,
    saved_model,
    summary,
    tensorboard_tf,
    testing,
    train,
)
from ndflow.core import (  # noqa: F401
    api_export,
    compat_helpers,
    tf_logging,
    traceback_utils,
    versions,
)

traceback_utils.install_excepthook()  # uncaught errors show the user's frames, as in TF
tensorboard_tf.install()  # tensorboard's `import tensorflow` gets ndflow where TF is absent

__version__ = versions.VERSION  # the TensorFlow API level (programs gate on tf.__version__)

_namespaces.build(__import__(__name__), api_export.EXPORTS)

# tf.raw_ops (and tf.compat.v1.raw_ops): a module whose op functions are made on first use,
# attached after the build so it is not taken for an implementation module
from ndflow.kernels import raw_ops  # noqa: E402

compat.v1.raw_ops = raw_ops  # noqa: F821 - compat is a namespace the build made

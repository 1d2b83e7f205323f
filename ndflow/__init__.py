"""ndflow: TensorFlow's dataflow graphs rebuilt in Python on ATen kernels.

    import ndflow as tf

The namespaces mirror TensorFlow's: `tf.*` is the TF2 API, `tf.compat.v1.*` the TF1 API
(graphs, placeholders, Sessions, `tf.compat.v1.train` optimizers). Every public name is
declared where it is defined (`@tf_export(...)`, ndflow/core/api_export.py). `import ndflow`
imports the execution base (ops, kernels, autodiff, runtime); the namespaces serve every
public name from the generated index of the declarations, importing its area (keras, train,
data, ...) on first use (ndflow/core/lazy_api.py).
"""

from ndflow.core import lazy_api

lazy_api.install_finder()  # first: the namespace packages imported below are served lazily too

# isort: split
from ndflow import autodiff, runtime, tensorboard_tf  # noqa: E402, F401 - the execution base
from ndflow.core import (  # noqa: E402, F401
    compat_helpers,
    tf_logging,
    traceback_utils,
    versions,
)

traceback_utils.install_excepthook()  # uncaught errors show the user's frames, as in TF
tensorboard_tf.install()  # tensorboard's `import tensorflow` gets ndflow where TF is absent

__version__ = versions.VERSION  # the TensorFlow API level (programs gate on tf.__version__)

lazy_api.install_root(__import__(__name__))

"""Top-level TF1 names for op libraries: `tf.compat.v1.CXX11_ABI_FLAG`, `CXX_VERSION`,
`MONOLITHIC_BUILD` (the `tf.sysconfig` values) and `tf.load_library`, which loads one
library or every shared object in a folder, each an ndflow op library
(`tf.load_op_library`'s convention, kernels/op_library.py), returning None as TF's.
(`load_file_system_library` is left out: ndflow has no file system plugins.)"""

from __future__ import annotations

import errno
import os
import re

from ndflow.core.api_export import tf_export
from ndflow.kernels.op_library import load_op_library
from ndflow.kernels.op_library_flags import CXX11_ABI_FLAG, CXX_VERSION, MONOLITHIC_BUILD

tf_export(v1=["CXX11_ABI_FLAG"])(CXX11_ABI_FLAG)
tf_export(v1=["CXX_VERSION"])(CXX_VERSION)
tf_export(v1=["MONOLITHIC_BUILD"])(MONOLITHIC_BUILD)

_SHARED_OBJECT = re.compile(r".*\.so(\.[0-9]+)*\Z")


@tf_export("load_library", v1=["load_library"])
def load_library(library_location) -> None:
    """Loads the op library at `library_location`, or each `*.so` in that folder."""
    path = os.fspath(library_location)
    if not os.path.exists(path):
        raise OSError(errno.ENOENT, "The file or folder to load kernel libraries from does "
                      "not exist.", path)
    if os.path.isdir(path):
        libraries = [os.path.join(path, f) for f in sorted(os.listdir(path))
                     if _SHARED_OBJECT.match(f)]
    else:
        libraries = [path]
    for lib in libraries:
        load_op_library(lib)

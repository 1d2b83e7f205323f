"""`tf.sysconfig`'s build flags for op libraries: what a compiler needs to build a library
for `tf.load_op_library` by hand (`g++ -shared -fPIC ops.cpp $(compile flags) $(link flags)`),
as TensorFlow's give what building against TensorFlow needs. ndflow's libraries are PyTorch
C++ extensions (kernels/op_library.py), so the include directories are ndflow's (the
`NDFLOW_OP_LIBRARY` header), PyTorch's and Python's, and the libraries PyTorch's."""

from __future__ import annotations

import os
import sysconfig

import torch

from ndflow.core.api_export import tf_export

CXX11_ABI_FLAG = int(torch._C._GLIBCXX_USE_CXX11_ABI)
CXX_VERSION = 201703            # the C++ standard PyTorch's headers need (C++17)
MONOLITHIC_BUILD = 0
tf_export("sysconfig.CXX11_ABI_FLAG")(CXX11_ABI_FLAG)
tf_export("sysconfig.CXX_VERSION")(CXX_VERSION)
tf_export("sysconfig.MONOLITHIC_BUILD")(MONOLITHIC_BUILD)


@tf_export("sysconfig.get_include")
def get_include() -> str:
    """The directory of ndflow's op-library header (`ndflow_op_library.h`)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "include")


@tf_export("sysconfig.get_lib")
def get_lib() -> str:
    """The directory of the libraries an op library links against (PyTorch's)."""
    from torch.utils import cpp_extension  # ~0.2 s (setuptools): only when asked
    return cpp_extension.library_paths()[0]


@tf_export("sysconfig.get_compile_flags")
def get_compile_flags() -> list:
    """Flags to compile an op library: include directories, the C++ ABI and standard."""
    from torch.utils import cpp_extension  # ~0.2 s (setuptools): only when asked
    includes = [get_include(), *cpp_extension.include_paths(),
                sysconfig.get_paths()["include"]]
    return [f"-I{path}" for path in includes] + [
        f"-D_GLIBCXX_USE_CXX11_ABI={CXX11_ABI_FLAG}", "--std=c++17"]


@tf_export("sysconfig.get_link_flags")
def get_link_flags() -> list:
    """Flags to link an op library against PyTorch's libraries."""
    return [f"-L{get_lib()}", "-lc10", "-ltorch_cpu", "-ltorch"]

"""`tf.sysconfig`'s build flags: they name directories and libraries that exist (ndflow's
op-library header, PyTorch's headers and libraries), in TensorFlow's forms; and (slow pass)
an op library compiled by hand with `g++ ... $(compile flags) $(link flags)` loads and runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import ndflow as tf

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_op"


def test_the_include_directory_holds_the_op_library_header():
    assert os.path.isfile(os.path.join(tf.sysconfig.get_include(), "ndflow_op_library.h"))
    assert tf.compat.v1.sysconfig.get_include is tf.sysconfig.get_include


def test_compile_flags_name_existing_directories_the_abi_and_the_standard():
    flags = tf.sysconfig.get_compile_flags()
    includes = [f[2:] for f in flags if f.startswith("-I")]
    assert includes[0] == tf.sysconfig.get_include()
    assert all(os.path.isdir(path) for path in includes)
    assert any(os.path.isfile(os.path.join(p, "torch", "library.h")) for p in includes)
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    assert tf.sysconfig.CXX11_ABI_FLAG == abi
    assert f"-D_GLIBCXX_USE_CXX11_ABI={abi}" in flags and "--std=c++17" in flags
    assert tf.sysconfig.CXX_VERSION == 201703 and tf.sysconfig.MONOLITHIC_BUILD == 0


def test_link_flags_name_pytorchs_libraries():
    flags = tf.sysconfig.get_link_flags()
    assert flags[0] == f"-L{tf.sysconfig.get_lib()}"
    for lib in (f[2:] for f in flags if f.startswith("-l")):
        assert os.path.exists(os.path.join(tf.sysconfig.get_lib(), f"lib{lib}.so")), lib


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_an_op_library_built_with_the_flags_loads(tmp_path):
    library = tmp_path / "hand_built_ops.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-O1", str(EXAMPLE / "custom_ops.cpp"),
                    "-o", str(library), *tf.sysconfig.get_compile_flags(),
                    *tf.sysconfig.get_link_flags()], check=True, capture_output=True)
    # in a process of its own: the example's TORCH_LIBRARY namespace may be loaded here
    # already (test_custom_op_library.py), and PyTorch aborts on a second registration
    script = ("import sys, ndflow as tf; lib = tf.load_op_library(sys.argv[1]); "
              "print(lib.zero_out([[5, 2], [3, 4]]).numpy().tolist())")
    out = subprocess.run([sys.executable, "-c", script, str(library)], check=True,
                         capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(EXAMPLE.parents[1])))
    assert out.stdout.strip() == "[[5, 0], [0, 0]]"

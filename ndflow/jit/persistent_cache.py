"""The persistent compile cache: `--tf_xla_persistent_cache_directory`.

As TensorFlow's DeviceExecutablePersistor, each compiled (cluster, signature) gets one entry
file named after its key,

    <dir>/<prefix>__<signature hash>__<cluster fingerprint>__<device type>.json

(prefix: `--tf_xla_persistent_cache_prefix`, default `xla_compile_cache`), and the code
generator keeps its generated kernels (sources, machine code) in the entry's artifact
directory `<same name>.d/`, which it is handed as `cache_dir`. A second process with the same
graph, signature, flags and library versions finds the entry, and the code generator loads
its kernels from the artifact directory instead of compiling them.

The key holds the cluster's graph fingerprint, the signature, the device type, the flags
that change generated code and the versions of ndflow, torch, numba and llvmlite. An entry
is written atomically (temp file + rename) with a checksum; one that does not parse, fails
its checksum or holds another key is ignored with a warning, its artifacts are removed and it
is rebuilt. A directory that cannot be created or read gives one warning and the JIT goes on
without persistence; a read-only one (a cache shipped in an image) is loaded from, with one
warning, and nothing is written to it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import tempfile
import threading

import numpy as np

from ndflow.core import logging

FORMAT_VERSION = 1
DEFAULT_PREFIX = "xla_compile_cache"
# Flags that change what a cluster compiles into (the rest only decide when it compiles).
_CODEGEN_FLAGS = ("tf_xla_disable_constant_folding", "xla_cpu_enable_fast_math",
                  "xla_gpu_autotune_level", "xla_gpu_enable_reduction_epilogue_fusion")
_VMODULES = ("device_executable_persistor", "device_compilation_profiler",
             "xla_compilation_cache")

_warned_dirs: set = set()
_warn_lock = threading.Lock()


def vlog(level: int, msg: str) -> None:
    """A VLOG line shown under any of TF's module names for the compile cache."""
    for module in _VMODULES:
        if logging.vlog_is_on(module, level):
            logging.vlog(module, level, msg, stacklevel=2)
            return


def library_versions() -> dict:
    """The versions an entry depends on (read from package metadata: nothing is imported)."""
    versions = {"python": platform.python_version(), "format": FORMAT_VERSION}
    for name in ("ndflow", "torch", "numba", "llvmlite"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


_VERSIONS: dict | None = None


def _versions() -> dict:
    global _VERSIONS
    if _VERSIONS is None:
        _VERSIONS = library_versions()
    return _VERSIONS


# -- graph fingerprints --------------------------------------------------------------------------

def graph_fingerprint(fg) -> str:
    """A hex digest of what a cluster function computes: its ops in order (type, attributes,
    device, which outputs feed which inputs), its inputs' dtypes and its outputs. Names and the
    static shapes a trace gave the inputs are left out, so the same computation traced again
    (for another shape, in another process, as another cluster_N) has the same fingerprint."""
    h = hashlib.sha256()
    index = {op: i for i, op in enumerate(fg.get_operations())}
    inputs = {t: i for i, t in enumerate(fg.inputs)}
    for op, i in index.items():
        arg = inputs.get(op.outputs[0]) if op.type == "Placeholder" and op.outputs else None
        h.update(f"{i}:{op.type}@{op.device}|arg={arg}|".encode())
        h.update(",".join(f"{index.get(t.op, '?')}.{t.value_index}" for t in op.inputs).encode())
        h.update(("^" + ",".join(str(index.get(c, "?")) for c in op.control_inputs)).encode())
        for k in sorted(op.attrs):
            if k.startswith("_") or (op.type == "Placeholder" and k == "shape"):
                continue
            h.update(f"|{k}=".encode())
            _hash_value(h, op.attrs[k])
        h.update(b"\n")
    h.update(("out:" + ",".join(f"{index.get(t.op, '?')}.{t.value_index}"
                                for t in fg.outputs)).encode())
    return h.hexdigest()


def _hash_value(h, v) -> None:
    if isinstance(v, np.ndarray):
        h.update(f"nd{v.dtype.str}{v.shape}".encode())
        h.update(v.tobytes() if v.dtype != object else repr(v.tolist()).encode())
    elif isinstance(v, (list, tuple)):
        h.update(b"[")
        for x in v:
            _hash_value(h, x)
            h.update(b",")
        h.update(b"]")
    elif hasattr(v, "get_operations") and hasattr(v, "outputs"):  # a function attr
        h.update(f"fn:{graph_fingerprint(v)}".encode())
    elif hasattr(v, "as_datatype_enum"):
        h.update(f"dt:{v.name}".encode())
    else:
        h.update(repr(v).encode())


def signature_string(specs) -> str:
    """The human form of a signature: `float32[256,1024],int32[]`."""
    return ",".join(f"{getattr(dt, 'name', dt)}[{','.join(str(d) for d in dims)}]"
                    for dt, dims in specs)


# -- the cache -----------------------------------------------------------------------------------

class PersistentCache:
    """Entries of one cache directory."""

    def __init__(self, directory: str, prefix: str = DEFAULT_PREFIX):
        self.directory = os.path.abspath(os.path.expanduser(directory))
        self.prefix = prefix or DEFAULT_PREFIX
        self._usable: bool | None = None
        self.writable = False

    @property
    def usable(self) -> bool:
        """Whether entries can be read from the directory (created when missing); warns once
        per directory per process when they cannot, or when it is read-only (entries are
        then loaded but not written)."""
        if self._usable is None:
            reason = None
            try:
                os.makedirs(self.directory, exist_ok=True)
                if not os.path.isdir(self.directory):
                    reason = "not a directory"
                elif not os.access(self.directory, os.R_OK | os.X_OK):
                    reason = "permission denied"
            except OSError as e:
                reason = e.strerror or str(e)
            self._usable = reason is None
            self.writable = self._usable and os.access(self.directory, os.W_OK)
            if reason is not None:
                self._warn_dir(reason)
            elif not self.writable:
                self._warn_dir(None)
        return self._usable

    def _warn_dir(self, reason: str | None) -> None:
        with _warn_lock:
            if self.directory in _warned_dirs:
                return
            _warned_dirs.add(self.directory)
        if reason is None:
            logging.warning(f"XLA persistent cache directory {self.directory} is read-only; "
                            "compiled clusters are loaded from it but not persisted.")
            return
        logging.warning(f"XLA persistent cache directory {self.directory} cannot be used "
                        f"({reason}); compiled clusters will not be persisted or loaded.")

    # -- keys -----------------------------------------------------------------------------------
    def key(self, cluster_fingerprint: str, specs, device_type: str, flags=None) -> dict:
        flag_values = {f: _jsonable(getattr(flags, f, None)) for f in _CODEGEN_FLAGS
                       if flags is not None and hasattr(flags, f)}
        return {"prefix": self.prefix, "cluster_fingerprint": cluster_fingerprint,
                "signature": signature_string(specs), "device_type": device_type,
                "flags": flag_values, "versions": _versions()}

    def entry_stem(self, key: dict) -> str:
        sig = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
        return (f"{self.prefix}__{sig}__{key['cluster_fingerprint'][:16]}__"
                f"{key['device_type']}")

    def entry_path(self, key: dict) -> str:
        return os.path.join(self.directory, self.entry_stem(key) + ".json")

    def artifact_dir(self, key: dict) -> str | None:
        """The directory the code generator keeps this entry's kernels in (created); None
        when there is none to read and none can be written."""
        if not self.usable:
            return None
        path = os.path.join(self.directory, self.entry_stem(key) + ".d")
        if not self.writable:
            return path if os.path.isdir(path) else None
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as e:
            self._warn_dir(e.strerror or str(e))
            return None
        return path

    # -- entries --------------------------------------------------------------------------------
    def load(self, key: dict) -> dict | None:
        """The payload stored under `key`, or None when there is no valid entry (a corrupt or
        stale one is reported, and removed with its artifacts so that it is rebuilt)."""
        if not self.usable:
            return None
        path = self.entry_path(key)
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            self._warn_dir(e.strerror or str(e))
            return None
        problem = _check_entry(raw, key)
        if problem is not None:
            logging.warning(f"Ignoring XLA persistent cache entry {path}: {problem}; the "
                            "cluster is compiled again and the entry rewritten.")
            self._discard(key)
            return None
        return json.loads(raw)["payload"]

    def store(self, key: dict, payload: dict) -> bool:
        """Writes the entry for `key` atomically; False (after one warning) if it cannot."""
        if not self.usable or not self.writable:
            return False
        body = {"key": key, "payload": payload}
        body["checksum"] = _checksum(body)
        data = json.dumps(body, sort_keys=True, indent=1).encode()
        path = self.entry_path(key)
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".json", dir=self.directory)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
        except OSError as e:
            self._warn_dir(e.strerror or str(e))
            return False
        finally:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
        vlog(2, f"XlaSerializedCacheEntry saved for signature: [{key['signature']}] in {path}")
        return True

    def _discard(self, key: dict) -> None:
        if not self.writable:
            return
        try:
            os.unlink(self.entry_path(key))
        except OSError:
            pass
        shutil.rmtree(os.path.join(self.directory, self.entry_stem(key) + ".d"),
                      ignore_errors=True)


def _checksum(body: dict) -> str:
    content = {k: body[k] for k in ("key", "payload")}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def _check_entry(raw: bytes, key: dict) -> str | None:
    """Why the entry's bytes are not a valid entry for `key`, or None when they are."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return "not a valid cache entry (corrupt or truncated)"
    if not isinstance(body, dict) or not {"key", "payload", "checksum"} <= set(body):
        return "not a valid cache entry (fields missing)"
    if body["checksum"] != _checksum(body):
        return "checksum mismatch (corrupt entry)"
    if body["key"] != key:
        diff = sorted(k for k in set(key) | set(body["key"]) if body["key"].get(k) != key.get(k))
        return f"stale entry (its {', '.join(diff)} differ)"
    return None


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return repr(v)


_CACHES: dict = {}


def cache_for(flags) -> PersistentCache | None:
    """The process's cache for the flags' directory, or None when no directory is set."""
    directory = (getattr(flags, "tf_xla_persistent_cache_directory", "") or
                 getattr(flags, "xla_gpu_persistent_cache_dir", "") or "")
    if not directory:
        return None
    prefix = getattr(flags, "tf_xla_persistent_cache_prefix", DEFAULT_PREFIX) or DEFAULT_PREFIX
    k = (directory, prefix)
    cache = _CACHES.get(k)
    if cache is None:
        cache = _CACHES[k] = PersistentCache(directory, prefix)
    return cache

"""Keras' dataset cache (`$KERAS_HOME/datasets`, default `~/.keras/datasets`) and downloads.

Files are looked up where Keras 3 keeps them, so a cache Keras filled serves ndflow and the
other way round. A file found in the cache is used as it is (its loader checks the format);
a download is streamed to a temporary file beside its target, checked against Keras' SHA-256
and only then renamed into place, so a failed, interrupted or tampered download leaves
nothing behind. Offline, the error names the files to fetch and the directory to put them in.
"""

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request

from ndflow.core.errors import UnavailableError

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
DOWNLOAD_TIMEOUT = 30.0  # seconds per connection attempt and per read
_CHUNK = 1 << 16


def keras_home() -> str:
    """`$KERAS_HOME`, else `~/.keras` (read at call time, unlike Keras' import-time read)."""
    return os.path.expanduser(os.environ.get("KERAS_HOME") or os.path.join("~", ".keras"))


def datasets_dir(subdir: str = "") -> str:
    return os.path.join(keras_home(), "datasets", subdir) if subdir else \
        os.path.join(keras_home(), "datasets")


def fetch(dataset: str, files: list, subdir: str = "") -> list:
    """Paths of `files` [(fname, origin, sha256 or None)] in the dataset cache, downloading
    the missing ones; when downloads fail, one error lists every file still missing."""
    directory = datasets_dir(subdir)
    paths, missing, cause = [], [], None
    for fname, origin, sha256 in files:
        target = os.path.join(directory, fname)
        paths.append(target)
        if os.path.isfile(target):
            continue
        if cause is None:  # once one download failed (offline), do not retry each file
            try:
                os.makedirs(directory, exist_ok=True)
                print(f"Downloading data from {origin}")
                _download(origin, target, sha256)
                continue
            except (OSError, http.client.HTTPException) as e:  # URLError is an OSError
                cause = e
        missing.append((fname, origin))
    if missing:
        listing = "\n".join(f"  {name}  (from {url})" for name, url in missing)
        raise UnavailableError(None, None, (
            f"The {dataset} dataset is not in the Keras cache and could not be downloaded "
            f"({type(cause).__name__}: {cause}). Download these files:\n{listing}\n"
            f"and put them in the directory {directory} (set KERAS_HOME to use another "
            f"directory than ~/.keras)."))
    return paths


def _download(origin: str, target: str, sha256) -> None:
    """Streams `origin` to a temporary file beside `target`, hashing as it goes; renames it
    to `target` only when the hash matches."""
    fd, partial = tempfile.mkstemp(prefix=os.path.basename(target) + ".",
                                   suffix=".part", dir=os.path.dirname(target))
    try:
        digest = hashlib.sha256()
        request = urllib.request.Request(origin, headers={"User-Agent": "ndflow"})
        with os.fdopen(fd, "wb") as out, \
                urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response:
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
        if sha256 is not None and digest.hexdigest() != sha256:
            raise ValueError(
                f"Incomplete or corrupted file detected downloading {origin}: its sha256 "
                f"file hash {digest.hexdigest()} does not match the expected value {sha256}. "
                f"Nothing was written to {target}.")
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)

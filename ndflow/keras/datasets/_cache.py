"""Keras' dataset cache (`$KERAS_HOME/datasets`, default `~/.keras/datasets`) and downloads.

Files are looked up where Keras 3 keeps them, so a cache Keras filled serves ndflow and the
other way round. A file found in the cache is used as it is (its loader checks the format);
a download is streamed to a temporary file beside its target, checked against Keras' SHA-256
and only then renamed into place, so a failed, interrupted or tampered download leaves
nothing behind. Offline, the error names the files to fetch and the directory to put them in.
"""

import http.client
import os

from ndflow.core.errors import UnavailableError
from ndflow.keras import file_downloads

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def datasets_dir(subdir: str = "") -> str:
    return os.path.join(file_downloads.keras_home(), "datasets", subdir) if subdir else \
        os.path.join(file_downloads.keras_home(), "datasets")


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
                file_downloads.download(origin, target, sha256, "auto")  # md5 for 32 digits
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


def fetch_fname(dataset: str, fname, origin_name: str, file_hash: str) -> str:
    """The cached path of a loader's `fname` argument (a file name, not a path: Keras'
    ValueError otherwise), downloaded from `ORIGIN + origin_name` when missing."""
    fname = os.fspath(fname)
    if os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify "
                         "the file's parent directory, use the `cache_dir` argument. "
                         f"Received: fname={fname}")
    [file] = fetch(dataset, [(fname, ORIGIN + origin_name, file_hash)])
    return file

"""`tf.keras.utils.get_file`: Keras 3's download cache (`$KERAS_HOME`, default `~/.keras`,
sub-directory `datasets`), with its file-name, hash and extraction rules.

A download streams to a temporary file beside its target, is hashed on the way and renamed
into place only when the hash matches, so a failed, interrupted or tampered download leaves
nothing behind. A cached file whose hash does not match is downloaded again (as Keras).
Archives are extracted with Keras' path filtering: members that would land outside the
extraction directory (absolute paths, `..`, links pointing out) are skipped.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile

from ndflow.core import config
from ndflow.core.api_export import keras_export
from ndflow.core.errors import UnavailableError

DOWNLOAD_TIMEOUT = 30.0  # seconds per connection attempt and per read
_CHUNK = 1 << 16


def keras_home() -> str:
    """`$KERAS_HOME`, else `~/.keras` (read at call time; Keras reads it at import)."""
    return os.path.expanduser(config.get(config.KERAS_HOME) or os.path.join("~", ".keras"))


def hasher(algorithm: str, file_hash: str | None = None):
    """Keras' resolve_hasher: sha256, or md5 unless `auto` sees a 64-digit hash."""
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None
                                 and len(file_hash) == 64):
        return hashlib.sha256()
    return hashlib.md5()


def hash_file(path: str, algorithm="sha256") -> str:
    digest = hasher(algorithm) if isinstance(algorithm, str) else algorithm
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(origin: str, target: str, file_hash: str | None = None,
             algorithm: str = "auto") -> None:
    """Streams `origin` to a temporary file beside `target`, hashing as it goes; renames it
    to `target` only when `file_hash` (if given) matches. Network failures raise OSError
    (urllib's URLError) or http.client.HTTPException; a hash mismatch raises ValueError."""
    fd, partial = tempfile.mkstemp(prefix=os.path.basename(target) + ".", suffix=".part",
                                   dir=os.path.dirname(target) or ".")
    try:
        digest = hasher(algorithm, file_hash)
        request = urllib.request.Request(origin, headers={"User-Agent": "ndflow"})
        with os.fdopen(fd, "wb") as out, \
                urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response:
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
        if file_hash is not None and digest.hexdigest() != file_hash:
            raise ValueError(
                f"Incomplete or corrupted file detected downloading {origin}: its "
                f"{digest.name} file hash {digest.hexdigest()} does not match the expected "
                f"value {file_hash}. Nothing was written to {target}.")
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _inside(base: str, name: str) -> bool:
    base = os.path.realpath(base)
    path = os.path.realpath(os.path.join(base, name))
    return os.path.commonpath([base, path]) == base


def _safe_tar_members(tar: tarfile.TarFile, base: str):
    for info in tar.getmembers():
        ok = _inside(base, info.name)
        if ok and info.issym():
            ok = _inside(base, os.path.join(os.path.dirname(info.name), info.linkname))
        elif ok and info.islnk():
            ok = _inside(base, info.linkname)
        if ok:
            yield info
        else:
            warnings.warn(f"Skipping invalid path during archive extraction: '{info.name}'.",
                          stacklevel=3)


def extract_archive(file_path: str, path: str = ".", archive_format="auto") -> bool:
    """Extracts a tar (also .tar.gz/.tar.bz2) or zip archive into `path`; False when the file
    is none of `archive_format`."""
    if archive_format is None:
        return False
    formats = ["tar", "zip"] if archive_format == "auto" else \
        [archive_format] if isinstance(archive_format, str) else list(archive_format)
    for kind in formats:
        if kind == "tar" and tarfile.is_tarfile(file_path):
            with tarfile.open(file_path) as tar:
                _extract(tar.extractall, path, members=_safe_tar_members(tar, path),
                         filter="data")
            return True
        if kind == "zip" and zipfile.is_zipfile(file_path):
            with zipfile.ZipFile(file_path) as zf:
                members = [i for i in zf.infolist() if _inside(path, i.filename)]
                _extract(zf.extractall, path, members=members)
            return True
        if kind not in ("tar", "zip"):
            raise NotImplementedError(kind)
    return False


def _extract(extractall, path: str, **kwargs) -> None:
    """`extractall(path, **kwargs)`; a failed extraction removes what it wrote."""
    try:
        extractall(path, **kwargs)
    except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
        if os.path.isfile(path):
            os.remove(path)
        elif os.path.exists(path):
            shutil.rmtree(path)
        raise


@keras_export("keras.utils.get_file")
def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None, force_download=False):
    """Downloads a file from a URL unless it is already in the cache, and returns its local
    path (Keras 3's rules: the cache is `~/.keras/<cache_subdir>`, or `cache_dir`).

    Args:
      fname: the file name in the cache, without a directory (default the URL's last
        part).
      origin: the URL.
      untar: deprecated form of `extract=True` for tar files.
      md5_hash: deprecated form of `file_hash` with `hash_algorithm="md5"`.
      file_hash: optional expected hash (SHA-256 or MD5 hex); a cached file that does
        not match is downloaded again, a download that does not match is an error.
      cache_subdir: the subdirectory of the cache (default "datasets"; an absolute path
        is used as it is).
      hash_algorithm: "sha256", "md5" or "auto" (from the hash's length).
      extract: whether to extract an archive (tar, tar.gz, zip) after downloading.
      archive_format: "auto", "tar", "zip", or a list of them.
      cache_dir: the cache's root (default `$KERAS_HOME` or `~/.keras`).
      force_download: whether to download even when the file is cached.

    Returns:
      The path of the file (or of the extraction directory, with `extract`).

    Raises:
      ValueError: no `origin`, an `fname` holding a directory or no name to derive, or
        a hash mismatch after downloading.
      UnavailableError: the download failed (network or HTTP error).
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(cache_dir if cache_dir is not None else keras_home())
    if not os.access(base, os.W_OK) and os.path.exists(base):
        base = os.path.join(tempfile.gettempdir(), ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    provided = fname
    fname = os.fspath(fname) if fname is not None else None
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'."
                             "Please specify the `fname` argument.")
    elif os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the "
                         "file's parent directory, use the `cache_dir` argument. Received: "
                         f"fname={fname}")
    extraction_dir = None
    if extract or untar:
        if provided and "." in fname:
            target = os.path.join(datadir, fname)
            extraction_dir = os.path.join(datadir, f"{fname[:fname.find('.')]}_extracted")
        else:
            extraction_dir = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
    else:
        target = os.path.join(datadir, fname)

    needed = force_download or not os.path.exists(target)
    if not needed and file_hash is not None and \
            hash_file(target, hasher(hash_algorithm, file_hash)) != file_hash:
        print(f"A local file was found, but it seems to be incomplete or outdated because the "
              f"{hash_algorithm} file hash does not match the original value of {file_hash} "
              "so we will re-download the data.")
        needed = True
    if needed:
        print(f"Downloading data from {origin}")
        try:
            download(origin, target, file_hash, hash_algorithm)
        except (OSError, http.client.HTTPException) as e:   # URLError is an OSError
            raise UnavailableError(None, None, (
                f"URL fetch failure on {origin}: {e}. Download the file yourself and put it "
                f"at {target}.")) from None
    if extraction_dir is not None:
        if not extract_archive(target, extraction_dir, "tar" if untar else archive_format):
            warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return target

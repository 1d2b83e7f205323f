"""tf.keras.utils.get_file as Keras 3: cache layout under KERAS_HOME, sha256/md5 checks (a bad
download leaves nothing; a cached file with the wrong hash is fetched again), extraction with
Keras' names and path filtering, offline errors — against a loopback HTTP server."""

import hashlib
import io
import os
import tarfile
import zipfile

import pytest

import ndflow as tf
from ndflow.core.errors import UnavailableError
from tests.keras.test_datasets import _closed_port, server  # noqa: F401 - the fixture

get_file = tf.keras.utils.get_file
PAYLOAD = b"ndflow get_file payload\n" * 100


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    return tmp_path / "kh"


def _tar_gz(members: dict) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_download_cache_and_hashes(home, server, capsys):  # noqa: F811
    root, url = server
    (root / "f.txt").write_bytes(PAYLOAD)
    sha = hashlib.sha256(PAYLOAD).hexdigest()
    path = get_file("f.txt", url + "f.txt", file_hash=sha)
    assert path == str(home / "datasets" / "f.txt") and open(path, "rb").read() == PAYLOAD
    assert f"Downloading data from {url}f.txt" in capsys.readouterr().out
    assert get_file("f.txt", url + "f.txt", file_hash=sha) == path   # cached: no download
    assert "Downloading" not in capsys.readouterr().out
    # a cached file that fails its hash is downloaded again, as Keras
    open(path, "wb").write(b"stale")
    get_file("f.txt", url + "f.txt", md5_hash=hashlib.md5(PAYLOAD).hexdigest())
    assert "hash does not match the original value" in capsys.readouterr().out
    assert open(path, "rb").read() == PAYLOAD
    # file name from the URL, another cache dir and sub-directory
    other = get_file(origin=url + "f.txt", cache_dir=str(home / "c"), cache_subdir="s")
    assert other == str(home / "c" / "s" / "f.txt")


def test_bad_hash_leaves_nothing(home, server):  # noqa: F811
    root, url = server
    (root / "f.txt").write_bytes(PAYLOAD)
    with pytest.raises(ValueError, match="Incomplete or corrupted file detected"):
        get_file("f.txt", url + "f.txt", file_hash="0" * 64)
    assert os.listdir(home / "datasets") == []


def test_extract_with_keras_names_and_unsafe_members_skipped(home, server):  # noqa: F811
    root, url = server
    (root / "a.tar.gz").write_bytes(_tar_gz({"d/x.txt": b"x", "../evil.txt": b"evil"}))
    with pytest.warns(UserWarning, match="Skipping invalid path during archive extraction"):
        out = get_file("a.tar.gz", url + "a.tar.gz", extract=True)
    assert out == str(home / "datasets" / "a_extracted")     # Keras: "<stem>_extracted"
    assert (home / "datasets" / "a.tar.gz").exists()
    assert open(os.path.join(out, "d", "x.txt"), "rb").read() == b"x"
    assert not (home / "datasets" / "evil.txt").exists()
    # a name without a suffix: the archive is kept as "<name>_archive", extracted to "<name>"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("z.txt", "zipped")
    (root / "b.zip").write_bytes(buf.getvalue())
    out = get_file("bundle", url + "b.zip", extract=True)
    assert out == str(home / "datasets" / "bundle")
    assert (home / "datasets" / "bundle_archive").exists()
    assert open(os.path.join(out, "z.txt")).read() == "zipped"


def test_offline_and_argument_errors(home):
    url = f"http://127.0.0.1:{_closed_port()}/f.txt"
    with pytest.raises(UnavailableError, match=rf"URL fetch failure on {url}: .*Connection "
                                               rf"refused.*put it at {home}/datasets/f.txt"):
        get_file("f.txt", url)
    assert os.listdir(home / "datasets") == []
    with pytest.raises(ValueError, match='Please specify the "origin" argument'):
        get_file("f.txt")
    with pytest.raises(ValueError, match="Paths are no longer accepted as the `fname`"):
        get_file("a/f.txt", url)

"""tf.io.gfile and tf.compat.v1.gfile on the local file system, against TensorFlow 2.21's
behaviour (types, messages and quirks checked with TensorFlow itself)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

import ndflow as tf
from ndflow.core import file_io

gfile = tf.io.gfile
v1 = tf.compat.v1.gfile
E = tf.errors
NO_SUCH = os.strerror(errno.ENOENT)


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --- names ------------------------------------------------------------------------------------

V2_NAMES = ["GFile", "copy", "exists", "get_registered_schemes", "glob", "isdir", "join",
            "listdir", "makedirs", "mkdir", "remove", "rename", "rmtree", "stat", "walk"]
V1_NAMES = ["Copy", "DeleteRecursively", "Exists", "FastGFile", "GFile", "Glob", "IsDirectory",
            "ListDirectory", "MakeDirs", "MkDir", "Open", "Remove", "Rename", "Stat", "Walk"]


def test_namespaces_hold_tensorflows_names_and_objects():
    public = lambda ns: sorted(n for n in dir(ns) if not n.startswith("_"))
    assert public(tf.io.gfile) == public(tf.compat.v1.io.gfile) == V2_NAMES
    assert public(tf.compat.v1.gfile) == V1_NAMES
    assert all(getattr(tf.compat.v1.io.gfile, n) is getattr(gfile, n) for n in V2_NAMES)
    assert v1.GFile is v1.Open is gfile.GFile and issubclass(v1.FastGFile, gfile.GFile)


def test_fast_gfile_reads_and_warns_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(file_io.FastGFile, "_warned", False)
    p = write(tmp_path / "f", "data")
    assert v1.FastGFile(str(p)).read() == "data"
    assert v1.FastGFile(str(p), "rb").read() == b"data"
    assert capsys.readouterr().err.count("FastGFile.__init__") == 1


# --- GFile --------------------------------------------------------------------------------------

def test_text_and_binary_modes(tmp_path):
    p = str(tmp_path / "f.txt")
    with gfile.GFile(p, "w") as f:
        assert f.write("héllo\n") is None
        f.write(b"bytes\n")  # bytes are fine in text mode, str in binary mode
    with gfile.GFile(p, "ab") as f:
        f.write("end")
        f.write(bytearray(b"!"))
    assert gfile.GFile(p).read() == "héllo\nbytes\nend!"
    assert gfile.GFile(p, "rb").read() == "héllo\nbytes\nend!".encode()
    assert gfile.GFile(p).size() == len("héllo\nbytes\nend!".encode())


def test_read_counts_bytes_and_decodes_strictly(tmp_path):
    p = str(write(tmp_path / "f", "héllo"))
    f = gfile.GFile(p)
    assert f.read(3) == "hé" and f.tell() == 3
    assert f.read(0) == "" and f.read() == "llo" and f.read() == "" and f.read(5) == ""
    with pytest.raises(UnicodeDecodeError):
        gfile.GFile(p).read(2)
    assert gfile.GFile(p, "rb").read(2) == b"h\xc3"
    with pytest.raises(E.InvalidArgumentError, match="^Can't read a negative number of bytes: -2$"):
        gfile.GFile(p).read(-2)


def test_lines_iteration_and_carriage_returns(tmp_path):
    p = str(write(tmp_path / "f", b"a\r\nb\rc\nlast"))
    assert gfile.GFile(p).readlines() == ["a\n", "bc\n", "last"]  # TF drops every '\r'
    assert gfile.GFile(p, "rb").readlines() == [b"a\n", b"bc\n", b"last"]
    assert list(gfile.GFile(p)) == ["a\n", "bc\n", "last"]
    assert gfile.GFile(p, "rb").read() == b"a\r\nb\rc\nlast"  # read keeps them
    f = gfile.GFile(p)
    assert next(f) == "a\n" and f.next() == "bc\n" and f.tell() == 7
    assert list(f) == ["last"] and f.readline() == "" and f.readlines() == []
    assert gfile.GFile(p, "rb").read(4) == b"a\r\nb" and iter(f) is f


def test_seek_and_tell(tmp_path):
    p = str(write(tmp_path / "f", "0123456789"))
    f = gfile.GFile(p)
    assert f.seekable() and f.tell() == 0
    f.seek(4)
    assert f.read(2) == "45" and f.tell() == 6
    f.seek(-3, 1)
    assert f.read(1) == "3"
    f.seek(-2, 2)
    assert f.read() == "89"
    f.seek(offset=1, whence=0)
    assert f.read(1) == "1"
    f.seek(position=7)
    assert f.read() == "789"
    f.seek(10)
    assert f.read() == ""
    with pytest.raises(E.OutOfRangeError, match="^reached end of file$"):
        f.seek(11)
    assert f.tell() == 10  # it stops at the end
    with pytest.raises(E.InvalidArgumentError, match="^Seeking to a negative position: -1$"):
        f.seek(-1)
    with pytest.raises(E.InvalidArgumentError,
                       match=r"^Invalid whence argument: 5. Valid values are 0, 1, or 2.$"):
        f.seek(0, 5)
    with pytest.raises(TypeError, match="offset argument required"):
        f.seek()
    with pytest.raises(TypeError, match="may not be set simultaneously"):
        f.seek(1, position=1)


def test_write_is_lazy_in_place_and_buffered(tmp_path):
    p = tmp_path / "f"
    f = gfile.GFile(str(p), "w")
    f.close()
    assert not p.exists()  # TensorFlow opens for writing at the first write
    with gfile.GFile(str(p), "w"):
        pass
    assert not p.exists()
    f = gfile.GFile(str(p), "w")
    f.write("abc")
    assert p.exists()  # created, in place
    f.flush()
    assert p.read_text() == "abc"
    f.write("def")
    f.close()
    assert p.read_text() == "abcdef"
    f.write("x")  # a closed GFile reopens: 'w' truncates again
    f.close()
    assert p.read_text() == "x"


def test_modes_truncate_append_and_plus(tmp_path):
    p = write(tmp_path / "f", "0123456789")
    with gfile.GFile(str(p), "a") as f:
        assert f.tell() == 10  # write position of an append stream
        f.write("A")
        assert f.tell() == 11
    assert p.read_text() == "0123456789A"
    f = gfile.GFile(str(p), "a+")
    assert f.read(3) == "012"
    f.write("B")
    f.close()
    assert p.read_text() == "0123456789AB"
    f = gfile.GFile(str(p), "r+")
    assert f.read(2) == "01"
    f.write("xy")  # TensorFlow's r+ writes through a truncating stream
    f.close()
    assert p.read_text() == "xy"
    with gfile.GFile(str(p), "w+") as f:
        assert f.read() == "xy"
        f.write("new")
    assert p.read_text() == "new"
    with gfile.GFile(str(p), "w") as f:
        assert f.tell() == 0
    assert p.read_text() == ""  # tell opened (and truncated) it


def test_closed_file_reads_again_from_the_start(tmp_path):
    f = gfile.GFile(str(write(tmp_path / "f", "abc")))
    assert f.read(2) == "ab"
    f.close()
    f.close()
    assert f.tell() == 0 and f.read() == "abc"


def test_gfile_properties_and_path_types(tmp_path):
    p = write(tmp_path / "f", "abc")
    for name in (str(p), p, str(p).encode(), "file://" + str(p), "file://host" + str(p)):
        f = gfile.GFile(name, "rb")
        assert f.name is name and f.mode == "rb" and f.read() == b"abc"
    with gfile.GFile("file://" + str(tmp_path / "u"), "w") as f:
        f.write("u")
    assert (tmp_path / "u").read_text() == "u"


def test_gfile_errors(tmp_path):
    missing = str(tmp_path / "missing")
    f = gfile.GFile(missing)  # opening is lazy
    for call in (f.read, f.readline, f.size, f.tell, lambda: f.seek(0), lambda: list(f)):
        with pytest.raises(E.NotFoundError, match=f"^{missing}; {NO_SUCH}$"):
            call()
    with pytest.raises(E.NotFoundError, match=f"^{missing}; {NO_SUCH}$"):
        gfile.GFile(Path(missing)).read()
    with pytest.raises(E.FailedPreconditionError, match=f"^{tmp_path}; Is a directory$"):
        gfile.GFile(str(tmp_path)).read()
    with pytest.raises(E.FailedPreconditionError, match=f"^{tmp_path}; Is a directory$"):
        gfile.GFile(str(tmp_path), "w").write("x")
    target = str(tmp_path / "no" / "dir")
    with pytest.raises(E.NotFoundError, match=f"^{target}; {NO_SUCH}$"):
        gfile.GFile(target, "w").write("x")
    with pytest.raises(E.InvalidArgumentError,
                       match=r"^mode is not 'r' or 'w' or 'a' or 'r\+' or 'w\+' or 'a\+'$"):
        gfile.GFile(missing, "x")
    p = str(write(tmp_path / "f", "abc"))
    with pytest.raises(E.PermissionDeniedError, match="^File isn't open for writing$"):
        gfile.GFile(p).write("x")
    with pytest.raises(E.PermissionDeniedError, match="^File isn't open for reading$"):
        gfile.GFile(p, "a").read()
    with pytest.raises(TypeError, match="^Expected binary or unicode string, got 5$"):
        gfile.GFile(p, "w").write(5)
    with pytest.raises(E.NotFoundError, match=NO_SUCH):
        gfile.GFile(str(tmp_path / "a\0b")).read()


def test_gfile_long_name_is_invalid_argument(tmp_path):
    name = str(tmp_path / ("x" * 300))
    with pytest.raises(E.InvalidArgumentError, match=f"; {os.strerror(errno.ENAMETOOLONG)}$"):
        gfile.GFile(name).read()
    assert not gfile.exists(name)


# --- schemes and paths ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["gs://bucket/x", "s3://bucket/x", "hdfs://host/x",
                                  "FILE:///tmp", "ram.x2://y"])
def test_other_schemes_are_unimplemented(path):
    scheme = path.split("://")[0]
    message = f"^File system scheme '{scheme}' not implemented \\(file: '{path}'\\)$"
    for call in (gfile.exists, gfile.glob, gfile.stat, gfile.remove, gfile.rmtree, gfile.mkdir,
                 gfile.makedirs, lambda p: gfile.GFile(p).read(),
                 lambda p: gfile.GFile(p, "w").write("x"), lambda p: gfile.copy(p, p + "2")):
        with pytest.raises(E.UnimplementedError, match=message):
            call(path)
    assert gfile.isdir(path) is False and list(gfile.walk(path)) == []
    with pytest.raises(E.NotFoundError, match=f"^Could not find directory {path}$"):
        gfile.listdir(path)


def test_a_scheme_needs_tensorflows_syntax(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("s3a+b://x", "3s://x", "foo:x", "foo:/x"):  # local relative paths
        assert gfile.exists(name) is False
    assert gfile.get_registered_schemes() == ["file", ""]


def test_paths_as_str_bytes_and_pathlike(tmp_path):
    p = write(tmp_path / "f", "x")
    for name in (str(p), p, str(p).encode(), "file://" + str(p), "file://localhost" + str(p)):
        assert gfile.exists(name) and not gfile.isdir(name) and gfile.stat(name).length == 1
    for bad in (5, None):
        with pytest.raises(TypeError, match=f"^Expected binary or unicode string, got {bad}$"):
            gfile.exists(bad)
    assert not gfile.exists("") and not gfile.exists("file://") and not gfile.exists("a\0b")


def test_join():
    assert gfile.join("a", "b", "c") == os.path.join("a", "b", "c")
    assert gfile.join("/a", "/b") == "/b"
    assert gfile.join("gs://bucket", "x", "y/") == "gs://bucket/x/y/"
    assert gfile.join(b"a", b"b") == b"a/b"
    assert gfile.join(Path("a"), "b") == "a/b"
    assert gfile.join("a") == "a" and gfile.join("a", "") == "a/"
    with pytest.raises(TypeError):
        gfile.join(b"a", "b")


# --- directories ---------------------------------------------------------------------------------

def test_exists_isdir_listdir(tmp_path):
    write(tmp_path / "d" / "f", "x")
    (tmp_path / "d" / "sub").mkdir()
    d = tmp_path / "d"
    assert gfile.exists(str(d)) and gfile.isdir(str(d)) and gfile.isdir(d)
    assert not gfile.exists(str(tmp_path / "no")) and not gfile.isdir(str(d / "f"))
    assert sorted(gfile.listdir(str(d))) == ["f", "sub"]
    assert sorted(v1.ListDirectory(dirname=str(d) + "/")) == ["f", "sub"]
    for bad in (str(d / "f"), str(tmp_path / "no"), "", (tmp_path / "no").as_posix().encode()):
        with pytest.raises(E.NotFoundError, match=f"^Could not find directory {bad}$"):
            gfile.listdir(bad)
    assert v1.Exists(filename=str(d)) and v1.IsDirectory(dirname=str(d))


def test_mkdir(tmp_path):
    d = str(tmp_path / "d")
    gfile.mkdir(d)
    assert os.path.isdir(d)
    gfile.mkdir(d)  # existing: no error, as in TensorFlow
    write(tmp_path / "f", "x")
    gfile.mkdir(str(tmp_path / "f"))
    gfile.mkdir("")
    deep = str(tmp_path / "n1" / "n2")
    with pytest.raises(E.NotFoundError, match=f"^{deep}; {NO_SUCH}$"):
        gfile.mkdir(deep)
    under_file = str(tmp_path / "f" / "q")
    with pytest.raises(E.FailedPreconditionError, match=f"^{under_file}; Not a directory$"):
        v1.MkDir(under_file)


def test_makedirs(tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    gfile.makedirs(str(deep))
    assert deep.is_dir()
    gfile.makedirs(str(deep))
    v1.MakeDirs(str(tmp_path / "x" / "y") + "/")
    gfile.makedirs("file://" + str(tmp_path / "u" / "v"))
    assert (tmp_path / "x" / "y").is_dir() and (tmp_path / "u" / "v").is_dir()
    f = write(tmp_path / "f", "x")
    for path in (f, f / "q", "file://" + str(f / "q")):
        with pytest.raises(E.FailedPreconditionError, match=f"^{f} is not a directory$"):
            gfile.makedirs(path)


def test_remove(tmp_path):
    f = write(tmp_path / "f", "x")
    gfile.remove(str(f))
    assert not f.exists()
    v1.Remove(filename=str(write(f, "y")))
    assert not f.exists()
    with pytest.raises(E.NotFoundError, match=f"^{f}; {NO_SUCH}$"):
        gfile.remove(f)
    with pytest.raises(E.FailedPreconditionError, match=f"^{tmp_path}; Is a directory$"):
        gfile.remove(str(tmp_path))


def test_rmtree(tmp_path):
    for rel in ("t/a", "t/b/c", "t/b/d/e"):
        write(tmp_path / rel, "x")
    (tmp_path / "t" / "empty").mkdir()
    gfile.rmtree(str(tmp_path / "t"))
    assert not (tmp_path / "t").exists()
    f = write(tmp_path / "f", "x")
    v1.DeleteRecursively(dirname=str(f))  # a file is deleted too
    assert not f.exists()
    missing = str(tmp_path / "t")
    with pytest.raises(E.NotFoundError, match=f"^{missing} not found$"):
        gfile.rmtree(missing)
    with pytest.raises(E.NotFoundError, match="^ not found$"):
        gfile.rmtree("")


def test_rmtree_deletes_links_not_their_targets(tmp_path):
    keep = write(tmp_path / "keep" / "f", "x")
    write(tmp_path / "t" / "f", "x")
    os.symlink(tmp_path / "keep", tmp_path / "t" / "link")
    os.symlink(tmp_path / "keep", tmp_path / "top_link")
    gfile.rmtree(str(tmp_path / "t"))
    gfile.rmtree(str(tmp_path / "top_link"))
    assert keep.read_text() == "x"
    assert not (tmp_path / "t").exists() and not (tmp_path / "top_link").is_symlink()


def test_stat(tmp_path):
    f = write(tmp_path / "f", "abc")
    s = gfile.stat(str(f))
    assert (s.length, s.is_directory) == (3, False)
    assert s.mtime_nsec == int(os.stat(f).st_mtime) * 10**9  # whole seconds, as TF gives
    assert gfile.stat(tmp_path).is_directory and v1.Stat(filename=str(f)).length == 3
    with pytest.raises(AttributeError):
        s.length = 4
    with pytest.raises(E.NotFoundError, match=f"^{tmp_path / 'no'}; {NO_SUCH}$"):
        gfile.stat(str(tmp_path / "no"))


# --- copy and rename -----------------------------------------------------------------------------

def test_copy(tmp_path):
    src, dst = write(tmp_path / "src", "new"), write(tmp_path / "dst", "old")
    gfile.copy(str(src), str(tmp_path / "c"))
    assert (tmp_path / "c").read_text() == "new"
    with pytest.raises(E.AlreadyExistsError, match="^file already exists$"):
        gfile.copy(str(src), str(dst))
    with pytest.raises(E.AlreadyExistsError, match="^file already exists$"):
        gfile.copy(str(tmp_path / "missing"), str(dst))  # checked before the source
    assert dst.read_text() == "old"
    gfile.copy(src, dst.as_posix().encode(), overwrite=True)
    assert dst.read_text() == "new"
    v1.Copy(oldpath="file://" + str(src), newpath="file://" + str(tmp_path / "u"))
    assert (tmp_path / "u").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["c", "dst", "src", "u"]  # no temporary files left


def test_copy_errors(tmp_path):
    src = write(tmp_path / "src", "x")
    missing = str(tmp_path / "missing")
    with pytest.raises(E.NotFoundError, match=f"^{missing}; {NO_SUCH}$"):
        gfile.copy(missing, str(tmp_path / "new"))
    (tmp_path / "dir").mkdir()
    with pytest.raises(E.AlreadyExistsError):
        gfile.copy(str(src), str(tmp_path / "dir"))
    with pytest.raises(E.FailedPreconditionError, match=f"^{tmp_path / 'dir'}; Is a directory$"):
        gfile.copy(str(src), str(tmp_path / "dir"), overwrite=True)
    with pytest.raises(E.InvalidArgumentError, match=f"^{tmp_path / 'new'}; Invalid argument$"):
        gfile.copy(str(tmp_path / "dir"), str(tmp_path / "new"))
    target = str(tmp_path / "no" / "f")
    with pytest.raises(E.NotFoundError, match=f"^{target}; {NO_SUCH}$"):
        gfile.copy(str(src), target)
    assert sorted(os.listdir(tmp_path)) == ["dir", "src"]


def test_copy_never_leaves_a_half_written_destination(tmp_path, monkeypatch):
    src, dst = write(tmp_path / "src", "new" * 1000), write(tmp_path / "dst", "old")

    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(E.ResourceExhaustedError, match=f"^{dst}; No space left on device$"):
        gfile.copy(str(src), str(dst), overwrite=True)
    assert dst.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["dst", "src"]


def test_copy_onto_itself_keeps_the_file(tmp_path):
    f = write(tmp_path / "f", "abc")  # TensorFlow truncates it to nothing here
    gfile.copy(str(f), str(f), overwrite=True)
    assert f.read_text() == "abc"


def test_copy_permissions(tmp_path):
    src, dst = write(tmp_path / "src", "x"), write(tmp_path / "dst", "y")
    src.chmod(0o640)
    dst.chmod(0o604)
    gfile.copy(str(src), str(tmp_path / "new"))
    gfile.copy(str(src), str(dst), overwrite=True)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o640 & ~umask
    assert stat.S_IMODE(os.stat(dst).st_mode) == 0o604  # an overwritten file keeps its own


def test_rename(tmp_path):
    a, b = write(tmp_path / "a", "A"), write(tmp_path / "b", "B")
    gfile.rename(str(a), str(tmp_path / "c"))
    assert not a.exists() and (tmp_path / "c").read_text() == "A"
    with pytest.raises(E.AlreadyExistsError, match="^file already exists$"):
        gfile.rename(str(tmp_path / "c"), str(b))
    assert b.read_text() == "B"
    v1.Rename(oldname=str(tmp_path / "c"), newname=str(b), overwrite=True)
    assert b.read_text() == "A" and not (tmp_path / "c").exists()
    write(tmp_path / "d1" / "f", "x")
    gfile.rename(tmp_path / "d1", "file://" + str(tmp_path / "d2"))  # directories too
    assert (tmp_path / "d2" / "f").read_text() == "x"
    missing = str(tmp_path / "missing")
    with pytest.raises(E.NotFoundError, match=f"^{missing}; {NO_SUCH}$"):
        gfile.rename(missing, str(tmp_path / "new"))
    (tmp_path / "e").mkdir()
    with pytest.raises(E.FailedPreconditionError,
                       match=f"^{tmp_path / 'e'}; Directory not empty$"):
        gfile.rename(str(tmp_path / "e"), str(tmp_path / "d2"), overwrite=True)


# --- glob ----------------------------------------------------------------------------------------

@pytest.fixture
def tree(tmp_path):
    for rel in ("a.txt", "b.txt", "c.py", "B.txt", "10.txt", ".hidden", "a[1].txt", "q?.txt",
                "sub/x.txt", "sub/y.py", "sub/deep/z.txt", "sub2/x.txt"):
        write(tmp_path / rel, rel)
    (tmp_path / "emptydir").mkdir()
    return tmp_path


@pytest.mark.parametrize("pattern,expected", [
    ("*.txt", ["10.txt", "B.txt", "a.txt", "a[1].txt", "b.txt", "q?.txt"]),
    ("?.txt", ["B.txt", "a.txt", "b.txt"]), ("[ab].txt", ["a.txt", "b.txt"]),
    ("[!ab].txt", ["B.txt"]), ("[^ab].txt", ["B.txt"]), ("[a-c].*", ["a.txt", "b.txt", "c.py"]),
    (".*", [".hidden"]), ("*dir", ["emptydir"]), ("*/x.txt", ["sub/x.txt", "sub2/x.txt"]),
    ("**/*.txt", ["sub/x.txt", "sub2/x.txt"]),  # '**' is '*': no recursion
    ("s*b/x.txt", ["sub/x.txt"]), ("sub/*", ["sub/deep", "sub/x.txt", "sub/y.py"]),
    ("sub/*/*", ["sub/deep/z.txt"]), ("a\\[1\\].txt", ["a[1].txt"]),
    ("a[1].txt", []),  # a character class, not the file a[1].txt
    ("q\\?.txt", ["q?.txt"]), ("a.txt", ["a.txt"]), ("sub/", ["sub/"]), ("nope", []),
    ("nope/*", []), ("[", []), ("*.{txt,py}", []), ("sub//*.txt", []),
])
def test_glob_patterns(tree, pattern, expected):
    found = gfile.glob(f"{tree}/{pattern}")
    assert sorted(os.path.relpath(p, tree) + ("/" if p.endswith("/") else "") for p in found) \
        == expected


def test_glob_star_does_not_cross_slash_and_trailing_slash(tree):
    found = sorted(os.path.basename(p) for p in gfile.glob(str(tree) + "/*/"))
    assert found == sorted(os.listdir(tree))  # TensorFlow drops the '/' and lists everything


def test_glob_relative_and_lists(tree, monkeypatch):
    monkeypatch.chdir(tree)
    assert gfile.glob("*.py") == ["./c.py"]  # TensorFlow patches a bare pattern to './'
    assert gfile.glob("sub/*.py") == ["sub/y.py"]
    assert gfile.glob("c.py") == ["c.py"] and gfile.glob("") == []
    assert sorted(gfile.glob(["*.py", "sub/*.py", "a.txt"])) == ["./c.py", "a.txt", "sub/y.py"]
    assert gfile.glob(iter([b"c.py"])) == ["c.py"] and gfile.glob(Path("c.py")) == ["c.py"]
    assert v1.Glob(filename="*.py") == ["./c.py"]
    assert gfile.glob("file://" + str(tree / "*.py")) == ["file://" + str(tree / "c.py")]


def test_glob_at_the_root(tmp_path):
    top = tmp_path.parts[1]  # '/tmp/...' -> 'tmp'
    assert f"/{top}" in gfile.glob(f"/{top[:-1]}?")


@pytest.mark.parametrize("pattern,path,matches", [  # glibc's fnmatch(FNM_PATHNAME) agrees
    ("*", "a/b", False), ("a*", "a/b", False), ("?", "/", False), ("[!a]", "/", False),
    ("[/]", "/", False), ("[]]", "]", True), ("[]", "[]", True), ("[!]", "[!]", True),
    ("[!]]", "a", True), ("[c-a]", "b", False), ("[a-]", "-", True), ("[\\]]", "]", True),
    ("x\\", "x\\", False), ("a\\*", "a*", True), ("a\\*", "ab", False), ("a[", "a[", True),
])
def test_glob_matches_as_fnmatch_with_fnm_pathname(pattern, path, matches):
    assert bool(file_io._glob_regex(pattern).match(path)) is matches


def test_glob_skips_unreadable_directories(tree, monkeypatch):
    real = os.listdir

    def listdir(path):
        if str(path).endswith("sub"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    assert sorted(gfile.glob(str(tree / "*" / "x.txt"))) == [str(tree / "sub2" / "x.txt")]


# --- walk ----------------------------------------------------------------------------------------

def test_walk_orders(tree):
    top = str(tree)
    down = list(gfile.walk(top))
    assert down[0][0] == top
    assert sorted(down[0][1]) == ["emptydir", "sub", "sub2"] and "a.txt" in down[0][2]
    order = [d for d, _, _ in down]
    assert order.index(os.path.join(top, "sub")) < order.index(os.path.join(top, "sub", "deep"))
    assert sorted(order) == sorted([top] + [os.path.join(top, p)
                                            for p in ("emptydir", "sub", "sub2", "sub/deep")])
    up = [d for d, _, _ in gfile.walk(top, topdown=False)]
    assert up[-1] == top and up.index(os.path.join(top, "sub", "deep")) < up.index(
        os.path.join(top, "sub"))
    assert sorted(up) == sorted(order)
    assert [d for d, _, _ in v1.Walk(top, in_order=False)] == up


def test_walk_contents_pruning_and_path_types(tree):
    sub = str(tree / "sub")
    walked = {d: (sorted(s), sorted(f)) for d, s, f in gfile.walk(sub)}
    assert walked == {sub: (["deep"], ["x.txt", "y.py"]),
                      os.path.join(sub, "deep"): ([], ["z.txt"])}
    assert [d for d, _, _ in gfile.walk(Path(sub))] == [d for d, _, _ in gfile.walk(sub.encode())]
    assert isinstance(next(gfile.walk(sub.encode()))[0], str)
    seen = []
    for d, subdirs, _ in gfile.walk(str(tree)):
        seen.append(d)
        subdirs[:] = [s for s in subdirs if s != "sub"]
    assert os.path.join(str(tree), "sub", "deep") not in seen and len(seen) == 3


def test_walk_of_a_missing_top(tree):
    missing = str(tree / "missing")
    assert list(gfile.walk(missing)) == [] and list(gfile.walk(str(tree / "a.txt"))) == []
    errors = []
    assert list(gfile.walk(missing, onerror=errors.append)) == []
    assert [type(e) for e in errors] == [E.NotFoundError]
    assert str(errors[0]) == f"Could not find directory {missing}"


# --- operating-system errors ---------------------------------------------------------------------

@pytest.mark.parametrize("code,cls", [
    (errno.EACCES, E.PermissionDeniedError), (errno.EPERM, E.PermissionDeniedError),
    (errno.EROFS, E.PermissionDeniedError), (errno.ENOSPC, E.ResourceExhaustedError),
    (errno.EXDEV, E.UnimplementedError), (errno.EBUSY, E.FailedPreconditionError),
    (errno.EIO, E.UnknownError), (errno.EINTR, E.UnavailableError)])
def test_errno_becomes_tensorflows_class(tmp_path, monkeypatch, code, cls):
    f = write(tmp_path / "f", "x")

    def fail(*args):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "rename", fail)
    with pytest.raises(cls, match=f"^{f}; {os.strerror(code)}$"):
        gfile.rename(str(f), str(tmp_path / "g"))


def test_permission_denied_for_real(tmp_path):
    f = write(tmp_path / "f", "x")
    f.chmod(0)
    if os.access(f, os.R_OK):
        pytest.skip("running with CAP_DAC_OVERRIDE (root): permissions are not enforced")
    with pytest.raises(E.PermissionDeniedError, match=f"^{f}; Permission denied$"):
        gfile.GFile(str(f)).read()
    assert gfile.exists(str(f)) and gfile.stat(str(f)).length == 1

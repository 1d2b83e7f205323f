"""`tf.io.gfile`: TensorFlow's file API on the local file system (the TF1 spellings of
`tf.compat.v1.gfile`, Exists ... Walk, are in file_io_v1.py).

Paths are str, bytes or os.PathLike, plain or `file://host/path` URIs; other schemes (`gs://`,
`s3://`, ...) raise TensorFlow's UnimplementedError for an unregistered file system. An OS
error becomes the class TensorFlow maps its errno to (ENOENT -> NotFoundError, EACCES ->
PermissionDeniedError, ...) with TensorFlow's message, "<path>; <strerror>".

`GFile` writes in place, as TensorFlow does for local files, creating or truncating the file
at the first `write`. `copy` writes a temporary file beside the destination and renames it
over the destination, so no reader sees a half-copied file; `rename` is rename(2), atomic.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import re
import stat as _stat
import uuid
from typing import NamedTuple

from ndflow.core import errors, file_io_docs, logging, strict_mode
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9.]*)://")
_GLOB_CHARS = frozenset("*?[\\")


def _errno_classes() -> dict[int, type]:
    """TensorFlow's errno -> error class table (ErrnoToCode); other errnos are Unknown."""
    e = errors
    groups = [
        (e.InvalidArgumentError, "EINVAL ENAMETOOLONG E2BIG EDESTADDRREQ EDOM EFAULT EILSEQ "
                                 "ENOPROTOOPT ENOSTR ENOTSOCK ENOTTY EPROTOTYPE ESPIPE"),
        (e.DeadlineExceededError, "ETIMEDOUT ETIME"),
        (e.NotFoundError, "ENODEV ENOENT ENXIO ESRCH"),
        (e.AlreadyExistsError, "EEXIST EADDRNOTAVAIL EALREADY"),
        (e.PermissionDeniedError, "EPERM EACCES EROFS"),
        (e.FailedPreconditionError, "ENOTEMPTY EISDIR ENOTDIR EADDRINUSE EBADF EBUSY ECHILD "
                                    "EISCONN ENOTBLK ENOTCONN EPIPE ESHUTDOWN ETXTBSY"),
        (e.ResourceExhaustedError, "ENOSPC EDQUOT EMFILE EMLINK ENFILE ENOBUFS ENODATA ENOMEM "
                                   "ENOSR EUSERS"),
        (e.OutOfRangeError, "EFBIG EOVERFLOW ERANGE"),
        (e.UnimplementedError, "ENOSYS ENOTSUP EAFNOSUPPORT EPFNOSUPPORT EPROTONOSUPPORT "
                               "ESOCKTNOSUPPORT EXDEV"),
        (e.UnavailableError, "EAGAIN ECONNREFUSED ECONNABORTED ECONNRESET EINTR EHOSTDOWN "
                             "EHOSTUNREACH ENETDOWN ENETRESET ENETUNREACH ENOLCK ENOLINK ENONET"),
        (e.AbortedError, "EDEADLK ESTALE"), (e.CancelledError, "ECANCELED")]
    return {getattr(errno, name): cls for cls, names in groups
            for name in names.split() if hasattr(errno, name)}


_ERRNO_CLASSES = _errno_classes()


def _os_error(name: str, exc: OSError) -> errors.OpError:
    """TensorFlow's IOError(name, errno): the class of the errno, "<name>; <strerror>"."""
    code = exc.errno or 0
    cls = _ERRNO_CLASSES.get(code, errors.UnknownError)
    return cls(None, None, f"{name}; {os.strerror(code) if code else exc}")


def _call(name: str, fn, *args):
    """fn(*args), its OSError raised as TensorFlow's error for `name`. A path with a NUL
    (ValueError in Python) is a missing file, as the C library sees it."""
    try:
        return fn(*args)
    except OSError as e:
        raise _os_error(name, e) from None
    except ValueError as e:
        if "null" not in str(e):
            raise
        raise _os_error(name, OSError(errno.ENOENT, "")) from None


def _path_str(path) -> str:
    """A path (str, bytes, os.PathLike) as str, as TensorFlow's path_to_bytes accepts it."""
    path = os.fspath(path) if isinstance(path, os.PathLike) else path
    if isinstance(path, str):
        return path
    if isinstance(path, (bytes, bytearray)):
        return os.fsdecode(bytes(path))
    raise TypeError(f"Expected binary or unicode string, got {path!r}")


def _split_uri(name: str) -> tuple[str, str]:
    """(prefix, local path) of a name: prefix is 'file://host' for file URIs, else ''.
    Raises TensorFlow's UnimplementedError for a scheme with no file system."""
    match = _SCHEME.match(name)
    if match is None:
        return "", name
    if match.group(1) != "file":
        raise errors.UnimplementedError(
            None, None, f"File system scheme '{match.group(1)}' not implemented (file: '{name}')")
    slash = name.find("/", match.end())
    host_end = len(name) if slash < 0 else slash
    return name[:host_end], name[host_end:]


def _resolve(path) -> tuple[str, str]:
    """(name as TensorFlow reports it, local path) of a path."""
    name = _path_str(path)
    return name, _split_uri(name)[1]


@tf_export("io.gfile.GFile", v1=["gfile.GFile", "gfile.Open", "io.gfile.GFile"])
class GFile:
    """A file with TensorFlow's semantics: 'r'/'w'/'a' and '+' modes, 'b' for bytes.

    Text modes return str and binary modes bytes; `read(n)` reads n bytes. Reading and writing
    use separate streams opened lazily: the read stream at the first read, seek or tell, the
    write stream at the first write ('w', 'w+' and 'r+' truncate then; 'a', 'a+' append).
    `readline` keeps '\\n' and drops every '\\r', as TensorFlow's buffered input stream does.
    """

    def __init__(self, name, mode="r"):
        self._name, self._mode, self._binary_mode = name, mode, "b" in mode
        plain = mode.replace("b", "")
        if plain not in ("r", "w", "a", "r+", "w+", "a+"):
            raise errors.InvalidArgumentError(
                None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self._readable = plain in ("r", "r+", "a+", "w+")
        self._writable = plain != "r"
        self._append = "a" in plain
        self._read_file = self._write_file = None

    @property
    def name(self):
        """The file name, as given."""
        return self._name

    @property
    def mode(self) -> str:
        """The mode the file was opened with."""
        return self._mode

    def _reader(self):
        if self._read_file is None:
            self._read_file = self._open(self._readable, "reading", "rb")
        return self._read_file

    def _writer(self):
        if self._write_file is None:
            self._write_file = self._open(self._writable, "writing", "ab" if self._append else "wb")
        return self._write_file

    def _open(self, allowed: bool, purpose: str, mode: str):
        if not allowed:
            raise errors.PermissionDeniedError(None, None, f"File isn't open for {purpose}")
        name, local = _resolve(self._name)
        return _call(name, open, local, mode)

    def _value(self, data: bytes):
        return data if self._binary_mode else data.decode("utf-8")

    def _io(self, fn, *args):
        return _call(_path_str(self._name), fn, *args)

    def size(self) -> int:
        """The size of the file in bytes."""
        return stat_v2(self._name).length

    def write(self, file_content) -> None:
        """Appends `file_content` (str, written as UTF-8, or bytes) to the file."""
        writer = self._writer()
        if isinstance(file_content, str):
            file_content = file_content.encode("utf-8")
        elif not isinstance(file_content, (bytes, bytearray)):
            raise TypeError(f"Expected binary or unicode string, got {file_content!r}")
        self._io(writer.write, file_content)

    def read(self, n: int = -1):
        """Reads `n` bytes (all that is left when n is -1) from the current position."""
        reader = self._reader()
        length = self.size() - self.tell() if n == -1 else n
        if length < 0:
            raise errors.InvalidArgumentError(
                None, None, f"Can't read a negative number of bytes: {length}")
        return self._value(self._io(reader.read, length))

    def seek(self, offset=None, whence: int = 0, position=None) -> None:
        """Moves the read position to `offset` bytes from the start (whence 0), the current
        position (1) or the end (2). Past the end it stops at the end: OutOfRangeError."""
        reader = self._reader()
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError("seek(): offset and position may not be set simultaneously.")
        offset = position if offset is None else offset
        if whence not in (0, 1, 2):
            raise errors.InvalidArgumentError(
                None, None, f"Invalid whence argument: {whence}. Valid values are 0, 1, or 2.")
        offset += (0, self.tell(), self.size())[whence]
        if offset < 0:
            raise errors.InvalidArgumentError(
                None, None, f"Seeking to a negative position: {offset}")
        end = self._io(os.fstat, reader.fileno()).st_size
        self._io(reader.seek, min(offset, end))
        if offset > end:
            raise errors.OutOfRangeError(None, None, "reached end of file")

    def readline(self):
        """The next line with its '\\n' ('\\r' dropped); empty at the end of the file."""
        return self._value(self._io(self._reader().readline).replace(b"\r", b""))

    def readlines(self) -> list:
        """All the remaining lines."""
        return list(iter(self.readline, b"" if self._binary_mode else ""))

    def tell(self) -> int:
        """The read position; the write position in the write-only modes 'w' and 'a'."""
        return self._io((self._reader() if self._readable else self._writer()).tell)

    def __enter__(self):
        return self

    def __exit__(self, unused_type, unused_value, unused_traceback):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration()
        return line

    next = __next__

    def flush(self) -> None:
        """Hands what was written to the operating system (no fsync)."""
        if self._write_file is not None:
            self._io(self._write_file.flush)

    def close(self) -> None:
        """Closes both streams, flushing what was written. The object can be used again:
        the next read starts from the beginning, the next write truncates ('w')."""
        if self._read_file is not None:
            self._read_file.close()
            self._read_file = None
        if self._write_file is not None:
            writer, self._write_file = self._write_file, None
            self._io(writer.close)

    def seekable(self) -> bool:
        return True


@tf_export(v1=["gfile.FastGFile"])
class FastGFile(GFile):
    """`GFile` under its TF1 name (deprecated in TensorFlow, which logs a warning once)."""

    _warned = False

    def __init__(self, name, mode="r"):
        if not FastGFile._warned:
            FastGFile._warned = True
            strict_mode.fail_if_strict("FastGFile.__init__ (from ndflow.core.file_io) is "
                                       "deprecated and will be removed in a future version.\n"
                                       "Instructions for updating:\nUse tf.gfile.GFile.")
            logging.log(logging.WARNING, "FastGFile.__init__ (from ndflow.core.file_io) is "
                        "deprecated and will be removed in a future version.\nInstructions for "
                        "updating:\nUse tf.gfile.GFile.", stacklevel=2)
        super().__init__(name, mode)


class FileStatistics(NamedTuple):
    """What `stat` returns: `length` in bytes, `mtime_nsec` (whole seconds, in ns, as
    TensorFlow reports it), `is_directory`."""

    length: int
    mtime_nsec: int
    is_directory: bool


@tf_export("io.gfile.exists")
def file_exists_v2(path) -> bool:
    """True if `path` exists (a file or a directory)."""
    return os.path.exists(_resolve(path)[1])


@tf_export("io.gfile.remove")
def delete_file_v2(path) -> None:
    """Deletes the file `path`; NotFoundError if there is none."""
    name, local = _resolve(path)
    _call(name, os.unlink, local)


def _dirname(path: str) -> str:
    """TensorFlow's io::Dirname: everything before the last '/' ('/' for a root child)."""
    pos = path.rfind("/")
    return "" if pos < 0 else "/" if pos == 0 else path[:pos]


def _join(parent: str, child: str) -> str:
    """TensorFlow's io::JoinPath of a directory and a (non-empty) name: one '/' between."""
    return parent + child if not parent or parent.endswith("/") else f"{parent}/{child}"


# One glob token: an escaped character, '*', '?', a bracket expression ('[!...]' or '[^...]'
# negated; a ']' right after the opening is a member; an unclosed '[' is literal), any other.
_GLOB_TOKEN = re.compile(r"\\(.)|(\*)|(\?)|\[([!^]?+)((?>\]?)(?:\\.|[^\]\\])*)\]|(.)", re.S)
_BRACKET_ITEM = re.compile(r"(\\.|.)(?:-(\\.|.))?", re.S)


def _glob_regex(pattern: str) -> re.Pattern:
    """fnmatch(pattern, path, FNM_PATHNAME) as a regex: nothing but a literal matches '/'."""

    def token(m: re.Match) -> str:
        escaped, star, question, negate, members, other = m.groups()
        if star or question:
            return "[^/]*" if star else "[^/]"
        if members is None:  # a '\\' ending the pattern matches nothing, as in glibc
            return "(?!)" if other == "\\" else re.escape(other if escaped is None else escaped)
        items = [(lo[-1], (hi or lo)[-1]) for lo, hi in _BRACKET_ITEM.findall(members)]
        body = "".join(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}"
                       for lo, hi in items if lo <= hi)
        return f"[^/{body}]" if negate else f"(?!/)[{body}]" if body else "(?!)"

    return re.compile(_GLOB_TOKEN.sub(token, pattern) + r"\Z", re.S)


def _matching_paths(pattern) -> list[str]:
    """TensorFlow's GetMatchingPaths: expands the globbing components level by level."""
    name = _path_str(pattern)
    prefix, local = _split_uri(name)
    if not local:
        return []
    first = next((k for k, c in enumerate(local) if c in _GLOB_CHARS), len(local))
    if first == len(local):
        return [name] if os.path.exists(local) else []
    patched = local if _dirname(local[:first]) else _join(".", local)
    level = _dirname(patched) if local.endswith("/") else patched
    dirs = []  # the pattern and its directory prefixes ('/' is its own dirname)
    while level and (not dirs or level != dirs[-1]):
        dirs.append(level)
        level = _dirname(level)
    dirs.reverse()  # shortest first
    start = next((k for k, d in enumerate(dirs) if _GLOB_CHARS.intersection(d)), 0)
    if start == 0:  # cannot happen: a relative pattern is patched to start at '.'
        return []
    parents = [dirs[start - 1]]
    for index in range(start, len(dirs)):  # one level at a time, as TensorFlow's BFS
        regex = _glob_regex(dirs[index])
        matched = [path for parent in parents for path in _children(parent) if regex.match(path)]
        parents = matched if index == len(dirs) - 1 else list(filter(os.path.isdir, matched))
    return [prefix + path for path in parents]


def _children(directory: str) -> list[str]:
    try:
        return [_join(directory, child) for child in os.listdir(directory)]
    except (OSError, ValueError):  # an unreadable directory matches nothing
        return []


@tf_export("io.gfile.glob")
def get_matching_files_v2(pattern) -> list[str]:
    """The paths matching `pattern` (a glob or an iterable of globs): '*' and '?' match within
    a path component, '[...]' a character set, '\\' escapes; no wildcards: the path if it exists."""
    if isinstance(pattern, (str, bytes, bytearray, os.PathLike)):
        return _matching_paths(pattern)
    return [match for single in pattern for match in _matching_paths(single)]


@tf_export("io.gfile.mkdir")
def create_dir_v2(path) -> None:
    """Creates the directory `path`; its parent must exist. An existing `path` is fine."""
    name, local = _resolve(path)
    if local:  # TensorFlow takes '' for an existing directory, and ignores EEXIST
        with contextlib.suppress(errors.AlreadyExistsError):
            _call(name, os.mkdir, local, 0o755)


@tf_export("io.gfile.makedirs")
def recursive_create_dir_v2(path) -> None:
    """Creates the directory `path` and its missing parents; fine if it exists."""
    prefix, local = _split_uri(_path_str(path))
    missing = []
    while local:
        if os.path.exists(local):
            if not os.path.isdir(local):
                raise errors.FailedPreconditionError(None, None, f"{local} is not a directory")
            break
        head, tail = os.path.split(local)
        missing += [tail] if tail else []
        if head == local:
            break
        local = head
    for part in reversed(missing):
        local = os.path.join(local, part)
        with contextlib.suppress(errors.AlreadyExistsError):
            _call(prefix + local, os.mkdir, local, 0o755)


def _check_target(dst, overwrite: bool) -> None:
    """Copy's and rename's first step in TensorFlow (a `dst` it cannot check is absent)."""
    try:
        occupied = not overwrite and file_exists_v2(dst)
    except errors.OpError:
        return
    if occupied:
        raise errors.AlreadyExistsError(None, None, "file already exists")


@tf_export("io.gfile.copy")
def copy_v2(src, dst, overwrite: bool = False) -> None:
    """Copies the file `src` to `dst` (AlreadyExistsError if it exists and not `overwrite`)
    through a temporary file renamed over `dst`. A new `dst` gets the permissions of `src`."""
    _check_target(dst, overwrite)
    src_name, src_local = _resolve(src)
    dst_name, dst_local = _resolve(dst)
    if os.path.isdir(src_local):  # TensorFlow's sendfile from a directory fails: EINVAL
        raise _os_error(dst_name, OSError(errno.EINVAL, ""))
    with _call(src_name, open, src_local, "rb") as source:
        mode = _stat.S_IMODE(os.fstat(source.fileno()).st_mode)
        if os.path.isdir(dst_local):
            raise _os_error(dst_name, OSError(errno.EISDIR, ""))
        try:
            kept = _stat.S_IMODE(os.stat(dst_local).st_mode)
        except (OSError, ValueError):
            kept = None
        tmp = f"{dst_local}.tmp{uuid.uuid4().hex}"
        fd = _call(dst_name, os.open, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            with os.fdopen(fd, "wb") as target:
                if kept is not None:
                    os.fchmod(target.fileno(), kept)
                while chunk := _call(src_name, source.read, 1 << 20):
                    _call(dst_name, target.write, chunk)
                _call(dst_name, os.fsync, target.fileno())
            _call(dst_name, os.replace, tmp, dst_local)
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)


@tf_export("io.gfile.rename")
def rename_v2(src, dst, overwrite: bool = False) -> None:
    """Renames (moves) the file or directory `src` to `dst` with rename(2), atomically;
    AlreadyExistsError if `dst` exists and not `overwrite`."""
    _check_target(dst, overwrite)
    src_name, src_local = _resolve(src)
    _call(src_name, os.rename, src_local, _resolve(dst)[1])


@tf_export("io.gfile.rmtree")
def delete_recursively_v2(path) -> None:
    """Deletes `path` and everything under it (a file too). What can be deleted is; the
    first failure is raised at the end. Symbolic links are deleted, never followed."""
    name, local = _resolve(path)
    if not os.path.exists(local):
        raise errors.NotFoundError(None, None, f"{name} not found")
    failures = []

    def delete(local: str, shown: str) -> None:
        tree = os.path.isdir(local) and not os.path.islink(local)
        try:
            for child in sorted(os.listdir(local)) if tree else ():
                delete(_join(local, child), _join(shown, child))
            (os.rmdir if tree else os.unlink)(local)
        except OSError as e:
            failures.append(_os_error(shown, e))

    delete(local, name)
    if failures:
        raise failures[0]


@tf_export("io.gfile.isdir")
def is_directory_v2(path) -> bool:
    """True if `path` is a directory; False when it is not or cannot be checked."""
    try:
        return os.path.isdir(_resolve(path)[1])
    except errors.OpError:
        return False


@tf_export("io.gfile.listdir")
def list_directory_v2(path) -> list[str]:
    """The names of the entries of directory `path` (without '.' and '..'), in the order
    the file system gives them; NotFoundError if `path` is not a directory."""
    if not is_directory_v2(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {path}")
    name, local = _resolve(path)
    return _call(name, os.listdir, local)


@tf_export("io.gfile.join")
def join(path, *paths):
    """Joins path components: URIs ('gs://a', ...) with '/', local paths with os.path.join."""
    first = os.fspath(path) if isinstance(path, os.PathLike) else path
    first = first.decode("utf-8") if isinstance(first, bytes) else str(first)
    return (posixpath if "://" in first[1:] else os.path).join(path, *paths)


@tf_export("io.gfile.walk")
def walk_v2(top, topdown: bool = True, onerror=None):
    """Yields (dirname, subdirectory names, file names) for `top` and every directory under
    it: parents first when `topdown`, else children first. Removing names from the
    subdirectory list (topdown) prunes the walk. A `top` that is not a directory yields
    nothing; `onerror`, if given, is called with its NotFoundError."""
    top = _path_str(top)
    try:
        listing = list_directory_v2(top)
    except errors.NotFoundError as err:
        if onerror:
            onerror(err)
        return
    subdirs, files = [], []
    for item in listing:
        (subdirs if is_directory_v2(join(top, item)) else files).append(item)
    if topdown:
        yield top, subdirs, files
    for subdir in subdirs:
        yield from walk_v2(join(top, subdir), topdown, onerror=onerror)
    if not topdown:
        yield top, subdirs, files


@tf_export("io.gfile.stat")
def stat_v2(path) -> FileStatistics:
    """The `FileStatistics` of `path` (symbolic links followed)."""
    name, local = _resolve(path)
    info = _call(name, os.stat, local)
    return FileStatistics(info.st_size, int(info.st_mtime) * 1_000_000_000,
                          _stat.S_ISDIR(info.st_mode))


@tf_export("io.gfile.get_registered_schemes")
def get_registered_schemes() -> list[str]:
    """The URI schemes `tf.io.gfile` accepts: 'file' and '' (plain local paths)."""
    return ["file", ""]


attach(globals(), file_io_docs.DOCS)

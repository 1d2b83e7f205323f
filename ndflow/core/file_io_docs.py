"""The docstrings of `tf.io.gfile`'s functions in file_io.py (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations

_PATH = "a path (str, bytes or os.PathLike) or a `file://` URI"
_RENAME = "Renames (moves) a file or directory, atomically (rename(2))."


def stat(path: str, example: str = "") -> str:
    """The docstring of stat (file_io_v1's TF1 gfile.Stat too) with its argument `path`."""
    return f"""File statistics of `{path}` (symbolic links are followed).

    Args:
      {path}: a path.

    Returns:
      A `FileStatistics(length, mtime_nsec, is_directory)`.

    Raises:
      NotFoundError: if `{path}` does not exist.
{example}    """


def moved(title: str, src: str, dst: str, src_is: str, dst_is: str, details: str = "") -> str:
    """The docstring of a copy or rename from `src` to `dst` (file_io_v1's TF1 names too)."""
    details = f"\n    {details}\n" if details else ""
    return f"""{title}
{details}
    Args:
      {src}: {src_is}
      {dst}: {dst_is}
      overwrite: whether an existing `{dst}` may be replaced.

    Raises:
      AlreadyExistsError: if `{dst}` exists and `overwrite` is False.
      NotFoundError: if `{src}` does not exist.
    """

DOCS = {
    "file_exists_v2": f"""Whether `path` exists, as a file or a directory.

    Args:
      path: {_PATH}.

    Returns:
      A bool.

    Raises:
      UnimplementedError: for a URI scheme other than `file://`.

    Example:
      >>> tf.io.gfile.exists("/")
      True
    """,
    "delete_file_v2": f"""Deletes the file `path`.

    Args:
      path: {_PATH}, naming a file (not a directory).

    Raises:
      NotFoundError: if there is no such file.
      OpError: the class TensorFlow maps the OS error to, for any other failure.
    """,
    "get_matching_files_v2": """The paths that match a glob pattern (or any of several patterns).

    '*' and '?' match within one path component, '[...]' is a character set and a backslash
    escapes; a pattern without wildcards matches the path itself if it exists.

    Args:
      pattern: a pattern, or an iterable of patterns.

    Returns:
      A list of matching paths (str), level by level as TensorFlow expands them.

    Example:
      >>> import os, tempfile
      >>> d = tempfile.mkdtemp()
      >>> for n in ["a.txt", "b.txt", "c.csv"]:
      ...     open(os.path.join(d, n), "w").close()
      >>> sorted(os.path.basename(p) for p in tf.io.gfile.glob(os.path.join(d, "*.txt")))
      ['a.txt', 'b.txt']
    """,
    "create_dir_v2": """Creates the directory `path`; its parent must already exist.

    An existing `path` is fine.

    Args:
      path: the directory to create.

    Raises:
      NotFoundError: if the parent directory does not exist.
    """,
    "recursive_create_dir_v2": """Creates `path` and any missing parent directories (mkdir -p).

    An existing directory is fine.

    Args:
      path: the directory to create.

    Raises:
      FailedPreconditionError: if a component of the path is an existing file.

    Example:
      >>> import os, tempfile
      >>> d = os.path.join(tempfile.mkdtemp(), "a", "b")
      >>> tf.io.gfile.makedirs(d)
      >>> tf.io.gfile.isdir(d)
      True
    """,
    "copy_v2": moved(
        "Copies the file `src` to `dst`.", "src", "dst", "the source file.",
        "the destination path.",
        "The data goes to a temporary file beside `dst` that is then renamed over it, so readers"
        "\n    never see a partial copy; a new `dst` gets the permissions of `src`."),
    "rename_v2": moved(_RENAME, "src", "dst", "the current path.", "the new path."),
    "delete_recursively_v2": """Deletes `path` and everything under it (like rm -r).

    Symbolic links are deleted, not followed. Everything that can be deleted is; the first
    failure is raised at the end.

    Args:
      path: a directory (or a file) to delete.

    Raises:
      NotFoundError: if `path` does not exist.
      OpError: the first failure met.
    """,
    "is_directory_v2": """Whether `path` is a directory.

    Args:
      path: a path.

    Returns:
      True for a directory; False for anything else, a missing path, or a path that cannot
      be checked.

    Example:
      >>> tf.io.gfile.isdir("/")
      True
    """,
    "list_directory_v2": """The names of the entries of a directory (without '.' and '..').

    Args:
      path: the directory.

    Returns:
      A list of names (str), in the file system's order.

    Raises:
      NotFoundError: if `path` is not a directory.

    Example:
      >>> import os, tempfile
      >>> d = tempfile.mkdtemp()
      >>> open(os.path.join(d, "x"), "w").close()
      >>> tf.io.gfile.listdir(d)
      ['x']
    """,
    "join": """Joins path components.

    URIs (`gs://bucket`, ...) are joined with '/', local paths with `os.path.join`.

    Args:
      path: the first component (str, bytes or os.PathLike).
      *paths: further components.

    Returns:
      The joined path.

    Example:
      >>> tf.io.gfile.join("gs://bucket", "dir", "file")
      'gs://bucket/dir/file'
    """,
    "walk_v2": """Walks the directory tree under `top`, like `os.walk`.

    Args:
      top: the root directory.
      topdown: if True, a directory is yielded before its subdirectories (removing names
        from its subdirectory list then prunes the walk); else after them.
      onerror: optional function called with the NotFoundError of a `top` that is not a
        directory.

    Yields:
      `(dirname, subdirectory_names, file_names)` for `top` and each directory under it.

    Example:
      >>> import os, tempfile
      >>> d = tempfile.mkdtemp()
      >>> os.mkdir(os.path.join(d, "sub"))
      >>> [(os.path.relpath(p, d), dirs) for p, dirs, _ in tf.io.gfile.walk(d)]
      [('.', ['sub']), ('sub', [])]
    """,
    "stat_v2": stat("path", '\n    Example:\n      >>> tf.io.gfile.stat("/").is_directory\n'
                            "      True\n"),
    "get_registered_schemes": """The URI schemes `tf.io.gfile` accepts.

    Returns:
      ['file', ''] (the empty scheme is a plain local path); other schemes (gs://, s3://,
      ...) raise UnimplementedError.

    Example:
      >>> tf.io.gfile.get_registered_schemes()
      ['file', '']
    """,
}

# file_io_v1.py's TF1 spellings (attached at its end).
V1_DOCS = {
    "copy": moved("Copies the file `oldpath` to `newpath`.", "oldpath", "newpath",
                  "the source file.", "the destination path.",
                  "The data goes to a temporary file that is then renamed over `newpath`, so "
                  "readers never see\n    a partial copy."),
    "rename": moved(_RENAME, "oldname", "newname", "the current path.", "the new path."),
    "stat": stat("filename"),
}

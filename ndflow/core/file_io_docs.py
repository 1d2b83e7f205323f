"""The docstrings of `tf.io.gfile`'s functions in file_io.py (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations

_PATH = "a path (str, bytes or os.PathLike) or a `file://` URI"

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
    "copy_v2": """Copies the file `src` to `dst`.

    The data goes to a temporary file beside `dst` that is then renamed over it, so readers
    never see a partial copy; a new `dst` gets the permissions of `src`.

    Args:
      src: the source file.
      dst: the destination path.
      overwrite: whether an existing `dst` may be replaced.

    Raises:
      AlreadyExistsError: if `dst` exists and `overwrite` is False.
      NotFoundError: if `src` does not exist.
    """,
    "rename_v2": """Renames (moves) a file or directory, atomically (rename(2)).

    Args:
      src: the current path.
      dst: the new path.
      overwrite: whether an existing `dst` may be replaced.

    Raises:
      AlreadyExistsError: if `dst` exists and `overwrite` is False.
      NotFoundError: if `src` does not exist.
    """,
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
    "stat_v2": """File statistics of `path` (symbolic links are followed).

    Args:
      path: a path.

    Returns:
      A `FileStatistics(length, mtime_nsec, is_directory)`.

    Raises:
      NotFoundError: if `path` does not exist.

    Example:
      >>> tf.io.gfile.stat("/").is_directory
      True
    """,
    "get_registered_schemes": """The URI schemes `tf.io.gfile` accepts.

    Returns:
      ['file', ''] (the empty scheme is a plain local path); other schemes (gs://, s3://,
      ...) raise UnimplementedError.

    Example:
      >>> tf.io.gfile.get_registered_schemes()
      ['file', '']
    """,
}

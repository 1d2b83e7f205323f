"""`tf.compat.v1.gfile`'s TF1 spellings (Exists, Glob, MakeDirs, Walk, ...): each is the
`tf.io.gfile` function of core/file_io.py under its TF 1.x name and argument names."""

from __future__ import annotations

from ndflow.core import file_io_docs
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.file_io import (
    FileStatistics,
    copy_v2,
    create_dir_v2,
    delete_file_v2,
    delete_recursively_v2,
    file_exists_v2,
    get_matching_files_v2,
    is_directory_v2,
    list_directory_v2,
    recursive_create_dir_v2,
    rename_v2,
    stat_v2,
    walk_v2,
)


@tf_export(v1=["gfile.Exists"])
def file_exists(filename) -> bool:
    """Whether `filename` exists, as a file or a directory.

    Args:
      filename: a path (str, bytes or os.PathLike) or a `file://` URI.

    Returns:
      A bool.

    Raises:
      UnimplementedError: for a URI scheme other than `file://`.

    Example:
      >>> tf.compat.v1.gfile.Exists("/")
      True
    """
    return file_exists_v2(filename)


@tf_export(v1=["gfile.Remove"])
def delete_file(filename) -> None:
    """Deletes the file `filename`.

    Args:
      filename: the path of a file (not a directory).

    Raises:
      NotFoundError: if there is no such file.
      OpError: the class TensorFlow maps the OS error to, for any other failure.
    """
    delete_file_v2(filename)


@tf_export(v1=["gfile.Glob"])
def get_matching_files(filename) -> list[str]:
    """The paths that match a glob pattern (or any of several patterns).

    Args:
      filename: a pattern, or an iterable of patterns: '*' and '?' match within one path
        component, '[...]' is a character set and '\\' escapes; a pattern without wildcards
        matches the path itself if it exists.

    Returns:
      A list of matching paths (str).

    Example:
      >>> tf.compat.v1.gfile.Glob("/nonexistent-dir/*")
      []
    """
    return get_matching_files_v2(filename)


@tf_export(v1=["gfile.MkDir"])
def create_dir(dirname) -> None:
    """Creates the directory `dirname`; its parent must exist (an existing `dirname` is fine).

    Args:
      dirname: the path of the directory.

    Raises:
      NotFoundError: if the parent directory does not exist.
    """
    create_dir_v2(dirname)


@tf_export(v1=["gfile.MakeDirs"])
def recursive_create_dir(dirname) -> None:
    """Creates the directory `dirname` and any missing parents (an existing one is fine).

    Args:
      dirname: the path of the directory.

    Raises:
      FailedPreconditionError: if a component of the path is an existing file.
    """
    recursive_create_dir_v2(dirname)


@tf_export(v1=["gfile.Copy"])
def copy(oldpath, newpath, overwrite: bool = False) -> None:
    copy_v2(oldpath, newpath, overwrite)


@tf_export(v1=["gfile.Rename"])
def rename(oldname, newname, overwrite: bool = False) -> None:
    rename_v2(oldname, newname, overwrite)


@tf_export(v1=["gfile.DeleteRecursively"])
def delete_recursively(dirname) -> None:
    """Deletes `dirname` and everything under it (symbolic links are deleted, not followed).

    Args:
      dirname: a directory (or a file) to delete.

    Raises:
      NotFoundError: if `dirname` does not exist.
      OpError: the first failure, after everything deletable has been deleted.
    """
    delete_recursively_v2(dirname)


@tf_export(v1=["gfile.IsDirectory"])
def is_directory(dirname) -> bool:
    """Whether `dirname` is a directory.

    Args:
      dirname: a path.

    Returns:
      True for a directory; False for anything else, a missing path, or a path that cannot
      be checked.

    Example:
      >>> tf.compat.v1.gfile.IsDirectory("/")
      True
    """
    return is_directory_v2(dirname)


@tf_export(v1=["gfile.ListDirectory"])
def list_directory(dirname) -> list[str]:
    """The names of the entries of a directory (without '.' and '..').

    Args:
      dirname: the path of a directory.

    Returns:
      A list of names (str), in the file system's order.

    Raises:
      NotFoundError: if `dirname` is not a directory.
    """
    return list_directory_v2(dirname)


@tf_export(v1=["gfile.Walk"])
def walk(top, in_order: bool = True):
    """Walks the directory tree under `top`, like `os.walk`.

    Args:
      top: the root directory.
      in_order: if True, a directory is yielded before its subdirectories (top-down);
        else after them.

    Yields:
      `(dirname, subdirectory_names, file_names)` for `top` and each directory under it; a
      `top` that is not a directory yields nothing.
    """
    return walk_v2(top, in_order)


@tf_export(v1=["gfile.Stat"])
def stat(filename) -> FileStatistics:
    return stat_v2(filename)


attach(globals(), file_io_docs.V1_DOCS)

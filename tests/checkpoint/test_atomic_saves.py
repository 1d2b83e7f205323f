"""A writer killed mid-save (SIGKILL at a step of the save, `arm_kill`) leaves the previous
checkpoint loadable; an unwritable directory is a TF-typed error that loses nothing. The
writers are forked processes, so the test pays for no second `import ndflow`; the kill is
armed in the child by replacing the step that follows the point (nothing in ndflow knows)."""

import os
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest

import ndflow as tf
from ndflow.checkpoint import checkpoint_management
from ndflow.core import errors


def _die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


def arm_kill(point: str) -> None:
    """Makes this process die by SIGKILL at `point` of the next save: "temp_files_written"
    (a bundle's data and index files written, before either is renamed over an older one),
    "data_file_renamed" (between the two renames) or "before_state_file" (the bundle in
    place, the directory's `checkpoint` file not yet updated). For forked children only."""
    if point == "before_state_file":
        checkpoint_management.update_checkpoint_state = _die
        return
    renames, real = [], os.replace
    kill_at = {"temp_files_written": 0, "data_file_renamed": 1}[point]

    def replace(src, dst, *args, **kwargs):
        if len(renames) == kill_at:
            _die()
        renames.append(dst)
        return real(src, dst, *args, **kwargs)
    os.replace = replace


def _run_killed(point, action):
    """Runs action() in a forked child killed at `point`; returns its exit status."""
    pid = os.fork()
    if pid == 0:  # the child: killed at `point`, or exits 0 when it never gets there
        try:
            arm_kill(point)
            action()
        except BaseException:  # noqa: BLE001 - reported by the exit status
            os._exit(3)
        os._exit(0)
    deadline = time.time() + 60
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"writer killed at {point} did not finish")


@pytest.mark.parametrize("point", ["temp_files_written", "data_file_renamed",
                                   "before_state_file"])
def test_killed_manager_save_leaves_previous_checkpoint(tmp_path, point):
    v = tf.Variable([1.0, 2.0])
    ckpt = tf.train.Checkpoint(v=v)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
    first = manager.save()

    def second_save():
        v.assign([9.0, 9.0])
        manager.save()

    status = _run_killed(point, second_save)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    restored = tf.Variable([0.0, 0.0])
    tf.train.Checkpoint(v=restored).restore(first).assert_consumed()
    np.testing.assert_array_equal(restored.numpy(), [1.0, 2.0])


def test_killed_overwrite_of_same_prefix(tmp_path):
    v = tf.Variable([1.0, 2.0])
    ckpt = tf.train.Checkpoint(v=v)
    prefix = ckpt.write(str(tmp_path / "same"))

    def overwrite():
        v.assign([7.0, 7.0])
        ckpt.write(prefix)

    # killed before the renames: the old bundle is intact
    assert os.WTERMSIG(_run_killed("temp_files_written", overwrite)) == signal.SIGKILL
    restored = tf.Variable([0.0, 0.0])
    tf.train.Checkpoint(v=restored).read(prefix).assert_consumed()
    np.testing.assert_array_equal(restored.numpy(), [1.0, 2.0])
    # killed between the renames: the mix is detected, never silently wrong values
    v.assign([1.0, 2.0])
    assert os.WTERMSIG(_run_killed("data_file_renamed", overwrite)) == signal.SIGKILL
    with pytest.raises(errors.DataLossError, match=r"same\.data-00000-of-00001"):
        tf.train.Checkpoint(v=restored).read(prefix)


def _make_read_only(path) -> bool:
    """chmod for a user; as root (who ignores modes) the immutable attribute, if the file
    system has it. False when neither works."""
    if os.geteuid() != 0:
        os.chmod(path, 0o500)
        return True
    return subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0 \
        if shutil.which("chattr") else False


def _make_writable(path) -> None:
    if os.geteuid() != 0:
        os.chmod(path, 0o700)
    else:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def test_read_only_directory_is_permission_denied_and_keeps_previous(tmp_path):
    v = tf.Variable([1.0])
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), 2)
    first = manager.save()
    before = sorted(os.listdir(tmp_path))
    if not _make_read_only(tmp_path):
        pytest.skip("cannot make a directory read-only here (root without chattr +i)")
    try:
        with pytest.raises(errors.PermissionDeniedError, match="ckpt-2"):
            manager.save()
    finally:
        _make_writable(tmp_path)
    assert sorted(os.listdir(tmp_path)) == before
    assert tf.train.latest_checkpoint(str(tmp_path)) == first


def test_refused_rename_is_permission_denied_and_keeps_previous(tmp_path, monkeypatch):
    # as root the read-only directory test cannot run; refuse the rename instead
    v = tf.Variable([1.0])
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), 2)
    first = manager.save()
    before = sorted(os.listdir(tmp_path))

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", dst)
    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(errors.PermissionDeniedError, match="Permission denied"):
        manager.save()
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == before
    assert tf.train.latest_checkpoint(str(tmp_path)) == first

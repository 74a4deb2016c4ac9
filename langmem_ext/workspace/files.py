"""Durable file writes and the workspace lock.

* :func:`atomic_write_text` writes a temp file in the same folder, fsyncs it,
  renames it over the target and fsyncs the folder: a reader (or a process killed
  mid-write) sees either the old file or the new one, never half of each.
* :class:`WorkspaceLock` is a re-entrant lock held across threads *and* processes
  (``fcntl.flock`` on ``.lock``), so two processes writing one workspace serialise.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from langmem_ext.errors import WorkspaceLockTimeout


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename inside it is durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: Path, content: str) -> None:
    """Replace ``path`` with ``content`` durably (temp file + fsync + rename).

    Args:
        path: Target file; its parent folders are created.
        content: Full new text (UTF-8).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def read_text(path: Path) -> str:
    """Read a UTF-8 file, returning "" when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


class WorkspaceLock:
    """A re-entrant lock across threads and processes for one workspace.

    Args:
        path: The lock file (``<workspace>/.lock``).
        timeout: Seconds to wait before :class:`WorkspaceLockTimeout`.
    """

    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        self.path = path
        self.timeout = timeout
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock for the body of a ``with`` block."""
        if not self._thread_lock.acquire(timeout=self.timeout):
            raise WorkspaceLockTimeout(
                f"Another thread held the workspace lock {self.path} for over "
                f"{self.timeout:.0f}s; retry, or raise Settings.lock_timeout_s."
            )
        try:
            if self._depth == 0:
                self._acquire_file()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release_file()
        finally:
            self._thread_lock.release()

    def _acquire_file(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    msg = (
                        f"Another process held the workspace lock {self.path} for over "
                        f"{self.timeout:.0f}s; retry, or raise Settings.lock_timeout_s."
                    )
                    raise WorkspaceLockTimeout(msg) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        self._fd = fd

    def _release_file(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


__all__ = ["WorkspaceLock", "atomic_write_text", "fsync_dir", "read_text"]

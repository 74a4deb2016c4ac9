"""Durable file writes and the workspace lock.

* :func:`atomic_write_text` writes a temp file in the same folder, fsyncs it,
  renames it over the target and fsyncs the folder: a reader (or a process killed
  mid-write) sees either the old file or the new one, never half of each.
* :class:`WorkspaceLock` is a re-entrant lock held across threads *and* processes
  (:class:`filelock.FileLock` on ``.lock``), so two processes writing one workspace
  serialise, on POSIX and on Windows.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from langmem_ext.errors import MemoryFileError, WorkspaceLockTimeout

_TEMP_RE = re.compile(r"^\.(MEMORY|LONG_TERM|PROFILE|\d{4}-\d{2}-\d{2})\.md\.[a-z0-9_]{8}\.tmp$")
"""Temp files of :func:`atomic_write_text` for memory files (``tempfile.mkstemp`` names)."""


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
    """Read a UTF-8 file, returning "" when it does not exist.

    Raises:
        MemoryFileError: the file is not valid UTF-8 (the message names it).
    """
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError as e:
        msg = f"{path} is not valid UTF-8 (byte offset {e.start}): re-save it as UTF-8."
        raise MemoryFileError(msg) from None


def remove_stale_temp_files(folders: list[Path]) -> list[Path]:
    """Remove temp files an interrupted :func:`atomic_write_text` left in ``folders``.

    Only names :func:`atomic_write_text` gives memory files
    (``.MEMORY.md.<8 chars>.tmp``, ``.2026-01-31.md.<8 chars>.tmp``, ...) directly
    inside the given folders are removed; symlinks are never followed. Call it
    holding the workspace lock, so no live writer is using them.

    Returns:
        The files removed.
    """
    removed: list[Path] = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if _TEMP_RE.match(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


class WorkspaceLock:
    """A re-entrant lock across threads and processes for one workspace.

    Threads of one process queue on a :class:`threading.RLock`; processes on a
    :class:`filelock.FileLock` (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on
    Windows) over ``path``, whose own counter makes nested holds re-entrant. The
    lock file is kept on release: its presence tells :class:`~langmem_ext.workspace.store.Workspace`
    that a writer ran here.

    Args:
        path: The lock file (``<workspace>/.lock``).
        timeout: Seconds to wait before :class:`WorkspaceLockTimeout`.
    """

    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        self.path = path
        self.timeout = timeout
        self._thread_lock = threading.RLock()
        # thread_local=False: the RLock above already gives one thread at a time, and a
        # nested hold must see the same counter as the outer one.
        self._file_lock = FileLock(
            path, thread_local=False, preserve_lock_file=True, poll_interval=0.005
        )

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock for the body of a ``with`` block.

        Raises:
            WorkspaceLockTimeout: another thread or process held it for over ``timeout``
                seconds.
        """
        with self._held(self.timeout) as holder:
            if holder is not None:
                msg = (
                    f"Another {holder} held the workspace lock {self.path} for over "
                    f"{self.timeout:.0f}s; retry, or raise Settings.lock_timeout_s."
                )
                raise WorkspaceLockTimeout(msg)
            yield

    @contextlib.contextmanager
    def try_hold(self) -> Iterator[bool]:
        """Hold the lock for a ``with`` block only if it is free now.

        Yields:
            ``True`` when the lock is held for the block, ``False`` when another
            thread or process holds it (the block runs without it).
        """
        with self._held(0) as holder:
            yield holder is None

    @contextlib.contextmanager
    def _held(self, timeout: float) -> Iterator[str | None]:
        """Hold the lock for the block if it frees within ``timeout`` seconds (0: free
        now). Yields ``None`` when held, else who holds it: ``"thread"`` or ``"process"``."""
        if not self._thread_lock.acquire(timeout=timeout):
            yield "thread"
            return
        try:
            if not self._acquire_file(timeout):
                yield "process"
                return
            try:
                yield None
            finally:
                self._file_lock.release()
        finally:
            self._thread_lock.release()

    def _acquire_file(self, timeout: float) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._file_lock.acquire(timeout=timeout)
        except Timeout:
            return False
        return True


__all__ = [
    "WorkspaceLock",
    "atomic_write_text",
    "fsync_dir",
    "read_text",
    "remove_stale_temp_files",
]

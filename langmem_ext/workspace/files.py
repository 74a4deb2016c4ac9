"""Durable file writes and the workspace lock.

* :func:`atomic_write_text` writes a temp file in the same folder, fsyncs it,
  renames it over the target and fsyncs the folder: a reader (or a process killed
  mid-write) sees either the old file or the new one, never half of each.
* :class:`AppendJournal` appends to a file durably: the append is recorded (and
  fsynced) first, so one torn by a kill is found and undone by :meth:`AppendJournal.repair`.
* :class:`WorkspaceLock` is a re-entrant lock held across threads *and* processes
  (:class:`filelock.FileLock` on ``.lock``), so two processes writing one workspace
  serialise, on POSIX and on Windows.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from langmem_ext.core.errors import MemoryFileError
from langmem_ext.workspace.held_lock import HeldLock

logger = logging.getLogger(__name__)

_TEMP_RE = re.compile(r"^\.(MEMORY|LONG_TERM|PROFILE|\d{4}-\d{2}-\d{2})\.md\.[a-z0-9_]{8}\.tmp$")
"""Temp files of :func:`atomic_write_text` for memory files (``tempfile.mkstemp`` names)."""


PRIVATE_FILE_MODE = 0o600
"""Mode of every file of a workspace: the owner reads and writes, nobody else."""
PRIVATE_DIR_MODE = 0o700
"""Mode of a workspace folder the package creates."""


def private_file(path: Path) -> Path:
    """Make ``path`` exist as a file only its owner can read and write (``0600``).

    Called before a database or log file of the workspace is opened: SQLite gives its
    ``-wal`` and ``-shm`` files the database file's mode, so they stay private too.
    A looser mode left by an older version is tightened.

    Args:
        path: The file; its parent folders are created.

    Returns:
        ``path``.
    """
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    finally:
        os.close(fd)
    return path


def private_dir(path: Path) -> Path:
    """Create ``path`` (and its missing parents) as folders only their owner can enter.

    A folder that already exists keeps its mode: a workspace may be placed in a
    folder the user chose.
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=PRIVATE_DIR_MODE)
    return path


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
    private_dir(path.parent)
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


class AppendJournal:
    """Durable appends to a workspace's files, undone when a kill tears them.

    Before appending, the journal file (``<workspace>/.append-journal``) records the
    target, its inode, the offset the append starts at and the exact text, and is
    fsynced; then the text is appended and the target fsynced; then the journal is
    emptied (no fsync needed: a stale record of a complete append is harmless). A
    process killed mid-append leaves the record: :meth:`repair` (run under the
    workspace lock before reading the files) truncates the target back to the offset
    when what follows it is a proper prefix of the recorded text, so a torn bullet
    never becomes a memory. The call that was killed never returned, so nothing
    confirmed is lost. A file changed since (another inode, other bytes) is left alone.

    Args:
        root: The workspace folder (targets are recorded relative to it).
    """

    NAME = ".append-journal"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / self.NAME

    def append(self, target: Path, text: str) -> os.stat_result:
        """Append ``text`` to the existing file ``target`` durably (fsynced on return).

        Returns:
            ``target``'s ``lstat`` after the append.
        """
        data = text.encode("utf-8")
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
        try:
            st = os.fstat(fd)
            self._record(
                {
                    "path": target.relative_to(self.root).as_posix(),
                    "dev": st.st_dev,
                    "ino": st.st_ino,
                    "offset": st.st_size,
                    "text": text,
                }
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except BaseException:  # disk full, ...: the file is left as it was
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, st.st_size)
                    os.fsync(fd)
                raise
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.truncate(self.path, 0)
        return os.lstat(target)

    def _record(self, record: dict[str, object]) -> None:
        new = not self.path.exists()
        payload = json.dumps(record, ensure_ascii=False).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if new:
            fsync_dir(self.root)

    def repair(self) -> str | None:
        """Undo an append a killed writer left half done (call with the lock held).

        Returns:
            The workspace-relative path of the file repaired, or ``None``.
        """
        try:
            if os.stat(self.path).st_size == 0:
                return None
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        repaired = None
        try:
            rec = json.loads(raw)
            rel, offset = str(rec["path"]), int(rec["offset"])
            data = str(rec["text"]).encode("utf-8")
            target = self.root / rel
            st = os.lstat(target)
        except (ValueError, KeyError, TypeError, OSError):
            rec = None  # a torn record: its append never started; or the file is gone
        torn = (
            rec is not None
            and (st.st_dev, st.st_ino) == (rec["dev"], rec["ino"])
            and offset < st.st_size < offset + len(data)
        )
        if torn:
            with open(target, "r+b") as fh:
                fh.seek(offset)
                if data.startswith(fh.read()):
                    fh.truncate(offset)
                    fh.flush()
                    os.fsync(fh.fileno())
                    repaired = rel
                    logger.warning(
                        "%s: removed the torn end of an append interrupted by a kill "
                        "(%d of %d bytes written; that write never returned)",
                        rel,
                        st.st_size - offset,
                        len(data),
                    )
        os.truncate(self.path, 0)
        return repaired


class WorkspaceLock(HeldLock):
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
        super().__init__(timeout)
        self._thread_lock = threading.RLock()
        # thread_local=False: the RLock above already gives one thread at a time, and a
        # nested hold must see the same counter as the outer one.
        self._file_lock = FileLock(
            path,
            mode=PRIVATE_FILE_MODE,
            thread_local=False,
            preserve_lock_file=True,
            poll_interval=0.005,
        )

    def _shown(self) -> str:
        return str(self.path)

    @contextlib.contextmanager
    def _held(self, timeout: float, quiet: bool = False) -> Iterator[str | None]:
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
    "AppendJournal",
    "WorkspaceLock",
    "atomic_write_text",
    "fsync_dir",
    "read_text",
    "remove_stale_temp_files",
]

"""The workspace lock on PostgreSQL: an advisory lock per scope, across replicas.

:class:`PgWorkspaceLock` mirrors :class:`~langmem_ext.workspace.files.WorkspaceLock`
(``hold()``, ``try_hold()``, re-entrant in a thread, :class:`WorkspaceLockTimeout`
after ``timeout`` seconds): threads of one process queue on an ``RLock``,
processes (replicas, on any machine) on ``pg_advisory_lock`` of the lock's key,
held by one pooled connection from the outermost ``hold`` to its end. If that
connection dies, the server releases the lock with it.

:class:`PgRunLocks` are the locks a conversation's runs hold from start to end, one
name per thread, on connections of their own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langmem_ext.core.errors import WorkspaceLockTimeout
from langmem_ext.workspace.held_lock import HeldLock
from langmem_ext.workspace.postgres._base import PgConnections, check_url

_LOCK = "SELECT pg_advisory_lock(hashtextextended(%s, 0))"
_WAIT = "SELECT set_config('lock_timeout', %s, false)"


def lock_key(name: str) -> str:
    """The text whose hash is the advisory lock key of ``name``."""
    return f"langmem-ext workspace lock\x1f{name}"


class PgWorkspaceLock(HeldLock):
    """A re-entrant lock across threads and processes for one workspace or scope.

    Args:
        db: The engine's connections.
        name: What is locked (a workspace or a scope): equal names exclude each other.
        timeout: Seconds to wait before :class:`WorkspaceLockTimeout`.
    """

    def __init__(self, db: PgConnections, name: str, timeout: float = 30.0) -> None:
        self.name = name
        super().__init__(timeout)
        self._db = db
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._conn_cm: Any = None

    def _shown(self) -> str:
        return repr(self.name)

    @contextlib.contextmanager
    def _held(self, timeout: float) -> Iterator[str | None]:
        if not self._thread_lock.acquire(timeout=timeout if timeout > 0 else 0):
            yield "thread"
            return
        try:
            if self._depth == 0 and not self._acquire(timeout):
                yield "process"
                return
            self._depth += 1
            try:
                yield None
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()
        finally:
            self._thread_lock.release()

    def _acquire(self, timeout: float) -> bool:
        import psycopg

        cm = self._db.pool.connection(timeout=max(timeout, 1.0))
        conn = cm.__enter__()
        key = lock_key(self.name)
        try:
            if timeout <= 0:
                got = conn.execute(
                    "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)
                ).fetchone()[0]
            else:
                conn.execute(f"SET lock_timeout = {int(timeout * 1000)}")
                try:
                    conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
                    got = True
                except psycopg.errors.LockNotAvailable:
                    got = False
                finally:
                    conn.execute("SET lock_timeout = 0")
        except BaseException:
            cm.__exit__(None, None, None)
            raise
        if not got:
            cm.__exit__(None, None, None)
            return False
        self._conn_cm = (cm, conn)
        return True

    def _release(self) -> None:
        cm, conn = self._conn_cm
        self._conn_cm = None
        try:
            conn.execute(
                "SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock_key(self.name),)
            )
        finally:
            cm.__exit__(None, None, None)


class PgRunLocks:
    """Locks by name held for a whole run (a conversation's turn), across replicas.

    Each hold opens a connection of its own (never one of the pool: a run holding
    one while it waits for the database would starve the others), takes a session
    advisory lock on the name there and closes the connection at the end, which
    releases the lock. A process that dies mid-run closes its connections with it:
    the server releases its locks, and no stale lock is left behind.

    Args:
        url: ``postgresql://…`` of the database.
        timeout: Seconds a run waits for another replica's run of the same name.

    Raises:
        InvalidInputError: ``url`` is not a PostgreSQL URL.
    """

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self.url = check_url(url)
        self.timeout = timeout

    def _key(self, name: str) -> str:
        return f"langmem-ext run\x1f{name}"

    def _timeout(self, name: str, exc: BaseException) -> WorkspaceLockTimeout:
        return WorkspaceLockTimeout(
            f"Another replica ran {name!r} for over {self.timeout:.0f}s; retry, or raise "
            "Settings.lock_timeout_s."
        )

    @contextlib.contextmanager
    def hold(self, name: str) -> Iterator[None]:
        """Hold the lock of ``name`` for the ``with`` block.

        Raises:
            WorkspaceLockTimeout: Another process held it for over ``timeout`` seconds.
        """
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(_WAIT, (f"{int(self.timeout * 1000)}ms",))
            try:
                conn.execute(_LOCK, (self._key(name),))
            except psycopg.errors.LockNotAvailable as exc:
                raise self._timeout(name, exc) from exc
            yield

    @contextlib.asynccontextmanager
    async def ahold(self, name: str) -> AsyncIterator[None]:
        """Hold the lock of ``name`` for the ``async with`` block (the event loop runs
        while it waits).

        Raises:
            WorkspaceLockTimeout: Another process held it for over ``timeout`` seconds.
        """
        import psycopg

        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            await conn.execute(_WAIT, (f"{int(self.timeout * 1000)}ms",))
            try:
                await conn.execute(_LOCK, (self._key(name),))
            except psycopg.errors.LockNotAvailable as exc:
                raise self._timeout(name, exc) from exc
            yield


__all__ = ["PgRunLocks", "PgWorkspaceLock", "lock_key"]

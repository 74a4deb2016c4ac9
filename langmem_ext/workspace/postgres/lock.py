"""The workspace lock on PostgreSQL: advisory locks per scope, across replicas.

:class:`PgWorkspaceLock` mirrors :class:`~langmem_ext.workspace.files.WorkspaceLock`
(``hold()``, ``try_hold()``, re-entrant in a thread, :class:`WorkspaceLockTimeout`
after ``timeout`` seconds) and adds ``hold_scope(scope)``, the lock of one scope's
writes. Two advisory locks of the server make the pair:

- the workspace's key: ``hold()`` (a write over every scope: sync of all scopes,
  import, migration) takes it exclusively, ``hold_scope`` shared;
- a key per scope: ``hold_scope`` takes it exclusively.

So writes of two scopes run at once, writes of one scope take turns, and a
whole-workspace hold waits for every scope's writes and keeps them all out. Threads
of one process queue in the process first (no pooled connection is taken while
waiting), then take the server's locks on one pooled connection held from the
outermost hold to its end. If that connection dies, the server releases the locks
with it. A hold nested in another of the same thread is part of the outer one; a
nested ``hold_scope`` of another scope takes that scope's lock too.

:class:`PgRunLocks` are the locks a conversation's runs hold from start to end, one
name per thread, on connections of their own.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
import traceback
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langmem_ext.core.errors import WorkspaceLockTimeout
from langmem_ext.workspace.held_lock import HeldLock
from langmem_ext.workspace.postgres._base import (
    PgConnections,
    awatch_client,
    check_url,
    watch_client,
)

_LOCK = "SELECT pg_advisory_lock(hashtextextended(%s, 0))"
_WAIT = "SELECT set_config('lock_timeout', %s, false)"
_WHOLE = None
"""The hold of the whole workspace (a scope's hold names its scope)."""

logger = logging.getLogger(__name__)


def lock_key(name: str) -> str:
    """The text whose hash is the advisory lock key of ``name``."""
    return f"langmem-ext workspace lock\x1f{name}"


class _ThreadHolds:
    """What one thread holds of a :class:`PgWorkspaceLock`: the whole workspace or
    scopes (with how deep each is nested), on one pooled connection."""

    def __init__(self) -> None:
        self.whole = 0
        self.scopes: dict[str, int] = {}
        self.conn: tuple[Any, Any] | None = None


class PgWorkspaceLock(HeldLock):
    """A re-entrant lock across threads and processes for one workspace, with a
    lock per scope for the writes of one scope (:meth:`hold_scope`).

    Args:
        db: The engine's connections.
        name: The workspace (equal names exclude each other).
        timeout: Seconds to wait before :class:`WorkspaceLockTimeout`.
    """

    def __init__(self, db: PgConnections, name: str, timeout: float = 30.0) -> None:
        self.name = name
        super().__init__(timeout)
        self._db = db
        self._cond = threading.Condition()
        self._whole_owner: int | None = None
        self._scope_owners: dict[str, int] = {}
        self._local = threading.local()

    def _shown(self) -> str:
        return repr(self.name)

    def _mine(self) -> _ThreadHolds:
        holds: _ThreadHolds | None = getattr(self._local, "holds", None)
        if holds is None:
            holds = self._local.holds = _ThreadHolds()
        return holds

    def _held(
        self, timeout: float, quiet: bool = False
    ) -> contextlib.AbstractContextManager[str | None]:
        return self._holding(_WHOLE, timeout, quiet)

    def _held_scope(
        self, scope: str, timeout: float, quiet: bool = False
    ) -> contextlib.AbstractContextManager[str | None]:
        return self._holding(scope, timeout, quiet)

    def _free(self, scope: str | None) -> bool:
        """Whether no other thread of this process keeps ``scope`` (or the whole
        workspace, ``None``) from this thread. The caller holds the condition."""
        if self._whole_owner is not None:
            return False
        return not self._scope_owners if scope is _WHOLE else scope not in self._scope_owners

    @contextlib.contextmanager
    def _holding(self, scope: str | None, timeout: float, quiet: bool) -> Iterator[str | None]:
        mine = self._mine()
        if mine.whole or (scope is _WHOLE and mine.scopes) or (scope in mine.scopes):
            yield None  # nested in this thread's hold: part of it
            return
        deadline = time.monotonic() + max(timeout, 0.0)
        me = threading.get_ident()
        with self._cond:
            while not self._free(scope):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            taken = self._free(scope)
            if taken:
                if scope is _WHOLE:
                    self._whole_owner = me
                else:
                    self._scope_owners[scope] = me
        if not taken:
            if not quiet:  # a try_hold finding it busy is no news
                self._log_blockers(scope)
            yield "thread"
            return
        try:
            if not self._acquire(mine, scope, deadline - time.monotonic() if timeout > 0 else 0):
                yield "process"
                return
            try:
                yield None
            finally:
                self._release(mine, scope)
        finally:
            with self._cond:
                if scope is _WHOLE:
                    self._whole_owner = None
                else:
                    del self._scope_owners[scope]
                self._cond.notify_all()

    def _log_blockers(self, scope: str | None) -> None:
        """Log what the threads that kept ``scope`` from this one are doing (a hold
        over the lock's timeout is worth finding)."""
        with self._cond:
            if self._whole_owner is not None:
                owners = {self._whole_owner: "the whole workspace"}
            elif scope is _WHOLE:
                owners = {ident: f"scope {s!r}" for s, ident in self._scope_owners.items()}
            else:
                ident = self._scope_owners.get(scope)
                owners = {} if ident is None else {ident: f"scope {scope!r}"}
        frames = sys._current_frames()
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident, held in owners.items():
            frame = frames.get(ident)
            stack = "".join(traceback.format_stack(frame)) if frame is not None else "(gone)\n"
            logger.warning(
                "workspace lock %r: thread %s held %s past the timeout, at:\n%s",
                self.name,
                names.get(ident, ident),
                held,
                stack,
            )

    def _keys(self, scope: str | None) -> list[tuple[str, bool]]:
        """The server locks a hold takes, in order, as ``(key, shared)``."""
        whole = lock_key(self.name)
        if scope is _WHOLE:
            return [(whole, False)]
        return [(whole, True), (lock_key(f"{self.name}\x1f{scope}"), False)]

    def _acquire(self, mine: _ThreadHolds, scope: str | None, timeout: float) -> bool:
        import psycopg

        opened = mine.conn is None
        if mine.conn is None:
            cm = self._db.pool.connection(timeout=max(timeout, 1.0))
            mine.conn = (cm, cm.__enter__())
        conn = mine.conn[1]
        keys = self._keys(scope)[(0 if opened else 1) :]  # nested scope: shared key held
        taken: list[tuple[str, bool]] = []
        try:
            if timeout > 0:
                conn.execute(f"SET lock_timeout = {max(int(timeout * 1000), 1)}")
            try:
                for key, shared in keys:
                    kind = "_shared" if shared else ""
                    if timeout <= 0:
                        got = conn.execute(
                            f"SELECT pg_try_advisory_lock{kind}(hashtextextended(%s, 0))", (key,)
                        ).fetchone()[0]
                        if not got:
                            break
                    else:
                        try:
                            conn.execute(
                                f"SELECT pg_advisory_lock{kind}(hashtextextended(%s, 0))", (key,)
                            )
                        except psycopg.errors.LockNotAvailable:
                            break
                    taken.append((key, shared))
            finally:
                if timeout > 0:
                    conn.execute("SET lock_timeout = 0")
        except BaseException:
            self._unlock(conn, taken)
            if opened:
                self._close(mine)
            raise
        if len(taken) < len(keys):
            self._unlock(conn, taken)
            if opened:
                self._close(mine)
            return False
        if scope is _WHOLE:
            mine.whole += 1
        else:
            mine.scopes[scope] = 1
        return True

    def _release(self, mine: _ThreadHolds, scope: str | None) -> None:
        assert mine.conn is not None
        if scope is _WHOLE:
            mine.whole -= 1
            keys = self._keys(scope)
        else:
            del mine.scopes[scope]
            keys = self._keys(scope)[0 if not mine.scopes else 1 :]
        try:
            self._unlock(mine.conn[1], keys)
        finally:
            if not mine.whole and not mine.scopes:
                self._close(mine)

    @staticmethod
    def _unlock(conn: Any, keys: list[tuple[str, bool]]) -> None:
        for key, shared in reversed(keys):
            kind = "_shared" if shared else ""
            conn.execute(f"SELECT pg_advisory_unlock{kind}(hashtextextended(%s, 0))", (key,))

    @staticmethod
    def _close(mine: _ThreadHolds) -> None:
        if mine.conn is not None:
            cm, _conn = mine.conn
            mine.conn = None
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
            watch_client(conn)
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
            await awatch_client(conn)
            await conn.execute(_WAIT, (f"{int(self.timeout * 1000)}ms",))
            try:
                await conn.execute(_LOCK, (self._key(name),))
            except psycopg.errors.LockNotAvailable as exc:
                raise self._timeout(name, exc) from exc
            yield


__all__ = ["PgRunLocks", "PgWorkspaceLock", "lock_key"]

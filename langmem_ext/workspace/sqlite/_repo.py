"""Base of the SQLite repositories of the ledger."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langmem_ext.workspace.sql.base import columns
from langmem_ext.workspace.sqlite._sql import in_chunks


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction of an autocommit connection: ``BEGIN IMMEDIATE`` …
    ``COMMIT``, rolled back when the block raises. The caller holds the lock."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class SqliteRepo:
    """A repository's access to the ledger's one connection.

    Every statement holds the ledger's re-entrant lock, so a repository method
    called inside ``Ledger.transaction()`` (same thread) joins that transaction,
    and one called outside it commits on its own (autocommit).

    Args:
        conn: The ledger's connection (autocommit, ``check_same_thread=False``).
        lock: The ledger's lock.
    """

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self._conn = conn
        self._lock = lock

    def _ledger_version(self) -> tuple[int, int] | None:
        """A key that changes whenever the ledger does: a write of this connection, or
        a commit of any other (SQLite's ``data_version``); ``None`` inside a
        transaction (its rows may still roll back). A read kept under this key is
        current while the key is the same. The caller holds the lock."""
        if self._conn.in_transaction:
            return None
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        return int(version), self._conn.total_changes

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._conn.execute(sql, params).fetchall())

    def _all_in(
        self, sql: str, ids: Sequence[Any], params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` whose ``{marks}`` is an ``IN (...)`` list of ``ids`` (each
        once), run per chunk of ids; ``params`` are bound before the ids."""
        rows: list[tuple[Any, ...]] = []
        for chunk, marks in in_chunks(list(dict.fromkeys(ids))):
            rows += self._all(sql.format(marks=marks), (*params, *chunk))
        return rows

    def _one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        with self._lock:
            row = self._conn.execute(sql, params).fetchone()
        return tuple(row) if row is not None else None

    def _run(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._conn.execute(sql, params)

    def _changed(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a write; returns the rows it changed."""
        return int(self._run(sql, params).rowcount or 0)

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._lock:
            self._conn.executemany(sql, rows)

    @contextmanager
    def _atomic(self) -> Iterator[None]:
        """Make several statements one write: they join the open transaction of
        ``Ledger.transaction()`` (this thread holds the lock), or run in one of their own."""
        with self._lock:
            if self._conn.in_transaction:
                yield
            else:
                with immediate(self._conn):
                    yield


__all__ = ["SqliteRepo", "columns", "immediate"]

"""The SQLite ledger (``state.db``): what Markdown cannot hold.

Pending items, per-entry state (importance, created / updated / last access,
source, verified), the edit history of entries, boosts, sessions, checkpoints,
session events and store items; the schema and its migrations are
:mod:`langmem_ext.workspace.sqlite.schema`, run when the ledger opens. The ledger is
backed up with the workspace; it is never "derived". WAL mode with
``synchronous=FULL`` makes a committed transaction durable when ``commit`` returns
(``transaction(durable=False)`` skips the wait, for the session hot log only).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from langmem_ext.workspace.records import (
    EntryState,
    MetaRepository,
    PendingRow,
    StoreItemsRepository,
)
from langmem_ext.workspace.sqlite._sql import in_chunks
from langmem_ext.workspace.sqlite.meta import SqliteMeta
from langmem_ext.workspace.sqlite.schema import migrate
from langmem_ext.workspace.sqlite.store_items import SqliteStoreItems


class Ledger:
    """Thread-safe access to ``state.db``.

    Args:
        path: The database file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            path, timeout=30, check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._lock = threading.RLock()
        migrate(self._conn)
        self.meta: MetaRepository = SqliteMeta(self._conn, self._lock)
        """Workspace settings (``meta``)."""
        self.store: StoreItemsRepository = SqliteStoreItems(self._conn, self._lock)
        """The LangGraph store's items and indexed texts (``store_items``, ``store_texts``)."""

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``).

        Args:
            durable: ``True`` (default): on disk when the block exits
                (``synchronous=FULL``). ``False``: the commit does not wait for the
                disk (``synchronous=NORMAL``): it survives a killed process at once,
                and an OS crash or power loss once the next durable commit or WAL
                checkpoint of the ledger has synced it. Only for rows that may be
                lost in an OS crash (the session hot log).
        """
        with self._lock:
            if not durable:
                self._conn.execute("PRAGMA synchronous=NORMAL")
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            finally:
                if not durable:
                    self._conn.execute("PRAGMA synchronous=FULL")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query."""
        with self._lock:
            return list(self._conn.execute(sql, params).fetchall())

    # -- entries -----------------------------------------------------------

    def entry(self, entry_id: str, *, include_deleted: bool = False) -> EntryState | None:
        """The state of one entry, or ``None``."""
        sql = "SELECT * FROM entries WHERE id = ?"
        if not include_deleted:
            sql += " AND deleted_at IS NULL"
        rows = self.query(sql, (entry_id,))
        return _entry(rows[0]) if rows else None

    def entries(self, ids: Iterable[str]) -> dict[str, EntryState]:
        """States of many live entries, by id."""
        out: dict[str, EntryState] = {}
        for chunk, marks in in_chunks(list(ids)):
            for row in self.query(
                f"SELECT * FROM entries WHERE deleted_at IS NULL AND id IN ({marks})", chunk
            ):
                st = _entry(row)
                out[st.id] = st
        return out

    def scope_entries(self, scope: str) -> list[EntryState]:
        """All live entries of a scope."""
        rows = self.query(
            "SELECT * FROM entries WHERE scope = ? AND deleted_at IS NULL ORDER BY created_at",
            (scope,),
        )
        return [_entry(r) for r in rows]

    def all_ids(self) -> set[str]:
        """Every id the ledger knows (live or deleted): never to be reused."""
        return {r[0] for r in self.query("SELECT id FROM entries")}

    def confirm_written_pending(self, scope: str | None = None) -> list[str]:
        """Mark confirmed the pending items whose entry is already written.

        A confirm killed between the Markdown write and the pending update leaves
        its item ``pending`` although the entry is stored (in the files, and in the
        ledger once they are synced). This settles such items, so a later reject
        cannot report ``rejected`` for a stored memory.

        Args:
            scope: Only this scope (all when ``None``).

        Returns:
            The pending ids marked confirmed.
        """
        sql = (
            "SELECT p.id FROM pending p JOIN entries e ON e.id = p.entry_id "
            "AND e.scope = p.scope AND e.deleted_at IS NULL WHERE p.status = 'pending'"
        )
        params: tuple[str, ...] = ()
        if scope is not None:
            sql += " AND p.scope = ?"
            params = (scope,)
        ids = [str(r[0]) for r in self.query(sql, params)]
        if ids:
            now = time.time()
            with self.transaction() as conn:
                conn.executemany(
                    "UPDATE pending SET status = 'confirmed', resolved_at = ? "
                    "WHERE id = ? AND status = 'pending'",
                    [(now, i) for i in ids],
                )
        return ids


def upsert_entry(conn: sqlite3.Connection, st: EntryState) -> None:
    """Insert or replace an entry's state inside a transaction."""
    conn.execute(
        "INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            st.id,
            st.scope,
            st.path,
            st.category,
            st.text_hash,
            st.importance,
            st.created_at,
            st.updated_at,
            st.last_access,
            st.access_count,
            st.source,
            int(st.verified),
            st.deleted_at,
        ),
    )


def record_history(
    conn: sqlite3.Connection,
    entry_id: str,
    scope: str,
    op: str,
    old_text: str | None,
    new_text: str | None,
    at: float,
) -> None:
    """Append one edit to an entry's history inside a transaction."""
    conn.execute(
        "INSERT INTO entry_history (entry_id, scope, op, old_text, new_text, at) "
        "VALUES (?,?,?,?,?,?)",
        (entry_id, scope, op, old_text, new_text, at),
    )


_Row = TypeVar("_Row", PendingRow, EntryState)
_FROM_SQLITE: dict[str, Callable[[Any], Any]] = {"float": float, "int": int, "bool": bool}
"""How a column comes back to its field's type; others (``str``, nullable) stay as read."""


def _from_row(cls: type[_Row], row: Sequence[Any]) -> _Row:
    """A row dataclass from a ``SELECT *`` row: the table's columns are in field order."""
    values = (
        _FROM_SQLITE.get(str(f.type), lambda v: v)(value)
        for f, value in zip(fields(cls), row, strict=False)
    )
    return cls(*values)


def pending_row(row: Sequence[Any]) -> PendingRow:
    """Build a :class:`PendingRow` from a ``SELECT *`` row."""
    return _from_row(PendingRow, row)


def _entry(row: Sequence[Any]) -> EntryState:
    return _from_row(EntryState, row)


__all__ = [
    "Ledger",
    "pending_row",
    "record_history",
    "upsert_entry",
]

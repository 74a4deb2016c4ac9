"""The SQLite ledger (``state.db``): what Markdown cannot hold.

Pending items, per-entry state (importance, created / updated / last access,
source, verified), the edit history of entries, boosts, sessions, checkpoints,
session events and store items; the schema and its migrations are
:mod:`langmem_ext.workspace.sqlite.schema`, run when the ledger opens. Each table
family has one repository, an attribute of :class:`Ledger`. The ledger is
backed up with the workspace; it is never "derived". WAL mode with
``synchronous=FULL`` makes a committed transaction durable when ``commit`` returns
(``transaction(durable=False)`` skips the wait, for the session hot log only).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langmem_ext.workspace.files import private_file
from langmem_ext.workspace.records import LedgerRepositories
from langmem_ext.workspace.sqlite._repo import immediate
from langmem_ext.workspace.sqlite.boosts import SqliteBoosts
from langmem_ext.workspace.sqlite.entries import SqliteEntries
from langmem_ext.workspace.sqlite.events import SqliteEvents
from langmem_ext.workspace.sqlite.fts import retokenize_ledger
from langmem_ext.workspace.sqlite.idempotency import SqliteIdempotencyKeys
from langmem_ext.workspace.sqlite.meta import SqliteMeta
from langmem_ext.workspace.sqlite.pending import SqlitePending
from langmem_ext.workspace.sqlite.profile import SqliteProfileHistory
from langmem_ext.workspace.sqlite.safety_links import SqliteSafetyLinks
from langmem_ext.workspace.sqlite.schema import migrate
from langmem_ext.workspace.sqlite.sessions import SqliteConversations, SqliteSessions
from langmem_ext.workspace.sqlite.store_items import SqliteStoreItems
from langmem_ext.workspace.sqlite.triples import SqliteTriples
from langmem_ext.workspace.sqlite.turn_jobs import SqliteTurnJobs


class Ledger(LedgerRepositories):
    """Thread-safe access to ``state.db``.

    Args:
        path: The database file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = sqlite3.connect(
            private_file(path), timeout=30, check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._lock = threading.RLock()
        migrate(self._conn)
        with self._lock:
            retokenize_ledger(self._conn)  # keyword tables written with another tokenizer
        self._attach(
            meta=SqliteMeta(self._conn, self._lock),
            entries=SqliteEntries(self._conn, self._lock),
            pending=SqlitePending(self._conn, self._lock),
            boosts=SqliteBoosts(self._conn, self._lock),
            sessions=SqliteSessions(self._conn, self._lock),
            conversations=SqliteConversations(self._conn, self._lock),
            events=SqliteEvents(self._conn, self._lock),
            store=SqliteStoreItems(self._conn, self._lock),
            profile=SqliteProfileHistory(self._conn, self._lock),
            triples=SqliteTriples(self._conn, self._lock),
            safety=SqliteSafetyLinks(self._conn, self._lock),
            turn_jobs=SqliteTurnJobs(self._conn, self._lock),
            idempotency=SqliteIdempotencyKeys(self._conn, self._lock),
        )

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``).

        Repository methods called inside the block (same thread) are part of it.

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
                with immediate(self._conn):
                    yield self._conn
            finally:
                if not durable:
                    self._conn.execute("PRAGMA synchronous=FULL")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query."""
        with self._lock:
            return list(self._conn.execute(sql, params).fetchall())


__all__ = ["Ledger"]

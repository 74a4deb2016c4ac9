"""The ledger on PostgreSQL: the tables of ``state.db`` in one database.

:class:`PgLedger` mirrors :class:`~langmem_ext.workspace.sqlite.ledger.Ledger`: the
same repositories (one per table family, the protocols of
:mod:`langmem_ext.workspace.records`), ``transaction()``, ``query()`` and
``close()``. Opening runs the missing migrations under an advisory lock, so
replicas sharing the database migrate it once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langmem_ext.language.text import TOKENIZER_VERSION, index_tokens
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.entries import PgEntries
from langmem_ext.workspace.postgres.events import POST_EVENTS, PgEvents
from langmem_ext.workspace.postgres.idempotency import PgIdempotencyKeys
from langmem_ext.workspace.postgres.pending import PgPending
from langmem_ext.workspace.postgres.schema import migrate
from langmem_ext.workspace.postgres.sessions import PgConversations, PgSessions
from langmem_ext.workspace.postgres.small import (
    PgBoosts,
    PgMeta,
    PgProfileHistory,
    PgSafetyLinks,
)
from langmem_ext.workspace.postgres.store_items import PgStoreItems
from langmem_ext.workspace.postgres.triples import PgTriples
from langmem_ext.workspace.postgres.turn_jobs import PgTurnJobs
from langmem_ext.workspace.records import LedgerRepositories
from langmem_ext.workspace.sqlite.fts import TOKENIZER_KEY


class PgLedger(LedgerRepositories):
    """Thread-safe access to the ledger's tables in a PostgreSQL database.

    Args:
        url: ``postgresql://…`` of the database, or the connections of another
            engine part to share (one pool for the ledger and the indexes).
        max_size: Connections the pool opens at most (when ``url`` is a URL).
        own: Whether :meth:`close` closes the connections (default: when this
            ledger opened them from a URL).

    Raises:
        InvalidInputError: ``url`` is not a PostgreSQL URL.
        LangmemError: The ``postgres`` extra is missing (``EngineUnavailableError``).
        SchemaVersionError: The database was migrated by a newer version.
    """

    def __init__(
        self, url: str | PgConnections, *, max_size: int = 8, own: bool | None = None
    ) -> None:
        self._owned = not isinstance(url, PgConnections) if own is None else own
        self._db = PgConnections(url, max_size=max_size) if isinstance(url, str) else url
        self.url = self._db.url
        try:
            with self._db.pool.connection() as conn:
                migrate(conn)
        except BaseException:
            if self._owned:  # nothing stays open when the ledger cannot be used
                self._db.close()
            raise
        self._attach(
            meta=PgMeta(self._db),
            entries=PgEntries(self._db),
            pending=PgPending(self._db),
            boosts=PgBoosts(self._db),
            sessions=PgSessions(self._db),
            conversations=PgConversations(self._db),
            events=PgEvents(self._db),
            store=PgStoreItems(self._db),
            profile=PgProfileHistory(self._db),
            triples=PgTriples(self._db),
            safety=PgSafetyLinks(self._db),
            turn_jobs=PgTurnJobs(self._db),
            idempotency=PgIdempotencyKeys(self._db),
        )
        self._retokenize()

    @property
    def connections(self) -> PgConnections:
        """The pool and per-thread transactions (shared with the other engine parts)."""
        return self._db

    def close(self) -> None:
        """Close the connections (when this ledger owns them)."""
        if self._owned:
            self._db.close()

    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[Any]:
        """A write transaction; repository calls of this thread inside the block join it.

        Args:
            durable: ``False``: the commit does not wait for the server's disk
                (``synchronous_commit = off``). Only for rows that may be lost in a
                server crash (the session hot log).

        Yields:
            The transaction's psycopg connection.
        """
        with self._db.transaction(durable=durable) as conn:
            yield conn

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query (psycopg placeholders: ``%s``)."""
        with self._db.connection() as conn:
            return [tuple(r) for r in conn.execute(sql, params).fetchall()]

    def _retokenize(self) -> int:
        """Write the keyword tokens of events and store texts again when another
        tokenizer wrote them (a no-op once ``meta`` names the current one)."""
        if self.meta.get(TOKENIZER_KEY) == TOKENIZER_VERSION:
            return 0
        with self.transaction() as c:
            c.execute("SELECT pg_advisory_xact_lock(hashtextextended('ledger retokenize', 0))")
            if self.meta.get(TOKENIZER_KEY) == TOKENIZER_VERSION:
                return 0
            events = c.execute(
                "SELECT e.id, e.text FROM session_events e JOIN session_events_fts f ON f.id = e.id"
            ).fetchall()
            with c.cursor() as cur:
                cur.executemany(
                    "UPDATE session_events_fts SET tokens = %s WHERE id = %s",
                    [(list(dict.fromkeys(index_tokens(t))), i) for i, t in events],
                )
                texts = c.execute("SELECT item_id, path, text FROM store_texts").fetchall()
                cur.executemany(
                    "UPDATE store_texts SET tokens = %s WHERE item_id = %s AND path = %s",
                    [(" ".join(index_tokens(t)), i, p) for i, p, t in texts],
                )
            c.execute("DELETE FROM session_event_terms")
            c.execute(POST_EVENTS + " GROUP BY t, e.scope, f.id")
            c.execute("DELETE FROM store_fts")
            c.execute(
                "INSERT INTO store_fts (item_id, tokens) SELECT item_id, "
                "array_remove(string_to_array(string_agg(tokens, ' '), ' '), '') "
                "FROM store_texts GROUP BY item_id"
            )
            self.meta.set(TOKENIZER_KEY, TOKENIZER_VERSION)
        return len(events) + len(texts)


__all__ = ["PgLedger"]

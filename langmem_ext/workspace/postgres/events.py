"""Repository of the session hot log on PostgreSQL: ``session_events`` and its keyword
tables ``session_events_fts`` (each event's distinct tokens) and
``session_event_terms`` (their postings: term, scope -> count, length), BM25 as FTS5
ranks, summed over the postings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langmem_ext.workspace.postgres._base import PgConnections, PgRepo
from langmem_ext.workspace.postgres._fts import K1, B, TableStats
from langmem_ext.workspace.records import EventFilter, EventMatch, EventRow, NewEventRow
from langmem_ext.workspace.sql.base import POSTGRES
from langmem_ext.workspace.sql.events import SharedEventReads
from langmem_ext.workspace.sqlite._repo import columns

_COLS = columns(EventRow, alias="e")


def _where(f: EventFilter) -> tuple[str, dict[str, Any]]:
    """The ``WHERE`` conditions of a filter on ``session_events e`` (named parameters)."""
    sql = "e.scope = %(scope)s AND e.at >= %(since)s"
    params: dict[str, Any] = {"scope": f.scope, "since": f.since}
    for column, op, value in (("at", "<", f.until), ("thread_id", "=", f.thread_id),
                              ("role", "=", f.role)):  # fmt: skip
        if value is not None:
            sql += f" AND e.{column} {op} %(w_{column})s"
            params[f"w_{column}"] = value
    return sql, params


_NEWEST = " ORDER BY e.at DESC, e.id DESC"

POST_EVENTS = (
    "INSERT INTO session_event_terms (term, scope, id, tf, dl) SELECT t, e.scope, f.id, "
    "count(*), cardinality(f.tokens) FROM session_events_fts f "
    "JOIN session_events e ON e.id = f.id, unnest(f.tokens) AS t"
)
"""Write the postings of events from their tokens (add a ``WHERE`` and the ``GROUP BY
t, e.scope, f.id``)."""


class PgEvents(PgRepo, SharedEventReads):
    """:class:`~langmem_ext.workspace.records.EventRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.events.SqliteEvents`).

    Args:
        db: The ledger's connections.
    """

    dialect = POSTGRES

    def __init__(self, db: PgConnections) -> None:
        super().__init__(db)
        self._stats = TableStats("session_events_fts", postings="session_event_terms")

    def add(self, events: Sequence[NewEventRow]) -> list[int]:
        ids: list[int] = []
        with self._atomic() as conn:
            for ev in events:
                row = conn.execute(
                    "INSERT INTO session_events (scope, thread_id, role, text, at, path, line) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                    (ev.scope, ev.thread_id, ev.role, ev.text, ev.at, ev.path, ev.line),
                ).fetchone()
                ids.append(int(row[0]))
            self.index([(i, ev.tokens) for i, ev in zip(ids, events, strict=True)])
        return ids

    def purge(self, before: float) -> int:
        with self._atomic():
            for table in ("session_event_terms", "session_events_fts"):
                self._run(
                    f"DELETE FROM {table} WHERE id IN "
                    "(SELECT id FROM session_events WHERE at < %s)",
                    (before,),
                )
            gone = self._run("DELETE FROM session_events WHERE at < %s", (before,))
        self._stats.invalidate()
        return gone

    def unindexed(self, limit: int) -> list[tuple[int, str]]:
        rows = self._all(
            "SELECT id, text FROM session_events WHERE id > "
            "(SELECT coalesce(max(id), 0) FROM session_events_fts) ORDER BY id LIMIT %s",
            (int(limit),),
        )
        return [(int(i), str(t)) for i, t in rows]

    def index(self, tokens: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        """Store the keyword tokens of events, by id (and their postings)."""
        ids = [int(i) for i, _toks in tokens]
        if not ids:
            return
        with self._atomic() as conn:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO session_events_fts (id, tokens) VALUES (%s, %s) "
                    "ON CONFLICT (id) DO UPDATE SET tokens = excluded.tokens",
                    [(i, [t for t in toks if t]) for i, toks in tokens],
                )
            conn.execute("DELETE FROM session_event_terms WHERE id = ANY(%s)", (ids,))
            conn.execute(POST_EVENTS + " WHERE f.id = ANY(%s) GROUP BY t, e.scope, f.id", (ids,))
        self._stats.invalidate()

    def recent(self, where: EventFilter, limit: int | None = None) -> list[EventRow]:
        cond, params = _where(where)
        sql = f"SELECT {_COLS} FROM session_events e WHERE {cond}{_NEWEST}"
        if limit is not None:
            sql += " LIMIT %(limit)s"
            params["limit"] = int(limit)
        return [EventRow(*r) for r in self._all(sql, params)]

    def matching(self, where: EventFilter, tokens: Sequence[str], limit: int) -> list[EventMatch]:
        if not tokens:
            return []
        cond, params = _where(where)
        with self._db.connection() as conn:
            params.update(self._stats.query_params(conn, tokens))
            params["limit"] = int(limit)
            rows = conn.execute(
                f"SELECT {_COLS}, f.tokens, t.s FROM (SELECT p.id, sum(q.idf * p.tf * {K1 + 1} "
                f"/ (p.tf + {K1} * ({1 - B} + {B} * p.dl / %(avgdl)s::float8))) AS s "
                "FROM unnest(%(terms)s::text[], %(idfs)s::float8[]) AS q(term, idf) "
                "JOIN session_event_terms p ON p.term = q.term AND p.scope = %(scope)s "
                "GROUP BY p.id) t JOIN session_events e ON e.id = t.id "
                f"JOIN session_events_fts f ON f.id = t.id WHERE {cond} "
                "ORDER BY t.s DESC, e.at DESC, e.id DESC LIMIT %(limit)s",
                params,
            ).fetchall()
        return [EventMatch(EventRow(*r[:-2]), frozenset(r[-2]), float(r[-1])) for r in rows]

    def many(self, where: EventFilter, ids: Sequence[int]) -> dict[int, EventRow]:
        cond, params = _where(where)
        params["ids"] = [int(i) for i in ids]
        rows = self._all(
            f"SELECT {_COLS} FROM session_events e WHERE {cond} AND e.id = ANY(%(ids)s)", params
        )
        return {int(r[-1]): EventRow(*r) for r in rows}

    def bm25_full(self, tokens: Sequence[str]) -> float:
        """The BM25 score of an event of average length holding each of ``tokens``
        once (the sum of their IDFs, as FTS5 computes them)."""
        with self._db.connection() as conn:
            return self._stats.idf_sum(conn, tokens)


__all__ = ["POST_EVENTS", "PgEvents"]

"""Repository of the session hot log: ``session_events`` and its FTS5 table.

``session_events_fts`` holds each event's distinct keyword tokens, space-separated,
under the event's id. Its ``ascii`` tokenizer splits on the spaces only (the tokens
hold no ASCII punctuation, and non-ASCII characters are token characters), so each
token — a stemmed word, a CJK character or bigram — is one FTS term.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from langmem_ext.workspace.records import EventFilter, EventMatch, EventRow, NewEventRow
from langmem_ext.workspace.sql.base import SQLITE
from langmem_ext.workspace.sql.events import SharedEventReads
from langmem_ext.workspace.sqlite._repo import SqliteRepo, columns
from langmem_ext.workspace.sqlite._sql import in_chunks

_COLS = columns(EventRow, alias="e")


def match_any(tokens: Sequence[str]) -> str:
    """An FTS5 query matching any of ``tokens`` (each a quoted term).

    Example:
        >>> match_any(["tea", 'a"b'])
        '"tea" OR "a""b"'
    """
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


def _where(f: EventFilter) -> tuple[str, list[Any]]:
    """The ``WHERE`` conditions of a filter on ``session_events e``."""
    sql = "e.scope = ? AND e.at >= ?"
    params: list[Any] = [f.scope, f.since]
    if f.until is not None:
        sql += " AND e.at < ?"
        params.append(f.until)
    if f.thread_id is not None:
        sql += " AND e.thread_id = ?"
        params.append(f.thread_id)
    if f.role is not None:
        sql += " AND e.role = ?"
        params.append(f.role)
    return sql, params


_NEWEST = " ORDER BY e.at DESC, e.id DESC"


class SqliteEvents(SqliteRepo, SharedEventReads):
    """:class:`~langmem_ext.workspace.records.EventRepository` on SQLite."""

    dialect = SQLITE

    def add(self, events: Sequence[NewEventRow]) -> list[int]:
        ids: list[int] = []
        with self._lock:
            for ev in events:
                cur = self._run(
                    "INSERT INTO session_events (scope, thread_id, role, text, at, path, line)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (ev.scope, ev.thread_id, ev.role, ev.text, ev.at, ev.path, ev.line),
                )
                ids.append(int(cur.lastrowid or 0))
            self.index([(i, ev.tokens) for i, ev in zip(ids, events, strict=True)])
        return ids

    def purge(self, before: float) -> int:
        with self._lock:
            self._run(
                "DELETE FROM session_events_fts WHERE rowid IN "
                "(SELECT id FROM session_events WHERE at < ?)",
                (before,),
            )
            cur = self._run("DELETE FROM session_events WHERE at < ?", (before,))
            return int(cur.rowcount or 0)

    def unindexed(self, limit: int) -> list[tuple[int, str]]:
        rows = self._all(
            "SELECT id, text FROM session_events WHERE id > "
            "(SELECT coalesce(max(rowid), 0) FROM session_events_fts) ORDER BY id LIMIT ?",
            (limit,),
        )
        return [(int(i), str(t)) for i, t in rows]

    def index(self, tokens: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        """Store the keyword tokens of events, by id."""
        self._run_many(
            "INSERT INTO session_events_fts (rowid, tokens) VALUES (?, ?)",
            [(i, " ".join(toks)) for i, toks in tokens],
        )

    def recent(self, where: EventFilter, limit: int | None = None) -> list[EventRow]:
        cond, params = _where(where)
        sql = f"SELECT {_COLS} FROM session_events e WHERE {cond}{_NEWEST}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [EventRow(*r) for r in self._all(sql, params)]

    def matching(self, where: EventFilter, tokens: Sequence[str], limit: int) -> list[EventMatch]:
        if not tokens:
            return []
        cond, params = _where(where)
        # The token index drives the lookup (CROSS JOIN fixes the loop order): one
        # rowid probe per matching event. ``rank`` is FTS5's bm25(), smaller is better.
        rows = self._all(
            f"SELECT {_COLS}, f.tokens, f.rank FROM session_events_fts f "
            f"CROSS JOIN session_events e ON e.id = f.rowid WHERE {cond} "
            "AND session_events_fts MATCH ? ORDER BY f.rank, e.at DESC, e.id DESC LIMIT ?",
            [*params, match_any(tokens), int(limit)],
        )
        # Each row: the event's columns, then its tokens and its rank.
        return [
            EventMatch(EventRow(*r[:-2]), frozenset(str(r[-2]).split()), -float(r[-1]))
            for r in rows
        ]

    def many(self, where: EventFilter, ids: Sequence[int]) -> dict[int, EventRow]:
        cond, params = _where(where)
        rows = self._all_in(
            f"SELECT {_COLS} FROM session_events e WHERE {cond} AND e.id IN ({{marks}})",
            ids,
            params,
        )
        return {int(r[-1]): EventRow(*r) for r in rows}

    def bm25_full(self, tokens: Sequence[str]) -> float:
        """The BM25 score of an event of average length holding each of ``tokens``
        once (the sum of their IDFs): what a match of the whole query scores.

        IDFs as FTS5 computes them, ``log((N - n + 0.5) / (n + 0.5))`` (at least 1e-6),
        with ``N`` events and ``n`` holding the token; statistics are global, like FTS5's.
        """
        terms = list(dict.fromkeys(tokens))
        if not terms:
            return 0.0
        df: dict[str, int] = {}
        with self._lock:
            self._run(  # document frequencies (temp: not in the file)
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.session_events_vocab "
                "USING fts5vocab(main, session_events_fts, row)"
            )
            row = self._one("SELECT count(*) FROM session_events_fts")
            for chunk, marks in in_chunks(terms):
                sql = f"SELECT term, doc FROM temp.session_events_vocab WHERE term IN ({marks})"
                df.update((str(t), int(n)) for t, n in self._all(sql, chunk))
        n_docs = int(row[0]) if row else 0
        return sum(
            max(1e-6, math.log(max(1e-12, (n_docs - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))))
            for t in terms
        )


__all__ = ["SqliteEvents", "match_any"]

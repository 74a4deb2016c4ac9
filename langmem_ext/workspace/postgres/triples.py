"""Repository of the knowledge graph's tables on PostgreSQL: ``triples``,
``triple_support`` and ``triple_marks``.

As on SQLite (:mod:`~langmem_ext.workspace.sqlite.triples`), validity is never
stored: reads join ``entries``, which this repository never writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.records import ExtractedEntry, NewTriple, TripleRow, triple_id

_TRIPLE_COLS = (
    "t.id, t.scope, t.subject_key, t.subject, t.predicate, t.object_key, t.object, "
    "t.negated, t.frequency, t.condition, t.created_at"
)
_ALIVE = "e.id = s.entry_id AND e.scope = s.scope AND e.deleted_at IS NULL"
_GONE = "NOT EXISTS (SELECT 1 FROM entries e WHERE e.id = entry_id AND e.deleted_at IS NULL)"
_UNEXTRACTED = (
    "FROM entries e LEFT JOIN triple_marks m ON m.entry_id = e.id "
    "WHERE e.scope = %s AND e.deleted_at IS NULL "
    "AND (m.entry_id IS NULL OR m.text_hash != e.text_hash)"
)


def _live_at(as_of: float | None, include_closed: bool) -> tuple[str, tuple[Any, ...]]:
    """The condition on ``e`` (a supporting entry) and its parameters."""
    if as_of is None:
        return ("", ()) if include_closed else (" AND e.valid_to IS NULL", ())
    if include_closed:
        return " AND e.created_at <= %s", (as_of,)
    return " AND e.created_at <= %s AND (e.valid_to IS NULL OR e.valid_to > %s)", (as_of, as_of)


class PgTriples(PgRepo):
    """:class:`~langmem_ext.workspace.records.TripleRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.triples.SqliteTriples`)."""

    def unextracted(self, scope: str, limit: int) -> list[tuple[str, str]]:
        """Live entries of ``scope`` not extracted from their current text, oldest first."""
        rows = self._all(
            f"SELECT e.id, e.text_hash {_UNEXTRACTED} ORDER BY e.created_at, e.rowid LIMIT %s",
            (scope, int(limit)),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def unextracted_of(self, scope: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        """The entries of ``ids`` that :meth:`unextracted` would return, oldest first."""
        rows = self._all(
            f"SELECT e.created_at, e.id, e.text_hash {_UNEXTRACTED} AND e.id = ANY(%s)",
            (scope, list(dict.fromkeys(ids))),
        )
        return [(str(i), str(h)) for _at, i, h in sorted(rows)]

    def record(
        self, scope: str, extracted: Sequence[ExtractedEntry], *, extractor: str, at: float
    ) -> int:
        """Replace each entry's support by its triples and mark it (one transaction)."""
        new = 0
        with self._atomic():
            for item in extracted:
                self._run("DELETE FROM triple_support WHERE entry_id = %s", (item.entry_id,))
                for t in item.triples:
                    tid = triple_id(scope, t)
                    new += self._run(
                        "INSERT INTO triples VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                        "ON CONFLICT DO NOTHING",
                        (tid, scope, t.subject_key, t.subject, t.predicate, t.object_key,
                         t.object, int(t.negated), t.frequency, t.condition, at),
                    )  # fmt: skip
                    self._run(
                        "INSERT INTO triple_support VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                        (tid, item.entry_id, scope),
                    )
                self._run(
                    "INSERT INTO triple_marks VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (entry_id) DO UPDATE SET scope = excluded.scope, "
                    "text_hash = excluded.text_hash, extractor = excluded.extractor, "
                    "at = excluded.at",
                    (item.entry_id, scope, item.text_hash, extractor, at),
                )
        return new

    def live(
        self, scope: str, keys: Sequence[str], as_of: float | None, closed: bool, cap: int
    ) -> list[TripleRow]:
        """Triples touching ``keys`` that count at ``as_of`` (at most ``cap`` a key)."""
        cond, params = _live_at(as_of, closed)
        ids: dict[str, None] = {}
        for key in dict.fromkeys(keys):
            for column in ("subject_key", "object_key"):
                rows = self._all(
                    f"SELECT t.id FROM triples t WHERE t.scope = %s AND t.{column} = %s "
                    "AND EXISTS (SELECT 1 FROM triple_support s JOIN entries e ON "
                    f"{_ALIVE} WHERE s.triple_id = t.id{cond}) ORDER BY t.created_at, t.id "
                    "LIMIT %s",
                    (scope, key, *params, int(cap)),
                )
                ids.update((str(r[0]), None) for r in rows)
        return self._rows(list(ids), cond, params)

    def _rows(self, ids: list[str], cond: str, params: tuple[Any, ...]) -> list[TripleRow]:
        found: dict[str, list[Any]] = {}
        if ids:
            for r in self._all(
                f"SELECT {_TRIPLE_COLS}, e.id, e.created_at, e.valid_to FROM triples t "
                f"JOIN triple_support s ON s.triple_id = t.id JOIN entries e ON {_ALIVE} "
                f"WHERE t.id = ANY(%s){cond}",
                (ids, *params),
            ):
                found.setdefault(str(r[0]), [r[:11], []])[1].append(
                    (str(r[11]), float(r[12]), r[13])
                )
        out: list[TripleRow] = []
        for tid in ids:
            if tid not in found:
                continue
            head, support = found[tid]
            # current first, then the latest closed; newest first within each
            support.sort(key=lambda s: (s[2] is not None, -(s[2] or 0.0), -s[1]))
            closes = [s[2] for s in support]
            valid_to = None if any(v is None for v in closes) else max(closes)
            h = head  # the columns of _TRIPLE_COLS, in NewTriple's field order
            said = NewTriple(h[2], h[3], h[4], h[8], h[5], h[6], bool(h[7]), h[9])
            out.append(
                TripleRow(
                    str(head[0]), str(head[1]), said, float(head[10]), tuple(support), valid_to
                )
            )
        return out

    def degrees(self, scope: str) -> dict[str, int]:
        """Entity key -> number of current triples it is part of."""
        rows = self._all(
            "WITH live AS (SELECT t.subject_key AS s, t.object_key AS o FROM triples t "
            "WHERE t.scope = %s AND EXISTS (SELECT 1 FROM triple_support s JOIN entries e ON "
            f"{_ALIVE} WHERE s.triple_id = t.id AND e.valid_to IS NULL)) "
            "SELECT k, count(*) FROM (SELECT s AS k FROM live UNION ALL "
            "SELECT o FROM live WHERE o != s) x GROUP BY k",
            (scope,),
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def prune(self, scope: str | None = None) -> int:
        """Delete what deleted entries left behind; returns how many triples went."""
        where, params = ("scope = %s AND ", (scope,)) if scope is not None else ("", ())
        with self._atomic():
            self._run(f"DELETE FROM triple_support WHERE {where}{_GONE}", params)
            self._run(f"DELETE FROM triple_marks WHERE {where}{_GONE}", params)
            return self._run(
                f"DELETE FROM triples WHERE {where}NOT EXISTS "
                "(SELECT 1 FROM triple_support s WHERE s.triple_id = triples.id)",
                params,
            )

    def prune_entries(self, entry_ids: Sequence[str], triple_ids: Sequence[str]) -> int:
        """What :meth:`prune` would delete of these entries only (see the SQLite twin)."""
        with self._atomic():
            for table in ("triple_support", "triple_marks"):
                self._run(
                    f"DELETE FROM {table} WHERE entry_id = ANY(%s) AND {_GONE}",
                    (list(dict.fromkeys(entry_ids)),),
                )
            return self._run(
                "DELETE FROM triples WHERE id = ANY(%s) AND NOT EXISTS "
                "(SELECT 1 FROM triple_support s WHERE s.triple_id = triples.id)",
                (list(dict.fromkeys(triple_ids)),),
            )

    def supported_by(self, entry_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(triple id, subject key, object key)`` of the triples these entries support."""
        rows = self._all(
            "SELECT DISTINCT t.id, t.subject_key, t.object_key FROM triple_support s "
            "JOIN triples t ON t.id = s.triple_id WHERE s.entry_id = ANY(%s)",
            (list(dict.fromkeys(entry_ids)),),
        )
        return [(str(t), str(s), str(o)) for t, s, o in rows]

    def clear(self, scope: str | None = None) -> int:
        """Delete every triple row of ``scope`` (all when ``None``)."""
        where, params = (" WHERE scope = %s", (scope,)) if scope is not None else ("", ())
        with self._atomic():
            self._run(f"DELETE FROM triple_support{where}", params)
            self._run(f"DELETE FROM triple_marks{where}", params)
            return self._run(f"DELETE FROM triples{where}", params)

    def current(self, scope: str) -> list[TripleRow]:
        """Every triple of ``scope`` with a current supporting entry, with those entries."""
        cond = " AND e.valid_to IS NULL"
        rows = self._all(
            f"SELECT DISTINCT s.triple_id FROM triple_support s JOIN entries e ON {_ALIVE} "
            f"WHERE s.scope = %s{cond} ORDER BY 1",
            (scope,),
        )
        return self._rows([str(r[0]) for r in rows], cond, ())

    def count(self, scope: str | None = None) -> int:
        """Stored triples of ``scope`` (all when ``None``)."""
        where, params = (" WHERE scope = %s", (scope,)) if scope is not None else ("", ())
        row = self._one(f"SELECT count(*) FROM triples{where}", params)
        return int(row[0]) if row else 0


__all__ = ["PgTriples"]

"""The knowledge graph's repository in either dialect: ``triples``,
``triple_support`` and ``triple_marks``.

Validity is never stored: a triple is live at time ``t`` while at least one of its
supporting entries is live at ``t`` (``deleted_at IS NULL``, ``created_at <= t``,
``valid_to IS NULL OR valid_to > t``). The read queries decide it by joining
``entries``, so every path that deletes or supersedes a memory (``Memory.delete``,
hand edits found by sync, decay, the reviewer, ``Memory.update``) withdraws its
support at once, with no hook. This repository reads ``entries`` in those joins and
never writes it. :meth:`SharedTriples.prune` removes the rows that can no longer
count (support of deleted entries, triples left without support).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langmem_ext.workspace.records import ExtractedEntry, NewTriple, TripleRow, triple_id
from langmem_ext.workspace.sql.base import SharedRepo

_TRIPLE_COLS = (
    "t.id, t.scope, t.subject_key, t.subject, t.predicate, t.object_key, t.object, "
    "t.negated, t.frequency, t.condition, t.created_at"
)
_ALIVE = "e.id = s.entry_id AND e.scope = s.scope AND e.deleted_at IS NULL"
_GONE = "NOT EXISTS (SELECT 1 FROM entries e WHERE e.id = entry_id AND e.deleted_at IS NULL)"
"""The row's ``entry_id`` names no live entry (deleted, or never written)."""
_UNSUPPORTED = "NOT EXISTS (SELECT 1 FROM triple_support s WHERE s.triple_id = triples.id)"
"""The triple has no support left."""


def _unextracted(scope_column: str) -> str:
    """Live entries of a scope (the parameter) not extracted from their current text."""
    return (
        "FROM entries e LEFT JOIN triple_marks m ON m.entry_id = e.id "
        f"WHERE {scope_column} = ? AND e.deleted_at IS NULL "
        "AND (m.entry_id IS NULL OR m.text_hash != e.text_hash)"
    )


def _live_at(as_of: float | None, include_closed: bool) -> tuple[str, tuple[Any, ...]]:
    """The condition on ``e`` (a supporting entry) and its parameters."""
    if as_of is None:
        return ("", ()) if include_closed else (" AND e.valid_to IS NULL", ())
    if include_closed:
        return " AND e.created_at <= ?", (as_of,)
    return " AND e.created_at <= ? AND (e.valid_to IS NULL OR e.valid_to > ?)", (as_of, as_of)


def _scoped(scope: str | None, joined: str) -> tuple[str, tuple[Any, ...]]:
    """The condition on a table's ``scope`` (nothing when ``None``), then ``joined``."""
    return (f"scope = ?{joined}", (scope,)) if scope is not None else ("", ())


class SharedTriples(SharedRepo):
    """:class:`~langmem_ext.workspace.records.TripleRepository` in either dialect."""

    def unextracted(self, scope: str, limit: int) -> list[tuple[str, str]]:
        rows = self._all(
            self.dialect.sql(
                f"SELECT e.id, e.text_hash {_unextracted('e.scope')} "
                "ORDER BY e.created_at, e.rowid LIMIT ?"
            ),
            (scope, int(limit)),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def unextracted_of(self, scope: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        rows = self._all_of(
            "SELECT e.created_at, e.id, e.text_hash "
            f"{_unextracted(self.dialect.no_index('e.scope'))} AND {{in_ids}}",
            "e.id",
            ids,
            before=(scope,),
        )
        return [(str(i), str(h)) for _at, i, h in sorted(rows)]

    def record(
        self, scope: str, extracted: Sequence[ExtractedEntry], *, extractor: str, at: float
    ) -> int:
        sql = self.dialect.sql
        new = 0
        with self._atomic():
            for item in extracted:
                self._run(sql("DELETE FROM triple_support WHERE entry_id = ?"), (item.entry_id,))
                for t in item.triples:
                    tid = triple_id(scope, t)
                    new += self._changed(
                        sql("INSERT INTO triples VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                            "ON CONFLICT DO NOTHING"),
                        (tid, scope, t.subject_key, t.subject, t.predicate, t.object_key,
                         t.object, int(t.negated), t.frequency, t.condition, at),
                    )  # fmt: skip
                    self._run(
                        sql("INSERT INTO triple_support VALUES (?,?,?) ON CONFLICT DO NOTHING"),
                        (tid, item.entry_id, scope),
                    )
                self._run(
                    sql(
                        "INSERT INTO triple_marks VALUES (?,?,?,?,?) ON CONFLICT (entry_id) "
                        "DO UPDATE SET scope = excluded.scope, text_hash = excluded.text_hash, "
                        "extractor = excluded.extractor, at = excluded.at"
                    ),
                    (item.entry_id, scope, item.text_hash, extractor, at),
                )
        return new

    def live(
        self, scope: str, keys: Sequence[str], as_of: float | None, closed: bool, cap: int
    ) -> list[TripleRow]:
        cond, params = _live_at(as_of, closed)
        ids: dict[str, None] = {}
        for key in dict.fromkeys(keys):
            for column in ("subject_key", "object_key"):
                rows = self._all(
                    self.dialect.sql(
                        f"SELECT t.id FROM triples t WHERE t.scope = ? AND t.{column} = ? "
                        "AND EXISTS (SELECT 1 FROM triple_support s JOIN entries e ON "
                        f"{_ALIVE} WHERE s.triple_id = t.id{cond}) "
                        "ORDER BY t.created_at, t.id LIMIT ?"
                    ),
                    (scope, key, *params, int(cap)),
                )
                ids.update((str(r[0]), None) for r in rows)
        return self._rows(list(ids), cond, params)

    def _rows(self, ids: list[str], cond: str, params: tuple[Any, ...]) -> list[TripleRow]:
        found: dict[str, list[Any]] = {}
        for r in self._all_of(
            f"SELECT {_TRIPLE_COLS}, e.id, e.created_at, e.valid_to FROM triples t "
            f"JOIN triple_support s ON s.triple_id = t.id JOIN entries e ON {_ALIVE} "
            f"WHERE {{in_ids}}{cond}",
            "t.id",
            ids,
            after=params,
        ):
            found.setdefault(str(r[0]), [r[:11], []])[1].append((str(r[11]), float(r[12]), r[13]))
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
        rows = self._all(
            self.dialect.sql(
                "WITH live AS (SELECT t.subject_key AS s, t.object_key AS o FROM triples t "
                "WHERE t.scope = ? AND EXISTS (SELECT 1 FROM triple_support s JOIN entries e "
                f"ON {_ALIVE} WHERE s.triple_id = t.id AND e.valid_to IS NULL)) "
                "SELECT k, count(*) FROM (SELECT s AS k FROM live UNION ALL "
                "SELECT o FROM live WHERE o != s) x GROUP BY k"
            ),
            (scope,),
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def prune(self, scope: str | None = None) -> int:
        where, params = _scoped(scope, " AND ")
        sql = self.dialect.sql
        with self._atomic():
            self._run(sql(f"DELETE FROM triple_support WHERE {where}{_GONE}"), params)
            self._run(sql(f"DELETE FROM triple_marks WHERE {where}{_GONE}"), params)
            return self._changed(sql(f"DELETE FROM triples WHERE {where}{_UNSUPPORTED}"), params)

    def prune_entries(self, entry_ids: Sequence[str], triple_ids: Sequence[str]) -> int:
        """What :meth:`prune` would delete of these entries only: their support and
        marks when they are gone, then those of ``triple_ids`` (the triples they
        supported, read by :meth:`supported_by` before any extraction replaced that)
        left with no support. O(those entries), by the indexes on ``entry_id`` and the
        triple ids."""
        with self._atomic():
            for table in ("triple_support", "triple_marks"):
                self._changed_of(
                    f"DELETE FROM {table} WHERE {{in_ids}} AND {_GONE}", "entry_id", entry_ids
                )
            return self._changed_of(
                f"DELETE FROM triples WHERE {{in_ids}} AND {_UNSUPPORTED}", "id", triple_ids
            )

    def supported_by(self, entry_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        rows = self._all_of(
            "SELECT DISTINCT t.id, t.subject_key, t.object_key FROM triple_support s "
            "JOIN triples t ON t.id = s.triple_id WHERE {in_ids}",
            "s.entry_id",
            entry_ids,
        )
        return [(str(t), str(s), str(o)) for t, s, o in rows]

    def clear(self, scope: str | None = None) -> int:
        where, params = _scoped(scope, "")
        where = f" WHERE {where}" if where else ""
        sql = self.dialect.sql
        with self._atomic():
            self._run(sql(f"DELETE FROM triple_support{where}"), params)
            self._run(sql(f"DELETE FROM triple_marks{where}"), params)
            return self._changed(sql(f"DELETE FROM triples{where}"), params)

    def current(self, scope: str) -> list[TripleRow]:
        cond = " AND e.valid_to IS NULL"
        rows = self._all(
            self.dialect.sql(
                f"SELECT DISTINCT s.triple_id FROM triple_support s JOIN entries e ON {_ALIVE} "
                f"WHERE s.scope = ?{cond} ORDER BY 1"
            ),
            (scope,),
        )
        return self._rows([str(r[0]) for r in rows], cond, ())

    def count(self, scope: str | None = None) -> int:
        where, params = _scoped(scope, "")
        row = self._one(
            self.dialect.sql(f"SELECT count(*) FROM triples{' WHERE ' if where else ''}{where}"),
            params,
        )
        return int(row[0]) if row else 0


__all__ = ["SharedTriples"]

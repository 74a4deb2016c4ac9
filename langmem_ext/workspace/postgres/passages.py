"""Passages of the PostgreSQL keyword index: prose chunks and session events.

The rows and rules of :mod:`~langmem_ext.workspace.sqlite.passage_rows` (a prose
chunk keeps its row, time and vector while its anchor and headings stay; gone chunks
queue their vectors' deletion; events are here for their vectors only), in
PostgreSQL: a prose passage's keyword tokens are columns of its row, ranked with
FTS5's BM25 over the prose passages (:mod:`~langmem_ext.workspace.postgres._fts`).
:class:`PgPassages` holds the reads and vector writes; the doc table's ``apply``
runs :func:`write_prose` and its companions inside its transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.workspace.docs import FileStamp
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres._fts import TableStats, score_sql
from langmem_ext.workspace.sql import passages as shared
from langmem_ext.workspace.sql.base import POSTGRES
from langmem_ext.workspace.sql.passages import COLS, P_COLS, Passage, passage
from langmem_ext.workspace.sql.prose_rows import SELECT_PROSE_ROWS, prose_plan
from langmem_ext.workspace.sql.schema import PASSAGE_INDEXES, POSTGRES_TYPES, PROSE_FILES, passages
from langmem_ext.workspace.sqlite.passage_rows import ProseFile, partition

SCHEMA = (
    passages(
        POSTGRES_TYPES,
        "\n    tokens TEXT[] NOT NULL DEFAULT '{}',"
        "\n    tsv TSVECTOR GENERATED ALWAYS AS (array_to_tsvector(tokens)) STORED,",
    ),
    *PASSAGE_INDEXES,
    "CREATE INDEX IF NOT EXISTS passages_tsv ON passages USING gin(tsv) WHERE kind = 'prose'",
    PROSE_FILES,
)

_QUEUE = (
    "INSERT INTO vec_deletes VALUES (%s, %s) ON CONFLICT (id) DO UPDATE SET scope = excluded.scope"
)


def _tokens(text: str) -> list[str]:
    return [t for t in index_tokens(text) if t]


def write_prose(c: Any, pf: ProseFile) -> bool:
    """Make the prose passages of ``pf.path`` its chunks; inside a write.

    Returns:
        Whether a vector became stale (a chunk added, removed or re-headed).
    """
    rows = c.execute(POSTGRES.sql(SELECT_PROSE_ROWS), (pf.path,)).fetchall()
    plan = prose_plan(rows, pf.scope, pf.chunks)
    for ch, h in plan.added:
        c.execute(
            "INSERT INTO passages (kind, id, scope, path, line, end_line, category, heading,"
            " role, text, text_hash, created_at, tokens) "
            "VALUES ('prose', %s, %s, %s, %s, %s, %s, %s, NULL, %s, %s, %s, %s)",
            (ch.anchor, pf.scope, pf.path, ch.line, ch.end_line, ch.category, ch.heading,
             ch.text, h, pf.created_at, _tokens(ch.indexed_text)),
        )  # fmt: skip
        c.execute("DELETE FROM vec_deletes WHERE id = %s", (f"{pf.path}#^{ch.anchor}",))
    for ch, h, old in plan.moved:
        sets = "scope = %s, line = %s, end_line = %s, category = %s, heading = %s, text = %s, "
        sets += "text_hash = %s"
        params: list[Any] = [pf.scope, ch.line, ch.end_line, ch.category, ch.heading, ch.text, h]
        if plan.rewritten(h, old):
            sets += ", tokens = %s"
            params.append(_tokens(ch.indexed_text))
            if old.scope != pf.scope:
                c.execute(_QUEUE, (f"{pf.path}#^{ch.anchor}", partition("prose", old.scope)))
                sets += ", vec_hash = NULL"
        c.execute(f"UPDATE passages SET {sets} WHERE rowid = %s", (*params, old.rowid))
    for anchor, old in plan.gone.items():
        _delete_row(c, old.rowid, "prose", old.scope, f"{pf.path}#^{anchor}")
    c.execute(
        "INSERT INTO prose_files (path, scope, hash) VALUES (%s, %s, %s) ON CONFLICT (path) "
        "DO UPDATE SET scope = excluded.scope, hash = excluded.hash",
        (pf.path, pf.scope, pf.hash),
    )
    return plan.stale


def _delete_row(c: Any, rowid: int, kind: str, scope: str, vector_id: str) -> None:
    c.execute("DELETE FROM passages WHERE rowid = %s", (rowid,))
    c.execute(_QUEUE, (vector_id, partition(kind, scope)))


def drop_prose(c: Any, path: str) -> bool:
    """Remove the prose of a file that is gone; inside a write. Returns whether any was held."""
    rows = c.execute(
        "SELECT rowid, scope, id FROM passages WHERE kind = 'prose' AND path = %s", (path,)
    ).fetchall()
    for rowid, scope, pid in rows:
        _delete_row(c, int(rowid), "prose", str(scope), f"{path}#^{pid}")
    c.execute("DELETE FROM prose_files WHERE path = %s", (path,))
    return bool(rows)


def shift_prose(c: Any, path: str, after: int, count: int) -> None:
    """Move the prose of ``path`` below line ``after`` down ``count`` lines; inside a write."""
    c.execute(
        "UPDATE passages SET line = line + %s, end_line = end_line + %s "
        "WHERE kind = 'prose' AND path = %s AND line > %s",
        (count, count, path, after),
    )


def follow_stamp(c: Any, stamp: FileStamp) -> None:
    """A file's new stamp written by a change that left its prose as it was: the prose
    read before is the prose of the file now. Run before the stamp is stored."""
    c.execute(
        "UPDATE prose_files SET hash = %s WHERE path = %s AND hash = "
        "(SELECT hash FROM doc_files WHERE path = %s)",
        (stamp.hash, stamp.path, stamp.path),
    )


class PgPassages(shared.SharedPassageVectors):
    """The passages' reads, searches and vector bookkeeping (a part of the keyword index).

    Args:
        db: The engine's connections.
        exact_max_entries: The most passages of a kind a scope may have to be
            searched exactly (:meth:`passage_nearest`).
    """

    dialect = POSTGRES
    _replace_events = (
        "INSERT INTO passages (kind, id, scope, path, line, end_line, category, "
        "heading, role, text, text_hash, created_at, vec_model, vec_hash, vec) "
        "VALUES ('event', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (kind, path, id) DO UPDATE SET scope = excluded.scope, "
        "line = excluded.line, end_line = excluded.end_line, "
        "category = excluded.category, heading = excluded.heading, "
        "role = excluded.role, text = excluded.text, text_hash = excluded.text_hash, "
        "created_at = excluded.created_at, vec_model = excluded.vec_model, "
        "vec_hash = excluded.vec_hash, vec = excluded.vec"
    )

    def __init__(self, db: PgConnections, exact_max_entries: int) -> None:
        self._db = db
        self.exact_max_entries = exact_max_entries
        self._prose_stats = TableStats("passages", "kind = 'prose'")

    def _q(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with self._db.connection() as conn:
            return list(conn.execute(sql, params).fetchall())

    def prose_lagging(self, scope: str) -> list[str]:
        """Files of ``scope`` whose prose was not read from their indexed text (files
        sync could not read, stamped ``!…``, are left out)."""
        rows = self._q(
            "SELECT f.path FROM doc_files f LEFT JOIN prose_files p ON p.path = f.path "
            "WHERE f.scope = %s AND left(f.hash, 1) != '!' "
            "AND (p.hash IS NULL OR p.hash != f.hash) ORDER BY f.path",
            (scope,),
        )
        return [str(r[0]) for r in rows]

    def passage_count(self, kind: str, scope: str) -> int:
        """How many passages of a kind a scope has."""
        sql = "SELECT count(*) FROM passages WHERE kind = %s AND scope = %s"
        return int(self._q(sql, (kind, scope))[0][0])

    def has_passages(self, kind: str, scope: str) -> bool:
        """Whether a scope has any passage of a kind."""
        sql = "SELECT 1 FROM passages WHERE kind = %s AND scope = %s LIMIT 1"
        return bool(self._q(sql, (kind, scope)))

    def passages_of_path(self, kind: str, path: str) -> list[Passage]:
        """The passages of a kind in one file, in file order."""
        rows = self._q(
            f"SELECT {COLS} FROM passages WHERE kind = %s AND path = %s ORDER BY line, rowid",
            (kind, path),
        )
        return [passage(r) for r in rows]

    def passages_by_rowid(self, rowids: Sequence[int]) -> dict[int, Passage]:
        """Passages by row id (missing ones are absent)."""
        rows = self._q(
            f"SELECT rowid, {COLS} FROM passages WHERE rowid = ANY(%s)", ([int(r) for r in rowids],)
        )
        return {int(r[0]): passage(r[1:]) for r in rows}

    def passages_by_vector_id(self, kind: str, vector_ids: Sequence[str]) -> dict[str, Passage]:
        """Passages of a kind by their vector id ``path#^id`` (missing ones are absent)."""
        wanted = list(dict.fromkeys(vector_ids))
        if not wanted:
            return {}
        rows = self._q(
            f"SELECT {COLS} FROM passages WHERE kind = %s AND path || '#^' || id = ANY(%s)",
            (kind, wanted),
        )
        found = {f"{p.path}#^{p.id}": p for p in map(passage, rows)}
        return {v: found[v] for v in wanted if v in found}

    def _kept(
        self, kind: str, scope: str, model: str, within: shared.Within
    ) -> shared.KeptVectors | None:
        """Read in one query with their passages, ``within`` a condition of it."""
        if self.passage_count(kind, scope) > self.exact_max_entries:
            return None
        sql = (
            f"SELECT rowid, {COLS}, vec FROM passages WHERE kind = %s AND scope = %s "
            "AND vec_model = %s AND vec_hash = text_hash AND vec IS NOT NULL"
        )
        params: list[Any] = [kind, scope, model]
        for cond, value in (("created_at >= %s", within.since), ("created_at < %s", within.until),
                            ("role = %s", within.role)):  # fmt: skip
            if value is not None:
                sql += f" AND {cond}"
                params.append(value)
        rows = self._q(sql + " ORDER BY rowid", params)
        if not rows:
            return shared.NO_VECTORS
        matrix = shared.unit_rows([np.frombuffer(bytes(r[-1]), dtype="<f4") for r in rows])
        if matrix is None:
            return None
        return shared.KeptVectors(
            np.array([r[0] for r in rows], dtype=np.int64),
            matrix,
            {int(r[0]): passage(r[1:-1]) for r in rows},
        )

    def _write_passages(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            with self._db.transaction() as c, c.cursor() as cur:
                cur.executemany(sql, rows)

    def purge_event_passages(self, before: float) -> int:
        """Remove the event passages said before ``before`` (their vectors are queued
        for deletion). Returns how many were removed."""
        with self._db.transaction() as c:
            rows = c.execute(
                "DELETE FROM passages WHERE kind = 'event' AND created_at < %s "
                "RETURNING scope, path, id",
                (before,),
            ).fetchall()
            with c.cursor() as cur:
                cur.executemany(
                    _QUEUE, [(f"{path}#^{pid}", partition("event", s)) for s, path, pid in rows]
                )
        return len(rows)

    def prose_bm25(self, scope: str, query: str, limit: int) -> list[tuple[Passage, float]]:
        """BM25 keyword search over a scope's prose chunks (headings included), with
        FTS5's scores over every prose chunk's statistics.

        Returns:
            ``(passage, score)`` pairs, best first; scores are positive.
        """
        toks = query_tokens(query)
        if not toks:
            return []
        with self._db.connection() as conn:
            params = self._prose_stats.query_params(conn, toks)
            params.update(scope=scope, limit=int(limit))
            rows = conn.execute(
                f"SELECT {P_COLS}, {score_sql('p', params)} AS s FROM passages p "
                "WHERE p.kind = 'prose' AND p.scope = %(scope)s AND p.tsv @@ %(match)s::tsquery "
                "ORDER BY s DESC, p.rowid LIMIT %(limit)s",
                params,
            ).fetchall()
        return [(passage(r[:-1]), float(r[-1])) for r in rows]

    def prose_bm25_full(self, query: str) -> float:
        """What a prose chunk of average length holding every query token once scores."""
        toks = query_tokens(query)
        if not toks:
            return 0.0
        with self._db.connection() as conn:
            return self._prose_stats.idf_sum(conn, toks)


__all__ = [
    "SCHEMA",
    "PgPassages",
    "drop_prose",
    "follow_stamp",
    "shift_prose",
    "write_prose",
]

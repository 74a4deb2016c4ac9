"""The derived keyword index on PostgreSQL: the doc table with BM25 and substring search.

:class:`PgKeywordIndex` mirrors the doc side of
:class:`~langmem_ext.workspace.sqlite.keyword_index.KeywordIndex` (its
:class:`~langmem_ext.workspace.sqlite.doc_table.DocTable`): ``doc_rows`` mirrors
every live entry (read through the ``docs`` view, which adds each row's line from its
block of lines, :mod:`~langmem_ext.workspace.postgres.doc_blocks`), ``doc_files`` each
Markdown file's stamp, ``vec_deletes`` the outbox of vector deletions,
``kept_vectors`` a copy of each written vector, ``index_meta`` the index's own
settings. A doc's keyword tokens (:mod:`langmem_ext.language.text`) are a
column of its row (``tokens``) and its postings in ``doc_postings`` (one row per
token of a doc: its count and the doc's length, under a covering index on
``(term, scope)``), written in the same transaction. BM25 is FTS5's
(:mod:`~langmem_ext.workspace.postgres._fts`), summed over the postings of the
query's tokens: a search reads index entries, never the docs' token arrays (scoring
each matching row's array cost ~15 us a row, 70 ms for a common query at 10k).

Nothing is cached in memory across calls (other replicas write the same tables):
each read asks the database. Called inside a ledger transaction of the same
connections and thread, a write joins it, so the ledger and the index commit together.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.workspace.docs import (
    _D_COLS,
    _DOC_COLS,
    Doc,
    Entry,
    FileStamp,
    Previous,
    Vector,
    _doc,
    _doc_values,
    _entry,
    vector_blob,
)
from langmem_ext.workspace.postgres import doc_blocks
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres._fts import K1, B, TableStats
from langmem_ext.workspace.postgres.passages import SCHEMA as _PASSAGES_SCHEMA
from langmem_ext.workspace.postgres.passages import (
    PgPassages,
    drop_prose,
    follow_stamp,
    shift_prose,
    write_prose,
)
from langmem_ext.workspace.sections import ScopeSections
from langmem_ext.workspace.sqlite.fts import TOKENIZER_KEY, idf_sum
from langmem_ext.workspace.sqlite.keyword_index import COMMON_TOKEN_SHARE, GATE_MIN_DOCS
from langmem_ext.workspace.sqlite.passage_rows import ProseFile
from langmem_ext.workspace.vector_matrix import ScopeMatrix

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS doc_postings (
    term TEXT COLLATE "C" NOT NULL,
    scope TEXT COLLATE "C" NOT NULL,
    rowid BIGINT NOT NULL,
    tf INTEGER NOT NULL,
    dl INTEGER NOT NULL,
    PRIMARY KEY (term, scope, rowid) INCLUDE (tf, dl)
)""",
    "CREATE INDEX IF NOT EXISTS doc_postings_rowid ON doc_postings(rowid)",
    """CREATE TABLE IF NOT EXISTS doc_files (
    path TEXT PRIMARY KEY, scope TEXT NOT NULL, hash TEXT NOT NULL,
    mtime_ns BIGINT NOT NULL, size BIGINT NOT NULL
)""",
    "CREATE TABLE IF NOT EXISTS vec_deletes (id TEXT PRIMARY KEY, scope TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS kept_vectors (
    id TEXT NOT NULL, model TEXT NOT NULL, text_hash TEXT NOT NULL, vec BYTEA NOT NULL,
    PRIMARY KEY (id, model)
)""",
)
"""The index's tables (derived: they can be dropped and rebuilt from the ledger)."""
_KEEP_ALL = (
    "INSERT INTO kept_vectors SELECT u.i, %s, u.h, u.v "
    "FROM unnest(%s::text[], %s::text[], %s::bytea[]) AS u(i, h, v) "
    "ON CONFLICT (id, model) DO UPDATE SET text_hash = excluded.text_hash, vec = excluded.vec"
)

_SET_META = (
    "INSERT INTO index_meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
_KEEP = (
    "INSERT INTO kept_vectors VALUES (%s, %s, %s, %s) ON CONFLICT (id, model) DO UPDATE "
    "SET text_hash = excluded.text_hash, vec = excluded.vec"
)


def _tokens(text: str) -> list[str]:
    return [t for t in index_tokens(text) if t]


_POST = (
    "INSERT INTO doc_postings (term, scope, rowid, tf, dl) SELECT t, d.scope, d.rowid, "
    "count(*), cardinality(d.tokens) FROM doc_rows d, unnest(d.tokens) AS t "
    "WHERE d.rowid = ANY(%s) GROUP BY t, d.scope, d.rowid"
)
"""Write the postings of the docs of these rowids (from their tokens)."""
_UNPOST = "DELETE FROM doc_postings WHERE rowid = ANY(%s)"
_DOC_FIELDS = _DOC_COLS.split(", ")
_ROW_COLS = ", ".join(col for col in _DOC_FIELDS if col != "line")
"""The doc row's own columns of a :class:`Doc` (all but its line)."""
PREVIOUS_SPAN = 8
"""Lines above a doc searched first for the entry before it in its section."""
MATRIX_ENTRIES = 50_000
"""Rows of the exact-search matrices an index keeps in memory, over all scopes (the
least recently searched scope goes first)."""


class PgKeywordIndex(PgPassages):
    """The doc table (and its passages) with BM25 keyword search, in a PostgreSQL database.

    Args:
        db: The engine's connections.
        exact_max_entries: Scopes of at most this many entries are searched exactly
            over their kept vectors (:meth:`nearest`); 0 turns that off.
    """

    def __init__(self, db: PgConnections, *, exact_max_entries: int = 5_000) -> None:
        super().__init__(db, exact_max_entries)
        self.url = db.url
        self._stats = TableStats("doc_rows", postings="doc_postings")
        self._matrices: OrderedDict[tuple[str, str], tuple[str, ScopeMatrix | None, int]] = (
            OrderedDict()
        )
        self._matrix_lock = threading.Lock()
        with db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('keyword index', 0))")
            if not _schema_done(conn):
                doc_blocks.ensure_schema(conn)
                for statement in (*SCHEMA, *_PASSAGES_SCHEMA):
                    conn.execute(statement)
                conn.execute(_SET_META, (_SCHEMA_KEY, _SCHEMA_DIGEST))
            self._retokenize(conn)

    def close(self) -> None:
        """Nothing to close: the connections belong to the engine."""

    def _retokenize(self, conn: Any) -> int:
        """Write every doc's tokens again when another tokenizer wrote them."""
        from langmem_ext.language.text import TOKENIZER_VERSION

        row = conn.execute(
            "SELECT value FROM index_meta WHERE key = %s", (TOKENIZER_KEY,)
        ).fetchone()
        if row is not None and row[0] == TOKENIZER_VERSION:
            return 0
        docs = conn.execute("SELECT rowid, text FROM doc_rows").fetchall()
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE doc_rows SET tokens = %s WHERE rowid = %s",
                [(_tokens(t), r) for r, t in docs],
            )
        conn.execute("TRUNCATE doc_postings")
        conn.execute(_POST.replace("WHERE d.rowid = ANY(%s) ", ""))
        conn.execute(_SET_META, (TOKENIZER_KEY, TOKENIZER_VERSION))
        return len(docs)

    # -- meta & files ------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """Read a meta value."""
        rows = self._q("SELECT value FROM index_meta WHERE key = %s", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Write a meta value."""
        with self._db.connection() as conn:
            conn.execute(_SET_META, (key, value))

    def bump_generation(self) -> int:
        """Count one more write of the index; returns the new generation."""
        with self._db.transaction() as conn:
            return _bump_generation(conn)

    def file_stamps(self, scope: str | None = None) -> dict[str, FileStamp]:
        """Known files (of one scope, or all)."""
        sql = "SELECT path, scope, hash, mtime_ns, size FROM doc_files"
        rows = self._q(sql + " WHERE scope = %s", (scope,)) if scope else self._q(sql)
        return {r[0]: FileStamp(r[0], r[1], r[2], int(r[3]), int(r[4])) for r in rows}

    # -- docs --------------------------------------------------------------

    def docs_of_path(self, path: str) -> dict[str, Doc]:
        """Indexed docs of one file, by id."""
        rows = self._q(f"SELECT {_DOC_COLS} FROM docs WHERE path = %s", (path,))
        return {d.id: d for d in map(_doc, rows)}

    def lines_of_path(self, path: str) -> dict[str, int]:
        """``id -> line`` of one file's docs."""
        return {
            r[0]: int(r[1]) for r in self._q("SELECT id, line FROM docs WHERE path = %s", (path,))
        }

    def _sections_near(
        self, scope: str, places: Sequence[tuple[str, str, int]], span: int
    ) -> ScopeSections:
        """The section order of the scope's entries within ``span`` lines of each
        ``(path, category, line)``: contiguous pieces of the sections, read through
        the blocks of lines (:mod:`.doc_blocks`), so a search reads O(window) rows per anchor and
        not the whole scope (no copy is cached between searches: another replica may
        have written)."""
        return ScopeSections(self._rows_near(scope, places, span))

    def _rows_near(
        self, scope: str, places: Sequence[tuple[str, str, int]], span: int
    ) -> list[tuple[str, str, str, int]]:
        """``(id, path, category, line)`` of the scope's entries within ``span`` lines of
        each place, sorted as :class:`ScopeSections` reads them."""
        if not places:
            return []
        paths, cats, lines = (list(x) for x in zip(*places, strict=True))
        rows = self._q(doc_blocks.NEAR_SQL, (paths, cats, lines, span, span, span, span, scope))
        return [(str(i), str(p), str(c), int(n)) for i, p, c, n in rows]

    def neighbours(
        self, scope: str, anchors: Sequence[tuple[str, str, int, str]], window: int
    ) -> dict[str, list[tuple[int, str]]]:
        """The entries up to ``window`` places before and after each anchor, in its
        file section (see the SQLite doc table).

        Returns:
            ``anchor id -> [(offset, neighbour id), ...]``; negative offsets come before.
        """
        if window <= 0 or not anchors:
            return {}
        span = window + 2
        sections = self._sections_near(scope, [(p, c, n) for _, p, n, c in anchors], span)
        out: dict[str, list[tuple[int, str]]] = {}
        for aid, path, line, cat in anchors:
            found = sections.around(aid, path, cat, line, window, span)
            if found is not None:
                out[aid] = found
        return out

    def nearest(
        self, scope: str, model: str, query: Sequence[float], n: int
    ) -> list[tuple[str, float]] | None:
        """Exact nearest neighbours among the scope's kept ``model`` vectors.

        Returns:
            ``(id, cosine)`` pairs, best first; ``None`` when the vector index must
            answer (a scope over ``exact_max_entries``, or an embedded entry without
            a kept vector).
        """
        found = self.nearest_many(scope, model, [query], n)
        return None if found is None else found[0]

    def nearest_many(
        self, scope: str, model: str, queries: Sequence[Sequence[float]], n: int
    ) -> list[list[tuple[str, float]]] | None:
        """:meth:`nearest` for several queries (see :meth:`_scope_matrix`)."""
        if self.exact_max_entries <= 0:
            return None
        matrix = self._scope_matrix(scope, model)
        if matrix is None:
            return None
        try:
            return matrix.nearest_many(queries, n)
        except ValueError:
            return None

    def _scope_matrix(self, scope: str, model: str) -> ScopeMatrix | None:
        """The scope's kept ``model`` vectors as a matrix, ``None`` when exact search
        does not answer (too many entries, or an embedded one without a kept copy).

        The matrix is kept in memory between searches while the scope's docs, their
        embedded texts and kept copies are what they were: one query compares a
        digest of them (ids, vector hashes, copy present, in write order) with the
        one the matrix was built from, so a write by any replica is seen at the next
        search without the vectors being read again when nothing changed.
        """
        over = self._q(
            "SELECT count(*) FROM (SELECT 1 FROM doc_rows WHERE scope = %s LIMIT %s) s",
            (scope, self.exact_max_entries + 1),
        )
        if int(over[0][0]) > self.exact_max_entries:
            return None
        join = (
            "FROM doc_rows d LEFT JOIN kept_vectors v ON v.id = d.id AND v.model = %s "
            "AND v.text_hash = d.vec_hash WHERE d.scope = %s"
        )
        digest = self._q(
            "SELECT md5(string_agg(d.id || ':' || coalesce(d.vec_hash, '') || ':' || "
            f"(v.id IS NOT NULL)::text, ',' ORDER BY d.rowid)) {join}",
            (model, scope),
        )[0][0]
        key = (scope, model)
        with self._matrix_lock:
            kept = self._matrices.get(key)
            if kept is not None and kept[0] == digest:
                self._matrices.move_to_end(key)
                return kept[1]
        rows = self._q(
            f"SELECT d.id, d.vec_hash IS NOT NULL, v.vec {join} ORDER BY d.rowid", (model, scope)
        )
        ids: list[str] = []
        vectors: list[Vector] = []
        matrix: ScopeMatrix | None = None
        for entry_id, embedded, blob in rows:
            if not embedded:
                continue
            if blob is None:
                break
            ids.append(str(entry_id))
            vectors.append(np.frombuffer(bytes(blob), dtype="<f4"))
        else:
            try:
                matrix = ScopeMatrix(ids, vectors)
            except ValueError:  # vectors of two dimensions
                matrix = None
        with self._matrix_lock:
            self._matrices[key] = (digest, matrix, len(ids))
            self._matrices.move_to_end(key)
            while sum(k[2] for k in self._matrices.values()) > MATRIX_ENTRIES:
                self._matrices.popitem(last=False)
        return matrix

    def docs(self, ids: Iterable[str]) -> dict[str, Doc]:
        """Docs by id (missing ids are absent from the result)."""
        rows = self._q(f"SELECT {_DOC_COLS} FROM docs WHERE id = ANY(%s)", (list(ids),))
        return {d.id: d for d in map(_doc, rows)}

    def docs_with_vectors(
        self, ids: Sequence[str], model: str, scope: str | None = None
    ) -> dict[str, tuple[Doc, Vector | None]]:
        """Docs by id with their kept ``model`` vector (``None`` when no valid copy is kept)."""
        rows = self._q(
            f"SELECT {_D_COLS}, v.vec FROM docs d LEFT JOIN kept_vectors v "
            "ON v.id = d.id AND v.model = %s AND v.text_hash = d.vec_hash WHERE d.id = ANY(%s)",
            (model, list(ids)),
        )
        out: dict[str, Entry] = {}
        for r in rows:
            out[str(r[0])] = _entry((*r[:10], None if r[10] is None else bytes(r[10])))
        return out

    def docs_with_previous_vectors(
        self, ids: Sequence[str], model: str, scope: str
    ) -> tuple[dict[str, tuple[Doc, Vector | None]], dict[str, Previous]]:
        """:meth:`docs_with_vectors` plus the entry before each doc of ``scope`` in its
        file section (first entries have none)."""
        places = self._q(
            "SELECT id, path, category, line FROM docs WHERE id = ANY(%s) AND scope = %s",
            (list(ids), scope),
        )
        rows: list[tuple[Any, ...]] = []
        if places:  # the entry before is most often a few lines above: look there first
            half = PREVIOUS_SPAN // 2  # the lines from ``line - PREVIOUS_SPAN`` to ``line``
            close = self._rows_near(scope, [(p, c, n - half) for _, p, c, n in places], half)
            near, line_of = ScopeSections(close), {r[0]: r[3] for r in close}
            for entry_id, path, category, line in places:
                before_it = near.previous(str(entry_id))
                if before_it is not None and line_of[before_it] < line - PREVIOUS_SPAN:
                    before_it = None  # another place's lines: the ones between were not read
                if before_it is None:  # none close above: the section's whole part above
                    above = self._q(
                        "SELECT e.id FROM doc_blocks b JOIN doc_rows e ON e.blk = b.blk "
                        "WHERE b.path = %s AND b.first <= %s AND e.scope = %s "
                        "AND e.category = %s AND (e.base + b.delta, e.id) < (%s, %s) "
                        "ORDER BY e.base + b.delta DESC, e.id DESC LIMIT 1",
                        (path, line, scope, category, line, entry_id),
                    )
                    before_it = str(above[0][0]) if above else None
                if before_it is not None:
                    rows.append((entry_id, before_it))
        prev_of = {str(i): str(p) for i, p in rows}
        wanted = set(ids)
        extra = [p for p in dict.fromkeys(prev_of.values()) if p not in wanted]
        found = self.docs_with_vectors([*ids, *extra], model, scope)
        docs = {i: found[i] for i in ids if i in found}
        before = {
            i: Previous(p, found[p][0].text, found[p][1]) if p in found else Previous(p, None, None)
            for i, p in prev_of.items()
        }
        return docs, before

    def scope_docs(self, scope: str, category: str | None = None) -> list[Doc]:
        """All docs of a scope in file order."""
        sql = f"SELECT {_DOC_COLS} FROM docs WHERE scope = %s"
        params: list[Any] = [scope]
        if category:
            sql += " AND category = %s"
            params.append(category)
        return [_doc(r) for r in self._q(sql + " ORDER BY path, line, rowid", params)]

    def has_text(self, scope: str, text: str) -> bool:
        """Whether a scope already stores exactly this text."""
        sql = "SELECT 1 FROM doc_rows WHERE scope = %s AND text = %s LIMIT 1"
        return bool(self._q(sql, (scope, text)))

    def ids_with_text(self, scope: str, text: str) -> list[str]:
        """The ids of a scope's docs with exactly this text, in file order."""
        rows = self._q(
            "SELECT id FROM docs WHERE scope = %s AND text = %s ORDER BY path, line, rowid",
            (scope, text),
        )
        return [str(r[0]) for r in rows]

    def category_counts(self, scope: str) -> dict[str, int]:
        """Number of docs of a scope per category."""
        rows = self._q(
            "SELECT category, count(*) FROM doc_rows WHERE scope = %s GROUP BY category", (scope,)
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def count(self, scope: str | None = None) -> int:
        """Number of docs (in a scope)."""
        if scope:
            return int(self._q("SELECT count(*) FROM doc_rows WHERE scope = %s", (scope,))[0][0])
        return int(self._q("SELECT count(*) FROM doc_rows")[0][0])

    def apply(
        self,
        *,
        upserts: Sequence[Doc] = (),
        deletes: Sequence[tuple[str, str]] = (),
        files: Sequence[FileStamp] = (),
        drop_files: Sequence[str] = (),
        lines: Sequence[tuple[int, str]] = (),
        shifts: Sequence[tuple[str, int, int]] = (),
        generation: bool = False,
        model: str | None = None,
        embedded: Sequence[tuple[str, str]] = (),
        vectors: Sequence[Sequence[float]] | NDArray[np.float32] = (),
        prose: Sequence[ProseFile] = (),
    ) -> int | None:
        """Apply doc upserts, deletes ``(id, scope)``, line moves ``(line, id)``, line
        shifts ``(path, after, count)``, file stamps and the prose of files just read
        in one transaction (see the SQLite doc table's ``apply``); with ``generation``
        the new generation is returned, with ``model`` the ``embedded`` pairs and
        ``vectors`` are recorded."""
        gen: int | None = None
        unposted: list[int] = []  # rowids whose postings go
        posted: list[int] = []  # rowids whose postings are (re)written
        grown: list[int] = []  # blocks that received rows: split when too full
        emptied: list[int] = []  # blocks that lost rows: dropped when empty
        with self._db.transaction() as c, c.cursor() as cur:
            for path, after, count in shifts:
                doc_blocks.shift(c, path, after, count)
                shift_prose(c, path, after, count)
            for entry_id, scope in deletes:
                gone = c.execute(
                    "DELETE FROM doc_rows WHERE id = %s RETURNING rowid, blk", (entry_id,)
                ).fetchall()
                unposted += [int(r[0]) for r in gone]
                emptied += [int(r[1]) for r in gone]
                c.execute("DELETE FROM kept_vectors WHERE id = %s", (entry_id,))
                c.execute(
                    "INSERT INTO vec_deletes VALUES (%s, %s) "
                    "ON CONFLICT (id) DO UPDATE SET scope = excluded.scope",
                    (entry_id, scope),
                )
            last = {d.id: d for d in upserts}  # an id written twice: its last doc
            held = (
                {
                    str(r[0]): r[1:]
                    for r in c.execute(
                        "SELECT r.id, r.rowid, r.text_hash, r.vec_hash, r.scope, r.path, "
                        "r.base + b.delta, r.blk FROM doc_rows r JOIN doc_blocks b "
                        "ON b.blk = r.blk WHERE r.id = ANY(%s) FOR UPDATE OF r",
                        (list(last),),
                    ).fetchall()
                }
                if last
                else {}
            )
            fresh = [d for i, d in last.items() if i not in held]
            if fresh:  # new docs: one COPY, then their rowids for the postings
                spots = doc_blocks.place_rows(c, [(d.path, d.line) for d in fresh])
                with cur.copy(f"COPY doc_rows ({_ROW_COLS}, blk, base, tokens) FROM STDIN") as copy:
                    for d, (blk, base) in zip(fresh, spots, strict=True):
                        copy.write_row((*_row_values(d), blk, base, _tokens(d.text)))
                grown += [blk for blk, _ in spots]
                ids = [d.id for d in fresh]
                new_rows = c.execute("SELECT rowid FROM doc_rows WHERE id = ANY(%s)", (ids,))
                posted += [int(r[0]) for r in new_rows.fetchall()]
                c.execute("DELETE FROM vec_deletes WHERE id = ANY(%s)", (ids,))
            kept = [d for d in last.values() if d.id in held]
            relocated = [d for d in kept if (d.path, d.line) != tuple(held[d.id][4:6])]
            spot_of = dict(
                zip(
                    [d.id for d in relocated],
                    doc_blocks.place_rows(c, [(d.path, d.line) for d in relocated]),
                    strict=True,
                )
            )
            for d in kept:
                rowid, old_hash, vec_hash, old_scope, _path, _line, old_blk = held[d.id]
                moved = old_scope != d.scope
                if moved:  # the old scope's vector goes; a new rowid, as a new write
                    c.execute(
                        "INSERT INTO vec_deletes VALUES (%s, %s) "
                        "ON CONFLICT (id) DO UPDATE SET scope = excluded.scope",
                        (d.id, old_scope),
                    )
                    vec_hash = None
                sets = ", ".join(f"{col} = %s" for col in _ROW_COLS.split(", "))
                sets += ", vec_hash = %s"
                params: list[Any] = [*_row_values(d), vec_hash if old_hash == d.text_hash else None]
                if d.id in spot_of:
                    sets += ", blk = %s, base = %s"
                    params += spot_of[d.id]
                    grown.append(spot_of[d.id][0])
                    emptied.append(int(old_blk))
                if old_hash != d.text_hash:
                    sets += ", tokens = %s"
                    params.append(_tokens(d.text))
                if moved:
                    sets += ", rowid = nextval(pg_get_serial_sequence('doc_rows', 'rowid'))"
                new = c.execute(
                    f"UPDATE doc_rows SET {sets} WHERE rowid = %s RETURNING rowid",
                    (*params, rowid),
                ).fetchone()
                if moved or old_hash != d.text_hash:
                    unposted.append(int(rowid))
                    posted.append(int(new[0]))
            if unposted:
                c.execute(_UNPOST, (unposted,))
            if posted:
                c.execute(_POST, (posted,))
            if lines:
                grown_now, emptied_now = _move_lines(c, lines)
                grown += grown_now
                emptied += emptied_now
            doc_blocks.split(c, grown)
            doc_blocks.drop_empty(c, emptied)
            read = {pf.path for pf in prose}
            for p in drop_files:
                c.execute("DELETE FROM doc_files WHERE path = %s", (p,))
                if p not in read:
                    drop_prose(c, p)
            for f in files:
                if f.path not in read:
                    follow_stamp(c, f)
                c.execute(
                    "INSERT INTO doc_files VALUES (%s, %s, %s, %s, %s) ON CONFLICT (path) DO "
                    "UPDATE SET scope = excluded.scope, hash = excluded.hash, "
                    "mtime_ns = excluded.mtime_ns, size = excluded.size",
                    (f.path, f.scope, f.hash, f.mtime_ns, f.size),
                )
            for pf in prose:
                write_prose(c, pf)
            if model is not None:
                _mark_embedded(cur, embedded, model, vectors)
            gen = _bump_generation(c) if generation else None
        self._stats.invalidate()
        self._prose_stats.invalidate()
        return gen

    def set_importance(self, entry_id: str, importance: float) -> None:
        """Mirror an importance change from the ledger."""
        self.set_importances([(entry_id, importance)])

    def set_importances(self, changes: Sequence[tuple[str, float]]) -> None:
        """Mirror many importance changes ``(id, importance)`` from the ledger (one commit)."""
        if changes:
            with self._db.transaction() as c, c.cursor() as cur:
                cur.executemany(
                    "UPDATE doc_rows SET importance = %s WHERE id = %s",
                    [(float(imp), entry_id) for entry_id, imp in changes],
                )

    # -- vector outbox -----------------------------------------------------

    def vector_todo(self, limit: int = 100_000) -> list[Doc]:
        """Docs whose current text is not yet in the vector index, in write order."""
        rows = self._q(
            f"SELECT {_DOC_COLS} FROM docs WHERE vec_hash IS NULL OR vec_hash != text_hash "
            "ORDER BY rowid LIMIT %s",
            (limit,),
        )
        return [_doc(r) for r in rows]

    def vector_todo_count(self) -> int:
        """How many docs :meth:`vector_todo` would return without a limit."""
        rows = self._q(
            "SELECT count(*) FROM doc_rows WHERE vec_hash IS NULL OR vec_hash != text_hash"
        )
        return int(rows[0][0])

    def vector_deletes(self) -> list[tuple[str, str]]:
        """Queued vector deletions ``(id, scope)``."""
        return [(r[0], r[1]) for r in self._q("SELECT id, scope FROM vec_deletes ORDER BY id")]

    def mark_vectors(
        self,
        done: Sequence[tuple[str, str]],
        deleted: Sequence[str] = (),
        *,
        model: str | None = None,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32] = (),
    ) -> None:
        """Record ``(id, text_hash)`` pairs as embedded (keeping each vector under
        ``model`` when given) and deletions as applied."""
        with self._db.transaction() as c, c.cursor() as cur:
            _mark_embedded(cur, done, model, vectors)
            if deleted:
                c.execute("DELETE FROM vec_deletes WHERE id = ANY(%s)", (list(deleted),))

    def missing_vectors(self, model: str) -> list[tuple[str, str, str]]:
        """``(id, scope, vec_hash)`` of embedded docs without a valid kept ``model`` vector."""
        rows = self._q(
            "SELECT d.id, d.scope, d.vec_hash FROM doc_rows d LEFT JOIN kept_vectors v "
            "ON v.id = d.id AND v.model = %s AND v.text_hash = d.vec_hash "
            "WHERE d.vec_hash IS NOT NULL AND v.id IS NULL ORDER BY d.rowid",
            (model,),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def keep_vectors(
        self, model: str, vectors: Mapping[str, Sequence[float]], hashes: Mapping[str, str]
    ) -> None:
        """Keep copies of vectors read from the vector index; ``hashes`` names each one's text."""
        rows = [(i, model, hashes[i], vector_blob(v)) for i, v in vectors.items()]
        if rows:
            with self._db.transaction() as c, c.cursor() as cur:
                cur.executemany(_KEEP, rows)

    # -- search ------------------------------------------------------------

    def bm25(self, scope: str, query: str, limit: int) -> list[tuple[Doc, float]]:
        """BM25 keyword search in one scope (FTS5's scores, global statistics).

        Returns:
            ``(doc, score)`` pairs, best first; score is positive, bigger is better.
        """
        toks = query_tokens(query)
        if not toks:
            return []
        with self._db.connection() as conn:
            # FTS5 scores the phrases its query matches on: the same tokens here
            params = self._stats.query_params(conn, self._match_tokens(conn, toks))
            params.update(scope=scope, limit=int(limit))
            rows = conn.execute(
                f"SELECT {_D_COLS}, t.s FROM (SELECT p.rowid, sum(q.idf * p.tf * {K1 + 1} / "
                f"(p.tf + {K1} * ({1 - B} + {B} * p.dl / %(avgdl)s::float8))) AS s "
                "FROM unnest(%(terms)s::text[], %(idfs)s::float8[]) AS q(term, idf) "
                "JOIN doc_postings p ON p.term = q.term AND p.scope = %(scope)s "
                "GROUP BY p.rowid ORDER BY s DESC, p.rowid LIMIT %(limit)s) t "
                "JOIN docs d ON d.rowid = t.rowid ORDER BY t.s DESC, t.rowid",
                params,
            ).fetchall()
        return [(_doc(r[:10]), float(r[10])) for r in rows]

    def _match_tokens(self, conn: Any, toks: list[str]) -> list[str]:
        """The tokens a large index matches on (its rarer ones; see the SQLite index)."""
        n_docs, _ = self._stats.totals(conn)
        if len(toks) < 2 or n_docs < GATE_MIN_DOCS:
            return toks
        df = self._stats.doc_freq(conn, toks)
        rare = [t for t in toks if df.get(t, 0) <= COMMON_TOKEN_SHARE * n_docs]
        return rare if rare else toks

    def bm25_full(self, query: str) -> float:
        """The BM25 score of a doc of average length holding every query token once
        (the sum of their IDFs, over every doc of the index)."""
        toks = query_tokens(query)
        if not toks:
            return 0.0
        with self._db.connection() as conn:
            n_docs, _ = self._stats.totals(conn)
            return idf_sum(n_docs, self._stats.doc_freq(conn, toks), toks)

    def substring(self, scope: str, query: str, limit: int) -> list[tuple[Doc, float]]:
        """Plain substring match (the last-resort keyword mode): the share of query
        tokens found in the text or among its own index tokens."""
        toks = query_tokens(query) or [query.strip().lower()]
        out: list[tuple[Doc, float]] = []
        for row in self._q(
            f"SELECT {_DOC_COLS}, tokens FROM docs WHERE scope = %s ORDER BY rowid", (scope,)
        ):
            d = _doc(row[:10])
            low = d.text.lower()
            own = set(row[10])
            hits = sum(1 for t in toks if t and (t in low or t in own))
            if hits:
                out.append((d, hits / len(toks)))
        out.sort(key=lambda p: -p[1])
        return out[:limit]


def _row_values(d: Doc) -> tuple[Any, ...]:
    """The ``_ROW_COLS`` values of a doc (its line goes to its block, see :mod:`.doc_blocks`)."""
    return tuple(v for col, v in zip(_DOC_FIELDS, _doc_values(d), strict=True) if col != "line")


def _move_lines(c: Any, lines: Sequence[tuple[int, str]]) -> tuple[list[int], list[int]]:
    """Put docs at new lines ``(line, id)`` inside a write; returns the blocks that
    received rows and those that lost them."""
    last = {entry_id: line for line, entry_id in lines}  # an id moved twice: its last line
    rows = c.execute(
        "SELECT id, path, blk FROM doc_rows WHERE id = ANY(%s)", (list(last),)
    ).fetchall()
    spots = doc_blocks.place_rows(c, [(str(r[1]), last[str(r[0])]) for r in rows])
    c.execute(
        "UPDATE doc_rows r SET blk = u.b, base = u.s "
        "FROM unnest(%s::text[], %s::bigint[], %s::int[]) AS u(i, b, s) WHERE r.id = u.i",
        ([str(r[0]) for r in rows], [b for b, _ in spots], [n for _, n in spots]),
    )
    return [b for b, _ in spots], [int(r[2]) for r in rows]


_SCHEMA_KEY = "schema"
_SCHEMA_DIGEST = hashlib.sha256(
    "\n".join((*doc_blocks.SCHEMA, *SCHEMA, *_PASSAGES_SCHEMA)).encode()
).hexdigest()
"""Names the index's schema statements: an index that ran these runs none when opened
again (a ``CREATE … IF NOT EXISTS`` still locks its table, and a replica starting while
another writes would deadlock with the writer, which takes the tables in another order)."""


def _schema_done(c: Any) -> bool:
    """Whether the index's tables exist as :data:`_SCHEMA_DIGEST` names them."""
    if c.execute("SELECT to_regclass('index_meta')").fetchone()[0] is None:
        return False
    row = c.execute("SELECT value FROM index_meta WHERE key = %s", (_SCHEMA_KEY,)).fetchone()
    return row is not None and row[0] == _SCHEMA_DIGEST


def _bump_generation(c: Any) -> int:
    """Increment the ``generation`` meta value inside the caller's transaction."""
    c.execute("INSERT INTO index_meta VALUES ('generation', '0') ON CONFLICT DO NOTHING")
    row = c.execute(
        "UPDATE index_meta SET value = (value::bigint + 1)::text WHERE key = 'generation' "
        "RETURNING value"
    ).fetchone()
    return int(row[0])


def _mark_embedded(
    cur: Any,
    done: Sequence[tuple[str, str]],
    model: str | None,
    vectors: Sequence[Sequence[float]] | NDArray[np.float32],
) -> None:
    """Record ``(id, text_hash)`` pairs as embedded, keeping a copy of each vector
    under ``model`` (none without one), inside the caller's transaction."""
    if not done:
        return
    last = {i: n for n, (i, _h) in enumerate(done)}  # an id twice: its last pair
    rows = [done[n] for n in last.values()]
    ids, hashes = [i for i, _ in rows], [h for _, h in rows]
    cur.execute(
        "UPDATE doc_rows d SET vec_hash = u.h FROM unnest(%s::text[], %s::text[]) AS u(i, h) "
        "WHERE d.id = u.i AND d.text_hash = u.h",
        (ids, hashes),
    )
    if model is not None:
        blobs = [vector_blob(vectors[n]) for n in last.values()]
        cur.execute(_KEEP_ALL, (model, ids, hashes, blobs))


__all__ = ["SCHEMA", "PgKeywordIndex"]

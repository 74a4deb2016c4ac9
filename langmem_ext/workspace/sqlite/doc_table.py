"""The doc/section table of ``.index/index.db``: docs, file hashes, kept vectors.

``docs`` mirrors every live entry (text, path, line, category, dates, importance)
so search can rank without touching Markdown; ``files`` remembers each Markdown
file's hash for incremental sync; ``vec_deletes`` is the outbox of vector deletions
not yet applied (for example while a Chroma server is down). Docs whose ``vec_hash``
differs from ``text_hash`` still need (re-)embedding. ``kept_vectors`` keeps, per
embedder, a copy of the vectors written to Chroma, tagged with the hash of the text
they embed: search reads a doc's copy with the doc (instead of asking Chroma to
return embeddings, which costs more than the nearest-neighbour query itself) when
that hash is the doc's ``vec_hash`` — the text whose vector Chroma holds — so a
stale copy is never used. The same copies answer exact vector search for small
scopes (:meth:`DocTable.nearest`, :mod:`~langmem_ext.workspace.vector_matrix`).
A doc's keyword tokens (:mod:`~langmem_ext.workspace.sqlite.fts`) change in the same
transaction as the doc. Everything here can be deleted and rebuilt from Markdown +
ledger.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from langmem_ext.workspace.doc_cache import DocCache
from langmem_ext.workspace.docs import (
    _D_COLS,
    _DOC_COLS,
    _VEC_DTYPE,
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
from langmem_ext.workspace.files import private_file
from langmem_ext.workspace.sections import ScopeSections
from langmem_ext.workspace.sqlite._repo import immediate
from langmem_ext.workspace.sqlite.fts import (
    index_doc,
    move_to_scope_blocks,
    next_rowid,
    retokenize_index,
    unindex_doc,
)
from langmem_ext.workspace.sqlite.passage_rows import (
    SCHEMA as _PASSAGES_SCHEMA,
)
from langmem_ext.workspace.sqlite.passage_rows import (
    ProseFile,
    drop_prose,
    follow_stamp,
    shift_prose,
    write_prose,
)
from langmem_ext.workspace.vector_matrix import ScopeMatrix

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    category TEXT NOT NULL,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    importance REAL NOT NULL,
    vec_hash TEXT
);
CREATE INDEX IF NOT EXISTS docs_scope ON docs(scope);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE INDEX IF NOT EXISTS docs_path_line ON docs(path, line);
CREATE INDEX IF NOT EXISTS docs_scope_category ON docs(scope, category);
CREATE INDEX IF NOT EXISTS docs_vector_todo ON docs(rowid)
    WHERE vec_hash IS NULL OR vec_hash != text_hash;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(tokens, tokenize = 'unicode61');
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, scope TEXT NOT NULL, hash TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS scope_blocks (scope TEXT PRIMARY KEY, block INTEGER NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS vec_deletes (id TEXT PRIMARY KEY, scope TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kept_vectors (
    id TEXT NOT NULL, model TEXT NOT NULL, text_hash TEXT NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY (id, model)
);
"""

_CACHE_KIB = 64 * 1024
"""SQLite page cache per connection (allocated as pages are read). The default 2 MiB
holds a fraction of a 10k-memory index (~45 MB, most of it kept vectors): each
search then re-reads FTS, doc and vector pages from the OS (measured at 10k: BM25
13 % and the doc + vector lookup 8 % slower than with this cache)."""


class DocTable:
    """The docs, files and kept-vectors tables of ``index.db`` (one connection, one lock).

    Args:
        path: ``.index/index.db``.
        cache_max_entries: Scopes of at most this many entries are held in memory
            for search (:mod:`~langmem_ext.workspace.doc_cache`); 0 turns that off.
        exact_max_entries: Scopes of at most this many entries are searched
            exactly over their kept vectors (:meth:`nearest`); 0 turns that off.
    """

    def __init__(
        self, path: Path, *, cache_max_entries: int = 50_000, exact_max_entries: int = 5_000
    ) -> None:
        self.path = path
        self.cache_max_entries = cache_max_entries
        self.exact_max_entries = exact_max_entries
        self._conn = sqlite3.connect(
            private_file(path), timeout=30, check_same_thread=False, isolation_level=None
        )
        self._lock = threading.RLock()
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
        self._conn.executescript(_SCHEMA + _PASSAGES_SCHEMA)
        self._conn.execute("SELECT count(*) FROM docs").fetchone()  # fails if corrupt
        with self._lock:
            move_to_scope_blocks(self._conn)
            retokenize_index(self._conn)
        self._sections: dict[str, ScopeSections] = {}
        self._doc_caches: dict[str, DocCache] = {}
        self._matrices: dict[tuple[str, str], ScopeMatrix | None] = {}
        self._passage_cache: dict[tuple[str, str, str], Any] = {}
        """In-memory search data of passages, by (kind, model, scope); dropped on writes."""
        self._data_version: int | None = None

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            rows: list[tuple[Any, ...]] = self._conn.execute(sql, params).fetchall()
        return rows

    # -- meta & files ------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """Read a meta value."""
        rows = self._q("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Write a meta value."""
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def bump_generation(self) -> int:
        """Count one more write of the index (other processes then reopen their Chroma
        client); returns the new generation."""
        with self._lock, immediate(self._conn):
            return _bump_generation(self._conn)

    def file_stamps(self, scope: str | None = None) -> dict[str, FileStamp]:
        """Known files (of one scope, or all)."""
        sql = "SELECT path, scope, hash, mtime_ns, size FROM files"
        rows = self._q(sql + " WHERE scope = ?", (scope,)) if scope else self._q(sql)
        return {r[0]: FileStamp(r[0], r[1], r[2], int(r[3]), int(r[4])) for r in rows}

    # -- docs --------------------------------------------------------------

    def docs_of_path(self, path: str) -> dict[str, Doc]:
        """Indexed docs of one file, by id."""
        return {
            d.id: d
            for d in map(_doc, self._q(f"SELECT {_DOC_COLS} FROM docs WHERE path = ?", (path,)))
        }

    def lines_of_path(self, path: str) -> dict[str, int]:
        """``id -> line`` of one file's docs."""
        return {
            r[0]: int(r[1]) for r in self._q("SELECT id, line FROM docs WHERE path = ?", (path,))
        }

    def neighbours(
        self, scope: str, anchors: Sequence[tuple[str, str, int, str]], window: int
    ) -> dict[str, list[tuple[int, str]]]:
        """The entries up to ``window`` places before and after each anchor.

        Only entries of the anchor's file and category (its section) count; places
        are counted in entries, not lines (a bullet may span several lines, so an
        anchor next to long bullets sees fewer neighbours).

        Args:
            scope: The scope searched.
            anchors: ``(id, path, line, category)`` of each anchor.
            window: Places on each side.

        Returns:
            ``anchor id -> [(offset, neighbour id), ...]``; negative offsets come before.
        """
        if window <= 0 or not anchors:
            return {}
        span = window + 2  # lines: one-line bullets, plus a heading or a blank line
        sections = self._sections_of(scope)
        by_anchor: dict[str, list[tuple[int, str]]] = {}
        for aid, path, line, cat in anchors:
            found = sections.around(aid, path, cat, line, window, span)
            if found is not None:
                by_anchor[aid] = found
        return by_anchor

    def _sections_of(self, scope: str) -> ScopeSections:
        """The scope's section order (:mod:`~langmem_ext.workspace.sections`), cached.

        The cache holds while the docs table does not change: :meth:`apply` drops
        the scopes it writes, and a commit by any other connection (another process,
        another index object) drops them all, which SQLite's ``data_version`` shows.
        """
        with self._lock:
            self._drop_if_written_elsewhere()
            sections = self._sections.get(scope)
            if sections is None:
                rows = self._conn.execute(
                    "SELECT id, path, category, line FROM docs WHERE scope = ? "
                    "ORDER BY path, category, line, id",
                    (scope,),
                ).fetchall()
                sections = self._sections[scope] = ScopeSections(rows)
            return sections

    def _append_to_sections(self, inserted: Sequence[Doc]) -> None:
        """New docs go into the cached section maps in place when each comes after
        every entry of its section (an appended bullet, the common write: no
        O(scope) rebuild on the next search); a scope where one does not is dropped
        (call locked)."""
        for d in sorted(inserted, key=lambda d: (d.path, d.category, d.line, d.id)):
            sections = self._sections.get(d.scope)
            if sections is not None and not sections.append(d.id, d.path, d.category, d.line):
                self._sections.pop(d.scope, None)

    def _drop_if_written_elsewhere(self) -> None:
        """Drop the in-memory caches when another connection committed (call locked)."""
        version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        if version != self._data_version:
            self._sections.clear()
            for cache in self._doc_caches.values():
                cache.clear()
            self._matrices.clear()
            self._passage_cache.clear()
            self._data_version = version

    def _forget(self, ids: Iterable[str] = (), paths: Iterable[str] = ()) -> None:
        """Drop cached docs that a write of this connection changed (call locked)."""
        ids = list(ids)
        paths = list(paths)
        for cache in self._doc_caches.values():
            cache.drop(ids)
            for p in paths:
                cache.drop_path(p)

    def _doc_cache(self, model: str, scope: str | None) -> DocCache | None:
        """The model's doc cache, with ``scope`` loaded whole when it is small enough."""
        if self.cache_max_entries <= 0:
            return None
        cache = self._doc_caches.get(model)
        if cache is None:
            cache = self._doc_caches[model] = DocCache()
        if scope is not None and not cache.is_loaded(scope) and not cache.is_skipped(scope):
            if self.count(scope) > self.cache_max_entries:
                cache.skip(scope)
            else:
                rows = self._conn.execute(
                    f"SELECT {_D_COLS}, v.vec FROM docs d LEFT JOIN kept_vectors v "
                    "ON v.id = d.id AND v.model = ? AND v.text_hash = d.vec_hash "
                    "WHERE d.scope = ?",
                    (model, scope),
                ).fetchall()
                cache.load(scope, ((r[0], _entry(r)) for r in rows))
        return cache

    def nearest(
        self, scope: str, model: str, query: Sequence[float], n: int
    ) -> list[tuple[str, float]] | None:
        """Exact nearest neighbours among the scope's kept ``model`` vectors.

        See :mod:`~langmem_ext.workspace.vector_matrix`. Entries not embedded yet
        are not found (as in the vector index).

        Returns:
            ``(id, cosine)`` pairs, best first; ``None`` when the vector index must
            answer: the scope has more than ``exact_max_entries`` entries, or an
            embedded entry has no valid kept vector.
        """
        found = self.nearest_many(scope, model, [query], n)
        return None if found is None else found[0]

    def nearest_many(
        self, scope: str, model: str, queries: Sequence[Sequence[float]], n: int
    ) -> list[list[tuple[str, float]]] | None:
        """:meth:`nearest` for several queries (one matrix product, one lock)."""
        if self.exact_max_entries <= 0:
            return None
        with self._lock:  # writers change the matrix in place: read it under the lock
            self._drop_if_written_elsewhere()
            key = (model, scope)
            if key not in self._matrices:
                self._matrices[key] = self._scope_matrix(model, scope)
            matrix = self._matrices[key]
            if matrix is None:
                return None
            try:
                return matrix.nearest_many(queries, n)
            except ValueError:  # a query of another dimension: let the vector index say so
                return None

    def _scope_matrix(self, model: str, scope: str) -> ScopeMatrix | None:
        if self.count(scope) > self.exact_max_entries:
            return None
        rows = self._conn.execute(
            "SELECT d.id, d.vec_hash IS NOT NULL, v.vec FROM docs d LEFT JOIN kept_vectors v "
            "ON v.id = d.id AND v.model = ? AND v.text_hash = d.vec_hash WHERE d.scope = ? "
            "ORDER BY d.rowid",
            (model, scope),
        ).fetchall()
        ids: list[str] = []
        vectors: list[Vector] = []
        for entry_id, embedded, blob in rows:
            if not embedded:
                continue  # not in the vector index either
            if blob is None:
                return None  # embedded, but no copy kept: only the vector index has it
            ids.append(entry_id)
            vectors.append(np.frombuffer(blob, dtype=_VEC_DTYPE))
        try:
            return ScopeMatrix(ids, vectors)
        except ValueError:  # vectors of different dimensions
            return None

    def docs(self, ids: Iterable[str]) -> dict[str, Doc]:
        """Docs by id (missing ids are absent from the result)."""
        out: dict[str, Doc] = {}
        id_list = list(ids)
        for i in range(0, len(id_list), 500):
            chunk = id_list[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._q(f"SELECT {_DOC_COLS} FROM docs WHERE id IN ({marks})", chunk):
                d = _doc(row)
                out[d.id] = d
        return out

    def docs_with_vectors(
        self, ids: Sequence[str], model: str, scope: str | None = None
    ) -> dict[str, tuple[Doc, Vector | None]]:
        """Docs by id with their kept ``model`` vector (``None`` when no valid copy is kept).

        One query does both: search needs the doc of every vector hit anyway. With
        ``scope``, the scope's docs are held in memory from the first call on (see
        :mod:`~langmem_ext.workspace.doc_cache`); the arrays returned are then
        shared and read-only.
        """
        with self._lock:
            self._drop_if_written_elsewhere()
            cache = self._doc_cache(model, scope)
            if cache is None:
                return self._read_docs_with_vectors(ids, model)
            found, missing = cache.split(ids)
            if missing:
                read = self._read_docs_with_vectors(missing, model)
                cache.put(read)
                found.update(read)
            return found

    def _read_docs_with_vectors(self, ids: Sequence[str], model: str) -> dict[str, Entry]:
        docs: dict[str, Entry] = {}
        for i in range(0, len(ids), 500):
            chunk = list(ids[i : i + 500])
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT {_D_COLS}, v.vec FROM docs d "
                "LEFT JOIN kept_vectors v "
                "ON v.id = d.id AND v.model = ? AND v.text_hash = d.vec_hash "
                f"WHERE d.id IN ({marks})"
            )
            for row in self._q(sql, [model, *chunk]):
                docs[row[0]] = _entry(row)
        return docs

    def docs_with_previous_vectors(
        self, ids: Sequence[str], model: str, scope: str
    ) -> tuple[dict[str, tuple[Doc, Vector | None]], dict[str, Previous]]:
        """:meth:`docs_with_vectors` plus the entry before each doc of ``scope``.

        The entry before is the previous one in the doc's section (file and
        category, as for :meth:`neighbours`); first entries have none. Its text and
        vector come in the same query as the docs.

        Returns:
            ``(docs, previous)``: ``id -> (doc, kept vector or None)`` as
            :meth:`docs_with_vectors` returns, and ``id ->`` :class:`Previous` (its id,
            text, and kept vector or ``None``: no valid copy kept; ask the vector index).
        """
        with self._lock:
            sections = self._sections_of(scope)
            prev_of = {i: p for i in ids if (p := sections.previous(i)) is not None}
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
        sql = f"SELECT {_DOC_COLS} FROM docs WHERE scope = ?"
        params: list[Any] = [scope]
        if category:
            sql += " AND category = ?"
            params.append(category)
        return [_doc(r) for r in self._q(sql + " ORDER BY path, line", params)]

    def has_text(self, scope: str, text: str) -> bool:
        """Whether a scope already stores exactly this text."""
        return bool(
            self._q("SELECT 1 FROM docs WHERE scope = ? AND text = ? LIMIT 1", (scope, text))
        )

    def ids_with_text(self, scope: str, text: str) -> list[str]:
        """The ids of a scope's docs with exactly this text, in file order."""
        rows = self._q(
            "SELECT id FROM docs WHERE scope = ? AND text = ? ORDER BY path, line", (scope, text)
        )
        return [str(r[0]) for r in rows]

    def category_counts(self, scope: str) -> dict[str, int]:
        """Number of docs of a scope per category (categories without docs are left out)."""
        rows = self._q(
            "SELECT category, count(*) FROM docs WHERE scope = ? GROUP BY category", (scope,)
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def count(self, scope: str | None = None) -> int:
        """Number of docs (in a scope)."""
        if scope:
            return int(self._q("SELECT count(*) FROM docs WHERE scope = ?", (scope,))[0][0])
        return int(self._q("SELECT count(*) FROM docs")[0][0])

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
        """Apply doc upserts, deletes ``(id, scope)``, line moves ``(line, id)`` and file
        stamps in one transaction.

        The prose passages of a file (:mod:`~langmem_ext.workspace.sqlite.passage_rows`)
        follow in the same transaction: ``prose`` gives the chunks of files just read;
        the prose of every other file whose stamp is written is taken to be unchanged
        (its lines move with ``shifts``), and a dropped file's prose goes with it.

        With ``generation``, the same transaction bumps the index generation (see
        :meth:`bump_generation`) and the new value is returned; else ``None``. With
        ``model``, ``embedded`` ``(id, text_hash)`` pairs and their ``vectors`` (just
        written to the vector index) are recorded as in :meth:`mark_vectors`, in the
        same transaction: a doc written with its vector never enters the outbox.

        ``shifts`` ``(path, after, count)``, applied first and in order, move the docs
        of ``path`` below line ``after`` down ``count`` lines (lines were inserted).
        A doc whose text changed loses its ``vec_hash`` (it must be re-embedded); a
        deleted doc is queued in ``vec_deletes``.
        """
        touched = {d.scope for d in upserts} | {scope for _id, scope in deletes}
        gone = {entry_id for entry_id, _scope in deletes}  # leave the vector search
        inserted: list[Doc] = []  # new docs (the section map may take them in place)
        committed = False
        prose_changed = False
        gen: int | None = None
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                for path, after, count in shifts:
                    c.execute(
                        "UPDATE docs SET line = line + ? WHERE path = ? AND line > ?",
                        (count, path, after),
                    )
                    shift_prose(c, path, after, count)
                for entry_id, scope in deletes:
                    row = c.execute("SELECT rowid FROM docs WHERE id = ?", (entry_id,)).fetchone()
                    if row:
                        unindex_doc(c, row[0])
                        c.execute("DELETE FROM docs WHERE rowid = ?", (row[0],))
                        c.execute("DELETE FROM kept_vectors WHERE id = ?", (entry_id,))
                    c.execute("INSERT OR REPLACE INTO vec_deletes VALUES (?, ?)", (entry_id, scope))
                for d in upserts:
                    row = c.execute(
                        "SELECT rowid, text_hash, vec_hash, scope FROM docs WHERE id = ?", (d.id,)
                    ).fetchone()
                    if row is None:
                        new_rowid = next_rowid(c, d.scope)
                        c.execute(
                            f"INSERT INTO docs (rowid, {_DOC_COLS}, vec_hash) "
                            "VALUES (?,?,?,?,?,?,?,?,?,?,?,NULL)",
                            (new_rowid, *_doc_values(d)),
                        )
                        index_doc(c, new_rowid, d.text)
                        c.execute("DELETE FROM vec_deletes WHERE id = ?", (d.id,))
                        inserted.append(d)
                        continue
                    rowid, old_hash, vec_hash, old_scope = row
                    touched.add(old_scope)
                    if old_hash != d.text_hash or old_scope != d.scope:
                        gone.add(d.id)  # not embedded (in this scope) until re-embedded
                    retokenize = old_hash != d.text_hash
                    if old_scope != d.scope:  # moved between scopes: drop old vector
                        c.execute(
                            "INSERT OR REPLACE INTO vec_deletes VALUES (?, ?)", (d.id, old_scope)
                        )
                        vec_hash = None
                        # ... and into the new scope's rowid block
                        unindex_doc(c, rowid)
                        new_rowid = next_rowid(c, d.scope)
                        c.execute("UPDATE docs SET rowid = ? WHERE rowid = ?", (new_rowid, rowid))
                        rowid, retokenize = new_rowid, True
                    c.execute(
                        f"UPDATE docs SET ({_DOC_COLS}, vec_hash) = (?,?,?,?,?,?,?,?,?,?,?) "
                        "WHERE rowid = ?",
                        (*_doc_values(d), vec_hash if old_hash == d.text_hash else None, rowid),
                    )
                    if retokenize:
                        unindex_doc(c, rowid)
                        index_doc(c, rowid, d.text)
                c.executemany("UPDATE docs SET line = ? WHERE id = ?", list(lines))
                read = {pf.path for pf in prose}
                for p in drop_files:
                    c.execute("DELETE FROM files WHERE path = ?", (p,))
                    if p not in read:
                        prose_changed |= drop_prose(c, p)
                for f in files:
                    if f.path not in read:
                        follow_stamp(c, f)
                    c.execute(
                        "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?)",
                        (f.path, f.scope, f.hash, f.mtime_ns, f.size),
                    )
                for pf in prose:
                    prose_changed |= write_prose(c, pf)
                if model is not None:
                    _mark_embedded(c, embedded, model, vectors)
                gen = _bump_generation(c) if generation else None
                c.execute("COMMIT")
                committed = True
            except BaseException:
                c.execute("ROLLBACK")
                raise
            finally:  # what this write changed is stale in the in-memory caches
                if shifts or lines:  # lines moved: any scope's order may have changed
                    self._sections.clear()
                elif committed and not deletes and len(inserted) == len(upserts):
                    self._append_to_sections(inserted)
                else:
                    for scope in touched:
                        self._sections.pop(scope, None)
                self._forget(
                    [*(d.id for d in upserts), *(i for i, _s in deletes), *(i for _l, i in lines)],
                    [p for p, _a, _n in shifts],
                )
                if not committed:
                    self._matrices.clear()
                if prose_changed or not committed:
                    self._passage_cache.clear()
                self._recheck_matrix_fallbacks()
                for matrix in self._matrices.values():
                    if matrix is not None:
                        for entry_id in gone:
                            matrix.remove(entry_id)
                if committed and model is not None and embedded:
                    self._add_to_matrices(model, embedded, vectors)
        return gen

    def set_importance(self, entry_id: str, importance: float) -> None:
        """Mirror an importance change from the ledger."""
        with self._lock:
            self._conn.execute(
                "UPDATE docs SET importance = ? WHERE id = ?", (importance, entry_id)
            )
            self._forget([entry_id])

    def set_importances(self, changes: Sequence[tuple[str, float]]) -> None:
        """Mirror many importance changes ``(id, importance)`` from the ledger (one commit)."""
        if not changes:
            return
        with self._lock:
            with immediate(self._conn):
                self._conn.executemany(
                    "UPDATE docs SET importance = ? WHERE id = ?",
                    [(float(imp), entry_id) for entry_id, imp in changes],
                )
            self._forget([entry_id for entry_id, _imp in changes])

    # -- vector outbox -----------------------------------------------------

    def vector_todo(self, limit: int = 100_000) -> list[Doc]:
        """Docs whose current text is not yet in the vector index.

        The partial index ``docs_vector_todo`` makes this O(result), not a scan of
        every doc (it runs after every write).
        """
        rows = self._q(
            f"SELECT {_DOC_COLS} FROM docs WHERE vec_hash IS NULL OR vec_hash != text_hash "
            "ORDER BY rowid LIMIT ?",
            (limit,),
        )
        return [_doc(r) for r in rows]

    def vector_todo_count(self) -> int:
        """How many docs :meth:`vector_todo` would return without a limit (a count over
        the partial index: no doc is read)."""
        rows = self._q("SELECT count(*) FROM docs WHERE vec_hash IS NULL OR vec_hash != text_hash")
        return int(rows[0][0])

    def vector_deletes(self) -> list[tuple[str, str]]:
        """Queued vector deletions ``(id, scope)``."""
        return [(r[0], r[1]) for r in self._q("SELECT id, scope FROM vec_deletes")]

    def mark_vectors(
        self,
        done: Sequence[tuple[str, str]],
        deleted: Sequence[str] = (),
        *,
        model: str | None = None,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32] = (),
    ) -> None:
        """Record ``(id, text_hash)`` pairs as embedded and deletions as applied.

        With ``model``, ``vectors`` (one per ``done`` pair) are the vectors just
        written to Chroma; a copy of each is kept (see :meth:`docs_with_vectors`).
        """
        with self._lock:
            c = self._conn
            try:
                with immediate(c):
                    _mark_embedded(c, done, model, vectors)
                    c.executemany("DELETE FROM vec_deletes WHERE id = ?", [(i,) for i in deleted])
            except BaseException:
                self._matrices.clear()
                raise
            finally:
                self._forget(i for i, _h in done)
            if model is None:  # no copies kept: only the vector index has these vectors
                self._matrices.clear()
            elif done:
                self._recheck_matrix_fallbacks()
                self._add_to_matrices(model, done, vectors)

    def _recheck_matrix_fallbacks(self) -> None:
        """Forget which scopes Chroma had to answer: a write may have changed that."""
        for key in [key for key, matrix in self._matrices.items() if matrix is None]:
            del self._matrices[key]

    def _add_to_matrices(
        self,
        model: str,
        done: Sequence[tuple[str, str]],
        vectors: Sequence[Sequence[float]] | NDArray[np.float32],
    ) -> None:
        """Put vectors just recorded into the built matrices of their scopes (call locked)."""
        built = {s: mx for (m, s), mx in self._matrices.items() if m == model and mx is not None}
        if not built:
            return
        vec_of = {i: v for (i, _h), v in zip(done, vectors, strict=True)}
        hash_of = dict(done)
        ids = list(vec_of)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for entry_id, scope, vec_hash in self._conn.execute(
                f"SELECT id, scope, vec_hash FROM docs WHERE id IN ({marks})", chunk
            ).fetchall():
                matrix = built.get(scope)
                if matrix is None or vec_hash != hash_of[entry_id]:
                    continue  # no matrix, or the text changed again since it was embedded
                try:
                    matrix.upsert(entry_id, vec_of[entry_id])
                except ValueError:  # another dimension: rebuild (and let Chroma decide)
                    del self._matrices[(model, scope)], built[scope]
                    continue
                if len(matrix) > self.exact_max_entries:  # grew past the limit
                    del self._matrices[(model, scope)], built[scope]

    def missing_vectors(self, model: str) -> list[tuple[str, str, str]]:
        """``(id, scope, vec_hash)`` of embedded docs without a valid kept ``model`` vector."""
        rows = self._q(
            "SELECT d.id, d.scope, d.vec_hash FROM docs d LEFT JOIN kept_vectors v "
            "ON v.id = d.id AND v.model = ? AND v.text_hash = d.vec_hash "
            "WHERE d.vec_hash IS NOT NULL AND v.id IS NULL",
            (model,),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def keep_vectors(
        self, model: str, vectors: Mapping[str, Sequence[float]], hashes: Mapping[str, str]
    ) -> None:
        """Keep copies of vectors read from Chroma; ``hashes`` names each one's text."""
        rows = [(i, model, hashes[i], vector_blob(v)) for i, v in vectors.items()]
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                c.executemany("INSERT OR REPLACE INTO kept_vectors VALUES (?, ?, ?, ?)", rows)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            finally:
                self._forget(vectors)
                self._matrices.clear()  # rebuilt with these copies on the next search


__all__ = ["DocTable"]


def _bump_generation(c: sqlite3.Connection) -> int:
    """Increment the ``generation`` meta value inside the caller's transaction."""
    row = c.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    gen = int(row[0] or 0) + 1 if row else 1
    c.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (str(gen),))
    return gen


def _mark_embedded(
    c: sqlite3.Connection,
    done: Sequence[tuple[str, str]],
    model: str | None,
    vectors: Sequence[Sequence[float]] | NDArray[np.float32],
) -> None:
    """Record ``(id, text_hash)`` pairs as embedded, keeping a copy of each vector
    under ``model`` (none without one), inside the caller's transaction."""
    c.executemany(
        "UPDATE docs SET vec_hash = ? WHERE id = ? AND text_hash = ?",
        [(h, i, h) for i, h in done],
    )
    if model is not None:
        c.executemany(
            "INSERT OR REPLACE INTO kept_vectors VALUES (?, ?, ?, ?)",
            [(i, model, h, vector_blob(v)) for (i, h), v in zip(done, vectors, strict=True)],
        )

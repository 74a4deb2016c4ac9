"""Reads and vector writes of the passages of ``index.db`` (prose chunks, session events).

:class:`PassageTable` is the doc table plus what search and the embedders ask of
the passages (:mod:`~langmem_ext.workspace.sqlite.passage_rows`): exact vector
search over their kept vectors, the passages still to embed, and the event passages
the hot log's embedder adds. Their keyword search (BM25 over ``passages_fts``, prose
only: the hot log keeps its own keyword tokens in the ledger) is the keyword
index's (:meth:`~langmem_ext.workspace.sqlite.keyword_index.KeywordIndex.prose_bm25`),
on its reader connections.

Exact vector search holds, per kind, embedder and scope, the unit vectors of the
embedded passages in memory (rebuilt after a write that adds or removes one, or
when another process wrote the index); a scope with more than
``exact_max_entries`` passages of a kind is left to the vector index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from langmem_ext.core.runtime import blas_threads
from langmem_ext.workspace.docs import _VEC_DTYPE, text_hash, vector_blob
from langmem_ext.workspace.sqlite._repo import immediate
from langmem_ext.workspace.sqlite.doc_table import DocTable
from langmem_ext.workspace.sqlite.passage_rows import (
    COLS,
    Passage,
    passage,
    purge_events,
)


@dataclass(frozen=True)
class _Vectors:
    """The embedded passages of one kind, embedder and scope, as unit rows."""

    rowids: NDArray[np.int64]
    matrix: NDArray[np.float32]
    created_at: NDArray[np.float64]
    roles: NDArray[np.object_]


class PassageTable(DocTable):
    """The doc table with the passages' searches and vector bookkeeping.

    Args:
        path: ``.index/index.db``.
        cache_max_entries: See :class:`~langmem_ext.workspace.sqlite.doc_table.DocTable`.
        exact_max_entries: See :class:`~langmem_ext.workspace.sqlite.doc_table.DocTable`;
            also the most passages of a kind a scope may have to be searched exactly.
    """

    # -- prose files ---------------------------------------------------------

    def prose_lagging(self, scope: str) -> list[str]:
        """Files of ``scope`` whose prose was not read from their indexed text (an
        index from before prose was indexed, or a change a writer could not follow).

        Files sync could not read are left out: their last prose stays, as their
        entries do, until they change.
        """
        rows = self._q(
            "SELECT f.path FROM files f LEFT JOIN prose_files p ON p.path = f.path "
            "WHERE f.scope = ? AND substr(f.hash, 1, 1) != '!' "
            "AND (p.hash IS NULL OR p.hash != f.hash)",
            (scope,),
        )
        return [str(r[0]) for r in rows]

    # -- reads ---------------------------------------------------------------

    def passage_count(self, kind: str, scope: str) -> int:
        """How many passages of a kind a scope has."""
        rows = self._q("SELECT count(*) FROM passages WHERE kind = ? AND scope = ?", (kind, scope))
        return int(rows[0][0])

    def has_passages(self, kind: str, scope: str) -> bool:
        """Whether a scope has any passage of a kind (one index probe)."""
        return bool(
            self._q("SELECT 1 FROM passages WHERE kind = ? AND scope = ? LIMIT 1", (kind, scope))
        )

    def passages_of_path(self, kind: str, path: str) -> list[Passage]:
        """The passages of a kind in one file, in file order."""
        rows = self._q(
            f"SELECT {COLS} FROM passages WHERE kind = ? AND path = ? ORDER BY line",
            (kind, path),
        )
        return [passage(r) for r in rows]

    def passages_by_rowid(self, rowids: Sequence[int]) -> dict[int, Passage]:
        """Passages by rowid (missing ones are absent)."""
        out: dict[int, Passage] = {}
        ids = [int(r) for r in rowids]
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._q(
                f"SELECT rowid, {COLS} FROM passages WHERE rowid IN ({marks})", chunk
            ):
                out[int(row[0])] = passage(row[1:])
        return out

    def passages_by_vector_id(self, kind: str, vector_ids: Sequence[str]) -> dict[str, Passage]:
        """Passages of a kind by their :attr:`~Passage.vector_id` (missing ones are absent)."""
        out: dict[str, Passage] = {}
        for vid in dict.fromkeys(vector_ids):
            path, _sep, pid = vid.rpartition("#^")
            rows = self._q(
                f"SELECT {COLS} FROM passages WHERE kind = ? AND path = ? AND id = ?",
                (kind, path, pid),
            )
            if rows:
                out[vid] = passage(rows[0])
        return out

    # -- vector search -------------------------------------------------------

    def passage_nearest(
        self,
        kind: str,
        scope: str,
        model: str,
        query: Sequence[float],
        n: int,
        *,
        since: float | None = None,
        until: float | None = None,
        role: str | None = None,
    ) -> list[tuple[Passage, float]] | None:
        """Exact nearest passages of a kind among a scope's kept ``model`` vectors.

        Passages not embedded yet (or embedded by another model) are not found.

        Args:
            kind: ``prose`` or ``event``.
            scope: The scope searched.
            model: The embedder of ``query``.
            query: The query vector.
            n: How many.
            since: Only passages created at or after this time.
            until: Only passages created before this time.
            role: Only events of this role.

        Returns:
            ``(passage, cosine)`` pairs, best first; ``None`` when the vector index
            must answer (more than ``exact_max_entries`` passages of the kind).
        """
        with self._lock:
            self._drop_if_written_elsewhere()
            key = (kind, model, scope)
            held: _Vectors | None = self._passage_cache.get(key)
            if key not in self._passage_cache:
                held = self._passage_cache[key] = self._passage_vectors(kind, model, scope)
        if held is None:
            return None
        if not len(held.rowids) or n <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).ravel()
        if q.shape[0] != held.matrix.shape[1]:
            return None  # another dimension: let the vector index say so
        norm = float(np.linalg.norm(q))
        if norm > 0:
            q = q / norm
        mask = np.ones(len(held.rowids), dtype=bool)
        if since is not None:
            mask &= held.created_at >= since
        if until is not None:
            mask &= held.created_at < until
        if role is not None:
            mask &= held.roles == role
        rows = np.flatnonzero(mask)
        if not len(rows):
            return []
        with blas_threads(1):
            sims = held.matrix[rows] @ q if len(rows) < len(mask) else held.matrix @ q
        if n < len(sims):
            part = np.argpartition(-sims, n - 1)[:n]
            top = part[np.argsort(-sims[part], kind="stable")]
        else:
            top = np.argsort(-sims, kind="stable")
        chosen = [int(held.rowids[rows[i]]) for i in top]
        found = self.passages_by_rowid(chosen)
        return [
            (found[r], float(sims[i]))
            for r, i in zip(chosen, top.tolist(), strict=True)
            if r in found
        ]

    def _passage_vectors(self, kind: str, model: str, scope: str) -> _Vectors | None:
        """The unit vectors of a scope's embedded passages of a kind (call locked)."""
        if self.passage_count(kind, scope) > self.exact_max_entries:
            return None
        rows = self._conn.execute(
            "SELECT rowid, created_at, role, vec FROM passages WHERE kind = ? AND scope = ? "
            "AND vec_model = ? AND vec_hash = text_hash AND vec IS NOT NULL ORDER BY rowid",
            (kind, scope, model),
        ).fetchall()
        if not rows:
            return _Vectors(
                np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32),
                np.zeros(0), np.zeros(0, dtype=object),
            )  # fmt: skip
        vecs = [np.frombuffer(r[3], dtype=_VEC_DTYPE) for r in rows]
        if len({v.shape[0] for v in vecs}) != 1:
            return None
        matrix = np.vstack(vecs).astype(np.float32, copy=True)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        return _Vectors(
            np.array([r[0] for r in rows], dtype=np.int64),
            matrix,
            np.array([r[1] for r in rows], dtype=np.float64),
            np.array([r[2] for r in rows], dtype=object),
        )

    # -- embedding -----------------------------------------------------------

    def passage_todo(self, kind: str, limit: int = 100_000) -> list[tuple[int, Passage]]:
        """``(rowid, passage)`` of the passages of a kind whose text has no vector yet,
        oldest first (read through the partial index ``passages_todo``: O(result)).

        As for entries, vectors of another embedder are not redone here (a
        ``reindex`` does that); exact search only ever reads ``model``'s.
        """
        rows = self._q(
            f"SELECT rowid, {COLS} FROM passages "
            "WHERE (vec_hash IS NULL OR vec_hash != text_hash) AND +kind = ? "
            "ORDER BY rowid LIMIT ?",
            (kind, limit),
        )
        return [(int(r[0]), passage(r[1:])) for r in rows]

    def mark_passages(
        self,
        done: Sequence[tuple[int, str]],
        model: str,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32],
    ) -> None:
        """Keep the vectors just written for ``(rowid, text_hash)`` pairs (a passage whose
        text changed meanwhile keeps waiting for its own)."""
        with self._lock:
            with immediate(self._conn):
                self._conn.executemany(
                    "UPDATE passages SET vec_model = ?, vec_hash = ?, vec = ? "
                    "WHERE rowid = ? AND text_hash = ?",
                    [
                        (model, h, vector_blob(v), rowid, h)
                        for (rowid, h), v in zip(done, vectors, strict=True)
                    ],
                )
            self._passage_cache.clear()

    def add_events(
        self,
        events: Sequence[Passage],
        model: str,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32],
    ) -> None:
        """Store event passages with their vectors (one each, just written to the
        vector index); an event stored already is replaced."""
        rows = []
        for ev, v in zip(events, vectors, strict=True):
            h = text_hash(ev.indexed_text)
            rows.append(
                (ev.id, ev.scope, ev.path, ev.line, ev.end_line, ev.category, ev.heading,
                 ev.role, ev.text, h, ev.created_at, model, h, vector_blob(v))
            )  # fmt: skip
        with self._lock:
            with immediate(self._conn):
                self._conn.executemany(
                    "INSERT OR REPLACE INTO passages (kind, id, scope, path, line, end_line,"
                    " category, heading, role, text, text_hash, created_at, vec_model, vec_hash,"
                    " vec) VALUES ('event',?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
            self._passage_cache.clear()

    def purge_event_passages(self, before: float) -> int:
        """Remove the event passages said before ``before``; their vectors are queued
        for deletion from the vector index. Returns how many were removed."""
        with self._lock:
            try:
                with immediate(self._conn):
                    n = purge_events(self._conn, before)
            finally:
                self._passage_cache.clear()
        return n


__all__ = ["PassageTable"]

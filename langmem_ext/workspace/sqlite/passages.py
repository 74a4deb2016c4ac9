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
from typing import Any

import numpy as np
from numpy.typing import NDArray

from langmem_ext.workspace.docs import _VEC_DTYPE
from langmem_ext.workspace.sql import passages as shared
from langmem_ext.workspace.sql.base import SQLITE
from langmem_ext.workspace.sql.passages import COLS, Passage, passage
from langmem_ext.workspace.sqlite._repo import immediate
from langmem_ext.workspace.sqlite.doc_table import DocTable
from langmem_ext.workspace.sqlite.passage_rows import purge_events


@dataclass(frozen=True)
class _Vectors:
    """The embedded passages of one kind, embedder and scope, as unit rows."""

    rowids: NDArray[np.int64]
    matrix: NDArray[np.float32]
    created_at: NDArray[np.float64]
    roles: NDArray[np.object_]


class PassageTable(DocTable, shared.SharedPassageVectors):
    """The doc table with the passages' searches and vector bookkeeping.

    Args:
        path: ``.index/index.db``.
        cache_max_entries: See :class:`~langmem_ext.workspace.sqlite.doc_table.DocTable`.
        exact_max_entries: See :class:`~langmem_ext.workspace.sqlite.doc_table.DocTable`;
            also the most passages of a kind a scope may have to be searched exactly.
    """

    dialect = SQLITE
    _replace_events = (
        "INSERT OR REPLACE INTO passages (kind, id, scope, path, line, end_line, category, "
        "heading, role, text, text_hash, created_at, vec_model, vec_hash, vec) "
        "VALUES ('event',?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    )

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

    def _kept(
        self, kind: str, scope: str, model: str, within: shared.Within
    ) -> shared.KeptVectors | None:
        """From the unit vectors held per kind, embedder and scope (read again after a
        write here or elsewhere), those ``within`` counts."""
        with self._lock:
            self._drop_if_written_elsewhere()
            key = (kind, model, scope)
            held: _Vectors | None = self._passage_cache.get(key)
            if key not in self._passage_cache:
                held = self._passage_cache[key] = self._passage_vectors(kind, model, scope)
        if held is None:
            return None
        mask = np.ones(len(held.rowids), dtype=bool)
        if within.since is not None:
            mask &= held.created_at >= within.since
        if within.until is not None:
            mask &= held.created_at < within.until
        if within.role is not None:
            mask &= held.roles == within.role
        if mask.all():
            return shared.KeptVectors(held.rowids, held.matrix)
        rows = np.flatnonzero(mask)
        return shared.KeptVectors(held.rowids[rows], held.matrix[rows])

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
                shared.NO_VECTORS.rowids,
                shared.NO_VECTORS.matrix,
                np.zeros(0),
                np.zeros(0, dtype=object),
            )
        matrix = shared.unit_rows([np.frombuffer(r[3], dtype=_VEC_DTYPE) for r in rows])
        if matrix is None:
            return None
        return _Vectors(
            np.array([r[0] for r in rows], dtype=np.int64),
            matrix,
            np.array([r[1] for r in rows], dtype=np.float64),
            np.array([r[2] for r in rows], dtype=object),
        )

    # -- embedding -----------------------------------------------------------

    def _write_passages(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._lock:
            with immediate(self._conn):
                self._conn.executemany(sql, rows)
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

"""Exact nearest neighbours over a scope's kept vectors, in memory.

For a scope whose every embedded entry has a kept vector (the copy of what Chroma
holds, see :mod:`~langmem_ext.workspace.sqlite.doc_table`), the cosine of the query
with all of them is one matrix-vector product: at a few thousand memories several
times faster than Chroma's HNSW query (at 10k of 512 dimensions about the same),
and exact (HNSW is approximate, and its answer can change with insertion order). The
doc table builds a :class:`ScopeMatrix` per scope when a search asks for one
(~9 ms per 1,000 entries) and keeps it up to date as vectors are written and
entries deleted or edited; Chroma answers for the scopes it does not cover (larger
than ``index.exact_search_max_entries``, where HNSW is the faster, or with a vector
not kept).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from langmem_ext.core.runtime import blas_threads


class ScopeMatrix:
    """Unit vectors of one scope's entries, one row each, kept up to date in place.

    Args:
        ids: Entry ids, one per row.
        vectors: Their vectors (any norm; rows of norm 0 never match).
    """

    def __init__(self, ids: Sequence[str], vectors: Sequence[NDArray[np.float32]]) -> None:
        self.ids: list[str] = list(ids)
        self._row = {entry_id: n for n, entry_id in enumerate(self.ids)}
        if len(self._row) != len(self.ids):
            raise ValueError("an id appears twice")
        if self.ids:
            rows = np.vstack(vectors).astype(np.float32, copy=True)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            np.divide(rows, norms, out=rows, where=norms > 0)
            self._data = rows
        else:
            self._data = np.zeros((0, 0), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def matrix(self) -> NDArray[np.float32]:
        """The live rows."""
        return self._data[: len(self.ids)]

    @property
    def dimension(self) -> int:
        """Vector dimension (0 when empty)."""
        return int(self._data.shape[1])

    def upsert(self, entry_id: str, vector: Sequence[float] | NDArray[np.floating]) -> None:
        """Set an entry's vector (a new entry gets a new row).

        Raises:
            ValueError: If ``vector`` has another dimension than the rows.
        """
        v = np.asarray(vector, dtype=np.float32).ravel()
        if self._data.shape[1] == 0:
            self._data = np.zeros((0, v.shape[0]), dtype=np.float32)
        if v.shape[0] != self._data.shape[1]:
            raise ValueError(f"vector has {v.shape[0]} dimensions, the index {self._data.shape[1]}")
        norm = float(np.linalg.norm(v))
        row = self._row.get(entry_id)
        if row is None:
            row = len(self.ids)
            if row == self._data.shape[0]:  # full: double the room
                grown = np.zeros((max(64, 2 * row), self._data.shape[1]), dtype=np.float32)
                grown[:row] = self._data[:row]
                self._data = grown
            self.ids.append(entry_id)
            self._row[entry_id] = row
        self._data[row] = v / norm if norm > 0 else v

    def remove(self, entry_id: str) -> None:
        """Drop an entry's row (the last row takes its place); unknown ids are ignored."""
        row = self._row.pop(entry_id, None)
        if row is None:
            return
        last = len(self.ids) - 1
        if row != last:
            moved = self.ids[last]
            self.ids[row] = moved
            self._row[moved] = row
            self._data[row] = self._data[last]
        self.ids.pop()

    def nearest(
        self, query: Sequence[float] | NDArray[np.floating], n: int
    ) -> list[tuple[str, float]]:
        """The ``n`` entries of highest cosine with ``query``, best first.

        Args:
            query: The query vector (any norm).
            n: How many.

        Returns:
            ``(id, cosine)`` pairs; ties keep row order.

        Raises:
            ValueError: If ``query`` has another dimension than the rows.
        """
        return self.nearest_many([query], n)[0]

    def nearest_many(
        self, queries: Sequence[Sequence[float] | NDArray[np.floating]], n: int
    ) -> list[list[tuple[str, float]]]:
        """:meth:`nearest` for several queries, in one matrix product.

        Raises:
            ValueError: If a query has another dimension than the rows.
        """
        if not self.ids or n <= 0 or not queries:
            return [[] for _ in queries]
        q = np.array(queries, dtype=np.float32)  # a copy: normalised in place
        if q.ndim != 2 or q.shape[1] != self.dimension:
            raise ValueError(
                f"queries of shape {q.shape}, the index has {self.dimension} dimensions"
            )
        norms = np.linalg.norm(q, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        q /= norms
        with blas_threads(1):  # a small product: more threads would only spin after it
            sims_all = self.matrix @ q.T
        total = len(self.ids)
        n = min(n, total)
        out = []
        for col in range(q.shape[0]):
            sims = sims_all[:, col]
            top = np.argpartition(-sims, n - 1)[:n] if n < total else np.arange(total)
            # best first; ties by id, so the answer does not depend on the order the
            # rows were added in (a matrix kept up to date vs one built fresh)
            ranked = sorted((-float(sims[i]), self.ids[i]) for i in top.tolist())
            out.append([(entry_id, -neg) for neg, entry_id in ranked])
        return out


__all__ = ["ScopeMatrix"]

"""Exact nearest neighbours over a scope's kept vectors, in memory.

For a scope whose every embedded entry has a kept vector (the copy of what Chroma
holds, see :mod:`~langmem_ext.workspace.keyword_index`), the cosine of the query
with all of them is one matrix-vector product: at 10k memories of 512 dimensions
about as fast as Chroma's HNSW query, at a few thousand several times faster, and
exact (HNSW is approximate, and its answer can change with insertion order). The
keyword index builds a :class:`ScopeMatrix` per scope when a search asks for one
and drops it on any write that changes a vector (rebuilding costs ~9 ms per 1,000
entries, hence ``index.exact_search_max_entries``, 5,000); Chroma answers for the
scopes it does not cover (larger ones, or a vector not kept).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from langmem_ext.embeddings import blas_threads


class ScopeMatrix:
    """Unit vectors of one scope's entries, one row each.

    Args:
        ids: Entry ids, one per row.
        vectors: Their vectors (any norm; rows of norm 0 never match).
    """

    def __init__(self, ids: Sequence[str], vectors: Sequence[NDArray[np.float32]]) -> None:
        self.ids = list(ids)
        if self.ids:
            rows = np.vstack(vectors).astype(np.float32, copy=False)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            np.divide(rows, norms, out=rows, where=norms > 0)
            self.matrix = rows
        else:
            self.matrix = np.zeros((0, 0), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dimension(self) -> int:
        """Vector dimension (0 when empty)."""
        return int(self.matrix.shape[1]) if len(self.ids) else 0

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
        if not self.ids or n <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).ravel()
        if q.shape[0] != self.dimension:
            raise ValueError(f"query has {q.shape[0]} dimensions, the index {self.dimension}")
        norm = float(np.linalg.norm(q))
        if norm > 0:
            q = q / norm
        with blas_threads(1):  # a small product: more threads would only spin after it
            sims = self.matrix @ q
        total = len(self.ids)
        n = min(n, total)
        top = np.argpartition(-sims, n - 1)[:n] if n < total else np.arange(total)
        order = top[np.lexsort((top, -sims[top]))]  # best first, ties by row
        return [(self.ids[i], float(sims[i])) for i in order]


__all__ = ["ScopeMatrix"]

"""One vector search for a scope: exact over the kept vectors, or Chroma.

A scope whose embedded entries all have kept copies, and that has at most
``index.exact_search_max_entries`` of them, is searched exactly in memory
(:meth:`~langmem_ext.workspace.sqlite.doc_table.DocTable.nearest_many`,
:mod:`~langmem_ext.workspace.vector_matrix`); any other scope by the vector index
(:mod:`~langmem_ext.workspace.vector_index`), which stays the index of record.
Callers ask this facade and never choose between the two themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langmem_ext.workspace.sqlite.doc_table import DocTable
from langmem_ext.workspace.vector_index import VectorHit, VectorIndex


class VectorSearch:
    """Nearest neighbours and stored vectors of one embedder's entries.

    Args:
        table: The doc table (its kept vectors answer exact search).
        vectors: The vector index (Chroma).
    """

    def __init__(self, table: DocTable, vectors: VectorIndex) -> None:
        self.table = table
        self.vectors = vectors

    @property
    def model_name(self) -> str:
        """The embedder whose vectors are searched."""
        return self.vectors.model_name

    def nearest_many(
        self, scope: str, queries: Sequence[Sequence[float]], n: int
    ) -> list[list[VectorHit]]:
        """The ``n`` nearest entries of ``scope`` to each query, best first.

        Hits of the exact search carry no embedding (read the kept copy with the doc).
        """
        exact = self.table.nearest_many(scope, self.model_name, queries, n)
        if exact is not None:
            return [[VectorHit(i, sim, None) for i, sim in found] for found in exact]
        return [self.vectors.query(scope, v, n, with_embeddings=False) for v in queries]

    def embeddings(self, scope: str, ids: Sequence[str]) -> dict[str, Any]:
        """The vector index's own vectors of ``ids`` (for entries without a kept copy)."""
        return self.vectors.embeddings(scope, ids)


__all__ = ["VectorSearch"]

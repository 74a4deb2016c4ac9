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

from langmem_ext.workspace.protocols import KeywordIndex, VectorIndex
from langmem_ext.workspace.sqlite.passage_rows import Passage, partition
from langmem_ext.workspace.vector_index import VectorHit

CHROMA_OVERFETCH = 4
"""A filtered passage search asks the vector index for this many times the passages
wanted, then keeps those the filter passes."""


class VectorSearch:
    """Nearest neighbours and stored vectors of one embedder's entries.

    Args:
        table: The doc table (its kept vectors answer exact search), with its passages.
        vectors: The vector index (Chroma).
    """

    def __init__(self, table: KeywordIndex, vectors: VectorIndex) -> None:
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

    def nearest_passages(
        self,
        kind: str,
        scope: str,
        query: Sequence[float],
        n: int,
        *,
        since: float | None = None,
        until: float | None = None,
        role: str | None = None,
    ) -> list[tuple[Passage, float]]:
        """The ``n`` passages of a kind (prose chunks, session events) of ``scope``
        nearest to ``query``, best first, among those created in ``[since, until)``
        and (events) said by ``role``.

        Exact over the kept vectors when the scope's passages of the kind are few
        enough (``exact_max_entries``); else the vector index's partition of the kind
        and scope is asked for more and the filter applied to what it returns.

        Returns:
            ``(passage, cosine)`` pairs.
        """
        exact = self.table.passage_nearest(
            kind, scope, self.model_name, query, n, since=since, until=until, role=role
        )
        if exact is not None:
            return exact
        filtered = since is not None or until is not None or role is not None
        hits = self.vectors.query(
            partition(kind, scope), query, n * (CHROMA_OVERFETCH if filtered else 1),
            with_embeddings=False,
        )  # fmt: skip
        found = self.table.passages_by_vector_id(kind, [h.id for h in hits])
        out: list[tuple[Passage, float]] = []
        for h in hits:
            p = found.get(h.id)
            if (
                p is None
                or p.scope != scope
                or (since is not None and p.created_at < since)
                or (until is not None and p.created_at >= until)
                or (role is not None and p.role != role)
            ):
                continue
            out.append((p, h.similarity))
        return out[:n]

    def embeddings(self, scope: str, ids: Sequence[str]) -> dict[str, Any]:
        """The vector index's own vectors of ``ids`` (for entries without a kept copy)."""
        return self.vectors.embeddings(scope, ids)


__all__ = ["VectorSearch"]

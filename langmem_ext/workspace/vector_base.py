"""What every vector index engine does the same around its own calls: the calls
that have nothing to do return at once, and vectors reach the engine as one
float32 matrix.

An engine derives from :class:`VectorIndexBase` and supplies ``_upsert``,
``_delete``, ``_query`` and ``_embeddings``; the public methods are those of
:class:`~langmem_ext.workspace.protocols.VectorIndex`, whose docstrings describe them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class VectorHit:
    """One vector match: id, cosine similarity, and the stored embedding."""

    id: str
    similarity: float
    embedding: Any  # a float32 numpy vector, or None


Matrix: TypeAlias = NDArray[np.float32]
"""Vectors as the rows of a float32 matrix (or one vector)."""
Metadatas: TypeAlias = Sequence[dict[str, Any]]
"""One non-empty metadata dict per vector."""


class VectorIndexBase:
    """The public methods of a vector index over an engine's ``_`` methods."""

    def upsert(
        self,
        scope: str,
        ids: Sequence[str],
        embeddings: Sequence[Sequence[float]] | NDArray[np.float32],
        metadatas: Metadatas,
    ) -> None:
        if not len(ids):
            return
        self._upsert(scope, list(ids), np.asarray(embeddings, dtype=np.float32), metadatas)

    @contextmanager
    def bulk(self, rows: int) -> Iterator[None]:
        yield

    def delete(self, scope: str, ids: Sequence[str]) -> None:
        if ids:
            self._delete(scope, list(ids))

    def query(
        self,
        scope: str,
        embedding: Sequence[float],
        n: int,
        *,
        with_embeddings: bool = True,
        ids: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        if n <= 0 or (ids is not None and not ids):
            return []
        vec = np.asarray(embedding, dtype=np.float32)
        return self._query(scope, vec, n, with_embeddings, None if ids is None else list(ids))

    def embeddings(self, scope: str, ids: Sequence[str]) -> dict[str, Any]:
        return self._embeddings(scope, list(ids)) if ids else {}

    def _upsert(self, scope: str, ids: list[str], matrix: Matrix, metadatas: Metadatas) -> None:
        """Write ``ids`` (not empty) with the rows of ``matrix`` and their metadata."""
        raise NotImplementedError

    def _delete(self, scope: str, ids: list[str]) -> None:
        """Remove ``ids`` (not empty; unknown ones are ignored)."""
        raise NotImplementedError

    def _query(
        self, scope: str, vec: Matrix, n: int, with_embeddings: bool, ids: list[str] | None
    ) -> list[VectorHit]:
        """The ``n`` (> 0) nearest of ``vec``, best first (``ids``: not empty)."""
        raise NotImplementedError

    def _embeddings(self, scope: str, ids: list[str]) -> dict[str, Any]:
        """The stored vectors of ``ids`` (not empty), float32 arrays."""
        raise NotImplementedError


__all__ = ["Matrix", "Metadatas", "VectorHit", "VectorIndexBase"]

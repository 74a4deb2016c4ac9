"""The LangGraph store's share of a workspace: its table and its ``kv.*`` collections.

:class:`KvSpace` is what :class:`~langmem_ext.store.chroma.ChromaMemoryStore` asks of the
workspace: the repository of its items (:class:`~langmem_ext.workspace.records.StoreItemsRepository`),
ledger transactions, and vector reads and writes in its own Chroma collections
(named by ``kv.`` partition keys, which no memory scope can spell), with writes under
the workspace lock and the cross-process generation kept, as the memory's own index
writes are.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from langmem_ext.workspace.protocols import Ledger, VectorIndex, WorkspaceLock
from langmem_ext.workspace.records import StoreItemsRepository
from langmem_ext.workspace.vector_index import VectorHit


class _Host(Protocol):
    """What the store space uses of its :class:`~langmem_ext.workspace.store.Workspace`."""

    ledger: Ledger
    lock: WorkspaceLock
    vectors: VectorIndex
    batch_size: int

    def refresh_if_stale(self) -> None: ...

    def bump_generation(self) -> None: ...


class KvSpace:
    """The store's items and vector partitions in one workspace.

    Args:
        workspace: The workspace.
    """

    def __init__(self, workspace: _Host) -> None:
        self._ws = workspace

    @property
    def items(self) -> StoreItemsRepository:
        """The items and their indexed texts (in the ledger)."""
        return self._ws.ledger.store

    @property
    def batch_size(self) -> int:
        """Texts embedded per call."""
        return max(1, self._ws.batch_size)

    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[None]:
        """A ledger write transaction; repository writes in the body commit together.

        Args:
            durable: ``False`` for marks that may be lost in an OS crash (see
                :meth:`~langmem_ext.workspace.sqlite.ledger.Ledger.transaction`).
        """
        with self._ws.ledger.transaction(durable=durable):
            yield

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the workspace lock, with the vector client current, for vector writes."""
        with self._ws.lock.hold():
            self._ws.refresh_if_stale()
            yield

    def refresh(self) -> None:
        """Reopen the vector client when another process wrote the index."""
        self._ws.refresh_if_stale()

    def count(self, partition: str) -> int:
        """Vectors held in a partition."""
        return self._ws.vectors.count(partition)

    def query(
        self,
        partition: str,
        vector: Sequence[float],
        n: int,
        *,
        ids: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """The ``n`` nearest vectors of a partition (without their embeddings).

        Args:
            partition: The partition key.
            vector: The query vector.
            n: How many.
            ids: Search only these vector ids (each must be held).
        """
        return self._ws.vectors.query(partition, vector, n, with_embeddings=False, ids=ids)

    def vectors(self, partition: str, ids: Sequence[str]) -> dict[str, Any]:
        """Held vectors of ``ids`` (float32 arrays; missing ids are absent)."""
        return self._ws.vectors.embeddings(partition, ids)

    def upsert(
        self,
        partition: str,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        """Write vectors and record that the index changed; call under :meth:`hold`."""
        self._ws.vectors.upsert(partition, ids, vectors, metadatas)
        self._ws.bump_generation()

    def delete(self, partition: str, ids: Sequence[str]) -> None:
        """Delete vectors (missing ids are ignored); call under :meth:`hold`."""
        self._ws.vectors.delete(partition, ids)

    def drop(self, partition: str) -> None:
        """Delete a partition's collection; call under :meth:`hold`."""
        self._ws.vectors.drop_all([partition])


__all__ = ["KvSpace"]

"""The vectors of :class:`~langmem_ext.store.chroma.ChromaMemoryStore`: derived, kept in step.

Each namespace's texts are embedded into a collection of its own (its partition,
:func:`~langmem_ext.store.chroma.partition_of`). The ledger is the truth: every text
carries a mark naming the text (and embedder) whose vector the collection holds.
:meth:`StoreVectors.sync` makes a collection hold exactly what the marks say (a
collection whose size differs from the marked texts, after a lost ``.index/``, a
reindex or a failed delete, is dropped and rebuilt) and embeds what is missing;
:meth:`StoreVectors.drop` deletes the vectors of texts that went.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from langmem_ext.memory import KvSpace

logger = logging.getLogger(__name__)

Warn = Callable[..., None]
"""``warn(key, msg, *args)``: log a warning once per key."""


class StoreVectors:
    """Keeps the store's vector partitions equal to the ledger's texts.

    Args:
        kv: The workspace's store space.
        embed: Embeds a batch of texts with the store's embedder.
        partition: The partition key of a namespace key.
        embedder: The mark of the store's embedder (``""``: the memory's).
        warn: Logs a warning once per key.
    """

    def __init__(
        self,
        kv: KvSpace,
        embed: Callable[[list[str]], list[list[float]]],
        partition: Callable[[str], str],
        embedder: str,
        warn: Warn,
    ) -> None:
        self._kv = kv
        self._embed = embed
        self._partition = partition
        self._embedder = embedder
        self._warn = warn

    def sync(self, namespaces: Sequence[str]) -> None:
        """Make each namespace's collection hold exactly the ledger's texts.

        Raises:
            Exception: What the embedder or the vector index raised (the caller
                degrades; the marks say what is still missing).
        """
        if not namespaces:
            return
        kv, items = self._kv, self._kv.items
        kv.refresh()
        for ns in namespaces:
            part = self._partition(ns)
            with kv.hold():  # upserts and their marks happen under the lock
                if kv.count(part) != items.embedded_count(ns):
                    logger.info("store vectors of namespace %r out of step; rebuilding them", ns)
                    kv.drop(part)
                    items.forget_vectors(ns)
            todo = items.unembedded(ns, self._embedder)
            for start in range(0, len(todo), kv.batch_size):
                chunk = todo[start : start + kv.batch_size]
                vectors = self._embed([t.text for t in chunk])
                with kv.hold():
                    kv.upsert(
                        part, [t.vec_id for t in chunk], vectors, [{"path": t.path} for t in chunk]
                    )
                    # The mark is derived: if an OS crash loses it, the text is
                    # re-embedded (or the size check rebuilds the namespace).
                    with kv.transaction(durable=False):
                        items.mark_embedded(chunk, self._embedder)

    def drop(self, dropped: Mapping[str, Sequence[str]]) -> None:
        """Delete vectors of removed texts; a failure is repaired by the next size check."""
        if not any(dropped.values()):
            return
        try:
            with self._kv.hold():
                for ns, vec_ids in dropped.items():
                    self._kv.delete(self._partition(ns), list(vec_ids))
        except Exception as e:
            self._warn(
                f"delete:{type(e).__name__}",
                "store vectors not deleted (%s); the next search rebuilds them",
                e,
            )


__all__ = ["StoreVectors"]

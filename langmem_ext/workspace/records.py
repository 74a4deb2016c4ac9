"""The ledger's records and the repositories a storage engine implements.

Engine-neutral: the row types services read and write, and one ``Protocol`` per
table family of the ledger (``state.db``). :mod:`langmem_ext.workspace.sqlite` is
the embedded implementation; a PostgreSQL engine implements the same protocols,
and services, which only call these methods, do not change.

Writes made inside ``Ledger.transaction()`` commit together; outside one, each
write commits on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class EntryState:
    """Ledger state of one entry."""

    id: str
    scope: str
    path: str
    category: str
    text_hash: str
    importance: float
    created_at: float
    updated_at: float
    last_access: float | None
    access_count: int
    source: str
    verified: bool
    deleted_at: float | None


@dataclass(frozen=True)
class PendingRow:
    """Ledger row of one pending item."""

    id: str
    scope: str
    text: str
    target: str
    category: str
    importance: float
    source: str
    created_at: float
    expires_at: float
    status: str
    entry_id: str
    resolved_at: float | None
    said_at: float
    """When the fact was stated (the memory's ``created_at`` once confirmed)."""


class MetaRepository(Protocol):
    """Small key/value settings of the workspace (``meta``)."""

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None``."""
        ...

    def set(self, key: str, value: str) -> None:
        """Write ``key`` (replacing its value)."""
        ...


# -- the LangGraph store's items (store_items, store_texts) ----------------------------


@dataclass(frozen=True)
class StoredItem:
    """One live item of the LangGraph store.

    Attributes:
        id: The item's row id (stable while the item lives).
        ns: Its namespace, labels joined by ``.`` (labels have no dots).
        key: Its key in the namespace.
        value: Its value (a JSON object).
        created_at: When it was first put, epoch seconds (kept by overwrites).
        updated_at: When it was last put, epoch seconds.
    """

    id: int
    ns: str
    key: str
    value: dict[str, Any]
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class ItemText:
    """One text of an item that is embedded and keyword-indexed.

    Attributes:
        path: Where in the value it comes from (``"$"``, ``"a.b"``, ``"tags[*].0"``).
        vec_id: The id of its vector in the namespace's vector collection.
        text: The text.
        text_hash: A hash of the text (a changed hash needs a new vector).
    """

    path: str
    vec_id: str
    text: str
    text_hash: str


@dataclass(frozen=True)
class ItemWrite:
    """A put of the store: a value (as JSON text) and its texts, or a delete.

    Attributes:
        ns: The namespace key.
        key: The item key.
        value_json: The value as JSON text; ``None`` deletes the item.
        texts: The value's indexed texts (they replace the item's old ones).
        ttl_minutes: Minutes the item lives after a write or refreshing read
            (``None``: forever).
    """

    ns: str
    key: str
    value_json: str | None
    texts: tuple[ItemText, ...] = ()
    ttl_minutes: float | None = None


@dataclass(frozen=True)
class UnembeddedText:
    """A text whose vector the namespace's collection does not hold (yet)."""

    item_id: int
    path: str
    vec_id: str
    text: str
    text_hash: str


@dataclass(frozen=True)
class TextMatch:
    """An indexed text of a live item: where its vector lives, and what a ranking needs.

    Attributes:
        item_id: The item's row id.
        ns: The item's namespace key.
        vec_id: The id of the text's vector in the namespace's collection.
        text: The text.
        created_at: The item's ``created_at``.
    """

    item_id: int
    ns: str
    vec_id: str
    text: str
    created_at: float


@dataclass(frozen=True)
class KeywordHit:
    """An item the keyword index found: its row id and BM25 score (bigger is better)."""

    item_id: int
    score: float


class StoreItemsRepository(Protocol):
    """The LangGraph store's items, their indexed texts and the texts' keyword index.

    SQLite: ``store_items``, ``store_texts`` and ``store_fts``; the keyword index
    changes in the same write as the texts.

    Namespaces are keys (labels joined by ``.``); a ``prefix`` key selects its own
    namespace and every namespace below it (``""``: all). Expired items (``now`` at or
    past their expiry) are never returned, even before a sweep. ``flt`` is a store
    filter with the semantics of :mod:`langmem_ext.workspace.item_filter`; an engine
    runs it in its queries. Writes made inside ``Ledger.transaction()`` commit together.

    Each text carries a mark naming the text (and embedder) whose vector the vector
    collection holds for it: ``text_hash + embedder`` (``embedder``: ``""`` for the
    memory's embedder, else ``":<tag>"``), or none.
    """

    def get(self, ns: str, key: str, now: float) -> StoredItem | None:
        """The live item ``key`` of namespace ``ns``, or ``None``."""
        ...

    def page(
        self,
        prefix: str,
        flt: Mapping[str, Any] | None,
        now: float,
        limit: int,
        offset: int = 0,
    ) -> list[StoredItem]:
        """Live items under ``prefix`` passing ``flt``, newest first (``updated_at``)."""
        ...

    def by_ids(self, item_ids: Sequence[int]) -> dict[int, StoredItem]:
        """These items (live or not), by row id; ids that are gone are absent."""
        ...

    def texts_of(self, item_ids: Sequence[int]) -> list[TextMatch]:
        """The indexed texts of these items."""
        ...

    def indexed_namespaces(self, prefix: str) -> list[str]:
        """The namespaces under ``prefix`` holding indexed texts."""
        ...

    def texts_by_vector(
        self, vec_ids: Sequence[str], flt: Mapping[str, Any] | None, now: float
    ) -> list[TextMatch]:
        """The texts of these vector ids whose item is live and passes ``flt``."""
        ...

    def vector_ids(
        self, ns: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[str]:
        """Vector ids of marked texts of ``ns`` whose item is live and passes ``flt``.

        At most ``limit`` (the caller asks for one more than it can use, to see
        whether there are more).
        """
        ...

    def keyword_search(
        self, prefix: str, query: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[KeywordHit]:
        """BM25 search of the items' texts under ``prefix`` passing ``flt``, best first.

        The query and the texts are tokenised by :mod:`langmem_ext.text`; an item
        matches when it holds any query token.
        """
        ...

    def full_match_score(self, query: str) -> float:
        """The BM25 a document of average length holding every query token once scores.

        That is the sum of the tokens' IDFs over all items: fusion divides keyword
        scores by a share of it (see :attr:`~langmem_ext.retrieval.candidate.Candidate.bm25_full`).
        """
        ...

    def namespaces(self, now: float) -> list[str]:
        """The namespaces holding live items."""
        ...

    def write(self, puts: Sequence[ItemWrite], now: float) -> dict[str, list[str]]:
        """Apply puts and deletes (keys are distinct).

        An overwrite keeps ``created_at`` unless the old item had expired; a text
        whose hash is unchanged keeps its vector mark.

        Returns:
            Namespace -> vector ids of the texts that went (their vectors are stale).
        """
        ...

    def sweep(self, now: float) -> tuple[int, dict[str, list[str]]]:
        """Delete expired items.

        Returns:
            How many items went, and namespace -> vector ids of their texts.
        """
        ...

    def refresh_ttl(self, item_ids: Sequence[int], now: float) -> None:
        """Restart the TTL of these items (those with one) at ``now``."""
        ...

    def embedded_count(self, ns: str) -> int:
        """How many texts of ``ns`` carry a vector mark (the collection's expected size)."""
        ...

    def forget_vectors(self, ns: str) -> None:
        """Clear the vector marks of ``ns`` (its collection was dropped)."""
        ...

    def unembedded(self, ns: str, embedder: str) -> list[UnembeddedText]:
        """Texts of ``ns`` without a vector of their current text by ``embedder``."""
        ...

    def mark_embedded(self, texts: Sequence[UnembeddedText], embedder: str) -> None:
        """Mark these texts' vectors (by ``embedder``) as held; skips changed texts."""
        ...


__all__ = [
    "EntryState",
    "ItemText",
    "ItemWrite",
    "KeywordHit",
    "MetaRepository",
    "PendingRow",
    "StoreItemsRepository",
    "StoredItem",
    "TextMatch",
    "UnembeddedText",
]

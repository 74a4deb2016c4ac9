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
class IndexedText:
    """Where an item's text lives in the vector collections, and the text itself."""

    item_id: int
    ns: str
    vec_id: str
    text: str
    tokens: str


class StoreItemsRepository(Protocol):
    """The LangGraph store's items and their indexed texts (``store_items``, ``store_texts``).

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

    def matching(self, prefix: str, flt: Mapping[str, Any] | None, now: float) -> list[StoredItem]:
        """Every live item under ``prefix`` passing ``flt``, newest first."""
        ...

    def texts_of(self, item_ids: Sequence[int]) -> list[IndexedText]:
        """The indexed texts of these items."""
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
    "IndexedText",
    "ItemText",
    "ItemWrite",
    "MetaRepository",
    "PendingRow",
    "StoreItemsRepository",
    "StoredItem",
    "UnembeddedText",
]

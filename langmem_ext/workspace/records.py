"""The ledger's records and the repositories a storage engine implements.

Engine-neutral: the row types services read and write, and one ``Protocol`` per
table family of the ledger (``state.db``). :mod:`langmem_ext.workspace.sqlite` is
the embedded implementation; a PostgreSQL engine implements the same protocols,
and services, which only call these methods, do not change.

Writes made inside ``Ledger.transaction()`` commit together; outside one, each
write commits on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


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


__all__ = ["EntryState", "MetaRepository", "PendingRow"]

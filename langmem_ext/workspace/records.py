"""The ledger's records and the repositories a storage engine implements.

Engine-neutral: the row types services read and write, and one ``Protocol`` per
table family of the ledger (``state.db``). :mod:`langmem_ext.workspace.sqlite` is
the embedded implementation; a PostgreSQL engine implements the same protocols,
and services, which only call these methods, do not change.

Writes made inside ``Ledger.transaction()`` commit together; outside one, each
write commits on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple, Protocol


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


class EntryActivity(NamedTuple):
    """What decay reads of one live entry (a narrow read: decay visits every entry)."""

    id: str
    category: str
    importance: float
    created_at: float
    last_active: float
    """The latest of its creation, text edit (``updated_at``) and last access."""


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


@dataclass(frozen=True)
class HistoryRow:
    """One edit of an entry (``entry_history``)."""

    entry_id: str
    scope: str
    op: str
    """``add``, ``update``, ``delete``, ``hand-add``, ``hand-edit``, ``move`` or ``removed``;
    the lifecycle (:mod:`langmem_ext.memory.lifecycle`) adds ``decay`` and ``review-keep``
    (``old_text`` / ``new_text`` hold the importance before and after, e.g. ``"1.0000"``)
    and ``promote`` (both hold the entry's text)."""
    old_text: str | None
    new_text: str | None
    at: float


class MetaRepository(Protocol):
    """Small key/value settings of the workspace (``meta``)."""

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None``."""
        ...

    def set(self, key: str, value: str) -> None:
        """Write ``key`` (replacing its value)."""
        ...


class EntryRepository(Protocol):
    """Per-entry state (``entries``) and the edit history of entries (``entry_history``)."""

    def get(self, entry_id: str, *, include_deleted: bool = False) -> EntryState | None:
        """The state of one entry (live only unless ``include_deleted``), or ``None``."""
        ...

    def many(self, ids: Iterable[str]) -> dict[str, EntryState]:
        """States of many live entries, by id (unknown and deleted ids are left out)."""
        ...

    def of_scope(self, scope: str) -> list[EntryState]:
        """All live entries of a scope, oldest first."""
        ...

    def all_ids(self) -> set[str]:
        """Every id the ledger knows (live or deleted): never to be reused."""
        ...

    def exists(self, entry_id: str) -> bool:
        """Whether the ledger knows the id (live or deleted)."""
        ...

    def live_ids_of_path(self, path: str) -> list[str]:
        """Ids of the live entries the ledger places in the file ``path``."""
        ...

    def live_ids_outside(self, path: str) -> set[str]:
        """Ids of the live entries of every other file than ``path``."""
        ...

    def upsert(self, state: EntryState) -> None:
        """Insert or replace an entry's state."""
        ...

    def mark_deleted(self, entry_id: str, at: float) -> None:
        """Mark an entry deleted at ``at`` (its row and history are kept)."""
        ...

    def touch(self, entry_id: str, *, importance: float, at: float) -> None:
        """Set an entry's importance and last access, counting one more access."""
        ...

    def record_history(self, row: HistoryRow) -> None:
        """Append one edit to an entry's history."""
        ...

    def record_history_many(self, rows: Iterable[HistoryRow]) -> None:
        """Append many edits (one statement per row, in one transaction)."""
        ...

    def history(self, entry_id: str, scope: str) -> list[HistoryRow]:
        """The edits of an entry of ``scope``, oldest first (empty when none)."""
        ...

    def scopes(self) -> list[str]:
        """Scopes that have live entries, sorted."""
        ...

    def activity(self, scope: str) -> list[EntryActivity]:
        """The live entries of a scope that decay may change (not ``system`` / ``core``)."""
        ...

    def set_importances(self, changes: Iterable[tuple[str, float]]) -> None:
        """Set the importance of entries ``(id, importance)``, nothing else (decay, review).

        Unlike :meth:`touch` the last access and the access count stay as they are.
        """
        ...

    def mark_accessed(self, ids: Iterable[str], *, scope: str, at: float) -> int:
        """Record that live entries of ``scope`` reached the model at ``at`` (a recall).

        Sets their last access to ``at`` (never back in time) and counts one access
        each; ids of other scopes, deleted or unknown ids are left alone.

        Returns:
            How many entries were marked.
        """
        ...


class PendingRepository(Protocol):
    """Pending items waiting for confirmation (``pending``)."""

    def insert(self, row: PendingRow) -> None:
        """Store a new pending item."""
        ...

    def get(self, pending_id: str, *, scope: str | None = None) -> PendingRow | None:
        """One item by id (only in ``scope`` when given), or ``None``."""
        ...

    def of_scope(self, scope: str, status: str = "pending") -> list[PendingRow]:
        """Items of a scope with ``status``, oldest first."""
        ...

    def by_entry(self, entry_ids: Iterable[str]) -> dict[str, PendingRow]:
        """Items that carry these entry ids (any status), by entry id."""
        ...

    def ids_with_status(self, ids: Iterable[str], status: str) -> set[str]:
        """Those of ``ids`` whose item has ``status``."""
        ...

    def count_open(self, scope: str, now: float) -> int:
        """Items of a scope still pending and not expired at ``now``."""
        ...

    def has_text(self, scope: str, text: str) -> bool:
        """Whether an item of the scope (any status) has exactly this text."""
        ...

    def resolve(self, pending_id: str, status: str, at: float) -> None:
        """Set an item's status (``confirmed`` / ``rejected``) resolved at ``at``."""
        ...

    def expire(self, ids: Iterable[str], at: float) -> None:
        """Mark expired those of ``ids`` still pending (atomically)."""
        ...

    def confirm_entries(self, entry_ids: Iterable[str], at: float) -> None:
        """Mark confirmed the still-pending items of these entry ids (atomically)."""
        ...

    def confirm_written(self, scope: str | None = None) -> list[str]:
        """Mark confirmed the pending items whose entry is already written.

        A confirm killed between the Markdown write and the pending update leaves
        its item ``pending`` although the entry is stored (in the files, and in the
        ledger once they are synced). This settles such items (atomically), so a
        later reject cannot report ``rejected`` for a stored memory.

        Args:
            scope: Only this scope (all when ``None``).

        Returns:
            The pending ids marked confirmed.
        """
        ...


class BoostRepository(Protocol):
    """Boosts of entries' importance (``boosts``)."""

    def record(self, entry_id: str, amount: float, at: float, reason: str | None) -> None:
        """Record one boost."""
        ...

    def last_at(self, entry_id: str) -> float | None:
        """When the entry was last boosted, or ``None``."""
        ...

    def total_since(self, entry_id: str, since: float) -> float:
        """Importance added to the entry by boosts after ``since``."""
        ...

    def times(self, entry_id: str) -> list[float]:
        """When the entry was boosted (epoch seconds), oldest first."""
        ...


__all__ = [
    "BoostRepository",
    "EntryActivity",
    "EntryRepository",
    "EntryState",
    "HistoryRow",
    "MetaRepository",
    "PendingRepository",
    "PendingRow",
]

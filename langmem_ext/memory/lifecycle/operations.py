"""The lifecycle's writes: decay, promotion, review resets, job deletes, recall access.

The decay rules as operations on a workspace (the table itself is the pure
:func:`~langmem_ext.memory.lifecycle.decay.decay_outcome`):

- :func:`decay_scope` applies the table to every live entry of a scope for the
  calendar days since the scope's last decay day, in one ledger transaction
  together with the new day (``meta`` key ``lifecycle.decay_day:<scope>``), so a
  run killed midway applied all of a scope or nothing, and a second run on the
  same day changes nothing. The new importances are mirrored to the keyword index;
  a fact the decay makes due for review gets a ``decay`` history row (old and new
  importance): the daily steps in between are not written one by one (every idle
  entry changes every day; its importance and the scope's decay day tell them).
- :func:`catch_up_on_open` runs that decay for every scope when a ``Memory`` opens
  and the last decay is over 24 hours old, on a
  background thread (:func:`start_catch_up`) and only if the workspace lock is free
  at once; deletions and reviews wait for ``maintain``.
- :func:`promote` moves a fact's bullet to the ``## Core`` section of its file and
  makes it ``core``; :func:`reset_importance` is a decay review's KEEP;
  :func:`delete_entries` is the bulk delete of jobs and reviews, which never
  deletes ``core`` or ``system`` memories.
- :func:`record_access` sets ``last_access`` of the memories a recall put in front
  of the model (the graph's preflight recall, the middleware, ``memory_search``),
  so a memory in use does not decay.

Every function takes the :class:`~langmem_ext.Memory` whose workspace it changes;
the maintenance run that calls them is :mod:`langmem_ext.memory.lifecycle.maintenance`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from langmem_ext.core.errors import EntryNotFoundError
from langmem_ext.memory.lifecycle.decay import NEVER_DECAY, day_of, decay_outcome
from langmem_ext.workspace.records import EntryActivity, EntryState, HistoryRow

if TYPE_CHECKING:
    from langmem_ext.core.config import Settings
    from langmem_ext.memory.leases import JobLeases
    from langmem_ext.memory.types import PendingItem, SearchHit
    from langmem_ext.workspace.store import Progress, SyncReport, Workspace

logger = logging.getLogger(__name__)


class PurgedLog(Protocol):
    """What ``maintain`` uses of a memory's session hot log: its TTL purge."""

    def purge(self, *, now: float | None = None) -> int:
        """Delete rows older than the TTL at ``now``; return how many."""
        ...


class MemoryHost(Protocol):
    """What the lifecycle uses of a memory service (:class:`~langmem_ext.Memory` is one).

    The lifecycle modules name this protocol, not ``Memory``: ``Memory``'s own
    ``maintain`` / ``review`` delegate to them, and the imports run one way.
    """

    settings: Settings
    workspace: Workspace
    leases: JobLeases

    def delete(self, entry_id: str, *, scope: str | None = None) -> None:
        """Forget one entry (bullet, ledger with history, index)."""
        ...

    def search(
        self, query: str, *, scope: str | None = None, k: int | None = None, intent: Any = "auto"
    ) -> list[SearchHit]:
        """Search a scope."""
        ...

    def sync(self, *, scope: str | None = None, progress: Progress | None = None) -> SyncReport:
        """Pick up hand edits of a scope."""
        ...

    def list_pending(self, *, scope: str | None = None) -> list[PendingItem]:
        """Pending items of a scope (settled and expired by the clock)."""
        ...

    def expire_pending(
        self, *, scope: str | None = None, now: float | None = None
    ) -> list[PendingItem]:
        """Expire the pending saves of a scope past their TTL at ``now``."""
        ...

    def on_close(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` when the memory closes."""
        ...

    @property
    def session_log(self) -> PurgedLog:
        """The memory's session hot log (``maintain`` purges its TTL)."""
        ...


DECAY_DAY_KEY = "lifecycle.decay_day:{scope}"
"""``meta`` key: the last day (ISO) decay was applied to a scope."""
DECAY_AT_KEY = "lifecycle.decay_at"
"""``meta`` key: when decay last ran over every scope (epoch seconds)."""
DECAY_JOB = "decay"
"""Lease name of decay on open (over every scope)."""
CATCH_UP_AFTER_S = 86400.0
"""A ``Memory`` opening over this long after the last decay runs it (24 h)."""


class ImportanceChange(NamedTuple):
    """One entry whose importance decay changed.

    Attributes:
        entry_id: The entry.
        scope: Its scope.
        category: Its category.
        before: Importance before.
        after: Importance after.
        outcome: What the decay table said (``decayed`` or ``review``; ``review``
            means a fact fell below ``lifecycle.fact_review_below``).
    """

    entry_id: str
    scope: str
    category: str
    before: float
    after: float
    outcome: str


def last_active(state: EntryState) -> float:
    """When an entry was last created, edited or recalled (its idle time runs from here)."""
    return max(state.created_at, state.updated_at, state.last_access or 0.0)


def _day(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def decay_day(memory: MemoryHost, scope: str) -> date | None:
    """The last day decay was applied to ``scope`` (``None``: never)."""
    return _day(memory.workspace.ledger.meta.get(DECAY_DAY_KEY.format(scope=scope)))


def _changes(
    rows: Sequence[EntryActivity], memory: MemoryHost, scope: str, last: date | None, today: date
) -> list[ImportanceChange]:
    lc = memory.settings.lifecycle
    out: list[ImportanceChange] = []
    for row in rows:
        o = decay_outcome(
            category=row.category,
            importance=row.importance,
            created_at=row.created_at,
            last_active=row.last_active,
            last_run=last,
            today=today,
            settings=lc,
        )
        if o.steps and o.importance != row.importance:
            out.append(
                ImportanceChange(
                    row.id, scope, row.category, row.importance, o.importance, o.action
                )
            )
    return out


def decay_scope(memory: MemoryHost, scope: str, *, today: date) -> list[ImportanceChange] | None:
    """Apply the decay table to a scope for the days since its last decay day.

    Holds the workspace lock; the new importances and the scope's decay day commit in
    one ledger transaction (with a ``decay`` history row for each fact the decay made
    due for review), then the keyword index mirrors them. Deletion of old episodes is not done here (see
    :func:`~langmem_ext.memory.lifecycle.maintenance.maintain`).

    Args:
        memory: The memory.
        scope: The scope.
        today: The day being processed (local calendar day).

    Returns:
        The importance changes, or ``None`` when the scope's decay already ran on
        ``today`` (or later).
    """
    ws = memory.workspace
    key = DECAY_DAY_KEY.format(scope=scope)
    with ws.lock.hold():
        last = _day(ws.ledger.meta.get(key))
        if last is not None and last >= today:
            return None
        changes = _changes(ws.ledger.entries.activity(scope), memory, scope, last, today)
        importances = [(c.entry_id, c.after) for c in changes]
        at = time.time()
        with ws.ledger.transaction():
            ws.ledger.entries.set_importances(importances)
            ws.ledger.entries.record_history_many(
                HistoryRow(c.entry_id, scope, "decay", f"{c.before:.4f}", f"{c.after:.4f}", at)
                for c in changes
                if c.outcome == "review"
            )
            ws.ledger.meta.set(key, today.isoformat())
        ws.keyword.set_importances(importances)
    if changes:
        logger.info("decay of %s on %s: %d memories", scope, today.isoformat(), len(changes))
    return changes


def decay_all(memory: MemoryHost, *, now: float | None = None) -> list[ImportanceChange]:
    """Decay every scope with live entries for the days up to ``now``'s day.

    Records the run's time (``lifecycle.decay_at``), which :func:`catch_up_on_open`
    reads.

    Args:
        memory: The memory.
        now: The time (epoch seconds; default now).

    Returns:
        The importance changes of every scope.
    """
    ts = time.time() if now is None else now
    today = day_of(ts)
    changes: list[ImportanceChange] = []
    for scope in memory.workspace.ledger.entries.scopes():
        changes.extend(decay_scope(memory, scope, today=today) or [])
    memory.workspace.ledger.meta.set(DECAY_AT_KEY, repr(ts))
    return changes


def decay_due(memory: MemoryHost, now: float | None = None) -> bool:
    """Whether the last decay over every scope is over 24 hours old (or never ran)."""
    ts = time.time() if now is None else now
    last = memory.workspace.ledger.meta.get(DECAY_AT_KEY)
    try:
        return last is None or ts - float(last) >= CATCH_UP_AFTER_S
    except ValueError:
        return True


def catch_up_on_open(memory: MemoryHost) -> list[ImportanceChange] | None:
    """Decay on open when the last run is over 24 h old.

    Cheap when not due (one ``meta`` read). When due, runs :func:`decay_all` only if
    the ``decay`` lease and the workspace lock are free at once (another process
    decaying, or another writer: the next open or ``maintain`` does it) and the
    workspace has entries (opening an empty or read-only workspace writes nothing).
    Off with ``lifecycle.decay_on_open``.

    Returns:
        The changes, or ``None`` when nothing ran.
    """
    if not memory.settings.lifecycle.decay_on_open or not decay_due(memory):
        return None
    ws = memory.workspace
    if not ws.ledger.entries.scopes():
        return None
    with memory.leases.held(DECAY_JOB, wait=False) as leased:
        if not leased:
            return None
        with ws.lock.try_hold() as held:
            if not held:
                logger.info("decay on open skipped: another writer holds the workspace lock")
                return None
            if not decay_due(memory):  # another process ran it meanwhile
                return None
            return decay_all(memory)


def start_catch_up(memory: MemoryHost) -> threading.Thread | None:
    """:func:`catch_up_on_open` on a background thread, when it is due.

    The check is one ``meta`` read on the caller's thread; the decay itself runs
    beside the caller (a 10k-memory scope takes ~0.2 s), so opening a workspace and
    its first search do not wait for it. ``Memory.close`` waits for the thread.

    Returns:
        The thread, or ``None`` when nothing is due.
    """
    if not memory.settings.lifecycle.decay_on_open or not decay_due(memory):
        return None
    if not memory.workspace.ledger.entries.scopes():
        return None

    def run() -> None:
        try:
            catch_up_on_open(memory)
        except Exception:  # never fail the memory over it: maintain() retries
            logger.exception("decay on open failed; the next maintain() runs it")

    thread = threading.Thread(target=run, name="langmem-decay-on-open", daemon=True)
    thread.start()
    memory.on_close(thread.join)
    return thread


def mirror_importances(memory: MemoryHost, scope: str) -> int:
    """Make the keyword index hold the ledger's importances of a scope's entries.

    The ledger is written first; a process killed before the index followed leaves
    the index's copy behind until this repair (``maintain`` runs it per scope).

    Returns:
        How many index rows were corrected.
    """
    ws = memory.workspace
    states = {st.id: st.importance for st in ws.ledger.entries.of_scope(scope)}
    docs = ws.keyword.scope_docs(scope)
    fix = [(d.id, states[d.id]) for d in docs if d.id in states and d.importance != states[d.id]]
    ws.keyword.set_importances(fix)
    return len(fix)


def _state(memory: MemoryHost, entry_id: str, scope: str) -> EntryState:
    st = memory.workspace.ledger.entries.get(str(entry_id).strip())
    if st is None or st.scope != scope:
        raise EntryNotFoundError(f"No memory {entry_id!r} in this scope.")
    return st


def promote(memory: MemoryHost, entry_id: str, *, scope: str) -> EntryState:
    """Make a memory ``core``: its bullet moves to ``## Core`` of its Markdown file.

    Its importance becomes at least ``lifecycle.core_threshold``; the ledger keeps a
    ``promote`` history row. A ``core`` or ``system`` memory is left as it is.

    Args:
        memory: The memory.
        entry_id: The entry.
        scope: Its scope.

    Returns:
        The entry's new ledger state.

    Raises:
        EntryNotFoundError: No such live entry in the scope (or its file lost it).
    """
    return recategorize(
        memory,
        entry_id,
        "core",
        scope=scope,
        op="promote",
        min_importance=memory.settings.lifecycle.core_threshold,
        keep=NEVER_DECAY,
    )


def recategorize(
    memory: MemoryHost,
    entry_id: str,
    category: str,
    *,
    scope: str,
    op: str = "category",
    min_importance: float | None = None,
    keep: Iterable[str] = (),
) -> EntryState:
    """Move a memory's bullet to its new ``category``'s section of the same file.

    The ledger keeps an ``op`` history row (text unchanged); the id stays.

    Args:
        memory: The memory.
        entry_id: The entry.
        category: The new category (already validated).
        scope: Its scope.
        op: The history row's operation (``category``; ``promote`` for :func:`promote`).
        min_importance: Raise the importance to at least this.
        keep: Categories left as they are (the entry is returned unchanged).

    Returns:
        The entry's new ledger state.

    Raises:
        EntryNotFoundError: No such live entry in the scope (or its file lost it).
    """
    ws = memory.workspace
    with ws.lock.hold():
        st = _state(memory, entry_id, scope)
        if st.category == category or st.category in set(keep):
            return st
        importance = st.importance if min_importance is None else max(st.importance, min_importance)
        try:
            ws.move_entry(
                scope, ws.layout.root / st.path, st.id, category, op=op, importance=importance
            )
        except KeyError:
            raise EntryNotFoundError(
                f"Memory {entry_id!r} is no longer in {st.path}; its category is unchanged."
            ) from None
        new = replace(st, category=category, importance=importance)
    ws.flush_vectors()
    logger.info("memory %s moved to %s (%s)", st.id, category, op)
    return new


def reset_importance(memory: MemoryHost, entry_id: str, *, scope: str, importance: float) -> float:
    """Set one entry's importance (a decay review's KEEP), with a ``review-keep`` history row.

    Returns:
        The importance before.
    """
    ws = memory.workspace
    with ws.lock.hold():
        st = _state(memory, entry_id, scope)
        with ws.ledger.transaction():
            ws.ledger.entries.set_importances([(st.id, importance)])
            ws.ledger.entries.record_history(
                HistoryRow(
                    st.id,
                    scope,
                    "review-keep",
                    f"{st.importance:.4f}",
                    f"{importance:.4f}",
                    time.time(),
                )
            )
        ws.keyword.set_importances([(st.id, importance)])
    return st.importance


def delete_entries(
    memory: MemoryHost, entry_ids: Iterable[str], *, scope: str
) -> tuple[list[str], list[str]]:
    """Delete memories the way :meth:`Memory.delete <langmem_ext.Memory.delete>` does,
    skipping ``core`` and ``system`` ones (the bulk delete of jobs and reviews).

    Each deletion removes the bullet from its Markdown file, marks the ledger row
    deleted with a ``delete`` history row and drops it from the index.

    Args:
        memory: The memory.
        entry_ids: The entries.
        scope: Their scope; ids of other scopes and unknown ids are skipped.

    Returns:
        ``(deleted ids, skipped ids)``.
    """
    deleted: list[str] = []
    skipped: list[str] = []
    for entry_id in entry_ids:
        st = memory.workspace.ledger.entries.get(str(entry_id).strip())
        if st is None or st.scope != scope or st.category in NEVER_DECAY:
            skipped.append(entry_id)
            continue
        try:
            memory.delete(st.id, scope=scope)
        except EntryNotFoundError:
            skipped.append(entry_id)
            continue
        deleted.append(st.id)
    if skipped:
        logger.info(
            "bulk delete in %s skipped %d memories (core, system or unknown)", scope, len(skipped)
        )
    return deleted, skipped


def record_access(
    memory: MemoryHost, entry_ids: Iterable[str], *, scope: str, at: float | None = None
) -> int:
    """Record that memories reached the model (``last_access``, ``access_count``).

    One ledger transaction that does not wait for the disk (like the hot log): an
    OS crash may lose the latest access times, which only lets those memories decay
    a day sooner; a killed process loses nothing.

    Args:
        memory: The memory.
        entry_ids: Ids of the recalled memories (unknown and other scopes' ids are
            ignored).
        scope: The scope the recall searched.
        at: When (default now).

    Returns:
        How many memories were marked.
    """
    ids = [str(i) for i in entry_ids if i]
    if not ids:
        return 0
    ledger = memory.workspace.ledger
    with ledger.transaction(durable=False):
        return ledger.entries.mark_accessed(ids, scope=scope, at=time.time() if at is None else at)


def record_recall(
    memory: MemoryHost, entry_ids: Iterable[str], *, scope: str, at: float | None = None
) -> None:
    """:func:`record_access` for a recall surface: a failure is logged, never raised
    (an answer must not fail because an access time was not written)."""
    try:
        record_access(memory, entry_ids, scope=scope, at=at)
    except Exception as e:
        logger.warning("last access of recalled memories not recorded: %s", e)


__all__ = [
    "CATCH_UP_AFTER_S",
    "DECAY_AT_KEY",
    "DECAY_DAY_KEY",
    "DECAY_JOB",
    "ImportanceChange",
    "MemoryHost",
    "catch_up_on_open",
    "decay_all",
    "decay_day",
    "decay_due",
    "decay_scope",
    "delete_entries",
    "last_active",
    "mirror_importances",
    "promote",
    "recategorize",
    "record_access",
    "record_recall",
    "reset_importance",
    "start_catch_up",
]

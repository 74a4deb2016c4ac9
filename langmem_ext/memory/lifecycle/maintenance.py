"""``maintain``: one run of the memory lifecycle over a workspace.

In order, for each scope (or the one given):

1. hand edits are picked up (a sync, when the scope's files changed);
2. **pending expiry**: pending saves past their TTL are marked expired, each leaving
   its text in the daily notes, marked unconfirmed
   (:mod:`~langmem_ext.memory.extraction.unconfirmed`); the steps below treat those notes like
   every other memory, so a second run finds nothing left to do;
3. **decay** (:func:`~langmem_ext.memory.lifecycle.operations.decay_scope`): the table of
   :mod:`~langmem_ext.memory.lifecycle.decay` for the calendar days since the scope's last
   decay day, one transaction per scope;
4. **episode deletion**: episodes ``lifecycle.episode_delete_after_days`` (7) days old
   or more are deleted through the path of :meth:`Memory.delete
   <langmem_ext.Memory.delete>` (Markdown, ledger with history, index);
5. **reviews** (:mod:`~langmem_ext.memory.lifecycle.reviewer`): facts below the review
   threshold or at the promotion threshold, PROMOTE / KEEP / DELETE;
6. the keyword index's importances are checked against the ledger's.

Then, for a whole-workspace run (no ``scope``): the session hot log's rows older
than ``short_term.session_event_ttl_days`` are purged and temp files a killed write
left are removed.

Idempotent for a given day: decay is recorded per scope and day, every other step
acts on state (an episode already deleted, a fact already kept or promoted, an item
already expired), so a second run on the same day changes nothing. A run killed at
any point loses no confirmed memory (each step is its own durable write) and the
next run finishes what it left. ``core`` and ``system`` memories are never decayed,
reviewed or deleted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseChatModel

from langmem_ext.memory._utils import to_epoch
from langmem_ext.memory.lifecycle.decay import day_of
from langmem_ext.memory.lifecycle.operations import (
    DECAY_AT_KEY,
    ImportanceChange,
    MemoryHost,
    decay_scope,
    delete_entries,
    mirror_importances,
)
from langmem_ext.memory.lifecycle.reviewer import ReviewResult, due_reviews, review_entry
from langmem_ext.workspace.layout import MAIN_SCOPE, check_scope

logger = logging.getLogger(__name__)

MAINTAIN_AT_KEY = "lifecycle.maintain_at"
"""``meta`` key: when ``maintain`` last ran over the whole workspace (epoch seconds)."""

Progress = Callable[[int, int], None]
ChangeKind = Literal["decayed", "deleted", "promoted", "kept", "reset", "review-deleted", "expired"]


@dataclass(frozen=True)
class MaintenanceChange:
    """One thing a maintenance run changed.

    Attributes:
        scope: The scope.
        id: The memory (a pending id for ``expired``).
        action: ``decayed``, ``deleted`` (an old episode), ``promoted`` (to core),
            ``kept`` (a promotion review kept it as it is), ``reset`` (a decay
            review kept it, importance reset), ``review-deleted`` or ``expired``
            (a pending save).
        category: The memory's category (of the pending save for ``expired``).
        text: Its text.
        importance_before: Its importance before (``None`` for ``expired``).
        importance_after: After (``None`` when deleted or expired).
        reason: Why (the decay outcome, the reviewer's reason, the age).
    """

    scope: str
    id: str
    action: ChangeKind
    category: str
    text: str
    importance_before: float | None
    importance_after: float | None
    reason: str = ""


@dataclass
class MaintenanceReport:
    """What :func:`maintain` did.

    Attributes:
        day: The day the run was for (local calendar day of ``now``).
        scopes: The scopes processed.
        changes: Every change, in the order made.
        decay_already_done: Scopes whose decay had already run for ``day``.
        reviews: The reviews made (decision, fallback or model, searches).
        reviews_deferred: Facts due for review left for the next run
            (``lifecycle.max_model_reviews`` model reviews were made).
        events_purged: Session hot-log rows past their TTL deleted.
        temp_files_removed: Temp files of killed writes removed.
        index_repaired: Keyword-index importances corrected from the ledger.
        errors: Steps that failed (the run goes on; the next run retries them).
    """

    day: date
    scopes: list[str] = field(default_factory=list)
    changes: list[MaintenanceChange] = field(default_factory=list)
    decay_already_done: list[str] = field(default_factory=list)
    reviews: list[ReviewResult] = field(default_factory=list)
    reviews_deferred: int = 0
    events_purged: int = 0
    temp_files_removed: int = 0
    index_repaired: int = 0
    errors: list[str] = field(default_factory=list)

    def count(self, action: ChangeKind) -> int:
        """How many changes of one kind the run made."""
        return sum(1 for c in self.changes if c.action == action)

    def summary(self) -> dict[str, int]:
        """Counts per kind of change, plus purged events and removed temp files."""
        out: dict[str, int] = {k: self.count(k) for k in get_args(ChangeKind)}
        out["events_purged"] = self.events_purged
        out["temp_files_removed"] = self.temp_files_removed
        return out

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        data = asdict(self)
        data["day"] = self.day.isoformat()
        data["summary"] = self.summary()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MaintenanceReport:
        """The report :meth:`to_dict` gave (e.g. read back from the REST API)."""
        return cls(
            day=date.fromisoformat(data["day"]),
            scopes=list(data.get("scopes", [])),
            changes=[MaintenanceChange(**c) for c in data.get("changes", [])],
            decay_already_done=list(data.get("decay_already_done", [])),
            reviews=[ReviewResult(**r) for r in data.get("reviews", [])],
            reviews_deferred=int(data.get("reviews_deferred", 0)),
            events_purged=int(data.get("events_purged", 0)),
            temp_files_removed=int(data.get("temp_files_removed", 0)),
            index_repaired=int(data.get("index_repaired", 0)),
            errors=list(data.get("errors", [])),
        )


class _Ticker:
    """``progress(done, total)`` over steps whose total grows as they are planned."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress = progress
        self.done = 0
        self.total = total
        self._emit()

    def grow(self, more: int) -> None:
        self.total += more
        self._emit()

    def tick(self) -> None:
        self.done += 1
        self._emit()

    def _emit(self) -> None:
        if self.progress is not None:
            self.progress(self.done, self.total)


def known_scopes(memory: MemoryHost) -> list[str]:
    """Scopes with live memories or memory files."""
    found = set(memory.workspace.ledger.entries.scopes()) | set(memory.workspace.scopes())
    return sorted(found) or [MAIN_SCOPE]


def _decay_change(c: ImportanceChange, texts: dict[str, str]) -> MaintenanceChange:
    reason = "below the review threshold" if c.outcome == "review" else "idle"
    return MaintenanceChange(
        scope=c.scope,
        id=c.entry_id,
        action="decayed",
        category=c.category,
        text=texts.get(c.entry_id, ""),
        importance_before=c.before,
        importance_after=c.after,
        reason=reason,
    )


def _review_change(r: ReviewResult) -> MaintenanceChange | None:
    actions: dict[str, ChangeKind] = {
        "promoted": "promoted", "kept": "kept", "reset": "reset", "deleted": "review-deleted",
    }  # fmt: skip
    action = actions.get(r.action)
    if action is None:
        return None
    how = "fallback" if r.used_fallback else "model"
    return MaintenanceChange(
        scope=r.scope,
        id=r.entry_id,
        action=action,
        category="fact",
        text=r.text,
        importance_before=r.importance_before,
        importance_after=r.importance_after,
        reason=f"{r.kind} review ({how}): {r.reason}",
    )


def _old_episodes(memory: MemoryHost, scope: str, today: date) -> list[tuple[str, float, float]]:
    """``(id, importance, created_at)`` of the scope's episodes old enough to delete."""
    limit = memory.settings.lifecycle.episode_delete_after_days
    return [
        (st.id, st.importance, st.created_at)
        for st in memory.workspace.ledger.entries.of_scope(scope)
        if st.category == "episode" and (today - day_of(st.created_at)).days >= limit
    ]


def _expire_pending(memory: MemoryHost, scope: str, ts: float) -> list[MaintenanceChange]:
    """Expire the scope's pending saves past their TTL at ``ts``, or by the clock when
    the run is for an earlier time (written ones are confirmed first); each leaves its
    text in the daily notes (:meth:`Memory.expire_pending`)."""
    if not memory.workspace.ledger.pending.of_scope(scope, "pending"):
        return []
    expired = memory.expire_pending(scope=scope, now=max(ts, time.time()))
    return [
        MaintenanceChange(scope, p.id, "expired", p.category, p.text, None, None, "pending TTL")
        for p in expired
    ]


def maintain(
    memory: MemoryHost,
    *,
    scope: str | None = None,
    now: datetime | date | float | None = None,
    progress: Progress | None = None,
    model: BaseChatModel | None = None,
) -> MaintenanceReport:
    """Run the memory lifecycle once (see the module docstring for the steps).

    Args:
        memory: The memory.
        scope: Only this scope (the hot-log purge and temp-file cleanup, which are
            workspace-wide, then do not run); default every scope.
        now: The time the run is for (default now; tests inject days ahead).
        progress: ``progress(done, total)`` over scopes, deletions and reviews.
        model: Chat model of the reviews; ``None`` uses their deterministic fallback.

    Returns:
        What changed.
    """
    ts = to_epoch(now, time.time())
    today = day_of(ts)
    ws = memory.workspace
    scopes = [check_scope(scope)] if scope is not None else known_scopes(memory)
    report = MaintenanceReport(day=today, scopes=scopes)
    ticker = _Ticker(progress, len(scopes))
    for s in scopes:
        if ws.scope_needs_sync(s):
            memory.sync(scope=s)
        # first: the notes expired saves leave are then decayed and reviewed like the rest
        report.changes.extend(_expire_pending(memory, s, ts))
        decayed = decay_scope(memory, s, today=today)
        if decayed is None:
            report.decay_already_done.append(s)
        elif decayed:
            docs = ws.keyword.docs([c.entry_id for c in decayed])
            texts = {i: d.text for i, d in docs.items()}
            report.changes.extend(_decay_change(c, texts) for c in decayed)
        ticker.tick()
    plans = [(s, _old_episodes(memory, s, today), due_reviews(memory, s)) for s in scopes]
    if model is not None:  # a model call per review: at most max_model_reviews a run
        room = memory.settings.lifecycle.max_model_reviews
        capped = []
        for s, old, due in plans:
            capped.append((s, old, due[:room]))
            report.reviews_deferred += len(due) - len(due[:room])
            room -= len(due[:room])
        plans = capped
    ticker.grow(sum(len(old) + len(due) for _s, old, due in plans))
    for s, old, due in plans:
        _delete_episodes(memory, s, old, today, report, ticker)
        for st, kind in due:
            try:
                result = review_entry(memory, st.id, scope=s, kind=kind, model=model)
            except Exception as e:  # one failed review must not stop the run
                report.errors.append(f"review of {st.id}: {e}")
                logger.exception("review of %s failed", st.id)
            else:
                report.reviews.append(result)
                change = _review_change(result)
                if change is not None:
                    report.changes.append(change)
            ticker.tick()
        report.index_repaired += mirror_importances(memory, s)
    if scope is None:
        _workspace_chores(memory, ts, report)
    logger.info("maintain for %s: %s", today.isoformat(), report.summary())
    return report


def _delete_episodes(
    memory: MemoryHost,
    scope: str,
    old: Sequence[tuple[str, float, float]],
    today: date,
    report: MaintenanceReport,
    ticker: _Ticker,
) -> None:
    docs = memory.workspace.keyword.docs([i for i, _imp, _at in old])
    for entry_id, importance, created in old:
        text = docs[entry_id].text if entry_id in docs else ""
        deleted, _skipped = delete_entries(memory, [entry_id], scope=scope)
        if deleted:
            age = (today - day_of(created)).days
            report.changes.append(
                MaintenanceChange(
                    scope=scope,
                    id=entry_id,
                    action="deleted",
                    category="episode",
                    text=text,
                    importance_before=importance,
                    importance_after=None,
                    reason=f"episode {age} days old",
                )
            )
        ticker.tick()


def _workspace_chores(memory: MemoryHost, ts: float, report: MaintenanceReport) -> None:
    """The workspace-wide steps of a full run: hot-log TTL, temp files, run times."""
    try:
        report.events_purged += memory.session_log.purge(now=ts)
    except Exception as e:  # the hot log is not the memory: report and go on
        report.errors.append(f"hot-log purge: {e}")
        logger.exception("the session log's purge failed")
    report.temp_files_removed = len(memory.workspace.remove_stale_temp_files())
    meta = memory.workspace.ledger.meta
    with memory.workspace.ledger.transaction():
        meta.set(DECAY_AT_KEY, repr(ts))
        meta.set(MAINTAIN_AT_KEY, repr(ts))


def last_maintained(memory: MemoryHost) -> float | None:
    """When ``maintain`` last ran over the whole workspace (epoch seconds), or ``None``."""
    value = memory.workspace.ledger.meta.get(MAINTAIN_AT_KEY)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


__all__ = [
    "MAINTAIN_AT_KEY",
    "MaintenanceChange",
    "MaintenanceReport",
    "known_scopes",
    "last_maintained",
    "maintain",
]

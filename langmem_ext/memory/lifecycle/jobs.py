"""Background jobs of a long-running server: the day archive, idle summaries, shutdown.

- :func:`archive_day`: each scope that talked on a day
  gets the durable facts of that day's conversation flushed (the silent flush of
  :func:`~langmem_ext.memory.sessions.flush.flush_to_pending`: each fact noted at once in
  that day's notes, marked ``[unconfirmed]``, its long-term save pending, never one
  proposed twice) and the day summarised into one ``episode`` in its daily notes.
  Idempotent: a scope's day is archived once (``meta`` ``jobs.archive:<scope>:<day>``,
  and an episode of the day already in the files is found before another is
  written), so a second run writes nothing.
- :func:`summarize_idle_threads`: graph conversations (threads of the hot
  log, :class:`~langmem_ext.memory.sessions.log.SessionLog`) idle for
  ``short_term.idle_episode_hours`` are summarised into an episode, once: each
  thread remembers the time of the last event summarised (``meta``
  ``jobs.thread:<scope>:<thread>``), and only later events make a new episode.
  Conversations of the Session API (:class:`~langmem_ext.memory.sessions.manager.SessionManager`)
  are summarised by its own :meth:`~langmem_ext.memory.sessions.manager.SessionManager.summarize_idle`.
- :func:`flush_active_threads`: on shutdown, every thread with events not yet in an
  episode is summarised now (deterministic summaries: shutdown must be quick).
- :class:`DailyJobs`: the thread ``langmem-ext serve`` runs: ``maintain`` on start
  when due and daily at ``lifecycle.daily_at``, the archive of the days not yet
  archived, idle summaries every ``lifecycle.idle_check_minutes``, and the knowledge
  graph of memories no process extracted yet.

Without a chat model (or when it fails) summaries are extractive and the flush uses
its deterministic extractor; both say so in the log.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_ext.memory._utils import to_epoch
from langmem_ext.memory.lifecycle.decay import day_of
from langmem_ext.memory.lifecycle.maintenance import (
    MaintenanceReport,
    known_scopes,
    last_maintained,
)
from langmem_ext.memory.sessions.flush import flush_to_pending
from langmem_ext.memory.sessions.log import SessionEvent, SessionLog
from langmem_ext.short_term.content import clip
from langmem_ext.short_term.summarizer import summarizer_within
from langmem_ext.workspace.layout import MAIN_SCOPE

if TYPE_CHECKING:
    from langmem_ext.memory.service import Memory

logger = logging.getLogger(__name__)

T = TypeVar("T")

ARCHIVE_KEY = "jobs.archive:{scope}:{day}"
"""``meta`` key: a scope's day is archived (value: the episode id, or ``-``)."""
ARCHIVED_DAY_KEY = "jobs.archived_day"
"""``meta`` key: the last day every scope was archived (ISO)."""
THREAD_KEY = "jobs.thread:{scope}:{thread}"
"""``meta`` key: time of the last hot-log event of a thread that is in an episode."""
IDLE_SCAN_KEY = "jobs.idle_scan_at"
"""``meta`` key: when idle threads were last looked for (epoch seconds)."""
ARCHIVE_CATCH_UP_DAYS = 7
"""Days back the archive catches up when the server was down."""
SCAN_MARGIN_S = 3600.0
"""Events this much older than the last idle scan's horizon are read again."""
MAINTAIN_JOB = "maintain"
"""Lease name of ``maintain`` with the day archive (over every scope)."""
IDLE_JOB = "idle"
"""Lease name of the idle summaries (over every scope)."""


@dataclass(frozen=True)
class Episode:
    """An episode a job wrote (or found already written).

    Attributes:
        scope: The scope.
        entry_id: The episode memory.
        source: ``archive`` (a day) or ``thread`` (an idle or active conversation).
        thread_id: The conversation (``None`` for a day).
        events: Hot-log events summarised.
        used_fallback: The extractive summary wrote it.
        pending_ids: Pending saves the archive's flush proposed.
    """

    scope: str
    entry_id: str
    source: str
    thread_id: str | None
    events: int
    used_fallback: bool
    pending_ids: list[str] = field(default_factory=list)


def _messages(events: Sequence[SessionEvent]) -> list[BaseMessage]:
    """The user and assistant events as messages (summaries are left out)."""
    out: list[BaseMessage] = []
    for e in events:
        if e.role == "user":
            out.append(HumanMessage(e.text))
        elif e.role == "assistant":
            out.append(AIMessage(e.text))
    return out


def _log(memory: Memory, ts: float) -> SessionLog:
    """A hot-log reader whose "now" is ``ts`` (its TTL window follows the job's time)."""
    return SessionLog(memory, clock=lambda: ts)


def _scopes(memory: Memory) -> list[str]:
    return sorted(set(known_scopes(memory)) | {MAIN_SCOPE})


def _write_episode(
    memory: Memory,
    scope: str,
    header: str,
    messages: Sequence[BaseMessage],
    at: float,
    model: BaseChatModel | None,
    source: str,
) -> tuple[str | None, bool]:
    """Summarise ``messages`` into the episode ``header:\\n<summary>``, once.

    An episode of the scope whose text starts with ``header`` is reused (a job killed
    after writing it and before recording it writes nothing twice).

    Returns:
        ``(episode id or None when there was nothing to summarise, used_fallback)``.
    """
    for entry in memory.list(scope=scope, category="episode"):
        if entry.text.startswith(header):
            return entry.id, False
    summarizer = summarizer_within(model, memory.settings.short_term)
    result = summarizer.summarize(list(messages))
    if not result.text.strip():
        return None, result.used_fallback
    if result.used_fallback:
        logger.info("episode %r: extractive summary (%s)", header, result.error or "no model")
    text = clip(f"{header}:\n{result.text.strip()}", memory.settings.max_text_chars)
    entry_id = memory.add(
        text, scope=scope, category="episode", target="daily", created_at=at, source=source
    )
    return entry_id, result.used_fallback


def _day_bounds(day: date) -> tuple[float, float]:
    start = datetime.combine(day, datetime.min.time())
    return start.timestamp(), (start + timedelta(days=1)).timestamp()


def archive_day(memory: Memory, day: date, *, model: BaseChatModel | None = None) -> list[Episode]:
    """The daily archive of one day: flush each active scope's facts, summarise its day.

    Args:
        memory: The memory.
        day: The local calendar day to archive.
        model: Chat model of the flush and the summary; ``None``: deterministic.

    Returns:
        The day episodes written (a scope archived before, or that did not talk
        that day, is skipped).
    """
    start, end = _day_bounds(day)
    log = _log(memory, end)
    meta = memory.workspace.ledger.meta
    out: list[Episode] = []
    for scope in _scopes(memory):
        key = ARCHIVE_KEY.format(scope=scope, day=day.isoformat())
        if meta.get(key) is not None:
            continue
        messages = _messages(log.recent(scope, since=start, until=end))
        if not messages:
            continue
        noon = datetime.combine(day, datetime.min.time()).replace(hour=12).timestamp()
        flushed = flush_to_pending(memory, scope, messages, model, at=noon, source="archive")
        header = f"Day {day.isoformat()} ({scope}), summary"
        entry_id, fallback = _write_episode(memory, scope, header, messages, noon, model, "archive")
        meta.set(key, entry_id or "-")
        if entry_id is not None:
            n = len(messages)
            out.append(Episode(scope, entry_id, "archive", None, n, fallback, flushed.pending_ids))
    logger.info("archive of %s: %d scopes", day.isoformat(), len(out))
    return out


def archive_due_days(
    memory: Memory, *, now: datetime | float | None = None, model: BaseChatModel | None = None
) -> list[Episode]:
    """Archive every day from the last archived one (at most a week back) to yesterday."""
    ts = to_epoch(now, time.time())
    today = day_of(ts)
    meta = memory.workspace.ledger.meta
    last = meta.get(ARCHIVED_DAY_KEY)
    first = today - timedelta(days=ARCHIVE_CATCH_UP_DAYS)
    if last:
        with contextlib.suppress(ValueError):
            first = max(first, date.fromisoformat(last) + timedelta(days=1))
    out: list[Episode] = []
    day = first
    while day < today:
        out.extend(archive_day(memory, day, model=model))
        meta.set(ARCHIVED_DAY_KEY, day.isoformat())
        day += timedelta(days=1)
    return out


def summarize_threads(
    memory: Memory,
    *,
    now: datetime | float | None = None,
    idle_hours: float | None = None,
    model: BaseChatModel | None = None,
) -> list[Episode]:
    """Summarise the graph conversations idle ``idle_hours`` (default
    ``short_term.idle_episode_hours``) whose latest events are in no episode yet.

    Conversations are found among the hot-log events since the previous scan (less
    the idle time); each one's events since its last episode are then read whole.

    Args:
        memory: The memory.
        now: The current time (default now).
        idle_hours: Idle time before a conversation is summarised; 0 summarises
            every conversation with new events (the shutdown flush).
        model: Summary model; ``None``: extractive.

    Returns:
        The episodes written.
    """
    from langmem_ext.memory.sessions.manager import SessionManager

    ts = to_epoch(now, time.time())
    idle = memory.settings.short_term.idle_episode_hours if idle_hours is None else idle_hours
    meta = memory.workspace.ledger.meta
    log = _log(memory, ts)
    sessions = SessionManager(memory, log=log, clock=lambda: ts)
    horizon = ts - log.ttl_seconds
    since = horizon
    scanned = meta.get(IDLE_SCAN_KEY)
    if scanned is not None:
        since = max(since, float(scanned) - idle * 3600.0 - SCAN_MARGIN_S)
    out: list[Episode] = []
    for scope in _scopes(memory):
        threads = dict.fromkeys(e.thread_id for e in log.recent(scope, since=since))
        for thread_id in threads:
            if sessions.tracks(scope, thread_id):
                continue  # a Session API conversation: SessionManager.summarize_idle's
            key = THREAD_KEY.format(scope=scope, thread=thread_id)
            done = float(meta.get(key) or 0.0)
            events = log.recent(scope, thread_id=thread_id, since=max(horizon, done + 1e-6))
            episode = _summarize_thread(memory, scope, thread_id, events, ts - idle * 3600.0, model)
            if episode is not None:
                out.append(episode)
    if idle_hours is None:
        meta.set(IDLE_SCAN_KEY, repr(ts))
    return out


def _summarize_thread(
    memory: Memory,
    scope: str,
    thread_id: str,
    events: Sequence[SessionEvent],
    cutoff: float,
    model: BaseChatModel | None,
) -> Episode | None:
    """One conversation's new events into an episode, when it is idle since ``cutoff``."""
    messages = _messages(events)
    if not messages:
        return None
    last = max(e.at.timestamp() for e in events)
    if last > cutoff:
        return None  # still active
    when = datetime.fromtimestamp(last)
    header = f"Conversation {thread_id} on {when:%Y-%m-%d} (until {when:%H:%M:%S}), summary"
    entry_id, fallback = _write_episode(memory, scope, header, messages, last, model, "session")
    memory.workspace.ledger.meta.set(THREAD_KEY.format(scope=scope, thread=thread_id), repr(last))
    if entry_id is None:
        return None
    logger.info("conversation %s/%s summarised into episode %s", scope, thread_id, entry_id)
    return Episode(
        scope=scope,
        entry_id=entry_id,
        source="thread",
        thread_id=thread_id,
        events=len(messages),
        used_fallback=fallback,
    )


def flush_active_threads(memory: Memory, *, now: datetime | float | None = None) -> list[Episode]:
    """The shutdown flush: every conversation with events in no episode is summarised
    now, extractively (no model call: shutdown must be quick)."""
    return summarize_threads(memory, now=now, idle_hours=0.0, model=None)


def next_daily_at(after: float, hour: int, minute: int) -> float:
    """The first local ``hour:minute`` strictly after ``after`` (epoch seconds)."""
    moment = datetime.fromtimestamp(after)
    candidate = moment.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if candidate.timestamp() <= after:
        candidate = (candidate + timedelta(days=1)).replace(hour=hour, minute=minute)
    return candidate.timestamp()


def archive_behind(memory: Memory) -> bool:
    """Whether the day archive stopped short of the last ``maintain``'s day (a process
    killed between the two, or mid-archive): the next pass finishes it."""
    last = last_maintained(memory)
    if last is None:
        return False
    archived = memory.workspace.ledger.meta.get(ARCHIVED_DAY_KEY)
    try:
        done = date.fromisoformat(archived) if archived else None
    except ValueError:
        done = None
    return done is None or done < day_of(last) - timedelta(days=1)


def maintenance_due(memory: Memory, now: float | None = None) -> bool:
    """Whether the daily ``maintain`` is due: never ran, or a daily time has passed since."""
    ts = time.time() if now is None else now
    last = last_maintained(memory)
    if last is None:
        return True
    hour, minute = memory.settings.lifecycle.daily_time()
    return ts >= next_daily_at(last, hour, minute)


@dataclass
class JobsRun:
    """What one pass of :class:`DailyJobs` did.

    Attributes:
        maintenance: The maintenance report, when it was due.
        archived: Day episodes written.
        idle: Idle-conversation episodes written (graph threads and sessions).
        graphs: Scopes whose knowledge graph had memories not extracted (a process
            stopped before it extracted them): their update is on the background writer.
        turns: Turns another process accepted and died before extracting, extracted now.
        keys_pruned: Idempotency keys of ``/v1`` writes deleted, older than
            ``server.idempotency_key_hours``.
        errors: Jobs that failed (logged; retried on the next pass).
    """

    maintenance: MaintenanceReport | None = None
    archived: list[Episode] = field(default_factory=list)
    idle: list[Episode] = field(default_factory=list)
    graphs: list[str] = field(default_factory=list)
    turns: int = 0
    keys_pruned: int = 0
    errors: list[str] = field(default_factory=list)


class DailyJobs:
    """The lifecycle jobs of a long-running server, on one background thread.

    Setup:
        ``langmem-ext serve`` runs them (``lifecycle.daily_jobs``); an application
        with its own server starts them itself. Without a chat model, reviews and
        summaries follow their deterministic rules.

    Instantiate:
        .. code-block:: python

            from langmem_ext import Memory
            from langmem_ext.memory.lifecycle.jobs import DailyJobs

            jobs = DailyJobs(Memory("./memory-ws"))

    Invoke:
        .. code-block:: python

            jobs.start()          # maintain now if due, then daily at lifecycle.daily_at
            ...
            jobs.stop()           # waits for a job in progress

        Or one pass, as the thread makes it: ``jobs.run_due()``.

    Args:
        memory: The memory.
        model: Chat model of reviews, the archive's flush and the summaries.
        clock: Returns "now" in epoch seconds.
    """

    def __init__(
        self,
        memory: Memory,
        *,
        model: BaseChatModel | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.memory = memory
        self.model = model
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._busy = threading.Lock()

    def run_due(self, now: float | None = None) -> JobsRun:
        """Run what is due at ``now``: maintain (+ the day archive), idle summaries.

        The day archive runs after ``maintain``, or alone when an earlier pass
        stopped before it was done (:func:`archive_behind`). Each job's failure is
        logged and recorded; the others still run. ``maintain``
        with the day archive, and the idle summaries, each hold their lease
        (:attr:`Memory.leases <langmem_ext.Memory.leases>`): when another process
        holds one, the pass waits for it (until released, or run out when its holder
        died) and then finds the job done, or finishes it.
        """
        ts = self._clock() if now is None else now
        run = JobsRun()
        leases = self.memory.leases
        with self._busy:
            with leases.held(MAINTAIN_JOB, cancel=self._stop) as leased:
                due = leased and maintenance_due(self.memory, ts)
                if due:
                    run.maintenance = self._guard(
                        run, "maintain", lambda: self.memory.maintain(now=ts, model=self.model)
                    )
                if due:
                    run.keys_pruned = (
                        self._guard(run, "idempotency keys", lambda: self._prune_keys(ts)) or 0
                    )
                if due or (leased and archive_behind(self.memory)):
                    run.archived = (
                        self._guard(
                            run,
                            "archive",
                            lambda: archive_due_days(self.memory, now=ts, model=self.model),
                        )
                        or []
                    )
            with leases.held(IDLE_JOB, cancel=self._stop) as leased:
                if leased:
                    self._idle(run, ts)
            run.graphs = (
                self._guard(
                    run,
                    "knowledge",
                    lambda: self.memory.knowledge.schedule_behind(_scopes(self.memory)),
                )
                or []
            )
            run.turns = self._guard(run, "turns", self.memory.turns.recover) or 0
        return run

    def _prune_keys(self, ts: float) -> int:
        """Delete the idempotency keys older than ``server.idempotency_key_hours``."""
        hours = self.memory.settings.server.idempotency_key_hours
        return self.memory.workspace.ledger.idempotency.prune(ts - hours * 3600.0)

    def _idle(self, run: JobsRun, ts: float) -> None:
        """The idle summaries: graph conversations, then Session API conversations."""
        from langmem_ext.memory.sessions.manager import SessionManager

        run.idle = (
            self._guard(
                run, "idle", lambda: summarize_threads(self.memory, now=ts, model=self.model)
            )
            or []
        )
        sessions = self._guard(
            run,
            "idle sessions",
            lambda: SessionManager(
                self.memory, self.model, log=_log(self.memory, ts), clock=lambda: ts
            ).summarize_idle(ts),
        )
        run.idle += [
            Episode(r.scope, r.episode_id, "session", r.thread_id, 0, r.used_fallback)
            for r in sessions or []
        ]

    @staticmethod
    def _guard(run: JobsRun, name: str, job: Callable[[], T]) -> T | None:
        try:
            return job()
        except Exception as e:  # one failed job must not stop the others or the server
            logger.exception("%s job failed", name)
            run.errors.append(f"{name}: {e}")
            return None

    def next_wake(self, now: float) -> float:
        """When the thread looks again: the next daily time or the idle check, sooner."""
        hour, minute = self.memory.settings.lifecycle.daily_time()
        idle_check = self.memory.settings.lifecycle.idle_check_minutes * 60.0
        return min(next_daily_at(now, hour, minute), now + idle_check)

    def start(self) -> None:
        """Start the thread (its first pass runs at once)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="langmem-daily-jobs", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 60.0) -> None:
        """Stop the thread, waiting up to ``timeout`` seconds for a job in progress."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                logger.warning("a lifecycle job was still running at shutdown")

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.run_due()
            now = self._clock()
            if self._stop.wait(max(1.0, self.next_wake(now) - now)):
                return


__all__ = [
    "IDLE_JOB",
    "MAINTAIN_JOB",
    "DailyJobs",
    "Episode",
    "JobsRun",
    "archive_behind",
    "archive_day",
    "archive_due_days",
    "flush_active_threads",
    "maintenance_due",
    "next_daily_at",
    "summarize_threads",
]

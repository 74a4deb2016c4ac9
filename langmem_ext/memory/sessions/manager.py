"""Sessions: short-term history, checkpoints, flush, episodes.

:class:`SessionManager` is the session API over a :class:`~langmem_ext.Memory`
and an optional chat model:

=========================  ===================================================
operation                  method
=========================  ===================================================
``QueryMemoryContext``     :meth:`SessionManager.query_context`
``WriteTurn``              :meth:`SessionManager.write_turn`
``CheckpointShortMemory``  :meth:`SessionManager.checkpoint`
``FinalizeSessionMemory``  :meth:`SessionManager.finalize_session`
=========================  ===================================================

plus the first-turn injection of today's and yesterday's daily notes
(:meth:`~SessionManager.first_turn_context`) and the idle summarisation
(:meth:`~SessionManager.idle_sessions`, :meth:`~SessionManager.summarize_idle`).

Storage: one engine with the memory graph. A conversation is a LangGraph
thread in the graph's checkpointer (:mod:`langmem_ext.memory.sessions.threads`; default the
memory's ``checkpoints.db``, the graph's default too): its live ``messages``, the
running ``summary`` and ``mode`` are the thread's state, so a turn written here is in
the graph's thread and a graph turn is in :meth:`~SessionManager.query_context`. The
conversation ``(scope, thread_id)`` is thread ``thread_id`` (``thread_id@scope`` when
that thread was last written for another scope). In the workspace ledger
(``state.db``) stay:

- ``session_messages``: the archive. A checkpoint (this engine's or the graph's,
  :func:`archive_messages`) stores the messages it removes from the thread, marked
  compacted; nothing is ever deleted, so the full history stays available. An older
  workspace's live rows move into the thread once, on first read.
- ``checkpoints``: each checkpoint of this engine: summary, cut position, time.
- ``sessions``: per conversation — last activity, what was already turned into an
  episode, whether the first-turn notes were injected.
  ``flushed_seq`` remembers which messages the flush has seen, so a fact is
  proposed once, not again at every checkpoint. A message's ``seq`` is its position
  in the full history (archive, then the thread).

Every user / assistant message and every summary also goes to the hot log
(:class:`~langmem_ext.memory.sessions.log.SessionLog`), which search consults on recall
questions.

A checkpoint never loses a fact: first the *flush*
(:func:`langmem_ext.memory.sessions.flush.flush_to_pending`, shared with the graph: one silent
model turn with :data:`~langmem_ext.short_term.flush_prompt.FLUSH_PROMPT` and a
``memory_save`` tool whose saves go to the pending store, its ``NO_REPLY`` never
stored; without a model or when the model fails, the deterministic
:func:`~langmem_ext.short_term.flush_prompt.extract_candidate_facts`), and only once those
saves are committed the checkpoint itself. If the checkpoint fails, nothing is
marked and the next :meth:`~SessionManager.query_context` still says
``should_checkpoint``.

Concurrency: calls on one conversation serialise on a per-``(scope, thread)``
lock inside a process; a write to the thread is refused when the thread got a newer
checkpoint since it was read (a turn then re-reads and retries, a checkpoint reports
``conflict``), so a graph turn in between is never overwritten. The read and the
put are two steps of the checkpointer: two *processes* writing one thread at the
same instant can still both pass the check.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    messages_from_dict,
    messages_to_dict,
)
from langgraph.checkpoint.base import BaseCheckpointSaver

from langmem_ext.core.config import Settings, ShortTermSettings
from langmem_ext.core.errors import (
    EntryNotFoundError,
    EntrySupersededError,
    InvalidInputError,
    LangmemError,
)
from langmem_ext.memory._utils import async_method, to_epoch, utc
from langmem_ext.memory.service import Memory
from langmem_ext.memory.sessions.flush import FlushResult, flush_to_pending
from langmem_ext.memory.sessions.log import NewEvent, SessionLog, check_thread_id
from langmem_ext.memory.sessions.threads import (
    ThreadConflict,
    ThreadState,
    ThreadStore,
    default_saver,
)
from langmem_ext.short_term.checkpoint import (
    Checkpoint,
    MemoryMode,
    make_checkpoint,
    plan_context,
)
from langmem_ext.short_term.checkpoint import finalize_session as finalize_checkpoint
from langmem_ext.short_term.content import clip, leading_system_count, message_text
from langmem_ext.short_term.flush_prompt import is_flush_message, is_no_reply
from langmem_ext.short_term.summarizer import GivenSummary, Summarizer, summarizer_within
from langmem_ext.short_term.validity import safe_cut_index, validate_messages
from langmem_ext.workspace.layout import check_scope
from langmem_ext.workspace.records import CheckpointRow, SessionRow, StoredMessage

logger = logging.getLogger(__name__)


DAILY_NOTES_HEADER = (
    "Daily notes of today and yesterday (background only; search memory before quoting details):"
)
"""First line of the first-turn injection."""
_WRITE_ATTEMPTS = 3
"""Tries of a turn's write when the thread keeps getting newer checkpoints."""
_BLOCK_ID_RE = re.compile(r"\s*\^m-[0-9a-z]{4,32}\s*$")


# --- results ----------------------------------------------------------------------


@dataclass(frozen=True)
class ConversationKey:
    """The conversation a result is about (the base of the session engine's results).

    Attributes:
        scope: The scope.
        thread_id: The conversation.
    """

    scope: str
    thread_id: str


@dataclass(frozen=True)
class MemoryContext(ConversationKey):
    """What to send to the model for one conversation (``MemoryContext``).

    Attributes:
        history: Messages to send: the summary message (``SUMMARY_N``) and the
            messages not yet compacted. Always passes ``validate_messages``.
        full_history: Every stored message, compacted ones included, oldest first.
        mode: ``FULL_HISTORY`` (no checkpoint yet) or ``SUMMARY_N``.
        estimated_tokens: Tokens of ``history`` plus the ``system_tokens`` passed in.
        ratio: ``estimated_tokens / context_window``.
        should_checkpoint: The ratio is over ``checkpoint_ratio`` and a checkpoint
            can remove something: call :meth:`SessionManager.checkpoint`.
        summary: The running summary, or ``None``.
        budget_tokens: ``checkpoint_ratio * context_window``.
    """

    history: list[BaseMessage]
    full_history: list[BaseMessage]
    mode: MemoryMode
    estimated_tokens: int
    ratio: float
    should_checkpoint: bool
    summary: str | None
    budget_tokens: int


@dataclass(frozen=True)
class TurnResult(ConversationKey):
    """What :meth:`SessionManager.write_turn` stored (``MemoryWriteResult``).

    Attributes:
        mode: The memory mode after the write.
        updated_at: Time of the turn.
        stored: False when the turn was a flush turn and was not stored.
        first_seq: Sequence number of the turn's first message (0 when not stored).
        last_seq: Sequence number of its last message.
    """

    mode: MemoryMode
    updated_at: datetime
    stored: bool
    first_seq: int = 0
    last_seq: int = 0


@dataclass(frozen=True)
class CheckpointResult:
    """What :meth:`SessionManager.checkpoint` did.

    Attributes:
        made: A checkpoint was stored and messages were compacted.
        reason: ``made``, ``not_due``, ``nothing_to_compact``, ``conflict`` or
            ``failed``.
        summary: The new running summary.
        compacted: Messages marked compacted.
        cut_seq: Sequence number of the last compacted message.
        checkpoint_id: Ledger id of the checkpoint.
        episode_id: Memory entry holding the summary as an episode (``None`` when
            storing it failed; a later :meth:`SessionManager.finalize_session`
            stores it).
        flush: What the flush saved first (``None`` when it did not run: switched
            off, or no message was new since the last flush).
        summary_used_fallback: The extractive summary fallback wrote the summary.
        error: What went wrong when ``reason == "failed"``.
    """

    made: bool
    reason: str
    summary: str | None = None
    compacted: int = 0
    cut_seq: int = 0
    checkpoint_id: int | None = None
    episode_id: str | None = None
    flush: FlushResult | None = None
    summary_used_fallback: bool = False
    error: str | None = None


@dataclass(frozen=True)
class SessionInfo(ConversationKey):
    """One conversation's bookkeeping.

    Attributes:
        created_at: First activity.
        updated_at: Time of the last message.
        message_count: Messages stored.
        summarized_count: Messages already turned into an episode.
        episode_id: The conversation's latest episode entry, if any.
    """

    created_at: datetime
    updated_at: datetime
    message_count: int
    summarized_count: int
    episode_id: str | None


@dataclass(frozen=True)
class EpisodeResult(ConversationKey):
    """What :meth:`SessionManager.finalize_session` stored.

    Attributes:
        summary: The summary of the whole conversation.
        episode_id: The episode memory entry.
        compacted: Messages marked compacted by the final checkpoint.
        used_fallback: The extractive fallback wrote the summary.
    """

    summary: str
    episode_id: str
    compacted: int
    used_fallback: bool


class _Conflict(Exception):
    """Another checkpoint of the conversation landed while this one was computed."""


@dataclass
class _Stored:
    seq: int
    message: BaseMessage
    at: float


@dataclass
class _State:
    live: list[_Stored]
    summary: str | None
    thread: ThreadState
    full: list[BaseMessage]
    archived: int = 0
    """Messages checkpointed out of the thread (kept in the archive)."""
    at: float = 0.0
    """The conversation's last activity (what its summaries are dated to)."""

    @property
    def messages(self) -> list[BaseMessage]:
        return [s.message for s in self.live]

    @property
    def total(self) -> int:
        return self.archived + len(self.live)


# --- the checkpoint routine -------------------------------------------------------


class CheckpointTarget(Protocol):
    """Where :func:`record_checkpoint` puts a checkpoint, step by step.

    The session engine's target compacts the conversation's stored messages and
    keeps one episode per conversation and day; the memory graph's removes the
    messages from its state.
    """

    def commit(self, cp: Checkpoint) -> float | None:
        """Remove what ``cp`` summarised (compact the stored messages, or drop them
        from a state).

        Returns:
            The time the summary is dated to, or ``None`` when nothing could be
            removed (then nothing is recorded).

        Raises:
            Exception: To abort the checkpoint; nothing is recorded.
        """
        ...

    def store_episode(self, summary: str, at: float) -> str:
        """Store ``summary`` as an ``episode`` memory; returns its id."""
        ...

    def log_summary(self, summary: str, at: float) -> None:
        """Log ``summary`` to the session hot log."""
        ...


@dataclass(frozen=True)
class RecordedCheckpoint:
    """What :func:`record_checkpoint` did.

    Attributes:
        checkpoint: The checkpoint.
        at: The time its summary is dated to.
        episode_id: The episode holding the summary (``None`` when storing it failed).
    """

    checkpoint: Checkpoint
    at: float
    episode_id: str | None


def run_checkpoint(
    messages: Sequence[BaseMessage],
    running_summary: str | None,
    summarizer: Summarizer,
    settings: ShortTermSettings,
    target: CheckpointTarget,
    *,
    system_tokens: int = 0,
) -> RecordedCheckpoint | None:
    """The one checkpoint routine: summarise, remove, store the episode, log.

    :func:`~langmem_ext.short_term.checkpoint.make_checkpoint` of ``messages`` (a
    graph's state, or a conversation's stored live messages), then
    :func:`record_checkpoint`.

    Args:
        messages: The history, oldest first.
        running_summary: The summary of the last checkpoint, or ``None``.
        summarizer: Writes the summary.
        settings: Window, ratios, kept turns.
        target: Where the checkpoint goes.
        system_tokens: Tokens sent besides the history.

    Returns:
        What was recorded, or ``None`` when nothing was removed.

    Raises:
        Exception: What the summarizer or ``target.commit`` raised; nothing is recorded.
    """
    cp = make_checkpoint(
        messages, running_summary, summarizer, settings, system_tokens=system_tokens
    )
    return record_checkpoint(cp, target)


def record_checkpoint(cp: Checkpoint, target: CheckpointTarget) -> RecordedCheckpoint | None:
    """Commit a checkpoint, store its summary as an episode, log it to the hot log.

    Once committed the checkpoint stands: an episode that could not be stored or a
    summary the hot log could not take is logged as an error, never raised (the
    session engine's :meth:`SessionManager.finalize_session` stores the episode later).

    Args:
        cp: The checkpoint (made here by :func:`run_checkpoint`, or inside a turn).
        target: Where it goes.

    Returns:
        What was recorded, or ``None`` when it removes nothing.
    """
    if cp.removed_count == 0:
        return None
    at = target.commit(cp)
    if at is None:
        return None
    episode_id: str | None = None
    try:
        episode_id = target.store_episode(cp.summary, at)
    except Exception as e:
        logger.error("checkpoint summary not stored as an episode: %s", e)
    if cp.summary.strip():
        try:
            target.log_summary(cp.summary, at)
        except Exception as e:
            logger.error("checkpoint summary not logged to the session log: %s", e)
    return RecordedCheckpoint(cp, at, episode_id)


def _encode(message: BaseMessage) -> str:
    return json.dumps(messages_to_dict([message])[0], ensure_ascii=False)


def _decode(raw: str) -> BaseMessage:
    return messages_from_dict([json.loads(raw)])[0]


def archive_messages(
    memory: Memory, scope: str, thread_id: str, messages: Sequence[BaseMessage], at: float
) -> None:
    """Keep messages a checkpoint removes from a thread (the conversation's full history).

    The session engine's checkpoints and the memory graph's both call it before the
    thread drops them; they are stored compacted in the ledger (``session_messages``),
    after the ones already there. Reads skip an archived message still in the thread.

    Args:
        memory: The memory (its ledger).
        scope: The conversation's scope.
        thread_id: The conversation.
        messages: The removed messages, oldest first.
        at: When the conversation had them (their time in the archive).
    """
    if not messages:
        return
    ledger = memory.workspace.ledger
    encoded = [(str(m.id or f"msg-{uuid.uuid4().hex}"), _encode(m)) for m in messages]
    with ledger.transaction():
        first = ledger.conversations.append(scope, thread_id, encoded, at)
        ledger.conversations.mark_compacted(
            scope, thread_id, list(range(first, first + len(encoded)))
        )


def note_turn(memory: Memory, scope: str, thread_id: str, at: float) -> None:
    """Count a turn the memory graph answered in a Session API conversation.

    A conversation :meth:`SessionManager.write_turn` wrote to is summarised by
    :meth:`SessionManager.summarize_idle`; a graph turn on its thread makes it active
    again (and unsummarised). Threads only the graph wrote are left to the hot-log
    job (:func:`~langmem_ext.memory.lifecycle.jobs.summarize_threads`): nothing is recorded.

    Args:
        memory: The memory (its ledger).
        scope: The conversation's scope.
        thread_id: The conversation.
        at: When the turn was answered.
    """
    sessions = memory.workspace.ledger.sessions
    row = sessions.get(scope, thread_id)
    if row is not None and row.last_seq > 0:
        with memory.workspace.ledger.transaction():
            sessions.record_turn(scope, thread_id, at, max(row.last_seq, row.summarized_seq) + 2)


def _info(row: SessionRow) -> SessionInfo:
    return SessionInfo(
        row.scope,
        row.thread_id,
        utc(row.created_at),
        utc(row.updated_at),
        row.last_seq,
        row.summarized_seq,
        row.episode_id,
    )


def _strip_ids(notes: str) -> str:
    lines = [_BLOCK_ID_RE.sub("", line) for line in notes.splitlines()]
    return "\n".join(line for line in lines if not line.startswith("# ")).strip()


@dataclass
class _LedgerTarget:
    """The session engine's :class:`CheckpointTarget`: the stored conversation."""

    manager: SessionManager
    scope: str
    thread_id: str
    state: _State
    flush: FlushResult | None
    checkpoint_id: int = 0
    """The stored checkpoint (once committed)."""
    removed: list[_Stored] = field(default_factory=list)
    """The messages it compacted (once committed)."""

    def commit(self, cp: Checkpoint) -> float | None:
        """Store the checkpoint and mark its messages compacted (or raise ``_Conflict``)."""
        self.checkpoint_id, self.removed = self.manager._commit(
            self.scope, self.thread_id, self.state, cp, self.flush, "checkpoint"
        )
        return max(s.at for s in self.removed)

    def store_episode(self, summary: str, at: float) -> str:
        """The conversation's episode of the day, then its messages count as summarised."""
        episode_id = self.manager._store_episode(self.scope, self.thread_id, summary, at)
        self.manager._mark_summarized(self.scope, self.thread_id, self.removed[-1].seq)
        return episode_id

    def log_summary(self, summary: str, at: float) -> None:
        """Log the summary, dated to the conversation."""
        self.manager.log.append(self.scope, self.thread_id, "summary", summary, at=at)


# --- the manager ------------------------------------------------------------------


class SessionManager:
    """Short-term memory of conversations: history, checkpoints, flush, episodes.

    Setup:
        Needs a :class:`~langmem_ext.Memory`; a chat model is optional (without one
        the flush and the summaries use their deterministic fallbacks).

    Instantiate:
        .. code-block:: python

            from langchain_ollama import ChatOllama
            from langmem_ext import Memory
            from langmem_ext.memory.sessions.manager import SessionManager

            memory = Memory("./memory-ws")
            sessions = SessionManager(memory, ChatOllama(model="qwen2.5:7b"))

    Invoke:
        .. code-block:: python

            ctx = sessions.query_context("main", "thread-1")
            if ctx.should_checkpoint:
                sessions.checkpoint("main", "thread-1")   # flush first, then summarise
                ctx = sessions.query_context("main", "thread-1")
            notes = sessions.first_turn_context("main", "thread-1")  # "" after turn 1
            answer = model.invoke([*ctx.history, HumanMessage(question)])
            sessions.write_turn("main", "thread-1", question, answer)

    Async:
        .. code-block:: python

            ctx = await sessions.aquery_context("main", "thread-1")
            await sessions.awrite_turn("main", "thread-1", question, answer)
            await sessions.asummarize_idle()

    Args:
        memory: The memory service (workspace, ledger, settings).
        model: Chat model for the flush turn and the summaries.
        summarizer: Writes checkpoint summaries; default
                :func:`~langmem_ext.short_term.summarizer.summarizer_within` (its calls
                fit the window).
        log: The hot log; default a new :class:`SessionLog`, attached to the
            memory's search (once per engine).
        clock: Returns "now" in epoch seconds.
        checkpointer: The LangGraph checkpointer holding the conversations' threads;
            default the memory's (:func:`~langmem_ext.memory.sessions.threads.default_saver`,
            the memory graph's default too). Give a graph and its sessions the same one.
    """

    def __init__(
        self,
        memory: Memory,
        model: BaseChatModel | None = None,
        *,
        summarizer: Summarizer | None = None,
        log: SessionLog | None = None,
        clock: Callable[[], float] = time.time,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
    ) -> None:
        self.memory = memory
        self.threads = ThreadStore(checkpointer or default_saver(memory))
        self.model = model
        self.summarizer = summarizer or summarizer_within(model, memory.settings.short_term)
        self.log = log if log is not None else SessionLog(memory, clock=clock).attach()
        self._clock = clock
        self._ledger = memory.workspace.ledger
        self._locks: dict[tuple[str, str], threading.RLock] = {}
        self._locks_guard = threading.Lock()

    @property
    def settings(self) -> Settings:
        """The memory's settings tree."""
        return self.memory.settings

    # -- helpers -------------------------------------------------------------------

    def _ids(self, scope: str | None, thread_id: str) -> tuple[str, str]:
        return check_scope(scope or self.settings.default_scope), check_thread_id(thread_id)

    @contextmanager
    def _conversation(self, scope: str, thread_id: str) -> Iterator[None]:
        """Hold the per-conversation lock (calls on one thread serialise)."""
        with self._locks_guard:
            lock = self._locks.setdefault((scope, thread_id), threading.RLock())
        with lock:
            yield

    def _load(self, scope: str, thread_id: str, *, full: bool = False) -> _State:
        """The conversation's live messages (its thread's) and running summary.

        ``full`` adds the archived messages before them. A thread last written for
        another scope reads as empty. Messages an older workspace kept live in
        ``session_messages`` move into the thread here, once.
        """
        thread = self._thread(scope, thread_id)
        rows = self._ledger.conversations.messages(scope, thread_id, include_compacted=True)
        if any(not r.compacted for r in rows):
            thread = self._migrate(scope, thread, rows)
        live_messages = thread.messages
        live_ids = {str(m.id) for m in live_messages if m.id}
        archive: dict[str, str] = {}
        for r in rows:
            key = str(json.loads(r.message).get("data", {}).get("id") or f"seq-{r.seq}")
            if key not in live_ids:
                archive.setdefault(key, r.message)
        row = self._ledger.sessions.get(scope, thread_id)
        at = row.updated_at if row is not None else float(self._clock())
        start = len(archive)
        live = [_Stored(start + i + 1, m, at) for i, m in enumerate(live_messages)]
        return _State(
            live=live,
            summary=thread.summary,
            thread=thread,
            full=[*(_decode(raw) for raw in archive.values()), *live_messages] if full else [],
            archived=start,
            at=at,
        )

    def _migrate(
        self, scope: str, thread: ThreadState, rows: Sequence[StoredMessage]
    ) -> ThreadState:
        """Move an older workspace's live ``session_messages`` into the thread (once).

        They go before what the thread holds, the running summary of the last
        ledger checkpoint with them when the thread has none; the rows are then
        marked compacted (they stay as the archive; reads skip the ones still live).
        """
        old = [r for r in rows if not r.compacted]
        have = {str(m.id) for m in thread.messages if m.id}
        moved = [m for m in (_decode(r.message) for r in old) if str(m.id) not in have]
        values: dict[str, Any] = {"messages": [*moved, *thread.messages]}
        latest = self._ledger.conversations.latest_checkpoint(scope, thread.thread_id)
        if thread.summary is None and latest is not None:
            values.update(summary=latest.summary, mode=MemoryMode.SUMMARY_N.value)
        thread = self.threads.write(thread, values, scope=scope)
        with self._ledger.transaction():
            self._ledger.conversations.mark_compacted(scope, thread.thread_id, [r.seq for r in old])
        logger.info(
            "%d stored messages of %s/%s moved into the thread", len(moved), scope, thread.thread_id
        )
        return thread

    def _thread(self, scope: str, thread_id: str) -> ThreadState:
        """The conversation's thread: ``thread_id``, or ``thread_id@scope`` when the
        thread ``thread_id`` was last written for another scope (LangGraph names a
        thread by its id alone; conversations are per scope)."""
        thread = self.threads.read(thread_id)
        if thread.owner in (None, scope):
            return thread
        return self.threads.read(f"{thread_id}@{scope}")

    # -- query ---------------------------------------------------------------------

    def query_context(
        self, scope: str | None, thread_id: str, *, system_tokens: int = 0
    ) -> MemoryContext:
        """What to send to the model for this conversation (``QueryMemoryContext``).

        Args:
            scope: Whose conversation (default ``settings.default_scope``).
            thread_id: The conversation.
            system_tokens: Tokens sent besides the history (system prompt, recalled
                memories, the new user message), counted against the window.

        Returns:
            The history to send, the full history, mode, token estimate, ratio and
            whether to checkpoint first.
        """
        scope, thread_id = self._ids(scope, thread_id)
        with self._conversation(scope, thread_id):
            state = self._load(scope, thread_id, full=True)
        plan = plan_context(
            state.messages,
            running_summary=state.summary,
            settings=self.settings.short_term,
            system_tokens=system_tokens,
        )
        return MemoryContext(
            scope=scope,
            thread_id=thread_id,
            history=plan.messages_to_send,
            full_history=state.full,
            mode=plan.mode,
            estimated_tokens=plan.estimated_tokens,
            ratio=plan.ratio,
            should_checkpoint=plan.should_checkpoint,
            summary=state.summary,
            budget_tokens=plan.budget_tokens,
        )

    # -- write ---------------------------------------------------------------------

    def write_turn(
        self,
        scope: str | None,
        thread_id: str,
        human: HumanMessage | str,
        ai: AIMessage | str,
        *,
        tool_messages: Sequence[BaseMessage] = (),
        at: datetime | float | None = None,
    ) -> TurnResult:
        """Store one turn and log it to the hot log (``WriteTurn``).

        The turn is stored as ``human``, then ``tool_messages`` (AI tool calls and
        their results, in order), then ``ai``. It is validated first: a turn whose
        tool calls lack results is refused and nothing is written.

        Args:
            scope: Whose conversation.
            thread_id: The conversation.
            human: The user's message.
            ai: The assistant's final answer.
            tool_messages: The turn's intermediate tool-call and tool-result messages.
            at: When the turn happened (default now).

        Returns:
            Sequence numbers of the stored messages and the memory mode.

        Raises:
            InvalidInputError: A message of the wrong type, or a turn that strict
                providers would reject (``InvalidMessageListError``).
        """
        scope, thread_id = self._ids(scope, thread_id)
        h = HumanMessage(human) if isinstance(human, str) else human
        a = AIMessage(ai) if isinstance(ai, str) else ai
        if not isinstance(h, HumanMessage):
            raise InvalidInputError(f"human must be a HumanMessage or str, got {type(h).__name__}.")
        if not isinstance(a, AIMessage):
            raise InvalidInputError(f"ai must be an AIMessage or str, got {type(a).__name__}.")
        when = to_epoch(at, float(self._clock()))
        if is_flush_message(h) or is_no_reply(a):
            logger.info("flush turn passed to write_turn: not stored (flush turns stay silent)")
            return TurnResult(scope, thread_id, self._mode(scope, thread_id), utc(when), False)
        turn = [h, *tool_messages, a]
        validate_messages(turn)
        turn = [m if m.id else m.model_copy(update={"id": f"msg-{uuid.uuid4().hex}"}) for m in turn]
        with self._conversation(scope, thread_id):
            for attempt in range(_WRITE_ATTEMPTS):
                state = self._load(scope, thread_id)
                try:
                    self.threads.write(
                        state.thread, {"messages": [*state.messages, *turn]}, scope=scope
                    )
                    break
                except ThreadConflict:  # the graph (or another process) wrote first
                    if attempt + 1 == _WRITE_ATTEMPTS:
                        raise
            last = state.total
            with self._ledger.transaction():
                self._ledger.sessions.record_turn(scope, thread_id, when, last + len(turn))
            events = [
                NewEvent(role, text, when)
                for role, text in (("user", message_text(h)), ("assistant", message_text(a)))
                if text.strip()
            ]
            try:
                self.log.append_many(scope, thread_id, events)
            except LangmemError as e:  # the turn itself is committed; keep going
                logger.error("turn stored but not logged to the session log: %s", e)
            mode = self._mode(scope, thread_id)
        return TurnResult(
            scope,
            thread_id,
            mode,
            utc(when),
            True,
            last + 1,
            last + len(turn),
        )

    def _mode(self, scope: str, thread_id: str) -> MemoryMode:
        thread = self._thread(scope, thread_id)
        return MemoryMode.SUMMARY_N if thread.summary is not None else MemoryMode.FULL_HISTORY

    # -- flush ---------------------------------------------------------------------

    def _flush(self, scope: str, thread_id: str, state: _State) -> FlushResult | None:
        """Flush the messages no earlier flush has seen; saves are committed on return."""
        row = self._ledger.sessions.get(scope, thread_id)
        flushed_seq = row.flushed_seq if row is not None else 0
        fresh = [s for s in state.live if s.seq > flushed_seq]
        if not fresh:
            return None
        result = flush_to_pending(self.memory, scope, [s.message for s in fresh], self.model)
        with self._ledger.transaction():
            self._ledger.sessions.mark_flushed(scope, thread_id, fresh[-1].seq)
        logger.info(
            "flush of %s/%s: %d pending saves%s",
            scope,
            thread_id,
            len(result.pending_ids),
            " (extractive fallback)" if result.used_fallback else "",
        )
        return result

    # -- checkpoint ----------------------------------------------------------------

    def checkpoint(
        self,
        scope: str | None,
        thread_id: str,
        *,
        force: bool = False,
        system_tokens: int = 0,
        summary: str | None = None,
        keep_last_turns: int | None = None,
    ) -> CheckpointResult:
        """Flush, then summarise the old part of the conversation (``CheckpointShortMemory``).

        Steps: (1) the flush saves durable facts as pending items; (2) only then
        the summary of everything before the last ``keep_last_turns`` turns is
        written (previous summary rolled in); (3) the checkpoint is stored and the
        summarised messages are marked compacted (never deleted); (4) the summary
        is logged as a session event and stored as an ``episode`` memory dated to
        the conversation. If (2) or (3) fails nothing is marked, the result says
        ``failed`` and the next :meth:`query_context` still says
        ``should_checkpoint``.

        Args:
            scope: Whose conversation.
            thread_id: The conversation.
            force: Checkpoint even when the history is under the threshold.
            system_tokens: Tokens sent besides the history (as in
                :meth:`query_context`).
            summary: The summary, written by the caller (an agent that summarised
                the conversation itself): it becomes the running summary and the
                episode, and no summary is written here. ``None``: the engine's
                summarizer writes it.
            keep_last_turns: How many of the latest turns stay in the history
                (default ``short_term.keep_last_turns``).

        Returns:
            What was done; ``made`` is False when nothing was due or it failed.

        Raises:
            InvalidInputError: an empty or too long ``summary`` (over
                ``max_text_chars``), or ``keep_last_turns`` under 1.
        """
        scope, thread_id = self._ids(scope, thread_id)
        st = self._short_term(keep_last_turns)
        summarizer = self._summarizer(summary)
        with self._conversation(scope, thread_id):
            state = self._load(scope, thread_id)
            messages = state.messages
            plan = plan_context(
                messages, running_summary=state.summary, settings=st, system_tokens=system_tokens
            )
            body = messages[leading_system_count(messages) :]
            if not plan.should_checkpoint and not (force and safe_cut_index(body, 1) > 0):
                return CheckpointResult(False, "not_due")
            flush: FlushResult | None = None
            if st.flush_before_checkpoint:
                try:
                    flush = self._flush(scope, thread_id, state)
                except Exception as e:  # the pending store could not be written
                    logger.exception("flush could not save: checkpoint postponed")
                    return CheckpointResult(False, "failed", error=f"flush: {e}")
            target = _LedgerTarget(self, scope, thread_id, state, flush)
            try:
                done = run_checkpoint(
                    messages,
                    state.summary,
                    summarizer,
                    st,
                    target,
                    system_tokens=system_tokens,
                )
            except _Conflict:
                logger.warning(
                    "another checkpoint of %s/%s landed first; skipped", scope, thread_id
                )
                return CheckpointResult(False, "conflict", flush=flush)
            except Exception as e:
                logger.exception("checkpoint failed; nothing compacted, retry later")
                return CheckpointResult(
                    False, "failed", flush=flush, error=f"{type(e).__name__}: {e}"
                )
            if done is None:
                return CheckpointResult(False, "nothing_to_compact", flush=flush)
        cp, removed = done.checkpoint, target.removed
        logger.info(
            "checkpoint of %s/%s: %d messages compacted, summary %d chars%s",
            scope,
            thread_id,
            len(removed),
            len(cp.summary),
            " (extractive fallback)" if cp.used_fallback else "",
        )
        return CheckpointResult(
            made=True,
            reason="made",
            summary=cp.summary,
            compacted=len(removed),
            cut_seq=removed[-1].seq,
            checkpoint_id=target.checkpoint_id,
            episode_id=done.episode_id,
            flush=flush,
            summary_used_fallback=cp.used_fallback,
        )

    def _commit(
        self,
        scope: str,
        thread_id: str,
        state: _State,
        cp: Checkpoint,
        flush: FlushResult | None,
        kind: str,
    ) -> tuple[int, list[_Stored]]:
        """Archive the summarised messages, record the checkpoint, drop them from the thread.

        The thread write comes last (a failure there leaves archived messages that
        are still live, which reads skip) and raises ``_Conflict`` when the thread
        changed since ``state`` was read.
        """
        pinned = leading_system_count(state.messages)
        removed = state.live[pinned : pinned + cp.removed_count]
        expected = [str(s.message.id) for s in removed if s.message.id]
        if cp.removed_ids and cp.removed_ids != expected:
            raise RuntimeError("checkpoint removed messages other than the oldest ones")
        cut_seq = removed[-1].seq if removed else 0
        conversation_at = max((s.at for s in removed), default=float(self._clock()))
        row = CheckpointRow(
            scope=scope,
            thread_id=thread_id,
            kind=kind,
            summary=cp.summary,
            cut_seq=cut_seq,
            compacted=len(removed),
            used_fallback=cp.used_fallback,
            flushed=len(flush.pending_ids) if flush else 0,
            created_at=float(self._clock()),
            conversation_at=conversation_at,
        )
        current = self.threads.read(state.thread.thread_id)
        if current.checkpoint_id != state.thread.checkpoint_id:
            raise _Conflict
        archive_messages(
            self.memory, scope, thread_id, [s.message for s in removed], conversation_at
        )
        with self._ledger.transaction():
            cp_id = self._ledger.conversations.add_checkpoint(row)
        gone = {id(s.message) for s in removed}
        kept = [s.message for s in state.live if id(s.message) not in gone]
        values = {
            "messages": kept,
            "summary": cp.summary,
            "mode": MemoryMode.SUMMARY_N.value,
            "checkpoints": int(state.thread.values.get("checkpoints") or 0) + 1,
            "token_count": cp.estimated_tokens,
        }
        try:
            self.threads.write(state.thread, values, scope=scope)
        except ThreadConflict as e:
            raise _Conflict from e
        return cp_id, removed

    def _log_summary(self, scope: str, thread_id: str, summary: str, at: float) -> None:
        if not summary.strip():
            return
        try:
            self.log.append(scope, thread_id, "summary", summary, at=at)
        except LangmemError as e:
            logger.error("summary not logged to the session log: %s", e)

    def _store_episode(self, scope: str, thread_id: str, summary: str, at: float) -> str:
        """Store (or update) the conversation's episode of the day of ``at``."""
        day = datetime.fromtimestamp(at).date().isoformat()
        text = clip(
            f"Conversation {thread_id} on {day}, summary:\n{summary.strip()}",
            self.settings.max_text_chars,
        )
        row = self._ledger.sessions.get(scope, thread_id)
        if row is not None and row.episode_id and row.episode_day == day:
            try:  # the day's episode is one running record: edited, not versioned
                self.memory.update(row.episode_id, text, scope=scope, supersede=False)
                return row.episode_id
            except (EntryNotFoundError, EntrySupersededError):
                logger.info("episode %s was deleted or replaced; storing a new one", row.episode_id)
        entry_id = self.memory.add(
            text, scope=scope, category="episode", target="daily", created_at=at, source="session"
        )
        with self._ledger.transaction():
            self._ledger.sessions.set_episode(scope, thread_id, entry_id, day, at)
        return entry_id

    def _mark_summarized(self, scope: str, thread_id: str, seq: int) -> None:
        with self._ledger.transaction():
            self._ledger.sessions.mark_summarized(scope, thread_id, seq)

    # -- finalize / idle -----------------------------------------------------------

    def _short_term(self, keep_last_turns: int | None) -> ShortTermSettings:
        """The short-term settings, with the caller's ``keep_last_turns`` when given."""
        st = self.settings.short_term
        if keep_last_turns is None:
            return st
        if isinstance(keep_last_turns, bool) or int(keep_last_turns) < 1:
            raise InvalidInputError(f"keep_last_turns must be at least 1, got {keep_last_turns!r}.")
        return st.model_copy(update={"keep_last_turns": int(keep_last_turns)})

    def _summarizer(self, summary: str | None) -> Summarizer:
        """The engine's summarizer, or one answering with the caller's ``summary``."""
        if summary is None:
            return self.summarizer
        limit = self.settings.max_text_chars
        if len(summary) > limit:
            raise InvalidInputError(
                f"The summary has {len(summary)} characters, over max_text_chars ({limit}): "
                "shorten it."
            )
        return GivenSummary(summary)

    def finalize_session(
        self, scope: str | None, thread_id: str, *, summary: str | None = None
    ) -> EpisodeResult | None:
        """Summarise what is not yet in an episode into one (``FinalizeSessionMemory``).

        The summary covers the whole conversation (running summary rolled in);
        it is stored as the conversation's ``episode`` memory of that day, logged as
        a session event, and stored as a final checkpoint (the last turns stay for a
        resumed session). Calling it again without new messages does nothing.

        Args:
            scope: Whose conversation.
            thread_id: The conversation.
            summary: The summary of the whole conversation, written by the caller;
                ``None``: the engine's summarizer writes it.

        Returns:
            The episode, or ``None`` when everything was already summarised.

        Raises:
            InvalidInputError: an empty or too long ``summary``.
        """
        scope, thread_id = self._ids(scope, thread_id)
        summarizer = self._summarizer(summary)
        with self._conversation(scope, thread_id):
            row = self._ledger.sessions.get(scope, thread_id)
            state = self._load(scope, thread_id)
            if not state.live or state.total <= (row.summarized_seq if row else 0):
                return None
            cp = finalize_checkpoint(
                state.messages, state.summary, summarizer, self.settings.short_term
            )
            if not cp.summary.strip():
                return None
            last = state.live[-1]
            episode_id = self._store_episode(scope, thread_id, cp.summary, last.at)
            removed: list[_Stored] = []
            if cp.removed_count:  # else the history stays as it is: nothing to condense
                try:
                    _, removed = self._commit(scope, thread_id, state, cp, None, "final")
                except _Conflict:
                    logger.info("a checkpoint of %s/%s landed meanwhile", scope, thread_id)
            self._mark_summarized(scope, thread_id, state.total)
            self._log_summary(scope, thread_id, cp.summary, last.at)
        logger.info("session %s/%s summarised into episode %s", scope, thread_id, episode_id)
        return EpisodeResult(
            scope, thread_id, cp.summary, episode_id, len(removed), cp.used_fallback
        )

    def idle_sessions(self, now: datetime | float | None = None) -> list[SessionInfo]:
        """Conversations idle for ``short_term.idle_episode_hours`` with unsummarised messages.

        Args:
            now: The current time (default the clock).

        Returns:
            Those conversations, least recently active first, in every scope.
        """
        cutoff = to_epoch(now, float(self._clock())) - (
            float(self.settings.short_term.idle_episode_hours) * 3600.0
        )
        return [_info(r) for r in self._ledger.sessions.idle(cutoff)]

    def summarize_idle(self, now: datetime | float | None = None) -> list[EpisodeResult]:
        """Turn every idle conversation into an episode, once.

        Args:
            now: The current time (default the clock).

        Returns:
            The episodes stored (a conversation that failed is logged and retried
            on the next call).
        """
        out: list[EpisodeResult] = []
        for info in self.idle_sessions(now):
            try:
                result = self.finalize_session(info.scope, info.thread_id)
            except Exception:
                logger.exception("idle session %s/%s not summarised", info.scope, info.thread_id)
                continue
            if result is not None:
                out.append(result)
        return out

    # -- first turn ----------------------------------------------------------------

    def first_turn_context(
        self, scope: str | None, thread_id: str, now: datetime | float | None = None
    ) -> str:
        """Today's and yesterday's daily notes, once per conversation.

        Only the daily Markdown files are read (no search). The text is capped at
        ``injection.first_turn_daily_chars``: today's notes get at least half, and
        the rest of the budget when yesterday's are short. Block ids are removed.

        Args:
            scope: Whose notes.
            thread_id: The conversation; after the first call it returns ``""``.
            now: The current time (default the clock).

        Returns:
            The block to put in front of the model, or ``""`` (already injected,
            or no notes).
        """
        scope, thread_id = self._ids(scope, thread_id)
        when = to_epoch(now, float(self._clock()))
        budget = int(self.settings.injection.first_turn_daily_chars)
        with self._conversation(scope, thread_id):
            row = self._ledger.sessions.get(scope, thread_id)
            if row is not None and row.first_turn_at is not None:
                return ""
            thread = self._thread(scope, thread_id)
            if thread.values.get("first_turn_done"):  # the graph injected them
                with self._ledger.transaction():
                    self._ledger.sessions.mark_first_turn(scope, thread_id, when)
                return ""
            today = datetime.fromtimestamp(when).date()
            notes = self._daily_block(scope, today, budget)
            with self._ledger.transaction():
                self._ledger.sessions.mark_first_turn(scope, thread_id, when)
            try:
                self.threads.write(thread, {"first_turn_done": True}, scope=scope)
            except ThreadConflict:
                logger.info("first-turn flag of %s not set in its thread", thread_id)
        return notes

    def _daily_block(self, scope: str, today: date, budget: int) -> str:
        days = [(today, "today"), (today - timedelta(days=1), "yesterday")]
        texts = [
            (d, label, _strip_ids(self.memory.daily_notes(d, scope=scope))) for d, label in days
        ]
        texts = [t for t in texts if t[2]]
        if not texts or budget <= len(DAILY_NOTES_HEADER) + 40:
            return ""
        room = budget - len(DAILY_NOTES_HEADER) - 1
        parts: list[str] = []
        for i, (d, label, text) in enumerate(texts):
            header = f"## {d.isoformat()} ({label})\n"
            later = sum(len(t[2]) + 20 for t in texts[i + 1 :])
            share = max(room // (len(texts) - i), room - later)
            body = clip(text, max(0, share - len(header) - 2))
            if body:
                parts.append(header + body)
                room -= len(header) + len(body) + 2
        block = "\n\n".join([DAILY_NOTES_HEADER, *parts]) if parts else ""
        return clip(block, budget)

    # -- info ----------------------------------------------------------------------

    def session_info(self, scope: str | None, thread_id: str) -> SessionInfo | None:
        """Bookkeeping of one conversation (turns of the graph included), or ``None``
        when it has none."""
        scope, thread_id = self._ids(scope, thread_id)
        with self._conversation(scope, thread_id):
            state = self._load(scope, thread_id)
        row = self._ledger.sessions.get(scope, thread_id)
        if row is None:
            if not state.total:
                return None
            at = utc(state.thread.at or float(self._clock()))
            return SessionInfo(scope, thread_id, at, at, state.total, 0, None)
        info = _info(row)
        return replace(info, message_count=max(state.total, info.message_count))

    def tracks(self, scope: str | None, thread_id: str) -> bool:
        """Whether turns of this conversation were written through :meth:`write_turn`
        (then :meth:`summarize_idle` turns it into episodes, not the hot-log job)."""
        scope, thread_id = self._ids(scope, thread_id)
        row = self._ledger.sessions.get(scope, thread_id)
        return row is not None and row.last_seq > 0

    # -- async twins ---------------------------------------------------------------

    aquery_context = async_method(query_context)
    awrite_turn = async_method(write_turn)
    acheckpoint = async_method(checkpoint)
    afinalize_session = async_method(finalize_session)
    aidle_sessions = async_method(idle_sessions)
    asummarize_idle = async_method(summarize_idle)
    afirst_turn_context = async_method(first_turn_context)
    asession_info = async_method(session_info)
    atracks = async_method(tracks)


__all__ = [
    "DAILY_NOTES_HEADER",
    "CheckpointResult",
    "CheckpointTarget",
    "ConversationKey",
    "EpisodeResult",
    "MemoryContext",
    "RecordedCheckpoint",
    "SessionInfo",
    "SessionManager",
    "TurnResult",
    "archive_messages",
    "note_turn",
    "record_checkpoint",
    "run_checkpoint",
]

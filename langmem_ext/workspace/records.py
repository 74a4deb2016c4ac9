"""The ledger's records and the repositories a storage engine implements.

Engine-neutral: the row types services read and write, and one ``Protocol`` per
table family of the ledger (``state.db``). :mod:`langmem_ext.workspace.sqlite` is
the embedded implementation; a PostgreSQL engine implements the same protocols,
and services, which only call these methods, do not change.

Writes made inside ``Ledger.transaction()`` commit together; outside one, each
write commits on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
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


@dataclass(frozen=True)
class StoredMessage:
    """One message of a conversation (``session_messages``)."""

    seq: int
    """Position in the conversation (1, 2, ...)."""
    message: str
    """The message as LangChain JSON (``messages_to_dict``)."""
    at: float
    compacted: bool
    """A checkpoint summarised it (it is kept, not sent)."""


@dataclass(frozen=True)
class SessionRow:
    """Bookkeeping of one conversation (``sessions``)."""

    scope: str
    thread_id: str
    created_at: float
    updated_at: float
    """Time of the last message."""
    last_seq: int
    summarized_seq: int
    """Messages up to this one are in an episode."""
    flushed_seq: int
    """Messages up to this one were read by a flush."""
    first_turn_at: float | None
    """When the first-turn daily notes were injected."""
    episode_id: str | None
    episode_day: str | None


@dataclass(frozen=True)
class CheckpointRow:
    """One checkpoint of a conversation (``checkpoints``)."""

    scope: str
    thread_id: str
    kind: str
    """``checkpoint`` or ``final``."""
    summary: str
    cut_seq: int
    """The last message it compacted."""
    compacted: int
    used_fallback: bool
    flushed: int
    """Pending saves the flush before it made."""
    created_at: float
    conversation_at: float
    """Time of the last message it compacted."""
    id: int = 0
    """Assigned by the repository (ignored when adding)."""


@dataclass(frozen=True)
class EventRow:
    """One event of the session hot log (``session_events``)."""

    id: int
    scope: str
    thread_id: str
    role: str
    text: str
    at: float
    path: str
    """Workspace-relative transcript file."""
    line: int
    """1-based line of the event in ``path``."""


@dataclass(frozen=True)
class NewEventRow:
    """An event to add to the hot log, with its keyword tokens."""

    scope: str
    thread_id: str
    role: str
    text: str
    at: float
    path: str
    line: int
    tokens: tuple[str, ...]
    """The event's distinct keyword tokens (:func:`langmem_ext.text.index_tokens`)."""


@dataclass(frozen=True)
class EventFilter:
    """Which events of the hot log a read returns."""

    scope: str
    since: float
    """Only events at or after this time (epoch seconds)."""
    until: float | None = None
    """Only events before this time."""
    thread_id: str | None = None
    role: str | None = None


@dataclass(frozen=True)
class EventMatch:
    """An event that shares keyword tokens with a query."""

    event: EventRow
    tokens: frozenset[str]
    """The event's stored keyword tokens."""
    bm25: float
    """Its BM25 score for the query: positive, bigger is better."""


class MetaRepository(Protocol):
    """Small key/value settings of the workspace (``meta``)."""

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None``."""
        ...

    def set(self, key: str, value: str) -> None:
        """Write ``key`` (replacing its value)."""
        ...


class SessionRepository(Protocol):
    """Per-conversation bookkeeping (``sessions``).

    The ``mark_*`` and ``set_*`` writes create the conversation's row when it has
    none; a sequence number only ever grows.
    """

    def get(self, scope: str, thread_id: str) -> SessionRow | None:
        """The conversation's row, or ``None``."""
        ...

    def record_turn(self, scope: str, thread_id: str, at: float, last_seq: int) -> None:
        """A turn ending at message ``last_seq`` was stored at ``at``."""
        ...

    def mark_flushed(self, scope: str, thread_id: str, seq: int) -> None:
        """A flush read the messages up to ``seq`` (an existing row only)."""
        ...

    def mark_summarized(self, scope: str, thread_id: str, seq: int) -> None:
        """The messages up to ``seq`` are in an episode (an existing row only)."""
        ...

    def set_episode(self, scope: str, thread_id: str, episode_id: str, day: str, at: float) -> None:
        """The conversation's episode of ``day`` is ``episode_id``."""
        ...

    def mark_first_turn(self, scope: str, thread_id: str, at: float) -> None:
        """The first-turn daily notes were injected at ``at``."""
        ...

    def idle(self, before: float) -> list[SessionRow]:
        """Conversations last active at or before ``before`` with messages not yet
        in an episode, least recently active first."""
        ...


class ConversationRepository(Protocol):
    """A conversation's stored messages and its checkpoints (``session_messages``,
    ``checkpoints``). Messages are never deleted: a checkpoint marks them compacted."""

    def messages(
        self, scope: str, thread_id: str, *, include_compacted: bool = False
    ) -> list[StoredMessage]:
        """The conversation's messages in order (only the live ones by default)."""
        ...

    def append(
        self, scope: str, thread_id: str, messages: Sequence[tuple[str, str]], at: float
    ) -> int:
        """Store ``(message_id, message JSON)`` pairs after the last message.

        Returns:
            The sequence number of the first one (the others follow).
        """
        ...

    def mark_compacted(self, scope: str, thread_id: str, seqs: Sequence[int]) -> None:
        """Mark these messages compacted."""
        ...

    def latest_checkpoint(self, scope: str, thread_id: str) -> CheckpointRow | None:
        """The conversation's newest checkpoint, or ``None``."""
        ...

    def add_checkpoint(self, row: CheckpointRow) -> int:
        """Store a checkpoint; returns its id (ids grow)."""
        ...


class EventRepository(Protocol):
    """The session hot log (``session_events``) and its keyword lookup."""

    def add(self, events: Sequence[NewEventRow]) -> list[int]:
        """Store events with their tokens; returns their ids, in order."""
        ...

    def purge(self, before: float) -> int:
        """Delete the events older than ``before``; returns how many."""
        ...

    def unindexed(self, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` ``(id, text)`` of events without keyword tokens (logged
        before the lookup existed), oldest first."""
        ...

    def index(self, tokens: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        """Store the keyword tokens of events, by id."""
        ...

    def recent(self, where: EventFilter, limit: int | None = None) -> list[EventRow]:
        """The events ``where`` selects, newest first, at most ``limit``."""
        ...

    def matching(self, where: EventFilter, tokens: Sequence[str], limit: int) -> list[EventMatch]:
        """The best ``limit`` events ``where`` selects that hold any of ``tokens``:
        BM25 over the events' tokens, best first (ties: newest first)."""
        ...

    def bm25_full(self, tokens: Sequence[str]) -> float:
        """The BM25 score of an event of average length holding each of ``tokens``
        once (the sum of their IDFs): what a match of the whole query scores."""
        ...


__all__ = [
    "CheckpointRow",
    "ConversationRepository",
    "EntryState",
    "EventFilter",
    "EventMatch",
    "EventRepository",
    "EventRow",
    "MetaRepository",
    "NewEventRow",
    "PendingRow",
    "SessionRepository",
    "SessionRow",
    "StoredMessage",
]

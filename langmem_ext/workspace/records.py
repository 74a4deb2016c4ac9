"""The ledger's records and the repositories a storage engine implements.

Engine-neutral: the row types services read and write, and one ``Protocol`` per
table family of the ledger (``state.db``). :mod:`langmem_ext.workspace.sqlite` is
the embedded implementation; a PostgreSQL engine implements the same protocols,
and services, which only call these methods, do not change.

Writes made inside ``Ledger.transaction()`` commit together; outside one, each
write commits on its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol


class EntryTableRow(NamedTuple):
    """What a table of memories shows of an entry's ledger state (cheap to read in bulk)."""

    source: str
    verified: bool
    last_access: float | None
    valid_to: float | None


@dataclass(frozen=True)
class EntryState:
    """Ledger state of one entry (one version of a memory).

    A version is current while ``valid_to`` is ``None``; an update closes it
    (``valid_to``) and opens a new version whose ``supersedes`` names it. It was
    valid from its ``created_at`` (when it was said).
    """

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
    valid_to: float | None = None
    """When a newer version replaced it (``None``: current)."""
    supersedes: str | None = None
    """The id of the version it replaced."""
    slot: str | None = None
    """What a later statement of the same fact replaces (``user|lives_in``)."""


class EntryDistribution(NamedTuple):
    """How a scope's current memories spread (the admin stats charts; counted in SQL)."""

    importance_tenths: tuple[int, ...]
    """Memories per tenth of importance: ``[0, 0.1)``, ``[0.1, 0.2)``, … ``[0.9, 1]``."""
    added_per_day: dict[str, int]
    """Memories said on each UTC day (ISO date) since the asked time; days without
    any are left out."""


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
    supersedes: str | None = None
    """The memory this item replaces once confirmed (a new version of it; ledger
    migration 7), or ``None`` for a new memory."""
    thread_id: str | None = None
    """The conversation that proposed it (ledger migration 9), or ``None`` when it
    came from no conversation (the CLI, the admin UI, the API)."""


@dataclass(frozen=True)
class HistoryRow:
    """One edit of an entry (``entry_history``)."""

    entry_id: str
    scope: str
    op: str
    """``add``, ``update``, ``superseded``, ``delete``, ``hand-add``, ``hand-edit``,
    ``hand-supersede``, ``hand-reopen``, ``move``, ``removed`` or ``profile`` (the
    safety fields of the profile it states; ``new_text`` says which and what became
    of them, see :mod:`langmem_ext.memory.safety.links`); the lifecycle
    (:mod:`langmem_ext.memory.lifecycle.operations`) adds ``decay`` and ``review-keep``
    (``old_text`` / ``new_text`` hold the importance before and after, e.g. ``"1.0000"``)
    and ``promote`` (both hold the entry's text)."""
    old_text: str | None
    new_text: str | None
    at: float


@dataclass(frozen=True)
class ProfileChangeRow:
    """One change of a profile field (``profile_history``)."""

    scope: str
    field: str
    """A typed field (``allergies``, ``name`` …) or ``preferences.<key>``."""
    old_value: str | None
    """The value before, as JSON (``None``: unset)."""
    new_value: str | None
    """The value after, as JSON (``None``: removed)."""
    source: str
    """Who changed it: ``app``, ``agent``, ``extractor``, ``hand-edit`` …"""
    at: float


@dataclass(frozen=True)
class SafetyLinkRow:
    """One safety fact a memory states (``safety_links``): the profile field it is
    about, whom, and one item (``""`` when the statement names none)."""

    entry_id: str
    scope: str
    text_hash: str
    """The text the fact was read from: a link counts while the entry still has it."""
    field: str
    """A safety field of the profile (``allergies``, ``medications`` …)."""
    subject: str
    """``user`` or the key of another person (``sister``, ``tom``)."""
    item: str
    negated: bool
    at: float


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
class EventFields:
    """What one event of the session hot log (``session_events``) says."""

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
class EventRow(EventFields):
    """One stored event of the session hot log, with the id the table gave it."""

    id: int


@dataclass(frozen=True)
class NewEventRow(EventFields):
    """An event to add to the hot log, with its keyword tokens."""

    tokens: tuple[str, ...]
    """The event's distinct keyword tokens (:func:`langmem_ext.language.text.index_tokens`)."""


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

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Every key starting with ``prefix``, with its value."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key`` (nothing when it is not there)."""
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

    def table_of_scope(self, scope: str) -> dict[str, EntryTableRow]:
        """The live entries of a scope as the rows of a table, by id (no full states)."""
        ...

    def distribution(self, scope: str, *, since: float) -> EntryDistribution:
        """How the scope's current memories (live, not superseded) spread over
        importance, and over the UTC days since ``since`` (epoch seconds)."""
        ...

    def all_ids(self) -> set[str]:
        """Every id the ledger knows (live or deleted): never to be reused."""
        ...

    def exists(self, entry_id: str) -> bool:
        """Whether the ledger knows the id (live or deleted)."""
        ...

    def known(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` the ledger knows (live or deleted), in one read."""
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

    def add(self, states: Sequence[EntryState], history: Sequence[HistoryRow]) -> None:
        """Store new entries: their states (insert or replace) and their history rows,
        in one transaction (or the caller's)."""
        ...

    def closed_of_scope(self, scope: str) -> dict[str, float]:
        """Superseded live versions of a scope: id -> when they were replaced."""
        ...

    def current_of_slots(
        self, scope: str, slots: Iterable[str], *, limit: int | None = None
    ) -> list[EntryState]:
        """Current live versions whose slot is one of ``slots`` or starts with one of
        them followed by ``|`` (``user|allergic_to`` covers ``user|allergic_to|花生``),
        oldest first; with ``limit``, the newest ``limit`` of each slot."""
        ...

    def successor(self, entry_id: str) -> EntryState | None:
        """The version that replaced ``entry_id`` (live or deleted), or ``None``."""
        ...

    def set_valid_to(self, entry_id: str, valid_to: float | None) -> None:
        """Close (a time) or reopen (``None``) a version."""
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
        """The live current entries of a scope that decay may change (not ``system`` /
        ``core``, not superseded versions: they are history)."""
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


class ProfileHistoryRepository(Protocol):
    """Every change of the users' profiles (``profile_history``)."""

    def record(self, rows: Sequence[ProfileChangeRow]) -> None:
        """Append changes (in one write)."""
        ...

    def of_scope(self, scope: str, field: str | None = None) -> list[ProfileChangeRow]:
        """A scope's changes (of one field when given), oldest first."""
        ...

    def latest(self, scope: str) -> dict[str, str | None]:
        """The last recorded value (JSON) of every field the scope ever changed."""
        ...


class SafetyLinkRepository(Protocol):
    """Which safety facts memories state (``safety_links``): the links between a memory
    and the profile fields it speaks of.

    Reads count a link only while its entry is live, current (not superseded) and
    still has the text the link was read from.
    """

    def add(self, rows: Sequence[SafetyLinkRow]) -> None:
        """Store links (one write; a link stored again replaces the old one)."""
        ...

    def of_scope(
        self,
        scope: str,
        fields: Sequence[str] | None = None,
        subjects: Sequence[str] | None = None,
    ) -> list[SafetyLinkRow]:
        """The scope's current links (of these fields and subjects when given), oldest
        memory first."""
        ...

    def of_entries(self, entry_ids: Sequence[str]) -> list[SafetyLinkRow]:
        """The current links of these entries."""
        ...

    def worth_reading(
        self, scope: str, fields: Sequence[str], subjects: Sequence[str], limit: int
    ) -> list[SafetyLinkRow]:
        """At most ``limit`` current links of these fields and subjects, those most
        worth reading first: the newest memory stating each distinct item (each
        allergen, each medication; a link naming no item is its own), then the
        others, newest first."""
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

    def last_id(self) -> int:
        """The id of the last event logged (0: none)."""
        ...

    def after(self, last_id: int, limit: int) -> list[EventRow]:
        """Up to ``limit`` events logged after the event ``last_id`` (by id), oldest first."""
        ...

    def many(self, where: EventFilter, ids: Sequence[int]) -> dict[int, EventRow]:
        """The events of ``ids`` that ``where`` selects, by id."""
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

        The query and the texts are tokenised by :mod:`langmem_ext.language.text`; an item
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


@dataclass(frozen=True)
class NewTriple:
    """One triple to record for a memory (display forms and their keys)."""

    subject_key: str
    """The subject's entity key (normalised: what lookups match)."""
    subject: str
    """The subject as written."""
    predicate: str
    """A canonical relation (``likes``, ``lives_in``)."""
    frequency: str | None
    """A frequency adverb, when stated."""
    object_key: str
    """The object's entity key."""
    object: str
    """The object as written."""
    negated: bool
    """The memory denies the relation."""
    condition: str | None
    """A condition, when stated."""


def triple_id(scope: str, t: NewTriple) -> str:
    """A triple's id: a digest of what makes it unique, so a rebuild gives the same ids."""
    key = "\x1f".join((scope, t.subject_key, t.predicate, t.object_key, str(int(t.negated))))
    return "t-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class ExtractedEntry:
    """What the extractor found in one memory: the mark and the triples it supports."""

    entry_id: str
    text_hash: str
    """The text the triples were read from (a changed text is extracted again)."""
    triples: tuple[NewTriple, ...]


@dataclass(frozen=True)
class TripleRow:
    """One triple as read, with the supporting memories that count at the time asked.

    ``support`` holds ``(entry_id, created_at, valid_to)`` of the supporting entries
    (not deleted); ``valid_to`` is ``None`` while one of them is current, else the
    latest ``valid_to`` of them.
    """

    id: str
    scope: str
    triple: NewTriple
    """What the triple says."""
    created_at: float
    support: tuple[tuple[str, float, float | None], ...]
    valid_to: float | None


class TripleRepository(Protocol):
    """The knowledge graph's triples (``triples``, ``triple_support``, ``triple_marks``).

    A triple is live at time ``t`` while at least one supporting entry is live at
    ``t`` (not deleted, created by ``t``, not superseded by ``t``); reads decide that
    by reading ``entries``, which this repository never writes.
    """

    def unextracted(self, scope: str, limit: int) -> list[tuple[str, str]]:
        """``(entry_id, text_hash)`` of live entries of ``scope`` (current or superseded)
        never extracted, or extracted from another text; oldest first."""
        ...

    def unextracted_of(self, scope: str, ids: Sequence[str]) -> list[tuple[str, str]]:
        """The entries of ``ids`` that :meth:`unextracted` would return, oldest first."""
        ...

    def record(
        self, scope: str, extracted: Sequence[ExtractedEntry], *, extractor: str, at: float
    ) -> int:
        """Replace each entry's support by its triples and mark it extracted (one write).

        Returns:
            How many triples were new.
        """
        ...

    def live(
        self, scope: str, keys: Sequence[str], as_of: float | None, closed: bool, cap: int
    ) -> list[TripleRow]:
        """Triples of ``scope`` whose subject or object key is one of ``keys``.

        Args:
            scope: The scope.
            keys: Entity keys.
            as_of: The time (``None``: now, current supports only).
            closed: Also triples whose supports are all superseded.
            cap: At most this many triples per key (a hub cannot flood the read).
        """
        ...

    def degrees(self, scope: str) -> dict[str, int]:
        """Entity key -> number of live (current) triples it is the subject or object of."""
        ...

    def prune(self, scope: str | None = None) -> int:
        """Delete support and marks of deleted or vanished entries, and triples left
        without support. Returns how many triples went."""
        ...

    def prune_entries(self, entry_ids: Sequence[str], triple_ids: Sequence[str]) -> int:
        """:meth:`prune` for these entries only, and of ``triple_ids`` (the triples they
        supported, from :meth:`supported_by`). Returns how many triples went."""
        ...

    def supported_by(self, entry_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(triple id, subject key, object key)`` of the triples these entries support."""
        ...

    def clear(self, scope: str | None = None) -> int:
        """Delete the triples, support and marks of ``scope`` (all when ``None``).
        Returns how many triples went."""
        ...

    def current(self, scope: str) -> list[TripleRow]:
        """Every triple of ``scope`` with a current supporting entry, with those entries."""
        ...

    def count(self, scope: str | None = None) -> int:
        """Stored triples (live or not) of ``scope`` (all when ``None``)."""
        ...


@dataclass(frozen=True)
class TurnJob:
    """A turn accepted for extraction and not yet extracted (a ``turn_jobs`` row).

    Attributes:
        id: The job's id.
        scope: Whose memory the turn changes.
        thread_id: The conversation of the turn (``None``: none named).
        messages: The turn's messages from its user message on, as JSON
            (``langchain_core.messages.messages_to_dict``).
        recalled: The memories recalled for the turn, ``[[id, text], …]`` as JSON
            (``None``: the extraction searches for them).
        at: When the turn happened (epoch seconds).
        created_at: When the job was written.
        claimed_by: The process running it (``None``: nobody).
        claimed_until: When that claim runs out (epoch seconds, by the engine's clock).
    """

    id: str
    scope: str
    thread_id: str | None
    messages: str
    recalled: str | None
    at: float
    created_at: float
    claimed_by: str | None = None
    claimed_until: float | None = None


class TurnJobRepository(Protocol):
    """Turns waiting for extraction (``turn_jobs``), claimed by one process at a time.

    A claim lasts a number of seconds by the engine's clock; a job whose claim ran
    out (its process died) may be claimed by any other. Claims are atomic: two
    processes racing for one job never both get it.
    """

    def add(self, job: TurnJob, *, holder: str | None = None, seconds: float = 0.0) -> None:
        """Write a job (joins the thread's open transaction), claimed by ``holder``
        for ``seconds`` when given."""
        ...

    def claim(self, job_id: str, holder: str, seconds: float) -> TurnJob | None:
        """Claim one job for ``seconds``: when nobody holds it, its claim ran out or
        ``holder`` holds it already. ``None``: another holds it, or it is gone."""
        ...

    def claim_next(self, holder: str, seconds: float) -> TurnJob | None:
        """Claim the oldest job nobody holds (or whose claim ran out); ``None``: none."""
        ...

    def done(self, job_id: str, holder: str) -> bool:
        """Delete a job ``holder`` holds; ``False`` when another holds it or it is gone."""
        ...

    def count(self, scope: str | None = None) -> int:
        """Jobs waiting or running (of ``scope``, or of every scope)."""
        ...


@dataclass(frozen=True)
class IdempotencyRow:
    """The stored answer of a write sent with an ``Idempotency-Key``
    (``idempotency_keys``)."""

    scope: str
    caller: str
    """Who sent it (the caller's owner: ``user_alice``); a key is the caller's own."""
    key: str
    fingerprint: str
    """A hash of the request (method, path, query and body): the same key with
    another request is refused."""
    status: int
    """The HTTP status the write answered."""
    body: str
    """The JSON body the write answered."""
    created_at: float


class IdempotencyKeyRepository(Protocol):
    """The responses stored under idempotency keys (``idempotency_keys``)."""

    def get(self, scope: str, caller: str, key: str) -> IdempotencyRow | None:
        """The stored answer under the key, or ``None``."""
        ...

    def put(self, row: IdempotencyRow) -> bool:
        """Store an answer; ``False`` (nothing written) when the key has one already.
        Inside a transaction it commits with the write it answers."""
        ...

    def prune(self, before: float) -> int:
        """Delete the answers stored before ``before`` (epoch seconds); how many."""
        ...


class LedgerRepositories(Protocol):
    """A ledger's repositories, one per table family.

    A ledger engine subclasses it and sets the repositories with :meth:`_attach`
    when it opens;
    :class:`~langmem_ext.workspace.protocols.Ledger` adds the transactions.
    """

    meta: MetaRepository
    """Workspace settings (``meta``)."""
    entries: EntryRepository
    """Per-entry state and edit history (``entries``, ``entry_history``)."""
    pending: PendingRepository
    """Pending items waiting for confirmation (``pending``)."""
    boosts: BoostRepository
    """Boosts of entries' importance (``boosts``)."""
    sessions: SessionRepository
    """Per-conversation bookkeeping (``sessions``)."""
    conversations: ConversationRepository
    """Conversations' messages and checkpoints (``session_messages``, ``checkpoints``)."""
    events: EventRepository
    """The session hot log (``session_events`` and its keyword table)."""
    store: StoreItemsRepository
    """The LangGraph store's items and indexed texts (``store_items``, ``store_texts``)."""
    profile: ProfileHistoryRepository
    """Every change of the users' profiles (``profile_history``)."""
    triples: TripleRepository
    """The knowledge graph (``triples``, ``triple_support``, ``triple_marks``)."""
    safety: SafetyLinkRepository
    """The safety facts memories state (``safety_links``)."""
    turn_jobs: TurnJobRepository
    """Turns waiting for extraction (``turn_jobs``)."""

    idempotency: IdempotencyKeyRepository
    """The answers of writes sent with an idempotency key (``idempotency_keys``)."""

    def _attach(
        self,
        *,
        meta: MetaRepository,
        entries: EntryRepository,
        pending: PendingRepository,
        boosts: BoostRepository,
        sessions: SessionRepository,
        conversations: ConversationRepository,
        events: EventRepository,
        store: StoreItemsRepository,
        profile: ProfileHistoryRepository,
        triples: TripleRepository,
        safety: SafetyLinkRepository,
        turn_jobs: TurnJobRepository,
        idempotency: IdempotencyKeyRepository,
    ) -> None:
        """Set the repositories (a ledger engine calls it once when it opens)."""
        self.meta = meta
        self.entries = entries
        self.pending = pending
        self.boosts = boosts
        self.sessions = sessions
        self.conversations = conversations
        self.events = events
        self.store = store
        self.profile = profile
        self.triples = triples
        self.safety = safety
        self.turn_jobs = turn_jobs

        self.idempotency = idempotency


__all__ = [
    "BoostRepository",
    "CheckpointRow",
    "ConversationRepository",
    "EntryActivity",
    "EntryRepository",
    "EntryState",
    "EntryTableRow",
    "EventFields",
    "EventFilter",
    "EventMatch",
    "EventRepository",
    "EventRow",
    "ExtractedEntry",
    "HistoryRow",
    "IdempotencyKeyRepository",
    "IdempotencyRow",
    "ItemText",
    "ItemWrite",
    "KeywordHit",
    "LedgerRepositories",
    "MetaRepository",
    "NewEventRow",
    "NewTriple",
    "PendingRepository",
    "PendingRow",
    "ProfileChangeRow",
    "ProfileHistoryRepository",
    "SafetyLinkRepository",
    "SafetyLinkRow",
    "SessionRepository",
    "SessionRow",
    "StoreItemsRepository",
    "StoredItem",
    "StoredMessage",
    "TextMatch",
    "TripleRepository",
    "TripleRow",
    "TurnJob",
    "TurnJobRepository",
    "UnembeddedText",
]

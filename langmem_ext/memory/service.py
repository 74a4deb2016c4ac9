"""``Memory``: the service every surface (tools, retriever, store, graph, CLI) uses.

Writes go through a pending store and wait for confirmation (``save`` →
``confirm`` / ``reject``), or straight in for trusted sources (``add``). Every call
is scoped; ids of another scope behave exactly like unknown ids. Each sync method
has an async twin (``asave``, ``aconfirm``, ...) running the same code in a worker
thread.
"""

from __future__ import annotations

import builtins
import logging
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.documents import BaseDocumentCompressor
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import MessageLikeRepresentation
from numpy.typing import NDArray

from langmem_ext.core.config import CATEGORIES, Settings
from langmem_ext.core.errors import (
    EmbeddingError,
    EmptyTextError,
    EntryNotFoundError,
    EntrySupersededError,
    InvalidCategoryError,
    InvalidInputError,
    InvalidPathError,
    LangmemError,
    NoiseTextError,
    PendingAlreadyResolvedError,
    PendingExpiredError,
    PendingNotFoundError,
    TextTooLongError,
)
from langmem_ext.core.runtime import embed_matrix
from langmem_ext.embeddings.factory import CachedEmbeddings, create_embeddings, model_name_of
from langmem_ext.language.statements import slot_of
from langmem_ext.memory._utils import async_method, check_unicode, to_epoch, to_epoch_or_none
from langmem_ext.memory.background import TurnWriter
from langmem_ext.memory.extraction import unconfirmed
from langmem_ext.memory.extraction.extractor import (
    ExtractionReport,
    Extractor,
    as_messages,
    last_turn,
    related_memories,
    saves_of_turn,
)
from langmem_ext.memory.extraction.turns import TURNS, TurnQueue
from langmem_ext.memory.knowledge.extract import normalise_entity
from langmem_ext.memory.knowledge.triples import KnowledgeGraph, Triple
from langmem_ext.memory.leases import EXTRACT_JOB, JobLeases
from langmem_ext.memory.lifecycle.decay import caught_up
from langmem_ext.memory.lifecycle.maintenance import MaintenanceReport, maintain
from langmem_ext.memory.lifecycle.operations import (
    decay_day,
    recategorize,
    record_access,
    start_catch_up,
)
from langmem_ext.memory.lifecycle.reviewer import ReviewKind, ReviewResult, review_entry
from langmem_ext.memory.lifecycle.versions import version_chain
from langmem_ext.memory.profile import (
    PROFILE_TARGET,
    Profile,
    ProfileBook,
    ProfileChange,
    ProfileUpdate,
    fact_ops,
    preference_ops,
)
from langmem_ext.memory.recall.search import SearchEngine
from langmem_ext.memory.safety.facts import USER
from langmem_ext.memory.safety.links import SafetyLinks, SafetySection, Written
from langmem_ext.memory.sessions.log import SessionLog
from langmem_ext.memory.types import (
    PAGE_SORTS,
    GetResult,
    MemoryEntry,
    MemoryPage,
    PendingItem,
    SearchHit,
    Target,
    to_dt,
)
from langmem_ext.retrieval.intent import RecallIntent, detect_recall_intent
from langmem_ext.retrieval.noise import is_noise
from langmem_ext.retrieval.repair import focus_of
from langmem_ext.workspace.docs import Doc
from langmem_ext.workspace.engines import open_engines, opener_for
from langmem_ext.workspace.kv import KvSpace
from langmem_ext.workspace.layout import MAIN_SCOPE, check_scope
from langmem_ext.workspace.markdown import new_entry_id, normalise_text, parse_entries
from langmem_ext.workspace.prose import PROSE_PREFIX, parse_prose
from langmem_ext.workspace.records import EntryState, EntryTableRow, PendingRow
from langmem_ext.workspace.sqlite.embedding_cache import SqliteEmbeddingCache
from langmem_ext.workspace.store import NewEntry, Progress, SyncReport, Workspace, text_hash

logger = logging.getLogger(__name__)


GET_DEFAULT_LINES = 40
GET_MAX_LINES = 300
_PATH_LINE_RE = re.compile(r"^(.*\.md):(\d+)(?:-(\d+))?$")
_PATH_ANCHOR_RE = re.compile(r"^(.*\.md)#\^?(m-[0-9a-z]{4,32}|p-[0-9a-f]{10}(?:-[0-9]{1,6})?)$")


class Memory:
    """Long-term memory of an agent: Markdown truth, ledger, hybrid index.

    Setup:
        .. code-block:: bash

            pip install langmem-ext

    Instantiate:
        .. code-block:: python

            from langmem_ext import Memory

            memory = Memory("./memory-ws")          # or Memory(settings=Settings(...))

    Invoke:
        .. code-block:: python

            pending = memory.save("主人喜欢吃拉面", scope="main")
            memory.confirm(pending.id, scope="main")
            memory.search("拉面", scope="main")[0].text   # '主人喜欢吃拉面'

    Async:
        .. code-block:: python

            pending = await memory.asave("Likes ramen", scope="main")
            await memory.aconfirm(pending.id, scope="main")

    Everything the memory uses is built here, from ``settings`` unless given: the
    workspace's engines, the embedder, the search, the profiles, the knowledge graph,
    the session hot log (:attr:`session_log`: its events answer recall questions in
    :meth:`search`), the background writer and the chat models it extracts with. No
    other object changes them later: a graph, a ``SessionManager`` or a server
    built on the memory uses these parts and finds what the memory finds.

    Threads:
        Building a memory may start one thread: the decay a workspace missed while
        it was closed (over 24 h since the last ``maintain``) runs beside the caller,
        so opening and the first search do not wait for it; ``close()`` joins it.
        Turn it off with ``Settings(lifecycle={"decay_on_open": False})`` (then
        ``maintain()`` does that work when called). The background writer
        (:attr:`background`) runs the jobs writes queue (turn extractions, triples
        of new memories, vectors of session events) and, when idle for a lease time
        (``lifecycle.lease_seconds``), extracts the turns another process accepted
        and died before extracting (:attr:`turns`; not on a writer given to the
        constructor); ``close()`` runs what is queued and stops it. Use the memory as a context manager, or call
        :meth:`close`.

    Args:
        workspace: Workspace folder; overrides ``settings.workspace``.
        settings: Settings tree; defaults to ``Settings()`` (env ``LANGMEM_*``).
        embeddings: An ``Embeddings`` to use instead of the configured one.
        session_log: Builds the memory's session hot log from the memory, e.g.
            ``functools.partial(SessionLog, max_results=3)``; default
            :class:`~langmem_ext.memory.sessions.log.SessionLog`.
        extraction_model: The chat model :meth:`extract` reads turns with when it is
            given none (the memory graph's and the middleware's default extractor);
            ``None``: the deterministic extractor.
        knowledge_model: The chat model extracting the knowledge graph's triples of
            new memories; default ``extraction_model`` when
            ``settings.knowledge.with_model``, else ``None`` (the deterministic
            patterns, no model call per write).
        background: An ordered background writer to use instead of the memory's own
            (:attr:`background`); it is drained, not closed, by :meth:`close`.
        reranker: A LangChain ``BaseDocumentCompressor`` (a cross-encoder or LLM
            reranker) that reorders every search's results as the ranking
            pipeline's last stage (``reranker`` in ``memory.engine.stages.names``);
            off by default.
    """

    def __init__(
        self,
        workspace: str | Path | None = None,
        *,
        settings: Settings | None = None,
        embeddings: Embeddings | None = None,
        session_log: Callable[[Memory], SessionLog] | None = None,
        extraction_model: BaseChatModel | None = None,
        knowledge_model: BaseChatModel | None = None,
        background: TurnWriter | None = None,
        reranker: BaseDocumentCompressor | None = None,
    ) -> None:
        settings = settings or Settings()
        if workspace is not None:
            settings = settings.model_copy(update={"workspace": Path(workspace)})
        self.settings = settings
        root = Path(settings.workspace).expanduser().resolve()
        opener_for(settings.database_url, root)  # an unusable URL fails before any write
        inner = embeddings or create_embeddings(settings.embeddings)
        name = model_name_of(inner)
        engines = open_engines(settings, root=root, model_name=name)
        if settings.embeddings.cache:
            cache = (
                engines.embedding_cache()
                if engines.embedding_cache is not None
                else SqliteEmbeddingCache(root / ".index" / "embeddings.db")
            )
            inner = CachedEmbeddings(inner, cache, name)
        self.embeddings = inner
        self.workspace = Workspace(
            root,
            inner,
            model_name=name,
            engines=engines,
            batch_size=settings.embeddings.batch_size,
        )
        self.leases = JobLeases(self.workspace.leases, settings.lifecycle.lease_seconds)
        """This process's leases of background jobs: one process at a time runs a job
        of a scope (see :mod:`~langmem_ext.memory.leases`)."""
        self._closed = False
        self._close_callbacks: builtins.list[Callable[[], object]] = []
        self._background = background
        self._background_lock = threading.Lock()
        if background is not None:
            self.on_close(background.wait)  # the caller's writer: drained, left running
        self.extraction_model = extraction_model
        """The chat model :meth:`extract` uses when given none (``None``: deterministic)."""
        self.profiles = ProfileBook(self.workspace, settings.lifecycle.pending_ttl_hours * 3600)
        """The scopes' user profiles (``PROFILE.md`` + history); see :meth:`profile`."""
        self.profiles.recover()  # profile confirms a killed process left half done
        self.safety = SafetyLinks(self.workspace, self.profiles)
        """Links between memories and the profiles' safety fields (see :meth:`safety_recall`)."""
        if knowledge_model is None and settings.knowledge.with_model:
            knowledge_model = extraction_model
        self.knowledge = KnowledgeGraph(
            self.workspace,
            settings.knowledge,
            self.profiles,
            lambda: self.background,
            model=knowledge_model,
            embed=inner.embed_documents,
            leases=self.leases,
        )
        """The triples of the memories (see :meth:`triples`)."""
        self.session_log: SessionLog = (session_log or SessionLog)(self)
        """The hot log of the memory's conversations: every message and summary the
        graph or a ``SessionManager`` logs; :meth:`search` finds its events on recall
        questions ("what did I ask yesterday?"), ``maintain`` purges its TTL."""
        self.engine = SearchEngine(
            self.workspace,
            inner,
            settings,
            knowledge=self.knowledge,  # the search's graph stage
            safety=self.safety,  # the search's safety stage
            sources=[(self.session_log.search, True)],
            reranker=reranker,
        )
        self.turns = TurnQueue(self)
        """The turns waiting for extraction in the ledger (see
        :mod:`~langmem_ext.memory.extraction.turns`)."""
        if self.turns.waiting():  # a process died before extracting them
            self.background.submit(TURNS, self.turns.recover)
        if background is None:  # a writer of the caller's may serve other memories
            self.background.when_idle(self.turns.recover, every=settings.lifecycle.lease_seconds)
        # decay on open when the last run is over 24 h old, beside the caller
        self._catch_up = start_catch_up(self)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Memory:
        """Build a memory from a settings tree (``Settings()`` when omitted)."""
        return cls(settings=settings)

    @property
    def root(self) -> Path:
        """The workspace folder."""
        return self.workspace.layout.root

    @property
    def kv(self) -> KvSpace:
        """The LangGraph store's part of the workspace: its items and vector partitions."""
        return self.workspace.kv

    def get_meta(self, key: str) -> str | None:
        """A small value an application keeps in the workspace (``None`` when unset)."""
        return self.workspace.ledger.meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        """Keep a small value in the workspace under ``key`` (replacing the old one)."""
        self.workspace.ledger.meta.set(key, value)

    @property
    def background(self) -> TurnWriter:
        """This memory's ordered background writer (its thread starts on first use).

        Work that must not delay a reply runs here: the graph's turn bookkeeping, the
        triples of new memories and the vectors of session events. :meth:`close`
        drains it first. The one given to the constructor, else the memory's own.
        """
        with self._background_lock:
            if self._background is None:
                self._background = TurnWriter()
                self.on_close(self._background.close)
            return self._background

    def on_close(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` when the memory closes, before its connections are released.

        Background writers (e.g. :attr:`background`) register their drain here, so nothing queued is lost on ``close()``.
        """
        self._close_callbacks.append(callback)

    def close(self) -> None:
        """Release database connections (after running the :meth:`on_close` callbacks)."""
        if not self._closed:
            callbacks, self._close_callbacks = self._close_callbacks, []
            for callback in callbacks:
                try:
                    callback()
                except Exception:
                    logger.exception("memory close callback failed")
            self.workspace.close()
            if isinstance(self.embeddings, CachedEmbeddings):
                self.embeddings.close()
            self._closed = True

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- validation --------------------------------------------------------

    def _scope(self, scope: str | None) -> str:
        """The scope to use: ``None`` means the default; ``""`` is an error, not ``main``."""
        return check_scope(self.settings.default_scope if scope is None else scope)

    def _text(self, text: str, what: str = "Memory text") -> str:
        if not isinstance(text, str):
            raise InvalidInputError(f"{what} must be a string, got {type(text).__name__}.")
        clean = normalise_text(text)
        if not clean:
            raise EmptyTextError(f"{what} is empty: pass the fact to remember.")
        if len(clean) > self.settings.max_text_chars:
            raise TextTooLongError(
                f"{what} has {len(clean)} characters, over the limit of "
                f"{self.settings.max_text_chars}: split it into smaller facts or raise "
                "Settings.max_text_chars."
            )
        check_unicode(clean, what)
        if clean.startswith("~~") and clean.endswith("~~"):
            raise InvalidInputError(
                f"{what} is wrapped in ~~: that marks a superseded version in the Markdown. "
                "Remove the ~~ (use update() to replace a memory)."
            )
        return clean

    @staticmethod
    def _category(category: str) -> str:
        cat = (category or "").strip().lower()
        if cat not in CATEGORIES:
            raise InvalidCategoryError(
                f"Unknown category {category!r}: use one of {', '.join(CATEGORIES)}."
            )
        return cat

    @staticmethod
    def _target(target: str) -> Target:
        t = (target or "").strip().lower().replace("-", "_")
        if t not in ("long_term", "daily"):
            raise InvalidInputError(f"Unknown target {target!r}: use 'long_term' or 'daily'.")
        return "long_term" if t == "long_term" else "daily"

    def _file_for(self, scope: str, target: Target, when: float) -> tuple[Path, str]:
        layout = self.workspace.layout
        if target == "long_term":
            return layout.long_term(scope), "Long-term memory"
        day = datetime.fromtimestamp(when).date()
        return layout.daily(scope, day), day.isoformat()

    def _fresh_id(self, taken: set[str]) -> str:
        """A new entry id, never one the ledger has used (live or deleted)."""
        ledger = self.workspace.ledger
        while True:
            entry_id = new_entry_id()
            if entry_id in taken or ledger.entries.exists(entry_id):
                continue
            taken.add(entry_id)
            return entry_id

    def _fresh_ids(self, n: int) -> list[str]:
        """``n`` new entry ids, none the ledger has used, checked in one read per round."""
        ids: list[str] = []
        while len(ids) < n:
            wanted = dict.fromkeys(new_entry_id() for _ in range(n - len(ids)))
            used = self.workspace.ledger.entries.known(list(wanted)) | set(ids)
            ids += [i for i in wanted if i not in used]
        return ids

    # -- pending -----------------------------------------------------------

    def save(
        self,
        text: str,
        *,
        scope: str | None = None,
        target: str = "long_term",
        category: str = "fact",
        importance: float | None = None,
        source: str = "agent",
        created_at: datetime | date | float | None = None,
        supersedes: str | None = None,
        thread_id: str | None = None,
    ) -> PendingItem:
        """Propose a memory; it is stored only once confirmed.

        Args:
            text: The fact to remember.
            scope: Whose memory (default ``settings.default_scope``).
            target: ``long_term`` (MEMORY.md / LONG_TERM.md) or ``daily`` (today's notes).
            category: system, core, fact or episode.
            importance: Initial importance (default ``lifecycle.default_importance``).
            source: Who proposed it (``agent``, ``flush``, ``user`` ...).
            created_at: When the fact was stated (default now); the TTL runs from now.
            supersedes: A memory of the scope this one replaces: once confirmed it is
                written as that memory's new version (as :meth:`update` writes one),
                or of the newest version of its chain if another replaced it
                meanwhile; a plain new memory if it was deleted. Category and
                importance are then the replaced memory's.
            thread_id: The conversation proposing it (the memory graph asks the user
                there, and only a reply there confirms it); ``None`` outside one.

        Returns:
            The pending item (TTL ``lifecycle.pending_ttl_hours``).

        Raises:
            NoiseTextError: the text is a greeting, refusal or meta question.
            EntryNotFoundError: ``supersedes`` is no memory of the scope.
        """
        scope = self._scope(scope)
        clean = self._text(text)
        replaced = self._live_state(supersedes, scope).id if supersedes is not None else None
        cat = self._category(category)
        tgt = self._target(target)
        if is_noise(clean, min_chars=self.settings.retrieval.noise_min_chars):
            raise NoiseTextError(
                f"Not saved: {clean[:60]!r} looks like a greeting, a refusal or a question, "
                "not a fact worth remembering. Save the fact itself."
            )
        now = time.time()
        pid = "p-" + secrets.token_hex(5)
        entry_id = self._fresh_id(set())
        ttl = self.settings.lifecycle.pending_ttl_hours * 3600
        imp = (
            self.settings.lifecycle.default_importance if importance is None else float(importance)
        )
        said = to_epoch_or_none(created_at) or now
        row = PendingRow(
            pid,
            scope,
            clean,
            tgt,
            cat,
            imp,
            source,
            now,
            now + ttl,
            "pending",
            entry_id,
            None,
            said,
            replaced,
            thread_id,
        )
        self.workspace.ledger.pending.insert(row)
        return self._pending_item(row)

    @staticmethod
    def _pending_item(row: PendingRow) -> PendingItem:
        return PendingItem.from_row(row)

    def _load_pending(self, pending_id: str, scope: str) -> PendingRow:
        row = self.workspace.ledger.pending.get(str(pending_id).strip(), scope=scope)
        if row is None:
            raise PendingNotFoundError(
                f"No pending memory {pending_id!r} in this scope. List pending items with "
                "list_pending() (or `langmem-ext pending`)."
            )
        if row.status == "pending" and self._settle([row], scope):
            stored = (
                "its change is in PROFILE.md"
                if row.target == PROFILE_TARGET
                else f"its entry {row.entry_id} is stored"
            )
            raise PendingAlreadyResolvedError(
                f"Pending memory {row.id!r} was already confirmed ({stored}; an earlier "
                "confirm was interrupted); nothing to do."
            )
        if row.status == "pending" and row.expires_at <= time.time():
            unconfirmed.expire(self, [row], time.time())
            raise PendingExpiredError(
                f"Pending memory {row.id!r} expired at {to_dt(row.expires_at):%Y-%m-%d %H:%M} UTC "
                "without confirmation (its text stays in the daily notes, marked "
                f"{unconfirmed.MARK}); save it again if it is still wanted."
            )
        if row.status == "expired":
            raise PendingExpiredError(
                f"Pending memory {row.id!r} expired without confirmation (its text stays in "
                f"the daily notes, marked {unconfirmed.MARK}); save it again if it is still wanted."
            )
        if row.status != "pending":
            raise PendingAlreadyResolvedError(
                f"Pending memory {row.id!r} was already {row.status}; nothing to do."
            )
        return row

    def _settle(self, rows: Sequence[PendingRow], scope: str) -> set[str]:
        """Confirm the pending items whose entry (or profile change) is already written.

        A confirm killed after its Markdown write leaves its item ``pending``: the
        files the items target are synced (a ``stat`` each when unchanged) and every
        item whose entry they hold is marked confirmed; a profile change is settled
        by the profile (:meth:`ProfileBook.settle
        <langmem_ext.memory.profile.ProfileBook.settle>`).

        Returns:
            The ids of ``rows`` found confirmed.

        Raises:
            MemoryFileError: an interrupted profile confirm cannot be settled because
                ``PROFILE.md`` cannot be read.
        """
        profile_ids = [r.id for r in rows if r.target == PROFILE_TARGET]
        settled = self.profiles.settle(scope, profile_ids) if profile_ids else set()
        rows = [r for r in rows if r.target != PROFILE_TARGET]  # no file entry to find
        if not rows:
            return settled
        ws = self.workspace
        paths = {self._file_for(scope, self._target(r.target), r.said_at)[0] for r in rows}
        with ws.lock.hold_scope(scope):
            ws.sync_files(scope, sorted(paths))  # confirms the items of new entries
            ws.ledger.pending.confirm_written(scope)  # and of entries already in the ledger
            done = ws.ledger.pending.ids_with_status([r.id for r in rows], "confirmed")
        if done:
            logger.info("pending item(s) %s were already written: marked confirmed", done)
        return done | settled

    def _expire_due(
        self, scope: str, now: float, thread_id: str | None = None
    ) -> tuple[list[PendingRow], list[PendingRow]]:
        """Settle the scope's pending rows (of one conversation, when ``thread_id``),
        expire those due at ``now``: ``(expired, open)``."""
        rows = self.workspace.ledger.pending.of_scope(scope, "pending")
        if thread_id is not None:
            rows = [r for r in rows if r.thread_id == thread_id]
        done = self._settle(rows, scope)
        rows = [r for r in rows if r.id not in done]
        expired = unconfirmed.expire(self, [r for r in rows if r.expires_at <= now], now)
        return expired, [r for r in rows if r.expires_at > now]

    def list_pending(
        self, *, scope: str | None = None, thread_id: str | None = None
    ) -> list[PendingItem]:
        """Pending items of a scope, oldest first (expired ones are expired now, see
        :meth:`expire_pending`).

        Args:
            scope: Whose items.
            thread_id: Only those proposed in this conversation (default: all).
        """
        _expired, rows = self._expire_due(self._scope(scope), time.time(), thread_id)
        return [self._pending_item(r) for r in rows]

    def expire_pending(
        self, *, scope: str | None = None, now: datetime | date | float | None = None
    ) -> list[PendingItem]:
        """Expire the scope's pending saves whose TTL has passed at ``now``.

        Nothing is lost because nobody answered: each expired save leaves its text in
        the daily notes of the day it was said, marked ``[unconfirmed]``, unless the
        scope holds that text already (see :mod:`langmem_ext.memory.extraction.unconfirmed`).
        :meth:`list_pending`, :meth:`confirm` and ``maintain`` expire through here.

        Args:
            scope: Whose pending saves.
            now: The time to expire at (default now).

        Returns:
            The items expired.
        """
        ts = to_epoch(now, time.time())
        expired, _open = self._expire_due(self._scope(scope), ts)
        return [self._pending_item(replace(r, status="expired", resolved_at=ts)) for r in expired]

    def stores(self, text: str, *, scope: str | None = None) -> bool:
        """Whether the scope already stores exactly ``text`` (as written after
        normalising), as a memory or as a note, marked unconfirmed or not.

        Args:
            text: The fact.
            scope: Whose memory.

        Returns:
            ``True`` when writing it would write it twice.
        """
        return unconfirmed.holds(self, self._scope(scope), text)

    def save_found(
        self,
        text: str,
        *,
        scope: str | None = None,
        category: str = "fact",
        source: str = "flush",
        created_at: datetime | date | float | None = None,
        supersedes: str | None = None,
        thread_id: str | None = None,
    ) -> PendingItem | None:
        """Keep a fact the system found (not one the user asked to save).

        It is written at once to the scope's daily notes of the day it was said,
        marked ``[unconfirmed]`` (a log of that day, searchable, decaying like other
        notes), and its promotion to long-term memory waits as a pending save. Once
        confirmed, long-term memory holds it and the note stays as the day's log
        without the marker; rejected, the note is deleted; expired, the note stays
        marked. The pre-compaction flush, the daily archive and the extractor (in
        ``lifecycle.extract_mode="pending"``) keep what they find through here.

        Args:
            text: The fact.
            scope: Whose memory.
            category: Its category in long-term memory.
            source: Who found it (``flush``, ``archive``, ``extractor`` …).
            created_at: When it was said (default now): the day of the note.
            supersedes: The memory it replaces once confirmed (see :meth:`save`).
            thread_id: The conversation it was found in (its next answer asks).

        Returns:
            The pending save, or ``None`` when the fact was proposed (pending,
            confirmed, rejected or expired) or stored before: nothing is written twice.

        Raises:
            InvalidInputError: the text cannot be a memory (empty, too long, noise …).
        """
        scope = self._scope(scope)
        at = to_epoch(created_at, time.time())
        return unconfirmed.save_found(
            self,
            scope,
            text,
            category=category,
            source=source,
            at=at,
            supersedes=supersedes,
            thread_id=thread_id,
        )

    def confirm(self, pending_id: str, *, scope: str | None = None) -> MemoryEntry | ProfileUpdate:
        """Confirm a pending memory: it is durable in Markdown when this returns.

        A pending profile change (category ``profile``, proposed by the model or the
        extractor) changes the profile instead and returns the :class:`ProfileUpdate`.
        A note the save left in the daily notes marked ``[unconfirmed]`` (a fact the
        flush or the extractor found, see :meth:`save_found`) stays as the log of
        its day without the marker; long-term memory holds the memory.

        Raises:
            PendingNotFoundError: unknown id, or an id of another scope.
            PendingExpiredError: the TTL passed.
            PendingAlreadyResolvedError: already confirmed or rejected.
        """
        scope = self._scope(scope)
        ws = self.workspace
        peek = ws.ledger.pending.get(str(pending_id).strip(), scope=scope)
        vectors = (  # embedded before the lock; the row is checked again under it
            self._embed_new([peek.text])
            if peek is not None
            and peek.status == "pending"
            and peek.target != PROFILE_TARGET
            and peek.supersedes is None
            else None
        )
        with ws.lock.hold_scope(scope):
            row = self._load_pending(pending_id, scope)
            with ws.one_commit():  # the memory and the item's status: one commit
                if row.target == PROFILE_TARGET:  # marks the row confirmed with the history
                    return self.profiles.confirm(row)
                if row.supersedes is None or not self._confirm_version(row, scope):
                    path, title = self._file_for(scope, self._target(row.target), row.said_at)
                    ws.write_entries(
                        scope,
                        path,
                        [
                            NewEntry(
                                row.entry_id,
                                row.text,
                                row.category,
                                row.importance,
                                row.said_at,
                                row.source,
                                verified=True,
                                slot=slot_of(row.text),
                            )
                        ],
                        title=title,
                        vectors=vectors if peek is not None and peek.text == row.text else None,
                    )
                entry = self._entry(row.entry_id, scope)  # stored, or raise: still pending
                ws.ledger.pending.resolve(row.id, "confirmed", time.time())
        ws.flush_vectors()
        self.knowledge.schedule(scope, [entry.id])
        unconfirmed.settle(self, row, "confirmed")  # its note keeps the day's log
        self._link_safety(
            scope, [Written(entry.id, row.text, text_hash(row.text), entry.category)], row.thread_id
        )
        return entry

    def _confirm_version(self, row: PendingRow, scope: str) -> bool:
        """Write a confirmed pending update as the new version of what it replaces
        (lock held): of the newest version of ``row.supersedes``'s chain. ``False``
        when that chain has no live current version left (the item is then written
        as a new memory). A retried confirm whose version is already written (a crash
        after the Markdown, picked up by sync) writes nothing twice."""
        ws = self.workspace
        entries = ws.ledger.entries
        if entries.get(row.entry_id) is not None:
            return True
        st = entries.get(version_chain(entries, str(row.supersedes))[-1])
        if st is None or st.scope != scope or st.valid_to is not None:
            return False
        ws.supersede(
            scope,
            ws.layout.root / st.path,
            st.id,
            NewEntry(
                id=row.entry_id,
                text=row.text,
                category=st.category,
                importance=st.importance,
                created_at=max(row.said_at, st.created_at),
                source=row.source,
                verified=True,
                supersedes=st.id,
                slot=st.slot or slot_of(row.text),
            ),
        )
        return True

    def reject(self, pending_id: str, *, scope: str | None = None) -> PendingItem:
        """Reject a pending memory; nothing is written to Markdown, and a note of it
        marked ``[unconfirmed]`` in the daily notes (see :meth:`save_found`) is deleted."""
        scope = self._scope(scope)
        with self.workspace.lock.hold_scope(scope):
            row = self._load_pending(pending_id, scope)
            now = time.time()
            self.workspace.ledger.pending.resolve(row.id, "rejected", now)
        unconfirmed.settle(self, row, "rejected")  # a note of it is deleted too
        return self._pending_item(replace(row, status="rejected", resolved_at=now))

    # -- direct writes -----------------------------------------------------

    def add(
        self,
        text: str,
        *,
        scope: str | None = None,
        category: str = "fact",
        target: str = "long_term",
        importance: float | None = None,
        created_at: datetime | date | float | None = None,
        source: str = "user",
        slot: str | None = None,
    ) -> str:
        """Write a memory directly (trusted sources: the user, an import).

        Args:
            text: The fact.
            scope: Whose memory.
            category: system, core, fact or episode.
            target: ``long_term`` or ``daily``.
            importance: Initial importance.
            created_at: When it was said (for imports of old conversations): the
                memory keeps its age, its idle time (decay) counts from then until
                a recall reaches it (days the scope's decay already processed are
                applied at once).
            source: Provenance label (``verified`` is true for ``"user"`` only).
            slot: What a later statement of the same fact replaces
                (``user|lives_in``; see :meth:`extract`).

        Returns:
            The new entry id.
        """
        return self.add_many(
            [text],
            scope=scope,
            category=category,
            target=target,
            importance=importance,
            created_at=[created_at] if created_at is not None else None,
            source=source,
            slots=[slot],
        )[0]

    def add_many(
        self,
        texts: Sequence[str],
        *,
        scope: str | None = None,
        category: str | Sequence[str] = "fact",
        target: str = "long_term",
        importance: float | None = None,
        created_at: Sequence[datetime | date | float | None]
        | datetime
        | date
        | float
        | None = None,
        source: str = "user",
        embed: bool = True,
        progress: Progress | None = None,
        slots: Sequence[str | None] | None = None,
    ) -> list[str]:
        """Write many memories in one durable batch (one file write per file).

        Args:
            texts: Facts to store; all are validated before anything is written.
            scope: Whose memory.
            category: One category for all, or one per text.
            target: ``long_term`` or ``daily`` (daily files follow each ``created_at``).
            importance: Initial importance for all.
            created_at: One timestamp for all, or one per text (``None`` = now); as
                in :meth:`add`, idle time (decay) counts from it.
            source: Provenance label.
            embed: Embed now (``False`` leaves vectors to the next sync, so bulk
                imports stay off the answer path).
            progress: ``progress(done, total)`` while embedding.
            slots: One slot per text (see :meth:`add`; default: the slot of the text's
                one first-person statement, if it is one).

        Returns:
            Entry ids, in the order of ``texts``.
        """
        scope = self._scope(scope)
        if isinstance(texts, str):
            raise InvalidInputError("add_many takes a list of texts; use add() for one text.")
        clean = [self._text(t, f"texts[{i}]") for i, t in enumerate(texts)]
        n = len(clean)
        cats = (
            [self._category(category)] * n
            if isinstance(category, str)
            else [self._category(c) for c in category]
        )
        if isinstance(created_at, Sequence) and not isinstance(created_at, str):
            times = [to_epoch_or_none(c) for c in created_at]
        else:
            times = [to_epoch_or_none(created_at)] * n  # type: ignore[arg-type]
        given = list(slots) if slots is not None else [None] * n
        if len(cats) != n or len(times) != n or len(given) != n:
            raise InvalidInputError(
                "category, created_at and slots lists must match texts in length."
            )
        tgt = self._target(target)
        now = time.time()
        imp = (
            self.settings.lifecycle.default_importance if importance is None else float(importance)
        )
        ws = self.workspace
        ids: list[str] = []
        # a write of up to one outbox batch carries its vectors; a bulk import goes
        # through the outbox in batches (bounded memory, progress per batch)
        direct = embed and 0 < n <= ws.batch_size * 4
        if direct and progress:
            progress(0, n)
        vectors = self._embed_new(clean) if direct else None
        with ws.lock.hold_scope(scope):
            fresh = iter(self._fresh_ids(len(clean)))
            groups: dict[Path, tuple[str, list[NewEntry]]] = {}
            rows: dict[Path, list[int]] = {}
            decayed_to = decay_day(self, scope)
            for text, cat, ts, slot in zip(clean, cats, times, given, strict=True):
                when = ts if ts is not None else now
                entry_id = next(fresh)
                ids.append(entry_id)
                path, title = self._file_for(scope, tgt, when)
                rows.setdefault(path, []).append(len(ids) - 1)
                groups.setdefault(path, (title, []))[1].append(
                    NewEntry(
                        entry_id,
                        text,
                        cat,
                        caught_up(  # an import said before the scope's last decay day
                            category=cat,
                            importance=imp,
                            created_at=when,
                            last_run=decayed_to,
                            settings=self.settings.lifecycle,
                        ),
                        when,
                        source,
                        verified=source == "user",
                        slot=slot or (None if unconfirmed.is_unconfirmed(text) else slot_of(text)),
                    )
                )
            for path, (title, entries) in groups.items():
                ws.write_entries(
                    scope,
                    path,
                    entries,
                    title=title,
                    vectors=vectors[rows[path]] if vectors is not None else None,
                )
        if embed:
            ws.flush_vectors(progress=None if direct else progress)
        if direct and progress:
            progress(n, n)
        self.knowledge.schedule(scope, ids)
        self._link_safety(
            scope,
            [Written(i, t, text_hash(t), c) for i, t, c in zip(ids, clean, cats, strict=True)],
        )
        return ids

    def _link_safety(
        self, scope: str, written: builtins.list[Written], thread_id: str | None = None
    ) -> None:
        """Link stored memories to the safety fields they state and propose the user's
        new items for the profile (:mod:`~langmem_ext.memory.safety.links`), in the
        conversation ``thread_id`` when they were confirmed there. The memories are
        stored already: a failure here is logged, never raised."""
        try:
            self.safety.record(scope, written, thread_id=thread_id)
        except (LangmemError, sqlite3.Error) as e:
            logger.error("safety facts of %d stored memories not linked: %s", len(written), e)

    def _embed_new(self, texts: Sequence[str]) -> NDArray[np.float32] | None:
        """Embed the texts of entries about to be written (without the lock held): one
        row per text for :meth:`Workspace.write_entries`, or ``None`` when the embedder
        failed (logged; the entries then wait in the outbox for the next flush)."""
        ws = self.workspace
        try:
            return embed_matrix(ws.embeddings, texts, ws.batch_size)
        except EmbeddingError as e:
            logger.warning("vector index not updated (%s); it will catch up on the next sync", e)
            return None

    def update(
        self,
        entry_id: str,
        text: str,
        *,
        scope: str | None = None,
        at: datetime | float | None = None,
        supersede: bool = True,
        source: str | None = None,
        verified: bool | None = None,
        slot: str | None = None,
    ) -> MemoryEntry:
        """Replace a memory by a new version; the old one is kept, superseded.

        The old version is struck through in its Markdown file (``- ~~…~~``) and
        closed (``valid_to``); the new version is written right below it with a new
        id, ``supersedes`` naming the old one. Searches return current versions
        unless asked for another time (``as_of``) or for every version
        (``include_superseded``); :meth:`history` shows the chain.

        Args:
            entry_id: The current version's id.
            text: The new text.
            scope: Whose memory.
            at: When the change happened (default now): the old version is valid
                until then, the new one from then.
            supersede: ``False`` edits the text in place (a typo fix: no new
                version; the old text stays in :meth:`history`).
            source: Provenance of the new version (default: the old one's).
            verified: Whether the user confirmed it (default: the old one's).
            slot: The new version's slot (default: the old one's, else its own
                statement's).

        Returns:
            The new version (the same entry, edited, with ``supersede=False``).

        Raises:
            EntryNotFoundError: No such memory in the scope.
            EntrySupersededError: ``entry_id`` is itself superseded.
        """
        scope = self._scope(scope)
        clean = self._text(text)
        when = time.time() if at is None else float(to_epoch_or_none(at) or 0.0)
        ws = self.workspace
        with ws.lock.hold_scope(scope):
            st = self._live_state(entry_id, scope)
            if st.valid_to is not None:
                newest = version_chain(ws.ledger.entries, st.id)[-1]
                raise EntrySupersededError(
                    f"Memory {st.id!r} was superseded: its current version is {newest!r}."
                )
            path = ws.layout.root / st.path
            if text_hash(clean) == st.text_hash:
                return self._entry(st.id, scope)
            if not supersede:
                ws.rewrite_entry(scope, path, st.id, clean)
                new_id = st.id
            else:
                new_id = self._fresh_id(set())
                ws.supersede(
                    scope,
                    path,
                    st.id,
                    NewEntry(
                        id=new_id,
                        text=clean,
                        category=st.category,
                        importance=st.importance,
                        created_at=when,
                        source=st.source if source is None else source,
                        verified=st.verified if verified is None else verified,
                        supersedes=st.id,
                        slot=slot or st.slot or slot_of(clean),
                    ),
                )
        ws.flush_vectors()
        self.knowledge.schedule(scope, [new_id], retired=[st.id])
        self._link_safety(scope, [Written(new_id, clean, text_hash(clean), st.category)])
        return self._entry(new_id, scope)

    def delete(self, entry_id: str, *, scope: str | None = None) -> None:
        """Forget an entry: its bullet is removed and the index entry dropped."""
        scope = self._scope(scope)
        ws = self.workspace
        with ws.lock.hold_scope(scope):
            st = self._live_state(entry_id, scope)
            ws.rewrite_entry(scope, ws.layout.root / st.path, st.id, None)
        ws.flush_vectors()
        self.knowledge.schedule(scope, [], retired=[st.id])

    def history(self, entry_id: str, *, scope: str | None = None) -> list[dict[str, Any]]:
        """The history of a memory: every version of its chain, oldest first.

        Each row has the version's ``id``, the ``op`` (``add``, ``update``,
        ``superseded``, ``hand-edit``, ``delete`` …), ``old_text``, ``new_text`` and
        ``at``. Any version's id gives the whole chain.
        """
        scope = self._scope(scope)
        entries = self.workspace.ledger.entries
        rows = [
            r
            for vid in version_chain(entries, str(entry_id).strip())
            for r in entries.history(vid, scope)
        ]
        if not rows:
            raise EntryNotFoundError(f"No memory {entry_id!r} in this scope.")
        return [
            {"id": r.entry_id, "op": r.op, "old_text": r.old_text, "new_text": r.new_text,
             "at": to_dt(r.at)}
            for r in rows
        ]  # fmt: skip

    def _live_state(self, entry_id: str, scope: str) -> EntryState:
        self._maybe_sync(scope)
        st = self.workspace.ledger.entries.get(str(entry_id).strip())
        if st is None or st.scope != scope:
            raise EntryNotFoundError(
                f"No memory {entry_id!r} in this scope. Find ids with search() or list()."
            )
        return st

    # -- reads -------------------------------------------------------------

    def _maybe_sync(self, scope: str, *, read: bool = False) -> None:
        """Pick up hand edits of the scope's files (``index.auto_sync``). A ``read``
        waits for another writer at most ``index.read_sync_wait_s``, then reads the
        index as it is; a later read picks the edits up once the writer is done."""
        if self.settings.index.auto_sync and self.workspace.scope_needs_sync(scope):
            wait = self.settings.index.read_sync_wait_s if read else None
            report = self.workspace.sync([scope], wait=wait)
            if report.deferred:
                logger.info("hand edits of %s not read yet: another writer holds the lock", scope)
            self._schedule_after_sync(report)

    def _schedule_after_sync(self, report: SyncReport) -> SyncReport:
        if report.files_changed or report.added or report.updated or report.removed:
            for scope in report.scopes:
                self.knowledge.schedule(scope)
        return report

    def _entry(self, entry_id: str, scope: str) -> MemoryEntry:
        st = self.workspace.ledger.entries.get(entry_id)
        doc = self.workspace.keyword.docs([entry_id]).get(entry_id)
        if st is None or doc is None or st.scope != scope:
            raise EntryNotFoundError(f"No memory {entry_id!r} in this scope.")
        return _to_entry(doc, st)

    def slot_memories(self, slot: str, *, scope: str | None = None) -> list[MemoryEntry]:
        """The current memories stating a slot of the user (``user|lives_in``; a prefix
        such as ``user|allergic_to`` covers ``user|allergic_to|花生``), oldest first."""
        scope = self._scope(scope)
        states = self.workspace.ledger.entries.current_of_slots(scope, [slot])
        docs = self.workspace.keyword.docs([s.id for s in states])
        return [_to_entry(docs[s.id], s) for s in states if s.id in docs]

    def get_entry(self, entry_id: str, *, scope: str | None = None) -> MemoryEntry:
        """One entry by id, or by its anchor (``path#^m-…``, see :attr:`MemoryEntry.anchor`).

        Raises:
            EntryNotFoundError: No such memory in the scope (an anchor whose file
                does not hold the entry, too).
        """
        scope = self._scope(scope)
        ref = str(entry_id).strip()
        anchored = _PATH_ANCHOR_RE.match(ref)
        self._maybe_sync(scope, read=True)
        if anchored is None:
            return self._entry(ref, scope)
        entry = self._entry(anchored.group(2), scope)
        if entry.path != anchored.group(1):
            raise EntryNotFoundError(f"No memory {ref!r} in this scope.")
        return entry

    def files(self, *, scope: str | None = None) -> builtins.list[str]:
        """The scope's memory files (long-term file, then daily notes by day), as the
        workspace-relative paths :meth:`get` reads; the profile (``PROFILE.md``) last
        when the scope has one."""
        scope = self._scope(scope)
        ws = self.workspace
        layout = ws.layout
        paths = [layout.rel(p) for p in ws.memory_files(scope)]
        profile = layout.profile(scope)
        if ws.has_file(scope, profile):
            paths.append(layout.rel(profile))
        return paths

    def list(
        self,
        *,
        scope: str | None = None,
        category: str | None = None,
        include_superseded: bool = False,
    ) -> list[MemoryEntry]:
        """The entries of a scope (optionally one category), in file order.

        Args:
            scope: Whose memory.
            category: Only this category.
            include_superseded: Also the superseded versions (default: current only).
        """
        scope = self._scope(scope)
        cat = self._category(category) if category else None
        self._maybe_sync(scope, read=True)
        docs = self.workspace.keyword.scope_docs(scope, cat)
        states = self.workspace.ledger.entries.many([d.id for d in docs])
        out = [_to_entry(d, states.get(d.id)) for d in docs]
        return out if include_superseded else [e for e in out if e.current]

    def list_page(
        self,
        *,
        scope: str | None = None,
        category: str | None = None,
        text: str | None = None,
        sort: str = "file",
        descending: bool = False,
        offset: int = 0,
        limit: int | None = 50,
        include_superseded: bool = False,
    ) -> MemoryPage:
        """One page of a scope's memories, filtered and sorted (for tables of 10k+ rows).

        Only the returned page is built as :class:`MemoryEntry` objects: the filter
        and the order run over the index's and the ledger's rows.

        Args:
            scope: Whose memory.
            category: Only this category.
            text: Only memories containing this text (case-insensitive).
            sort: One of :data:`~langmem_ext.memory.types.PAGE_SORTS` (``file``: file
                order); ties keep file order.
            descending: Reverse the order.
            offset: Memories skipped before the page.
            limit: Page size (``None``: every memory after ``offset``).
            include_superseded: Also the superseded versions.

        Raises:
            InvalidInputError: an unknown ``sort``.
        """
        if sort not in PAGE_SORTS:
            raise InvalidInputError(f"sort must be one of {', '.join(PAGE_SORTS)}; got {sort!r}.")
        scope = self._scope(scope)
        cat = self._category(category) if category else None
        self._maybe_sync(scope, read=True)
        ws = self.workspace
        docs = ws.keyword.scope_docs(scope, cat)
        table = ws.ledger.entries.table_of_scope(scope)
        needle = (text or "").strip().casefold()
        rows = [
            (d, table.get(d.id))
            for d in docs
            if (not needle or needle in d.text.casefold())
            and (include_superseded or d.id not in table or table[d.id].valid_to is None)
        ]
        if sort != "file":
            rows.sort(key=lambda r: _page_key(sort, r[0], r[1]), reverse=descending)
        elif descending:
            rows.reverse()
        start = max(0, int(offset))
        end = None if limit is None else start + max(0, int(limit))
        picked = rows[start:end]
        states = ws.ledger.entries.many([d.id for d, _ in picked])
        page = [_to_entry(d, states.get(d.id)) for d, _ in picked]
        size = len(rows) if limit is None else int(limit)
        return MemoryPage(entries=page, total=len(rows), offset=start, limit=size)

    def set_category(
        self, entry_id: str, category: str, *, scope: str | None = None
    ) -> MemoryEntry:
        """Move a memory to another category (its bullet moves to that section).

        The id stays; the history gets a ``category`` row.

        Raises:
            EntryNotFoundError: No such memory in the scope.
            InvalidCategoryError: an unknown category.
        """
        scope = self._scope(scope)
        cat = self._category(category)
        recategorize(self, str(entry_id).strip(), cat, scope=scope)
        return self._entry(str(entry_id).strip(), scope)

    def search(
        self,
        query: str,
        *,
        scope: str | None = None,
        k: int | None = None,
        mode: str | None = None,
        category: str | None = None,
        intent: RecallIntent | Literal["auto"] | None = "auto",
        now: datetime | float | None = None,
        as_of: datetime | float | None = None,
        include_superseded: bool = False,
    ) -> builtins.list[SearchHit]:
        """Search a scope's memories.

        Args:
            query: What to look for (any language; mixed Chinese / English works).
            scope: Whose memory.
            k: Results wanted (default ``retrieval.top_k``; clamped to ``retrieval.max_k``).
            mode: ``hybrid`` (default), ``vector``, ``fts`` or ``keyword``.
            category: Only this category.
            intent: The time window the question points to. ``"auto"`` detects it
                from the query (``昨天`` / ``last week`` / ``on 2024-03-05`` ...);
                hits inside it are favoured and session events are searched.
            now: The time the question is asked (default: now).
            as_of: Search the memory as it was then: versions valid at that time
                (said before it, not yet superseded). Default: current versions.
            include_superseded: Return superseded versions too (each hit's
                ``valid_to`` says until when it held).

        Returns:
            Hits, best first, each with ``debug`` showing how its score was built.
        """
        scope = self._scope(scope)
        cat = self._category(category) if category else None
        if isinstance(query, str):
            check_unicode(query, "Search query")
        ts = time.time() if now is None else float(to_epoch_or_none(now) or 0.0)
        if intent == "auto":
            intent = (
                detect_recall_intent(
                    focus_of(query) if self.settings.retrieval.question_parts else query,
                    datetime.fromtimestamp(ts).astimezone(),
                )
                if isinstance(query, str)
                else None
            )
        self._maybe_sync(scope, read=True)
        return self.engine.search(
            query, scope=scope, k=k, mode=mode, category=cat, intent=intent, now=ts,
            as_of=None if as_of is None else to_epoch_or_none(as_of),
            include_superseded=include_superseded,
        )  # fmt: skip

    def get(
        self,
        path: str,
        *,
        scope: str | None = None,
        from_line: int | None = None,
        lines: int | None = None,
    ) -> GetResult:
        """Read lines of a memory file of the scope.

        Args:
            path: Workspace-relative path, ``path:line`` / ``path:start-end``, or a
                stable anchor: ``path#^m-…`` (an entry's :attr:`~MemoryEntry.anchor`)
                or ``path#^p-…`` (a note's, :attr:`SearchHit.anchor
                <langmem_ext.memory.types.SearchHit.anchor>` of a ``source="note"``
                hit). An anchor finds its entry or note wherever lines above it moved
                it; by default only its own lines are returned.
            scope: Whose memory; paths of other scopes are refused.
            from_line: 1-based first line (default 1, or the line of ``path:line``).
            lines: How many lines (default 40, max 300).

        Raises:
            InvalidPathError: ``..``, absolute, symlinked, too long or other-scope
                paths, or an anchor whose entry is not in the file.
            InvalidInputError: ``from_line`` past the end of the file.
            MemoryFileError: the file is not valid UTF-8.
        """
        scope = self._scope(scope)
        raw = (path or "").strip() if isinstance(path, str) else ""
        anchor: str | None = None
        m = _PATH_LINE_RE.match(raw)
        a = None if m else _PATH_ANCHOR_RE.match(raw)
        if m:
            raw = m.group(1)
            if from_line is None:
                from_line = int(m.group(2))
            if lines is None and m.group(3):
                lines = int(m.group(3)) - int(m.group(2)) + 1
        elif a:
            raw, anchor = a.group(1), a.group(2)
        ws = self.workspace
        layout = ws.layout
        real = layout.resolve_for_scope(
            raw, scope, stored=None if ws.files else lambda p: ws.has_file(scope, p)
        )
        rel = layout.rel(real)
        content = self.workspace.read_text(scope, real)
        all_lines = content.splitlines()
        if anchor is not None:
            span = _anchored(content, rel, anchor)
            if from_line is None:
                from_line = span[0]
                if lines is None:
                    lines = span[1] - span[0] + 1
        start = 1 if from_line is None else int(from_line)
        if start < 1:
            raise InvalidInputError(f"from_line must be >= 1, got {start}.")
        count = GET_DEFAULT_LINES if lines is None else int(lines)
        if count < 1:
            raise InvalidInputError(f"lines must be >= 1, got {count}.")
        count = min(count, GET_MAX_LINES)
        if start > max(len(all_lines), 1):
            raise InvalidInputError(
                f"{rel} has {len(all_lines)} lines; line {start} is past the end. "
                f"Pass a line between 1 and {len(all_lines)}."
            )
        chunk = all_lines[start - 1 : start - 1 + count]
        end = start - 1 + len(chunk)
        truncated = end < len(all_lines)
        return GetResult(
            path=rel,
            from_line=start,
            lines=chunk,
            total_lines=len(all_lines),
            truncated=truncated,
            next_from=end + 1 if truncated else None,
        )

    def extract(
        self,
        messages: str | Sequence[MessageLikeRepresentation],
        *,
        scope: str | None = None,
        model: BaseChatModel | None = None,
        recalled: Sequence[SearchHit | tuple[str, str]] | None = None,
        at: datetime | float | None = None,
        thread_id: str | None = None,
    ) -> ExtractionReport:
        """Update long-term memory from the last turn of a conversation (the
        background extractor).

        With ``model``: one structured-output call reads the turn and the recalled
        memories and answers ADD / UPDATE / BOOST / DELETE / SKIP actions (ids it
        was not shown are ignored). The processes sharing the workspace extract one
        turn of a scope at a time (the scope's ``extract`` lease; a turn waits for
        another process's). Without one, or when it fails: explicit
        first-person statements (我住在… / I moved to …), a statement superseding
        the current memory of the same slot. ``lifecycle.extract_mode`` decides
        whether new facts are written (``direct``) or queued (``pending``).

        Args:
            messages: The conversation, in any form LangChain reads (message
                objects, ``("user", "…")`` tuples, ``{"role", "content"}`` dicts,
                strings; one string is one user message); its last user message and
                the replies after it are read.
            scope: Whose memory.
            model: The chat model; default the memory's ``extraction_model``
                (``None``: the deterministic extractor).
            recalled: The memories recalled for the turn (hits or ``(id, text)``);
                default: a search for the user's message.
            at: When the turn happened (default now): new versions are valid from then.
            thread_id: The conversation of the turn: what waits for confirmation is
                proposed there (see :meth:`save`).

        Returns:
            What was added, superseded, boosted, deleted, queued or ignored.

        Raises:
            InvalidMessagesError: ``messages`` is no conversation LangChain reads.

        Example:
            .. code-block:: python

                from langchain_core.messages import AIMessage, HumanMessage

                memory.extract([HumanMessage("我住在上海"), AIMessage("好的")], scope="u1")
                report = memory.extract(
                    [HumanMessage("我上个月搬到深圳了"), AIMessage("好的")], scope="u1"
                )
                report.superseded   # ['m-…'] (上海, kept in the history)
        """
        scope = self._scope(scope)
        when = time.time() if at is None else float(to_epoch_or_none(at) or 0.0)
        conversation = as_messages(messages)
        turn = last_turn(conversation)
        with self.leases.held(EXTRACT_JOB, scope):  # one turn of a scope at a time
            if recalled is None:
                shown = related_memories(self, scope, turn)
            else:
                shown = [(h.id, h.text) if isinstance(h, SearchHit) else h for h in recalled]
            extractor = Extractor(self, scope, when, saves_of_turn(conversation), thread_id)
            return extractor.run(turn, self.extraction_model if model is None else model, shown)

    def boost(
        self,
        entry_id: str,
        *,
        scope: str | None = None,
        reason: str = "used",
        now: float | None = None,
    ) -> float:
        """Raise an entry's importance because it really shaped an answer (BOOST).

        ``lifecycle.boost_amount`` per boost, at most one boost per
        ``boost_cooldown_hours`` and ``boost_daily_cap`` a day. Recorded in the ledger
        and mirrored to the index.

        Returns:
            The importance added (0.0 when the cooldown or the daily cap held it back).
        """
        scope = self._scope(scope)
        lc = self.settings.lifecycle
        now = time.time() if now is None else now
        ws = self.workspace
        with ws.lock.hold_scope(scope):
            st = self._live_state(entry_id, scope)
            last = ws.ledger.boosts.last_at(st.id)
            if last is not None and now - last < lc.boost_cooldown_hours * 3600:
                return 0.0
            today = ws.ledger.boosts.total_since(st.id, now - 86400)
            amount = min(lc.boost_amount, lc.boost_daily_cap - today)
            if amount <= 1e-9:
                return 0.0
            new_importance = st.importance + amount
            with ws.ledger.transaction():
                ws.ledger.boosts.record(st.id, amount, now, reason)
                ws.ledger.entries.touch(st.id, importance=new_importance, at=now)
            ws.keyword.set_importance(st.id, new_importance)
        if st.importance < lc.core_review_at <= new_importance:
            logger.info(
                "memory %s reached importance %.2f: review it for core", st.id, new_importance
            )
        return amount

    # -- maintenance -------------------------------------------------------

    def sync(self, *, scope: str | None = None, progress: Progress | None = None) -> SyncReport:
        """Pick up hand edits and catch the index up (one scope, or all)."""
        scopes = [self._scope(scope)] if scope is not None else None
        return self._schedule_after_sync(self.workspace.sync(scopes, progress=progress))

    def reindex(self, *, progress: Progress | None = None) -> SyncReport:
        """Rebuild the derived index from scratch (Markdown + ledger are kept), and the
        triples of the knowledge graph (when ``settings.knowledge.extract``)."""
        report = self.workspace.rebuild(progress=progress)
        if self.settings.knowledge.extract:
            self.background.wait()  # no scheduled extraction runs beside the rebuild
            self.knowledge.rebuild()
        return report

    def triples(
        self,
        entity: str,
        *,
        scope: str | None = None,
        hops: int = 1,
        as_of: datetime | date | float | None = None,
        include_closed: bool = False,
    ) -> builtins.list[Triple]:
        """The knowledge graph around one entity: its triples, then (``hops=2``) theirs.

        Waits briefly for extraction queued by earlier writes, so a memory just added
        is seen.

        Args:
            entity: An entity name (normalised: case, width; ``I`` / ``我`` / the
                user's name are the scope's user, ``user``).
            scope: Whose memory.
            hops: 1 or 2.
            as_of: The time to look at (default now: triples of current memories).
            include_closed: Also triples whose memories were all superseded.

        Returns:
            The triples, breadth first (``[]`` for an unknown entity).
        """
        scope = self._scope(scope)
        if hops not in (1, 2):
            raise InvalidInputError("hops must be 1 or 2.")
        self._maybe_sync(scope, read=True)
        self.knowledge.ensure(scope)
        self.background.wait(scope, timeout=5.0)
        key = normalise_entity(entity, user_names=self.knowledge.user_names(scope))
        if not key:
            return []
        return self.knowledge.neighbourhood(
            scope, [key], hops=hops, as_of=to_epoch_or_none(as_of), include_closed=include_closed
        )

    def scopes(self) -> builtins.list[str]:
        """Scopes with memory files."""
        return self.workspace.scopes()

    def stats(self, *, scope: str | None = None, days: int = 30) -> dict[str, Any]:
        """Counts per scope and category (current versions), superseded versions,
        pending items, vectors waiting, and how the current memories spread.

        Everything is counted by the index and the ledger: no memory is read, so the
        cost does not grow with the memories a scope holds beyond a count's.

        Args:
            scope: One scope (default: every scope of the workspace).
            days: How many UTC days, today included, ``added_per_day`` covers.

        Returns:
            ``{"workspace", "embedder", "vectors_waiting", "scopes": {scope: {...}}}``;
            each scope has ``entries``, ``by_category``, ``superseded``, ``pending``,
            ``importance_histogram`` (current memories per tenth of importance, ten
            counts from ``[0, 0.1)`` to ``[0.9, 1]``) and ``added_per_day`` (ISO date
            -> memories said that day, oldest first, every day of the window).
        """
        ws = self.workspace
        scopes = [self._scope(scope)] if scope is not None else (ws.scopes() or [MAIN_SCOPE])
        out: dict[str, Any] = {"workspace": str(self.root), "embedder": ws.model_name, "scopes": {}}
        today = datetime.now(UTC).date()
        window = [today - timedelta(days=n) for n in range(max(1, int(days)) - 1, -1, -1)]
        since = datetime.combine(window[0], datetime.min.time(), tzinfo=UTC).timestamp()
        for s in scopes:
            self._maybe_sync(s, read=True)
            cats = {c: 0 for c in CATEGORIES}
            cats.update(ws.keyword.category_counts(s))
            superseded = ws.keyword.docs(list(ws.ledger.entries.closed_of_scope(s)))
            for doc in superseded.values():  # history, not memories the agent holds
                cats[doc.category] -= 1
            pending = ws.ledger.pending.count_open(s, time.time())
            spread = ws.ledger.entries.distribution(s, since=since)
            out["scopes"][s] = {
                "entries": sum(cats.values()),
                "by_category": cats,
                "superseded": len(superseded),
                "pending": int(pending),
                "importance_histogram": list(spread.importance_tenths),
                "added_per_day": {
                    d.isoformat(): spread.added_per_day.get(d.isoformat(), 0) for d in window
                },
            }
        out["vectors_waiting"] = ws.keyword.vector_todo_count()
        return out

    def export(self, *, scope: str | None = None) -> builtins.list[dict[str, Any]]:
        """Every entry of a scope as JSON-ready dicts."""
        return [e.model_dump(mode="json") for e in self.list(scope=scope)]

    def daily_notes(self, day: date, *, scope: str | None = None) -> str:
        """The text of a scope's daily notes of ``day`` ("" when none)."""
        scope = self._scope(scope)
        return self._read_or_empty(self.workspace.layout.daily(scope, day), scope)

    def long_term_text(self, *, scope: str | None = None) -> str:
        """The text of a scope's long-term Markdown file (``MEMORY.md`` for ``main``,
        ``LONG_TERM.md`` for the others; "" when none), as a person would read it.

        Needs neither the embedder nor the index: the graph injects its beginning
        when search is unavailable.
        """
        scope = self._scope(scope)
        return self._read_or_empty(self.workspace.layout.long_term(scope), scope)

    def _read_or_empty(self, path: Path, scope: str) -> str:
        try:
            return self.workspace.read_text(scope, path)
        except LangmemError as e:  # a symlink or a non-UTF-8 file: injected as nothing
            logger.warning("%s not read: %s", path.name, e)
            return ""

    # -- lifecycle ---------------------------------------------------------

    def maintain(
        self,
        *,
        scope: str | None = None,
        now: datetime | date | float | None = None,
        progress: Progress | None = None,
        model: BaseChatModel | None = None,
    ) -> MaintenanceReport:
        """Run the memory lifecycle once: decay, old-episode deletion, reviews,
        pending expiry, hot-log TTL and temp-file cleanup.

        Idempotent for a given day: a second run on the same day changes nothing.
        ``core`` and ``system`` memories are never decayed or deleted. See
        :mod:`langmem_ext.memory.lifecycle.maintenance`.

        Args:
            scope: Only this scope (default every scope; the hot-log purge and the
                temp-file cleanup run only then).
            now: The time the run is for (default now).
            progress: ``progress(done, total)`` while it runs.
            model: Chat model of the reviews (PROMOTE / KEEP / DELETE); ``None``
                uses their deterministic fallback.

        Returns:
            What changed.
        """
        return maintain(
            self,
            scope=None if scope is None else self._scope(scope),
            now=now,
            progress=progress,
            model=model,
        )

    def review(
        self,
        entry_id: str,
        *,
        scope: str | None = None,
        kind: ReviewKind | None = None,
        model: BaseChatModel | None = None,
    ) -> ReviewResult:
        """Review one fact now: PROMOTE to core, KEEP or DELETE.

        Args:
            entry_id: The memory.
            scope: Its scope.
            kind: ``promotion`` or ``decay`` (default: the review it is due for).
            model: The reviewer chat model; ``None`` uses the deterministic fallback.

        Returns:
            The decision and what was done (see :mod:`langmem_ext.memory.lifecycle.reviewer`).
        """
        return review_entry(self, entry_id, scope=self._scope(scope), kind=kind, model=model)

    def record_access(
        self, entry_ids: Sequence[str], *, scope: str | None = None, at: float | None = None
    ) -> int:
        """Record that recalled memories reached the model (their ``last_access``).

        Recall surfaces call it (the graph, the middleware, ``memory_search``); a
        memory in use does not decay.

        Returns:
            How many memories of the scope were marked.
        """
        return record_access(self, entry_ids, scope=self._scope(scope), at=at)

    # -- user profile (memory/profile.py) ------------------------------------

    def profile(self, *, scope: str | None = None) -> Profile:
        """The scope's user profile (``PROFILE.md``; a hand edit is read back and recorded)."""
        scope = self._scope(scope)
        profile = self.profiles.read(scope)
        stated = self.safety.stated(scope, profile)
        return profile.model_copy(update={"stated_by": {f: list(v.ids) for f, v in stated.items()}})

    def upsert_facts(
        self,
        facts: dict[str, Any],
        *,
        scope: str | None = None,
        source: str = "app",
        replace: bool = False,
        thread_id: str | None = None,
    ) -> ProfileUpdate:
        """Set typed profile fields, e.g. ``{"allergies": ["花生"], "name": "小明"}``.

        Args:
            facts: Field → value; list fields take a list (or a comma-separated text).
            scope: Whose profile.
            source: ``app`` (trusted: written at once); ``agent`` / ``extractor``
                propose: their safety-critical changes wait as pending items.
            replace: Replace list fields instead of adding the new items.
            thread_id: The conversation a proposed change comes from (see :meth:`save`).

        Raises:
            InvalidInputError: an unknown field or a value of the wrong kind.
        """
        ops = fact_ops(facts, replace=replace)
        return self.profiles.upsert(self._scope(scope), ops, source, thread_id)

    def upsert_preferences(
        self, preferences: dict[str, str | None], *, scope: str | None = None, source: str = "app"
    ) -> ProfileUpdate:
        """Set free preferences (text → text; ``None`` removes one); written at once."""
        return self.profiles.upsert(self._scope(scope), preference_ops(preferences), source)

    def profile_history(
        self, *, scope: str | None = None, field: str | None = None
    ) -> builtins.list[ProfileChange]:
        """Every change of the scope's profile (of one field when given), oldest first."""
        return self.profiles.history(self._scope(scope), field)

    def safety_block(self, *, scope: str | None = None, max_tokens: int | None = None) -> str:
        """The safety-critical part of the profile as a system block (``""`` when empty).

        Within ``max_tokens`` (default ``injection.profile_tokens``); the graph and the
        middleware put it in every model call.
        """
        budget = self.settings.injection.profile_tokens if max_tokens is None else max_tokens
        return self.safety.block(self._scope(scope), budget)

    def safety_recall(
        self, query: str, *, scope: str | None = None
    ) -> builtins.list[SafetySection]:
        """What a question about a safety topic must see first: each safety field it
        asks about ("Does Lin Wei have any food allergies?", "我做过什么手术"), with the
        profile's value and every current memory stating it.

        Args:
            query: The question (any language).
            scope: Whose memory.

        Returns:
            One section per field asked about that the profile or a memory states, in
            profile order (``[]``: no safety question). A question about someone else
            ("what is my sister allergic to?") gets that person's memories and no
            profile value.
        """
        scope = self._scope(scope)
        topic = self.safety.topic(scope, query) if isinstance(query, str) else None
        if topic is None:
            return []
        self._maybe_sync(scope, read=True)
        linked = self.safety.linked(scope, topic)
        docs = self.workspace.keyword.docs(builtins.list(linked))
        states = self.workspace.ledger.entries.many(builtins.list(docs))
        entries = [_to_entry(docs[i], states.get(i)) for i in linked if i in docs]
        profile = self.profiles.read(scope, wait=False) if topic.subject == USER else None
        sections = []
        for field in topic.fields:
            value = getattr(profile, field) if profile is not None else None
            stating = [e for e in entries if field in linked[e.id]]
            if value or stating:
                sections.append(
                    SafetySection(
                        field=field, subject=topic.subject, profile=value or None, memories=stating
                    )
                )
        return sections

    aprofile = async_method(profile)
    asafety_recall = async_method(safety_recall)
    aupsert_facts = async_method(upsert_facts)
    aupsert_preferences = async_method(upsert_preferences)
    aprofile_history = async_method(profile_history)
    asafety_block = async_method(safety_block)

    # -- async twins -------------------------------------------------------

    asave = async_method(save)
    aconfirm = async_method(confirm)
    areject = async_method(reject)
    alist_pending = async_method(list_pending)
    aexpire_pending = async_method(expire_pending)
    asave_found = async_method(save_found)
    aadd = async_method(add)
    aadd_many = async_method(add_many)
    aupdate = async_method(update)
    adelete = async_method(delete)
    aget = async_method(get)
    aget_entry = async_method(get_entry)
    afiles = async_method(files)
    alist = async_method(list)
    alist_page = async_method(list_page)
    aset_category = async_method(set_category)
    asearch = async_method(search)
    ahistory = async_method(history)
    aboost = async_method(boost)
    async_sync = async_method(sync)
    areindex = async_method(reindex)
    amaintain = async_method(maintain)
    areview = async_method(review)
    arecord_access = async_method(record_access)
    atriples = async_method(triples)


def _anchored(content: str, rel: str, anchor: str) -> tuple[int, int]:
    """The first and last line of the entry or note ``anchor`` names in ``content``.

    Raises:
        InvalidPathError: It is not in the file (deleted, moved, or a note's text
            edited: its anchor changed with it).
    """
    if anchor.startswith(PROSE_PREFIX):
        note = next((c for c in parse_prose(content, rel) if c.anchor == anchor), None)
        if note is None:
            raise InvalidPathError(
                f"No note {anchor} in {rel}: its text was edited or deleted. Search again "
                "with memory_search for a fresh citation."
            )
        return note.line, note.end_line
    entry = next((e for e in parse_entries(content) if e.id == anchor), None)
    if entry is None:
        raise InvalidPathError(
            f"No memory {anchor} in {rel}: it was deleted or moved. Search again "
            "with memory_search for a fresh citation."
        )
    return entry.line, entry.end_line


def _page_key(sort: str, doc: Doc, row: EntryTableRow | None) -> tuple[Any, ...]:
    """Sort key of one row of :meth:`Memory.list_page` (missing values sort first)."""
    if sort in ("text", "category", "importance", "created_at"):
        value: Any = getattr(doc, sort)
        return (value.casefold(),) if sort == "text" else (value,)
    if sort in ("verified", "source"):
        return (getattr(row, sort, ""),)
    value = getattr(row, sort, None)
    return (0, 0.0) if value is None else (1, float(value))


def _to_entry(doc: Doc, st: EntryState | None) -> MemoryEntry:
    return MemoryEntry(
        id=doc.id,
        text=doc.text,
        scope=doc.scope,
        category=doc.category,
        path=doc.path,
        line=doc.line,
        importance=doc.importance,
        created_at=to_dt(doc.created_at),  # type: ignore[arg-type]
        updated_at=to_dt(doc.updated_at),  # type: ignore[arg-type]
        last_access=to_dt(st.last_access) if st else None,
        source=st.source if st else "user",
        verified=st.verified if st else False,
        valid_to=to_dt(st.valid_to) if st else None,
        supersedes=st.supersedes if st else None,
    )


__all__ = ["GET_DEFAULT_LINES", "GET_MAX_LINES", "Memory"]

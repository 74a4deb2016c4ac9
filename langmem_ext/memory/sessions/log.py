"""The session hot log: every user / assistant message and every summary.

Each event is written twice under the lock of its scope's writes:

- one line appended (and fsynced) to the scope's daily transcript,
  ``memory/transcripts/YYYY-MM-DD.md`` for scope ``main`` and
  ``memory/scopes/<scope>/transcripts/YYYY-MM-DD.md`` for the others — a file a
  person can read and ``memory_get`` can quote by ``path:line``;
- one row in the ledger table ``session_events`` (scope, thread, role, text, time,
  transcript path and line), purged after ``short_term.session_event_ttl_days``,
  and its keyword tokens (:func:`~langmem_ext.language.text.index_tokens`) in the
  FTS5 table ``session_events_fts`` (same rowid), so a topic lookup is an index
  lookup, not a scan of the whole TTL. Transcript files are never purged.

Durability: when an append returns, its transcript lines are on disk and its rows
are committed. The rows do not wait for the disk (the ledger's
``transaction(durable=False)``): they survive a killed process at once, and an OS
crash or power loss once the next durable ledger write or WAL checkpoint has synced
them — the same promise the conversation's checkpoints make (SQLite WAL,
``synchronous=NORMAL``). The transcript line is synced first, so a row that
survives always finds its line; what the user was told was *saved* (pending,
confirmed memories) lives elsewhere and syncs fully.

Each event also gets a vector, off the reply path: an append queues a job on the
memory's background writer (:attr:`Memory.background <langmem_ext.Memory.background>`)
that embeds the events logged since its last run (:meth:`SessionLog.embed_pending`)
and keeps their vectors in the derived index, as passages of kind ``event`` of
their scope (:mod:`~langmem_ext.workspace.sqlite.passage_rows`; the vector index's
partition ``event.<scope>`` holds them too). Until its job ran, an event is found by
its keywords only; a lost index is embedded again from the ledger.

:meth:`SessionLog.search` is a search source for
:meth:`langmem_ext.memory.recall.search.SearchEngine.add_source`. It costs one regex pass on
ordinary turns: it only reads the log when the query is a recall question
("昨天我问了什么", "what did you suggest last time?"). Then it takes the events of
the question's time window; with no window ("上次" / "previously") the events of
the whole TTL that share a keyword token with the question (looked up in
``session_events_fts``), or the latest events when it has none ("上次我们聊了什么").
It keeps the role the question asks about ("what did *I* ask" → user events,
"你上次推荐了什么" → assistant events). The events are the keyword candidates of
the question — BM25 over their tokens (``ledger.events``), or, for a question with
no topic, the latest events, which all match it — and, when the search passes the
query's embedding, the vector candidates: the events of the same window and role
nearest to it, in any language ("What did I ask about Hangzhou?" finds
"帮我查一下去杭州的高铁"). Both are ranked by the pipeline that ranks memories
(:func:`langmem_ext.retrieval.pipeline.rank`: fusion, thresholds, recency, time
decay, the time window, noise).

Every :class:`~langmem_ext.Memory` owns one log (:attr:`Memory.session_log
<langmem_ext.Memory.session_log>`), built with it: its :meth:`SessionLog.search` is a
source of the memory's search from the start, and its TTL purge a step of
``maintain``, whatever else the process builds. Another ``SessionLog(memory)`` reads
and writes the same rows (a job reading the log at another time builds one with its
own clock); only the memory's own is searched.

Example:
    .. code-block:: python

        from langmem_ext import Memory

        memory = Memory("./memory-ws")
        memory.session_log.append("main", "t1", "user", "帮我查一下去杭州的高铁")
        memory.search("我昨天问了什么？")           # -> the event, source="session"
"""

from __future__ import annotations

import logging
import os
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast, get_args

from pydantic import BaseModel

from langmem_ext.core.errors import (
    EmbeddingError,
    EmptyTextError,
    IndexUnavailableError,
    InvalidInputError,
)
from langmem_ext.core.runtime import embed_matrix
from langmem_ext.language import session_vocab as vocab
from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.memory._utils import async_method, to_epoch, utc
from langmem_ext.memory.types import SearchHit
from langmem_ext.retrieval.calibration import rescale_cosine
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.intent import RecallIntent, detect_recall_intent
from langmem_ext.retrieval.pipeline import WORKING_SET, rank
from langmem_ext.workspace.files import PRIVATE_FILE_MODE, fsync_dir, private_dir
from langmem_ext.workspace.layout import check_scope
from langmem_ext.workspace.records import EventFilter, EventMatch, EventRow, NewEventRow
from langmem_ext.workspace.sqlite.passage_rows import Passage

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langmem_ext.core.config import Settings
    from langmem_ext.memory.background import TurnWriter
    from langmem_ext.workspace.store import Workspace

logger = logging.getLogger(__name__)

Role = Literal["user", "assistant", "summary"]
ROLES: tuple[str, ...] = get_args(Role)


DEFAULT_MAX_RESULTS = 6
"""Session hits one search returns at most (``session_events_max_results``)."""
PURGE_INTERVAL_S = 600.0
"""An append purges expired rows at most this often (every 10 minutes)."""
POOL_FACTOR = 2
"""A search reads this many times the candidates the pipeline's stages look at
(``max(WORKING_SET * k, 40)``): room for repeated texts, dropped before ranking."""
MAX_FILTER_TOKENS = 16
"""Content tokens used to look up the events of a question without a window."""
MAX_THREAD_ID_CHARS = 200
"""Longest accepted thread id."""
EMBED_BATCH = 256
"""Events embedded per round of :meth:`SessionLog.embed_pending`."""
EMBED_DEFER = 0.05
"""Seconds the embedding job waits after the append that queued it (any wait for
background jobs starts it at once)."""
EMBED_JOBS = "~session-vectors"
"""The background writer's key of the embedding jobs (no scope is spelled so)."""
EMBEDDED_UPTO = "event_vectors:"
"""Index meta key prefix (then the embedder's name): the id of the last event embedded."""

_ROLE_LABEL = {"user": "User", "assistant": "Assistant", "summary": "Summary"}

# --- query analysis ---------------------------------------------------------------


@dataclass(frozen=True)
class QueryFocus:
    """What a recall question is about, once its time and role words are removed.

    Attributes:
        role: The role asked about (``user`` / ``assistant``), or ``None``.
        tokens: Content tokens left for keyword overlap (may be empty).
        asks_about_session: The question talks about what was said (a role phrase).
    """

    role: Role | None
    tokens: tuple[str, ...]
    asks_about_session: bool


def query_focus(query: str) -> QueryFocus:
    """Split a recall question into the role it asks about and its content tokens.

    Args:
        query: The user's question (English or Chinese).

    Returns:
        The focus; ``role`` is ``user`` for "what did I ask" / "我昨天问了什么",
        ``assistant`` for "what did you suggest" / "你上次推荐了什么".

    Example:
        >>> query_focus("我昨天问了什么关于护照的事？").role
        'user'
        >>> query_focus("What did you recommend for the garden last week?").tokens
        ('garden',)
    """
    text = unicodedata.normalize("NFKC", query).lower()
    role: Role | None = None
    if vocab.USER_ROLE_RE.search(text):
        role = "user"
    elif vocab.ASSISTANT_ROLE_RE.search(text):
        role = "assistant"
    stripped = vocab.DATE_STRIP_RE.sub(" ", text)
    stripped = vocab.ZH_STRIP_RE.sub(" ", stripped)
    tokens = tuple(
        t
        for t in query_tokens(stripped, drop_stopwords=False)
        if t not in vocab.EN_NOISE and not (len(t) == 1 and t.isascii())
    )
    return QueryFocus(role, tokens, role is not None)


# --- records ----------------------------------------------------------------------


class SessionEvent(BaseModel):
    """One logged message or summary."""

    id: int
    """Ledger row id."""
    scope: str
    thread_id: str
    role: Role
    """``user``, ``assistant`` or ``summary``."""
    text: str
    at: datetime
    """When it was said (aware, UTC)."""
    path: str
    """Workspace-relative transcript file."""
    line: int
    """1-based line of the event in ``path``."""

    @property
    def citation(self) -> str:
        """``path:line`` for ``memory_get``."""
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class NewEvent:
    """An event to append (see :meth:`SessionLog.append_many`).

    Attributes:
        role: ``user``, ``assistant`` or ``summary``.
        text: What was said.
        at: When (epoch seconds, datetime or ``None`` for now).
    """

    role: str
    text: str
    at: datetime | float | None = None


BACKFILL_BATCH = 2000
"""Events tokenised per transaction when an older log is indexed on start."""


def event_terms(text: str) -> tuple[str, ...]:
    """The keyword tokens an event is found by: its distinct
    :func:`~langmem_ext.language.text.index_tokens` (a stemmed word, a CJK character or
    bigram each), in order."""
    return tuple(dict.fromkeys(index_tokens(text)))


def event_tokens(text: str) -> str:
    """An event's keyword tokens as one space-separated document (what the
    ledger's keyword lookup stores for it)."""
    return " ".join(event_terms(text))


SESSION_WEIGHT = 0.6
"""Scale of session-event scores next to memory hits (for topic recall questions):
a confirmed memory outranks what was merely said, unless the question is about the
conversation itself ("what did I ask ...")."""


def _event(row: EventRow) -> SessionEvent:
    return SessionEvent(
        id=row.id,
        scope=row.scope,
        thread_id=row.thread_id,
        role=cast(Role, row.role),  # checked when appended; pydantic checks again
        text=row.text,
        at=utc(row.at),
        path=row.path,
        line=row.line,
    )


def check_thread_id(thread_id: str) -> str:
    """Validate a thread (conversation) id: a non-empty string, at most 200 characters.

    Raises:
        InvalidInputError: Otherwise.
    """
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise InvalidInputError(
            f"Invalid thread id {thread_id!r}: pass the conversation id as a non-empty string."
        )
    if len(thread_id) > MAX_THREAD_ID_CHARS or "\x00" in thread_id:
        raise InvalidInputError(
            f"Thread id is too long or has a NUL byte: use at most {MAX_THREAD_ID_CHARS} "
            "printable characters."
        )
    return thread_id


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _one_per_text(
    keyword: list[Candidate], vector: list[Candidate] | None, asked: str
) -> tuple[list[Candidate], list[Candidate] | None]:
    """The candidates with one event per text, the newest that said it (equal texts
    score equal; both lists name it by the same id), the question itself left out
    (the same question asked before is not an answer to it)."""
    newest: dict[str, EventRow] = {}
    for c in (*keyword, *(vector or ())):
        ev: EventRow = c.metadata["event"]
        key = _one_line(ev.text).lower()
        if ev.role == "user" and key.strip() == asked:
            continue
        held = newest.get(key)
        if held is None or (ev.at, ev.id) > (held.at, held.id):
            newest[key] = ev

    def kept(cands: list[Candidate]) -> list[Candidate]:
        out: list[Candidate] = []
        seen: set[str] = set()
        for c in cands:
            key = _one_line(c.metadata["event"].text).lower()
            ev = newest.get(key)
            if ev is None or key in seen:
                continue
            seen.add(key)
            c.id = f"ev-{ev.id}"
            c.created_at = ev.at
            c.metadata["event"] = ev
            out.append(c)
        return out

    return kept(keyword), None if vector is None else kept(vector)


def _overlap(focus: QueryFocus, match: EventMatch) -> float:
    """Share of the question's content tokens the event holds."""
    return sum(1 for t in focus.tokens if t in match.tokens) / len(focus.tokens)


def _candidate(ev: EventRow, bm25: float, full: float, overlap: float) -> Candidate:
    """An event as a keyword candidate: ``bm25`` of ``full``, what matching the
    whole question scores (a share of 1.0 where the question has no topic)."""
    return Candidate(
        id=f"ev-{ev.id}",
        text=ev.text,
        category="episode",
        created_at=ev.at,
        importance=1.0,
        bm25_score=bm25,
        bm25_full=full,
        metadata={"event": ev, "overlap": overlap},
    )


def event_passage(ev: EventRow) -> Passage:
    """An event as the passage its vector is kept with."""
    return Passage(
        "event", f"ev-{ev.id}", ev.scope, ev.path, ev.line, ev.line, "episode", "", ev.role,
        ev.text, ev.at,
    )  # fmt: skip


def _hit(c: Candidate, weight: float, *, windowed: bool) -> SearchHit:
    """A ranked event as a session hit; its score is scaled by ``weight``."""
    ev: EventRow = c.metadata["event"]
    when = utc(ev.at)
    debug = {
        **c.debug,
        "overlap": float(c.metadata["overlap"]),
        "window": 1.0 if windowed else 0.0,
        "weight": weight,
    }
    return SearchHit(
        id=c.id,
        text=f"{_ROLE_LABEL.get(ev.role, ev.role)}: {ev.text}",
        score=round(c.score * weight, 6),
        path=ev.path,
        line=ev.line,
        category="episode",
        created_at=when,
        updated_at=when,
        importance=1.0,
        scope=ev.scope,
        source="session",
        debug={k: round(v, 6) for k, v in debug.items()},
    )


# --- the log ----------------------------------------------------------------------


class _Calibrated(Protocol):
    @property
    def cosine_baseline(self) -> float:
        """The query embedder's cosine baseline."""
        ...


class LogHost(Protocol):
    """What a session log uses of its memory (:class:`~langmem_ext.Memory` is one)."""

    settings: Settings
    workspace: Workspace
    embeddings: Embeddings

    @property
    def background(self) -> TurnWriter:
        """The memory's ordered background writer (the log's vectors are made there)."""
        ...

    @property
    def engine(self) -> _Calibrated:
        """The memory's search (the log ranks its vector hits on its cosine scale)."""
        ...


class SessionLog:
    """The hot log of a workspace's conversations: ledger rows + Markdown transcripts.

    Setup:
        Built over a :class:`~langmem_ext.Memory`; each memory builds its own
        (:attr:`Memory.session_log <langmem_ext.Memory.session_log>`), whose
        :meth:`search` its searches consult on recall questions. Building one indexes
        events an older workspace logged without keyword tokens.

    Instantiate:
        .. code-block:: python

            log = memory.session_log
            # or another view of the same rows, with its own clock or result cap:
            from langmem_ext.memory.sessions.log import SessionLog

            log = SessionLog(memory, max_results=3)

    Invoke:
        .. code-block:: python

            log.append("main", "thread-1", "user", "明天提醒我交房租")
            log.recent("main", thread_id="thread-1", role="user")[-1].text
            # '明天提醒我交房租'

    Async:
        .. code-block:: python

            await log.aappend("main", "thread-1", "assistant", "好的，已记下。")

    Args:
        memory: The memory service whose workspace, ledger and settings are used.
        max_results: Most session hits one search returns.
        clock: Returns "now" in epoch seconds (tests pass a fixed clock).
    """

    def __init__(
        self,
        memory: LogHost,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_results < 1:
            raise InvalidInputError(f"max_results must be at least 1, got {max_results}.")
        self.memory = memory
        self.max_results = max_results
        self._clock = clock
        self._ledger = memory.workspace.ledger
        self._line_cache: dict[Path, tuple[int, int]] = {}
        self._last_purge = 0.0
        self._embed_lock = threading.Lock()
        self._embed_queued = False
        self._caught_up = False
        """Whether this log checked for events logged without a vector (its first
        recall search does, after a lost index; an append queues them anyway)."""
        self._index_missing()

    def _index_missing(self) -> int:
        """Tokenise events logged before ``session_events_fts`` existed (once per log).

        A read first: a workspace with nothing to index (every one but an old one)
        opens no write transaction.
        """
        done = 0
        events = self._ledger.events
        while events.unindexed(1):
            with self._ledger.transaction(durable=False):
                rows = events.unindexed(BACKFILL_BATCH)
                events.index([(i, event_terms(t)) for i, t in rows])
            done += len(rows)
        if done:
            logger.info("indexed %d session events for topic lookup", done)
        return done

    @property
    def ttl_seconds(self) -> float:
        """How long ledger rows are kept (``short_term.session_event_ttl_days``)."""
        return float(self.memory.settings.short_term.session_event_ttl_days) * 86400.0

    def _scope(self, scope: str | None) -> str:
        return check_scope(scope or self.memory.settings.default_scope)

    # -- writes --------------------------------------------------------------------

    def append(
        self,
        scope: str | None,
        thread_id: str,
        role: str,
        text: str,
        at: datetime | float | None = None,
    ) -> SessionEvent:
        """Log one message or summary (transcript line fsynced, row committed).

        Args:
            scope: Whose conversation (default ``settings.default_scope``).
            thread_id: The conversation.
            role: ``user``, ``assistant`` or ``summary``.
            text: What was said.
            at: When (default now).

        Returns:
            The stored event, with its transcript ``path`` and ``line``.

        Raises:
            InvalidInputError: Unknown role, bad scope or thread id.
            EmptyTextError: Blank text.
        """
        return self.append_many(scope, thread_id, [NewEvent(role, text, at)])[0]

    def append_many(
        self, scope: str | None, thread_id: str, events: Sequence[NewEvent]
    ) -> list[SessionEvent]:
        """Log several events of one conversation with one fsync per transcript file.

        The rows are committed without waiting for the disk (see the module
        docstring): one fsync per file is all an append waits for.

        Args:
            scope: Whose conversation.
            thread_id: The conversation.
            events: The events, in order; all are validated before anything is written.

        Returns:
            The stored events, in order.
        """
        scope = self._scope(scope)
        thread_id = check_thread_id(thread_id)
        now = float(self._clock())
        prepared: list[tuple[str, str, float]] = []
        for ev in events:
            if ev.role not in ROLES:
                raise InvalidInputError(
                    f"Unknown session event role {ev.role!r}: use one of {', '.join(ROLES)}."
                )
            if not isinstance(ev.text, str):
                raise InvalidInputError(
                    f"Event text must be a string, got {type(ev.text).__name__}."
                )
            if not ev.text.strip():
                raise EmptyTextError("Session event text is empty; nothing to log.")
            try:
                ev.text.encode("utf-8")
            except UnicodeEncodeError as e:
                raise InvalidInputError(
                    f"Session event text contains a lone surrogate at character {e.start}: "
                    "it is not valid Unicode; fix the text (e.g. errors='replace')."
                ) from None
            prepared.append((ev.role, ev.text.strip(), to_epoch(ev.at, now)))
        if not prepared:
            return []
        ws = self.memory.workspace
        layout = ws.layout
        paths = [
            layout.transcript(scope, datetime.fromtimestamp(at).date()) for _, _, at in prepared
        ]
        by_file: dict[Path, list[int]] = {}
        for i, path in enumerate(paths):
            by_file.setdefault(path, []).append(i)
        lines: list[int] = [0] * len(prepared)
        with ws.lock.hold_scope(scope):
            for path in by_file:  # refuse a symlinked transcript before writing any
                layout.check_own(path, scope)
            for path, idxs in by_file.items():
                rendered = [self._render(thread_id, *prepared[i]) for i in idxs]
                first = self._append_lines(path, scope, rendered)
                for offset, i in enumerate(idxs):
                    lines[i] = first + offset
            rows = [
                NewEventRow(
                    scope, thread_id, role, text, at, layout.rel(path), line, event_terms(text)
                )
                for (role, text, at), path, line in zip(prepared, paths, lines, strict=True)
            ]
            with self._ledger.transaction(durable=False):
                ids = self._ledger.events.add(rows)
        if now - self._last_purge >= PURGE_INTERVAL_S:
            self.purge(now=now)
        self._queue_embedding()
        return [
            _event(EventRow(r.scope, r.thread_id, r.role, r.text, r.at, r.path, r.line, id=i))
            for i, r in zip(ids, rows, strict=True)
        ]

    @staticmethod
    def _render(thread_id: str, role: str, text: str, at: float) -> str:
        stamp = datetime.fromtimestamp(at).strftime("%H:%M:%S")
        return f"- {stamp} [{_one_line(thread_id)}] {role}: {_one_line(text)}"

    def _append_lines(self, path: Path, scope: str, lines: Sequence[str]) -> int:
        """Append lines durably; return the 1-based line number of the first one."""
        ws = self.memory.workspace
        if not ws.files:  # the document store keeps the transcript (lock held)
            rel = ws.layout.rel(path)
            text = ws.documents.read(scope, rel)
            head = (
                f"# Transcript {path.stem} ({scope})\n\n"
                if not text
                else ("" if text.endswith("\n") else "\n")
            )
            ws.documents.write(scope, rel, text + head + "\n".join(lines) + "\n")
            return text.count("\n") + head.count("\n") + 1
        private_dir(path.parent)
        created = not path.exists()
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            cached = self._line_cache.get(path)
            if cached is not None and cached[0] == size:
                newlines = cached[1]
            else:
                newlines = path.read_bytes().count(b"\n")
            ends_with_newline = size == 0 or os.pread(fd, 1, size - 1) == b"\n"
            if size == 0:
                day = path.stem
                prefix = f"# Transcript {day} ({scope})\n\n"
            elif not ends_with_newline:
                prefix = "\n"  # close a hand-edited last line
            else:
                prefix = ""
            first = newlines + prefix.count("\n") + 1
            payload = (prefix + "\n".join(lines) + "\n").encode("utf-8")
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_dir(path.parent)
        self._line_cache[path] = (size + len(payload), newlines + payload.count(b"\n"))
        return first

    def purge(self, *, now: float | None = None) -> int:
        """Delete ledger rows older than the TTL (transcript files are kept).

        Args:
            now: The current time (default the log's clock).

        Returns:
            How many rows were deleted.
        """
        now = float(self._clock()) if now is None else now
        cutoff = now - self.ttl_seconds
        with self._ledger.transaction(durable=False):
            deleted = self._ledger.events.purge(cutoff)
        self.memory.workspace.keyword.purge_event_passages(cutoff)
        self._last_purge = now
        if deleted:
            logger.info("purged %d session events older than %s", deleted, utc(cutoff))
        return deleted

    # -- vectors -------------------------------------------------------------------

    def _upto_key(self) -> str:
        return EMBEDDED_UPTO + self.memory.workspace.vectors.model_name

    def _embedded_upto(self) -> int:
        return int(self.memory.workspace.keyword.get_meta(self._upto_key()) or 0)

    def _queue_embedding(self) -> None:
        """Queue :meth:`embed_pending` on the memory's background writer (once: a job
        queued and not started yet embeds what is appended meanwhile too).

        It is queued under :data:`EMBED_JOBS`, not a scope: the next turn's recall,
        which waits for its scope's jobs, does not wait for it (until it ran, the last
        turn's events are found by their keywords); :meth:`TurnWriter.wait
        <langmem_ext.memory.background.TurnWriter.wait>` without a scope and
        ``Memory.close`` do.
        """
        with self._embed_lock:
            if self._embed_queued:
                return
            self._embed_queued = True
        self.memory.background.submit(EMBED_JOBS, self._embed_job, defer=EMBED_DEFER)

    def _embed_job(self) -> None:
        with self._embed_lock:
            self._embed_queued = False
        self.embed_pending()

    def embed_pending(self) -> int:
        """Embed the events logged since the last run and keep their vectors.

        Runs on the background writer after appends and after the first recall
        search of a log whose index lost them (never on the reply path); call it
        directly to catch up at once. Events older than the TTL are skipped. When
        the embedder or the vector index fails, what is left waits for the next run
        (logged, not raised).

        Returns:
            How many events were embedded.
        """
        ws = self.memory.workspace
        done = 0
        while True:
            upto = self._embedded_upto()
            rows = self._ledger.events.after(upto, EMBED_BATCH)
            if not rows:
                return done
            oldest = float(self._clock()) - self.ttl_seconds
            live = [r for r in rows if r.at >= oldest]
            if live:
                try:
                    matrix = embed_matrix(
                        self.memory.embeddings, [r.text for r in live], ws.batch_size
                    )
                    ws.store_passage_vectors(
                        "event", [(None, event_passage(r)) for r in live], matrix
                    )
                except (EmbeddingError, IndexUnavailableError) as e:
                    logger.warning("session events not embedded (%s); the next append retries", e)
                    return done
            ws.keyword.set_meta(self._upto_key(), str(rows[-1].id))
            done += len(live)

    # -- reads ---------------------------------------------------------------------

    def recent(
        self,
        scope: str | None,
        thread_id: str | None = None,
        since: datetime | date | float | None = None,
        until: datetime | date | float | None = None,
        role: str | None = None,
        limit: int | None = None,
    ) -> list[SessionEvent]:
        """Events of a scope (optionally one thread, a time range, one role), oldest first.

        Args:
            scope: Whose conversations; events of other scopes are never returned.
            thread_id: Only this conversation.
            since: Only events at or after this time.
            until: Only events before this time.
            role: Only ``user``, ``assistant`` or ``summary`` events.
            limit: Only the newest ``limit`` events (still returned oldest first).

        Returns:
            The events (expired rows excluded even before they are purged).
        """
        scope = self._scope(scope)
        if thread_id is not None:
            thread_id = check_thread_id(thread_id)
        if role is not None and role not in ROLES:
            raise InvalidInputError(f"Unknown role {role!r}: use one of {', '.join(ROLES)}.")
        if limit is not None and limit < 1:
            raise InvalidInputError(f"limit must be at least 1, got {limit}.")
        oldest = float(self._clock()) - self.ttl_seconds
        where = EventFilter(
            scope,
            oldest if since is None else max(oldest, to_epoch(since, 0.0)),
            until=None if until is None else to_epoch(until, 0.0),
            thread_id=thread_id,
            role=role,
        )
        return [_event(r) for r in reversed(self._ledger.events.recent(where, limit))]

    # -- search source -------------------------------------------------------------

    def search(
        self,
        query: str,
        scope: str,
        k: int,
        intent: RecallIntent | None,
        query_vector: Sequence[float] | None = None,
    ) -> list[SearchHit]:
        """Session events for a recall question (a ``SearchEngine`` extra source).

        Returns nothing, without touching the ledger, unless the query is a recall
        question: a recall intent that forces a search (yesterday, last week,
        上次, 之前, ...) or any time phrase plus a question about what was said
        ("what did I ask today").

        Args:
            query: The search query.
            scope: The caller's scope (only its events are read).
            k: Results wanted; at most ``max_results`` are returned.
            intent: The recall intent if the caller detected one; detected here
                otherwise.
            query_vector: The query's embedding (the search engine passes the one it
                made): the events nearest to it join the candidates. ``None``:
                keywords only.

        Returns:
            ``SearchHit(source="session", category="episode")``, best first; the
            text is prefixed with who said it (``User: …``, ``Assistant: …``,
            ``Summary: …``) and ``path:line`` is the transcript line.
        """
        now = float(self._clock())
        if intent is None:
            intent = detect_recall_intent(query, datetime.fromtimestamp(now).astimezone())
        if intent is None:
            return []
        focus = query_focus(query)
        if not (intent.forced or focus.asks_about_session):
            return []
        scope = check_scope(scope)
        if not self._caught_up:  # events logged before a lost index: embed them, later
            self._caught_up = True
            if self._embedded_upto() < self._ledger.events.last_id():
                self._queue_embedding()
        limit = max(1, min(k, self.max_results))
        pool = POOL_FACTOR * max(WORKING_SET * limit, 40)
        # The same question asked before is not an answer to itself; a text said
        # again is one hit (its newest copy: equal texts score equal).
        asked = _one_line(query).strip().lower()
        keyword = self._candidates(scope, intent, focus, now, pool)
        vector = (
            None
            if query_vector is None
            else self._vector_candidates(scope, intent, focus, now, pool, query_vector)
        )
        keyword, vector = _one_per_text(keyword, vector, asked)
        if not keyword and not vector:
            return []
        rs = self.memory.settings.retrieval
        ranked = rank(
            vector,
            keyword,
            k=limit,
            settings=rs,
            now=now,
            intent=intent,
            copy_inputs=False,
            full_match_cosine=rs.vector_full_match,
            cosine_baseline=self.memory.engine.cosine_baseline,
            query=query if vector is not None else None,
        )
        weight = 1.0 if focus.role is not None else SESSION_WEIGHT
        return [_hit(c, weight, windowed=intent.has_window) for c in ranked]

    def _candidates(
        self, scope: str, intent: RecallIntent, focus: QueryFocus, now: float, pool: int
    ) -> list[Candidate]:
        """The question's keyword candidates, best first (at most ``pool``).

        With content tokens, the events (of the window, if any) sharing one, by BM25
        (without a window, the first ``MAX_FILTER_TOKENS`` tokens). Without a match
        in a window, the window's latest events, as candidates that match none of the
        topic (still an answer to "what did we do yesterday ..."; without a window,
        nothing). Without content tokens, the latest events (of the window, if any),
        as candidates that match all of it: the question names no topic.
        """
        since, until = now - self.ttl_seconds, None
        if intent.window_start is not None and intent.window_end is not None:
            since, until = max(since, intent.window_start), intent.window_end
        where = EventFilter(scope, since, until=until, role=focus.role)
        events = self._ledger.events
        share = 1.0  # of the (empty) topic every event matches
        if focus.tokens:
            tokens = focus.tokens if until is not None else focus.tokens[:MAX_FILTER_TOKENS]
            tokens = tuple(dict.fromkeys(tokens))
            matches = events.matching(where, tokens, pool)
            if matches:
                full = events.bm25_full(tokens)
                return [_candidate(m.event, m.bm25, full, _overlap(focus, m)) for m in matches]
            if until is None:
                return []
            share = 0.0
        return [_candidate(ev, share, 1.0, 0.0) for ev in events.recent(where, pool)]

    def _vector_candidates(
        self,
        scope: str,
        intent: RecallIntent,
        focus: QueryFocus,
        now: float,
        pool: int,
        query_vector: Sequence[float],
    ) -> list[Candidate] | None:
        """The events of the question's window (else the TTL) and role nearest to the
        query vector, best first, as vector candidates (at most ``pool``); ``None``
        when the scope has no event embedded yet (the vector side did not run)."""
        ws = self.memory.workspace
        if not ws.keyword.has_passages("event", scope):
            return None
        since, until = now - self.ttl_seconds, None
        if intent.window_start is not None and intent.window_end is not None:
            since, until = max(since, intent.window_start), intent.window_end
        near = ws.vector_search.nearest_passages(
            "event", scope, query_vector, pool, since=since, until=until, role=focus.role
        )
        ids = [int(p.id.removeprefix("ev-")) for p, _sim in near]
        rows = self._ledger.events.many(
            EventFilter(scope, since, until=until, role=focus.role), ids
        )  # the ledger is the truth: an event purged or of another scope is gone
        baseline = self.memory.engine.cosine_baseline
        out: list[Candidate] = []
        for (p, sim), event_id in zip(near, ids, strict=True):
            ev = rows.get(event_id)
            if ev is None or ev.text != p.text:
                continue
            terms = set(event_terms(ev.text))
            overlap = (
                sum(1 for t in focus.tokens if t in terms) / len(focus.tokens)
                if focus.tokens
                else 0.0
            )
            c = Candidate(
                id=f"ev-{ev.id}",
                text=ev.text,
                category="episode",
                created_at=ev.at,
                importance=1.0,
                vector_score=rescale_cosine(sim, baseline),
                vector_rank=len(out),
                metadata={"event": ev, "overlap": overlap},
            )
            out.append(c)
        return out

    # -- async twins ---------------------------------------------------------------

    aappend = async_method(append)
    aappend_many = async_method(append_many)
    arecent = async_method(recent)
    apurge = async_method(purge)
    aembed_pending = async_method(embed_pending)


__all__ = [
    "DEFAULT_MAX_RESULTS",
    "ROLES",
    "LogHost",
    "NewEvent",
    "QueryFocus",
    "Role",
    "SessionEvent",
    "SessionLog",
    "check_thread_id",
    "event_passage",
    "event_tokens",
    "query_focus",
]

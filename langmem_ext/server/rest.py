"""The REST API under ``/v1``: the :class:`~langmem_ext.Memory` of the caller over HTTP.

:func:`rest_router` is included by :func:`~langmem_ext.server.app.create_app`. Every route
calls the one memory service the app holds, in the caller's scope:

===================================  ==================================================
route                                what it does
===================================  ==================================================
``POST /v1/memories``                :meth:`Memory.add` (a trusted write)
``GET /v1/memories``                 :meth:`Memory.list_page` (paging, filters, order)
``GET /v1/memories/by-anchor``       :meth:`Memory.get_entry` by ``path#^id``
``GET /v1/memories/{id}``            :meth:`Memory.get_entry`
``PATCH /v1/memories/{id}``          :meth:`Memory.update` (a new version)
``DELETE /v1/memories/{id}``         :meth:`Memory.delete`
``GET /v1/memories/{id}/history``    :meth:`Memory.history`
``POST /v1/pending``                 :meth:`Memory.save` (waits for confirmation)
``GET /v1/pending``                  :meth:`Memory.list_pending`
``POST /v1/pending/{id}/confirm``    :meth:`Memory.confirm`
``POST /v1/pending/{id}/reject``     :meth:`Memory.reject`
``POST /v1/search``                  :meth:`Memory.search` (``as_of``, ``include_superseded``,
                                     ``explain``: the score stages of each hit)
``GET /v1/files``                    :meth:`Memory.files`
``GET /v1/files/read``               :meth:`Memory.get` (``memory_get``: lines of a file)
``GET /v1/profile``                  :meth:`Memory.profile`
``GET /v1/profile/history``          :meth:`Memory.profile_history`
``POST /v1/profile/facts``           :meth:`Memory.upsert_facts`
``POST /v1/profile/preferences``     :meth:`Memory.upsert_preferences`
``GET /v1/triples``                  :meth:`Memory.triples` (the knowledge graph)
``GET /v1/export``                   :meth:`Memory.export`
``GET /v1/stats``                    :meth:`Memory.stats`
``POST /v1/sync``                    :meth:`Memory.sync`
``POST /v1/maintain``                :meth:`Memory.maintain`
``POST /v1/sessions/context``        :meth:`SessionManager.query_context`
``POST /v1/sessions/turns``          :meth:`SessionManager.write_turn`
``POST /v1/sessions/checkpoint``     :meth:`SessionManager.checkpoint` (caller's summary)
``POST /v1/sessions/finalize``       :meth:`SessionManager.finalize_session`
===================================  ==================================================

Who and what (:func:`~langmem_ext.server.callers.request_caller`): with ``authenticate=``
its result is the user; without it the ``X-User-Id`` header is trusted and only
clients on this machine are answered. The scope is the caller's own, or a shared
scope the server lists, named in ``X-Scope``. Ids of another scope are unknown ids:
``404``, and nothing is changed. A conversation ``thread_id`` is the caller's own:
``t1`` of user ``alice`` is the thread ``/agent`` keeps as ``user_alice/t1``.

Every write (each ``POST``, ``PATCH`` and ``DELETE`` above but ``/v1/search`` and
``/v1/sessions/context``) takes an ``Idempotency-Key`` header: sent again with the
same key, it does nothing and answers what it answered the first time
(:mod:`langmem_ext.server.idempotency`).

Errors are JSON ``{"detail", "error"}``: invalid input ``422``, unknown ids ``404``,
a pending save already settled or expired ``409`` (the app's handlers).
"""

# Annotations are evaluated at definition: FastAPI reads the routes' local aliases.

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, Response
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, messages_to_dict
from pydantic import Field

from langmem_ext.core.errors import InvalidMessagesError
from langmem_ext.memory import Memory
from langmem_ext.memory.extraction.extractor import as_messages
from langmem_ext.memory.profile import Profile, ProfileChange, ProfileUpdate
from langmem_ext.memory.service import GET_MAX_LINES
from langmem_ext.memory.sessions.manager import SessionManager
from langmem_ext.memory.types import GetResult, MemoryEntry, MemoryPage, PendingItem
from langmem_ext.server.callers import (
    SCOPE_HEADER,
    USER_HEADER,
    Authenticate,
    Caller,
    CallerRefused,
    ServingState,
    request_caller,
)
from langmem_ext.server.idempotency import Idempotency, answer_once, request_idempotency
from langmem_ext.server.schema import (
    AddRequest,
    Category,
    CheckpointRequest,
    CheckpointResponse,
    ContextRequest,
    ContextResponse,
    Deleted,
    FactsRequest,
    Files,
    FinalizeRequest,
    FinalizeResponse,
    HistoryRow,
    MaintainRequest,
    PageSort,
    PreferencesRequest,
    SaveRequest,
    SearchRequest,
    SearchResponse,
    TripleOut,
    TurnRequest,
    TurnResponse,
    UpdateRequest,
)

PREFIX = "/v1"
T = TypeVar("T")
_ID = Field(min_length=1, max_length=64, pattern=r"^\S+$")


# -- the router ------------------------------------------------------------------------


def _messages(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [dict(m) for m in messages_to_dict(messages)]


def _tool_messages(raw: list[dict[str, Any]]) -> list[BaseMessage]:
    """The turn's tool messages, read as LangChain reads messages; only AI messages
    (with tool calls) and tool results belong there."""
    found = as_messages(raw) if raw else []
    for m in found:
        if m.type not in ("ai", "tool"):
            raise InvalidMessagesError(
                f"tool_messages holds a {m.type!r} message: only the assistant's tool calls "
                "and the tool results go there (the user's message is `human`)."
            )
    return found


def rest_router(state: ServingState, authenticate: Authenticate | None) -> APIRouter:
    """The ``/v1`` routes over the app's memory (see the module docstring).

    Args:
        state: The app's serving state (memory, shared and default scopes).
        authenticate: The app's ``authenticate=`` (``None``: the ``X-User-Id``
            header is trusted, loopback clients only).

    Returns:
        The router to include in the app.
    """
    router = APIRouter(prefix=PREFIX, tags=["memory"])
    lock = threading.Lock()
    engines: list[SessionManager] = []

    def sessions() -> SessionManager:
        """The session engine over the app's memory (made on first use)."""
        with lock:
            if not engines:
                engines.append(SessionManager(state.memory))
            return engines[0]

    async def caller(
        request: Request,
        x_user_id: Annotated[
            str | None,
            Header(
                alias=USER_HEADER,
                max_length=200,
                description="The caller's user id (must match authenticate=, when set).",
            ),
        ] = None,
        x_scope: Annotated[
            str | None,
            Header(
                alias=SCOPE_HEADER,
                max_length=200,
                description="A shared scope the server lists (default: the caller's own).",
            ),
        ] = None,
    ) -> Caller:
        try:
            return await request_caller(
                request, state, authenticate, user_id=x_user_id, scope=x_scope
            )
        except CallerRefused as e:
            raise HTTPException(e.status, e.message) from e

    Who = Annotated[Caller, Depends(caller)]
    Key = Annotated[Idempotency | None, Depends(request_idempotency)]

    def memory() -> Memory:
        return state.memory

    def once(
        idem: Idempotency | None, who: Caller, run: Callable[[], T], status: int = 200
    ) -> T | Response:
        """``run`` once per idempotency key (:func:`answer_once`)."""
        return answer_once(state.memory, idem, who, status, run)

    # -- memories ----------------------------------------------------------------------

    @router.post("/memories", status_code=201, response_model=MemoryEntry)
    def add(body: AddRequest, who: Who, idem: Key) -> MemoryEntry | Response:
        """Write a memory directly (a trusted source: the user, an import)."""

        def run() -> MemoryEntry:
            mem = memory()
            entry_id = mem.add(
                body.text,
                scope=who.scope,
                category=body.category,
                target=body.target,
                importance=body.importance,
                created_at=body.created_at,
                slot=body.slot,
            )
            return mem.get_entry(entry_id, scope=who.scope)

        return once(idem, who, run, 201)

    @router.get("/memories", response_model=MemoryPage)
    def list_page(
        who: Who,
        category: Category | None = None,
        text: Annotated[str | None, Query(max_length=1000)] = None,
        sort: PageSort = "file",
        descending: bool = False,
        offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 50,
        include_superseded: bool = False,
    ) -> MemoryPage:
        """One page of the caller's memories, filtered and sorted."""
        return memory().list_page(
            scope=who.scope,
            category=category,
            text=text,
            sort=sort,
            descending=descending,
            offset=offset,
            limit=limit,
            include_superseded=include_superseded,
        )

    @router.get("/memories/by-anchor", response_model=MemoryEntry)
    def by_anchor(
        who: Who, anchor: Annotated[str, Query(min_length=1, max_length=1100)]
    ) -> MemoryEntry:
        """One memory by its anchor (``path#^m-…``, as search hits cite it)."""
        return memory().get_entry(anchor, scope=who.scope)

    @router.get("/memories/{entry_id}", response_model=MemoryEntry)
    def get_entry(who: Who, entry_id: Annotated[str, _ID]) -> MemoryEntry:
        """One memory by id."""
        return memory().get_entry(entry_id, scope=who.scope)

    @router.patch("/memories/{entry_id}", response_model=MemoryEntry)
    def update(
        who: Who, entry_id: Annotated[str, _ID], body: UpdateRequest, idem: Key
    ) -> MemoryEntry | Response:
        """A new version of a memory (the old one kept, superseded); its new id."""
        return once(
            idem,
            who,
            lambda: memory().update(entry_id, body.text, scope=who.scope, supersede=body.supersede),
        )

    @router.delete("/memories/{entry_id}", response_model=Deleted)
    def delete(who: Who, entry_id: Annotated[str, _ID], idem: Key) -> Deleted | Response:
        """Forget a memory."""

        def run() -> Deleted:
            memory().delete(entry_id, scope=who.scope)
            return Deleted(id=entry_id)

        return once(idem, who, run)

    @router.get("/memories/{entry_id}/history", response_model=list[HistoryRow])
    def history(who: Who, entry_id: Annotated[str, _ID]) -> list[HistoryRow]:
        """Every version of the memory's chain, oldest first."""
        return [HistoryRow(**row) for row in memory().history(entry_id, scope=who.scope)]

    # -- pending -----------------------------------------------------------------------

    @router.post("/pending", status_code=201, response_model=PendingItem)
    def save(body: SaveRequest, who: Who, idem: Key) -> PendingItem | Response:
        """Propose a memory; it is stored once confirmed."""
        return once(
            idem,
            who,
            lambda: memory().save(
                body.text,
                scope=who.scope,
                target=body.target,
                category=body.category,
                importance=body.importance,
                supersedes=body.supersedes,
                source="api",
            ),
            201,
        )

    @router.get("/pending", response_model=list[PendingItem])
    def list_pending(who: Who) -> list[PendingItem]:
        """The caller's pending saves, oldest first."""
        return memory().list_pending(scope=who.scope)

    @router.post("/pending/{pending_id}/confirm", response_model=MemoryEntry | ProfileUpdate)
    def confirm(
        who: Who, pending_id: Annotated[str, _ID], idem: Key
    ) -> MemoryEntry | ProfileUpdate | Response:
        """Store a pending save: the memory (or, for a profile change, the update)."""
        return once(idem, who, lambda: memory().confirm(pending_id, scope=who.scope))

    @router.post("/pending/{pending_id}/reject", response_model=PendingItem)
    def reject(who: Who, pending_id: Annotated[str, _ID], idem: Key) -> PendingItem | Response:
        """Discard a pending save."""
        return once(idem, who, lambda: memory().reject(pending_id, scope=who.scope))

    # -- search and files --------------------------------------------------------------

    @router.post("/search", response_model=SearchResponse)
    def search(body: SearchRequest, who: Who) -> SearchResponse:
        """Search the caller's memories; ``explain`` keeps each hit's score stages."""
        hits = memory().search(
            body.query,
            scope=who.scope,
            k=body.k,
            mode=body.mode,
            category=body.category,
            as_of=body.as_of,
            include_superseded=body.include_superseded,
        )
        if not body.explain:
            hits = [h.model_copy(update={"debug": {}}) for h in hits]
        return SearchResponse(query=body.query, hits=hits)

    @router.get("/files", response_model=Files)
    def files(who: Who) -> Files:
        """The caller's memory files."""
        return Files(files=memory().files(scope=who.scope))

    @router.get("/files/read", response_model=GetResult)
    def read(
        who: Who,
        path: Annotated[str, Query(min_length=1, max_length=1100)],
        from_line: Annotated[int | None, Query(ge=1, le=10_000_000)] = None,
        lines: Annotated[int | None, Query(ge=1, le=GET_MAX_LINES)] = None,
    ) -> GetResult:
        """Lines of one of the caller's memory files (a path, ``path:line`` or an anchor)."""
        return memory().get(path, scope=who.scope, from_line=from_line, lines=lines)

    # -- profile and knowledge graph ---------------------------------------------------

    @router.get("/profile", response_model=Profile)
    def profile(who: Who) -> Profile:
        """The caller's user profile."""
        return memory().profile(scope=who.scope)

    @router.get("/profile/history", response_model=list[ProfileChange])
    def profile_history(
        who: Who, field: Annotated[str | None, Query(min_length=1, max_length=200)] = None
    ) -> list[ProfileChange]:
        """Every change of the caller's profile (of one field), oldest first."""
        return memory().profile_history(scope=who.scope, field=field)

    @router.post("/profile/facts", response_model=ProfileUpdate)
    def upsert_facts(body: FactsRequest, who: Who, idem: Key) -> ProfileUpdate | Response:
        """Set typed profile fields (written at once: the caller is the application)."""
        return once(
            idem,
            who,
            lambda: memory().upsert_facts(body.facts, scope=who.scope, replace=body.replace),
        )

    @router.post("/profile/preferences", response_model=ProfileUpdate)
    def upsert_preferences(
        body: PreferencesRequest, who: Who, idem: Key
    ) -> ProfileUpdate | Response:
        """Set free preferences (``null`` removes one)."""
        return once(
            idem, who, lambda: memory().upsert_preferences(body.preferences, scope=who.scope)
        )

    @router.get("/triples", response_model=list[TripleOut])
    def triples(
        who: Who,
        entity: Annotated[str, Query(min_length=1, max_length=500)],
        hops: Annotated[int, Query(ge=1, le=2, description="1 or 2.")] = 1,
        as_of: datetime | None = None,
        include_closed: bool = False,
    ) -> list[TripleOut]:
        """The knowledge graph around one entity (``user`` / ``I``: the caller)."""
        found = memory().triples(
            entity, scope=who.scope, hops=hops, as_of=as_of, include_closed=include_closed
        )
        return [
            TripleOut(
                id=t.id, text=t.text, subject=t.subject, predicate=t.predicate,
                object=t.object, subject_key=t.subject_key, object_key=t.object_key,
                negated=t.negated, frequency=t.frequency, condition=t.condition,
                support=list(t.support), valid_to=t.valid_to,
            )
            for t in found
        ]  # fmt: skip

    # -- whole-scope operations --------------------------------------------------------

    @router.get("/export", response_model=list[MemoryEntry])
    def export(who: Who) -> list[dict[str, Any]]:
        """Every current memory of the caller."""
        return memory().export(scope=who.scope)

    @router.get("/stats", response_model=dict[str, Any])
    def stats(who: Who) -> dict[str, Any]:
        """Counts of the caller's memories (per category, pending, superseded …)."""
        return memory().stats(scope=who.scope)

    @router.post("/sync", response_model=dict[str, Any])
    def sync(who: Who, idem: Key) -> dict[str, Any] | Response:
        """Pick up hand edits of the caller's Markdown files."""
        return once(idem, who, lambda: dict(memory().sync(scope=who.scope).__dict__))

    @router.post("/maintain", response_model=dict[str, Any])
    def maintain(
        who: Who, idem: Key, body: MaintainRequest | None = None
    ) -> dict[str, Any] | Response:
        """One lifecycle run over the caller's memories (decay, reviews, expiry)."""
        now = body.now if body is not None else None
        return once(idem, who, lambda: memory().maintain(scope=who.scope, now=now).to_dict())

    # -- the session engine ------------------------------------------------------------

    def thread(who: Caller, thread_id: str) -> str:
        """The caller's own thread (as ``/agent`` keeps it)."""
        return f"{who.owner}/{thread_id}"

    @router.post("/sessions/context", response_model=ContextResponse)
    def query_context(body: ContextRequest, who: Who) -> ContextResponse:
        """What to send to the model for a conversation, and whether to checkpoint."""
        ctx = sessions().query_context(
            who.scope, thread(who, body.thread_id), system_tokens=body.system_tokens
        )
        return ContextResponse(
            thread_id=body.thread_id,
            history=_messages(ctx.history),
            full_history=_messages(ctx.full_history),
            mode=ctx.mode.value,
            estimated_tokens=ctx.estimated_tokens,
            ratio=ctx.ratio,
            should_checkpoint=ctx.should_checkpoint,
            summary=ctx.summary,
            budget_tokens=ctx.budget_tokens,
        )

    def _write_turn(body: TurnRequest, who: Caller) -> TurnResponse:
        """Store one turn (user message, tool calls and results, answer)."""
        done = sessions().write_turn(
            who.scope,
            thread(who, body.thread_id),
            HumanMessage(body.human),
            AIMessage(body.ai),
            tool_messages=_tool_messages(body.tool_messages),
            at=body.at,
        )
        return TurnResponse(
            thread_id=body.thread_id,
            mode=done.mode.value,
            updated_at=done.updated_at,
            stored=done.stored,
            first_seq=done.first_seq,
            last_seq=done.last_seq,
        )

    @router.post("/sessions/turns", response_model=TurnResponse)
    def write_turn(body: TurnRequest, who: Who, idem: Key) -> TurnResponse | Response:
        """Store one turn (user message, tool calls and results, answer)."""
        return once(idem, who, lambda: _write_turn(body, who))

    def _checkpoint(body: CheckpointRequest, who: Caller) -> CheckpointResponse:
        """Flush, then summarise the old part of the conversation (the caller's summary,
        when given, and its number of kept turns)."""
        done = sessions().checkpoint(
            who.scope,
            thread(who, body.thread_id),
            force=body.force,
            system_tokens=body.system_tokens,
            summary=body.summary,
            keep_last_turns=body.keep_last_turns,
        )
        return CheckpointResponse(
            thread_id=body.thread_id,
            made=done.made,
            reason=done.reason,
            summary=done.summary,
            compacted=done.compacted,
            cut_seq=done.cut_seq,
            episode_id=done.episode_id,
            flushed=list(done.flush.pending_ids) if done.flush else [],
            summary_used_fallback=done.summary_used_fallback,
            error=done.error,
        )

    @router.post("/sessions/checkpoint", response_model=CheckpointResponse)
    def checkpoint(body: CheckpointRequest, who: Who, idem: Key) -> CheckpointResponse | Response:
        """Flush, then summarise the old part of the conversation (the caller's summary,
        when given, and its number of kept turns)."""
        return once(idem, who, lambda: _checkpoint(body, who))

    def _finalize(body: FinalizeRequest, who: Caller) -> FinalizeResponse:
        """Summarise what is not yet in an episode into the conversation's episode."""
        done = sessions().finalize_session(
            who.scope, thread(who, body.thread_id), summary=body.summary
        )
        if done is None:
            return FinalizeResponse(thread_id=body.thread_id)
        return FinalizeResponse(
            thread_id=body.thread_id,
            summary=done.summary,
            episode_id=done.episode_id,
            compacted=done.compacted,
            used_fallback=done.used_fallback,
        )

    @router.post("/sessions/finalize", response_model=FinalizeResponse)
    def finalize(body: FinalizeRequest, who: Who, idem: Key) -> FinalizeResponse | Response:
        """Summarise what is not yet in an episode into the conversation's episode."""
        return once(idem, who, lambda: _finalize(body, who))

    return router


__all__ = ["PREFIX", "rest_router"]

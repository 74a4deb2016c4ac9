"""Clients of a running memory server (``langmem-ext serve``): the memory over HTTP.

:class:`MemoryClient` (sync) and :class:`AsyncMemoryClient` (async) call the server's
``/v1`` REST API (:mod:`langmem_ext.server.rest`) with the method names of
:class:`~langmem_ext.Memory` and return its result types, so code written for a
``Memory`` in the process runs against a shared server, where the embedder is
loaded once. The server decides the scope: the user's own (``user_id``), or a
shared scope it lists (``scope=``).

Errors the server names come back as their own class (an unknown id raises
:class:`~langmem_ext.core.errors.EntryNotFoundError`, an empty text
:class:`~langmem_ext.core.errors.EmptyTextError` …); the rest (not authenticated, not
allowed, no connection) as :class:`~langmem_ext.core.errors.ServiceError`.

A request whose connection fails (refused, reset, timed out) is sent again, up to
``max_retries`` times with a growing wait. Writes are sent with an
``Idempotency-Key`` header (:mod:`langmem_ext.server.idempotency`), the same on each
retry, so a write whose answer was lost runs once; pass ``idempotency_key=`` to a
write to choose the key (to send a request again across restarts of the caller).
"""

from __future__ import annotations

import asyncio
import builtins
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import httpx
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from langmem_ext.core import errors
from langmem_ext.core.errors import InvalidInputError, LangmemError, ServiceError
from langmem_ext.memory.types import GetResult, MemoryEntry, MemoryPage, PendingItem, SearchHit
from langmem_ext.server.callers import IDEMPOTENCY_HEADER, SCOPE_HEADER, USER_HEADER
from langmem_ext.server.schema import (
    CheckpointResponse,
    ContextResponse,
    FinalizeResponse,
    HistoryRow,
    SearchResponse,
    TripleOut,
    TurnResponse,
)

if TYPE_CHECKING:  # heavier modules, imported when an answer of theirs is read
    from langchain_core.messages import BaseMessage

    from langmem_ext.memory.knowledge.triples import Triple
    from langmem_ext.memory.lifecycle.maintenance import MaintenanceReport
    from langmem_ext.memory.profile import Profile, ProfileChange, ProfileUpdate
    from langmem_ext.workspace.store import SyncReport

T = TypeVar("T")
When = datetime | date | float | None
_PAGE = 1000
"""Memories fetched per request by :meth:`MemoryClient.list`."""


@dataclass(frozen=True)
class _Call(Generic[T]):
    """One request of the API and how its answer is read."""

    method: str
    path: str
    read: Callable[[Any], T]
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    write: bool = False
    """A write: sent with an ``Idempotency-Key``, the same one on each retry."""


def _list_of(model: type[T]) -> Callable[[Any], builtins.list[T]]:
    adapter = TypeAdapter(builtins.list[model])  # type: ignore[valid-type]
    return adapter.validate_python  # type: ignore[no-any-return]


def _params(**values: Any) -> dict[str, Any]:
    """Query parameters, without the ``None`` ones; times as ISO text."""
    return {k: to_jsonable_python(v) for k, v in values.items() if v is not None}


def _profile(data: Any) -> Profile:
    from langmem_ext.memory.profile import Profile

    return Profile.model_validate(data)


def _profile_update(data: Any) -> ProfileUpdate:
    from langmem_ext.memory.profile import ProfileUpdate

    return ProfileUpdate.model_validate(data)


def _profile_changes(data: Any) -> builtins.list[ProfileChange]:
    from langmem_ext.memory.profile import ProfileChange

    return _list_of(ProfileChange)(data)


def _sync_report(data: Any) -> SyncReport:
    from langmem_ext.workspace.store import SyncReport

    return SyncReport(**data)


def _maintenance_report(data: Any) -> MaintenanceReport:
    from langmem_ext.memory.lifecycle.maintenance import MaintenanceReport

    return MaintenanceReport.from_dict(data)


def _confirmed(data: Any) -> MemoryEntry | ProfileUpdate:
    return _profile_update(data) if "profile" in data else MemoryEntry(**data)


def _triples(data: Any) -> builtins.list[Triple]:
    from langmem_ext.memory.knowledge.triples import Triple

    found = _list_of(TripleOut)(data)
    return [
        Triple(
            t.id,
            "",
            t.subject,
            t.predicate,
            t.object,
            t.subject_key,
            t.object_key,
            t.negated,
            t.frequency,
            t.condition,
            tuple(t.support),
            t.valid_to,
        )
        for t in found
    ]


def _message(message: BaseMessage | Mapping[str, Any]) -> dict[str, Any]:
    """A tool-call or tool-result message as a role dict the server reads."""
    if isinstance(message, Mapping):
        return dict(message)
    from langchain_core.messages import ToolMessage

    if isinstance(message, ToolMessage):
        return {"role": "tool", "content": message.content, "tool_call_id": message.tool_call_id}
    out: dict[str, Any] = {"role": message.type, "content": message.content}
    calls = getattr(message, "tool_calls", None)
    if calls:
        out["tool_calls"] = [dict(c) for c in calls]
    return out


def _error(response: httpx.Response) -> LangmemError:
    """The typed error of a refused request (the server's class when it names one)."""
    try:
        data = response.json()
    except ValueError:
        data = {"detail": response.text[:500]}
    detail = data.get("detail") if isinstance(data, dict) else data
    if isinstance(detail, list):  # request validation: one line per problem
        lines = [
            f"{'.'.join(str(p) for p in d.get('loc', [])[1:]) or 'request'}: {d.get('msg')}"
            for d in detail
            if isinstance(d, dict)
        ]
        return InvalidInputError("; ".join(lines) or str(detail))
    name = data.get("error") if isinstance(data, dict) else None
    kind = getattr(errors, str(name), None) if name else None
    message = str(detail or f"HTTP {response.status_code}")
    if isinstance(kind, type) and issubclass(kind, LangmemError) and kind is not ServiceError:
        return kind(message)
    return ServiceError(
        f"The memory server answered {response.status_code}: {message}", response.status_code
    )


class _Requests:
    """The API's requests, shared by the sync and the async client."""

    @staticmethod
    def add(
        text: str,
        category: str,
        target: str,
        importance: float | None,
        created_at: When,
        slot: str | None,
    ) -> _Call[str]:
        body = {
            "text": text,
            "category": category,
            "target": target,
            "importance": importance,
            "created_at": created_at,
            "slot": slot,
        }
        return _Call("POST", "/memories", lambda d: str(d["id"]), body=body, write=True)

    @staticmethod
    def save(
        text: str, target: str, category: str, importance: float | None, supersedes: str | None
    ) -> _Call[PendingItem]:
        body = {
            "text": text,
            "target": target,
            "category": category,
            "importance": importance,
            "supersedes": supersedes,
        }
        return _Call("POST", "/pending", PendingItem.model_validate, body=body, write=True)

    @staticmethod
    def confirm(pending_id: str) -> _Call[MemoryEntry | ProfileUpdate]:
        return _Call(
            "POST", f"/pending/{_segment(pending_id)}/confirm", _confirmed, body={}, write=True
        )

    @staticmethod
    def reject(pending_id: str) -> _Call[PendingItem]:
        path = f"/pending/{_segment(pending_id)}/reject"
        return _Call("POST", path, PendingItem.model_validate, body={}, write=True)

    @staticmethod
    def list_pending() -> _Call[builtins.list[PendingItem]]:
        return _Call("GET", "/pending", _list_of(PendingItem))

    @staticmethod
    def update(entry_id: str, text: str, supersede: bool) -> _Call[MemoryEntry]:
        body = {"text": text, "supersede": supersede}
        return _Call(
            "PATCH",
            f"/memories/{_segment(entry_id)}",
            MemoryEntry.model_validate,
            body=body,
            write=True,
        )

    @staticmethod
    def delete(entry_id: str) -> _Call[None]:
        return _Call(
            "DELETE", f"/memories/{_segment(entry_id)}", lambda d: None, body={}, write=True
        )

    @staticmethod
    def history(entry_id: str) -> _Call[builtins.list[dict[str, Any]]]:
        rows = _list_of(HistoryRow)
        path = f"/memories/{_segment(entry_id)}/history"
        return _Call("GET", path, lambda d: [r.model_dump() for r in rows(d)])

    @staticmethod
    def get_entry(entry_id: str) -> _Call[MemoryEntry]:
        if "#^" in entry_id:
            params = {"anchor": entry_id}
            return _Call("GET", "/memories/by-anchor", MemoryEntry.model_validate, params=params)
        return _Call("GET", f"/memories/{_segment(entry_id)}", MemoryEntry.model_validate)

    @staticmethod
    def list_page(
        category: str | None,
        text: str | None,
        sort: str,
        descending: bool,
        offset: int,
        limit: int,
        include_superseded: bool,
    ) -> _Call[MemoryPage]:
        params = _params(
            category=category,
            text=text,
            sort=sort,
            descending=descending,
            offset=offset,
            limit=limit,
            include_superseded=include_superseded,
        )
        return _Call("GET", "/memories", MemoryPage.model_validate, params=params)

    @staticmethod
    def search(
        query: str,
        k: int | None,
        mode: str | None,
        category: str | None,
        as_of: When,
        include_superseded: bool,
        explain: bool,
    ) -> _Call[builtins.list[SearchHit]]:
        body = {
            "query": query,
            "k": k,
            "mode": mode,
            "category": category,
            "as_of": as_of,
            "include_superseded": include_superseded,
            "explain": explain,
        }
        return _Call("POST", "/search", lambda d: SearchResponse.model_validate(d).hits, body=body)

    @staticmethod
    def get(path: str, from_line: int | None, lines: int | None) -> _Call[GetResult]:
        params = _params(path=path, from_line=from_line, lines=lines)
        return _Call("GET", "/files/read", GetResult.model_validate, params=params)

    @staticmethod
    def files() -> _Call[builtins.list[str]]:
        return _Call("GET", "/files", lambda d: [str(p) for p in d["files"]])

    @staticmethod
    def profile() -> _Call[Profile]:
        return _Call("GET", "/profile", _profile)

    @staticmethod
    def profile_history(field_name: str | None) -> _Call[builtins.list[ProfileChange]]:
        params = _params(field=field_name)
        return _Call("GET", "/profile/history", _profile_changes, params=params)

    @staticmethod
    def upsert_facts(facts: Mapping[str, Any], replace: bool) -> _Call[ProfileUpdate]:
        body = {"facts": dict(facts), "replace": replace}
        return _Call("POST", "/profile/facts", _profile_update, body=body, write=True)

    @staticmethod
    def upsert_preferences(preferences: Mapping[str, str | None]) -> _Call[ProfileUpdate]:
        body = {"preferences": dict(preferences)}
        return _Call("POST", "/profile/preferences", _profile_update, body=body, write=True)

    @staticmethod
    def triples(
        entity: str, hops: int, as_of: When, include_closed: bool
    ) -> _Call[builtins.list[Triple]]:
        params = _params(entity=entity, hops=hops, as_of=as_of, include_closed=include_closed)
        return _Call("GET", "/triples", _triples, params=params)

    @staticmethod
    def export() -> _Call[builtins.list[dict[str, Any]]]:
        return _Call("GET", "/export", lambda d: [dict(e) for e in d])

    @staticmethod
    def stats() -> _Call[dict[str, Any]]:
        return _Call("GET", "/stats", dict)

    @staticmethod
    def sync() -> _Call[SyncReport]:
        return _Call("POST", "/sync", _sync_report, body={}, write=True)

    @staticmethod
    def maintain(now: When) -> _Call[MaintenanceReport]:
        return _Call("POST", "/maintain", _maintenance_report, body={"now": now}, write=True)

    @staticmethod
    def query_context(thread_id: str, system_tokens: int) -> _Call[ContextResponse]:
        body = {"thread_id": thread_id, "system_tokens": system_tokens}
        return _Call("POST", "/sessions/context", ContextResponse.model_validate, body=body)

    @staticmethod
    def write_turn(
        thread_id: str,
        human: str,
        ai: str,
        tool_messages: Sequence[BaseMessage | Mapping[str, Any]],
        at: When,
    ) -> _Call[TurnResponse]:
        body = {
            "thread_id": thread_id,
            "human": human,
            "ai": ai,
            "at": at,
            "tool_messages": [_message(m) for m in tool_messages],
        }
        return _Call("POST", "/sessions/turns", TurnResponse.model_validate, body=body, write=True)

    @staticmethod
    def checkpoint(
        thread_id: str,
        summary: str | None,
        keep_last_turns: int | None,
        force: bool,
        system_tokens: int,
    ) -> _Call[CheckpointResponse]:
        body = {
            "thread_id": thread_id,
            "summary": summary,
            "keep_last_turns": keep_last_turns,
            "force": force,
            "system_tokens": system_tokens,
        }
        return _Call(
            "POST", "/sessions/checkpoint", CheckpointResponse.model_validate, body=body, write=True
        )

    @staticmethod
    def finalize_session(thread_id: str, summary: str | None) -> _Call[FinalizeResponse]:
        body = {"thread_id": thread_id, "summary": summary}
        return _Call(
            "POST", "/sessions/finalize", FinalizeResponse.model_validate, body=body, write=True
        )


def _segment(value: str) -> str:
    """An id as one path segment (``/`` and the like cannot reach another route)."""
    text = str(value).strip()
    if not text or any(c in text for c in "/?#\\") or text in (".", ".."):
        raise InvalidInputError(f"Invalid id {value!r}: pass an id the server returned.")
    return text


class _Base:
    """What both clients hold: the server's URL, who calls, how requests are sent."""

    def __init__(
        self,
        url: str,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        headers: Mapping[str, str] | None = None,
        max_retries: int = 3,
        retry_backoff: float = 0.5,
    ) -> None:
        if max_retries < 0 or retry_backoff < 0:
            raise InvalidInputError(
                f"max_retries and retry_backoff are not negative, got {max_retries!r} and "
                f"{retry_backoff!r}"
            )
        self.url = url.rstrip("/")
        self.user_id = user_id
        self.scope = scope
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self._headers = {"content-type": "application/json", **(headers or {})}
        if user_id is not None:
            self._headers[USER_HEADER] = str(user_id)

    def _request(
        self, call: _Call[Any], scope: str | None, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """The request of ``call``; a write carries ``idempotency_key`` (default: a new
        random key), sent unchanged on every retry."""
        headers = dict(self._headers)
        wanted = scope if scope is not None else self.scope
        if wanted is not None:
            headers[SCOPE_HEADER] = wanted
        if call.write:
            headers[IDEMPOTENCY_HEADER] = idempotency_key or uuid.uuid4().hex
        body = (
            None
            if call.body is None
            else to_jsonable_python(
                {k: v for k, v in call.body.items() if v is not None}
                if isinstance(call.body, dict)
                else call.body
            )
        )
        return {
            "method": call.method,
            "url": f"{self.url}/v1{call.path}",
            "params": call.params,
            "json": body,
            "headers": headers,
        }

    def _retry_delay(self, attempt: int, error: httpx.HTTPError) -> float | None:
        """Seconds to wait before sending again after ``error`` on try ``attempt``
        (0, 1 …), or ``None`` to give up: only a failure of the connection is retried
        (refused, reset, timed out), at most ``max_retries`` times, waiting
        ``retry_backoff`` seconds, then twice as long each time."""
        if not isinstance(error, httpx.TransportError) or attempt >= self.max_retries:
            return None
        return float(self.retry_backoff * 2**attempt)

    def _read(self, call: _Call[T], response: httpx.Response) -> T:
        if response.status_code >= 400:
            raise _error(response)
        return call.read(response.json())

    def _unreachable(self, error: httpx.HTTPError) -> ServiceError:
        return ServiceError(
            f"Cannot reach the memory server at {self.url} ({type(error).__name__}: {error}). "
            "Start it with `langmem-ext serve`, or check the URL.",
            0,
        )


class MemoryClient(_Base):
    """The memory of a running server, with the methods of :class:`~langmem_ext.Memory`.

    Setup:
        .. code-block:: bash

            pip install 'langmem-ext[serve]'
            langmem-ext serve            # in another terminal: http://127.0.0.1:8000

    Instantiate:
        .. code-block:: python

            from langmem_ext.client import MemoryClient

            client = MemoryClient("http://127.0.0.1:8000", user_id="alice")

    Invoke:
        .. code-block:: python

            pending = client.save("Alice is allergic to peanuts")
            client.confirm(pending.id)
            client.search("allergies")[0].text   # 'Alice is allergic to peanuts'

    Async:
        :class:`AsyncMemoryClient` has the same methods as coroutines.

    Args:
        url: The server's base URL.
        user_id: Who calls (the ``X-User-Id`` header; a server with
            ``authenticate=`` checks it against its own answer).
        scope: A shared scope the server lists (default: the user's own scope).
        headers: More headers for every request (e.g. ``Authorization``).
        timeout: Seconds per request.
        transport: An httpx transport (tests: ``httpx.ASGITransport``).
        max_retries: How many times a request whose connection failed (refused,
            reset, timed out) is sent again (default 3; ``0``: never), after
            ``retry_backoff`` seconds, then twice as long each time. A write is sent
            with an ``Idempotency-Key`` (a new random one per call, or the
            ``idempotency_key=`` passed to it), the same on every retry, so the
            server runs it once even when a lost answer hid that it ran.
        retry_backoff: Seconds before the first retry (default 0.5).
    """

    def __init__(
        self,
        url: str,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 120.0,
        transport: httpx.BaseTransport | None = None,
        max_retries: int = 3,
        retry_backoff: float = 0.5,
    ) -> None:
        super().__init__(
            url,
            user_id=user_id,
            scope=scope,
            headers=headers,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
        )
        self._http = httpx.Client(timeout=timeout, transport=transport)

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(
        self, call: _Call[T], scope: str | None = None, idempotency_key: str | None = None
    ) -> T:
        request = self._request(call, scope, idempotency_key)
        attempt = 0
        while True:
            try:
                response = self._http.request(**request)
            except httpx.HTTPError as e:
                delay = self._retry_delay(attempt, e)
                if delay is None:
                    raise self._unreachable(e) from e
                time.sleep(delay)
                attempt += 1
                continue
            return self._read(call, response)

    def add(
        self,
        text: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        category: str = "fact",
        target: str = "long_term",
        importance: float | None = None,
        created_at: When = None,
        slot: str | None = None,
    ) -> str:
        """Write a memory directly (see :meth:`Memory.add <langmem_ext.Memory.add>`); its id."""
        return self._run(
            _Requests.add(text, category, target, importance, created_at, slot),
            scope,
            idempotency_key,
        )

    def save(
        self,
        text: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        target: str = "long_term",
        category: str = "fact",
        importance: float | None = None,
        supersedes: str | None = None,
    ) -> PendingItem:
        """Propose a memory; it is stored once confirmed."""
        return self._run(
            _Requests.save(text, target, category, importance, supersedes), scope, idempotency_key
        )

    def confirm(
        self, pending_id: str, *, scope: str | None = None, idempotency_key: str | None = None
    ) -> MemoryEntry | ProfileUpdate:
        """Store a pending memory."""
        return self._run(_Requests.confirm(pending_id), scope, idempotency_key)

    def reject(
        self, pending_id: str, *, scope: str | None = None, idempotency_key: str | None = None
    ) -> PendingItem:
        """Discard a pending memory."""
        return self._run(_Requests.reject(pending_id), scope, idempotency_key)

    def list_pending(self, *, scope: str | None = None) -> builtins.list[PendingItem]:
        """The pending saves, oldest first."""
        return self._run(_Requests.list_pending(), scope)

    def update(
        self,
        entry_id: str,
        text: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        supersede: bool = True,
    ) -> MemoryEntry:
        """A new version of a memory (``supersede=False``: edit in place)."""
        return self._run(_Requests.update(entry_id, text, supersede), scope, idempotency_key)

    def delete(
        self, entry_id: str, *, scope: str | None = None, idempotency_key: str | None = None
    ) -> None:
        """Forget a memory."""
        self._run(_Requests.delete(entry_id), scope, idempotency_key)

    def history(self, entry_id: str, *, scope: str | None = None) -> builtins.list[dict[str, Any]]:
        """Every version of a memory's chain, oldest first."""
        return self._run(_Requests.history(entry_id), scope)

    def get_entry(self, entry_id: str, *, scope: str | None = None) -> MemoryEntry:
        """One memory by id or anchor (``path#^m-…``)."""
        return self._run(_Requests.get_entry(entry_id), scope)

    def list(
        self,
        *,
        scope: str | None = None,
        category: str | None = None,
        include_superseded: bool = False,
    ) -> builtins.list[MemoryEntry]:
        """Every memory (optionally of one category), in file order."""
        out: builtins.list[MemoryEntry] = []
        while True:
            page = self.list_page(
                scope=scope,
                category=category,
                offset=len(out),
                limit=_PAGE,
                include_superseded=include_superseded,
            )
            out += page.entries
            if not page.entries or len(out) >= page.total:
                return out

    def list_page(
        self,
        *,
        scope: str | None = None,
        category: str | None = None,
        text: str | None = None,
        sort: str = "file",
        descending: bool = False,
        offset: int = 0,
        limit: int = 50,
        include_superseded: bool = False,
    ) -> MemoryPage:
        """One page of memories, filtered and sorted."""
        call = _Requests.list_page(
            category, text, sort, descending, offset, limit, include_superseded
        )
        return self._run(call, scope)

    def search(
        self,
        query: str,
        *,
        scope: str | None = None,
        k: int | None = None,
        mode: str | None = None,
        category: str | None = None,
        as_of: When = None,
        include_superseded: bool = False,
        explain: bool = True,
    ) -> builtins.list[SearchHit]:
        """Search; each hit's ``debug`` has its score stages unless ``explain=False``."""
        call = _Requests.search(query, k, mode, category, as_of, include_superseded, explain)
        return self._run(call, scope)

    def get(
        self,
        path: str,
        *,
        scope: str | None = None,
        from_line: int | None = None,
        lines: int | None = None,
    ) -> GetResult:
        """Lines of a memory file (a path, ``path:line`` or an anchor)."""
        return self._run(_Requests.get(path, from_line, lines), scope)

    def files(self, *, scope: str | None = None) -> builtins.list[str]:
        """The memory files."""
        return self._run(_Requests.files(), scope)

    def profile(self, *, scope: str | None = None) -> Profile:
        """The user profile."""
        return self._run(_Requests.profile(), scope)

    def profile_history(
        self, *, scope: str | None = None, field: str | None = None
    ) -> builtins.list[ProfileChange]:
        """Every change of the profile (of one field), oldest first."""
        return self._run(_Requests.profile_history(field), scope)

    def upsert_facts(
        self,
        facts: Mapping[str, Any],
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        replace: bool = False,
    ) -> ProfileUpdate:
        """Set typed profile fields (written at once)."""
        return self._run(_Requests.upsert_facts(facts, replace), scope, idempotency_key)

    def upsert_preferences(
        self,
        preferences: Mapping[str, str | None],
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
    ) -> ProfileUpdate:
        """Set free preferences (``None`` removes one)."""
        return self._run(_Requests.upsert_preferences(preferences), scope, idempotency_key)

    def triples(
        self,
        entity: str,
        *,
        scope: str | None = None,
        hops: int = 1,
        as_of: When = None,
        include_closed: bool = False,
    ) -> builtins.list[Triple]:
        """The knowledge graph around one entity (``Triple.scope`` is left empty)."""
        return self._run(_Requests.triples(entity, hops, as_of, include_closed), scope)

    def export(self, *, scope: str | None = None) -> builtins.list[dict[str, Any]]:
        """Every current memory as JSON-ready dicts."""
        return self._run(_Requests.export(), scope)

    def stats(self, *, scope: str | None = None) -> dict[str, Any]:
        """Counts of the memories (per category, pending, superseded …)."""
        return self._run(_Requests.stats(), scope)

    def sync(
        self,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> SyncReport:
        """Pick up hand edits of the Markdown files (the server syncs; ``progress``
        hears once, when it is done)."""
        report = self._run(_Requests.sync(), scope, idempotency_key)
        if progress is not None:
            progress(report.files_scanned, report.files_scanned)
        return report

    def maintain(
        self,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        now: When = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> MaintenanceReport:
        """One lifecycle run (the server's deterministic reviews; ``progress`` hears
        once, when it is done)."""
        report = self._run(_Requests.maintain(now), scope, idempotency_key)
        if progress is not None:
            progress(1, 1)
        return report

    def query_context(
        self, thread_id: str, *, scope: str | None = None, system_tokens: int = 0
    ) -> ContextResponse:
        """What to send to the model for a conversation (``QueryMemoryContext``)."""
        return self._run(_Requests.query_context(thread_id, system_tokens), scope)

    def write_turn(
        self,
        thread_id: str,
        human: str,
        ai: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        tool_messages: Sequence[BaseMessage | Mapping[str, Any]] = (),
        at: When = None,
    ) -> TurnResponse:
        """Store one turn (``WriteTurn``)."""
        return self._run(
            _Requests.write_turn(thread_id, human, ai, tool_messages, at), scope, idempotency_key
        )

    def checkpoint(
        self,
        thread_id: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        summary: str | None = None,
        keep_last_turns: int | None = None,
        force: bool = False,
        system_tokens: int = 0,
    ) -> CheckpointResponse:
        """Flush, then summarise the old part (``CheckpointShortMemory``; ``summary``:
        the caller's own)."""
        call = _Requests.checkpoint(thread_id, summary, keep_last_turns, force, system_tokens)
        return self._run(call, scope, idempotency_key)

    def finalize_session(
        self,
        thread_id: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        summary: str | None = None,
    ) -> FinalizeResponse:
        """Summarise the conversation into its episode (``FinalizeSessionMemory``)."""
        return self._run(_Requests.finalize_session(thread_id, summary), scope, idempotency_key)


class AsyncMemoryClient(_Base):
    """:class:`MemoryClient` with coroutines (``await client.search("tea")``).

    Example:
        .. code-block:: python

            from langmem_ext.client import AsyncMemoryClient

            async with AsyncMemoryClient("http://127.0.0.1:8000", user_id="alice") as client:
                pending = await client.save("Alice likes oolong tea")
                await client.confirm(pending.id)
                hits = await client.search("tea")

    Args:
        url: The server's base URL.
        user_id: Who calls (``X-User-Id``).
        scope: A shared scope the server lists (default: the user's own).
        headers: More headers for every request.
        timeout: Seconds per request.
        transport: An httpx async transport (tests: ``httpx.ASGITransport``).
        max_retries: See :class:`MemoryClient`.
        retry_backoff: See :class:`MemoryClient`.
    """

    def __init__(
        self,
        url: str,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
        max_retries: int = 3,
        retry_backoff: float = 0.5,
    ) -> None:
        super().__init__(
            url,
            user_id=user_id,
            scope=scope,
            headers=headers,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
        )
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(
        self, call: _Call[T], scope: str | None = None, idempotency_key: str | None = None
    ) -> T:
        request = self._request(call, scope, idempotency_key)
        attempt = 0
        while True:
            try:
                response = await self._http.request(**request)
            except httpx.HTTPError as e:
                delay = self._retry_delay(attempt, e)
                if delay is None:
                    raise self._unreachable(e) from e
                await asyncio.sleep(delay)
                attempt += 1
                continue
            return self._read(call, response)

    async def add(
        self,
        text: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        category: str = "fact",
        target: str = "long_term",
        importance: float | None = None,
        created_at: When = None,
        slot: str | None = None,
    ) -> str:
        """See :meth:`MemoryClient.add`."""
        call = _Requests.add(text, category, target, importance, created_at, slot)
        return await self._run(call, scope, idempotency_key)

    async def save(
        self,
        text: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        target: str = "long_term",
        category: str = "fact",
        importance: float | None = None,
        supersedes: str | None = None,
    ) -> PendingItem:
        """See :meth:`MemoryClient.save`."""
        return await self._run(
            _Requests.save(text, target, category, importance, supersedes), scope, idempotency_key
        )

    async def confirm(
        self, pending_id: str, *, scope: str | None = None, idempotency_key: str | None = None
    ) -> MemoryEntry | ProfileUpdate:
        """See :meth:`MemoryClient.confirm`."""
        return await self._run(_Requests.confirm(pending_id), scope, idempotency_key)

    async def reject(
        self, pending_id: str, *, scope: str | None = None, idempotency_key: str | None = None
    ) -> PendingItem:
        """See :meth:`MemoryClient.reject`."""
        return await self._run(_Requests.reject(pending_id), scope, idempotency_key)

    async def list_pending(self, *, scope: str | None = None) -> builtins.list[PendingItem]:
        """See :meth:`MemoryClient.list_pending`."""
        return await self._run(_Requests.list_pending(), scope)

    async def update(
        self,
        entry_id: str,
        text: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        supersede: bool = True,
    ) -> MemoryEntry:
        """See :meth:`MemoryClient.update`."""
        return await self._run(_Requests.update(entry_id, text, supersede), scope, idempotency_key)

    async def delete(
        self, entry_id: str, *, scope: str | None = None, idempotency_key: str | None = None
    ) -> None:
        """See :meth:`MemoryClient.delete`."""
        await self._run(_Requests.delete(entry_id), scope, idempotency_key)

    async def history(
        self, entry_id: str, *, scope: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        """See :meth:`MemoryClient.history`."""
        return await self._run(_Requests.history(entry_id), scope)

    async def get_entry(self, entry_id: str, *, scope: str | None = None) -> MemoryEntry:
        """See :meth:`MemoryClient.get_entry`."""
        return await self._run(_Requests.get_entry(entry_id), scope)

    async def list(
        self,
        *,
        scope: str | None = None,
        category: str | None = None,
        include_superseded: bool = False,
    ) -> builtins.list[MemoryEntry]:
        """See :meth:`MemoryClient.list`."""
        out: builtins.list[MemoryEntry] = []
        while True:
            page = await self.list_page(
                scope=scope,
                category=category,
                offset=len(out),
                limit=_PAGE,
                include_superseded=include_superseded,
            )
            out += page.entries
            if not page.entries or len(out) >= page.total:
                return out

    async def list_page(
        self,
        *,
        scope: str | None = None,
        category: str | None = None,
        text: str | None = None,
        sort: str = "file",
        descending: bool = False,
        offset: int = 0,
        limit: int = 50,
        include_superseded: bool = False,
    ) -> MemoryPage:
        """See :meth:`MemoryClient.list_page`."""
        call = _Requests.list_page(
            category, text, sort, descending, offset, limit, include_superseded
        )
        return await self._run(call, scope)

    async def search(
        self,
        query: str,
        *,
        scope: str | None = None,
        k: int | None = None,
        mode: str | None = None,
        category: str | None = None,
        as_of: When = None,
        include_superseded: bool = False,
        explain: bool = True,
    ) -> builtins.list[SearchHit]:
        """See :meth:`MemoryClient.search`."""
        call = _Requests.search(query, k, mode, category, as_of, include_superseded, explain)
        return await self._run(call, scope)

    async def get(
        self,
        path: str,
        *,
        scope: str | None = None,
        from_line: int | None = None,
        lines: int | None = None,
    ) -> GetResult:
        """See :meth:`MemoryClient.get`."""
        return await self._run(_Requests.get(path, from_line, lines), scope)

    async def files(self, *, scope: str | None = None) -> builtins.list[str]:
        """See :meth:`MemoryClient.files`."""
        return await self._run(_Requests.files(), scope)

    async def profile(self, *, scope: str | None = None) -> Profile:
        """See :meth:`MemoryClient.profile`."""
        return await self._run(_Requests.profile(), scope)

    async def profile_history(
        self, *, scope: str | None = None, field: str | None = None
    ) -> builtins.list[ProfileChange]:
        """See :meth:`MemoryClient.profile_history`."""
        return await self._run(_Requests.profile_history(field), scope)

    async def upsert_facts(
        self,
        facts: Mapping[str, Any],
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        replace: bool = False,
    ) -> ProfileUpdate:
        """See :meth:`MemoryClient.upsert_facts`."""
        return await self._run(_Requests.upsert_facts(facts, replace), scope, idempotency_key)

    async def upsert_preferences(
        self,
        preferences: Mapping[str, str | None],
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
    ) -> ProfileUpdate:
        """See :meth:`MemoryClient.upsert_preferences`."""
        return await self._run(_Requests.upsert_preferences(preferences), scope, idempotency_key)

    async def triples(
        self,
        entity: str,
        *,
        scope: str | None = None,
        hops: int = 1,
        as_of: When = None,
        include_closed: bool = False,
    ) -> builtins.list[Triple]:
        """See :meth:`MemoryClient.triples`."""
        return await self._run(_Requests.triples(entity, hops, as_of, include_closed), scope)

    async def export(self, *, scope: str | None = None) -> builtins.list[dict[str, Any]]:
        """See :meth:`MemoryClient.export`."""
        return await self._run(_Requests.export(), scope)

    async def stats(self, *, scope: str | None = None) -> dict[str, Any]:
        """See :meth:`MemoryClient.stats`."""
        return await self._run(_Requests.stats(), scope)

    async def sync(
        self, *, scope: str | None = None, idempotency_key: str | None = None
    ) -> SyncReport:
        """See :meth:`MemoryClient.sync`."""
        return await self._run(_Requests.sync(), scope, idempotency_key)

    async def maintain(
        self, *, scope: str | None = None, idempotency_key: str | None = None, now: When = None
    ) -> MaintenanceReport:
        """See :meth:`MemoryClient.maintain`."""
        return await self._run(_Requests.maintain(now), scope, idempotency_key)

    async def query_context(
        self, thread_id: str, *, scope: str | None = None, system_tokens: int = 0
    ) -> ContextResponse:
        """See :meth:`MemoryClient.query_context`."""
        return await self._run(_Requests.query_context(thread_id, system_tokens), scope)

    async def write_turn(
        self,
        thread_id: str,
        human: str,
        ai: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        tool_messages: Sequence[BaseMessage | Mapping[str, Any]] = (),
        at: When = None,
    ) -> TurnResponse:
        """See :meth:`MemoryClient.write_turn`."""
        call = _Requests.write_turn(thread_id, human, ai, tool_messages, at)
        return await self._run(call, scope, idempotency_key)

    async def checkpoint(
        self,
        thread_id: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        summary: str | None = None,
        keep_last_turns: int | None = None,
        force: bool = False,
        system_tokens: int = 0,
    ) -> CheckpointResponse:
        """See :meth:`MemoryClient.checkpoint`."""
        call = _Requests.checkpoint(thread_id, summary, keep_last_turns, force, system_tokens)
        return await self._run(call, scope, idempotency_key)

    async def finalize_session(
        self,
        thread_id: str,
        *,
        scope: str | None = None,
        idempotency_key: str | None = None,
        summary: str | None = None,
    ) -> FinalizeResponse:
        """See :meth:`MemoryClient.finalize_session`."""
        return await self._run(
            _Requests.finalize_session(thread_id, summary), scope, idempotency_key
        )


__all__ = ["AsyncMemoryClient", "MemoryClient"]

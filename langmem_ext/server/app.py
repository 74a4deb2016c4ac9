"""A LangServe app: the memory graph at ``/agent``, the retriever at ``/memory``.

:func:`create_app` returns a FastAPI app with

* ``/agent/invoke`` (``/batch``, ``/stream``, ``/stream_events``, ``/playground``, ...)
  — the memory agent graph of :func:`~langmem_ext.graph.build_memory_graph`.
  Input ``{"messages": [{"type": "human", "content": "..."}]}``: send only the new
  message; the server keeps the thread in its checkpointer.
* ``/memory/invoke`` (...) — :class:`~langmem_ext.retrievers.MemoryRetriever`;
  input is the query string, output a list of documents.
* ``/healthz`` — ``200 {"status": "ok", ...}`` once the app has started.
* ``/v1/...`` — the REST API over the memory (:mod:`langmem_ext.server.rest`): memories,
  pending saves, search, files, profile, knowledge graph, session engine.
* ``/mcp`` — the MCP server, streamable HTTP (:mod:`langmem_ext.server.mcp_server`).
* ``/admin`` — the admin web UI (:mod:`langmem_ext.server.admin`): memories, pending
  queue, search with score stages, profile, statistics, export, maintenance.

Both routes take ``config.configurable`` with ``thread_id`` (``/agent`` only,
required), ``user_id`` and ``scope``.

What the server trusts:

* **Who the caller is.** With ``authenticate=`` (a function of the request, e.g.
  one that checks a bearer token or reads the header an authenticating proxy sets)
  its result is the user id, and a request it returns ``None`` for gets ``401``; a
  client-sent ``user_id`` that differs gets ``403``. Without it the server trusts
  the client's ``configurable.user_id`` as given — fine on 127.0.0.1 (the default
  bind) or behind a gateway that checks it, not on an open port.
* **Which scope a request touches** is decided here, never by the client: the
  caller's own scope (``scope_for_user(user_id)``, e.g. ``user_alice``). A
  client-sent ``scope`` is accepted only when it is that same scope or one of the
  ``shared_scopes`` the server lists; anything else gets ``403``. A request with
  no user is refused (``401``) unless the server sets ``default_scope``.
* **Threads are per user.** The checkpointer stores thread ``t1`` of scope
  ``user_alice`` as ``user_alice/t1``, so one user cannot read or continue
  another's thread by guessing its id.
* Every other ``configurable`` key (``checkpoint_id``, ``checkpoint_ns``, ...) and
  every state field besides ``messages`` is dropped.

**One request per thread at a time.** Requests on one thread (one user's ``t1``)
are answered one after the other, in arrival order, each on top of the previous
one's turn; requests on other threads go on in parallel. Processes serving one
workspace (several workers, a ``langmem-ext chat`` next to the server) commit a
turn only on top of the checkpoint it started from, and answer it again on the new
state when another process came first (:mod:`langmem_ext.graph.runs` says exactly
what is guaranteed). Every turn is in the thread's history exactly once. When
other writers keep changing the thread through every attempt, ``/agent`` answers
``409`` and nothing of the request was committed: send it again.

When the chat model cannot be reached (e.g. Ollama is not running), ``/agent``
answers ``503`` with a JSON ``detail`` naming the fix (start the model, set
``LANGMEM_CHAT_MODEL``, or serve the offline scripted model with
``langmem-ext serve --scripted``); ``/memory`` needs no model.

Checkpointer: the async one the memory's storage engines supply
(:func:`~langmem_ext.memory.sessions.threads.open_async_saver`; embedded: ``AsyncSqliteSaver``
on ``checkpoints.db`` in the workspace, the file the sync graph uses), opened in the
app's lifespan; ``InMemorySaver`` when ``aiosqlite`` is missing (logged). The app must run with its lifespan
(uvicorn does; in tests use ``with TestClient(app):``); until then ``/agent``
answers ``503``.

:func:`serve` runs the app with uvicorn (127.0.0.1 by default);
:func:`serve_in_thread` runs it in a background thread for tests, notebooks and
examples. Importing this module loads neither FastAPI, LangServe, uvicorn nor a model.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import ConfigurableFieldSpec, RunnableBinding
from langchain_core.runnables.utils import get_unique_config_specs
from langgraph.checkpoint.base import BaseCheckpointSaver
from pydantic import BaseModel, Field, ValidationError, field_validator

from langmem_ext.core.config import Settings
from langmem_ext.core.errors import LangmemError, ThreadConflictError
from langmem_ext.memory._utils import check_unicode
from langmem_ext.memory.lifecycle.jobs import DailyJobs
from langmem_ext.memory.scoping import check_scope
from langmem_ext.memory.service import Memory
from langmem_ext.memory.sessions.threads import open_async_saver
from langmem_ext.server.callers import (
    Authenticate,
    Caller,
    CallerRefused,
    ServingState,
    request_caller,
    resolve_caller,
)
from langmem_ext.server.guard import RequestGuard
from langmem_ext.workspace.sqlite.checkpoints import SqliteCheckpoints

if TYPE_CHECKING:
    from fastapi import FastAPI, Request

logger = logging.getLogger(__name__)

_INSTALL_HINT = (
    "Serving needs the `serve` extra: pip install 'langmem-ext[serve]' "
    "(langserve, fastapi, uvicorn, sse-starlette)."
)
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _configurable(
    field_id: str, annotation: Any, name: str, description: str
) -> ConfigurableFieldSpec:
    """A ``config["configurable"]`` field the server reads; every one is optional."""
    return ConfigurableFieldSpec(
        id=field_id, annotation=annotation, name=name, description=description, default=None
    )


_THREAD_SPEC = _configurable(
    "thread_id",
    str | None,
    "Thread id",
    "The conversation; the server keeps its history. Required.",
)
_USER_SPEC = _configurable(
    "user_id",
    str | int | None,
    "User id",
    "The caller's user id (checked against the server's authentication, if any).",
)
_SCOPE_SPEC = _configurable(
    "scope",
    str | None,
    "Scope",
    "A memory scope; only the caller's own scope or a shared scope the server allows.",
)


class AgentInput(BaseModel):
    """Input of ``/agent``: the new message(s) of the user.

    Each message is a human message: ``{"type": "human", "content": "..."}``, a
    ``["human" | "user", "..."]`` pair (what ``RemoteRunnable`` sends for tuples), or
    a plain string. Other message types are refused: the server keeps the thread.
    """

    messages: list[HumanMessage] = Field(
        ...,
        min_length=1,
        description="The new user message(s); the server keeps earlier turns of the thread.",
        json_schema_extra={"widget": {"type": "chat", "input": "messages"}},
    )

    @field_validator("messages", mode="before")
    @classmethod
    def _human_shorthands(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        out: list[Any] = []
        for m in value:
            if isinstance(m, str):
                m = {"type": "human", "content": m}
            elif isinstance(m, list | tuple) and len(m) == 2 and m[0] in ("human", "user"):
                m = {"type": "human", "content": m[1]}
            out.append(m)
        return out

    max_chars: ClassVar[int] = 32_000
    """Longest text of all messages together (the app's ``server.max_message_chars``)."""

    @field_validator("messages")
    @classmethod
    def _within_limits(cls, value: list[HumanMessage]) -> list[HumanMessage]:
        texts = [_message_text(m) for m in value]
        _served_text("".join(texts), "message", cls.max_chars, "send what the user said")
        # Only what the user said reaches the thread: other fields a client sends
        # (additional_kwargs, response_metadata, ...) are dropped.
        return [
            HumanMessage(content=t, id=m.id, name=m.name) for m, t in zip(value, texts, strict=True)
        ]


def _served_text(text: str, what: str, max_chars: int, empty_hint: str) -> str:
    """``text`` when the server takes it: not empty, at most ``max_chars`` characters,
    valid Unicode; else a ``ValueError`` (a 422) saying which."""
    if not text.strip():
        raise ValueError(f"The {what} is empty: {empty_hint}.")
    if len(text) > max_chars:
        raise ValueError(
            f"The {what} is {len(text):,} characters long; this server accepts at most "
            f"{max_chars:,} (server.max_message_chars)."
        )
    check_unicode(text, f"The {what}")
    return text


def _message_text(message: HumanMessage) -> str:
    """The text of a user message; refuses non-text parts and an id or name that is
    not valid Unicode."""
    content = message.content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            else:
                raise ValueError("Only text messages are accepted (a part is not text).")
        content = "".join(parts)
    for what, value in (("message id", message.id), ("message name", message.name)):
        if value is not None:
            check_unicode(str(value), f"The {what}")
    return str(content)


def _printable(text: str) -> str:
    """``text`` with characters UTF-8 cannot carry (lone surrogates) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def memory_query(max_chars: int) -> Any:
    """The input type of ``/memory``: a non-empty query of at most ``max_chars``
    characters, checked before a stream starts (an error inside a stream can only end
    it)."""
    from pydantic import AfterValidator

    def check(text: str) -> str:
        return _served_text(text, "query", max_chars, "send what to search for")

    return Annotated[str, AfterValidator(check)]


def agent_input(max_chars: int) -> type[AgentInput]:
    """:class:`AgentInput` refusing messages longer than ``max_chars`` in total."""
    return type("AgentInput", (AgentInput,), {"max_chars": max_chars, "__module__": __name__})


class _ServedGraph(RunnableBinding[Any, Any]):
    """The memory graph, declaring the ``configurable`` keys clients may send."""

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        return get_unique_config_specs(
            [*self.bound.config_specs, _THREAD_SPEC, _USER_SPEC, _SCOPE_SPEC]
        )


class _ServedRetriever(RunnableBinding[Any, Any]):
    """The memory retriever, declaring the ``configurable`` keys clients may send."""

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        return get_unique_config_specs([*self.bound.config_specs, _USER_SPEC, _SCOPE_SPEC])


def _status_of(error: Exception) -> int:
    """The HTTP status of a typed error of the memory layer."""
    from langmem_ext.core.errors import (
        EmbeddingError,
        EntrySupersededError,
        IndexUnavailableError,
        InvalidInputError,
        NotFoundError,
        PendingStateError,
        WorkspaceLockTimeout,
    )

    if isinstance(error, NotFoundError):
        return 404
    if isinstance(error, InvalidInputError):
        return 422
    if isinstance(error, PendingStateError | EntrySupersededError):
        return 409  # the state changed: read it again
    if isinstance(error, WorkspaceLockTimeout | IndexUnavailableError | EmbeddingError):
        return 503  # busy or a backend down: try again later
    return 400


def warm_up(memory: Memory) -> None:
    """Make the first requests warm: load the embedding model (documents and queries)
    and run one search, which opens the database connections, the keyword index and
    the vector index."""
    memory.embeddings.embed_documents(["warm-up"])
    memory.search("warm-up", k=1)


def _config_modifier(
    state: ServingState,
    authenticate: Authenticate | None,
    *,
    threads: bool,
) -> Callable[[dict[str, Any], Request], Awaitable[dict[str, Any]]]:
    """LangServe ``per_req_config_modifier``: apply the trust rules to one request."""
    from fastapi import HTTPException

    async def modify(config: dict[str, Any], request: Request) -> dict[str, Any]:
        if threads and not state.started:
            raise HTTPException(
                503,
                "The app has not started: run it with uvicorn (or `with TestClient(app):`) "
                "so its lifespan opens the checkpointer.",
            )
        sent = dict(config.get("configurable") or {})
        try:
            caller = await request_caller(
                request,
                state,
                authenticate,
                user_id=sent.get("user_id"),
                scope=sent.get("scope"),
                loopback_only=False,
                user_field="config.configurable.user_id",
            )
        except CallerRefused as e:
            raise HTTPException(e.status, e.message) from e
        configurable: dict[str, Any] = {"scope": caller.scope}
        if caller.user_id is not None:
            configurable["user_id"] = caller.user_id
        if threads:
            thread = sent.get("thread_id")
            if thread is None or not str(thread).strip():
                raise HTTPException(422, "Send config.configurable.thread_id (any string).")
            configurable["thread_id"] = f"{caller.owner}/{str(thread).strip()}"
        return {**config, "configurable": configurable}

    return modify


def _connection_errors() -> tuple[type[Exception], ...]:
    """Exceptions meaning "a backend could not be connected to" (the chat model's client)."""
    from langmem_ext.chat_models.choice import ModelUnavailableError

    errors: list[type[Exception]] = [ConnectionError, ModelUnavailableError]
    try:
        import httpx

        errors += [httpx.ConnectError, httpx.ConnectTimeout]
    except ImportError:  # pragma: no cover - httpx comes with langserve
        pass
    return tuple(errors)


def _model_response_errors() -> tuple[type[Exception], ...]:
    """Exceptions meaning "the model's server answered with an error" (Ollama's)."""
    try:
        from ollama import ResponseError
    except ImportError:  # pragma: no cover - ollama comes with langchain-ollama
        return ()
    return (ResponseError,)


def model_refused_detail(model_name: str, error: BaseException) -> str:
    """The ``503`` / ``502`` message of ``/agent`` when the model's server refuses a call.

    Args:
        model_name: The ``init_chat_model`` string of the served model.
        error: What the model's client raised (e.g. ``ollama.ResponseError``).

    Returns:
        One paragraph naming the model, the server's answer and, for a model the
        server does not have (404), the command that fetches it.
    """
    reason = str(getattr(error, "error", "") or error).splitlines()[0]
    status = getattr(error, "status_code", None)
    if status == 404:
        name = model_name.split(":", 1)[1] if ":" in model_name else model_name
        return (
            f"The chat model {model_name!r} is not available on its server ({reason}). "
            f"Fix: `ollama pull {name}`; or set LANGMEM_CHAT_MODEL to a model the server "
            "has and restart; or restart with `langmem-ext serve --scripted`. "
            "/memory works without a model."
        )
    return f"The chat model {model_name!r} answered with an error (status {status}): {reason}."


def model_unreachable_detail(model_name: str, error: BaseException) -> str:
    """The ``503`` message of ``/agent`` when the chat model cannot be reached.

    Args:
        model_name: The ``init_chat_model`` string (or class name) of the served model.
        error: What the model's client raised.

    Returns:
        One paragraph naming the model, the error and the fixes.
    """
    reason = str(error).splitlines()[0] if str(error) else ""
    fixes = []
    if "ollama" in model_name.lower():
        name = model_name.split(":", 1)[1] if ":" in model_name else "qwen2.5:7b"
        fixes.append(f"start Ollama (`ollama serve`, then `ollama pull {name}`)")
    fixes += [
        "set LANGMEM_CHAT_MODEL to a reachable init_chat_model string and restart",
        "restart with `langmem-ext serve --scripted` for the offline scripted model",
    ]
    return (
        f"The chat model {model_name!r} is not reachable ({type(error).__name__}: {reason}). "
        f"Fix: {'; or '.join(fixes)}. /memory works without a model."
    )


def open_async_checkpointer(path: Path) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
    """``AsyncSqliteSaver`` on ``path`` for an ``async with`` body; ``InMemorySaver``
    (logged) without aiosqlite."""
    return SqliteCheckpoints(path).open_async()


def shutdown_flush(memory: Memory, *, timeout: float = 30.0) -> None:
    """The shutdown flush: the background turn writes (hot log, boosts) are
    drained, then every conversation with events in no episode is summarised."""
    from langmem_ext.graph.bookkeeping import flush_turn_writes
    from langmem_ext.memory.lifecycle.jobs import flush_active_threads

    if not flush_turn_writes(memory, timeout=timeout):
        logger.warning("background turn writes still running after %.0f s at shutdown", timeout)
    try:
        episodes = flush_active_threads(memory)
    except Exception:  # shutdown goes on: the idle job summarises them after a restart
        logger.exception("shutdown flush of active conversations failed")
        return
    if episodes:
        logger.info("shutdown: %d active conversation(s) summarised", len(episodes))


def create_app(
    memory: Memory | None = None,
    model: BaseChatModel | str | None = None,
    *,
    settings: Settings | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    authenticate: Authenticate | None = None,
    shared_scopes: Collection[str] = (),
    default_scope: str | None = None,
    durability: Literal["sync", "async", "exit"] | None = None,
    title: str = "langmem-ext",
    jobs: bool = False,
    jobs_model: BaseChatModel | None = None,
    flush_on_shutdown: bool = False,
    warm: bool = False,
    admin: bool = True,
    host: str | None = None,
) -> FastAPI:
    """A LangServe app serving the memory agent and the memory retriever.

    Setup:
        .. code-block:: bash

            pip install 'langmem-ext[serve]'

    Instantiate:
        .. code-block:: python

            from langmem_ext import Memory
            from langmem_ext.server.app import create_app

            memory = Memory("./memory-ws")
            app = create_app(memory, "ollama:qwen2.5:7b")
            # run it: uvicorn my_module:app --host 127.0.0.1 --port 8000, or serve()

    Invoke:
        .. code-block:: python

            import httpx
            from langmem_ext.server.app import serve_in_thread

            memory.add("User likes ramen", scope="user_alice")
            with serve_in_thread(app) as url:
                config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
                r = httpx.post(f"{url}/memory/invoke", json={"input": "ramen", "config": config})
                print(r.json()["output"][0]["page_content"])     # User likes ramen
                # the agent (needs the model to be reachable):
                # httpx.post(f"{url}/agent/invoke", json={
                #     "input": {"messages": [{"type": "human", "content": "我喜欢吃拉面，记住"}]},
                #     "config": config}).json()["output"]["messages"][-1]["content"]

    Args:
        memory: The memory service; default ``Memory(settings=settings)``, closed on
            shutdown.
        model: Chat model or ``init_chat_model`` string; default
            ``settings.chat_model``.
        settings: Settings; default ``memory.settings`` or ``Settings()``.
        checkpointer: An async-capable checkpointer to use instead of the
            ``AsyncSqliteSaver`` opened on start-up (e.g. ``AsyncPostgresSaver``);
            the caller opens and closes it.
        authenticate: ``authenticate(request) -> user id | None`` (sync or async).
            When given, it alone decides the user; without it the client's
            ``configurable.user_id`` is trusted (see the module docstring).
        shared_scopes: Scopes any caller may name with ``configurable.scope``.
        default_scope: Scope of requests without a user; ``None`` (default) refuses
            them with ``401``.
        durability: LangGraph durability of every ``/agent`` run; ``None`` (default)
            keeps the memory graph's ``"exit"``: one checkpoint per turn, written
            when the turn is done, so other processes never start from a half-done
            turn (a turn that crashes midway is not resumable). ``"async"`` /
            ``"sync"`` write one per step; use them only when this process alone
            serves the workspace's threads. Confirmed memories are durable either way.
        title: The app's title in its OpenAPI docs.
        jobs: Run the lifecycle jobs while the app runs
            (:class:`~langmem_ext.memory.lifecycle.jobs.DailyJobs`): ``maintain`` on start when
            due and daily at ``lifecycle.daily_at``, the day archive, idle
            conversations summarised. :func:`serve` turns them on
            (``lifecycle.daily_jobs``).
        jobs_model: Chat model of the jobs' reviews, flush and summaries; ``None``
            uses their deterministic fallbacks.
        flush_on_shutdown: On shutdown (SIGTERM / SIGINT under uvicorn, after the
            requests in flight), wait for the background turn writes and summarise
            the conversations still active into episodes. :func:`serve` turns it on.
        warm: Before the app starts answering (its lifespan), load the embedding
            model and open the database connections and the indexes with one search
            (:func:`warm_up`), so the first requests are not slowed by that, nor hold
            the workspace lock through it. :func:`serve` turns it on.
        admin: Serve the admin web UI at ``/admin`` (:mod:`langmem_ext.server.admin`), with
            the same caller and scope rules.
        host: The address the app will listen on, when known (:func:`serve` passes
            it): off loopback without ``authenticate`` the admin refuses to start
            (``/admin`` answers ``403``). Without ``authenticate`` the admin answers
            only loopback clients either way.

    Returns:
        The FastAPI app; ``app.state.langmem`` is its :class:`ServingState`.
    """
    try:
        from fastapi import FastAPI
        from fastapi.exceptions import RequestValidationError
        from fastapi.responses import JSONResponse
        from langserve import add_routes
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from e

    from langmem_ext.graph import build_memory_graph
    from langmem_ext.retrievers import MemoryRetriever

    owns_memory = memory is None
    if memory is None:
        memory = Memory(settings=settings or Settings())
    settings = settings or memory.settings
    if model is None:
        from langmem_ext.chat_models.choice import chat_model_from_settings

        chat: BaseChatModel | str = chat_model_from_settings(settings)
    else:
        chat = model
    graph = build_memory_graph(chat, memory, checkpointer=checkpointer or False)
    shared = frozenset(check_scope(s) for s in shared_scopes)
    state = ServingState(
        memory=memory,
        graph=graph,
        owns_memory=owns_memory,
        shared_scopes=shared,
        default_scope=check_scope(default_scope) if default_scope is not None else None,
    )
    if authenticate is None:
        logger.info(
            "no authenticate= given: the client's configurable.user_id is trusted "
            "(serve on 127.0.0.1 or behind a gateway that checks it)"
        )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if checkpointer is None:
                saver = await stack.enter_async_context(open_async_saver(memory))
                graph.checkpointer = saver
            state.checkpointer = type(graph.checkpointer).__name__
            if mcp_running is not None:
                await stack.enter_async_context(mcp_running())
            if warm:
                await asyncio.to_thread(warm_up, memory)
            state.started = True
            daily = DailyJobs(memory, model=jobs_model) if jobs else None
            if daily is not None:
                daily.start()
            try:
                yield
            finally:
                state.started = False
                if daily is not None:
                    await asyncio.to_thread(daily.stop)
                if flush_on_shutdown:
                    await asyncio.to_thread(shutdown_flush, memory)
                if checkpointer is None:
                    graph.checkpointer = None
                if owns_memory:
                    memory.close()

    app = FastAPI(
        title=title,
        description="langmem-ext memory agent and memory retriever (LangServe).",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI and ReDoc load from a CDN: /openapi.json is served
        redoc_url=None,
    )
    app.state.langmem = state
    allowed = [*settings.server.allowed_hosts, *([host] if host else [])]
    app.add_middleware(
        RequestGuard,
        check_host=authenticate is None,
        allowed_hosts=[h for h in allowed if h not in ("0.0.0.0", "::", "")],
        max_body_bytes=settings.server.max_body_bytes,
        max_form_bytes=settings.server.max_form_bytes,
    )
    if isinstance(chat, str):
        model_name = chat
    elif model is None:
        model_name = settings.chat_model
    else:
        model_name = type(chat).__name__

    async def model_unreachable(request: Request, exc: Exception) -> JSONResponse:
        detail = model_unreachable_detail(model_name, exc)
        logger.warning("%s %s -> 503: %s", request.method, request.url.path, detail)
        return JSONResponse({"detail": detail}, status_code=503)

    for error in _connection_errors():
        app.add_exception_handler(error, model_unreachable)

    async def model_refused(request: Request, exc: Exception) -> JSONResponse:
        status = getattr(exc, "status_code", None)
        detail = model_refused_detail(model_name, exc)
        code = 503 if status == 404 else 502
        logger.warning("%s %s -> %d: %s", request.method, request.url.path, code, detail)
        return JSONResponse({"detail": detail}, status_code=code)

    for error in _model_response_errors():
        app.add_exception_handler(error, model_refused)

    async def typed_error(request: Request, exc: Exception) -> JSONResponse:
        status = _status_of(exc)
        logger.info("%s %s -> %d: %s", request.method, request.url.path, status, exc)
        return JSONResponse({"detail": str(exc), "error": type(exc).__name__}, status_code=status)

    async def not_utf8(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(
            {"detail": "The request body is not valid UTF-8 JSON.", "error": "InvalidBody"},
            status_code=400,
        )

    async def internal(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("%s %s -> 500", request.method, request.url.path, exc_info=exc)
        return JSONResponse(
            {"detail": "Internal error: the server log has the details.", "error": "Internal"},
            status_code=500,
        )

    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        errors: list[dict[str, Any]] = list(getattr(exc, "errors", list)())
        detail = [
            {
                "loc": [_printable(str(part)) for part in e.get("loc", ())],
                "msg": _printable(str(e.get("msg", ""))),
                "type": str(e.get("type", "")),
            }
            for e in errors
        ]
        return JSONResponse({"detail": detail, "error": "InvalidRequest"}, status_code=422)

    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(ValidationError, invalid_request)  # LangServe's batch inputs
    app.add_exception_handler(LangmemError, typed_error)
    app.add_exception_handler(UnicodeDecodeError, not_utf8)
    app.add_exception_handler(Exception, internal)

    async def thread_conflict(request: Request, exc: Exception) -> JSONResponse:
        logger.warning("%s %s -> 409: %s", request.method, request.url.path, exc)
        return JSONResponse({"detail": str(exc)}, status_code=409)

    app.add_exception_handler(ThreadConflictError, thread_conflict)

    @app.get("/healthz", response_model=None)
    async def healthz() -> JSONResponse:
        """``200`` once started (``503`` before): status, whether an embedding model
        is loaded in the process, checkpointer, chat model and whether it is reachable
        (``null``: not known before a call). Memory routes
        work without the model, so an unreachable model does not make it ``503``."""
        from langmem_ext.chat_models.choice import model_reachability
        from langmem_ext.embeddings.factory import loaded_models

        reachable, why = await asyncio.to_thread(model_reachability, chat, settings)
        body = {
            "status": "ok" if state.started else "starting",
            "embedder_loaded": bool(loaded_models()),
            "checkpointer": state.checkpointer,
            "chat_model": model_name,
            "chat_model_reachable": reachable,
            "chat_model_detail": why,
        }
        return JSONResponse(body, status_code=200 if state.started else 503)

    run_kwargs = {"durability": durability} if durability else {}
    served_graph = _ServedGraph(bound=graph, kwargs=run_kwargs, config={}).with_types(
        input_type=agent_input(settings.server.max_message_chars)
    )
    add_routes(
        app,
        served_graph,
        path="/agent",
        config_keys=("configurable",),
        disabled_endpoints=["playground"],
        per_req_config_modifier=_config_modifier(state, authenticate, threads=True),
    )
    retriever = MemoryRetriever(memory=memory)
    add_routes(
        app,
        _ServedRetriever(bound=retriever, kwargs={}, config={}).with_types(
            input_type=memory_query(settings.server.max_message_chars)
        ),
        path="/memory",
        config_keys=("configurable",),
        disabled_endpoints=["playground"],
        per_req_config_modifier=_config_modifier(state, authenticate, threads=False),
    )
    from langmem_ext.server.rest import rest_router

    app.include_router(rest_router(state, authenticate))
    mcp_running = _mount_mcp(app, state, authenticate)
    if admin:
        _mount_admin(app, state, authenticate, host)
    return app


def _mount_mcp(
    app: FastAPI, state: ServingState, authenticate: Authenticate | None
) -> Callable[[], AbstractAsyncContextManager[None]] | None:
    """``/mcp``: the MCP server (streamable HTTP); ``None`` without the ``mcp`` package."""
    try:
        from langmem_ext.server.mcp_server import mount_mcp
    except ImportError as e:  # pragma: no cover - mcp comes with the serve extra
        logger.warning("/mcp is off: the mcp package is missing (pip install mcp): %s", e)
        return None
    return mount_mcp(app, state, authenticate)


def _mount_admin(
    app: FastAPI, state: ServingState, authenticate: Authenticate | None, host: str | None
) -> None:
    """``/admin``: the admin UI, or a ``403`` saying why it does not run."""
    refused = None
    if authenticate is None and host is not None and host not in _LOOPBACK:
        refused = (
            f"The admin UI is off: this server listens on {host} without authenticate= "
            "(serve on 127.0.0.1, or pass authenticate=)."
        )
    try:
        from langmem_ext.server.admin.routes import mount_admin
    except ImportError as e:  # pragma: no cover - jinja2 comes with the serve extra
        refused = f"The admin UI needs jinja2 (pip install 'langmem-ext[serve]'): {e}"
        from langmem_ext.server.admin.refusal import refused_router

        app.include_router(refused_router(refused))
        logger.warning("%s", refused)
        return
    if refused is not None:
        logger.warning("%s", refused)
    mount_admin(app, state, authenticate, refused=refused)


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    memory: Memory | None = None,
    model: BaseChatModel | str | None = None,
    settings: Settings | None = None,
    authenticate: Authenticate | None = None,
    shared_scopes: Collection[str] = (),
    default_scope: str | None = None,
    log_level: Literal["critical", "error", "warning", "info", "debug"] = "info",
    jobs_model: BaseChatModel | None = None,
) -> None:
    """Run :func:`create_app` with uvicorn (blocks until stopped).

    Binds 127.0.0.1 by default. Binding another address without ``authenticate``
    logs a warning: every client could then claim any ``user_id``. The lifecycle
    jobs run while it serves (``lifecycle.daily_jobs``, with ``jobs_model`` for
    reviews and summaries), and SIGTERM / SIGINT stop it gracefully: no new
    requests, the ones in flight answered, the background writes drained, active
    conversations summarised.
    """
    try:
        import uvicorn
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from e

    if authenticate is None and host not in _LOOPBACK:
        logger.warning(
            "serving on %s without authenticate=: any client can claim any user_id", host
        )
    app = create_app(
        memory,
        model,
        settings=settings,
        authenticate=authenticate,
        shared_scopes=shared_scopes,
        default_scope=default_scope,
        jobs=(settings or (memory.settings if memory else Settings())).lifecycle.daily_jobs,
        jobs_model=jobs_model,
        flush_on_shutdown=True,
        warm=True,
        host=host,
    )
    uvicorn.run(app, host=host, port=port, log_level=log_level)


@contextmanager
def serve_in_thread(
    app: FastAPI,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    timeout: float = 60.0,
    log_level: str = "warning",
) -> Iterator[str]:
    """Run ``app`` with uvicorn in a background thread; yields its base URL.

    For tests, notebooks and examples: ``port=0`` picks a free port (the socket is
    bound here, so there is no race for it). The server runs its lifespan, and is
    stopped and joined when the block exits.

    Example:
        .. code-block:: python

            import httpx
            from langchain_core.messages import AIMessage
            from langmem_ext import Memory
            from langmem_ext.chat_models.scripted import ScriptedChatModel
            from langmem_ext.server.app import create_app, serve_in_thread

            model = ScriptedChatModel(policy=lambda messages: AIMessage("hi"))
            app = create_app(Memory("./memory-ws"), model)
            with serve_in_thread(app) as url:
                print(httpx.get(f"{url}/healthz").json()["status"])   # ok
    """
    import socket
    import threading
    import time

    try:
        import uvicorn
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from e

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level=log_level))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="langmem-uvicorn", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                msg = f"the server did not start on {host}:{sock.getsockname()[1]}; see its log"
                raise RuntimeError(msg)
            time.sleep(0.02)
        bound = sock.getsockname()[1]
        yield f"http://[{host}]:{bound}" if family == socket.AF_INET6 else f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()


__all__ = [
    "AgentInput",
    "Authenticate",
    "Caller",
    "ServingState",
    "create_app",
    "model_unreachable_detail",
    "open_async_checkpointer",
    "resolve_caller",
    "serve",
    "serve_in_thread",
    "shutdown_flush",
]

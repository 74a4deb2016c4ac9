"""Who a served request is and which scope it may use (shared by ``/agent``,
``/memory``, ``/admin``, ``/v1`` and ``/mcp``; see :mod:`langmem_ext.server.app`)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langmem_ext.core.errors import LangmemError
from langmem_ext.memory.scoping import check_scope, scope_for_user

if TYPE_CHECKING:
    from fastapi import Request

    from langmem_ext.memory import Memory

Authenticate = Callable[["Request"], "str | Awaitable[str | None] | None"]
"""``authenticate(request) -> user id | None`` (sync or async)."""


@dataclass
class ServingState:
    """What the app holds (``app.state.langmem``).

    Attributes:
        memory: The memory service.
        graph: The compiled memory graph served at ``/agent``.
        owns_memory: The app created ``memory`` and closes it on shutdown.
        checkpointer: Name of the checkpointer in use (``""`` before start-up).
        started: The lifespan has run; ``/agent`` accepts requests.
        shared_scopes: Scopes every caller may name.
        default_scope: Scope of requests without a user (``None``: refused).
    """

    memory: Memory
    graph: Any
    owns_memory: bool
    checkpointer: str = ""
    started: bool = False
    shared_scopes: frozenset[str] = field(default_factory=frozenset)
    default_scope: str | None = None


@dataclass(frozen=True)
class Caller:
    """Who a request is and what it may touch (see the module docstring)."""

    user_id: str | None
    scope: str
    owner: str
    """Namespace of the caller's threads: its own scope, or ``scope`` without a user."""


def resolve_caller(
    user_id: str | int | None,
    requested_scope: str | None,
    *,
    shared_scopes: Collection[str] = (),
    default_scope: str | None = None,
) -> Caller:
    """The scope a request may use; pure policy, no I/O.

    Args:
        user_id: The (authenticated or trusted) user id, or ``None``.
        requested_scope: ``configurable.scope`` sent by the client, or ``None``.
        shared_scopes: Scopes any caller may name.
        default_scope: Scope of requests without a user; ``None`` refuses them.

    Returns:
        The caller.

    Raises:
        PermissionError: the client named a scope it may not use, or sent no user
            while the server has no ``default_scope``.
        LangmemError: the user id or scope is not valid (``InvalidScopeError``).
    """
    user = None if user_id is None or str(user_id).strip() == "" else str(user_id).strip()
    own = scope_for_user(user) if user is not None else None
    if requested_scope is not None and str(requested_scope).strip():
        wanted = check_scope(str(requested_scope).strip())
        if wanted in shared_scopes or wanted == own:
            return Caller(user, wanted, own or wanted)
        msg = (
            f"scope {wanted!r} is not allowed for this caller; omit `scope` to use "
            f"the caller's own scope ({own or 'none: send config.configurable.user_id'})"
        )
        raise PermissionError(msg)
    if own is not None:
        return Caller(user, own, own)
    if default_scope is not None:
        return Caller(None, default_scope, default_scope)
    msg = "no user: send config.configurable.user_id (or authenticate the request)"
    raise PermissionError(msg)


USER_HEADER = "X-User-Id"
"""The header an API client names its user in (checked against ``authenticate=``)."""
SCOPE_HEADER = "X-Scope"
"""The header an API client names a shared scope in (default: the caller's own)."""
IDEMPOTENCY_HEADER = "Idempotency-Key"
"""The request header naming a write's idempotency key (see
:mod:`langmem_ext.server.idempotency`)."""
LOOPBACK_CLIENTS = frozenset({"127.0.0.1", "::1", "localhost", "testclient"})
"""Client addresses a server without ``authenticate=`` answers on ``/v1`` and ``/mcp``
(``testclient``: Starlette's in-process client)."""


class CallerRefused(Exception):
    """A request whose caller may not be served: its HTTP ``status`` and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def request_caller(
    request: Request,
    state: ServingState,
    authenticate: Authenticate | None,
    *,
    user_id: str | int | None,
    scope: str | None,
    loopback_only: bool = True,
    user_field: str = USER_HEADER,
) -> Caller:
    """The caller of an API request (``/v1``, ``/mcp``) and the scope it may use.

    With ``authenticate`` its result alone is the user (a sent ``user_id`` must be
    the same); without it only loopback clients are answered and the sent
    ``user_id`` is trusted (the server listens on 127.0.0.1, or behind a gateway on
    this machine that checks it).

    Args:
        request: The HTTP request.
        state: The app's serving state (shared scopes, default scope).
        authenticate: The app's ``authenticate=``, or ``None``.
        user_id: The user id the client sent, if any.
        scope: The scope the client asked for, if any.
        loopback_only: Without ``authenticate``, answer only clients on this machine
            (the ``/agent`` and ``/memory`` routes rely on the host check alone).
        user_field: Where the client sends its user id, for the messages.

    Returns:
        The caller.

    Raises:
        CallerRefused: ``401`` (not authenticated, no user), ``403`` (another
            user's id, a scope it may not use, a client off loopback without
            ``authenticate``) or ``422`` (an invalid user id or scope).
    """
    sent = None if user_id is None or not str(user_id).strip() else str(user_id).strip()
    if authenticate is not None:
        found = authenticate(request)
        who = await found if inspect.isawaitable(found) else found
        if not who:
            raise CallerRefused(401, "Not authenticated.")
        if sent is not None and sent != str(who):
            raise CallerRefused(403, f"{user_field} is not the caller's.")
        user: str | None = str(who)
    else:
        host = request.client.host if request.client else ""
        if loopback_only and host not in LOOPBACK_CLIENTS:
            raise CallerRefused(
                403,
                "This server has no authenticate=: it answers API requests from this "
                "machine only (127.0.0.1 / ::1).",
            )
        user = sent
    try:
        return resolve_caller(
            user, scope, shared_scopes=state.shared_scopes, default_scope=state.default_scope
        )
    except PermissionError as e:
        if "no user" in str(e):
            raise CallerRefused(401, f"No user: send the user id in {user_field}.") from e
        raise CallerRefused(403, str(e).replace("config.configurable.user_id", user_field)) from e
    except LangmemError as e:
        raise CallerRefused(422, str(e)) from e


__all__ = [
    "LOOPBACK_CLIENTS",
    "SCOPE_HEADER",
    "USER_HEADER",
    "Authenticate",
    "Caller",
    "CallerRefused",
    "ServingState",
    "request_caller",
    "resolve_caller",
]

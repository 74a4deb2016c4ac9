"""Who a served request is and which scope it may use (shared by ``/agent``,
``/memory`` and ``/admin``; see :mod:`langmem_ext.serving`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langmem_ext._scoping import check_scope, scope_for_user
from langmem_ext.memory import Memory

if TYPE_CHECKING:
    from fastapi import Request

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


__all__ = ["Authenticate", "Caller", "ServingState", "resolve_caller"]

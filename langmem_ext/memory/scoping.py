"""Which memory scope a run may touch — decided by the application, never by the model.

Every LangChain / LangGraph surface of the package (tools, retriever, middleware,
graph) resolves the scope of a call the same way, from the run's
``config["configurable"]``:

1. ``scope`` — an explicit scope name chosen by the application; it must already
   be a valid scope (1-64 letters or digits of any script, ``_`` and ``-``,
   starting with a letter or digit; NFC-normalised, see
   :func:`check_scope`), else
   :class:`~langmem_ext.core.errors.InvalidScopeError`.
2. ``user_id`` (or LangGraph Platform's ``langgraph_user_id``) — mapped to a
   scope-safe name by :func:`scope_for_user`.
3. the default fixed when the surface was created (``"main"`` unless told).

Tool argument schemas have no scope field, so a model cannot name another user's
scope: whatever it puts in its tool call, the scope comes from here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from langmem_ext.core.errors import InvalidScopeError
from langmem_ext.workspace.layout import MAIN_SCOPE, check_scope

_DIRECT_ID_RE = re.compile(r"^[A-Za-z0-9_\-]{1,58}$")
_USER_KEYS = ("user_id", "langgraph_user_id")


def scope_for_user(user_id: str | int) -> str:
    """The scope of a user id.

    Safe ids map readably to ``user_<id>``. Anything else (e-mail addresses, ids
    with dots, slashes, spaces or non-ASCII, ids over 58 characters) maps to
    ``user-<sha256 prefix>-<slug>``: the ``user-`` prefix (dash) never collides
    with the ``user_`` (underscore) of a readable id, and the hash keeps distinct
    ids apart (``"a.b"`` and ``"a/b"`` get different scopes).

    Args:
        user_id: The application's user id (``str`` or ``int``).

    Returns:
        A valid scope name, at most 64 characters.

    Raises:
        InvalidScopeError: for an empty id or a type other than ``str`` / ``int``.

    Example:
        >>> scope_for_user("alice_42")
        'user_alice_42'
        >>> scope_for_user("alice@example.com")[:5]
        'user-'
    """
    if isinstance(user_id, bool) or not isinstance(user_id, str | int):
        msg = (
            f"user_id must be a string or an integer, got {type(user_id).__name__}; "
            "pass the application's user id in config['configurable']['user_id']."
        )
        raise InvalidScopeError(msg)
    raw = str(user_id).strip()
    if not raw:
        msg = "user_id is empty; pass the application's user id or omit the key."
        raise InvalidScopeError(msg)
    if _DIRECT_ID_RE.match(raw):
        return f"user_{raw}"
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9]+", "-", raw).strip("-")[:32].strip("-")
    return f"user-{digest}-{slug}" if slug else f"user-{digest}"


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def scope_from_config(config: Mapping[str, Any] | None, default: str = MAIN_SCOPE) -> str:
    """The scope of a run, from ``config["configurable"]`` (see the module docstring).

    Args:
        config: A ``RunnableConfig`` (or any mapping with a ``configurable`` key);
            ``None`` outside a run.
        default: Scope used when the config names neither a scope nor a user.

    Returns:
        A valid scope name.

    Raises:
        InvalidScopeError: when the configured ``scope`` or the ``default`` is not a
            valid scope name, or the user id cannot be used.

    Example:
        >>> scope_from_config({"configurable": {"user_id": "42", "thread_id": "t1"}})
        'user_42'
        >>> scope_from_config({"configurable": {"scope": "team_a", "user_id": "42"}})
        'team_a'
        >>> scope_from_config(None, "main")
        'main'
        >>> scope_from_config({"configurable": {"langgraph_auth_user_id": "7", "scope": "x"}})
        'user_7'
    """
    configurable = (config or {}).get("configurable") or {}
    if not isinstance(configurable, Mapping):
        configurable = {}
    # An authenticated user set by the LangGraph server outranks anything the client sent.
    auth_user: Any = configurable.get("langgraph_auth_user_id")
    if _present(auth_user):
        return scope_for_user(auth_user)
    scope: Any = configurable.get("scope")
    if _present(scope):
        return check_scope(scope.strip() if isinstance(scope, str) else scope)
    for key in _USER_KEYS:
        user_id: Any = configurable.get(key)
        if _present(user_id):
            return scope_for_user(user_id)
    return check_scope(default)


def thread_from_config(config: Mapping[str, Any] | None) -> str | None:
    """The conversation of a run: ``config["configurable"]["thread_id"]`` as text, or
    ``None`` when the run names none.

    Example:
        >>> thread_from_config({"configurable": {"thread_id": "t1"}})
        't1'
        >>> thread_from_config(None) is None
        True
    """
    configurable = (config or {}).get("configurable") or {}
    thread: Any = configurable.get("thread_id") if isinstance(configurable, Mapping) else None
    return str(thread) if _present(thread) else None


__all__ = [
    "MAIN_SCOPE",
    "check_scope",
    "scope_for_user",
    "scope_from_config",
    "thread_from_config",
]

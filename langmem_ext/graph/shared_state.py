"""Structured session state for multi-agent graphs.

A multi-agent conversation keeps, next to the messages, one value per conversation: *meta*
(conversation, user, when it changed), *flow* (the current step and agent, the turn
count, the last bot message) and a *global state*: entities every agent shares
(``order_id``, ``destination``, a symptom, a department), a private *slot* per agent,
the current intent and a pending action.

Here that value is one key of a LangGraph state, ``session``, with a reducer
(:func:`reduce_session`) that **merges** updates instead of replacing the value:

- ``meta`` and ``flow`` merge key by key (a ``None`` value removes the key, so
  ``set_flow(None)`` clears the step);
- ``entities`` merge key by key (a ``None`` value removes the entity);
- ``slots`` merge agent by agent, and inside an agent's slot key by key: an update
  of one agent's slot never touches another's (``None`` as a key's value removes
  the key; ``None`` as a whole slot clears that agent's slot);
- ``intent`` and ``pending_action`` are replaced when an update names them;
- every non-empty update stamps ``meta["updated_at"]`` (ISO 8601, UTC).

So two sub-agents can write in the same graph step (a fan-out) without a conflict,
and since the value lives in the graph state it is saved and restored with the
thread's checkpoint like the messages. :class:`~langmem_ext.graph.MemoryState` has
the key; add it to your own state with::

    class MyState(MessagesState):
        session: Annotated[SessionState, reduce_session]

Nodes read it with :func:`entities` / :func:`agent_slot` / :func:`flow` and write
it by returning :func:`set_entities` / :func:`update_slot` / :func:`set_flow` /
:func:`set_meta` (combine several with :func:`combine`).

Example:
    .. code-block:: python

        from langmem_ext.graph.shared_state import (
            agent_slot, combine, reduce_session, set_entities, set_flow, update_slot,
        )

        state = {"session": {}}
        update = combine(
            set_entities(order_id="A-1001"),
            update_slot("billing", refund="pending"),
            set_flow("refund", agent="billing"),
        )
        state["session"] = reduce_session(state["session"], update["session"])
        agent_slot(state, "billing")  # {'refund': 'pending'}
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from typing_extensions import TypedDict

SESSION_KEY = "session"
"""The state key holding the session value."""

_MERGED = ("meta", "flow", "entities")
_REPLACED = ("intent", "pending_action")


class SessionMeta(TypedDict, total=False):
    """Who the session belongs to.

    Attributes:
        conversation_id: The conversation (usually the graph's ``thread_id``).
        user_id: The user.
        updated_at: When the session value last changed (ISO 8601, UTC; set by the
            reducer).
    """

    conversation_id: str
    user_id: str
    updated_at: str


class SessionFlow(TypedDict, total=False):
    """Where the conversation is.

    Attributes:
        step: The current step of the flow (``"triage"``, ``"collect_address"`` ...).
        agent: The agent handling it.
        turn_count: Turns so far, if the application counts them.
        last_bot_message: The last thing the bot said, if kept.
    """

    step: str | None
    agent: str | None
    turn_count: int
    last_bot_message: str


class SessionState(TypedDict, total=False):
    """The structured session value.

    ``entities``, ``slots``, ``intent`` and ``pending_action`` are the
    shared state; the messages and the summary stay in their own state keys.

    Attributes:
        meta: Conversation, user and last change.
        flow: Current step and agent.
        entities: Entities every agent shares (``order_id``, ``destination`` ...).
        slots: One private slot per agent name.
        intent: The current intent.
        pending_action: An action waiting to be done or confirmed.
    """

    meta: SessionMeta
    flow: SessionFlow
    entities: dict[str, Any]
    slots: dict[str, dict[str, Any]]
    intent: str | None
    pending_action: str | None


def _merge_keys(left: Mapping[str, Any], right: Mapping[str, Any], drop: bool) -> dict[str, Any]:
    out = {**left, **right}
    return {k: v for k, v in out.items() if v is not None} if drop else out


def _merge(left: Mapping[str, Any], right: Mapping[str, Any], *, drop: bool) -> dict[str, Any]:
    """Merge session ``right`` onto ``left``; ``drop`` applies ``None`` removals."""
    out: dict[str, Any] = dict(left)
    for key in _MERGED:
        if key in right:
            out[key] = _merge_keys(left.get(key) or {}, right[key] or {}, drop)
    if "slots" in right:
        slots = dict(left.get("slots") or {})
        for agent, values in (right["slots"] or {}).items():
            if values is None:
                if drop:
                    slots.pop(agent, None)
                else:
                    slots[agent] = None
            else:
                slots[agent] = _merge_keys(slots.get(agent) or {}, values, drop)
        out["slots"] = slots
    for key in _REPLACED:
        if key in right:
            out[key] = right[key]
    return out


def reduce_session(left: SessionState | None, right: SessionState | None) -> SessionState:
    """Reducer of the ``session`` key: merge an update into the current value.

    Args:
        left: The current value (``None`` or ``{}`` at the start of a thread).
        right: The update a node returned (a partial :class:`SessionState`).

    Returns:
        A new value; neither argument is modified.

    Example:
        >>> s = reduce_session({}, {"entities": {"order_id": "A1"}, "slots": {"a": {"x": 1}}})
        >>> s = reduce_session(s, {"entities": {"city": "Oslo"}, "slots": {"b": {"y": 2}}})
        >>> s["entities"], s["slots"]
        ({'order_id': 'A1', 'city': 'Oslo'}, {'a': {'x': 1}, 'b': {'y': 2}})
    """
    if not right:
        return dict(left or {})  # type: ignore[return-value]
    out = _merge(left or {}, right, drop=True)
    out["meta"] = {**out.get("meta", {}), "updated_at": datetime.now(UTC).isoformat()}
    return out  # type: ignore[return-value]


def get_session(state: Mapping[str, Any]) -> SessionState:
    """The session value of a graph state (``{}`` when the thread has none yet)."""
    return state.get(SESSION_KEY) or {}  # type: ignore[return-value]


def entities(state: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the shared entities of a graph state."""
    return dict(get_session(state).get("entities") or {})


def agent_slot(state: Mapping[str, Any], agent: str) -> dict[str, Any]:
    """A copy of one agent's private slot (``{}`` when it has none)."""
    return dict((get_session(state).get("slots") or {}).get(agent) or {})


def flow(state: Mapping[str, Any]) -> SessionFlow:
    """A copy of the flow (current step and agent) of a graph state."""
    return dict(get_session(state).get("flow") or {})  # type: ignore[return-value]


def _values(values: Mapping[str, Any] | None, more: dict[str, Any]) -> dict[str, Any]:
    return {**(values or {}), **more}


def set_entities(values: Mapping[str, Any] | None = None, /, **more: Any) -> dict[str, Any]:
    """State update setting shared entities (``None`` removes one).

    Args:
        values: Entities by name (for names that are not identifiers).
        **more: Entities by keyword.

    Returns:
        ``{"session": {"entities": {...}}}``, to return from a node.
    """
    return {SESSION_KEY: {"entities": _values(values, more)}}


def update_slot(
    agent: str, values: Mapping[str, Any] | None = None, /, **more: Any
) -> dict[str, Any]:
    """State update of one agent's private slot, key by key (``None`` removes a key).

    Args:
        agent: The agent whose slot changes; other agents' slots are untouched.
        values: Keys to set (for names that are not identifiers).
        **more: Keys to set by keyword.

    Returns:
        ``{"session": {"slots": {agent: {...}}}}``, to return from a node.
    """
    return {SESSION_KEY: {"slots": {agent: _values(values, more)}}}


def clear_slot(agent: str) -> dict[str, Any]:
    """State update removing one agent's slot entirely."""
    return {SESSION_KEY: {"slots": {agent: None}}}


def set_flow(step: str | None, *, agent: str | None = None, **more: Any) -> dict[str, Any]:
    """State update of the flow: the current step, and the agent handling it.

    Args:
        step: The current step (``None`` clears it).
        agent: The agent now in charge; ``None`` leaves the current one.
        **more: Other flow fields (``turn_count``, ``last_bot_message``).

    Returns:
        ``{"session": {"flow": {...}}}``, to return from a node.
    """
    values: dict[str, Any] = {"step": step, **more}
    if agent is not None:
        values["agent"] = agent
    return {SESSION_KEY: {"flow": values}}


def set_meta(**values: Any) -> dict[str, Any]:
    """State update of the meta fields (``conversation_id``, ``user_id``)."""
    return {SESSION_KEY: {"meta": values}}


def combine(*updates: Mapping[str, Any]) -> dict[str, Any]:
    """Combine several state updates into one node return value.

    The ``session`` parts merge like the reducer merges them (removals are kept as
    ``None`` for the reducer to apply); for every other key the last update wins.

    Example:
        >>> combine(set_entities(a=1), update_slot("x", b=2), {"notes": []})
        {'session': {'entities': {'a': 1}, 'slots': {'x': {'b': 2}}}, 'notes': []}
    """
    out: dict[str, Any] = {}
    for update in updates:
        for key, value in update.items():
            if key == SESSION_KEY and key in out:
                out[key] = _merge(out[key], value or {}, drop=False)
            else:
                out[key] = value
    return out


__all__ = [
    "SESSION_KEY",
    "SessionFlow",
    "SessionMeta",
    "SessionState",
    "agent_slot",
    "clear_slot",
    "combine",
    "entities",
    "flow",
    "get_session",
    "reduce_session",
    "set_entities",
    "set_flow",
    "set_meta",
    "update_slot",
]

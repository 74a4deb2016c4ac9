"""Message-list validity and safe cut points.

Strict chat providers (OpenAI, Anthropic, Azure, Bedrock) reject a history where an
assistant tool call is not answered by its tool results right after it, or where a
tool result answers no call. Summarising or windowing a history cuts it in two, and
a careless cut produces exactly those lists: duplicated tool results, a cut between
parallel tool results, the latest human message trimmed away.

This module checks a list (:func:`validate_messages`) and chooses cut points that
cannot break it (:func:`safe_cut_index`). An *atomic span* is a stretch of messages
that must stay together: an ``AIMessage`` with tool calls plus every
``ToolMessage`` answering it; every other message is a span of its own. A cut is
only ever made between spans.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

from langmem_ext.core.errors import InvalidInputError, InvalidMessageListError

logger = logging.getLogger(__name__)


def _fail(index: int, message: str) -> InvalidMessageListError:
    return InvalidMessageListError(f"message {index}: {message}")


def validate_messages(
    messages: Sequence[BaseMessage],
    *,
    allow_pending_tool_calls: bool = False,
    allow_system_anywhere: bool = False,
) -> None:
    """Check that ``messages`` is a list a strict chat provider accepts.

    Rules:

    - every item is a ``BaseMessage`` and none is a ``RemoveMessage``;
    - message ids, where set, are unique;
    - an ``AIMessage`` with tool calls gives every call a non-empty, unique id and
      is followed immediately by one ``ToolMessage`` per call (any order) before
      any other message;
    - every ``ToolMessage`` answers a call of the ``AIMessage`` right before its
      run of tool results, and no call is answered twice;
    - ``SystemMessage`` only appears before the first non-system message (unless
      ``allow_system_anywhere``).

    Args:
        messages: The list to check.
        allow_pending_tool_calls: Accept a final ``AIMessage`` whose tool calls are
            not (all) answered yet — the state of a graph between the model and
            its tool node. Never pass this for a list you are about to send.
        allow_system_anywhere: Accept system messages after the first
            non-system message (some providers do).

    Raises:
        InvalidMessageListError: On the first rule broken, naming the index.
    """
    seen_ids: set[str] = set()
    open_calls: set[str] = set()  # calls of the current AI message not yet answered
    answered: set[str] = set()  # calls of the current AI message already answered
    caller: int | None = None  # index of the AI message whose results may follow
    in_preamble = True
    for i, message in enumerate(messages):
        if not isinstance(message, BaseMessage):
            raise _fail(i, f"expected a LangChain BaseMessage, got {type(message).__name__}")
        if isinstance(message, RemoveMessage):
            raise _fail(
                i,
                "RemoveMessage is a state-update marker, not a message; apply it with "
                "LangGraph's add_messages before sending the list",
            )
        if message.id:
            if message.id in seen_ids:
                raise _fail(i, f"duplicate message id {message.id!r}")
            seen_ids.add(message.id)
        if isinstance(message, ToolMessage):
            call_id = message.tool_call_id
            if caller is None:
                raise _fail(
                    i,
                    f"ToolMessage (tool_call_id={call_id!r}) does not follow an AIMessage "
                    "with tool calls; an orphan tool result is rejected by strict "
                    "providers — drop it or keep the AIMessage that made the call",
                )
            if call_id in answered:
                raise _fail(i, f"tool call {call_id!r} is answered twice")
            if call_id not in open_calls:
                raise _fail(
                    i,
                    f"ToolMessage answers tool call {call_id!r}, which the AIMessage at "
                    f"index {caller} did not make",
                )
            open_calls.discard(call_id)
            answered.add(call_id)
            continue
        if open_calls:
            raise _fail(
                i,
                f"the AIMessage at index {caller} called tools {sorted(open_calls)} whose "
                "ToolMessages are missing before this message; keep each tool call "
                "together with all of its results",
            )
        caller = None
        answered = set()
        if isinstance(message, SystemMessage):
            if not in_preamble and not allow_system_anywhere:
                raise _fail(
                    i,
                    "SystemMessage after the conversation started; strict providers "
                    "accept system messages only at the start",
                )
        else:
            in_preamble = False
        if isinstance(message, AIMessage) and message.tool_calls:
            ids: list[str] = []
            for call in message.tool_calls:
                made_id = call.get("id")
                if not made_id:
                    raise _fail(i, f"tool call {call['name']!r} has no id")
                if made_id in ids:
                    raise _fail(i, f"tool call id {made_id!r} is used twice")
                ids.append(made_id)
            open_calls = set(ids)
            caller = i
    if open_calls and not allow_pending_tool_calls:
        raise _fail(
            len(messages) - 1,
            f"the AIMessage at index {caller} called tools {sorted(open_calls)} whose "
            "ToolMessages are missing at the end of the list; run the tools first",
        )


def _boundaries(messages: Sequence[BaseMessage]) -> list[bool]:
    """``result[i]`` is True when a cut before message ``i`` splits no atomic span.

    Robust to invalid lists: a tool result far from its call still pulls the cut
    back to the call, and an orphan tool result sticks to the message before it.
    """
    n = len(messages)
    ok = [True] * (n + 1)
    for i, message in enumerate(messages):
        if i > 0 and isinstance(message, ToolMessage):
            ok[i] = False
    last_result: dict[str, int] = {}
    for j, message in enumerate(messages):
        if isinstance(message, ToolMessage) and message.tool_call_id:
            last_result[message.tool_call_id] = j
    for i, message in enumerate(messages):
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        last = i
        for call in message.tool_calls:
            j = last_result.get(call.get("id") or "", -1)
            last = max(last, j)
        for k in range(i + 1, last + 1):
            ok[k] = False
    return ok


def atomic_spans(messages: Sequence[BaseMessage]) -> list[tuple[int, int]]:
    """Split ``messages`` into spans that a cut must never divide.

    Args:
        messages: Any message list (also an invalid one).

    Returns:
        Half-open ``(start, end)`` index pairs covering the list in order: an
        ``AIMessage`` with tool calls together with all of its ``ToolMessage``
        results, and every other message alone. An orphan ``ToolMessage`` joins
        the span before it.
    """
    ok = _boundaries(messages)
    spans: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(messages) + 1):
        if ok[i]:
            spans.append((start, i))
            start = i
    return spans


def is_safe_cut(messages: Sequence[BaseMessage], index: int) -> bool:
    """Whether cutting ``messages`` before ``index`` keeps every tool call with its results.

    Args:
        messages: Any message list.
        index: ``0 <= index <= len(messages)``.

    Returns:
        True when ``messages[:index]`` and ``messages[index:]`` split no atomic span.
    """
    if not 0 <= index <= len(messages):
        return False
    return _boundaries(messages)[index]


def latest_human_index(messages: Sequence[BaseMessage]) -> int | None:
    """Index of the last ``HumanMessage``, or ``None`` when there is none."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i
    return None


def turn_starts(messages: Sequence[BaseMessage]) -> list[int]:
    """Indices where a turn starts; a turn starts at each ``HumanMessage``."""
    return [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]


def snap_to_safe_cut(messages: Sequence[BaseMessage], index: int) -> int:
    """Move ``index`` earlier until a cut there splits no atomic span.

    Args:
        messages: Any message list.
        index: A candidate cut, clamped to ``[0, len(messages)]``.

    Returns:
        The largest safe cut ``<= index`` (0 is always safe).
    """
    ok = _boundaries(messages)
    index = max(0, min(index, len(messages)))
    while index > 0 and not ok[index]:
        index -= 1
    return index


def next_safe_cut(messages: Sequence[BaseMessage], index: int) -> int:
    """Move ``index`` later until a cut there splits no atomic span.

    Args:
        messages: Any message list.
        index: A candidate cut, clamped to ``[0, len(messages)]``.

    Returns:
        The smallest safe cut ``>= index`` (``len(messages)`` is always safe).
    """
    ok = _boundaries(messages)
    index = max(0, min(index, len(messages)))
    while index < len(messages) and not ok[index]:
        index += 1
    return index


def safe_cut_index(messages: Sequence[BaseMessage], keep_last_turns: int) -> int:
    """Index where the *recent* part of a history starts.

    ``messages[:cut]`` may be summarised away and ``messages[cut:]`` is kept
    verbatim. The recent part:

    - holds the last ``keep_last_turns`` turns (a turn starts at a
      ``HumanMessage``), or everything when there are not more turns than that;
    - never separates an ``AIMessage`` with tool calls from its ``ToolMessage``
      results;
    - always contains the latest ``HumanMessage``;
    - starts with a ``HumanMessage`` whenever the list allows it.

    Args:
        messages: The history, oldest first.
        keep_last_turns: Turns to keep verbatim, ``>= 1``.

    Returns:
        The cut index, ``0 <= cut <= latest human index`` (0 = keep everything).

    Raises:
        InvalidInputError: If ``keep_last_turns < 1``.

    Example:
        .. code-block:: python

            cut = safe_cut_index(history, keep_last_turns=8)
            old, recent = history[:cut], history[cut:]
    """
    if keep_last_turns < 1:
        raise InvalidInputError(
            f"keep_last_turns must be at least 1 (the latest human turn), got {keep_last_turns}"
        )
    starts = turn_starts(messages)
    if len(starts) <= keep_last_turns:
        return 0
    candidate = starts[-keep_last_turns]
    cut = snap_to_safe_cut(messages, candidate)
    if cut != candidate:
        logger.debug("cut moved from %d to %d to keep a tool call with its results", candidate, cut)
    return cut


__all__ = [
    "InvalidMessageListError",
    "atomic_spans",
    "is_safe_cut",
    "latest_human_index",
    "next_safe_cut",
    "safe_cut_index",
    "snap_to_safe_cut",
    "turn_starts",
    "validate_messages",
]

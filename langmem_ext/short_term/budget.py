"""Token budgets that keep every model call inside the context window.

Two guards, both pure (no storage, no model):

- **Tool results** enter the history through :func:`budget_tool_message`: one result
  is cut to ``short_term.tool_result_budget()`` tokens, and all results of one turn
  (since the latest human message) share ``short_term.tool_turn_budget()``. A cut
  result ends at a clean boundary (line, sentence, word) followed by an explicit
  ``[truncated: …]`` marker the model can see.
- **The call itself**: once compaction (the one checkpoint routine,
  :func:`~langmem_ext.short_term.checkpoint.make_checkpoint`) has moved what it can
  into the summary, :func:`clip_to_fit` clips what is left — the recalled-memory
  block, then the current turn's tool results, then the newest human message —
  with the same marker, so no call is ever sent over the window. Clipping changes
  only what is sent: the state and the session log keep the full texts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langgraph.types import Command

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.core.tokens import count_tokens, truncate_at_boundary
from langmem_ext.short_term.accounting import count_message_tokens, message_tokens
from langmem_ext.short_term.checkpoint import SUMMARY_HEADER
from langmem_ext.short_term.content import message_text
from langmem_ext.short_term.validity import latest_human_index

logger = logging.getLogger(__name__)

TRUNCATED_MARK = "[truncated"
"""Start of the marker that ends every clipped text."""
_MIN_SHARE_TOKENS = 24
"""Smallest share of the turn budget a tool result gets (room for the marker)."""


def truncation_marker(shown: int, total: int, hint: str = "") -> str:
    """The marker put after a clipped text.

    Args:
        shown: Tokens of the text kept.
        total: Tokens of the whole text.
        hint: What the model can do to see more (optional).

    Returns:
        ``[truncated: 1200 of 5400 tokens shown; hint]``.
    """
    tail = f"; {hint}" if hint else ""
    return f"{TRUNCATED_MARK}: {shown} of {total} tokens shown{tail}]"


def clip_text(text: str, max_tokens: int, *, hint: str = "") -> str:
    """``text`` within ``max_tokens`` tokens, marker included.

    Args:
        text: Any text.
        max_tokens: The budget of the result, marker included.
        hint: Added to the marker (e.g. how to read the rest).

    Returns:
        ``text`` when it fits; else its longest clean-boundary prefix that fits
        next to :func:`truncation_marker`, a line break and the marker; a budget too
        small for any text gives the marker alone (cut to the budget).
    """
    total = count_tokens(text)
    if total <= max_tokens:
        return text
    room = max_tokens - count_tokens(truncation_marker(total, total, hint)) - 1
    while room > 0:
        prefix = truncate_at_boundary(text, room)
        clipped = f"{prefix}\n{truncation_marker(count_tokens(prefix), total, hint)}"
        if count_tokens(clipped) <= max_tokens:
            return clipped
        room -= max(1, count_tokens(clipped) - max_tokens)
    marker = truncation_marker(0, total, hint)
    return truncate_at_boundary(marker, max_tokens) if count_tokens(marker) > max_tokens else marker


def _content_text(content: str | list[str | dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return message_text(ToolMessage(content=content, tool_call_id="-")) or json.dumps(
        content, ensure_ascii=False, default=str
    )


def _content_tokens(message: ToolMessage) -> int:
    content = message.content
    if isinstance(content, str):
        return count_tokens(content)
    return message_tokens(ToolMessage(content=content, tool_call_id="")) - message_tokens(
        ToolMessage(content="", tool_call_id="")
    )


def tool_tokens_this_turn(messages: Sequence[BaseMessage]) -> int:
    """Content tokens of the tool results since the latest human message."""
    start = latest_human_index(messages)
    turn = messages if start is None else messages[start + 1 :]
    return sum(_content_tokens(m) for m in turn if isinstance(m, ToolMessage))


def tool_result_share(
    messages: Sequence[BaseMessage], calls_in_step: int, settings: ShortTermSettings
) -> int:
    """Tokens one tool result of the next tool step may use.

    Args:
        messages: The history the step sees (its last message is the AI message
            that made the calls).
        calls_in_step: How many tool calls that message made (they share what is
            left of the turn budget equally, so parallel calls need no coordination).
        settings: The budgets.

    Returns:
        ``min(tool_result_budget, (turn budget - tool tokens this turn) / calls)``,
        at least a marker's room.
    """
    left = settings.tool_turn_budget() - tool_tokens_this_turn(messages)
    share = left // max(1, calls_in_step)
    return max(_MIN_SHARE_TOKENS, min(settings.tool_result_budget(), share))


def budget_tool_message(result: ToolMessage, max_tokens: int, *, hint: str = "") -> ToolMessage:
    """``result`` with its content cut to ``max_tokens`` tokens and marked.

    Args:
        result: A tool result about to enter the history.
        max_tokens: Its budget (see :func:`tool_result_share`).
        hint: Added to the marker.

    Returns:
        ``result`` itself when it fits, else a copy whose content is the clipped
        text (content blocks become their text), ``artifact`` and ids unchanged.
    """
    if _content_tokens(result) <= max_tokens:
        return result
    text = _content_text(result.content)
    clipped = clip_text(
        text, max_tokens, hint=hint or "the tool result was too long for the context window"
    )
    logger.info(
        "tool result of %s cut from %d to %d tokens",
        result.name or result.tool_call_id,
        count_tokens(text),
        count_tokens(clipped),
    )
    return result.model_copy(update={"content": clipped})


def budget_step_result(
    result: ToolMessage, messages: Sequence[BaseMessage], settings: ShortTermSettings
) -> ToolMessage:
    """Budget one result of a tool step, as the graph's tool node and the middleware do.

    Args:
        result: What the tool returned.
        messages: The history the step saw (ending with the AI message whose calls
            it runs).
        settings: The budgets.

    Returns:
        ``result`` within :func:`tool_result_share` tokens.
    """
    last = messages[-1] if messages else None
    calls = len(last.tool_calls) if isinstance(last, AIMessage) and last.tool_calls else 1
    return budget_tool_message(result, tool_result_share(messages, calls, settings))


def _state_messages(state: Any) -> list[BaseMessage]:
    messages = (
        state.get("messages", []) if isinstance(state, dict) else getattr(state, "messages", [])
    )
    return list(messages) if isinstance(messages, list) else []


def budget_result(
    result: ToolMessage | Command[Any], state: Any, settings: ShortTermSettings
) -> ToolMessage | Command[Any]:
    """A tool call's result cut to its budget (``Command`` updates included).

    Args:
        result: What the tool call returned.
        state: The state the tool step saw (a dict or object with ``messages``).
        settings: The budgets.

    Returns:
        The result, its tool messages within their share of the budgets.
    """
    messages = _state_messages(state)
    if isinstance(result, ToolMessage):
        return budget_step_result(result, messages, settings)
    update = result.update
    if isinstance(update, dict) and isinstance(update.get("messages"), list):
        budgeted = [
            budget_step_result(m, messages, settings) if isinstance(m, ToolMessage) else m
            for m in update["messages"]
        ]
        return Command(
            graph=result.graph,
            update={**update, "messages": budgeted},
            resume=result.resume,
            goto=result.goto,
        )
    return result


def _clip_message(message: BaseMessage, max_tokens: int, hint: str) -> BaseMessage:
    text = message_text(message) if not isinstance(message.content, str) else message.content
    return message.model_copy(update={"content": clip_text(text, max_tokens, hint=hint)})


def clip_to_fit(
    messages: Sequence[BaseMessage], limit: int, *, extra_tokens: int = 0
) -> list[BaseMessage]:
    """Clip a call's messages until they fit ``limit`` tokens (the last resort).

    In order, each only as far as needed: system messages after the first (the
    recalled-memory block, never the system prompt or the summary header line),
    the largest tool results of the current turn, then the newest human message.
    Every clipped text ends with the ``[truncated …]`` marker; no message is removed,
    so tool calls keep their results.

    Args:
        messages: The call, system messages first.
        limit: Tokens the call may use.
        extra_tokens: Tokens sent besides ``messages`` (tool schemas).

    Returns:
        A new list (the same when it already fits). It may still exceed ``limit``
        only when the system prompt and message framing alone do.
    """
    out = list(messages)
    over = extra_tokens + count_message_tokens(out) - limit
    if over <= 0:
        return out
    human = latest_human_index(out)
    turn_start = 0 if human is None else human + 1
    candidates: list[tuple[int, str]] = [
        (i, "recalled memory was cut to fit the context window")
        for i, m in enumerate(out)
        if i > 0 and isinstance(m, SystemMessage) and not _is_summary(m)
    ]
    tools = [i for i in range(turn_start, len(out)) if isinstance(out[i], ToolMessage)]
    tools.sort(key=lambda i: -message_tokens(out[i]))
    candidates += [(i, "tool result cut to fit the context window") for i in tools]
    if human is not None:
        candidates.append((human, "the message was too long for the context window"))
    for i, hint in candidates:
        if over <= 0:
            break
        have = message_tokens(out[i])
        body = have - message_tokens(out[i].model_copy(update={"content": ""}))
        target = max(0, body - over)
        clipped = _clip_message(out[i], target, hint)
        out[i] = clipped
        over -= have - message_tokens(clipped)
    if over > 0:
        logger.warning("the call is still %d tokens over the window after clipping", over)
    else:
        logger.warning("a model call was clipped to fit the context window (%d tokens)", limit)
    return out


def _is_summary(message: BaseMessage) -> bool:
    return isinstance(message.content, str) and message.content.startswith(SUMMARY_HEADER)


__all__ = [
    "TRUNCATED_MARK",
    "budget_result",
    "budget_step_result",
    "budget_tool_message",
    "clip_text",
    "clip_to_fit",
    "tool_result_share",
    "tool_tokens_this_turn",
    "truncation_marker",
]

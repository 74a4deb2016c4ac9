"""Plain-text views of LangChain messages.

Messages carry their text either as a string or as a list of content blocks
(``{"type": "text", "text": ...}``, images, provider-specific blocks). The short-term
code reads, summarises and renders text, so it needs one way to get at it. Tool
calls live outside ``content`` (``AIMessage.tool_calls``) and are rendered here as
``name({...args...})``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

_TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})


def block_text(block: str | Mapping[str, Any]) -> str:
    """Return the text carried by one content block.

    Args:
        block: A string or a content-block dict.

    Returns:
        The block's text for text blocks (and plain strings); ``""`` for images,
        files, tool-use blocks and other non-text blocks.
    """
    if isinstance(block, str):
        return block
    if block.get("type") in _TEXT_BLOCK_TYPES:
        text = block.get("text")
        return text if isinstance(text, str) else ""
    return ""


def message_text(message: BaseMessage) -> str:
    """Return the visible text of a message.

    String content is returned as is; for list content, the text blocks are joined
    with newlines and non-text blocks are skipped.

    Args:
        message: Any LangChain message.

    Returns:
        The message's text, possibly empty (e.g. an ``AIMessage`` that only calls
        tools).
    """
    content = message.content
    if isinstance(content, str):
        return content
    parts = [block_text(block) for block in content]
    return "\n".join(part for part in parts if part)


def role_label(message: BaseMessage) -> str:
    """Return a short human-readable role name: User, AI, Tool, System.

    Args:
        message: Any LangChain message.

    Returns:
        ``"User"``, ``"AI"``, ``"Tool"``, ``"System"``, or the message's ``type``
        for other message classes.
    """
    if isinstance(message, HumanMessage):
        return "User"
    if isinstance(message, AIMessage):
        return "AI"
    if isinstance(message, ToolMessage):
        return "Tool"
    if isinstance(message, SystemMessage):
        return "System"
    return str(message.type)


def json_args(args: Any) -> str:
    """Serialise tool-call arguments as compact JSON (non-ASCII kept readable).

    Args:
        args: The ``args`` of a tool call.

    Returns:
        A JSON string; values JSON cannot encode are rendered with ``str``.
    """
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"), default=str)


def render_tool_calls(message: BaseMessage) -> str:
    """Render the tool calls of an ``AIMessage`` as ``name({...}), name({...})``.

    Args:
        message: Any message; only ``AIMessage`` tool calls are rendered.

    Returns:
        The rendered calls, or ``""`` when the message calls no tool.
    """
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return ""
    return ", ".join(f"{call['name']}({json_args(call['args'])})" for call in message.tool_calls)


def clip(text: str, max_chars: int, *, ellipsis: str = "…") -> str:
    """Cut ``text`` to at most ``max_chars`` characters, marking the cut.

    Args:
        text: Any text.
        max_chars: Character budget, ellipsis included; ``<= 0`` gives ``""``.
        ellipsis: Appended when the text was cut.

    Returns:
        ``text`` when it fits, else its prefix plus ``ellipsis``.
    """
    if max_chars <= 0:
        return ""
    if len(text) <= max_chars:
        return text
    if max_chars <= len(ellipsis):
        return text[:max_chars]
    return text[: max_chars - len(ellipsis)].rstrip() + ellipsis


def one_line(text: str) -> str:
    """Collapse all whitespace runs (newlines included) into single spaces."""
    return " ".join(text.split())


def render_message(message: BaseMessage, *, max_chars: int | None = None) -> str:
    """Render a message as one transcript line, e.g. ``User: hello``.

    AI tool calls are appended as ``[calls: name({...})]`` and tool results are
    labelled with the tool's name (``Tool(search): ...``).

    Args:
        message: Any LangChain message.
        max_chars: Optional cap of the body (after the role label).

    Returns:
        The rendered line, whitespace collapsed.
    """
    label = role_label(message)
    if isinstance(message, ToolMessage) and message.name:
        label = f"Tool({message.name})"
    body = one_line(message_text(message))
    calls = render_tool_calls(message)
    if calls:
        body = f"{body} [calls: {calls}]" if body else f"[calls: {calls}]"
    if max_chars is not None:
        body = clip(body, max_chars)
    return f"{label}: {body}"


def leading_system_count(messages: Sequence[BaseMessage]) -> int:
    """How many messages at the start of ``messages`` are ``SystemMessage`` s (the
    pinned prompt and summary, which a window or a checkpoint keeps in place)."""
    return next(
        (i for i, message in enumerate(messages) if not isinstance(message, SystemMessage)),
        len(messages),
    )


__all__ = [
    "block_text",
    "clip",
    "json_args",
    "leading_system_count",
    "message_text",
    "one_line",
    "render_message",
    "render_tool_calls",
    "role_label",
]

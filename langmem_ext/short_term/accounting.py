"""Token accounting for message lists.

Counts what a chat provider is billed for, close enough to budget a context window:
the text of every message (string or content blocks), the names and JSON arguments
of AI tool calls, tool-call ids, message names, and a small fixed overhead per
message for the role and separators (OpenAI documents 3-4 tokens). Text is counted
with :func:`langmem_ext.core.tokens.count_tokens` (``cl100k_base``, or a CJK-aware
estimate when the encoding is unavailable).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.core.tokens import count_tokens
from langmem_ext.short_term.content import json_args

logger = logging.getLogger(__name__)

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens charged per message for its role and framing."""
NAME_OVERHEAD_TOKENS = 1
"""Extra tokens charged when a message carries a ``name``."""
TOOL_CALL_OVERHEAD_TOKENS = 3
"""Extra tokens charged per tool call (framing of id, name and arguments)."""
MEDIA_BLOCK_TOKENS = 85
"""Flat charge of one image / audio / file block (the low-detail image cost)."""

_TEXT_TYPES = frozenset({"text", "input_text", "output_text"})
_MEDIA_TYPES = frozenset(
    {"image", "image_url", "input_image", "file", "input_file", "audio", "input_audio", "video"}
)
_TOOL_USE_TYPES = frozenset({"tool_use", "tool_call", "function_call"})


def _block_tokens(block: str | Mapping[str, Any], tool_call_ids: frozenset[str]) -> int:
    if isinstance(block, str):
        return count_tokens(block)
    kind = block.get("type")
    if kind in _TEXT_TYPES:
        text = block.get("text")
        return count_tokens(text) if isinstance(text, str) else 0
    if kind in ("thinking", "reasoning"):
        text = block.get(str(kind)) or block.get("text") or ""
        return count_tokens(text) if isinstance(text, str) else 0
    if kind in _MEDIA_TYPES:
        return MEDIA_BLOCK_TOKENS
    if kind in _TOOL_USE_TYPES and block.get("id") in tool_call_ids:
        return 0  # the same call is counted from ``AIMessage.tool_calls``
    return count_tokens(json.dumps(dict(block), ensure_ascii=False, default=str))


def message_tokens(message: BaseMessage) -> int:
    """Count the tokens of one message.

    Args:
        message: Any LangChain message.

    Returns:
        Tokens of the content (all blocks), tool calls (name + JSON args + id),
        tool-call id of a ``ToolMessage``, the name, plus the per-message overhead.
    """
    tool_call_ids: frozenset[str] = frozenset()
    total = MESSAGE_OVERHEAD_TOKENS
    if isinstance(message, AIMessage) and message.tool_calls:
        tool_call_ids = frozenset(c.get("id") or "" for c in message.tool_calls) - {""}
        for call in message.tool_calls:
            total += TOOL_CALL_OVERHEAD_TOKENS
            total += count_tokens(call["name"]) + count_tokens(json_args(call["args"]))
            total += count_tokens(call.get("id") or "")
    content = message.content
    if isinstance(content, str):
        total += count_tokens(content)
    else:
        total += sum(_block_tokens(block, tool_call_ids) for block in content)
    if isinstance(message, ToolMessage):
        total += count_tokens(message.tool_call_id or "")
    if message.name:
        total += count_tokens(message.name) + NAME_OVERHEAD_TOKENS
    return total


def count_message_tokens(messages: Sequence[BaseMessage]) -> int:
    """Count the tokens a list of messages costs in a context window.

    Args:
        messages: The messages, in any order.

    Returns:
        The sum of :func:`message_tokens` over ``messages`` (0 for an empty list).

    Example:
        .. code-block:: python

            from langchain_core.messages import HumanMessage
            from langmem_ext.short_term.accounting import count_message_tokens

            count_message_tokens([HumanMessage("你好，我叫李雷")])  # ~ 12
    """
    return sum(message_tokens(m) for m in messages)


def tool_schema_tokens(tools: Sequence[Any]) -> int:
    """Count the tokens of the tool definitions bound to a model.

    Providers send each bound tool's name, description and JSON argument schema
    with every call; this counts each tool's OpenAI function schema as JSON, the
    form most providers bill.

    Args:
        tools: LangChain tools, functions, pydantic classes or schema dicts (what
            ``bind_tools`` accepts).

    Returns:
        The sum of the tokens of each tool's schema JSON (0 for no tools).
    """
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return sum(
        count_tokens(json.dumps(convert_to_openai_tool(t), ensure_ascii=False)) for t in tools
    )


def context_ratio(tokens: int, window: int) -> float:
    """Share of a context window that ``tokens`` fill.

    Args:
        tokens: Tokens used (``>= 0``).
        window: The model's context window in tokens (``> 0``).

    Returns:
        ``tokens / window`` (may exceed 1.0 when over the window).

    Raises:
        InvalidInputError: If ``window <= 0`` or ``tokens < 0``.
    """
    if window <= 0:
        raise InvalidInputError(f"context window must be a positive token count, got {window}")
    if tokens < 0:
        raise InvalidInputError(f"token count cannot be negative, got {tokens}")
    return tokens / window


__all__ = [
    "MEDIA_BLOCK_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "NAME_OVERHEAD_TOKENS",
    "TOOL_CALL_OVERHEAD_TOKENS",
    "context_ratio",
    "count_message_tokens",
    "message_tokens",
    "tool_schema_tokens",
]

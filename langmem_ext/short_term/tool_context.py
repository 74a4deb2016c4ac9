"""Tool-result context for the next turn.

The results of a turn's tool calls (a web search, a screenshot's text, a file)
helped that turn's answer and may matter for the next one, but they are too
temporary to store as memory and too long to keep in the window. After a turn with
tool calls they are condensed into one or two sentences that the next turn sees in
its own labelled part of the memory block, and then dropped.

With a chat model the condensing is one small call (off the reply path); without
one, or when it fails, the first lines of each result are kept within a small
token budget. The memory tools' own results are left out: what they return is
memory already. Pure apart from the model call.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langmem_ext.core.tokens import count_tokens, truncate_by_tokens
from langmem_ext.short_term.content import message_text

logger = logging.getLogger(__name__)

TOOL_CONTEXT_TOKENS = 120
"""Budget of the context carried to the next turn."""
_PER_RESULT_LINES = 3

TOOL_CONTEXT_PROMPT = (
    "Condense the tool results below into one or two sentences of context that the "
    "assistant may need in the user's next message: the facts found, names, numbers, "
    "what is still open. No preamble; write in the user's language."
)


def tool_results_of_turn(
    messages: Sequence[BaseMessage], *, skip: Collection[str] = ()
) -> list[ToolMessage]:
    """The tool results after the last user message, except tools named in ``skip``."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    return [
        m
        for m in messages[start + 1 :]
        if isinstance(m, ToolMessage) and (m.name or "") not in skip and message_text(m).strip()
    ]


def first_lines(results: Sequence[ToolMessage], max_tokens: int = TOOL_CONTEXT_TOKENS) -> str:
    """The deterministic context: each result's first non-empty lines, labelled with
    its tool, within ``max_tokens`` in all (later results get what is left)."""
    parts: list[str] = []
    left = max_tokens
    for r in results:
        lines = [ln.strip() for ln in message_text(r).splitlines() if ln.strip()]
        text = f"{r.name or 'tool'}: " + " ".join(lines[:_PER_RESULT_LINES])
        share = max(left // max(1, len(results) - len(parts)), 1)
        piece = truncate_by_tokens(text, share)
        parts.append(piece)
        left -= count_tokens(piece)
        if left <= 0:
            break
    return " | ".join(parts)


def condense_tool_results(
    results: Sequence[ToolMessage],
    model: BaseChatModel | None,
    *,
    max_tokens: int = TOOL_CONTEXT_TOKENS,
) -> str:
    """One or two sentences of context from ``results`` for the next turn.

    Args:
        results: The turn's tool results.
        model: Writes the sentences; ``None`` (or a failure, logged) keeps the
            first lines of each result instead.
        max_tokens: The context's budget.

    Returns:
        The context ("" when there are no results).
    """
    if not results:
        return ""
    if model is not None:
        listing = "\n\n".join(
            f"[{r.name or 'tool'}]\n{truncate_by_tokens(message_text(r), 1000)}" for r in results
        )
        try:
            reply = model.invoke([SystemMessage(TOOL_CONTEXT_PROMPT), HumanMessage(listing)])
            text = message_text(reply).strip()
            if text:
                return truncate_by_tokens(text, max_tokens)
        except Exception as e:  # never let the context step break a turn
            logger.warning("tool-result context: model failed (%s); keeping first lines", e)
    return first_lines(results, max_tokens)


__all__ = [
    "TOOL_CONTEXT_PROMPT",
    "TOOL_CONTEXT_TOKENS",
    "condense_tool_results",
    "first_lines",
    "tool_results_of_turn",
]

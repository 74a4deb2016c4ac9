"""What a recall searches for, and what it shows when search is unavailable (seed 000).

Shared by the graph's ``preflight_recall`` and the middleware's recall.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage, HumanMessage

from langmem_ext.retrieval.followup import contextual_query
from langmem_ext.short_term.content import message_text

if TYPE_CHECKING:
    from langmem_ext.config import Settings
    from langmem_ext.memory.service import Memory

logger = logging.getLogger(__name__)


def recall_query(messages: Sequence[BaseMessage], settings: Settings) -> str:
    """The recall query of a turn: the latest user message, with the previous user
    turns (within ``injection.recent_history_tokens``) when it is a short follow-up
    such as "那它呢？" (:func:`~langmem_ext.retrieval.followup.contextual_query`)."""
    said = [message_text(m).strip() for m in messages if isinstance(m, HumanMessage)]
    if not said:
        return ""
    budget = settings.injection.recent_history_tokens
    return contextual_query(said[-1], said[:-1], max_tokens=budget, gate=settings.gate)


def static_memory(memory: Memory, scope: str, max_chars: int, err: Exception) -> str:
    """Seed 000's static fallback when search is unavailable: the beginning (at most
    ``max_chars`` characters) of the scope's long-term Markdown file; one warning."""
    text = memory.long_term_text(scope=scope)[: max(max_chars, 0)].strip()
    logger.warning(
        "memory search unavailable (%s); injecting the first %d characters of the "
        "scope's long-term memory file instead",
        err,
        len(text),
    )
    return text


__all__ = ["recall_query", "static_memory"]

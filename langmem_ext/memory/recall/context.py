"""The one recall of a turn: what every surface puts in front of the model.

:func:`recall_context` is the routine the memory graph's ``preflight_recall``,
:class:`~langmem_ext.MemoryMiddleware` (and so ``create_agent``) and the server
(through the graph) call once per user turn. In order:

1. the profile's safety fields (every turn, whatever the gate says), and for a
   question about a safety topic, each asked field with every memory stating it,
   first in the block;
2. the recall query (the latest user message, with earlier ones for a short
   follow-up) behind the adaptive gate; a recall intent ("上次", "yesterday") forces
   the search and narrows it to its time range;
3. the hybrid search (or, when search is unavailable, the beginning of the
   long-term file);
4. core memories, always;
5. on a session's first turn, today's and yesterday's daily notes;
6. what happened to pending saves and the last turn's tool results;

rendered into one memory block (:func:`~langmem_ext.memory.recall.block.render_memory_block`).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage

from langmem_ext.core.errors import LangmemError
from langmem_ext.core.tokens import truncate_by_tokens
from langmem_ext.memory.lifecycle.operations import record_recall
from langmem_ext.memory.profile import UNREADABLE_SAFETY
from langmem_ext.memory.recall.block import render_memory_block
from langmem_ext.memory.types import cite
from langmem_ext.retrieval.followup import contextual_query
from langmem_ext.retrieval.gate import should_retrieve
from langmem_ext.retrieval.intent import detect_recall_intent
from langmem_ext.short_term.content import message_text

if TYPE_CHECKING:
    from langmem_ext.core.config import Settings
    from langmem_ext.memory.safety.links import SafetySection
    from langmem_ext.memory.service import Memory

logger = logging.getLogger(__name__)

Deferred = Callable[[Callable[[], None]], None]
"""Runs a bookkeeping job (the recalled memories' access marks), now or later."""


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
    """The static fallback when search is unavailable: the beginning (at most
    ``max_chars`` characters) of the scope's long-term Markdown file; one warning."""
    text = memory.long_term_text(scope=scope)[: max(max_chars, 0)].strip()
    logger.warning(
        "memory search unavailable (%s); injecting the first %d characters of the "
        "scope's long-term memory file instead",
        err,
        len(text),
    )
    return text


def safety_context(memory: Memory, scope: str, max_tokens: int) -> str:
    """The profile's safety block for every model call (``""`` when the profile has
    none); when the profile cannot be read, a block that says so, never nothing."""
    try:
        return memory.safety_block(scope=scope, max_tokens=max_tokens)
    except LangmemError as err:  # e.g. the lock timed out: say so rather than drop it silently
        logger.error("the profile's safety fields could not be read: %s", err)
        return UNREADABLE_SAFETY


def safety_sections(
    memory: Memory, query: str, scope: str, max_tokens_per_hit: int
) -> list[SafetySection]:
    """The safety fields a question asks about and the memories stating them, each cut
    to ``max_tokens_per_hit`` ([] when it asks about none; an error is logged and the
    turn goes on with the profile's safety block, which every call carries)."""
    if not query:
        return []
    try:
        sections = memory.safety_recall(query, scope=scope)
    except (LangmemError, sqlite3.Error) as err:
        logger.error("the memories stating the asked safety fields could not be read: %s", err)
        return []
    for sec in sections:
        sec.memories = [
            m.model_copy(update={"text": truncate_by_tokens(m.text, max_tokens_per_hit)})
            for m in sec.memories
        ]
    return sections


@dataclass(frozen=True)
class RecallContext:
    """What one turn's recall puts in front of the model.

    Attributes:
        block: The memory block (``""`` when there is nothing to show).
        safety: The profile's safety block, for the system prompt of every call.
        recalled: The hits shown (``id``, ``text``, ``score``, ``citation``,
            ``anchor``, ``created_at``, ``source``), best first.
        searched: Whether memory was searched for this turn.
    """

    block: str
    safety: str
    recalled: list[dict[str, Any]] = field(default_factory=list)
    searched: bool = False


def recall_context(
    memory: Memory,
    messages: Sequence[BaseMessage],
    *,
    scope: str,
    first_turn: bool = False,
    notes: Sequence[str] = (),
    tool_context: str | None = None,
    now: datetime | None = None,
    settings: Settings | None = None,
    gate: bool = True,
    k: int | None = None,
    max_tokens_per_hit: int | None = None,
    defer: Deferred | None = None,
) -> RecallContext:
    """Recall for the latest user message of ``messages``: the one memory block.

    Args:
        memory: The memory service.
        messages: The conversation so far (its latest human message is the turn's).
        scope: The caller's scope.
        first_turn: The session's first turn: today's and yesterday's daily notes
            join (within ``injection.first_turn_daily_chars``).
        notes: What happened to pending saves this turn.
        tool_context: The last turn's tool results, condensed (this turn only).
        now: The local time of the turn (default now): the recall intent's dates
            and the daily notes' days.
        settings: Settings to use instead of ``memory.settings``.
        gate: Ask the adaptive gate whether to search; ``False`` searches every
            message.
        k: Hits to show (default ``injection.top_k``).
        max_tokens_per_hit: Cap of each memory's text (default
            ``injection.max_tokens_per_hit``).
        defer: Runs the access marks of the recalled memories (default: at once).
            The graph passes its background writer.

    Returns:
        The memory block, the safety block and the hits shown.
    """
    s = settings or memory.settings
    inj = s.injection
    cap = max_tokens_per_hit or inj.max_tokens_per_hit
    when = now or datetime.now().astimezone()
    safety = safety_context(memory, scope, inj.profile_tokens)
    query = recall_query(messages, s)
    safety_first = safety_sections(memory, query, scope, cap)  # gate or not
    recalled: list[dict[str, Any]] = []
    static = ""
    searched = forced = False
    if query:
        decision = should_retrieve(query, s.gate)
        intent = detect_recall_intent(query, when)
        searched = not gate or decision.retrieve or intent is not None
        forced = (decision.forced and decision.retrieve) or intent is not None
        if searched:
            try:
                hits = memory.search(query, scope=scope, k=k or inj.top_k, intent=intent)
            except (LangmemError, sqlite3.Error) as err:
                hits, static = [], static_memory(memory, scope, inj.static_memory_chars, err)
            recalled = [
                {
                    "id": h.id,
                    "text": truncate_by_tokens(h.text, cap),
                    "score": h.score,
                    "citation": cite(h),
                    "anchor": h.anchor,
                    "created_at": h.created_at.isoformat(),
                    "source": h.source,
                }
                for h in hits
            ]
            _mark_recalled(memory, scope, [h.id for h in hits if h.source == "memory"], defer)
    core: list[dict[str, Any]] = []
    if inj.always_core:
        seen = {h["id"] for h in recalled}
        core = [
            {
                "id": e.id,
                "text": truncate_by_tokens(e.text, cap),
                "citation": cite(e),
                "anchor": e.anchor,
            }
            for e in memory.list(scope=scope, category="core")
            if e.id not in seen
        ]
    daily: list[tuple[str, str]] = []
    if first_turn:
        budget = inj.first_turn_daily_chars
        for day in (when.date(), when.date() - timedelta(days=1)):
            text = memory.daily_notes(day, scope=scope).strip()
            if text and budget > 0:
                daily.append((day.isoformat(), text[:budget]))
                budget -= len(text[:budget])
    block = render_memory_block(
        safety=safety_first,
        core=core,
        recalled=recalled,
        daily=daily,
        notes=notes,
        tool_context=tool_context,
        static=static,
        found_nothing=forced and not static,
    )
    return RecallContext(block=block, safety=safety, recalled=recalled, searched=searched)


def _mark_recalled(memory: Memory, scope: str, ids: Sequence[str], defer: Deferred | None) -> None:
    """Mark the recalled memories accessed (their ``last_access``), through ``defer``."""
    if not ids:
        return
    at = time.time()

    def record() -> None:
        record_recall(memory, ids, scope=scope, at=at)

    if defer is None:
        record()
    else:
        defer(record)


__all__ = [
    "RecallContext",
    "recall_context",
    "recall_query",
    "safety_context",
    "safety_sections",
    "static_memory",
]

"""The silent pre-compaction flush, shared by the graph, the Session API
and the daily archive.

Before a checkpoint drops old messages from the context, durable facts in them
are kept: by the model in one silent turn (it may only call ``memory_save`` and
must answer ``NO_REPLY``), or, with no model or when the model fails, by the
deterministic extractor. Each fact is written at once to the scope's daily notes,
marked ``[unconfirmed]``, and its promotion to long-term memory waits as a pending
save (:meth:`Memory.save_found <langmem_ext.Memory.save_found>`): when nobody
answers, the fact is still in the notes. Nothing of the flush turn enters the
history. The function returns only once every note and save is committed, so a
checkpoint started after it cannot race it.

Every flush call fits the context window like every other model call: a history
longer than one call's budget (``context_window - reserved_output_tokens``, less
the ``memory_save`` schema, the flush instruction and room for the save rounds) is
read in consecutive slices, one silent turn each, never splitting a tool call from
its results; a single message longer than a slice is clipped with the
``[truncated …]`` marker (the deterministic fallback still reads it whole).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.core.errors import LangmemError
from langmem_ext.memory.service import Memory
from langmem_ext.short_term.accounting import (
    count_message_tokens,
    message_tokens,
    tool_schema_tokens,
)
from langmem_ext.short_term.budget import clip_text
from langmem_ext.short_term.flush_prompt import extract_candidate_facts, flush_message, is_no_reply
from langmem_ext.short_term.validity import atomic_spans

logger = logging.getLogger(__name__)

MAX_FLUSH_ROUNDS = 4
MAX_FALLBACK_FACTS = 40


@dataclass
class FlushResult:
    """What a flush kept: each fact noted in the daily notes, its save pending.

    Attributes:
        pending_ids: The pending saves made (none confirmed).
        used_fallback: The deterministic extractor ran.
        error: The model's error, when it failed.
        at: When the facts were said (their notes' day).
        source: The notes' and saves' source.
    """

    pending_ids: list[str] = field(default_factory=list)
    used_fallback: bool = False
    error: str | None = None
    at: float = field(default_factory=time.time)
    source: str = "flush"
    thread_id: str | None = None
    """The conversation the saves are proposed in."""


def _save(memory: Memory, scope: str, text: str, category: str, result: FlushResult) -> str:
    cat = category if category in ("core", "fact") else "fact"
    try:
        p = memory.save_found(
            text,
            scope=scope,
            category=cat,
            source=result.source,
            created_at=result.at,
            thread_id=result.thread_id,
        )
    except LangmemError as e:
        return f"Not saved: {e}"
    if p is None:
        return "Already kept; nothing to do."
    result.pending_ids.append(p.id)
    return f"Saved as pending {p.id} (noted in today's notes until confirmed)."


def _fallback(
    memory: Memory, scope: str, messages: Sequence[BaseMessage], result: FlushResult
) -> None:
    result.used_fallback = True
    facts = extract_candidate_facts(messages, max_facts=MAX_FALLBACK_FACTS)
    logger.info("pre-compaction flush: extractive fallback proposes %d facts", len(facts))
    for fact in facts:
        _save(memory, scope, fact, "fact", result)


def _round_reserve(settings: ShortTermSettings) -> int:
    """Tokens kept free in a flush call for its save rounds (calls and their results)."""
    return max(64, min(1000, settings.call_budget() // 8))


def _clip_span(span: Sequence[BaseMessage], limit: int) -> list[BaseMessage]:
    """A span too long for one slice, each message's text cut to its share of ``limit``."""
    share = max(1, limit // max(1, len(span)))
    out: list[BaseMessage] = []
    for m in span:
        if message_tokens(m) <= share or not isinstance(m.content, str):
            out.append(m)
            continue
        body = share - message_tokens(m.model_copy(update={"content": ""}))
        hint = "the rest of this message was cut from the flush turn"
        out.append(m.model_copy(update={"content": clip_text(m.content, max(0, body), hint=hint)}))
    return out


def flush_slices(history: Sequence[BaseMessage], limit: int) -> list[list[BaseMessage]]:
    """Split ``history`` into consecutive slices of at most ``limit`` tokens each.

    A tool call stays in one slice with its results (the spans of
    :func:`~langmem_ext.short_term.validity.atomic_spans`); a span longer than
    ``limit`` on its own becomes a slice with its messages clipped.

    Args:
        history: The messages the flush reads (no system messages).
        limit: Tokens one slice may hold.

    Returns:
        The slices, in order; together they hold every message of ``history``.
    """
    slices: list[list[BaseMessage]] = []
    current: list[BaseMessage] = []
    used = 0
    for start, end in atomic_spans(history):
        span = list(history[start:end])
        tokens = count_message_tokens(span)
        if current and used + tokens > limit:
            slices.append(current)
            current, used = [], 0
        if tokens > limit:
            span = _clip_span(span, limit)
            tokens = count_message_tokens(span)
        current.extend(span)
        used += tokens
    if current:
        slices.append(current)
    return slices


def flush_to_pending(
    memory: Memory,
    scope: str,
    messages: Sequence[BaseMessage],
    model: BaseChatModel | None,
    thread_id: str | None = None,
    *,
    at: float | None = None,
    source: str = "flush",
) -> FlushResult:
    """Keep the durable facts of ``messages``, silently: each one noted at once in the
    daily notes (marked ``[unconfirmed]``), its long-term save pending.

    A fact proposed or stored before is not kept twice.

    Args:
        memory: Where the notes and saves go.
        scope: Whose memory.
        messages: The history about to be compacted.
        model: The chat model for the silent turn, or ``None`` for the fallback.
        thread_id: The conversation the saves are proposed in (its next answer asks).
        at: When the facts were said (default now): the day of their notes.
        source: The source of the notes and saves (``flush``; ``archive`` for the
            daily archive).

    Returns:
        The pending ids created, and whether the fallback ran.
    """
    result = FlushResult(at=time.time() if at is None else at, source=source, thread_id=thread_id)
    history = [m for m in messages if not isinstance(m, SystemMessage)]
    if model is None:
        _fallback(memory, scope, history, result)
        return result

    def memory_save(text: str, category: str = "fact") -> str:
        """Save one durable fact, decision, preference or commitment (pending)."""
        return _save(memory, scope, text, category, result)

    tool = StructuredTool.from_function(memory_save, name="memory_save")
    settings = memory.settings.short_term
    call_limit = settings.call_budget() - tool_schema_tokens([tool])
    slice_limit = call_limit - message_tokens(flush_message()) - _round_reserve(settings)
    slices = flush_slices(history, max(1, slice_limit))
    if len(slices) > 1:
        logger.info("pre-compaction flush reads the history in %d slices", len(slices))
    try:
        bound = model.bind_tools([tool])
        for part in slices:
            _flush_turn(bound, [*part, flush_message()], call_limit, memory, scope, result)
    except Exception as e:  # the model failed: fall back, never drop anything
        logger.warning("flush model turn failed (%s); using the extractive fallback", e)
        result.error = str(e)
        _fallback(memory, scope, history, result)
        return result
    if not result.pending_ids:
        # The model saved nothing: the deterministic extractor gets a say (its
        # proposals are pending, so the user still decides).
        _fallback(memory, scope, history, result)
    return result


def _flush_turn(
    bound: Any,
    convo: list[BaseMessage],
    call_limit: int,
    memory: Memory,
    scope: str,
    result: FlushResult,
) -> None:
    """One silent turn over ``convo``: save rounds until ``NO_REPLY`` or the budget ends."""
    for _ in range(MAX_FLUSH_ROUNDS):
        if count_message_tokens(convo) > call_limit:
            logger.info("flush turn stopped: its save rounds filled the call budget")
            break
        reply = bound.invoke(convo)
        if not isinstance(reply, AIMessage):
            break
        calls = reply.tool_calls
        if not calls:
            if not is_no_reply(reply):
                logger.info("flush turn answered with text instead of NO_REPLY; discarded")
            break
        convo.append(reply)
        for call in calls:
            args = call.get("args") or {}
            out = (
                _save(
                    memory,
                    scope,
                    str(args.get("text", "")),
                    str(args.get("category", "fact")),
                    result,
                )
                if call.get("name") == "memory_save"
                else "Only memory_save is available now."
            )
            convo.append(ToolMessage(out, tool_call_id=str(call.get("id") or "")))


__all__ = ["FlushResult", "flush_slices", "flush_to_pending"]

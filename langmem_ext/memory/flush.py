"""The silent pre-compaction flush (seed 003), shared by the graph and the Session API.

Before a checkpoint drops old messages from the context, durable facts in them
are proposed as pending saves: by the model in one silent turn (it may only call
``memory_save`` and must answer ``NO_REPLY``), or, with no model or when the model
fails, by the deterministic extractor. Nothing of the flush turn enters the
history. The function returns only once every save is committed to the ledger,
so a checkpoint started after it cannot race it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool

from langmem_ext.errors import LangmemError
from langmem_ext.memory.service import Memory
from langmem_ext.short_term.flush import extract_candidate_facts, flush_message, is_no_reply
from langmem_ext.workspace.markdown import normalise_text

logger = logging.getLogger(__name__)

MAX_FLUSH_ROUNDS = 4
MAX_FALLBACK_FACTS = 40


@dataclass
class FlushResult:
    """What a flush saved (all pending, none confirmed)."""

    pending_ids: list[str] = field(default_factory=list)
    used_fallback: bool = False
    error: str | None = None


def _already_known(memory: Memory, scope: str, text: str) -> bool:
    """Proposed before (pending, confirmed or rejected), or already stored verbatim."""
    key = normalise_text(text)
    ws = memory.workspace
    if ws.ledger.query("SELECT 1 FROM pending WHERE scope = ? AND text = ? LIMIT 1", (scope, key)):
        return True
    return ws.keyword.has_text(scope, key)


def _save(memory: Memory, scope: str, text: str, category: str, result: FlushResult) -> str:
    if _already_known(memory, scope, text):
        return "Already pending; nothing to do."
    try:
        cat = category if category in ("core", "fact") else "fact"
        p = memory.save(text, scope=scope, category=cat, source="flush")
    except LangmemError as e:
        return f"Not saved: {e}"
    result.pending_ids.append(p.id)
    return f"Saved as pending {p.id}."


def _fallback(
    memory: Memory, scope: str, messages: Sequence[BaseMessage], result: FlushResult
) -> None:
    result.used_fallback = True
    facts = extract_candidate_facts(messages, max_facts=MAX_FALLBACK_FACTS)
    logger.info("pre-compaction flush: extractive fallback proposes %d facts", len(facts))
    for fact in facts:
        _save(memory, scope, fact, "fact", result)


def flush_to_pending(
    memory: Memory,
    scope: str,
    messages: Sequence[BaseMessage],
    model: BaseChatModel | None,
) -> FlushResult:
    """Propose the durable facts of ``messages`` as pending saves, silently.

    Args:
        memory: Where the saves go (pending, ``source="flush"``).
        scope: Whose memory.
        messages: The history about to be compacted.
        model: The chat model for the silent turn, or ``None`` for the fallback.

    Returns:
        The pending ids created, and whether the fallback ran.
    """
    result = FlushResult()
    history = [m for m in messages if not isinstance(m, SystemMessage)]
    if model is None:
        _fallback(memory, scope, history, result)
        return result

    def memory_save(text: str, category: str = "fact") -> str:
        """Save one durable fact, decision, preference or commitment (pending)."""
        return _save(memory, scope, text, category, result)

    tool = StructuredTool.from_function(memory_save, name="memory_save")
    try:
        bound = model.bind_tools([tool])
        convo: list[BaseMessage] = [*history, flush_message()]
        for _ in range(MAX_FLUSH_ROUNDS):
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


__all__ = ["FlushResult", "flush_to_pending"]

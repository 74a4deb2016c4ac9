"""The pre-compaction flush.

Before a checkpoint condenses old messages, the agent gets one silent turn: a firm
prompt tells it to call ``memory_save`` for every durable fact, decision and
preference, then to answer exactly ``NO_REPLY`` — which is never shown to the
user. Without a model (or when the model saves nothing),
:func:`extract_candidate_facts` finds the durable statements in the user's own
messages deterministically, in English and Chinese.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.language.sentences import is_question, normalize_quotes, split_sentences
from langmem_ext.language.summary_cues import FIRST_PERSON_RE
from langmem_ext.short_term.content import clip, message_text
from langmem_ext.short_term.extractive import cues, has_name, item_key

logger = logging.getLogger(__name__)

NO_REPLY = "NO_REPLY"
"""The exact answer that ends a flush turn."""

FLUSH_PROMPT = f"""\
[memory flush — not from the user; do not mention it]
This conversation is about to be compacted: older messages will be replaced by a short summary and their details will be gone from your context.
Before that happens, call the `memory_save` tool once for EACH durable item in this conversation that is not saved yet:
- facts about the user and the people, places and things in their life (names, dates, numbers, contacts, allergies, addresses);
- decisions that were made, with the reason if given;
- preferences, likes and dislikes, and standing instructions;
- commitments, deadlines and open tasks.
One item per call, a short self-contained sentence in the user's language; copy names, numbers and dates exactly. Skip small talk, greetings, questions and anything already saved.
Do not answer the user and do not explain. When you are done — or if there is nothing to save — reply with exactly {NO_REPLY} and nothing else.
（压缩前记忆整理：对每条尚未保存的长期事实、决定、偏好、待办各调用一次 memory_save，原样保留姓名、数字和日期；完成后只回复 {NO_REPLY}。）"""
"""The flush instruction, sent as the last (human-role) message of the silent turn."""

_NO_REPLY_RE = re.compile(rf"^[\s`'\"*_(\[]*{NO_REPLY}[\s`'\"*_.!。)\]]*$")


def flush_message() -> HumanMessage:
    """The message that starts a flush turn.

    Returns:
        A ``HumanMessage`` carrying :data:`FLUSH_PROMPT` (human role so strict
        providers accept it at the end of the history).
    """
    return HumanMessage(FLUSH_PROMPT)


def is_flush_message(message: BaseMessage) -> bool:
    """Whether ``message`` is the flush instruction (to keep it out of transcripts)."""
    return isinstance(message, HumanMessage) and message_text(message).strip() == FLUSH_PROMPT


def is_no_reply(message: BaseMessage | str) -> bool:
    """Whether a reply is the silent ``NO_REPLY`` that ends a flush turn.

    Tolerates surrounding whitespace, quotes, backticks, bold markers and a final
    period; anything else in the text means a real reply.

    Args:
        message: A message (usually an ``AIMessage``) or its text.

    Returns:
        True for ``NO_REPLY`` alone; False for other text, and for an
        ``AIMessage`` that is still calling tools with no text.
    """
    text = message if isinstance(message, str) else message_text(message)
    if not isinstance(message, str) and isinstance(message, AIMessage) and not text.strip():
        return False
    return bool(_NO_REPLY_RE.match(text))


def should_flush(should_checkpoint: bool, settings: ShortTermSettings) -> bool:
    """Whether to run the flush turn now: a checkpoint is due and flushing is on.

    Args:
        should_checkpoint: ``ContextPlan.should_checkpoint`` of this turn.
        settings: ``flush_before_checkpoint`` switches the flush off.

    Returns:
        True when the silent flush turn should run before the checkpoint.
    """
    return should_checkpoint and settings.flush_before_checkpoint


def _fact_score(sentence: str) -> float:
    """Score a user sentence as a durable fact; 0 means not a candidate."""
    cue = cues(sentence)
    first_person = bool(FIRST_PERSON_RE.search(normalize_quotes(sentence)))
    score = 0.0
    if cue.durable:
        score += 3.0
    if cue.decision:
        score += 3.0
    if cue.todo and (cue.date or first_person):
        score += 2.0
    if cue.date:
        score += 2.0 if (first_person or cue.durable or cue.decision or cue.todo) else 1.0
    elif cue.number and first_person:
        score += 1.0
    if score and has_name(sentence):
        score += 0.5
    return score


def extract_candidate_facts(
    messages: Sequence[BaseMessage], *, max_facts: int = 20, max_chars: int = 300
) -> list[str]:
    """Find durable facts in the user's messages, without a model.

    Candidates are user sentences (never questions, never the flush prompt) with
    preferences and identity (我喜欢 / 我不喜欢 / 我讨厌 / 我是 / 我叫 / 我住在 /
    我的…是 / 记住 / I like / I love / I hate / my name is / I live in / I'm
    allergic / my … is / I work at / remember that), decisions (决定 / decided /
    we will), and dates or numbers about the speaker. The strongest ``max_facts``
    are returned (newer first on ties), in conversation order, verbatim.

    Args:
        messages: The conversation, oldest first.
        max_facts: Most facts returned.
        max_chars: Longest fact; longer sentences are clipped with ``…``.

    Returns:
        The candidate facts, deduplicated.

    Example:
        .. code-block:: python

            extract_candidate_facts([HumanMessage("我叫李雷，我住在杭州。今天天气不错。")])
            # ['我叫李雷，我住在杭州。']
    """
    if max_facts <= 0:
        return []
    candidates: dict[str, tuple[float, int, str]] = {}
    order = 0
    for message in messages:
        if not isinstance(message, HumanMessage) or is_flush_message(message):
            continue
        for sentence in split_sentences(message_text(message)):
            order += 1
            if is_question(sentence):
                continue
            score = _fact_score(sentence)
            if score <= 0:
                continue
            key = item_key(sentence)
            if not key:
                continue
            previous = candidates.get(key)
            best = max(score, previous[0]) if previous else score
            candidates[key] = (best, order, clip(sentence, max_chars))
    ranked = sorted(candidates.values(), key=lambda c: (-c[0], -c[1]))[:max_facts]
    facts = [text for _, _, text in sorted(ranked, key=lambda c: c[1])]
    if facts:
        logger.info("extracted %d candidate facts without a model (flush fallback)", len(facts))
    return facts


__all__ = [
    "FLUSH_PROMPT",
    "NO_REPLY",
    "extract_candidate_facts",
    "flush_message",
    "is_flush_message",
    "is_no_reply",
    "should_flush",
]

"""Follow-up questions are searched with the turns before them.

"那它呢？" or "and where did it come from?" names nothing a memory could match: what
it asks about is in the user's previous turn. A recall query
builder may be given the recent history (``injection.recent_history_tokens``, 1000 tokens);
here it is used only when the latest message is a follow-up, so a self-contained
question is searched as it is.

A message is a **follow-up** when it is short (a meaningful length, CJK characters
counting double, of at most :data:`FOLLOWUP_MAX_LENGTH`), is not small talk the gate
skips (greeting, acknowledgement, command, emoji), and either

- refers back: a pronoun or demonstrative (it / he / him / she / they / that / this
  …, 它 / 他 / 她 / 其 / 那个 / 这个 …), opens with "and / what about / how about"
  or 那 / 还有, or ends with 呢; or
- is a very short question (at most :data:`SHORT_QUESTION_LENGTH`, with ``?`` / ``？``:
  "why?", "多少钱？").

The search query is then the message followed by up to
:data:`MAX_CONTEXT_TURNS` previous user turns (newest first within the token
budget, shown oldest first), so the message itself comes first and survives the
``max_query_chars`` cut.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from langmem_ext.core.config import GateSettings
from langmem_ext.core.tokens import count_tokens, truncate_by_tokens
from langmem_ext.retrieval.gate import should_retrieve
from langmem_ext.retrieval.noise import meaningful_length

FOLLOWUP_MAX_LENGTH = 30
"""Longest follow-up (meaningful length: 30 letters, or 15 CJK characters)."""
SHORT_QUESTION_LENGTH = 12
"""A question at most this long is a follow-up even without a pronoun."""
MAX_CONTEXT_TURNS = 2
"""Previous user turns a follow-up's query may carry."""

_NOT_FOLLOWUP = {
    "empty",
    "heartbeat",
    "command",
    "emoji only",
    "punctuation only",
    "greeting",
    "acknowledgement",
}
_ANAPHOR_EN = re.compile(
    r"\b(?:it|its|he|him|his|she|her|hers|they|them|their|that|this|those|these|there)\b"
    r"|^(?:and|but|so|also|what about|how about)\b",
    re.IGNORECASE,
)
_ANAPHOR_CJK = re.compile(
    r"[它他她其]|那个|那個|这个|這個|那些|这些|這些|那里|那裡|这里|這裡|^那|^还有|^還有|呢\W*$"
)


def is_followup(text: str, gate: GateSettings | None = None) -> bool:
    """Whether ``text`` is a short follow-up that needs the previous turns to be searched.

    Args:
        text: The user's latest message.
        gate: The gate's settings (small talk the gate skips is never a follow-up).

    Returns:
        True for "那它呢？", "and what about him?", "why?"; False for a
        self-contained question, "ok" or "thanks".

    Example:
        >>> is_followup("那它呢？"), is_followup("and where did it come from?")
        (True, True)
        >>> is_followup("好的"), is_followup("Where did my cat Momo come from, and when?")
        (False, False)
    """
    t = unicodedata.normalize("NFKC", text).strip()
    size = meaningful_length(t)
    if size > FOLLOWUP_MAX_LENGTH or should_retrieve(t, gate).reason in _NOT_FOLLOWUP:
        return False
    if _ANAPHOR_EN.search(t) or _ANAPHOR_CJK.search(t):
        return True
    return size <= SHORT_QUESTION_LENGTH and ("?" in t or "？" in t)


def contextual_query(
    latest: str,
    earlier: Sequence[str],
    *,
    max_tokens: int,
    gate: GateSettings | None = None,
) -> str:
    """The recall query of a message: with the previous user turns when it is a follow-up.

    Args:
        latest: The user's latest message.
        earlier: The user's previous messages, oldest first.
        max_tokens: Token budget of the added turns
            (``injection.recent_history_tokens``; 0 switches this off).
        gate: The gate's settings, for :func:`is_followup`.

    Returns:
        ``latest`` unchanged, or ``latest`` and the previous turns, one per line.

    Example:
        >>> contextual_query("那它呢？", ["我的猫叫什么？"], max_tokens=1000)
        '那它呢？\\n我的猫叫什么？'
    """
    earlier = [t for t in earlier if t.strip()]
    if max_tokens <= 0 or not earlier or not is_followup(latest, gate):
        return latest
    parts: list[str] = []
    budget = max_tokens
    for text in reversed(earlier[-MAX_CONTEXT_TURNS:]):
        n = count_tokens(text)
        if n > budget:
            if not parts:
                parts.append(truncate_by_tokens(text, budget))
            break
        parts.append(text)
        budget -= n
    return "\n".join([latest, *reversed(parts)])


__all__ = [
    "FOLLOWUP_MAX_LENGTH",
    "MAX_CONTEXT_TURNS",
    "SHORT_QUESTION_LENGTH",
    "contextual_query",
    "is_followup",
]

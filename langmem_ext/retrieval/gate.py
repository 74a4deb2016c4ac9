"""Adaptive retrieval gate: does this message need a memory search?

Searching on every message costs an embedding call and injects noise ("ok" finds
some memory that contains "ok"). The gate decides, in this order:

1. **Force** when the message refers to the past: 记得 / 記得 / 还记得 / 還記得 /
   上次 / 之前 / 以前 / 昨天 / 前天 / 上周 / 上週 / 上个月 / remember / recall /
   previously / last time / earlier / yesterday / last week / did I tell you /
   what did I …. Forcing wins over every skip rule ("hi, remember me?").
2. **Skip** empty text, ``HEARTBEAT`` pings, slash commands (``/help``),
   emoji-only and punctuation-only text, bare greetings (hi, 你好, 早上好),
   acknowledgements (ok, thanks, 好的, 嗯, 收到, 谢谢 / 謝謝), text shorter than
   ``min_chars`` (CJK characters count double, as in
   :func:`~langmem_ext.retrieval.noise.meaningful_length`, so "他是谁？" passes),
   and short text without a question mark (``?`` or ``？``): shorter than
   ``short_cjk_chars`` when it contains CJK, ``short_other_chars`` otherwise.
3. Otherwise **retrieve**.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass

from langmem_ext.core.config import GateSettings
from langmem_ext.language.text import is_cjk
from langmem_ext.retrieval.noise import (
    is_greeting,
    is_heartbeat,
    meaningful_length,
    normalize,
)

logger = logging.getLogger(__name__)

_RECALL_RE = re.compile(
    r"记得|記得|上次|上回|之前|以前|昨天|前天|上周|上週|上星期|上个月|上個月"
    r"|\b(?:remember\w*|recall\w*|previously|last (?:time|week|month|night)|earlier"
    r"|yesterday|did i (?:ever )?(?:tell|mention|say)|what did i|have i (?:told|mentioned))\b",
    re.IGNORECASE,
)
_COMMAND_RE = re.compile(r"^/[A-Za-z][\w-]*(?:@\w+)?(?:\s|$)")
_ACK_WORD = (
    r"(?:ok|okay|okey|k|kk|sure|yes|yep|yeah|yup|no|nope|thanks|thank you|thank you so much|"
    r"thanks a lot|thx|ty|cool|nice|great|got it|noted|alright|all right|fine|perfect|"
    r"understood|roger|lol|haha+|好的?|好吧|好滴|好嘞|嗯+|哦+|噢|喔|收到|谢谢|謝謝|多谢|多謝|"
    r"感谢|感謝|明白了?|了解了?|知道了|行|可以|没问题|沒問題|对|對|是的|确认|確認)"
    r"(?:啊|呀|哈|啦|了|的)*"
)
_ACK_RE = re.compile(rf"{_ACK_WORD}(?:\s*{_ACK_WORD})*")


@dataclass(frozen=True)
class GateDecision:
    """What the gate decided.

    Attributes:
        retrieve: Search memory for this message.
        forced: The message refers to the past; search even if a skip rule matched.
        reason: Why, e.g. ``"recall word '记得'"``, ``"greeting"``, ``"default"``.
    """

    retrieve: bool
    forced: bool
    reason: str


def _skip(reason: str) -> GateDecision:
    return GateDecision(retrieve=False, forced=False, reason=reason)


def recall_word(query: str) -> str | None:
    """The first word of ``query`` that refers to the past, if any.

    Args:
        query: A user message.

    Returns:
        The matched word (``"记得"``, ``"last time"``, ...) or ``None``.
    """
    m = _RECALL_RE.search(unicodedata.normalize("NFKC", query))
    return m.group(0) if m else None


def should_retrieve(query: str, settings: GateSettings | None = None) -> GateDecision:
    """Decide whether ``query`` needs a memory search.

    Args:
        query: The user's message.
        settings: Length thresholds; defaults to ``GateSettings()``.

    Returns:
        A :class:`GateDecision`; ``forced`` is True when a recall word matched.

    Example:
        >>> should_retrieve("你还记得我喜欢什么吗").forced, should_retrieve("好的").retrieve
        (True, False)
    """
    s = settings or GateSettings()
    text = unicodedata.normalize("NFKC", query).strip()
    decision = _decide(text, s)
    logger.debug("gate %r -> %s", text[:40], decision)
    return decision


def _decide(text: str, s: GateSettings) -> GateDecision:
    if not text:
        return _skip("empty")
    word = recall_word(text)
    if word is not None:
        return GateDecision(retrieve=True, forced=True, reason=f"recall word {word!r}")
    if is_heartbeat(text):
        return _skip("heartbeat")
    if _COMMAND_RE.match(text):
        return _skip("command")
    if not any(ch.isalnum() for ch in text):
        emoji = any(unicodedata.category(ch) == "So" for ch in text)
        return _skip("emoji only" if emoji else "punctuation only")
    if is_greeting(text):
        return _skip("greeting")
    if _ACK_RE.fullmatch(normalize(text)):
        return _skip("acknowledgement")
    if meaningful_length(text) < s.min_chars:
        return _skip("too short")
    has_question = "?" in text or "？" in text
    limit = s.short_cjk_chars if any(is_cjk(ch) for ch in text) else s.short_other_chars
    if len(text) < limit and not has_question:
        return _skip("short without question")
    return GateDecision(retrieve=True, forced=False, reason="default")


__all__ = ["GateDecision", "recall_word", "should_retrieve"]

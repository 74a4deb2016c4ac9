"""Self-repair in a message: "…, wait, what I really want to ask is X".

People talk their way into a question and then correct themselves: "最近好忙啊，
听说那个活动挺有意思的……不好意思，我真正想问的是：那个规模是三千人的活动，地点是
什么？" Everything before the repair marker is chit-chat. Searched as a whole, its
words ("最近", "活动", "有意思") pull in memories the user did not ask about, and its
time words ("最近", "上周") point the recall intent at the wrong days. The part after
the last marker is what to search for.

Markers (simplified and traditional Chinese, English): 我真正想问的是, 真正的问题是,
实际上我想问的是, 其实是想搞清楚, 我本来想说的是, 我想问的是, 等等，诶，等等;
"what I really want to ask is", "my actual question is", "I meant to ask",
"scratch that", "never mind, …".
"""

from __future__ import annotations

import re

MIN_FOCUS_CHARS = 4
"""The text after a marker must be at least this long to replace the message."""

_ZH_REAL = r"(?:真正|实际上?|實際上?|其实|其實|本来|本來)"
_ZH_MARKER = (
    # 我真正想问的是 / 其实是想搞清楚， / 我本来想说的是 / 实际上我想问的是
    rf"(?:我)?{_ZH_REAL}[^。！？!?，,]{{0,6}}?(?:想|要)[^。！？!?，,]{{0,4}}?"
    r"(?:问|問|了解|知道|弄清楚|搞清楚|说|說)"
    r"(?:的?(?:问题|問題)?(?:是|就是)(?:这个|這個)?|(?=[，,：:]))"
    # 真正的问题是 / 实际上我那个问题是这个
    rf"|{_ZH_REAL}[^。！？!?，,]{{0,4}}?(?:问题|問題)(?:是|就是)(?:这个|這個)?"
    # 我想问的是 / 对了，我想问，
    r"|我(?:想|要)(?:问|問)(?:的是|的问题是|的問題是|(?=[，,：:]))"
    r"|等等[，,]\s*[诶誒][，,]\s*等等"
)
_EN_MARKER = (
    r"what i (?:really |actually )?(?:want|wanted|meant|mean|need) to (?:ask|know|say) is"
    r"|my (?:real|actual) question is|the (?:real|actual) question is"
    r"|i (?:really |actually )?(?:meant|mean|wanted) to ask(?: about)?"
    r"|scratch that|never mind(?: that)?|no wait|wait,? actually"
)
_MARKER_RE = re.compile(rf"(?:{_ZH_MARKER}|\b(?:{_EN_MARKER})\b)[\s,，、:：]*", re.IGNORECASE)


def focus_of(query: str) -> str:
    """Return the part of ``query`` a self-repair points to, or ``query`` itself.

    Args:
        query: The user's message.

    Returns:
        The text after the last repair marker, stripped, when it is at least
        :data:`MIN_FOCUS_CHARS` characters long; otherwise ``query`` unchanged.

    Example:
        .. code-block:: python

            focus_of("最近好忙。不好意思，我真正想问的是：那个活动的地点是什么？")
            # '那个活动的地点是什么？'
            focus_of("Nice weather. Scratch that, where does my sister live?")
            # 'where does my sister live?'
    """
    last: re.Match[str] | None = None
    for last in _MARKER_RE.finditer(query):  # noqa: B007 - the last match is wanted
        pass
    if last is None:
        return query
    focus = query[last.end() :].strip()
    return focus if len(focus.rstrip("?？。.! ")) >= MIN_FOCUS_CHARS else query


__all__ = ["MIN_FOCUS_CHARS", "focus_of"]

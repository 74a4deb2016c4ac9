"""Compound questions: one message that asks two or more things.

"上司的邮箱地址是多少？另外，编程光影盛宴的主要内容是什么？" asks for two memories
that share no words. Searched as one query, the part with the rarer words wins every
slot of the result list and the other part's memory never shows. Searching each
question on its own as well and taking the best hits of the whole message and of
each question in turn (:func:`interleave`) gives every question its own best hits.

A message is compound only when it holds at least two sentences that end in a
question mark (``?`` or ``？``); statements around them ("I moved last year. Where do
I work now?") are context, not questions, and leave the message whole. Leading
connectives ("另外，", "还有", "and", "also", ...) are dropped from each part.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")

MAX_PARTS = 3
"""At most this many parts are searched on their own (the first ones)."""

MIN_PART_CHARS = 4
"""A part shorter than this (after dropping connectives) is too vague to search."""

_SENTENCE_RE = re.compile(r"[^?？!！。；;\n]*[?？!！。；;\n]+|[^?？!！。；;\n]+$")
_QUESTION_END_RE = re.compile(r"[?？]\s*$")
_CONNECTIVE_RE = re.compile(
    r"^(?:另外|此外|还有|還有|以及|然后|然後|顺便问一下|順便問一下|顺便|順便|再问一下|再問一下"
    r"|(?:oh and|and also|and|also|besides|plus|then|by the way)\b)[\s,，、:：]*",
    re.IGNORECASE,
)


def _clean(part: str) -> str:
    text = part.strip()
    while True:
        stripped = _CONNECTIVE_RE.sub("", text, count=1).strip()
        if stripped == text:
            return text
        text = stripped


def split_compound(query: str) -> list[str]:
    """Return the questions of a compound message, or ``[]`` for a simple one.

    Args:
        query: The user's message.

    Returns:
        The question sentences (connectives dropped, at most :data:`MAX_PARTS`)
        when ``query`` holds at least two of at least :data:`MIN_PART_CHARS`
        characters; otherwise an empty list (search the message as it is).

    Example:
        .. code-block:: python

            split_compound("我用的手机是什么牌子？另外，我妹妹叫什么名字？")
            # ['我用的手机是什么牌子？', '我妹妹叫什么名字？']
            split_compound("Where do I work?")  # []
    """
    questions = [
        cleaned
        for sentence in _SENTENCE_RE.findall(query)
        if _QUESTION_END_RE.search(sentence)
        and len((cleaned := _clean(sentence)).rstrip("?？ ")) >= MIN_PART_CHARS
    ]
    if len(questions) < 2:
        return []
    return questions[:MAX_PARTS]


def interleave(
    ranked_lists: Sequence[Sequence[T]], k: int, key: Callable[[T], Hashable]
) -> list[tuple[int, T]]:
    """Merge ranked lists by taking each list's next best in turn (first list first).

    The whole message's list comes first, then one list per question, so every
    question gets one of the top places before any gets a second. An item found
    by several lists keeps its first (best) place.

    Args:
        ranked_lists: Best-first lists.
        k: How many items to return.
        key: Identity of an item (a memory id).

    Returns:
        Up to ``k`` ``(list index, item)`` pairs, best first.
    """
    out: list[tuple[int, T]] = []
    seen: set[Hashable] = set()
    depth = max((len(lst) for lst in ranked_lists), default=0)
    for place in range(depth):
        for i, lst in enumerate(ranked_lists):
            if place < len(lst) and (ident := key(lst[place])) not in seen:
                seen.add(ident)
                out.append((i, lst[place]))
                if len(out) == k:
                    return out
    return out


__all__ = ["MAX_PARTS", "MIN_PART_CHARS", "interleave", "split_compound"]

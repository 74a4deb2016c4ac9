"""Sentences of Chinese / English text: splitting, questions and apostrophes.

:func:`split_sentences` cuts text into sentences (at ``。！？!?；;…`` or a ``.``
followed by whitespace, not after an abbreviation or an initial),
:func:`is_question` tells a question by its end, and :func:`normalize_quotes`
makes typographic apostrophes plain so word patterns match ``I’m`` like ``I'm``.
The summaries, the statements, the flush and the triple extractor read text
through these. Pure: no I/O.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "inc",
        "ltd",
        "no",
        "fig",
        "approx",
        "dept",
        "mt",
        "ft",
        "co",
        "corp",
        "u.s",
        "a.m",
        "p.m",
    }
)
"""Words that end in a dot without ending the sentence (``Dr.``, ``e.g.``)."""
_TERMINATORS = frozenset("。！？!?；;…")
_CLOSERS = frozenset("”」』）)\"'’]】")
_BULLET_RE = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)、]|[（(]?\d{1,3}[)）]|[①-⑳])\s+")
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
QUESTION_RE = re.compile(r"[?？]\s*[”」』\"')]*$|[吗嗎呢]\s*$")
"""A question mark at the end (closing quotes allowed), or a final 吗 / 嗎 / 呢."""


def _ends_with_abbreviation(buf: str) -> bool:
    word = re.split(r"\s", buf.rstrip("."))[-1].casefold()
    if word in _ABBREVIATIONS:
        return True
    return len(word) == 1 and word.isalpha()  # an initial: "J. Smith"


def split_sentences(text: str) -> list[str]:
    """Split Chinese / English text into sentences.

    Fenced code blocks are dropped, every line is split on its own (list bullets
    removed), and sentences end at ``。！？!?；;…`` or at a ``.`` followed by
    whitespace — but not inside numbers (``3.5``) or after abbreviations
    (``Dr.``) and initials.

    Args:
        text: Any text.

    Returns:
        The sentences, stripped, in order; fragments under two characters are
        dropped.
    """
    text = _FENCE_RE.sub("\n", text)
    sentences: list[str] = []
    for raw_line in text.splitlines():
        line = _BULLET_RE.sub("", raw_line).strip()
        if not line:
            continue
        buf: list[str] = []
        i = 0
        while i < len(line):
            ch = line[i]
            buf.append(ch)
            end = False
            if ch in _TERMINATORS:
                end = True
            elif ch == "." and (i + 1 == len(line) or line[i + 1].isspace()):
                end = not _ends_with_abbreviation("".join(buf))
            if end:
                while i + 1 < len(line) and (
                    line[i + 1] in _CLOSERS or line[i + 1] in _TERMINATORS
                ):
                    i += 1
                    buf.append(line[i])
                sentences.append("".join(buf))
                buf = []
            i += 1
        if buf:
            sentences.append("".join(buf))
    return [s for s in (" ".join(s.split()) for s in sentences) if len(s) >= 2]


def normalize_quotes(text: str) -> str:
    """Replace typographic apostrophes with ``'`` so ``I’m`` matches like ``I'm``."""
    return text.replace("’", "'").replace("‘", "'")


def is_question(sentence: str) -> bool:
    """Whether the sentence is a question (ends with ``?`` / ``？`` / 吗 / 呢)."""
    return bool(QUESTION_RE.search(sentence))


__all__ = ["QUESTION_RE", "is_question", "normalize_quotes", "split_sentences"]

"""Compound questions: one message that asks two or more things.

"上司的邮箱地址是多少？另外，编程光影盛宴的主要内容是什么？" asks for two memories
that share no words. Searched as one query, the part with the rarer words wins every
slot of the result list and the other part's memory never shows. So the whole
message and each of its questions fetch candidates of their own, and one ranking runs
over them all (:func:`union_candidates`): a memory's vector and BM25 evidence are the
best it has against any of the texts, so each question's best matches compete on
what they match, with the same fusion and stages as any search.

A message is compound only when it holds at least two sentences that end in a
question mark (``?`` or ``？``); statements around them ("I moved last year. Where do
I work now?") are context, not questions, and leave the message whole. Leading
connectives ("另外，", "还有", "and", "also", ...) are dropped from each part.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from langmem_ext.retrieval.candidate import Candidate

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


def union_candidates(
    vector_lists: Sequence[Sequence[Candidate]] | None,
    keyword_lists: Sequence[Sequence[Candidate]] | None,
    *,
    copy: bool = True,
) -> tuple[list[Candidate] | None, list[Candidate] | None]:
    """Merge the candidates several query texts fetched into one vector and one BM25 list.

    Each text's lists are best first (index 0: the whole message, then one per
    question). A memory keeps its best cosine over the texts whose vector search
    found it, and its best BM25 score, each text's BM25 first divided by that
    text's top score (raw BM25 is not comparable across queries).

    ``debug["question"]`` says which question a memory answers: the question
    (1, 2, ...) whose vector search gave it the highest cosine, else whose BM25
    gave it the highest share, else 0 (only the whole message found it). Ranks are
    renumbered in the merged order.

    Args:
        vector_lists: One list per text; ``None`` when the vector engine did not run.
        keyword_lists: One list per text; ``None`` when the keyword engine did not run.
        copy: ``False`` when the caller does not use the given candidates again:
            the kept ones are then changed in place instead of copied.

    Returns:
        ``(vector, keyword)`` as :func:`~langmem_ext.retrieval.pipeline.rank` takes
        them, best first, or ``None`` for an engine that did not run. With ``copy``
        they are new candidates and the given ones are not changed.
    """
    label: dict[str, tuple[int, float, int]] = {}  # id -> (evidence kind, score, question)

    def note(c: Candidate, question: int, kind: int, score: float) -> None:
        if question > 0 and (c.id not in label or (kind, score) > label[c.id][:2]):
            label[c.id] = (kind, score, question)

    vector = keyword = None
    if vector_lists is not None:
        best: dict[str, Candidate] = {}
        for i, cands in enumerate(vector_lists):
            for c in cands:
                score = c.vector_score or 0.0
                note(c, i, 2, score)  # a cosine outranks any BM25 share as evidence
                kept = best.get(c.id)
                if kept is None or score > (kept.vector_score or 0.0):
                    best[c.id] = c.copy() if copy else c
        vector = sorted(best.values(), key=lambda c: -(c.vector_score or 0.0))
    if keyword_lists is not None:
        top: dict[str, Candidate] = {}
        for i, cands in enumerate(keyword_lists):
            ceiling = max((c.bm25_score or 0.0 for c in cands), default=0.0)
            full = max((c.bm25_full or 0.0 for c in cands), default=0.0)
            ceiling = max(ceiling, full)  # the share of the whole text matched
            for c in cands:
                share = (c.bm25_score or 0.0) / ceiling if ceiling > 0.0 else 0.0
                note(c, i, 1, share)
                kept = top.get(c.id)
                if kept is None or share > (kept.bm25_score or 0.0):
                    new = c.copy() if copy else c
                    new.bm25_score = share
                    new.bm25_full = 1.0 if full > 0.0 else None  # shares: 1 is all
                    top[c.id] = new
        keyword = sorted(top.values(), key=lambda c: -(c.bm25_score or 0.0))
    for merged, attr in ((vector, "vector_rank"), (keyword, "bm25_rank")):
        for place, c in enumerate(merged or ()):
            setattr(c, attr, place)
            c.debug["question"] = float(label[c.id][2] if c.id in label else 0)
    return vector, keyword


def cover_questions(ranked: Sequence[Candidate], k: int, questions: int) -> list[Candidate]:
    """The best ``k`` of ``ranked``, with a hit for every question that has one.

    ``ranked`` is a best-first ranking of :func:`union_candidates` output, longer
    than ``k``. A question (``debug["question"]`` 1 .. ``questions``) with no hit in
    the first ``k`` gets its best-ranked hit from further down; it takes the place
    of the lowest-ranked hit whose question keeps another hit (or that answers
    none). It goes last, so scores stay best first.

    Args:
        ranked: Candidates, best first.
        k: How many to return.
        questions: How many questions the message asks.

    Returns:
        At most ``k`` candidates, best first.
    """
    top = list(ranked[:k])
    rest = list(ranked[k:])
    for q in range(1, questions + 1):
        if any(c.debug.get("question") == q for c in top):
            continue
        pick = next((c for c in rest if c.debug.get("question") == q), None)
        if pick is None:
            continue
        if len(top) == k:
            counts = Counter(c.debug.get("question") for c in top)
            spare = next(
                (
                    j
                    for j in range(len(top) - 1, -1, -1)
                    if top[j].debug.get("question") == 0.0
                    or counts[top[j].debug.get("question")] > 1
                ),
                None,
            )
            if spare is None:  # every hit is the only one of its question
                continue
            del top[spare]
        top.append(pick)
        rest.remove(pick)
    return top


__all__ = ["MAX_PARTS", "MIN_PART_CHARS", "cover_questions", "split_compound", "union_candidates"]

"""Why a memory ranked where it did, in words: one named step per stage that acted.

:func:`~langmem_ext.retrieval.pipeline.rank` leaves every stage's number in a hit's
``debug``; :func:`explain` reads them back as :class:`Step` s a person understands
("Words — matched the words allergic, peanut", "Profile — same fact as the
profile's allergies", "Older version — a newer statement of the same thing replaces
it"), for the admin's search page and ``langmem-ext search --debug``. Stages that
did nothing (a factor of 1, a boost of 0) are left out.

The returned score is on one scale, 0..1 (:func:`final_score`), whatever the stages
did to the ranking score before (``debug["ranking"]``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from langmem_ext.language.text import index_tokens, is_cjk, stem

FINAL_HALF = 0.25
"""The ranking score that maps to a returned score of 0.5 (:func:`final_score`)."""


def final_score(ranking: float) -> float:
    """The returned score of a hit, 0..1: ``ranking / (ranking + FINAL_HALF)``.

    The ranking score adds and multiplies the stages' evidence (a full match of both
    engines with a graph link and context can pass 1.5); this maps it onto 0..1
    without changing the order: 0 for no evidence, 0.5 at a ranking score of
    :data:`FINAL_HALF` (about a memory that passes the relevance threshold on its
    similarity alone), 0.8 at 1.0 (a full match of both engines), below 1 always.

    Example:
        >>> [round(final_score(x), 2) for x in (0.0, 0.25, 1.0, 1.5)]
        [0.0, 0.5, 0.8, 0.86]
    """
    return ranking / (ranking + FINAL_HALF) if ranking > 0.0 else 0.0


@dataclass(frozen=True)
class Step:
    """One stage that acted on a hit.

    Attributes:
        key: The ``debug`` key it comes from (``bm25``, ``profile.allergies`` …).
        name: What a person calls it ("Words", "Meaning", "Safety" …).
        effect: What it did to the ranking score ("+0.12", "×0.75", "first") or the
            evidence it gave ("0.48").
        reason: One line saying why.
    """

    key: str
    name: str
    effect: str
    reason: str


def matched_words(query: str, text: str) -> list[str]:
    """The words of ``query`` the keyword side finds in ``text``, as the query wrote
    them (a word matches in any form: "allergic" finds "allergies"; a Chinese query
    matches on two-character runs).

    Example:
        >>> matched_words("Am I allergic to peanuts?", "I have a peanut allergy")
        ['allergic', 'peanuts']
        >>> matched_words("我对什么过敏", "我对花生过敏")
        ['我对', '过敏']
    """
    own = set(index_tokens(text))
    out: list[str] = []
    for run in re.findall(r"\w+", query):
        low = run.lower()
        if is_cjk(low):
            grams = [low] if len(low) == 1 else [low[i : i + 2] for i in range(len(low) - 1)]
            out += [g for g in grams if g in own]
        elif (not low.isdigit() and len(low) > 2 and stem(low) in own) or (
            low.isdigit() and low in own
        ):
            out.append(run)
    return list(dict.fromkeys(out))


def _pct(x: float) -> str:
    return f"{x:.2f}"


def explain(
    debug: Mapping[str, float],
    *,
    text: str,
    query: str | None = None,
    importance: float | None = None,
    category: str | None = None,
    superseded: bool = False,
) -> list[Step]:
    """The steps that placed a hit, in the order the pipeline runs them.

    Args:
        debug: The hit's ``debug`` (stage name -> number).
        text: The memory's text.
        query: The question searched (names the words matched).
        importance: The memory's importance (shown next to the factor it gave).
        category: The memory's category.
        superseded: The memory is a replaced version (``valid_to`` set).

    Returns:
        The steps, first to last; the last one is the returned score.
    """
    d = dict(debug)
    steps: list[Step] = []

    def add(key: str, name: str, effect: str, reason: str) -> None:
        steps.append(Step(key, name, effect, reason))

    if superseded:
        add("valid_to", "Older version", "—", "a newer version of this memory replaced it")
    if "slot" in d:
        add("slot", "Your own fact", "full word match",
            "states the very thing the question asks about you, in any language")  # fmt: skip
    if "older_statement" in d:
        add("older_statement", "Older version", "no word match",
            "a newer statement of the same thing replaces it")  # fmt: skip
    if "vector" in d:
        cos = d["vector"]
        across = d.get("keyword_readable", 1.0) < 1.0
        how = "similar in meaning" if cos >= 0.3 else "a little similar in meaning"
        scale = ", compared on the one-language scale" if across else ""
        where = " across languages" if across else ""
        add("vector", "Meaning", _pct(cos), f"{how}{where} (cosine {cos:.2f}{scale})")
    readable = d.get("keyword_readable", 1.0)
    if "bm25" in d:
        words = matched_words(query, text) if query else []
        said = f"matched the words {', '.join(words)}" if words else "matched words of the question"
        share = d["bm25"]
        if share < 0.99:
            said += f" ({share:.0%} of a full match)"
        add("bm25", "Words", _pct(share), said)
    elif readable >= 1.0 and "vector" in d and "slot" not in d:
        add("bm25", "Words", "0.00", "none of the question's words")
    if readable < 1.0:
        add("keyword_readable", "Other language", f"{readable:.0%} readable",
            "the question's words cannot be matched in this memory's script: its meaning "
            "stands in for them")  # fmt: skip
    if "fused" in d:
        add("fused", "Match", _pct(d["fused"]), "meaning and words together")
    if "question" in d and d["question"] > 0:
        add("question", "Question part", f"#{int(d['question'])}",
            f"answers question {int(d['question'])} of the message")  # fmt: skip
    if d.get("context", 0.0) > 0.0:
        add("context", "Nearby", f"+{d['context']:.2f}",
            "written next to a strong match, at the same time (conversation context)")  # fmt: skip
    if d.get("graph", 0.0) > 0.0:
        add("graph", "Knowledge graph", f"+{d['graph']:.2f}",
            "linked to what the question names in the knowledge graph")  # fmt: skip
    if "other_person" in d:
        add("other_person", "Someone else", f"×{d['other_person']:.2f}",
            "about another person than the one the question asks about")  # fmt: skip
    if d.get("recency", 0.0) > 0.0:
        add("recency", "Recent", f"+{d['recency']:.2f}", "a recent episode")
    if "importance" in d and d["importance"] < 1.0:
        imp = "" if importance is None else f"importance {importance:.2f} of 3 (core); "
        add("importance", "Importance", f"×{d['importance']:.2f}",
            f"{imp}more important memories rank higher")  # fmt: skip
    if d.get("length_norm", 1.0) < 1.0:
        add("length_norm", "Long text", f"×{d['length_norm']:.2f}",
            "a long text matches many words by its size")  # fmt: skip
    if d.get("time_decay", 1.0) < 1.0:
        add("time_decay", "Age", f"×{d['time_decay']:.2f}", f"an old {category or 'episode'}")
    if "time_window" in d:
        add("time_window", "Time asked about", f"×{d['time_window']:.0f}",
            "written in the time the question points to")  # fmt: skip
    if "mmr_demoted" in d:
        add("mmr_demoted", "Near-duplicate", "lowered",
            f"almost the same as a better hit (similarity {d['mmr_demoted']:.2f})")  # fmt: skip
    fields = [k.split(".", 1)[1].replace("_", " ") for k in d if k.startswith("profile.")]
    if fields:
        add("profile", "Profile", "—", f"same fact as the profile's {', '.join(fields)}")
    if "safety_first" in d:
        add("safety_first", "Safety", "first",
            "states a safety fact the question asks about: ranked before the rest")  # fmt: skip
    elif "safety" in d:
        add("safety", "Safety", "kept", "states a safety fact the question asks about")
    if "reranker" in d:
        add("reranker", "Reranker", f"{d['reranker']:g}",
            "placed by the reranker (its relevance score, else its place): its order is the result")  # fmt: skip
    if "final" in d:
        ranking = d.get("ranking")
        extra = "" if ranking is None or math.isclose(ranking, d["final"]) else (
            f" (ranking score {ranking:.2f})"
        )  # fmt: skip
        add("final", "Score", _pct(d["final"]), f"on the scale 0..1{extra}")
    return steps


__all__ = ["FINAL_HALF", "Step", "explain", "final_score", "matched_words"]

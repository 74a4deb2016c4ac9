"""Fuse the vector engine's and the keyword engine's candidates into one list.

Fusion gives every candidate two numbers, because ranking and filtering are
different questions:

``score`` — the *ranking* score, which the scoring stages then adjust:

* weighted (default): ``w_v * cos + w_b * keyword evidence``, times
  ``1 + bm25_hit_bonus`` when the keyword engine found the candidate. ``cos`` is
  the cosine after the embedder's rescaling (the search engine applies
  :func:`langmem_ext.retrieval.calibration.rescale_cosine`, so an e5 cosine of 0.85
  counts like a USE cosine of 0.4). A candidate
  only the keyword engine found has ``cos = 0`` unless the caller filled in its
  ``vector_score`` (e.g. from the stored embedding).
* rrf: ``sum_e w_e / (rrf_k + rank_e + 1)``, divided by the largest value it can
  take, ``sum_e w_e / (rrf_k + 1)``. A hit ranked first by both engines scores 1.0,
  first by the vector engine only ``w_v`` (0.7). No bonus: a keyword hit already
  adds its term.

The weights are normalised over the engines that ran (0.4 / 0.6 by default, 1.0 for
the only engine of a single-engine search), so ``score`` stays on a 0..~1 scale.

Four things make a keyword score mean evidence:

* ``bm25 / max_bm25`` is divided by the larger of the pool's best BM25 and
  :data:`KEYWORD_FULL_MATCH_SHARE` of the query's full-match BM25 (the sum of its
  terms' IDFs, :attr:`Candidate.bm25_full`): a pool whose best match covers a sliver
  of the query no longer scores that match 1.0.
* Given the query text, a memory in the query's script that holds exactly one of
  the query's informative words (of two or more) has at most that word's share of
  them as evidence
  (:func:`one_word_share`): one shared word ("live" of "Where does my mom live?")
  is part of the question, not a match of it, however the pool's other memories
  score.
* Given the words that say whom the query asks about (``subject_words``, the
  person stage's reading: "my wife Anna", "我男朋友", "Wu Lei"), a memory in the
  query's script that matches only those has at most their share of the query's
  informative words as evidence: it matched whom, which the person stage judges for
  every memory in any language, not what is asked ("My wife Anna is allergic to
  latex" for "What does my wife Anna like to read?").
* Given the query text, each candidate's keyword evidence is scaled by the share of
  it the keyword engine can read for this query
  (:func:`~langmem_ext.language.text.script_overlap`): an English query matches the
  stray Latin words ("NFL", "Level") of a Chinese memory, not the memory, and cannot
  match a Chinese memory at all. The keyword engine's silence on the share it cannot
  read is no evidence either way: that share of the keyword term is half the
  memory's vector evidence (its cosine over the full-match cosine,
  :data:`UNREAD_KEYWORD_SHARE`), about what a memory in the query's language at that
  similarity matches of the question's words. A memory the keyword engine reads and
  finds none of the query's words in keeps a keyword term of 0 (judging it too by its similarity cost LoCoMo 7 points of R@10:
  there the missing words are evidence). Before, the unreadable share of the keyword *weight* went to
  the raw cosine, so a cross-lingual answer at cosine 0.36 scored 0.36 against 0.7–0.9
  for a same-language memory sharing one word with the question, while a
  same-language paraphrase without a shared word scored 0.4 × its cosine.
* The cosine of a memory in another script is compared on the scale of one
  language: divided by the share of the full match that counts across scripts
  (``retrieval.cross_script_full_match``, as for ``relevance``), since one meaning
  scores lower across languages. Its hit bonus is scaled by the readable share.

Numbers are the exception: "1817" reads the same in an English question and a
Chinese memory. A memory in another script than the query that holds one of the
query's numbers, and that the keyword engine returned, is read in full: its score and
relevance are the better of the cross-script ones above and those of a memory in the
query's script (:attr:`_Evidence.read_in_full`). A number match only ever adds.

``debug["relevance"]`` — how surely the memory matches the query, 0..1. It is the
only number the ``min_score`` / ``hard_min_score`` thresholds look at (see
:mod:`langmem_ext.retrieval.scoring`). It is the strongest evidence the candidate
*has* (a memory is relevant when either engine is sure of it; a keyword hit on a
common word must not drag down a close paraphrase):

* vector evidence: ``min(1, cos / full_match_cosine)`` (rank-based when only a rank
  is known);
* keyword evidence: ``bm25 / max(max_bm25, share x bm25_full)`` (rank-based without
  scores), times the readable share;
* an engine that did not return the candidate gives no evidence either way: a
  paraphrase or a cross-lingual match shares no words with the query, and a
  keyword hit may sit below the vector engine's cut-off;
* times ``1 + bm25_hit_bonus`` for a keyword hit in a hybrid search, capped at 1.

Why calibrate the cosine? The thresholds (0.3 / 0.35) were set on a
scale that was not a raw cosine. With USE multilingual v3, the default embedder, relevant short
texts score cos 0.2-0.63 (measured: "What is my dog called?" / "My dog is named
Biscuit" 0.56, "What food do I like?" / "主人喜欢拉面" 0.30, "What food do I like?" /
"User likes ramen" 0.20) while unrelated ones score about -0.01-0.15. With
``full_match_cosine = 0.6`` the thresholds fall at cos 0.18 / 0.21: between the two
groups. Embedders with higher cosines overall (e5, mxbai) only make the thresholds
more lenient, never drop more.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeAlias, TypedDict, Unpack

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.language.text import numbers, query_tokens, script_overlap, script_profile
from langmem_ext.retrieval.candidate import Candidate, best_first

logger = logging.getLogger(__name__)

DEFAULT_FULL_MATCH_COSINE = 0.6
"""Cosine at which vector evidence counts as a full match (relevance 1.0).

Calibrated on USE multilingual v3; not (yet) a setting of ``RetrievalSettings``."""


KEYWORD_FULL_MATCH_SHARE = 0.5
"""A keyword hit's evidence is its BM25 over the larger of the pool's best BM25 and
this share of the query's full-match BM25 (the sum of its terms' IDFs, see
:attr:`~langmem_ext.retrieval.candidate.Candidate.bm25_full`): the best match of a
pool only counts as certain when it matched at least half of what the query's
informative words weigh (IDF-weighted). A question of two informative words of which
a memory shares one common word ("Where am I based these days?" / "… two cups of
coffee a day") gets about half, not 1.0. At a share of 1 (the matched share itself)
LoCoMo's long questions, whose best turns match a third of their words, lost 2 points
of R@10 (BENCHMARKS.md §31)."""


UNREAD_KEYWORD_SHARE = 0.5
"""The keyword evidence of the share of a memory the keyword side cannot read
(another script): this share of its vector evidence. A same-language answer
matches part of a question's informative words, seldom all, so full vector evidence
(1.0) put a cross-language memory of lower similarity above a same-language one of
higher similarity with a partial match (our bilingual evaluation set's recall@1 fell
from 0.88 to 0.77); nothing (0) left cross-language answers below any same-language
memory sharing one word with the question (BENCHMARKS.md §31)."""


@lru_cache(maxsize=1 << 16)
def _text_words(text: str) -> frozenset[str]:
    """The keyword tokens of a memory's text (cached: the same memories come back
    search after search; room for a scope of tens of thousands of memories, as the
    other per-text readings have, or a long-running process reads its texts again)."""
    return frozenset(query_tokens(text, drop_stopwords=False))


def one_word_share(words: frozenset[str], text: str) -> float | None:
    """The keyword evidence a memory that shares one word with the query can have.

    A memory in the query's script holding exactly one of a query's informative
    words (``words``: its :func:`~langmem_ext.language.text.query_tokens`, two or
    more) matched that word, not the question: "Chen Hao lives in Shanghai" holds *live* of "Where does my
    mom live?", "Xiaoyu works as a teacher" *Xiaoyu* of "What is Xiaoyu allergic
    to?". Its evidence is that word's share of the query's words, ``1 / len(words)``,
    however well it scores among the pool's memories (the best of a pool counts as a
    full match when it covers half the query's weight, which one word of two does).

    Args:
        words: The query's informative words.
        text: The memory.

    Returns:
        ``1 / len(words)`` when ``text`` holds exactly one of ``words``, else ``None``
        (no limit).

    Example:
        >>> one_word_share(frozenset({"mom", "live"}), "Chen Hao lives in Shanghai")
        0.5
        >>> one_word_share(frozenset({"mom", "live"}), "My mom lives in Hangzhou") is None
        True
    """
    if len(words) < 2:
        return None
    matched = words.intersection(_text_words(text))
    return 1.0 / len(words) if len(matched) == 1 else None


Ranked: TypeAlias = Sequence[Candidate] | None
"""One engine's candidates, best first; ``None`` when the engine did not run (an
empty list: it ran and found nothing)."""


class FusionOptions(TypedDict, total=False):
    """The keyword arguments both fusion modes take."""

    full_match_cosine: float
    """Cosine at which vector evidence counts as certain for ``debug["relevance"]``
    (default :data:`DEFAULT_FULL_MATCH_COSINE`)."""
    copy_inputs: bool
    """``False`` when the caller does not use the given candidates again: they are
    then merged and scored in place instead of copied (default ``True``)."""
    query: str | None
    """The query text. With it (and both engines run), the keyword weight of each
    candidate is scaled by the share of the memory the keyword engine can read for
    this query (:func:`~langmem_ext.language.text.script_overlap`); the rest of that weight
    goes to the vector side (see the module doc)."""
    subject_words: frozenset[str]
    """The query's keyword tokens that say whom it asks about ("my wife", "我男朋友",
    "Wu Lei"; the person stage's reading). With the query, a memory that matches only
    these matched whom the question is about, not what it asks: no keyword evidence
    (see the module doc)."""


def _clamp01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def _merge(
    vector: Ranked,
    keyword: Ranked,
    *,
    copy: bool = True,
) -> tuple[list[Candidate], set[str]]:
    """Merge both lists by id; ranks default to list positions.

    Returns the merged candidates (vector order first) and the ids the keyword
    engine returned. A candidate only the keyword engine returned has its
    ``vector_rank`` cleared: it holds no place in the vector list. With ``copy``
    the merged candidates are copies, else the given objects, changed in place.
    """
    merged: dict[str, Candidate] = {}
    for i, c in enumerate(vector or ()):
        if c.id not in merged:  # a repeated id keeps its best rank
            m = c.copy() if copy else c
            m.vector_rank = i if m.vector_rank is None else m.vector_rank
            merged[c.id] = m
    keyword_ids: set[str] = set()
    for i, c in enumerate(keyword or ()):
        if c.id in keyword_ids:
            continue
        keyword_ids.add(c.id)
        rank = i if c.bm25_rank is None else c.bm25_rank
        existing = merged.get(c.id)
        if existing is None:
            m = c.copy() if copy else c
            m.bm25_rank = rank
            m.vector_rank = None
            merged[c.id] = m
            continue
        existing.bm25_score = c.bm25_score
        existing.bm25_full = c.bm25_full
        existing.bm25_rank = rank
        if existing.embedding is None:
            existing.embedding = c.embedding
        if existing.vector_score is None:
            existing.vector_score = c.vector_score
        for key, value in c.metadata.items():
            existing.metadata.setdefault(key, value)
        existing.slot_match = existing.slot_match or c.slot_match
        if c.safety:
            existing.safety = tuple(dict.fromkeys((*existing.safety, *c.safety)))
        existing.other_person = existing.other_person or c.other_person
        if c.graph_score is not None:
            existing.graph_score = max(existing.graph_score or 0.0, c.graph_score)
        for key, dbg in c.debug.items():  # what the keyword side noted
            existing.debug.setdefault(key, dbg)
    return list(merged.values()), keyword_ids


def _weights(
    settings: RetrievalSettings, vector_ran: bool, keyword_ran: bool
) -> tuple[float, float]:
    """Engine weights normalised to sum 1 over the engines that ran."""
    wv = max(settings.vector_weight, 0.0) if vector_ran else 0.0
    wb = max(settings.bm25_weight, 0.0) if keyword_ran else 0.0
    total = wv + wb
    if total <= 0.0:  # both weights configured as 0: split evenly
        wv, wb = float(vector_ran), float(keyword_ran)
        total = wv + wb
    return (wv / total, wb / total) if total > 0 else (0.0, 0.0)


def _candidate_weights(
    c: Candidate, wv: float, wb: float, profile: tuple[float, float] | None
) -> tuple[float, float, float]:
    """``(vector weight, keyword weight, readable share)`` of one candidate.

    The keyword engine can only match a memory in the query's script: an English
    query reads the Latin words of a Chinese memory, not the memory. For the share
    it cannot read, its silence is no evidence, so that share of its weight goes to
    the vector engine. A slot match (``Candidate.slot_match``: the memory states the very
    attribute the question asks for) is structured evidence, readable in any script.
    """
    if profile is None or wb <= 0.0 or c.slot_match:
        return wv, wb, 1.0
    readable = script_overlap(profile, script_profile(c.text))
    if readable >= 1.0:
        return wv, wb, 1.0
    return wv + wb * (1.0 - readable), wb * readable, readable


def _rank_evidence(rank: int, rrf_k: int) -> float:
    """1.0 for the first place, falling like an RRF term."""
    return (rrf_k + 1) / (rrf_k + max(rank, 0) + 1)


def _keyword_evidence(
    c: Candidate, keyword_ids: set[str], max_bm25: float, rrf_k: int
) -> float | None:
    if c.id not in keyword_ids:
        return None
    ceiling = max(max_bm25, KEYWORD_FULL_MATCH_SHARE * (c.bm25_full or 0.0))
    if c.bm25_score is not None and ceiling > 0.0:
        return _clamp01(c.bm25_score / ceiling)
    return _rank_evidence(c.bm25_rank or 0, rrf_k)


def _vector_evidence(c: Candidate, full_match_cosine: float, rrf_k: int) -> float | None:
    if c.vector_score is not None:
        return _clamp01(c.vector_score / full_match_cosine)
    if c.vector_rank is not None:
        return _rank_evidence(c.vector_rank, rrf_k)
    return None


@dataclass(frozen=True)
class _Evidence:
    """One candidate's engine weights and keyword evidence (the same in both modes)."""

    wv: float
    """Vector weight (with the keyword engine's unreadable share)."""
    wb: float
    """Keyword weight (its readable share)."""
    readable: float
    """The share of the memory the keyword engine can read for the query."""
    keyword: float | None
    """Keyword evidence (times ``readable``); ``None``: not a keyword hit."""
    bonus: float
    """The hit bonus of a keyword hit in a hybrid search (else 1.0)."""
    read_in_full: _Evidence | None = None
    """For a memory in another script that holds one of the query's numbers (which
    the keyword engine reads in any script): its evidence as a memory in the query's
    script. Fusion takes the better of the two."""

    def readings(self) -> tuple[_Evidence, ...]:
        """This evidence, and its reading in full when a number matched."""
        return (self,) if self.read_in_full is None else (self, self.read_in_full)

    def relevance(self, vec_ev: float | None) -> float:
        """The strongest evidence of an engine that ran (weight > 0), times the bonus."""
        best = vec_ev if self.wv > 0.0 else None
        if self.keyword is not None and self.wb > 0.0 and (best is None or self.keyword > best):
            best = self.keyword
        return 0.0 if best is None else _clamp01(best * self.bonus)


class _Fusion:
    """What both fusion modes share: the merged candidates, the engines' weights, each
    candidate's :class:`_Evidence` and its ``debug["relevance"]``. A mode only
    computes ``score``."""

    def __init__(
        self,
        vector: Ranked,
        keyword: Ranked,
        settings: RetrievalSettings,
        *,
        full_match_cosine: float = DEFAULT_FULL_MATCH_COSINE,
        copy_inputs: bool = True,
        query: str | None = None,
        subject_words: frozenset[str] = frozenset(),
    ) -> None:
        self.candidates, self._keyword_ids = _merge(vector, keyword, copy=copy_inputs)
        self._both = vector is not None and keyword is not None
        self.weights = _weights(settings, vector is not None, keyword is not None)
        self._max_bm25 = max(
            (c.bm25_score or 0.0 for c in self.candidates if c.id in self._keyword_ids),
            default=0.0,
        )
        self._profile = script_profile(query) if self._both and query is not None else None
        self._numbers = (
            numbers(query) if query is not None and self._profile is not None else frozenset()
        )
        self._words = (
            frozenset(query_tokens(query))
            if query is not None and self._profile is not None
            else frozenset()
        )
        self._subject = self._words & subject_words
        if not self._words - self._subject:  # the question names only whom: all of it
            self._subject = frozenset()
        self._settings = settings
        self._full = full_match_cosine

    def is_keyword_hit(self, c: Candidate) -> bool:
        """Whether the keyword engine returned ``c``."""
        return c.id in self._keyword_ids

    @property
    def full_match(self) -> float:
        """The cosine of a full match of two texts in one language."""
        return self._full

    def cross_script_ratio(self, readable: float) -> float:
        """How much lower the cosine of one meaning is for a memory of which the
        query's script reads ``readable`` than in one language (1.0 when it reads all;
        ``retrieval.cross_script_full_match`` across scripts)."""
        return self._full_match(readable) / self._full

    def evidence(self, c: Candidate) -> _Evidence:
        """``c``'s weights for the query's script, its keyword evidence and hit bonus."""
        wv, wb, readable = _candidate_weights(c, *self.weights, self._profile)
        kw_ev = _keyword_evidence(c, self._keyword_ids, self._max_bm25, self._settings.rrf_k)
        if kw_ev is not None and readable >= 1.0:  # in another script, the rest may be unread
            words = self._words
            if self._subject:
                matched = words.intersection(_text_words(c.text))
                if matched <= self._subject:  # it matched whom, not what: its share
                    kw_ev = min(kw_ev, len(matched) / len(words))
            if len(words) > 1 and kw_ev > 1.0 / len(words):
                share = one_word_share(words, c.text)
                if share is not None:
                    kw_ev = share
        full = None
        if kw_ev is not None and readable < 1.0:
            if self._numbers and not self._numbers.isdisjoint(numbers(c.text)):
                bonus_full = 1.0 + self._settings.bm25_hit_bonus
                full = _Evidence(*self.weights, 1.0, kw_ev, bonus_full)
            kw_ev *= readable
        hit = self._both and kw_ev is not None
        bonus = 1.0 + self._settings.bm25_hit_bonus * readable if hit else 1.0
        return _Evidence(wv, wb, readable, kw_ev, bonus, full)

    def set_relevance(self, c: Candidate, ev: _Evidence) -> None:
        """``debug["relevance"]``, and ``debug["own_relevance"]``: the relevance from
        the hit's own cosine, when its vector score is its contextual one (the
        context stage gates on it)."""
        c.debug["relevance"] = self._relevance(c, ev, c.vector_score)
        own = c.debug.get("own_vector")
        if own is not None:
            c.debug["own_relevance"] = self._relevance(c, ev, own)

    def _relevance(self, c: Candidate, ev: _Evidence, cosine: float | None) -> float:
        """The relevance ``ev`` gives at ``cosine`` (``None``: from the vector rank);
        the better reading of a number match (see :attr:`_Evidence.read_in_full`)."""
        best = 0.0
        for e in ev.readings():
            full = self._full_match(e.readable)
            if cosine is None:
                vec_ev = _vector_evidence(c, full, self._settings.rrf_k)
            else:
                vec_ev = _clamp01(cosine / full)
            best = max(best, e.relevance(vec_ev))
        return best

    def _full_match(self, readable: float) -> float:
        """The cosine that counts as a full match for a memory of which the query's
        script reads ``readable``: cross-lingual pairs of one meaning score lower than
        same-language ones (``retrieval.cross_script_full_match`` of the full match)."""
        if readable >= 1.0:
            return self._full
        ratio = self._settings.cross_script_full_match
        return self._full * (readable + (1.0 - readable) * ratio)

    def finish(self, how: str) -> list[Candidate]:
        """The candidates, best ``score`` first."""
        self.candidates.sort(key=best_first)
        logger.debug("%s fusion: %d candidates", how, len(self.candidates))
        return self.candidates


def fuse_weighted(
    vector: Ranked, keyword: Ranked, settings: RetrievalSettings, **options: Unpack[FusionOptions]
) -> list[Candidate]:
    """Weighted-sum fusion of vector and BM25 candidates.

    Args:
        vector: The vector engine's candidates (:data:`Ranked`).
        keyword: The keyword engine's candidates (:data:`Ranked`).
        settings: ``vector_weight``, ``bm25_weight`` and ``bm25_hit_bonus`` are used.
        **options: ``full_match_cosine``, ``copy_inputs``, ``query``
            (:class:`FusionOptions`).

    Returns:
        Candidates merged by id (new ones with ``copy_inputs``), sorted by ``score``
        (best first), with ``debug`` keys ``vector`` (cosine), ``bm25`` (normalised
        BM25, keyword hits only), ``fused`` and ``relevance``.
    """
    fusion = _Fusion(vector, keyword, settings, **options)
    wv, wb = fusion.weights
    for c in fusion.candidates:
        ev = fusion.evidence(c)
        cos = _clamp01(c.vector_score) if c.vector_score is not None else 0.0
        # across scripts: the cosine on the one-language scale, and for the share of
        # the memory the keyword side cannot read, the vector evidence as its keyword
        # evidence (the same in both readings of a number match)
        calibrated = cos / fusion.cross_script_ratio(ev.readable)
        implied = 0.0
        if c.vector_score is not None and ev.readable < 1.0:
            implied = UNREAD_KEYWORD_SHARE * _clamp01(calibrated / fusion.full_match)
        best = 0.0
        for e in ev.readings():
            if e is ev:
                keyword_ev = (e.keyword or 0.0) + (1.0 - e.readable) * implied
            else:  # a number matched: that share is read, the rest is judged as above
                matched = e.keyword or 0.0
                keyword_ev = matched + (1.0 - matched) * implied
            best = max(best, (wv * calibrated + wb * keyword_ev) * e.bonus)
        c.score = best
        if c.vector_score is not None:
            c.debug["vector"] = c.vector_score
        if ev.keyword is not None:
            c.debug["bm25"] = ev.keyword
        if ev.readable < 1.0:
            c.debug["keyword_readable"] = ev.readable
        c.debug["fused"] = c.score
        fusion.set_relevance(c, ev)
    return fusion.finish("weighted")


def fuse_rrf(
    vector: Ranked, keyword: Ranked, settings: RetrievalSettings, **options: Unpack[FusionOptions]
) -> list[Candidate]:
    """Weighted reciprocal-rank fusion, scaled to 0..1.

    ``score = sum_e w_e / (rrf_k + rank_e + 1) / sum_e w_e / (rrf_k + 1)`` over the
    engines that ran, so a candidate ranked first by every engine scores 1.0.
    Ranks are ``vector_rank`` / ``bm25_rank`` or else the list positions.
    ``debug["relevance"]`` is computed as in :func:`fuse_weighted` (from scores when
    known), so the thresholds mean the same in both fusion modes.

    Args:
        vector: The vector engine's candidates (:data:`Ranked`).
        keyword: The keyword engine's candidates (:data:`Ranked`).
        settings: ``rrf_k``, the engine weights and ``bm25_hit_bonus`` are used.
        **options: As for :func:`fuse_weighted`.

    Returns:
        Candidates merged by id (new ones with ``copy_inputs``), sorted by ``score``
        (best first), with ``debug`` keys ``rrf`` (the scaled RRF score), ``fused``
        and ``relevance``.
    """
    fusion = _Fusion(vector, keyword, settings, **options)
    k = settings.rrf_k
    best = sum(fusion.weights) / (k + 1)
    for c in fusion.candidates:
        ev = fusion.evidence(c)
        rrf = 0.0
        for e in ev.readings():
            both = 0.0
            if c.vector_rank is not None:
                both += e.wv / (k + c.vector_rank + 1)
            if fusion.is_keyword_hit(c) and c.bm25_rank is not None:
                both += e.wb / (k + c.bm25_rank + 1)
            rrf = max(rrf, both)
        c.score = rrf / best if best > 0 else 0.0
        c.debug["rrf"] = c.score
        c.debug["fused"] = c.score
        if ev.keyword is not None and ev.readable < 1.0:
            c.debug["keyword_readable"] = ev.readable
        fusion.set_relevance(c, ev)
    return fusion.finish("rrf")


__all__ = [
    "DEFAULT_FULL_MATCH_COSINE",
    "KEYWORD_FULL_MATCH_SHARE",
    "UNREAD_KEYWORD_SHARE",
    "FusionOptions",
    "Ranked",
    "fuse_rrf",
    "fuse_weighted",
    "one_word_share",
]

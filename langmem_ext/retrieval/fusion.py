"""Fuse the vector engine's and the keyword engine's candidates into one list.

Fusion gives every candidate two numbers, because ranking and filtering are
different questions:

``score`` — the *ranking* score, which the scoring stages then adjust:

* weighted (default, seed 000): ``w_v * cos + w_b * bm25 / max_bm25``, times
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

Two things make a keyword score mean evidence (issue 17):

* ``bm25 / max_bm25`` is divided by the larger of the pool's best BM25 and
  :data:`KEYWORD_FULL_MATCH_SHARE` of the query's full-match BM25 (the sum of its
  terms' IDFs, :attr:`Candidate.bm25_full`): a pool whose best match covers a sliver
  of the query no longer scores that match 1.0.
* Given the query text, each candidate's keyword weight is scaled by the share of it
  the keyword engine can read for this query
  (:func:`~langmem_ext.text.script_overlap`): an English query matches the
  stray Latin words ("NFL", "Level") of a Chinese memory, not the memory, and cannot
  match a Chinese memory at all. The unreadable share of the keyword weight goes to
  the vector side, so a cross-lingual hit is ranked by its cosine instead of
  0.4 x its cosine against a same-language memory that shares one name with the
  question. Its keyword evidence and hit bonus are scaled the same way.

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

Why calibrate the cosine? The thresholds (0.3 / 0.35) are seed 000's, whose scale
was not a raw cosine. With USE multilingual v3, the default embedder, relevant short
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

from langmem_ext.config import RetrievalSettings
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.text import script_overlap, script_profile

logger = logging.getLogger(__name__)

DEFAULT_FULL_MATCH_COSINE = 0.6
"""Cosine at which vector evidence counts as a full match (relevance 1.0).

Calibrated on USE multilingual v3; not (yet) a setting of ``RetrievalSettings``."""


KEYWORD_FULL_MATCH_SHARE = 0.25
"""A keyword hit's evidence is its BM25 over the larger of the pool's best BM25 and
this share of the query's full-match BM25 (the sum of its terms' IDFs, see
:attr:`~langmem_ext.retrieval.candidate.Candidate.bm25_full`): the best match of a
pool only counts as certain when it matched at least this share of what the
query's words weigh. One stray match of a common word is no longer 1.0."""


def _clamp01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def _merge(
    vector: Sequence[Candidate] | None,
    keyword: Sequence[Candidate] | None,
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
        for key, dbg in c.debug.items():  # what the keyword side noted (e.g. a slot match)
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
    the vector engine. A slot match (``debug["slot"]``: the memory states the very
    attribute the question asks for) is structured evidence, readable in any script.
    """
    if profile is None or wb <= 0.0 or c.debug.get("slot"):
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


def _relevance(
    vec_ev: float | None, kw_ev: float | None, wv: float, wb: float, bonus: float
) -> float:
    """The strongest evidence of an engine that ran (weight > 0), times ``bonus``."""
    best = vec_ev if wv > 0.0 else None
    if kw_ev is not None and wb > 0.0 and (best is None or kw_ev > best):
        best = kw_ev
    return 0.0 if best is None else _clamp01(best * bonus)


def _own_relevance(
    c: Candidate, kw_ev: float | None, wv: float, wb: float, bonus: float, full: float
) -> None:
    """``debug["own_relevance"]``: the relevance from the hit's own cosine, when its
    vector score is its contextual one (the context stage gates on it)."""
    own = c.debug.get("own_vector")
    if own is not None:
        c.debug["own_relevance"] = _relevance(_clamp01(own / full), kw_ev, wv, wb, bonus)


def _finish(candidates: list[Candidate], how: str) -> list[Candidate]:
    candidates.sort(key=lambda c: c.score, reverse=True)
    logger.debug("%s fusion: %d candidates", how, len(candidates))
    return candidates


def fuse_weighted(
    vector: Sequence[Candidate] | None,
    keyword: Sequence[Candidate] | None,
    settings: RetrievalSettings,
    *,
    full_match_cosine: float = DEFAULT_FULL_MATCH_COSINE,
    copy_inputs: bool = True,
    query: str | None = None,
) -> list[Candidate]:
    """Weighted-sum fusion of vector and BM25 candidates (seed 000).

    Args:
        vector: The vector engine's candidates, best first; ``None`` when the
            vector engine did not run (an empty list means it found nothing).
        keyword: The keyword engine's candidates, best first; ``None`` when it did
            not run.
        settings: ``vector_weight``, ``bm25_weight`` and ``bm25_hit_bonus`` are used.
        full_match_cosine: Cosine at which vector evidence counts as certain for
            ``debug["relevance"]``.
        copy_inputs: ``False`` when the caller does not use the given candidates
            again: they are then merged and scored in place instead of copied.
        query: The query text. With it (and both engines run), the keyword weight
            of each candidate is scaled by the share of the memory the keyword engine
            can read for this query (:func:`~langmem_ext.text.script_overlap`);
            the rest of that weight goes to the vector side (see the module doc).

    Returns:
        Candidates merged by id (new ones with ``copy_inputs``), sorted by ``score``
        (best first), with ``debug`` keys ``vector`` (cosine), ``bm25`` (normalised
        BM25, keyword hits only), ``fused`` and ``relevance``.
    """
    merged, keyword_ids = _merge(vector, keyword, copy=copy_inputs)
    both = vector is not None and keyword is not None
    wv0, wb0 = _weights(settings, vector is not None, keyword is not None)
    max_bm25 = max((c.bm25_score or 0.0 for c in merged if c.id in keyword_ids), default=0.0)
    rrf_k = settings.rrf_k
    profile = script_profile(query) if both and query is not None else None
    for c in merged:
        wv, wb, readable = _candidate_weights(c, wv0, wb0, profile)
        kw_ev = _keyword_evidence(c, keyword_ids, max_bm25, rrf_k)
        if kw_ev is not None and readable < 1.0:
            kw_ev *= readable
        bonus = 1.0 + settings.bm25_hit_bonus * readable if both and kw_ev is not None else 1.0
        cos = _clamp01(c.vector_score) if c.vector_score is not None else 0.0
        c.score = (wv * cos + wb * (kw_ev or 0.0)) * bonus
        if c.vector_score is not None:
            c.debug["vector"] = c.vector_score
        if kw_ev is not None:
            c.debug["bm25"] = kw_ev
        if readable < 1.0:
            c.debug["keyword_readable"] = readable
        c.debug["fused"] = c.score
        vec_ev = _vector_evidence(c, full_match_cosine, rrf_k)
        c.debug["relevance"] = _relevance(vec_ev, kw_ev, wv, wb, bonus)
        _own_relevance(c, kw_ev, wv, wb, bonus, full_match_cosine)
    return _finish(merged, "weighted")


def fuse_rrf(
    vector: Sequence[Candidate] | None,
    keyword: Sequence[Candidate] | None,
    settings: RetrievalSettings,
    *,
    full_match_cosine: float = DEFAULT_FULL_MATCH_COSINE,
    copy_inputs: bool = True,
    query: str | None = None,
) -> list[Candidate]:
    """Weighted reciprocal-rank fusion, scaled to 0..1.

    ``score = sum_e w_e / (rrf_k + rank_e + 1) / sum_e w_e / (rrf_k + 1)`` over the
    engines that ran, so a candidate ranked first by every engine scores 1.0.
    Ranks are ``vector_rank`` / ``bm25_rank`` or else the list positions.
    ``debug["relevance"]`` is computed as in :func:`fuse_weighted` (from scores when
    known), so the thresholds mean the same in both fusion modes.

    Args:
        vector: The vector engine's candidates, best first; ``None`` if it did not run.
        keyword: The keyword engine's candidates, best first; ``None`` if it did not run.
        settings: ``rrf_k``, the engine weights and ``bm25_hit_bonus`` are used.
        full_match_cosine: Cosine at which vector evidence counts as certain.
        copy_inputs: ``False`` when the caller does not use the given candidates
            again: they are then merged and scored in place instead of copied.
        query: The query text. With it (and both engines run), the keyword weight
            of each candidate is scaled by the share of the memory the keyword engine
            can read for this query (:func:`~langmem_ext.text.script_overlap`);
            the rest of that weight goes to the vector side (see the module doc).

    Returns:
        Candidates merged by id (new ones with ``copy_inputs``), sorted by ``score``
        (best first), with ``debug`` keys ``rrf`` (the scaled RRF score), ``fused``
        and ``relevance``.
    """
    merged, keyword_ids = _merge(vector, keyword, copy=copy_inputs)
    both = vector is not None and keyword is not None
    wv0, wb0 = _weights(settings, vector is not None, keyword is not None)
    k = settings.rrf_k
    max_bm25 = max((c.bm25_score or 0.0 for c in merged if c.id in keyword_ids), default=0.0)
    best = (wv0 + wb0) / (k + 1)
    profile = script_profile(query) if both and query is not None else None
    for c in merged:
        wv, wb, readable = _candidate_weights(c, wv0, wb0, profile)
        rrf = 0.0
        if c.vector_rank is not None:
            rrf += wv / (k + c.vector_rank + 1)
        if c.id in keyword_ids and c.bm25_rank is not None:
            rrf += wb / (k + c.bm25_rank + 1)
        c.score = rrf / best if best > 0 else 0.0
        c.debug["rrf"] = c.score
        c.debug["fused"] = c.score
        kw_ev = _keyword_evidence(c, keyword_ids, max_bm25, k)
        if kw_ev is not None and readable < 1.0:
            kw_ev *= readable
            c.debug["keyword_readable"] = readable
        bonus = 1.0 + settings.bm25_hit_bonus * readable if both and kw_ev is not None else 1.0
        vec_ev = _vector_evidence(c, full_match_cosine, k)
        c.debug["relevance"] = _relevance(vec_ev, kw_ev, wv, wb, bonus)
        _own_relevance(c, kw_ev, wv, wb, bonus, full_match_cosine)
    return _finish(merged, "rrf")


__all__ = ["DEFAULT_FULL_MATCH_COSINE", "KEYWORD_FULL_MATCH_SHARE", "fuse_rrf", "fuse_weighted"]

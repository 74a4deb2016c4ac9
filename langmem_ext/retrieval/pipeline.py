"""Rank engine candidates: fusion, then the scoring stages, then the top ``k``.

Order of the stages in :func:`rank` (each can be switched off in
:class:`PipelineOptions`):

1. fusion (``settings.fusion``: weighted or rrf) — ``score`` and ``relevance``;
2. conversation context — neighbours of a candidate in its file section pass it a
   share of their score (:mod:`langmem_ext.retrieval.context`; needs a
   ``NeighbourSource``, which the search engine gives); then the graph boost —
   a candidate the knowledge graph links to the query's entities gains
   ``graph_weight`` times its graph score (:func:`graph_boost`);
3. the best ``max(4 k, 40)`` go on (:data:`WORKING_SET`); noise filter —
   refusals, greetings, meta questions are never returned (it runs on the top
   ``k`` after step 8 and, only when it drops one of them, again from here: the
   same result, for a fraction of its cost; see ``_stages``);
4. ``min_score`` on relevance — too little evidence of a match;
5. recency boost, importance weight, length normalisation, time decay (one pass:
   :func:`~langmem_ext.retrieval.scoring.per_candidate_stages`);
6. time window (in the same pass) — with a recall intent, hits created inside its window are boosted
   and exempt from both thresholds (the date is their evidence: "what did we talk
   about yesterday?" shares few words with what was said);
7. ``hard_min_score`` on relevance + recency boost;
8. MMR demotion of near-duplicates;
9. safety first — the candidates stating a safety field the question asks about
   (``Candidate.safety``, set by the search's safety stage: "what am I allergic
   to?" / "我做过什么手术") go first, in their staged order (:func:`safety_first`);
   they are never cut from the working set nor dropped by the thresholds or the
   noise filter: a safety fact always reaches the model;
10. the first ``k`` (clamped to ``settings.max_k``), their score mapped onto 0..1
    (:func:`~langmem_ext.retrieval.explain.final_score`; ``debug["ranking"]`` keeps
    the ranking score). Why each stage acted, in words:
    :func:`~langmem_ext.retrieval.explain.explain`.

Why the thresholds sit where they do is explained in
:mod:`langmem_ext.retrieval.scoring`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.retrieval.candidate import Candidate, best_first
from langmem_ext.retrieval.context import NeighbourSource, context_boost
from langmem_ext.retrieval.explain import final_score
from langmem_ext.retrieval.fusion import DEFAULT_FULL_MATCH_COSINE, fuse_rrf, fuse_weighted
from langmem_ext.retrieval.intent import RecallIntent
from langmem_ext.retrieval.scoring import (
    Exempt,
    hard_min_filter,
    min_score_filter,
    mmr_demote,
    noise_filter,
    per_candidate_stages,
)

logger = logging.getLogger(__name__)

WORKING_SET = 4
"""After fusion and context, only the best ``max(4 k, 40)`` candidates go on through
the scoring stages."""


@dataclass
class PipelineOptions:
    """Which stages :func:`rank` runs (all by default).

    Attributes:
        recency: Recency boost.
        importance: Importance weight.
        length_norm: Length normalisation.
        time_decay: Time decay.
        thresholds: ``min_score`` and ``hard_min_score`` filters.
        noise: Noise filter.
        mmr: MMR demotion of near-duplicates.
        context: Conversation context (neighbours in the same file section).
        graph: The graph boost (``Candidate.graph_score``, set by the search's graph
            stage).
        safety: Safety first (``Candidate.safety``, set by the search's safety stage).
        person: Lower the score of a memory about someone other than whom the
            question asks about (``Candidate.other_person``, set by the search's
            person stage).
    """

    recency: bool = True
    importance: bool = True
    length_norm: bool = True
    time_decay: bool = True
    thresholds: bool = True
    noise: bool = True
    mmr: bool = True
    context: bool = True
    graph: bool = True
    safety: bool = True
    person: bool = True


OTHER_PERSON_FACTOR = 0.75
"""Score factor of a memory about someone other than whom the question asks about
(``Candidate.other_person``): "What is my wife allergic to?" and the user's own
allergy, "Where do I live?" and where the user's mother lives. It keeps three
quarters of its score: whom a memory is about is read from its wording, which can
miss (a name and a relation that are one person), so it is lowered, never removed."""


def person_demote(cands: list[Candidate], factor: float = OTHER_PERSON_FACTOR) -> list[Candidate]:
    """Multiply the score of the candidates about another person by ``factor``, in
    place (``debug["other_person"]`` is the factor). Returns them, best first.

    Example:
        >>> a, b = Candidate("a", "x", "fact", 0.0, 1.0), Candidate("b", "y", "fact", 0.0, 1.0)
        >>> a.score, b.score, a.other_person = 0.5, 0.45, True
        >>> [c.id for c in person_demote([a, b])]
        ['b', 'a']
    """
    changed = False
    for c in cands:
        if c.other_person:
            c.score *= factor
            c.debug["other_person"] = factor
            changed = True
    if changed:
        cands.sort(key=best_first)
    return cands


def safety_first(cands: list[Candidate]) -> list[Candidate]:
    """The candidates stating a safety field the question asks about first, each
    group in its order; ``debug["safety_first"]`` marks them.

    Example:
        >>> a, b = Candidate("a", "x", "fact", 0.0, 1.0), Candidate("b", "y", "fact", 0.0, 1.0)
        >>> b.safety = ("allergies",)
        >>> [c.id for c in safety_first([a, b])]
        ['b', 'a']
    """
    first = [c for c in cands if c.safety]
    if not first:
        return cands
    for c in first:
        c.debug["safety_first"] = 1.0
    return first + [c for c in cands if not c.safety]


def _states_safety(c: Candidate) -> bool:
    return bool(c.safety)


def graph_boost(cands: list[Candidate], weight: float) -> list[Candidate]:
    """Add ``weight * graph_score`` to the score of candidates the graph linked, in place.

    The boost is ``debug["graph"]``; the relevance (what the thresholds read) is the
    candidate's own evidence, so a graph link reorders hits but never keeps one that
    has no signal of its own. Returns the candidates, best first.
    """
    boosted = False
    for c in cands:
        if c.graph_score:
            gain = weight * c.graph_score
            c.score += gain
            c.debug["graph"] = gain
            boosted = True
    if boosted:
        cands.sort(key=best_first)
    return cands


def _inside(intent: RecallIntent) -> Exempt:
    def inside(c: Candidate) -> bool:
        return intent.contains(c.created_at)

    return inside


def rank(
    vector: Sequence[Candidate] | None,
    keyword: Sequence[Candidate] | None,
    *,
    k: int,
    settings: RetrievalSettings,
    now: float,
    options: PipelineOptions | None = None,
    intent: RecallIntent | None = None,
    full_match_cosine: float = DEFAULT_FULL_MATCH_COSINE,
    context: NeighbourSource | None = None,
    cosine_baseline: float = 0.0,
    copy_inputs: bool = True,
    extra: int = 0,
    query: str | None = None,
) -> list[Candidate]:
    """Fuse and score engine candidates and return the best ``k``.

    Args:
        vector: The vector engine's candidates, best first; ``None`` when it did not
            run (keyword-only search). An empty list means it ran and found nothing.
        keyword: The keyword engine's candidates, best first; ``None`` when it did not
            run (vector-only search).
        k: How many to return; clamped to ``settings.max_k``.
        settings: The retrieval settings.
        now: Current time, epoch seconds.
        options: Stages to run; all by default.
        intent: A recall intent; when it has a time window, hits created inside it
            get ``debug["time_window"]`` and a higher score.
        full_match_cosine: Cosine at which vector evidence counts as certain (see
            :mod:`langmem_ext.retrieval.fusion`).
        context: Finds the neighbours of candidates for the context stage; without
            it the stage is skipped.
        cosine_baseline: Cosine of unrelated texts for the embedder that made the
            candidates' embeddings (MMR compares on the rescaled cosine).
        copy_inputs: ``False`` when the caller does not use ``vector`` and
            ``keyword`` again (the search engine): fusion then merges and scores
            them in place instead of copying each one.
        extra: Also return up to this many candidates after the best ``k``, in
            their staged order (noise dropped; MMR orders only the first ``k``).
            The search engine uses them to give each question of a compound
            message a hit.
        query: The query text (a compound message: the whole message). Fusion
            weighs each candidate's keyword evidence by the share of it the keyword
            engine can read for this query (an English query cannot read a Chinese
            memory); without it every candidate counts as fully readable.

    Returns:
        New candidates, best first, at most ``k`` (plus ``extra``). ``debug`` holds
        every stage's contribution, ``ranking`` (the score the stages ranked by) and
        ``final``, the returned ``score``: the ranking score on the scale 0..1
        (:func:`~langmem_ext.retrieval.explain.final_score`, same order). The inputs
        are not changed unless ``copy_inputs`` is ``False``.
    """
    opts = options or PipelineOptions()
    k = min(k, settings.max_k)
    if k <= 0:
        return []
    fuse = fuse_rrf if settings.fusion == "rrf" else fuse_weighted
    cands = fuse(
        vector,
        keyword,
        settings,
        full_match_cosine=full_match_cosine,
        copy_inputs=copy_inputs,
        query=query,
    )
    total = len(cands)

    if opts.context and context is not None:  # fusion's output is ours: no copies
        cands = context_boost(cands, context, settings, k=k, copy_inputs=False)
    if opts.graph and settings.graph_weight > 0:
        cands = graph_boost(cands, settings.graph_weight)
    if opts.person:
        cands = person_demote(cands)
    # Fusion and context return candidates best first. The later stages only filter
    # and rescale by bounded factors: a candidate far below the k-th cannot reach the
    # top k, and copying it through every stage costs.
    working = max(WORKING_SET * k, 40)
    kept = [c for c in cands[working:] if c.safety] if opts.safety else []
    cands = cands[:working] + kept  # a safety fact is never cut

    window = intent if intent is not None and intent.has_window else None
    stage = partial(
        _stages, cands, settings, opts, k=k, now=now, window=window, cosine_baseline=cosine_baseline
    )
    staged = stage(noise=False)  # noise checked on the top k only: see _stages
    if opts.noise and _has_noise(staged[:k], settings):
        staged = stage(noise=True)
    if opts.safety:
        staged = safety_first(staged)

    result = staged[:k]
    if extra > 0:  # the next ones, noise dropped (MMR orders only the first k)
        more = staged[k : k + extra]
        safe = _states_safety if opts.safety else None
        result += noise_filter(more, settings, exempt=safe) if opts.noise else more
    for c in result:  # one scale for every hit (the order is the ranking's)
        c.debug["ranking"] = c.score
        c.score = final_score(c.score)
        c.debug["final"] = c.score
    logger.debug(
        "rank: %d fused, %d passed the stages, returning %d", total, len(staged), len(result)
    )
    return result


def _has_noise(candidates: list[Candidate], settings: RetrievalSettings) -> bool:
    """Whether the noise filter would drop any of ``candidates``."""
    return len(noise_filter(candidates, settings, exempt=_states_safety)) < len(candidates)


def _stages(
    cands: list[Candidate],
    settings: RetrievalSettings,
    opts: PipelineOptions,
    *,
    k: int,
    now: float,
    window: RecallIntent | None,
    cosine_baseline: float,
    noise: bool,
) -> list[Candidate]:
    """Stages 3-8 of :func:`rank` on the working set; the noise filter only with ``noise``.

    :func:`rank` first runs them without the noise filter and checks only the top
    ``k`` for noise: checking the text of every candidate costs more than all other
    stages together, and the top ``k`` are the same either way unless one of them
    is noise. Why: the filters and the per-candidate stages commute with dropping a
    candidate (each sorts stably); in MMR, a candidate it demotes changes no other
    one, and one it keeps can only change those walked after it, which end up
    ranked below it. So a noise candidate outside the top ``k`` changes nothing
    inside it. When one of the top ``k`` is noise, :func:`rank` runs the stages
    again, noise first. The stages copy what they change: ``cands`` can be staged
    twice.
    """
    exempt: Exempt | None = _inside(window) if window is not None else None
    if opts.safety:  # a safety fact is kept whatever its score: the question asks for it
        inside = exempt
        exempt = _states_safety if inside is None else (lambda c: c.safety != () or inside(c))
    if noise:
        cands = noise_filter(cands, settings, exempt=_states_safety if opts.safety else None)
    if opts.thresholds:
        cands = min_score_filter(cands, settings, exempt=exempt)
    bounds = None
    if window is not None and window.window_start is not None and window.window_end is not None:
        bounds = (window.window_start, window.window_end)
    cands = per_candidate_stages(  # copies every candidate: the rest may change them
        cands,
        settings,
        now,
        recency=opts.recency,
        importance=opts.importance,
        length=opts.length_norm,
        decay=opts.time_decay,
        window=bounds,
    )
    if opts.thresholds:
        cands = hard_min_filter(cands, settings, exempt=exempt)
    if opts.mmr:
        cands = mmr_demote(cands, settings, cosine_baseline=cosine_baseline, k=k, copy_inputs=False)
    return cands


__all__ = [
    "OTHER_PERSON_FACTOR",
    "WORKING_SET",
    "PipelineOptions",
    "graph_boost",
    "person_demote",
    "rank",
    "safety_first",
]

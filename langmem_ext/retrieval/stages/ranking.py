"""The ranking stages: fusion, then the stages that rescore and filter one ranked list.

In order (:func:`~langmem_ext.retrieval.stages.defaults.ranking_stages`):

1. ``fusion`` (``settings.fusion``: weighted or rrf) — ``score`` and ``relevance``;
2. ``context`` — neighbours of a candidate in its file section pass it a share of
   their score (:mod:`langmem_ext.retrieval.context`; needs ``io.neighbours``);
3. ``graph_boost`` — a candidate the knowledge graph links to the query's entities
   gains ``graph_weight`` times its graph score;
4. ``person_demote`` — a memory about someone other than whom the question asks
   about keeps :data:`OTHER_PERSON_FACTOR` of its score;
5. ``working_set`` — the best ``max(4 k, 40)`` go on (:data:`WORKING_SET`; a safety
   fact is never cut);
6. ``min_score`` on relevance — too little evidence of a match;
7. ``recency``, ``importance``, ``length_norm``, ``time_decay``, ``time_window``
   (with a recall intent, hits created inside its window are boosted and exempt
   from both thresholds: the date is their evidence);
8. ``hard_min_score`` on relevance + recency boost;
9. ``mmr`` — demotion of near-duplicates;
10. ``noise`` — refusals, greetings, meta questions are never returned. It checks
    the top ``k`` only, and when one of them is noise runs stages 6-9 again from
    the working set without the noise: the same result as filtering first, for a
    fraction of its cost (the filters and per-candidate stages commute with
    dropping a candidate; in MMR a noise candidate outside the top ``k`` changes
    nothing inside it);
11. ``safety_first`` — the candidates stating a safety field the question asks
    about go first, in their order; they are never dropped by the thresholds or
    the noise filter;
12. ``top_k`` — the first ``k`` (plus ``ctx.extra``), their score mapped onto 0..1
    (:func:`~langmem_ext.retrieval.explain.final_score`; ``debug["ranking"]`` keeps
    the ranking score).

Why the thresholds sit where they do is explained in
:mod:`langmem_ext.retrieval.scoring`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from langmem_ext.retrieval.candidate import Candidate, best_first
from langmem_ext.retrieval.context import context_boost
from langmem_ext.retrieval.explain import final_score
from langmem_ext.retrieval.fusion import fuse_rrf, fuse_weighted
from langmem_ext.retrieval.scoring import (
    Exempt,
    adjustment,
    hard_min_filter,
    min_score_filter,
    mmr_demote,
    noise_filter,
)
from langmem_ext.retrieval.stages.base import Pool, QueryContext

logger = logging.getLogger(__name__)

WORKING_SET = 4
"""After fusion and context, only the best ``max(4 k, 40)`` candidates go on through
the scoring stages."""

OTHER_PERSON_FACTOR = 0.75
"""Score factor of a memory about someone other than whom the question asks about
(``Candidate.other_person``): "What is my wife allergic to?" and the user's own
allergy, "Where do I live?" and where the user's mother lives. It keeps three
quarters of its score: whom a memory is about is read from its wording, which can
miss (a name and a relation that are one person), so it is lowered, never removed."""


def _states_safety(c: Candidate) -> bool:
    return bool(c.safety)


def _safety_on(ctx: QueryContext) -> bool:
    return "safety_first" in ctx.active


def _window(ctx: QueryContext) -> tuple[float, float] | None:
    """The recall intent's time window, when it has both ends."""
    w = ctx.intent
    if w is None or not w.has_window or w.window_start is None or w.window_end is None:
        return None
    return (w.window_start, w.window_end)


def _exempt(ctx: QueryContext) -> Exempt | None:
    """Who the thresholds keep whatever their score: hits inside the recall window
    (the date is their evidence), and safety facts (the question asks for them)."""
    intent = ctx.intent if ctx.intent is not None and ctx.intent.has_window else None
    inside: Exempt | None = None
    if intent is not None:
        w = intent

        def inside(c: Candidate) -> bool:
            return w.contains(c.created_at)

    if not _safety_on(ctx):
        return inside
    if inside is None:
        return _states_safety
    within = inside
    return lambda c: c.safety != () or within(c)


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


@dataclass(frozen=True)
class Fusion:
    """Fuse the vector and keyword candidates into one ranked list
    (:mod:`langmem_ext.retrieval.fusion`)."""

    name: str = "fusion"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Set ``pool.ranked`` from ``pool.vector`` and ``pool.keyword``."""
        fuse = fuse_rrf if ctx.settings.fusion == "rrf" else fuse_weighted
        pool.ranked = fuse(
            pool.vector,
            pool.keyword,
            ctx.settings,
            full_match_cosine=ctx.full_match_cosine,
            copy_inputs=ctx.copy_inputs,
            query=ctx.query or None,
            subject_words=pool.subject_words,
        )
        pool.vector = pool.keyword = None
        return pool


@dataclass(frozen=True)
class Context:
    """Conversation context: neighbours of a candidate in its file section pass it a
    share of their score (:func:`~langmem_ext.retrieval.context.context_boost`)."""

    name: str = "context"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Boost ``pool.ranked`` from ``ctx.io.neighbours`` (skipped without it)."""
        if ctx.io.neighbours is not None:  # fusion's output is ours: no copies
            pool.ranked = context_boost(
                pool.ranked, ctx.io.neighbours, ctx.settings, k=ctx.k, copy_inputs=False
            )
        return pool


@dataclass(frozen=True)
class GraphBoost:
    """Raise the candidates the knowledge graph links (:func:`graph_boost`)."""

    name: str = "graph_boost"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Add ``graph_weight * graph_score`` to linked candidates."""
        if ctx.settings.graph_weight > 0:
            pool.ranked = graph_boost(pool.ranked, ctx.settings.graph_weight)
        return pool


@dataclass(frozen=True)
class PersonDemote:
    """Lower memories about someone other than whom the question asks about
    (:func:`person_demote`)."""

    name: str = "person_demote"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Multiply their score by :data:`OTHER_PERSON_FACTOR`."""
        pool.ranked = person_demote(pool.ranked)
        return pool


@dataclass(frozen=True)
class WorkingSet:
    """Keep the best ``max(4 k, 40)`` (and every safety fact): the later stages only
    filter and rescale by bounded factors, so a candidate far below the ``k``-th
    cannot reach the top ``k``. Copies the kept ones (the later stages change
    them in place) and keeps the originals for the noise stage."""

    name: str = "working_set"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Cut ``pool.ranked`` to the working set."""
        cands = pool.ranked
        working = max(WORKING_SET * ctx.k, 40)
        kept = [c for c in cands[working:] if c.safety] if _safety_on(ctx) else []
        cands = cands[:working] + kept  # a safety fact is never cut
        pool.checkpoint = (pool.position + 1, cands)
        pool.ranked = sorted((c.copy() for c in cands), key=best_first)  # the kept ones too
        return pool


@dataclass(frozen=True)
class MinScore:
    """Drop candidates whose relevance is below ``min_score``
    (:func:`~langmem_ext.retrieval.scoring.min_score_filter`)."""

    name: str = "min_score"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Filter ``pool.ranked``."""
        pool.ranked = min_score_filter(pool.ranked, ctx.settings, exempt=_exempt(ctx))
        return pool


@dataclass(frozen=True)
class Adjust:
    """One per-candidate stage (recency boost, importance weight, length
    normalisation, time decay, time window; :mod:`langmem_ext.retrieval.scoring`),
    in place, then best first again.

    Attributes:
        name: ``recency``, ``importance``, ``length_norm``, ``time_decay`` or
            ``time_window``.
    """

    name: str

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Rescore ``pool.ranked``."""
        window = _window(ctx)
        if self.name == "time_window" and window is None:
            return pool
        step = adjustment(self.name, ctx.settings, ctx.now, window)
        for c in pool.ranked:
            step(c)
        pool.ranked.sort(key=best_first)
        return pool


@dataclass(frozen=True)
class HardMinScore:
    """Drop candidates whose relevance plus recency boost is below
    ``hard_min_score`` (:func:`~langmem_ext.retrieval.scoring.hard_min_filter`)."""

    name: str = "hard_min_score"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Filter ``pool.ranked``."""
        pool.ranked = hard_min_filter(pool.ranked, ctx.settings, exempt=_exempt(ctx))
        return pool


@dataclass(frozen=True)
class MMR:
    """Demote near-duplicates of better hits
    (:func:`~langmem_ext.retrieval.scoring.mmr_demote`)."""

    name: str = "mmr"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Reorder ``pool.ranked``."""
        pool.ranked = mmr_demote(
            pool.ranked,
            ctx.settings,
            cosine_baseline=ctx.cosine_baseline,
            k=ctx.k,
            copy_inputs=False,
        )
        return pool


@dataclass(frozen=True)
class Noise:
    """Refusals, greetings and meta questions are never returned
    (:func:`~langmem_ext.retrieval.scoring.noise_filter`).

    Reading every candidate's text costs more than all other stages together, so
    this checks the top ``k`` only; when one of them is noise, the stages since the
    working set run again on it without the noise (see the module docstring).
    """

    name: str = "noise"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Drop noise from ``pool.ranked``."""
        top = pool.ranked[: ctx.k]
        if len(noise_filter(top, ctx.settings, exempt=_states_safety)) == len(top):
            return pool
        if pool.checkpoint is None or ctx.pipeline is None:  # no working set: filter all
            safe = _states_safety if _safety_on(ctx) else None
            pool.ranked = noise_filter(pool.ranked, ctx.settings, exempt=safe)
            return pool
        start, working = pool.checkpoint
        safe = _states_safety if _safety_on(ctx) else None
        kept = noise_filter(working, ctx.settings, exempt=safe)
        pool.ranked = sorted((c.copy() for c in kept), key=best_first)
        here = pool.position
        pool = ctx.pipeline.run_range(pool, ctx, start, here)
        pool.position = here
        return pool


@dataclass(frozen=True)
class SafetyFirst:
    """The candidates stating a safety field the question asks about first
    (:func:`safety_first`)."""

    name: str = "safety_first"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Reorder ``pool.ranked``."""
        pool.ranked = safety_first(pool.ranked)
        return pool


@dataclass(frozen=True)
class TopK:
    """The first ``k`` (plus up to ``ctx.extra`` more, noise dropped), their score
    mapped onto 0..1 (:func:`~langmem_ext.retrieval.explain.final_score`; same order).
    ``debug["ranking"]`` keeps the ranking score, ``debug["final"]`` the returned one."""

    name: str = "top_k"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Cut ``pool.ranked``."""
        staged, k = pool.ranked, ctx.k
        result = staged[:k]
        if ctx.extra > 0:  # the next ones, noise dropped (MMR orders only the first k)
            more = staged[k : k + ctx.extra]
            if "noise" in ctx.active:
                safe = _states_safety if _safety_on(ctx) else None
                more = noise_filter(more, ctx.settings, exempt=safe)
            result += more
        for c in result:  # one scale for every hit (the order is the ranking's)
            c.debug["ranking"] = c.score
            c.score = final_score(c.score)
            c.debug["final"] = c.score
        pool.ranked = result
        pool.memories = list(result)
        return pool


__all__ = [
    "MMR",
    "OTHER_PERSON_FACTOR",
    "WORKING_SET",
    "Adjust",
    "Context",
    "Fusion",
    "GraphBoost",
    "HardMinScore",
    "MinScore",
    "Noise",
    "PersonDemote",
    "SafetyFirst",
    "TopK",
    "WorkingSet",
    "graph_boost",
    "person_demote",
    "safety_first",
]

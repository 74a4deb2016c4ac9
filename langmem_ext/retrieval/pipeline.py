"""Rank engine candidates already fetched: fusion, then the scoring stages, then the top ``k``.

:func:`rank` runs :func:`~langmem_ext.retrieval.stages.ranking_stages` (the part of
the search pipeline from fusion on; the stages and their order are described in
:mod:`langmem_ext.retrieval.stages.ranking`) on a vector and a keyword list. The
store search, the notes and the session log rank their candidates with it; a
memory search runs the whole pipeline (:func:`~langmem_ext.retrieval.stages.default_stages`).
:class:`PipelineOptions` switches stages off by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.context import NeighbourSource
from langmem_ext.retrieval.fusion import DEFAULT_FULL_MATCH_COSINE
from langmem_ext.retrieval.intent import RecallIntent
from langmem_ext.retrieval.stages.base import Pipeline, Pool, QueryContext
from langmem_ext.retrieval.stages.defaults import ranking_stages
from langmem_ext.retrieval.stages.ports import SearchIO
from langmem_ext.retrieval.stages.ranking import (
    OTHER_PERSON_FACTOR,
    WORKING_SET,
    graph_boost,
    person_demote,
    safety_first,
)

_STAGE_NAMES: dict[str, tuple[str, ...]] = {
    "recency": ("recency",),
    "importance": ("importance",),
    "length_norm": ("length_norm",),
    "time_decay": ("time_decay",),
    "thresholds": ("min_score", "hard_min_score"),
    "noise": ("noise",),
    "mmr": ("mmr",),
    "context": ("context",),
    "graph": ("graph_boost",),
    "safety": ("safety_first",),
    "person": ("person_demote",),
}


@dataclass
class PipelineOptions:
    """Which of the ranking stages run (all by default).

    Attributes:
        recency: Recency boost (stage ``recency``).
        importance: Importance weight (``importance``).
        length_norm: Length normalisation (``length_norm``).
        time_decay: Time decay (``time_decay``).
        thresholds: ``min_score`` and ``hard_min_score`` filters.
        noise: Noise filter (``noise``).
        mmr: MMR demotion of near-duplicates (``mmr``).
        context: Conversation context (``context``).
        graph: The graph boost (``graph_boost``; ``Candidate.graph_score``, set by
            the search's graph stage).
        safety: Safety first (``safety_first``; ``Candidate.safety``, set by the
            search's safety stage).
        person: Lower the score of a memory about someone other than whom the
            question asks about (``person_demote``; ``Candidate.other_person``, set
            by the search's person stage).
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

    def off(self) -> list[str]:
        """Names of the stages these options switch off.

        Returns:
            Stage names (see :func:`~langmem_ext.retrieval.stages.ranking_stages`).
        """
        return [n for f in fields(self) if not getattr(self, f.name) for n in _STAGE_NAMES[f.name]]


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
            ``keyword`` again: fusion then merges and scores them in place instead
            of copying each one.
        extra: Also return up to this many candidates after the best ``k``, in
            their staged order (noise dropped; MMR orders only the first ``k``).
        query: The query text. Fusion weighs each candidate's keyword evidence by
            the share of it the keyword engine can read for this query; without it
            every candidate counts as fully readable.

    Returns:
        New candidates, best first, at most ``k`` (plus ``extra``). ``debug`` holds
        every stage's contribution, ``ranking`` (the score the stages ranked by) and
        ``final``, the returned ``score`` on the scale 0..1. The inputs are not
        changed unless ``copy_inputs`` is ``False``.
    """
    k = min(k, settings.max_k)
    if k <= 0:
        return []
    pipeline = Pipeline(ranking_stages())
    if options is not None:
        pipeline = pipeline.without(options.off())
    pool = Pool(
        vector=None if vector is None else list(vector),
        keyword=None if keyword is None else list(keyword),
    )
    ctx = QueryContext(
        query=query or "",
        texts=[query or ""],
        k=k,
        now=now,
        settings=settings,
        io=SearchIO(neighbours=context),
        intent=intent,
        extra=extra,
        full_match_cosine=full_match_cosine,
        cosine_baseline=cosine_baseline,
        copy_inputs=copy_inputs,
    )
    return pipeline.run(pool, ctx).ranked


__all__ = [
    "OTHER_PERSON_FACTOR",
    "WORKING_SET",
    "PipelineOptions",
    "graph_boost",
    "person_demote",
    "rank",
    "safety_first",
]

"""The search's graph stage: memories linked to the question's entities by triples.

A knowledge graph fuses vector candidates with triples reached from the question's
entities. Here:

1. the question's entities are the known entity keys it mentions
   (:func:`~langmem_ext.memory.knowledge.extract.match_entities`: longest string
   matches; "my" / "我" is the user); when it names none, the entities whose
   embedded names are closest to the question (cosine at least
   :data:`ENTITY_MATCH`, at most :data:`EMBEDDED_ENTITIES`) — another language or
   wording;
2. their triples (one hop), then the triples of the entities those reach best
   (two hops), are read from the knowledge graph;
3. each triple gets a relevance to the question in 0-1: the better of the share of
   the question's other words its predicate and far end hold, and its embedded
   sentence's cosine to the question above the cosine of its entity's name alone
   (what the triple says beyond naming the entity: "Melanie finish another
   painting" against "Melanie", for "What did Melanie paint recently?"), or above
   the median cosine of the entity's triples read when that is higher (a hub's
   typical triple, :func:`typical_cosine`), where half of the remaining distance
   to 1 counts as full;
4. a one-hop triple scores ``relevance × (½ + ½ × specificity)`` of its question
   entity (an entity every memory mentions links less than a rare one); a two-hop
   triple scores ``0.7 × link × relevance``, the link to its middle entity being
   ``(½ + ½ × specificity) × (½ + ½ × relevance)`` of the first hop times the square
   root of the middle entity's specificity (a path counts, however relevant its
   first step);
5. a memory's graph score is the best score of the triples it supports (a triple
   links its newest :data:`SUPPORT_LINKED` memories); those of at least
   :data:`MIN_LINK`, at most :data:`MAX_LINKED`, join the candidates.

The search engine gives linked memories that neither engine returned a vector
score of their own (their cosine to the query) and the pipeline adds
``graph_weight × graph_score`` to the fused score (``debug["graph"]``): a link
reorders hits, it never keeps a hit that has no evidence of its own.
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from langmem_ext.language.text import query_tokens
from langmem_ext.memory.knowledge.extract import match_entities

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from langmem_ext.memory.knowledge.triples import GraphView, KnowledgeGraph, Triple
    from langmem_ext.memory.knowledge.vectors import GraphVectors

MAX_LINKED = 15
"""Memories the stage links at most per search (best graph score first)."""
SUPPORT_LINKED = 3
"""Supporting memories of one triple the stage links, newest first: a store of
imported statements may hold hundreds stating one fact, and the newest are the
answer (as in the slot stage); the rest stay reachable by ordinary search."""
MIN_LINK = 0.1
"""Weaker links are dropped: a hub entity's triples that hold nothing else of the
question would otherwise lift memories at random."""
SECOND_HOP_ENTITIES = 4
"""Entities reached in one hop that the stage walks on from (best first)."""
SECOND_HOP_FACTOR = 0.7
"""A two-hop triple's share of the link that reached its entity."""
ENTITY_MATCH = 0.45
"""Cosine of the question to an entity's embedded name that makes it a question
entity when the question names none."""
EMBEDDED_ENTITIES = 2
"""Entities found by embedding at most."""
TYPICAL_TRIPLES = 3
"""Triples of an entity read at least for their median cosine to raise its floor
(:func:`typical_cosine`)."""
FULL_SPAN = 0.5
"""Share of the distance from the entity's own cosine to 1 that counts as a full
match of a triple."""


@dataclass
class GraphLinks:
    """What the graph stage found for one question.

    Attributes:
        entities: The question's entity keys.
        scores: Memory id -> graph score (0-1), at most :data:`MAX_LINKED`.
        triples: Triples read.
    """

    entities: list[str] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    triples: int = 0


def _specificity(degree: int, total: int) -> float:
    """1 for an entity of one triple, falling with its share of all triples."""
    if total <= 1:
        return 1.0
    return math.log1p(total / max(degree, 1)) / math.log1p(total)


def _clamp01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def typical_cosine(cosines: Sequence[float]) -> float | None:
    """The cosine to the question of an entity's typical triple: the median of
    ``cosines`` (its triples read), or ``None`` for fewer than
    :data:`TYPICAL_TRIPLES`.

    A triple's relevance is what its sentence matches of the question beyond what
    linking through its entity gives any triple of that entity. For a rare entity
    that is the cosine of its name; for a hub (the user of a personal store, whom
    nearly every memory is about and whom a question names as "I", not by the
    entity's name) the name's cosine is near 0 while every triple's sentence shares
    the hub and the question's wording, so each of them looked relevant. The floor
    is the larger of the two.

    Args:
        cosines: The question's cosines to the entity's triples.

    Returns:
        Their median, or ``None``.

    Example:
        >>> typical_cosine([0.1, 0.2, 0.5])
        0.2
        >>> typical_cosine([0.1, 0.2]) is None
        True
    """
    if len(cosines) < TYPICAL_TRIPLES:
        return None
    return statistics.median(cosines)


class _Relevance:
    """A triple's relevance to the question (step 3 of the module docstring)."""

    def __init__(
        self,
        query: str,
        keys: Sequence[str],
        unit: NDArray[np.float64] | None,
        vectors: GraphVectors | None,
        scope: str,
        view: GraphView,
    ) -> None:
        named = set(query_tokens(" ".join(keys), drop_stopwords=False))
        self.focus = frozenset(query_tokens(query)) - named
        self.unit = unit if vectors is not None else None
        self.vectors = vectors
        self.scope = scope
        self.view = view
        self.floor: dict[str, float] = {}
        self.cos: dict[str, float] = {}

    def read(self, triples: Sequence[Triple], entities: Sequence[str]) -> None:
        """Look up the cosines of ``triples`` and of ``entities``' names."""
        if self.unit is None or self.vectors is None:
            return
        self.cos.update(self.vectors.triple_cosines(self.scope, self.unit, [t.id for t in triples]))
        todo = [e for e in entities if e not in self.floor]
        self.floor.update(self.vectors.entity_cosines(self.scope, self.unit, todo))
        for e in entities:  # a hub's typical triple says nothing beyond the hub
            typical = typical_cosine(
                [
                    self.cos[t.id]
                    for t in triples
                    if e in (t.subject_key, t.object_key) and t.id in self.cos
                ]
            )
            if typical is not None and typical > self.floor.get(e, 0.0):
                self.floor[e] = typical

    def of(self, t: Triple, entity: str) -> float:
        """Relevance of ``t``, reached through ``entity``."""
        if self.focus:
            object_side, subject_side = self.view.words[t.id]
            words = object_side if entity == t.subject_key else subject_side
            lexical = len(self.focus & words) / len(self.focus)
        else:
            lexical = 1.0  # the question is only the entity: all of it is relevant
        cos = self.cos.get(t.id)
        if cos is None:
            return lexical
        floor = self.floor.get(entity, 0.0)
        span = FULL_SPAN * (1.0 - floor)
        return max(lexical, _clamp01((cos - floor) / span) if span > 0 else 0.0)


def _question_entities(
    graph: KnowledgeGraph,
    scope: str,
    query: str,
    known: Mapping[str, int],
    unit: NDArray[np.float64] | None,
) -> list[str]:
    keys = match_entities(query, known)
    if keys or unit is None or graph.vectors is None:
        return keys
    cos = graph.vectors.entity_cosines(scope, unit)
    near = sorted((c, k) for k, c in cos.items() if c >= ENTITY_MATCH and k in known)
    return [k for _c, k in reversed(near[-EMBEDDED_ENTITIES:])]


def _triples_of(view: GraphView, keys: Sequence[str], limit: int) -> list[Triple]:
    """The triples of ``keys`` (each once), at most ``limit``."""
    seen: dict[str, Triple] = {}
    for key in keys:
        for t in view.by_key.get(key, ()):
            if len(seen) >= limit:
                return list(seen.values())
            seen.setdefault(t.id, t)
    return list(seen.values())


def graph_links(
    graph: KnowledgeGraph,
    scope: str,
    query: str,
    *,
    query_vector: Sequence[float] | NDArray[np.floating] | None = None,
    hops: int = 2,
    limit: int = 200,
) -> GraphLinks:
    """Memories linked to the entities of ``query`` (see the module docstring).

    Reads the scope's current triples held in memory (:meth:`KnowledgeGraph.view`):
    nothing until the background writer has built them.

    Args:
        graph: The knowledge graph.
        scope: The scope searched.
        query: The question.
        query_vector: The question's embedding (``None``: word overlap only).
        hops: 1 or 2.
        limit: Triples read at most in the first hop (half of it in the second).
    """
    view = graph.view(scope)
    if view is None or not view.degrees:
        return GraphLinks()
    known = view.degrees
    unit = None
    if query_vector is not None:
        q = np.asarray(query_vector, dtype=np.float64)
        norm = float(np.linalg.norm(q))
        unit = q / norm if norm > 0 else None
    keys = _question_entities(graph, scope, query, known, unit)
    if not keys:
        return GraphLinks()
    total = max(view.triples, 1)
    spec = {k: _specificity(known.get(k, 1), total) for k in keys}
    rel = _Relevance(query, keys, unit, graph.vectors, scope, view)
    out = GraphLinks(entities=list(keys))
    scores: dict[str, float] = {}

    def credit(t: Triple, s: float) -> None:
        if s >= MIN_LINK:  # weaker links are dropped anyway
            for mid in t.support[:SUPPORT_LINKED]:
                if s > scores.get(mid, 0.0):
                    scores[mid] = s

    # the rarest entities' triples first: a hub entity fills what the limit leaves
    first = _triples_of(view, sorted(keys, key=lambda k: known.get(k, 0)), limit)
    out.triples = len(first)
    rel.read(first, keys)
    reached: dict[str, float] = {}
    for t in first:
        for end, far_key in ((t.subject_key, t.object_key), (t.object_key, t.subject_key)):
            if end not in spec:
                continue
            r = rel.of(t, end)
            credit(t, r * (0.5 + 0.5 * spec[end]))
            if far_key not in spec:  # a path on, however relevant the step itself
                link = (0.5 + 0.5 * spec[end]) * (0.5 + 0.5 * r)
                if link > reached.get(far_key, 0.0):
                    reached[far_key] = link
    for far_key in reached:  # times the square root of the middle entity's specificity
        reached[far_key] *= math.sqrt(_specificity(known.get(far_key, 1), total))
    if hops >= 2 and reached:
        mids = sorted(reached, key=lambda e: -reached[e])[:SECOND_HOP_ENTITIES]
        done = {t.id for t in first}
        second = [t for t in _triples_of(view, mids, limit // 2) if t.id not in done]
        out.triples += len(second)
        rel.read(second, mids)
        for t in second:
            for end in (t.subject_key, t.object_key):
                via = reached.get(end)
                if via is not None:
                    credit(t, SECOND_HOP_FACTOR * via * rel.of(t, end))
    best = heapq.nlargest(MAX_LINKED, scores.items(), key=lambda item: item[1])
    out.scores = {m: round(s, 6) for m, s in best}
    return out


__all__ = ["MAX_LINKED", "MIN_LINK", "GraphLinks", "graph_links", "typical_cosine"]

"""The search's graph stage: memories linked to the question's entities by triples.

Seed 001's LPMM fuses vector candidates with triples reached from the question's
entities. Here:

1. the question's entities are the known entity keys it mentions
   (:func:`~langmem_ext.memory.triple_extract.match_entities`: longest string
   matches; "my" / "我" is the user);
2. their triples (one hop), then the triples of the most telling entities those
   reach (two hops), are read from the knowledge graph;
3. each triple scores ``specificity × (½ + ½ × overlap)``: how rare its question
   entity is (an entity every memory mentions, such as the user, links little) and
   how much of the rest of the question its predicate and far end hold; a two-hop
   triple scores that times 0.7 of the link that reached its entity (the first
   hop's score times the square root of the entity's specificity); links under
   :data:`MIN_LINK` are dropped;
4. a memory's graph score is the best score of the triples it supports; the best
   :data:`MAX_LINKED` join the candidates (:class:`GraphLinks`).

The search engine gives linked memories that neither engine returned a vector
score of their own (their cosine to the query) and the pipeline adds
``graph_weight × graph_score`` to the fused score (``debug["graph"]``): a link
reorders hits, it never keeps a hit that has no evidence of its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from langmem_ext.memory.triple_extract import match_entities
from langmem_ext.text import query_tokens

MAX_LINKED = 30
"""Memories the stage links at most per search (best graph score first)."""
MIN_LINK = 0.1
"""Weaker links are dropped: a hub entity's triples that hold nothing else of the
question would otherwise lift memories at random."""
SECOND_HOP_ENTITIES = 8
SECOND_HOP_FACTOR = 0.7
"""A two-hop triple's share of the link that reached its entity."""
"""Entities reached in one hop that the stage walks on from (best first)."""


class TripleView(Protocol):
    """What the stage reads of a triple (:class:`langmem_ext.memory.knowledge.Triple`)."""

    @property
    def subject(self) -> str: ...
    @property
    def predicate(self) -> str: ...
    @property
    def object(self) -> str: ...
    @property
    def subject_key(self) -> str: ...
    @property
    def object_key(self) -> str: ...
    @property
    def support(self) -> tuple[str, ...]: ...


class EntityGraph(Protocol):
    """The knowledge graph as the stage uses it."""

    def entities(self, scope: str) -> Mapping[str, int]: ...

    def neighbourhood(
        self,
        scope: str,
        keys: Sequence[str],
        *,
        hops: int = 1,
        as_of: float | None = None,
        include_closed: bool = False,
        limit: int = 200,
    ) -> Sequence[TripleView]: ...


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


def _overlap(focus: set[str], triple: TripleView, far: str) -> float:
    """The share of the question's other words found in the triple's predicate and far end."""
    if not focus:
        return 1.0
    words = set(query_tokens(f"{triple.predicate.replace('_', ' ')} {far}"))
    return len(focus & words) / len(focus)


def graph_links(
    graph: EntityGraph,
    scope: str,
    query: str,
    *,
    hops: int = 2,
    as_of: float | None = None,
    limit: int = 200,
) -> GraphLinks:
    """Memories linked to the entities of ``query`` (see the module docstring).

    Args:
        graph: The knowledge graph.
        scope: The scope searched.
        query: The question.
        hops: 1 or 2.
        as_of: Triples live at this time (``None``: now).
        limit: Triples read at most (shared by both hops).
    """
    known = graph.entities(scope)
    if not known:
        return GraphLinks()
    keys = match_entities(query, known)
    if not keys:
        return GraphLinks()
    total = max(sum(known.values()) // 2, 1)
    spec = {k: _specificity(known.get(k, 1), total) for k in keys}
    named = set(query_tokens(" ".join(keys), drop_stopwords=False))
    focus = set(query_tokens(query)) - named
    out = GraphLinks(entities=list(keys))
    scores: dict[str, float] = {}
    reached: dict[str, float] = {}
    first = graph.neighbourhood(scope, keys, hops=1, as_of=as_of, limit=limit)
    out.triples = len(first)
    for t in first:
        for end, far_key, far in ((t.subject_key, t.object_key, t.object),
                                  (t.object_key, t.subject_key, t.subject)):  # fmt: skip
            if end not in spec:
                continue
            s = spec[end] * (0.5 + 0.5 * _overlap(focus, t, far))
            for mid in t.support:
                if s > scores.get(mid, 0.0):
                    scores[mid] = s
            if far_key not in spec and s > reached.get(far_key, 0.0):
                reached[far_key] = s * math.sqrt(_specificity(known.get(far_key, 1), total))
    if hops >= 2 and reached and out.triples < limit:
        mids = sorted(reached, key=lambda e: -reached[e])[:SECOND_HOP_ENTITIES]
        second = graph.neighbourhood(scope, mids, hops=1, as_of=as_of, limit=limit - out.triples)
        out.triples += len(second)
        for t in second:
            for end, far in ((t.subject_key, t.object), (t.object_key, t.subject)):
                via = reached.get(end)
                if via is None:
                    continue
                s = SECOND_HOP_FACTOR * via * (0.5 + 0.5 * _overlap(focus, t, far))
                for mid in t.support:
                    if s > scores.get(mid, 0.0):
                        scores[mid] = s
    best = [m for m in sorted(scores, key=lambda m: -scores[m]) if scores[m] >= MIN_LINK]
    best = best[:MAX_LINKED]
    out.scores = {m: round(scores[m], 6) for m in best}
    return out


__all__ = ["MAX_LINKED", "MIN_LINK", "EntityGraph", "GraphLinks", "TripleView", "graph_links"]

"""One search hit on its way through fusion and the scoring stages.

A :class:`Candidate` carries what the engines said about a memory (cosine similarity,
BM25 score, ranks), what the ledger knows about it (category, creation time,
importance) and, once ranked, its ``score`` plus a per-stage ``debug`` trace. The
retrieval functions never modify a candidate they were given: they work on
:meth:`Candidate.copy` results, so a caller can rank the same engine output twice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Candidate:
    """A memory returned by the vector and/or keyword engine.

    Attributes:
        id: Entry id (the Markdown block id, e.g. ``m-3f9a1c``).
        text: The memory text.
        category: ``system``, ``core``, ``fact`` or ``episode``.
        created_at: Creation time, epoch seconds (UTC).
        importance: Ledger importance: 1.0 by default, 3.0 for core memories.
        vector_score: Cosine similarity to the query (``1 - chroma cosine distance``).
        bm25_score: Positive BM25 score, bigger is better (sqlite's bm25 negated).
        vector_rank: 0-based rank in the vector engine's list.
        bm25_rank: 0-based rank in the keyword engine's list.
        bm25_full: The BM25 score of a memory of average length holding every query
            term once (the sum of the terms' IDFs): what "the whole query matched"
            scores. Fusion divides by it (or the pool's best, if higher), so a
            keyword hit's evidence is the share of the query it matched. ``None``
            when unknown (fusion then divides by the pool's best).
        embedding: The memory's embedding, used by MMR; may be ``None``.
        score: The ranking score, set by fusion and changed by each stage.
        slot_match: The memory states the very attribute of the user the query asks
            about (the search's slot stage): structured evidence, readable in any
            script, ranked above hits that only resemble the query.
        graph_score: How strongly the knowledge graph links the memory to the query's
            entities (0-1; the search's graph stage), ``None`` when it did not.
        safety: The safety fields the question asks about ("what am I allergic to?")
            that the memory states about the person asked about (the search's safety
            stage): such memories rank first (:func:`~langmem_ext.retrieval.pipeline.safety_first`).
        other_person: The memory is about someone other than whom the question asks
            about: the user's own fact for a question about their wife, a family
            member's for a question about the user (set by the search's person stage);
            its score is lowered (:func:`~langmem_ext.retrieval.pipeline.person_demote`).
        debug: Stage name -> that stage's contribution (see ``rank``).
        metadata: Passed through untouched (path, line, scope, ...).
    """

    id: str
    text: str
    category: str
    created_at: float
    importance: float
    vector_score: float | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    bm25_rank: int | None = None
    bm25_full: float | None = None
    embedding: Sequence[float] | None = None
    score: float = 0.0
    slot_match: bool = False
    graph_score: float | None = None
    safety: tuple[str, ...] = ()
    other_person: bool = False
    debug: dict[str, float] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def copy(self) -> Candidate:
        """Return a copy whose ``debug`` and ``metadata`` dicts are new objects.

        Returns:
            A candidate that can be changed without touching this one.
        """
        new = object.__new__(Candidate)  # dataclasses.replace re-runs __init__: 5x slower
        new.__dict__.update(self.__dict__)
        new.debug = dict(self.debug)
        new.metadata = dict(self.metadata)
        return new


def best_first(c: Candidate) -> tuple[float, float, float, str]:
    """Sort key of the ranking: the higher score, then the closer cosine (scores clamp
    a negative one to 0), then the newer memory, then the id.

    A total order: memories that score the same (the same sentence stored twice) rank
    the same way in every process, whatever order the engines returned them in.
    """
    cos = c.vector_score if c.vector_score is not None else -math.inf
    return (-c.score, -cos, -c.created_at, c.id)


__all__ = ["Candidate", "best_first"]

"""Notes: the prose of memory files, found by search beside the memories.

A paragraph, a list item or any other text typed into ``MEMORY.md`` or a daily
note around the entries is indexed by chunk (:mod:`langmem_ext.workspace.prose`:
its keyword tokens and its vector, with the headings above it as context).
:func:`note_keyword` and :func:`note_vector` find a scope's chunks for a query and
:func:`rank_notes` ranks them with the pipeline that ranks memories (:func:`langmem_ext.retrieval.pipeline.rank`: the same
fusion, thresholds and scores), so the search engine merges them with the memory
hits by score. A note hit has ``source="note"``, its chunk's anchor as ``id``
(``path#^p-…`` is its :attr:`~langmem_ext.memory.types.SearchHit.anchor`, which
``memory_get`` reads), its headings in ``heading``; it has no ledger state: it is
never boosted, superseded or updated through the memory API (edit the file).

A note whose text is that of a memory in the same results (the memory written from
it, or the other way round; an ``[unconfirmed]`` mark, case, spacing and punctuation
aside) is left out: one text, one hit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langmem_ext.memory.types import UNCONFIRMED_MARK, SearchHit, to_dt
from langmem_ext.retrieval.calibration import rescale_cosine
from langmem_ext.retrieval.candidate import Candidate

if TYPE_CHECKING:
    from langmem_ext.core.config import RetrievalSettings
    from langmem_ext.retrieval.intent import RecallIntent
    from langmem_ext.workspace.sqlite.passage_rows import Passage
    from langmem_ext.workspace.store import Workspace


NOTE_POOL_FACTOR = 2
NOTE_POOL_MIN = 10
"""A search brings at most ``max(2 k, 10)`` chunks from each engine (fewer than the
memories' pool: notes are merged into the memory hits, and their ranking runs after
the memories', on the search's own time)."""


def note_pool(k: int) -> int:
    """How many chunks each engine brings for ``k`` hits."""
    return max(NOTE_POOL_FACTOR * k, NOTE_POOL_MIN)


def passage_candidate(p: Passage) -> Candidate:
    """A candidate for a passage (a prose chunk), with no engine scores yet."""
    return Candidate(
        id=p.id,
        text=p.text,
        category=p.category,
        created_at=p.created_at,
        importance=1.0,
        metadata={"passage": p},
    )


def note_keyword(workspace: Workspace, query: str, scope: str, k: int) -> list[Candidate]:
    """The scope's prose chunks sharing words with ``query``, best first (BM25 over
    the chunks and their headings): the keyword candidates of the notes.

    Runs on the search's keyword threads (its reads use a reader connection).

    Raises:
        sqlite3.Error: When FTS5 fails.
    """
    kw = workspace.keyword
    pairs = kw.prose_bm25(scope, query, note_pool(k))
    full = (kw.prose_bm25_full(query) or None) if pairs else None
    out: list[Candidate] = []
    for rank_i, (p, score) in enumerate(pairs):
        c = passage_candidate(p)
        c.bm25_score, c.bm25_rank, c.bm25_full = score, rank_i, full
        out.append(c)
    return out


def note_vector(
    workspace: Workspace,
    query_vector: Sequence[float],
    scope: str,
    k: int,
    cosine_baseline: float,
) -> list[Candidate]:
    """The scope's prose chunks nearest to the query's embedding, best first: the
    vector candidates of the notes (cosines rescaled by ``cosine_baseline``, see
    :mod:`langmem_ext.retrieval.calibration`).

    Raises:
        IndexUnavailableError: The vector index is needed (a scope with many chunks)
            and down.
    """
    found = workspace.vector_search.nearest_passages("prose", scope, query_vector, note_pool(k))
    out: list[Candidate] = []
    for rank_i, (p, sim) in enumerate(found):
        c = passage_candidate(p)
        c.vector_score = rescale_cosine(sim, cosine_baseline)
        c.vector_rank = rank_i
        out.append(c)
    return out


def rank_notes(
    vector: list[Candidate] | None,
    keyword: list[Candidate] | None,
    *,
    settings: RetrievalSettings,
    cosine_baseline: float,
    query: str,
    scope: str,
    k: int,
    category: str | None,
    intent: RecallIntent | None,
    now: float,
) -> list[SearchHit]:
    """Rank the notes' candidates with the memories' pipeline; ``source="note"`` hits.

    Args:
        vector: :func:`note_vector`'s candidates, ``None`` when the vector side did not
            run.
        keyword: :func:`note_keyword`'s, ``None`` when the keyword side did not run.
        settings: The retrieval settings.
        cosine_baseline: The query embedder's cosine baseline.
        query: The query text.
        scope: The scope searched.
        k: Hits wanted at most.
        category: Only chunks of this section category.
        intent: The recall intent (its time window favours chunks dated inside it).
        now: The time of the question.

    Returns:
        Hits, best first.
    """
    from langmem_ext.retrieval.pipeline import rank

    if category:
        vector = None if vector is None else [c for c in vector if c.category == category]
        keyword = None if keyword is None else [c for c in keyword if c.category == category]
    if not vector and not keyword:
        return []
    ranked = rank(
        vector,
        keyword,
        k=k,
        settings=settings,
        now=now,
        intent=intent,
        full_match_cosine=settings.vector_full_match,
        cosine_baseline=cosine_baseline,
        copy_inputs=False,
        query=query,
    )
    return [_hit(c, scope) for c in ranked]


def _hit(c: Candidate, scope: str) -> SearchHit:
    p: Passage = c.metadata["passage"]
    when: Any = to_dt(p.created_at)
    return SearchHit(
        id=p.id,
        text=p.text,
        score=round(float(c.score), 6),
        path=p.path,
        line=p.line,
        category=p.category,
        created_at=when,
        updated_at=when,
        importance=c.importance,
        scope=scope,
        source="note",
        heading=p.heading or None,
        debug={key: round(float(v), 6) for key, v in c.debug.items()},
    )


_NOT_WORDS_RE = re.compile(r"[\W_]+")


def note_key(text: str) -> str:
    """A text as compared for "the same text": the ``[unconfirmed]`` mark, case,
    spacing and punctuation aside."""
    text = text.strip().removeprefix(UNCONFIRMED_MARK)
    return _NOT_WORDS_RE.sub(" ", text).strip().casefold()


def drop_represented(hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` without the notes whose text is a memory hit's (an ``[unconfirmed]``
    mark aside): one text, one hit, the memory's."""
    if not any(h.source == "note" for h in hits):
        return hits
    memories = {note_key(h.text) for h in hits if h.source == "memory"}
    return [h for h in hits if h.source != "note" or note_key(h.text) not in memories]


__all__ = [
    "NOTE_POOL_FACTOR",
    "NOTE_POOL_MIN",
    "drop_represented",
    "note_key",
    "note_keyword",
    "note_pool",
    "note_vector",
    "passage_candidate",
    "rank_notes",
]

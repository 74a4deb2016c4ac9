"""The stages between the engines and fusion: they filter the engines' candidates,
bring in memories the stores link to the question, and mark what fusion and the
scoring stages read (``slot_match``, ``graph_score``, ``safety``, ``other_person``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langmem_ext.language.text import query_tokens
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.compound import union_candidates
from langmem_ext.retrieval.contextual import unit_query
from langmem_ext.retrieval.stages.base import Pool, QueryContext

PERSON_DEPTH = 20
"""The person stage reads whom the best 20 of each engine's candidates (``2 k`` when
more) are about: reading a text costs ~50 µs the first time."""


def _each(lists: list[list[Candidate]] | None, keep: Callable[[Candidate], bool]) -> Any:
    return None if lists is None else [[c for c in cands if keep(c)] for cands in lists]


def rerank_vector(vector: list[Candidate]) -> None:
    """Order vector candidates by cosine again, after some joined them."""
    vector.sort(key=lambda c: -(c.vector_score or 0.0))
    for i, c in enumerate(vector):
        c.vector_rank = i


def _graph_on(ctx: QueryContext) -> bool:
    return ctx.settings.graph_stage and ctx.io.graph is not None and ctx.current_only


def _query_vector(pool: Pool) -> Any | None:
    return pool.query_vectors[0] if pool.query_vectors else None


def _links(pool: Pool, ctx: QueryContext) -> dict[str, float]:
    """The knowledge graph's links for the query (none when it fails, logged once)."""
    assert ctx.io.graph is not None
    try:
        return ctx.io.graph.links(ctx.query, _query_vector(pool))
    except Exception as e:  # the graph must never break search
        ctx.warn(f"graph:{type(e).__name__}", f"graph stage failed: {e}")
        return {}


@dataclass(frozen=True)
class GraphLinks:
    """Read the knowledge graph's links for the query while the keyword queries
    finish on their threads (``settings.graph_stage``; current versions only)."""

    name: str = "graph_links"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Set ``pool.graph_links`` (needs the query vector)."""
        if _graph_on(ctx) and pool.query_vectors:
            pool.graph_links = _links(pool, ctx)
        return pool


@dataclass(frozen=True)
class Category:
    """Only candidates of the category asked for (``category=``)."""

    name: str = "category"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Filter each text's lists."""
        wanted = ctx.category
        if wanted:
            pool.vectors = _each(pool.vectors, lambda c: c.category == wanted)
            pool.keywords = _each(pool.keyword_lists(), lambda c: c.category == wanted)
        return pool


@dataclass(frozen=True)
class Validity:
    """Only the versions the search may return: current ones (default), those valid
    at ``as_of``, or all (``include_superseded``)."""

    name: str = "validity"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Filter each text's lists."""
        keeps = ctx.keeps
        if keeps is not None:
            pool.vectors = _each(pool.vectors, keeps)
            pool.keywords = _each(pool.keyword_lists(), keeps)
        return pool


@dataclass(frozen=True)
class Slot:
    """A question about one of the user's own attributes ("where do I live?",
    "我在哪家公司工作？") finds the current memories stating that attribute, whatever
    their wording (``io.slots``): they join the first text's keyword candidates as
    full keyword matches (``Candidate.slot_match``, shown as ``debug["slot"]``),
    readable in any script. Of a slot with one current value only the newest
    statement is the answer; the older ones go to ``pool.older``
    (``settings.slot_stage``; current versions only)."""

    name: str = "slot"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Add the slot's memories to ``pool.keywords[0]``."""
        keywords = pool.keyword_lists()
        index = ctx.io.slots
        if not ctx.current_only or index is None or not ctx.settings.slot_stage:
            return pool
        states = index.states(ctx.query)
        if not states:
            return pool
        found = index.candidates([s.id for s in states])
        lists = [list(k) for k in keywords] if keywords else [[]]
        first = {c.id: c for c in lists[0]}
        # a full keyword match: at least the query's full-match BM25 and the best
        # score of the pool, so that the normalised keyword evidence is 1
        full = (
            max(
                max((c.bm25_full or 0.0 for c in lists[0]), default=0.0),
                max((c.bm25_score or 0.0 for c in lists[0]), default=0.0),
            )
            or 1.0
        )
        newest: dict[str, float] = {}
        for st in states:
            if st.slot is not None and st.single:
                newest[st.slot] = max(newest.get(st.slot, st.created_at), st.created_at)
        for st in states:
            d = found.get(st.id)
            if d is None or (ctx.category and d.category != ctx.category):
                continue
            c = first.get(st.id)
            if st.slot in newest and st.created_at < newest[st.slot]:
                pool.older.add(st.id)  # a newer one states the slot
                continue
            if c is None:
                c = d
                lists[0].append(c)
            c.bm25_score = max(c.bm25_score or 0.0, full)
            c.bm25_full = full
            c.slot_match = True
            c.debug["slot"] = 1.0  # shown in hit.debug
        lists[0].sort(key=lambda c: -(c.bm25_score or 0.0))
        for i, c in enumerate(lists[0]):
            c.bm25_rank = i
        pool.keywords = lists
        return pool


@dataclass(frozen=True)
class Union:
    """One vector and one keyword list from every text's
    (:func:`~langmem_ext.retrieval.compound.union_candidates`; a compound message)."""

    name: str = "union"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Set ``pool.vector`` and ``pool.keyword``."""
        vectors, keywords = pool.vectors, pool.keyword_lists()
        if len(ctx.texts) == 1:
            pool.vector = None if vectors is None else vectors[0]
            pool.keyword = None if keywords is None else keywords[0]
        else:
            pool.vector, pool.keyword = union_candidates(vectors, keywords, copy=False)
        return pool


def _joined(pool: Pool, ctx: QueryContext, ids: list[str], qunit: Any) -> list[Candidate]:
    return [] if ctx.io.joiner is None else ctx.io.joiner.join(ids, qunit)


@dataclass(frozen=True)
class Graph:
    """Mark the candidates the knowledge graph links to the query's entities
    (``graph_score``); linked memories neither engine returned join the vector
    candidates with their own cosine (``debug["graph_link"]``)."""

    name: str = "graph"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Mark and join."""
        if not _graph_on(ctx):
            return pool
        if pool.graph_links is None:  # no query vector: word overlap only
            pool.graph_links = _links(pool, ctx)
        scores = pool.graph_links
        if not scores:
            return pool
        seen: set[str] = set()
        for c in (*(pool.vector or ()), *(pool.keyword or ())):
            g = scores.get(c.id)
            if g is not None:
                c.graph_score = g
                seen.add(c.id)
        missing = [i for i in scores if i not in seen]
        if pool.vector is None or not pool.query_vectors or not missing:
            return pool
        joined = _joined(pool, ctx, missing, unit_query(pool.query_vectors[0]))
        for c in joined:
            c.graph_score = scores[c.id]
            c.debug["graph_link"] = c.graph_score
        if joined:
            pool.vector.extend(joined)
            rerank_vector(pool.vector)
        return pool


@dataclass(frozen=True)
class Safety:
    """A question about a safety topic ("Does Lin Wei have any food allergies?",
    "我做过什么手术") marks the memories stating the fields it asks about, of the person
    it asks about (``Candidate.safety``; ``debug["safety"]``): those linked to the
    field when they were stored, which join the candidates with their own cosine,
    and every candidate whose text states one (``settings.safety_stage``; current
    versions only). ``safety_first`` ranks them first. At most ``max(2 k,
    PERSON_DEPTH)`` linked memories join (what can reach the top ``k``), the newest
    statement of each distinct item first, so a scope with hundreds of statements
    of one field costs a search no more than one with a few."""

    name: str = "safety"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Mark and join."""
        index = ctx.io.safety
        if not ctx.current_only or not ctx.settings.safety_stage or index is None:
            return pool
        question = index.question(ctx.query)
        if question is None:
            return pool
        read = (*(pool.vector or ()), *(pool.keyword or ()))
        seen = {c.id for c in read}
        linked = question.linked_among(list(seen))
        for c in read:
            fields = set(linked.get(c.id, ())) | question.stated(c)
            if fields:
                c.safety = tuple(f for f in question.fields if f in fields)
                c.debug["safety"] = 1.0
        depth = max(2 * ctx.k, PERSON_DEPTH)
        joining = dict(question.worth_joining(depth + len(seen)))
        missing = [i for i in joining if i not in seen][:depth]
        if not missing:
            return pool
        qunit = unit_query(pool.query_vectors[0]) if pool.query_vectors else None
        into = pool.vector if pool.vector is not None and qunit is not None else pool.keyword
        if into is None:
            into = pool.keyword = []
        for c in _joined(pool, ctx, missing, qunit):
            c.safety = joining[c.id]
            c.debug["safety"] = 1.0
            into.append(c)
        if into is pool.vector:
            rerank_vector(pool.vector)
        return pool


@dataclass(frozen=True)
class Person:
    """Mark ``other_person`` the candidates about someone other than whom the
    question asks about (``io.persons``; ``settings.person_stage``); only the best
    ``max(2 k, PERSON_DEPTH)`` of each engine's list are read (what can reach the
    top ``k``). ``person_demote`` lowers their score. It also sets
    ``pool.subject_words``, the question's words that say whom it asks about
    (fusion reads a keyword match of only those as no match of the question)."""

    name: str = "person"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Mark ``other_person``; set ``pool.subject_words``."""
        reader = ctx.io.persons
        if reader is None or not ctx.settings.person_stage:
            return pool
        depth = max(2 * ctx.k, PERSON_DEPTH)
        read = [*(pool.vector or ())[:depth], *(pool.keyword or ())[:depth]]
        others = reader.other_person(ctx.query, read)
        for c in read:
            if c.id in others:
                c.other_person = True
        subject = reader.subject(ctx.query)
        if subject:
            pool.subject_words = frozenset(query_tokens(subject, drop_stopwords=False))
        return pool


@dataclass(frozen=True)
class OlderStatement:
    """Mark ``debug["older_statement"]`` the statements a newer statement of their
    slot replaces (found by the slot stage)."""

    name: str = "older_statement"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Mark them."""
        for c in (*(pool.vector or ()), *(pool.keyword or ())) if pool.older else ():
            if c.id in pool.older:
                c.debug["older_statement"] = 1.0
        return pool


__all__ = [
    "PERSON_DEPTH",
    "Category",
    "Graph",
    "GraphLinks",
    "OlderStatement",
    "Person",
    "Safety",
    "Slot",
    "Union",
    "Validity",
    "rerank_vector",
]

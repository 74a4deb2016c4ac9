"""Search orchestration: engines, modes with degrade paths, ranking, extra sources.

Modes form a chain, each falling back to the next when its engine fails (logged
once per reason, never raised): ``hybrid`` → ``fts`` (the embedder or Chroma is
down) → ``keyword`` (plain substring, FTS5 failed). ``vector`` degrades the same
way. The ranking itself is :func:`langmem_ext.retrieval.pipeline.rank`.

Other layers add sources of hits (the session hot log does) with
:meth:`SearchEngine.add_source`; their hits are merged by score. So are the notes,
the prose of the memory files (:mod:`langmem_ext.memory.recall.notes`, ranked by the same
pipeline), unless ``retrieval.prose`` is off.

In ``hybrid`` mode the BM25 query runs on a worker thread while the caller embeds
the query and asks Chroma: SQLite, the embedder's numpy and Chroma's Rust core
release the GIL, so with a free core the keyword side adds (almost) no wall time.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langmem_ext.core.errors import EmptyTextError, InvalidInputError
from langmem_ext.language.text import query_tokens, speaker_of
from langmem_ext.memory.knowledge.stage import GraphLinks, graph_links
from langmem_ext.memory.recall.neighbours import IndexNeighbours, doc_candidate
from langmem_ext.memory.recall.notes import drop_represented, note_keyword, note_vector, rank_notes
from langmem_ext.memory.safety.facts import USER, is_relation, persons, safety_facts, same_person
from langmem_ext.memory.types import SearchHit, to_dt
from langmem_ext.retrieval.calibration import cosine_baseline_of, rescale_cosine
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.compound import cover_questions, split_compound, union_candidates
from langmem_ext.retrieval.contextual import (
    contextual_units,
    is_reply,
    own_cosine_signal,
    unit_query,
)
from langmem_ext.retrieval.repair import focus_of
from langmem_ext.short_term.statements import question_slots, single_valued

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langmem_ext.core.config import Settings
    from langmem_ext.memory.knowledge.triples import KnowledgeGraph
    from langmem_ext.memory.safety.links import SafetyLinks
    from langmem_ext.retrieval.intent import RecallIntent
    from langmem_ext.retrieval.pipeline import PipelineOptions
    from langmem_ext.workspace.docs import Doc, Previous
    from langmem_ext.workspace.store import Workspace

logger = logging.getLogger(__name__)

MODES = ("keyword", "fts", "vector", "hybrid")
SLOT_HITS = 3
"""Current memories of one slot the slot stage brings in, newest first."""
PERSON_DEPTH = 20
"""The person stage reads whom the best 20 of each engine's candidates (``2 k`` when
more) are about: reading a text costs ~50 µs the first time."""
COVER_DEPTH = 10
"""A question of a compound message with no hit in the top ``k`` takes its best hit
from the next 10 of the ranking (see
:func:`~langmem_ext.retrieval.compound.cover_questions`)."""
ExtraSource = Callable[..., list[SearchHit]]
"""``source(query, scope, k, intent) -> hits`` — e.g. the session hot log; a source
added ``with_vector`` is also passed ``query_vector=`` (see :meth:`SearchEngine.add_source`)."""

_POOL_WORKERS = 4
_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _keyword_pool() -> ThreadPoolExecutor:
    """The threads that run keyword queries next to the vector side (one set per process).

    Created lazily, and again in a forked child, whose copy has no threads.
    """
    global _pool
    pid = os.getpid()
    with _pool_lock:
        if _pool is None or _pool[0] != pid:
            _pool = (pid, ThreadPoolExecutor(_POOL_WORKERS, thread_name_prefix="langmem-fts"))
        return _pool[1]


def _of(category: str, cands: list[Candidate]) -> list[Candidate]:
    return [c for c in cands if c.category == category]


@dataclass(frozen=True)
class Validity:
    """The versions a search may return.

    Attributes:
        closed: The scope's superseded versions: id -> when they were replaced.
        keeps: Whether a candidate may be returned (``None``: every one).
    """

    closed: dict[str, float]
    keeps: Callable[[Candidate], bool] | None
    as_of: float | None = None
    """The time searched (``None``: now)."""

    def filter(self, cands: list[Candidate]) -> list[Candidate]:
        """The candidates this validity keeps (order unchanged)."""
        keeps = self.keeps
        return cands if keeps is None else [c for c in cands if keeps(c)]


def _rerank_vector(vector: list[Candidate]) -> None:
    """Order the vector candidates by cosine again, after some joined them."""
    vector.sort(key=lambda c: -(c.vector_score or 0.0))
    for i, c in enumerate(vector):
        c.vector_rank = i


class SearchEngine:
    """Runs a query against the workspace's engines and ranks the results.

    Args:
        workspace: The workspace (keyword + vector index).
        embeddings: Embedder for queries.
        settings: Settings tree.
    """

    def __init__(self, workspace: Workspace, embeddings: Embeddings, settings: Settings) -> None:
        self.workspace = workspace
        self.embeddings = embeddings
        self.settings = settings
        self._warned: set[str] = set()
        self._sources: list[tuple[ExtraSource, bool]] = []
        self._baseline: float | None = None
        self.knowledge: KnowledgeGraph | None = None
        """The knowledge graph the graph stage reads (set by :class:`~langmem_ext.Memory`)."""
        self.safety: SafetyLinks | None = None
        """The safety links the safety stage reads (set by :class:`~langmem_ext.Memory`)."""

    @property
    def cosine_baseline(self) -> float:
        """The query embedder's cosine baseline (see :mod:`langmem_ext.retrieval.calibration`)."""
        if self._baseline is None:
            self._baseline = cosine_baseline_of(
                self.embeddings, self.settings.retrieval.cosine_baseline
            )
        return self._baseline

    def add_source(self, source: ExtraSource, *, with_vector: bool = False) -> None:
        """Merge hits of another source (for example session events) into searches.

        Args:
            source: Called as ``source(query, scope, k, intent)`` on every search.
            with_vector: Also pass ``query_vector=`` the query's embedding (``None``
                when the vector side did not run), so the source can search vectors
                of its own without embedding the query again.
        """
        self._sources.append((source, with_vector))

    def _warn_once(self, key: str, msg: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(msg, *args)

    def query_texts(self, query: str, *, question_parts: bool | None = None) -> list[str]:
        """The texts a search of ``query`` embeds, in order (see :meth:`search`).

        The whole message (after a self-repair: the part it repairs to) first, then
        each of its questions when it asks several.

        Args:
            query: The message.
            question_parts: Override ``retrieval.question_parts`` (default: the setting).
        """
        if not isinstance(query, str):
            return []
        limit = self.settings.max_query_chars
        if question_parts is None:
            question_parts = self.settings.retrieval.question_parts
        if not question_parts:
            texts = [query.strip()[:limit]]
        else:
            focus = focus_of(query.strip()[:limit])
            texts = [focus, *split_compound(focus)]
        return [t for t in dict.fromkeys(t.strip()[:limit] for t in texts) if t]

    def search(
        self,
        query: str,
        *,
        scope: str,
        k: int | None = None,
        mode: str | None = None,
        category: str | None = None,
        intent: RecallIntent | None = None,
        options: PipelineOptions | None = None,
        now: float | None = None,
        as_of: float | None = None,
        include_superseded: bool = False,
    ) -> list[SearchHit]:
        """Search one scope. See :meth:`langmem_ext.Memory.search`.

        With ``retrieval.question_parts`` (default), a self-repair ("…, what I really
        want to ask is X") narrows the search to X (:func:`focus_of`), and a message
        that asks several questions is searched as one ranking over the candidates of
        the whole message and of each question
        (:func:`~langmem_ext.retrieval.compound.union_candidates`): the texts share
        one search's pool (each fetches ``ceil(k / texts) * candidate_multiplier``
        candidates per engine, at least 20), a memory keeps
        its best evidence against any of them, ``debug["question"]`` says which
        question a hit answers (0: only the whole message found it), and a question
        left without a hit in the top ``k`` gets its best one from further down
        (:func:`~langmem_ext.retrieval.compound.cover_questions`).
        """
        args: dict[str, Any] = {
            "scope": scope, "k": k, "mode": mode, "category": category,
            "intent": intent, "options": options,
            "now": time.time() if now is None else now,
            "valid": self._validity(scope, as_of, include_superseded),
        }  # fmt: skip
        texts = self.query_texts(query)
        return self._search_texts(texts or [query], **args)  # none left: the query's error

    def _search_texts(
        self,
        texts: list[Any],
        *,
        scope: str,
        k: int | None,
        mode: str | None,
        category: str | None,
        intent: RecallIntent | None,
        options: PipelineOptions | None,
        now: float,
        valid: Validity,
    ) -> list[SearchHit]:
        """Search ``texts``: the query, then (a compound message) each of its questions.

        The first text is validated as the query and is what extra sources see.
        """
        from langmem_ext.retrieval.pipeline import rank

        query = texts[0]
        if not isinstance(query, str):
            raise InvalidInputError(f"Query must be a string, got {type(query).__name__}.")
        q = query.strip()[: self.settings.max_query_chars]
        if not q:
            raise EmptyTextError("Empty query: pass what to look for.")
        rs = self.settings.retrieval
        k = self._top_k(k)
        mode = mode or rs.mode
        if mode not in MODES:
            raise InvalidInputError(f"Unknown search mode {mode!r}: use one of {', '.join(MODES)}.")
        if not query_tokens(q) and not any(ch.isalnum() for ch in q):
            return []  # only punctuation / emoji: nothing to look for
        qs = [q, *texts[1:]]
        # Several texts share the pool of k: each brings the pool of k / texts.
        pool = max(-(-k // len(qs)) * rs.candidate_multiplier, 20)
        if category:
            pool *= 3
        self.workspace.refresh_if_stale()

        # ``None``: the engine did not run (its weight goes to the other one);
        # ``[]``: it ran and found nothing.
        vectors: list[list[Candidate]] | None = None
        keywords: list[list[Candidate]] | None = None
        ahead: list[Future[list[Candidate]]] = []
        qvecs: list[Any] = []
        graph_on = rs.graph_stage and self.knowledge is not None and valid.as_of is None
        links: GraphLinks | None = None
        # the notes (the files' prose, as they are now: not as of a past time); their
        # BM25 runs on a keyword thread beside everything up to their ranking
        notes_on = rs.prose and valid.as_of is None and self._has_notes(scope)
        notes_ahead = (
            _keyword_pool().submit(note_keyword, self.workspace, q, scope, k)
            if notes_on and mode != "vector"
            else None
        )

        def bm25_ahead(t: str) -> None:  # BM25 runs anyway: overlap it with the vector side
            if mode == "hybrid":
                ahead.append(_keyword_pool().submit(self._keyword, t, scope, pool, fts=True))

        use_fts = mode in ("fts", "hybrid")
        if mode in ("vector", "hybrid"):
            try:  # each text's BM25 starts next to its own embedding, not all at once
                vectors = self._vectors(qs, scope, pool, before_each=bm25_ahead, qvecs=qvecs)
            except Exception as e:  # embedder or Chroma down: degrade to keyword search
                self._warn_once(
                    f"vector:{type(e).__name__}",
                    "vector search unavailable (%s); falling back to keyword search",
                    e,
                )
                vectors, use_fts = None, True
        for t in qs[len(ahead) :]:
            bm25_ahead(t)
        if graph_on and qvecs:  # the graph stage on this thread, while BM25 finishes on its own
            links = self._links(q, scope, qvecs[0])
        if ahead:
            keywords = [f.result() for f in ahead]
        elif use_fts or mode == "keyword":
            keywords = [self._keyword(t, scope, pool, fts=mode != "keyword") for t in qs]
        if category:
            vectors = None if vectors is None else [_of(category, v) for v in vectors]
            keywords = None if keywords is None else [_of(category, kw) for kw in keywords]
        if valid.keeps is not None:
            vectors = None if vectors is None else [valid.filter(v) for v in vectors]
            keywords = None if keywords is None else [valid.filter(kw) for kw in keywords]
        older: set[str] = set()
        if valid.as_of is None:  # the slot stage knows current versions only
            keywords = self._slot_stage(q, scope, category, keywords, older)
        if len(qs) == 1:
            vector = None if vectors is None else vectors[0]
            keyword = None if keywords is None else keywords[0]
        else:
            vector, keyword = union_candidates(vectors, keywords, copy=False)  # fresh
        if graph_on:
            if links is None:  # no query vector: word overlap only
                links = self._links(q, scope, None)
            vector = self._graph_stage(scope, category, valid, qvecs, vector, keyword, links)
        if valid.as_of is None and rs.safety_stage and self.safety is not None:
            vector, keyword = self._safety_stage(q, scope, category, valid, qvecs, vector, keyword)
        if rs.person_stage:
            self._person_stage(q, scope, vector, keyword, depth=max(2 * k, PERSON_DEPTH))
        for c in (*(vector or ()), *(keyword or ())) if older else ():
            if c.id in older:  # a newer statement of its slot replaces it
                c.debug["older_statement"] = 1.0
        ranked = rank(
            vector,
            keyword,
            k=k,
            settings=rs,
            now=now,
            options=options,
            intent=intent,
            full_match_cosine=rs.vector_full_match,
            context=IndexNeighbours(
                self.workspace.keyword,
                scope,
                category,
                self.workspace.vectors.model_name,
                keeps=valid.keeps,
                max_gap=(
                    None if rs.context_max_gap_days is None else rs.context_max_gap_days * 86_400.0
                ),
            ),
            cosine_baseline=self.cosine_baseline,
            copy_inputs=False,  # fresh candidates, used once
            extra=0 if len(qs) == 1 else COVER_DEPTH,
            query=q,
        )
        if len(qs) > 1:  # every question gets a hit when the ranking has one for it
            ranked = cover_questions(ranked, k, len(qs) - 1)
        hits = [self._hit(c, scope, valid.closed.get(c.id)) for c in ranked]
        self._profile_fields(scope, hits)
        qvec = qvecs[0] if qvecs else None
        if notes_on:
            hits += self._notes(
                q, qvec, notes_ahead, scope=scope, k=k, mode=mode, category=category,
                intent=intent, now=now,
            )  # fmt: skip
        # a safety fact asked about first, then a memory stating the very attribute
        # asked about, above look-alikes (the ranking's order; extra sources' hits
        # are merged by score after them)
        tier = {c.id: 0 if c.safety else 1 for c in ranked if c.safety or c.slot_match}
        for source, with_vector in self._sources:
            try:
                if with_vector:
                    extra = source(q, scope, k, intent, query_vector=qvec)
                else:
                    extra = source(q, scope, k, intent)
                hits.extend(h for h in extra if not category or h.category == category)
            except Exception as e:  # an extra source must never break search
                self._warn_once(f"source:{source!r}", "extra search source failed: %s", e)
        hits = drop_represented(hits)
        hits.sort(key=lambda h: (tier.get(h.id, 2), -h.score))
        return hits[:k]

    def _has_notes(self, scope: str) -> bool:
        """Whether the scope has prose chunks (one index probe); ``False`` when the
        index cannot say (notes must never break search)."""
        try:
            return self.workspace.keyword.has_passages("prose", scope)
        except Exception as e:
            self._warn_once(f"notes:{type(e).__name__}", "search of notes failed: %s", e)
            return False

    def _notes(
        self,
        q: str,
        qvec: Any,
        ahead: Future[list[Candidate]] | None,
        *,
        scope: str,
        k: int,
        mode: str,
        category: str | None,
        intent: RecallIntent | None,
        now: float,
    ) -> list[SearchHit]:
        """The notes' hits (:mod:`~langmem_ext.memory.recall.notes`): their vector candidates
        from the query vector ``qvec`` (when the vector side ran), their keyword
        candidates from ``ahead`` (or now, for a vector search whose vector side
        failed), ranked by the pipeline. Nothing, logged once, when that fails."""
        try:
            vector = (
                note_vector(self.workspace, qvec, scope, k, self.cosine_baseline)
                if qvec is not None and mode in ("vector", "hybrid")
                else None
            )
            keyword = (
                ahead.result()
                if ahead is not None
                else note_keyword(self.workspace, q, scope, k)
                if vector is None
                else None
            )
            return rank_notes(
                vector, keyword, settings=self.settings.retrieval,
                cosine_baseline=self.cosine_baseline, query=q, scope=scope, k=k,
                category=category, intent=intent, now=now,
            )  # fmt: skip
        except Exception as e:  # notes must never break search
            self._warn_once(f"notes:{type(e).__name__}", "search of notes failed: %s", e)
            return []

    def _top_k(self, k: int | None) -> int:
        """``k`` (default ``retrieval.top_k``) clamped to ``retrieval.max_k``, validated."""
        rs = self.settings.retrieval
        if k is None:
            k = rs.top_k
        if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}.")
        return min(k, rs.max_k)

    def _vector(self, q: str, scope: str, pool: int) -> list[Candidate]:
        """The vector engine's candidates for one text (see :meth:`_vectors`)."""
        return self._vectors([q], scope, pool)[0]

    def _vectors(
        self,
        texts: list[str],
        scope: str,
        pool: int,
        before_each: Callable[[str], None] | None = None,
        qvecs: list[Any] | None = None,
    ) -> list[list[Candidate]]:
        """The vector engine's candidates for each text, best first.

        The texts are embedded one after another (``before_each(text)`` runs just
        before each, to start its BM25 query); then one nearest-neighbour pass, one
        document fetch and one computation of contextual vectors serve them all.
        The query vectors are appended to ``qvecs`` when given.
        """
        ws = self.workspace
        if qvecs is None:
            qvecs = []
        for t in texts:
            if before_each is not None:
                before_each(t)
            qvecs.append(self.embeddings.embed_query(t))
        # Exact, from the vectors held in memory when the scope allows; else Chroma.
        search = ws.vector_search
        model = search.model_name
        hit_lists = search.nearest_many(scope, qvecs, pool)
        weight = self.settings.retrieval.context_vector_weight
        hit_ids = list(dict.fromkeys(h.id for hits in hit_lists for h in hits))
        found = ws.keyword.docs_with_vectors(hit_ids, model, scope)
        previous: dict[str, Previous] = {}
        # only a reply is read with the turn before it: the entries before are asked
        # for the hits that are transcript lines (none in a list of facts)
        turns = (
            [i for i in hit_ids if i in found and speaker_of(found[i][0].text)] if weight else []
        )
        if turns:
            _docs, before = ws.keyword.docs_with_previous_vectors(turns, model, scope)
            previous = {i: p for i, p in before.items() if is_reply(found[i][0].text, p.text)}
        # No valid kept copy (an index from before copies were kept, or a doc whose
        # new text is not embedded yet): Chroma's own vector, as before.
        missing = [i for i, (d, v) in found.items() if v is None and d.scope == scope]
        fetched = search.embeddings(scope, missing) if missing else {}
        lists: list[list[Candidate]] = []
        for vhits in hit_lists:
            out: list[Candidate] = []
            for rank_i, h in enumerate(vhits):
                d, vec = found.get(h.id, (None, None))
                if d is None or d.scope != scope:  # stale vector: its doc is gone
                    continue
                c = doc_candidate(d)
                c.vector_score = rescale_cosine(h.similarity, self.cosine_baseline)
                c.vector_rank = rank_i
                embedding: Any = vec if vec is not None else fetched.get(h.id)  # for MMR
                c.embedding = embedding
                out.append(c)
            lists.append(out)
        if previous:
            self._contextual(lists, qvecs, weight, scope, previous)
        return lists

    def _contextual(
        self,
        lists: list[list[Candidate]],
        qvecs: list[list[float]],
        weight: float,
        scope: str,
        previous: dict[str, Previous],
    ) -> None:
        """Score vector hits by their contextual vectors (:mod:`~langmem_ext.retrieval.contextual`).

        In place, for each text's list: ``vector_score`` becomes the rescaled cosine
        with the entry's unit vector plus ``weight`` times its predecessor's when that
        is higher (context only ever helps: an independent fact after an unrelated one
        keeps its own score), ``debug["own_vector"]`` then keeps the plain one, and
        the vector ranks follow the new scores. The contextual vectors are computed
        once for the candidates of all texts.

        Args:
            lists: Each text's vector candidates (with embeddings).
            qvecs: Each text's query vector.
            weight: ``retrieval.context_vector_weight``.
            scope: The scope searched.
            previous: Entry id -> its predecessor (id and kept vector or ``None``), for
                the entries that reply to it (:func:`~langmem_ext.retrieval.contextual.is_reply`).
        """
        own = {
            c.id: c.embedding
            for out in lists
            for c in out
            if c.embedding is not None and c.id in previous
        }
        if not own:
            return
        # A predecessor without a kept copy: Chroma's vector.
        missing = [previous[i].id for i in own if previous[i].vector is None]
        fetched = self.workspace.vector_search.embeddings(scope, missing) if missing else {}
        rows: dict[str, int] = {}
        vectors: list[Any] = []
        before: list[Any] = []
        for entry_id, vec in own.items():
            prev = previous[entry_id]
            got = prev.vector if prev.vector is not None else fetched.get(prev.id)
            if got is not None:
                rows[entry_id] = len(vectors)
                vectors.append(vec)
                before.append(got)
        if not rows:
            return
        units = contextual_units(vectors, before, weight)
        baseline = self.cosine_baseline
        rs = self.settings.retrieval
        for qvec, out in zip(qvecs, lists, strict=True):
            scored = [c for c in out if c.id in rows]
            if not scored:
                continue
            cosines = units[[rows[c.id] for c in scored]] @ unit_query(qvec)
            for c, cos in zip(scored, cosines.tolist(), strict=True):
                contextual = rescale_cosine(cos, baseline)
                if c.vector_score is not None and contextual > c.vector_score:
                    # context lifts a hit only as far as its own cosine is a signal
                    contextual = c.vector_score + own_cosine_signal(
                        c.vector_score, rs.vector_full_match, rs.min_score
                    ) * (contextual - c.vector_score)
                if c.vector_score is not None and contextual > c.vector_score:
                    c.debug["own_vector"] = c.vector_score
                    c.vector_score = contextual
            out.sort(key=lambda c: -(c.vector_score or 0.0))
            for i, c in enumerate(out):
                c.vector_rank = i

    def _keyword(self, q: str, scope: str, pool: int, *, fts: bool) -> list[Candidate]:
        kw = self.workspace.keyword
        pairs: list[tuple[Doc, float]]
        full: float | None = None
        if fts:
            try:
                pairs = kw.bm25(scope, q, pool)
                if pairs:
                    full = kw.bm25_full(q) or None
            except sqlite3.Error as e:
                self._warn_once("fts", "FTS5 search failed (%s); using substring search", e)
                pairs = kw.substring(scope, q, pool)
        else:
            pairs = kw.substring(scope, q, pool)
            full = 1.0  # substring scores are already the share of query tokens found
        out: list[Candidate] = []
        for rank_i, (d, score) in enumerate(pairs):
            c = doc_candidate(d)
            c.bm25_score = score
            c.bm25_rank = rank_i
            c.bm25_full = full
            out.append(c)
        return out

    def _slot_stage(
        self,
        q: str,
        scope: str,
        category: str | None,
        keywords: list[list[Candidate]] | None,
        older: set[str] | None = None,
    ) -> list[list[Candidate]] | None:
        """A question about one of the user's own attributes ("where do I live?",
        "我在哪家公司工作？") finds the current memories stating that attribute (their
        slot, :func:`~langmem_ext.short_term.statements.question_slots`), whatever
        their wording: they join the first text's keyword candidates as full keyword
        matches (``Candidate.slot_match``, shown as ``debug["slot"]``), readable in any script, and rank above the
        hits that only resemble the question ("My sister lives in Rome"). Of a slot
        with one current value (where the user lives) only the newest statement is
        the answer; the older ones, in any language, are added to ``older``."""
        slots = question_slots(q) if self.settings.retrieval.slot_stage else []
        if not slots:
            return keywords
        # the newest few of each slot: a store of imported statements may hold many
        # current memories of one slot (added, not superseded), and only the newest
        # are the answer; the rest stay reachable by ordinary search
        states = self.workspace.ledger.entries.current_of_slots(scope, slots, limit=SLOT_HITS)
        if not states:
            return keywords
        docs = self.workspace.keyword.docs([s.id for s in states])
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
        # of a slot with one current value (where the user lives), the newest statement
        # is the answer: the older ones, in any language, are versions it replaced
        newest: dict[str, float] = {}
        for st in states:
            if st.slot is not None and single_valued(st.slot):
                newest[st.slot] = max(newest.get(st.slot, st.created_at), st.created_at)
        for st in states:
            d = docs.get(st.id)
            if d is None or d.scope != scope or (category and d.category != category):
                continue
            c = first.get(st.id)
            if st.slot in newest and st.created_at < newest[st.slot]:
                if older is not None:  # a newer one states the slot
                    older.add(st.id)
                continue
            if c is None:
                c = doc_candidate(d)
                lists[0].append(c)
            c.bm25_score = max(c.bm25_score or 0.0, full)
            c.bm25_full = full
            c.slot_match = True
            c.debug["slot"] = 1.0  # shown in hit.debug
        lists[0].sort(key=lambda c: -(c.bm25_score or 0.0))
        for i, c in enumerate(lists[0]):
            c.bm25_rank = i
        return lists

    def _safety_stage(
        self,
        q: str,
        scope: str,
        category: str | None,
        valid: Validity,
        qvecs: list[Any],
        vector: list[Candidate] | None,
        keyword: list[Candidate] | None,
    ) -> tuple[list[Candidate] | None, list[Candidate] | None]:
        """A question about a safety topic ("Does Lin Wei have any food allergies?",
        "我做过什么手术") marks the memories stating the fields it asks about, of the
        person it asks about (``Candidate.safety``; ``debug["safety"]``): those linked
        to the field when they were stored (:class:`~langmem_ext.memory.safety.links.SafetyLinks`),
        which join the candidates with their own cosine (any language), and every
        candidate whose text states one (:func:`~langmem_ext.memory.safety.facts.safety_facts`:
        a memory written by hand). The pipeline ranks them first
        (:func:`~langmem_ext.retrieval.pipeline.safety_first`). Returns the vector and
        keyword lists."""
        links = self.safety
        assert links is not None
        try:
            topic = links.topic(scope, q)
            if topic is None:
                return vector, keyword
            linked = links.linked(scope, topic)
            names = links.names(scope)
            subjects = set(links.subjects(scope, topic))
        except Exception as e:  # the stage must never break search
            self._warn_once(f"safety:{type(e).__name__}", "safety stage failed: %s", e)
            return vector, keyword
        asked = set(topic.fields)
        seen: set[str] = set()
        for c in (*(vector or ()), *(keyword or ())):
            seen.add(c.id)
            fields = set(linked.get(c.id, ()))
            # a relation and the name next to it are one person ("我丈夫Mark")
            about = () if topic.subject == USER else persons(c.text, names)
            fields |= {
                f.field
                for f in safety_facts(c.text, names)
                if f.field in asked
                and (
                    any(same_person(f.subject, s) for s in subjects)
                    or (f.subject in about and topic.subject in about)
                )
            }
            if fields:
                c.safety = tuple(f for f in topic.fields if f in fields)
                c.debug["safety"] = 1.0
        missing = [i for i in linked if i not in seen]
        if not missing:
            return vector, keyword
        qunit = unit_query(qvecs[0]) if qvecs else None
        into = vector if vector is not None and qunit is not None else keyword
        if into is None:
            into = keyword = []
        for c in self._joined(missing, scope, category, valid, qunit):
            c.safety = linked[c.id]
            c.debug["safety"] = 1.0
            into.append(c)
        if into is vector:
            _rerank_vector(vector)
        return vector, keyword

    def _names(self, scope: str) -> tuple[str, ...]:
        """The profile's names (a memory about them is the user's); none without links."""
        if self.safety is None:
            return ()
        try:
            return self.safety.names(scope)
        except Exception as e:  # a profile must never break search
            self._warn_once(f"names:{type(e).__name__}", "profile unreadable: %s", e)
            return ()

    def _person_stage(
        self,
        q: str,
        scope: str,
        vector: list[Candidate] | None,
        keyword: list[Candidate] | None,
        *,
        depth: int,
    ) -> None:
        """Whom the question asks about against whom each memory is about
        (:func:`~langmem_ext.memory.safety.facts.persons`): a question about the user ("what
        am I allergic to?", "我住在哪") and a memory about another person ("My sister
        is allergic to shellfish", "我妈妈住在杭州"), or a question about another person
        ("What is my wife allergic to?") and the user's own fact, mark the memory
        ``other_person``; the pipeline lowers its score. Two other people are never
        told apart (a name and a relation may be one person), nor is a memory whose
        wording names nobody; and a question naming someone by name may be about the
        user (whose name the profile may not hold), so only a relation ("my wife",
        "我妈妈") sets the user's own facts apart. Only the best ``depth`` of each
        engine's list are read (what can reach the top ``k``)."""
        names = self._names(scope)
        asked = persons(q, names)
        if not asked or (asked[0] != USER and not is_relation(asked[0])):
            return
        mine = asked[0] == USER
        for c in (*(vector or ())[:depth], *(keyword or ())[:depth]):
            about = persons(c.text, names)
            if about and (is_relation(about[0]) if mine else about == (USER,)):
                c.other_person = True

    def _profile_fields(self, scope: str, hits: list[SearchHit]) -> None:
        """Note in each hit's ``debug`` the safety fields of the user's profile its
        memory states (``debug["profile.allergies"] = 1``)."""
        if self.safety is None or not hits:
            return
        try:
            fields = self.safety.fields_of(scope, [h.id for h in hits])
        except Exception as e:  # a note must never break search
            self._warn_once(f"profile:{type(e).__name__}", "safety links unreadable: %s", e)
            return
        for h in hits:
            for f in fields.get(h.id, ()):
                h.debug[f"profile.{f}"] = 1.0

    def _links(self, q: str, scope: str, qvec: Any) -> GraphLinks:
        """The graph stage's links for ``q`` (:func:`~langmem_ext.memory.knowledge.stage.graph_links`);
        none when the graph fails (logged once): it must never break search."""
        rs = self.settings.retrieval
        assert self.knowledge is not None
        try:
            return graph_links(
                self.knowledge, scope, q, query_vector=qvec, hops=rs.graph_hops,
                limit=rs.graph_max_triples,
            )  # fmt: skip
        except Exception as e:
            self._warn_once(f"graph:{type(e).__name__}", "graph stage failed: %s", e)
            return GraphLinks()

    def _graph_stage(
        self,
        scope: str,
        category: str | None,
        valid: Validity,
        qvecs: list[Any],
        vector: list[Candidate] | None,
        keyword: list[Candidate] | None,
        links: GraphLinks,
    ) -> list[Candidate] | None:
        """Apply the graph's ``links`` (:mod:`~langmem_ext.memory.knowledge.stage`).

        Candidates the graph links get ``graph_score``; linked memories neither
        engine returned join the vector candidates with their own cosine to the query
        (``debug["graph_link"]``), when the vector side ran. Returns the vector list.
        """
        if not links.scores:
            return vector
        seen: set[str] = set()
        for c in (*(vector or ()), *(keyword or ())):
            g = links.scores.get(c.id)
            if g is not None:
                c.graph_score = g
                seen.add(c.id)
        missing = [i for i in links.scores if i not in seen]
        if vector is None or not qvecs or not missing:
            return vector
        joined = self._joined(missing, scope, category, valid, unit_query(qvecs[0]))
        for c in joined:
            c.graph_score = links.scores[c.id]
            c.debug["graph_link"] = c.graph_score
        if joined:
            vector.extend(joined)
            _rerank_vector(vector)
        return vector

    def _joined(
        self,
        ids: list[str],
        scope: str,
        category: str | None,
        valid: Validity,
        qunit: Any,
    ) -> list[Candidate]:
        """Candidates for memories neither engine returned (a stage links them to the
        question), in ``ids`` order, each with its own cosine to the query when there
        is a query vector (``qunit``); other scopes, categories and versions left out."""
        ws = self.workspace
        found = ws.keyword.docs_with_vectors(ids, ws.vector_search.model_name, scope)
        out: list[Candidate] = []
        for entry_id in ids:
            d, vec = found.get(entry_id, (None, None))
            if d is None or d.scope != scope or (category and d.category != category):
                continue
            c = doc_candidate(d)
            if valid.keeps is not None and not valid.keeps(c):
                continue
            if vec is not None and qunit is not None:
                kept: Any = vec  # read-only array, as in _vectors
                c.vector_score = rescale_cosine(
                    float(unit_query(kept) @ qunit), self.cosine_baseline
                )
                c.embedding = kept
            out.append(c)
        return out

    def _validity(self, scope: str, as_of: float | None, include_superseded: bool) -> Validity:
        """Which versions a search may return: current ones (default), those valid at
        ``as_of``, or all (``include_superseded``)."""
        closed = self.workspace.ledger.entries.closed_of_scope(scope)
        if as_of is not None:
            t = as_of
            return Validity(
                closed,
                lambda c: c.created_at <= t and closed.get(c.id, float("inf")) > t,
                as_of=t,
            )
        if include_superseded or not closed:
            return Validity(closed, None)
        return Validity(closed, lambda c: c.id not in closed)

    @staticmethod
    def _hit(c: Candidate, scope: str, valid_to: float | None) -> SearchHit:
        return SearchHit(
            id=c.id,
            text=c.text,
            score=round(float(c.score), 6),
            path=str(c.metadata["path"]),
            line=int(c.metadata["line"]),
            category=c.category,
            created_at=to_dt(c.created_at),  # type: ignore[arg-type]
            updated_at=to_dt(float(c.metadata["updated_at"])),  # type: ignore[arg-type]
            importance=c.importance,
            scope=scope,
            valid_to=to_dt(valid_to),
            debug={key: round(float(v), 6) for key, v in c.debug.items()},
        )


__all__ = ["COVER_DEPTH", "MODES", "PERSON_DEPTH", "ExtraSource", "SearchEngine", "Validity"]

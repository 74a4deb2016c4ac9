"""Search: one run of the ranking pipeline over the workspace's engines.

:meth:`SearchEngine.search` validates the query, binds the workspace, the knowledge
graph, the safety links and the other sources to the pipeline's protocols
(:mod:`langmem_ext.memory.recall.search_io`) and runs the ordered stage list
(:attr:`SearchEngine.stages`, :func:`~langmem_ext.retrieval.stages.default_stages`).
The hits are the pipeline's result in its order: nothing re-sorts them.

Modes degrade when an engine fails (logged once per reason, never raised):
``hybrid`` → ``fts`` (the embedder or Chroma is down) → ``keyword`` (plain
substring, FTS5 failed). ``vector`` degrades the same way. Other sources of hits
(the memory's session hot log is one) are given to the engine when it is built (or
added with :meth:`SearchEngine.add_source`); the notes, the prose of the memory files
(:mod:`langmem_ext.memory.recall.notes`), join unless ``retrieval.prose`` is off.

In ``hybrid`` mode the BM25 query runs on a worker thread while the caller embeds
the query and asks Chroma: SQLite, the embedder's numpy and Chroma's Rust core
release the GIL, so with a free core the keyword side adds (almost) no wall time.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from langmem_ext.core.errors import EmptyTextError, InvalidInputError
from langmem_ext.language.text import query_tokens, speaker_of
from langmem_ext.memory.recall.neighbours import IndexNeighbours, doc_candidate
from langmem_ext.memory.recall.notes import note_keyword, note_vector, rank_notes
from langmem_ext.memory.recall.search_io import (
    GraphPort,
    HitsSource,
    JoinPort,
    KeywordPort,
    NotesPort,
    PersonPort,
    ProfilePort,
    SafetyPort,
    SlotPort,
    VectorPort,
    keyword_pool,
)
from langmem_ext.memory.types import SearchHit, to_dt
from langmem_ext.retrieval.calibration import cosine_baseline_of, rescale_cosine
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.compound import split_compound
from langmem_ext.retrieval.contextual import (
    contextual_units,
    is_reply,
    own_cosine_signal,
    unit_query,
)
from langmem_ext.retrieval.repair import focus_of
from langmem_ext.retrieval.stages import Pipeline, Pool, QueryContext, SearchIO, default_stages

if TYPE_CHECKING:
    from langchain_core.documents import BaseDocumentCompressor
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
COVER_DEPTH = 10
"""A question of a compound message with no hit in the top ``k`` takes its best hit
from the next 10 of the ranking (see
:func:`~langmem_ext.retrieval.compound.cover_questions`)."""
ExtraSource = Callable[..., list[SearchHit]]
"""``source(query, scope, k, intent) -> hits`` — e.g. the session hot log; a source
added ``with_vector`` is also passed ``query_vector=`` (see :meth:`SearchEngine.add_source`)."""

_keyword_pool = keyword_pool
"""The keyword threads (:func:`~langmem_ext.memory.recall.search_io.keyword_pool`)."""


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


class SearchEngine:
    """Runs a query through the ranking pipeline over the workspace's engines.

    Args:
        workspace: The workspace (keyword + vector index).
        embeddings: Embedder for queries.
        settings: Settings tree.
        knowledge: The knowledge graph the graph stage reads (``None``: no graph stage).
        safety: The safety links the safety stage reads (``None``: no safety stage).
        sources: Other sources of hits, each ``(source, with_vector)`` as
            :meth:`add_source` takes them (the memory's session log is one).
        reranker: A LangChain document compressor that reorders the results as the
            pipeline's last stage (``None``: off).
    """

    def __init__(
        self,
        workspace: Workspace,
        embeddings: Embeddings,
        settings: Settings,
        *,
        knowledge: KnowledgeGraph | None = None,
        safety: SafetyLinks | None = None,
        sources: Sequence[tuple[ExtraSource, bool]] = (),
        reranker: BaseDocumentCompressor | None = None,
    ) -> None:
        self.workspace = workspace
        self.embeddings = embeddings
        self.settings = settings
        self.reranker = reranker
        self._warned: set[str] = set()
        self._sources: list[tuple[ExtraSource, bool]] = list(sources)
        self._baseline: float | None = None
        self.knowledge = knowledge
        """The knowledge graph the graph stage reads."""
        self.safety = safety
        """The safety links the safety stage reads."""

    @property
    def stages(self) -> Pipeline:
        """The ordered stages a search runs, from the current settings
        (:func:`~langmem_ext.retrieval.stages.default_stages`); ``.names`` lists them."""
        return default_stages(self.settings.retrieval, reranker=self.reranker)

    @property
    def cosine_baseline(self) -> float:
        """The query embedder's cosine baseline (see :mod:`langmem_ext.retrieval.calibration`)."""
        if self._baseline is None:
            self._baseline = cosine_baseline_of(
                self.embeddings, self.settings.retrieval.cosine_baseline
            )
        return self._baseline

    def add_source(self, source: ExtraSource, *, with_vector: bool = False) -> None:
        """Merge hits of another source (for example session events) into searches
        (the pipeline's ``sources`` stage).

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

    def _warn(self, key: str, msg: str) -> None:
        self._warn_once(key, "%s", msg)

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

        The hits are the pipeline's result (:attr:`stages`), in its order.
        """
        texts = self.query_texts(query) or [query]  # none left: the query's error
        valid = self._validity(scope, as_of, include_superseded)
        ctx = self.query_context(
            texts, scope=scope, k=k, mode=mode, category=category, intent=intent,
            now=time.time() if now is None else now, valid=valid,
        )  # fmt: skip
        if ctx is None:
            return []  # only punctuation / emoji: nothing to look for
        pipeline = self.stages
        if options is not None:
            pipeline = pipeline.without(options.off())
        pool = pipeline.run(Pool(), ctx)
        return [self._result(c, scope, valid.closed) for c in pool.ranked]

    def query_context(
        self,
        texts: list[Any],
        *,
        scope: str,
        k: int | None = None,
        mode: str | None = None,
        category: str | None = None,
        intent: RecallIntent | None = None,
        now: float,
        valid: Validity | None = None,
    ) -> QueryContext | None:
        """The pipeline's view of a search of ``texts`` (the query, then each question
        of a compound message) in ``scope``: the validated query, and the workspace,
        knowledge graph, safety links and sources bound to the scope.

        Args:
            texts: The query, then each question of a compound message
                (:meth:`query_texts`).
            scope: The scope searched.
            k: Results wanted (default ``retrieval.top_k``).
            mode: Search mode (default ``retrieval.mode``).
            category: Only memories of this category.
            intent: The recall intent.
            now: The time of the question, epoch seconds.
            valid: The versions searched (default: current ones).

        Returns:
            The context; ``None`` when the query holds nothing to look for (only
            punctuation or emoji).

        Raises:
            InvalidInputError: The query is not a string, ``k`` is not a positive
                integer, or ``mode`` is unknown.
            EmptyTextError: The query is empty.
        """
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
            return None
        qs = [q, *texts[1:]]
        # Several texts share the pool of k: each brings the pool of k / texts.
        pool = max(-(-k // len(qs)) * rs.candidate_multiplier, 20)
        if category:
            pool *= 3
        self.workspace.refresh_if_stale()
        if valid is None:
            valid = self._validity(scope, None, False)
        current = valid.as_of is None
        links = None if self.safety is None else self.safety.for_one_read()
        io = SearchIO(
            keyword=KeywordPort(self._keyword, scope),
            vector=VectorPort(self._vectors, scope),
            slots=SlotPort(self.workspace, scope),
            graph=None if self.knowledge is None else GraphPort(self.knowledge, rs, scope),
            joiner=JoinPort(partial(self._join, scope, category, valid)),
            safety=None if links is None else SafetyPort(links, scope, self._warn),
            persons=PersonPort(links, scope, self._warn),
            neighbours=IndexNeighbours(
                self.workspace.keyword,
                scope,
                category,
                self.workspace.vectors.model_name,
                keeps=valid.keeps,
                max_gap=(
                    None if rs.context_max_gap_days is None else rs.context_max_gap_days * 86_400.0
                ),
            ),
            profile=None if links is None else ProfilePort(links, scope),
            notes=self._notes_port(q, scope, k, mode, category, intent, now) if current else None,
            sources=[
                HitsSource(source, with_vector, scope, k, intent, category)
                for source, with_vector in self._sources
            ],
        )
        return QueryContext(
            query=q,
            texts=qs,
            k=k,
            now=now,
            settings=rs,
            io=io,
            mode=mode,
            category=category,
            intent=intent,
            current_only=current,
            keeps=valid.keeps,
            pool_size=pool,
            extra=0 if len(qs) == 1 else COVER_DEPTH,
            full_match_cosine=rs.vector_full_match,
            cosine_baseline=self.cosine_baseline,
            copy_inputs=False,  # fresh candidates, used once
            warn=self._warn,
        )

    def _result(self, c: Candidate, scope: str, closed: dict[str, float]) -> SearchHit:
        """The hit of a result: a memory's, or the hit another source gave."""
        hit: SearchHit | None = c.metadata.get("hit")
        if hit is None:
            return self._hit(c, scope, closed.get(c.id))
        if c.debug != hit.debug:  # a stage after the merge noted something
            hit = hit.model_copy(
                update={"debug": {key: round(float(v), 6) for key, v in c.debug.items()}}
            )
        return hit

    def _notes_port(
        self,
        q: str,
        scope: str,
        k: int,
        mode: str,
        category: str | None,
        intent: RecallIntent | None,
        now: float,
    ) -> NotesPort | None:
        """The notes source (``retrieval.prose``): their BM25 starts now on a keyword
        thread, beside everything up to their ranking."""
        if not self.settings.retrieval.prose or not self._has_notes(scope):
            return None
        ahead = (
            _keyword_pool().submit(note_keyword, self.workspace, q, scope, k)
            if mode != "vector"
            else None
        )

        def fetch(query: str, qvec: Any) -> list[SearchHit]:
            return self._notes(
                query, qvec, ahead, scope=scope, k=k, mode=mode, category=category,
                intent=intent, now=now,
            )  # fmt: skip

        return NotesPort("notes", fetch)

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

    def _join(
        self, scope: str, category: str | None, valid: Validity, ids: list[str], qunit: Any
    ) -> list[Candidate]:
        return self._joined(ids, scope, category, valid, qunit)

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


__all__ = ["COVER_DEPTH", "MODES", "ExtraSource", "SearchEngine", "Validity"]

"""Search orchestration: engines, modes with degrade paths, ranking, extra sources.

Modes form a chain, each falling back to the next when its engine fails (logged
once per reason, never raised): ``hybrid`` → ``fts`` (the embedder or Chroma is
down) → ``keyword`` (plain substring, FTS5 failed). ``vector`` degrades the same
way. The ranking itself is :func:`langmem_ext.retrieval.pipeline.rank`.

Other layers add sources of hits (the session hot log does) with
:meth:`SearchEngine.add_source`; their hits are merged by score.

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
from typing import TYPE_CHECKING, Any

from langmem_ext.errors import EmptyTextError, InvalidInputError
from langmem_ext.memory.models import SearchHit, to_dt
from langmem_ext.memory.neighbours import IndexNeighbours, doc_candidate
from langmem_ext.retrieval.calibration import cosine_baseline_of, rescale_cosine
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.compound import interleave, split_compound
from langmem_ext.retrieval.contextual import contextual_cosines
from langmem_ext.retrieval.repair import focus_of
from langmem_ext.retrieval.text import query_tokens
from langmem_ext.workspace.vector_index import VectorHit

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langmem_ext.config import Settings
    from langmem_ext.retrieval.intent import RecallIntent
    from langmem_ext.retrieval.pipeline import PipelineOptions
    from langmem_ext.workspace.keyword_index import Doc
    from langmem_ext.workspace.store import Workspace

logger = logging.getLogger(__name__)

MODES = ("keyword", "fts", "vector", "hybrid")
ExtraSource = Callable[[str, str, int, "RecallIntent | None"], list[SearchHit]]
"""``source(query, scope, k, intent) -> hits`` — e.g. the session hot log."""

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
        self._sources: list[ExtraSource] = []
        self._baseline: float | None = None

    @property
    def cosine_baseline(self) -> float:
        """The query embedder's cosine baseline (see :mod:`langmem_ext.retrieval.calibration`)."""
        if self._baseline is None:
            self._baseline = cosine_baseline_of(
                self.embeddings, self.settings.retrieval.cosine_baseline
            )
        return self._baseline

    def add_source(self, source: ExtraSource) -> None:
        """Merge hits of another source (for example session events) into searches."""
        self._sources.append(source)

    def _warn_once(self, key: str, msg: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(msg, *args)

    def query_texts(self, query: str) -> list[str]:
        """The texts a search of ``query`` embeds, in order (see :meth:`search`).

        The whole message (after a self-repair: the part it repairs to) first, then
        each of its questions when it asks several.
        """
        if not isinstance(query, str):
            return []
        limit = self.settings.max_query_chars
        if not self.settings.retrieval.question_parts:
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
    ) -> list[SearchHit]:
        """Search one scope. See :meth:`langmem_ext.Memory.search`.

        With ``retrieval.question_parts`` (default), a self-repair ("…, what I really
        want to ask is X") narrows the search to X (:func:`focus_of`), and a message
        that asks several questions is searched whole (``k`` hits) and per question
        (``ceil(k / 2)`` hits each), the best hits of each taking turns
        (:mod:`langmem_ext.retrieval.compound`). Merged hits
        keep their order; a score is capped at the one above it so scores still read
        best first, and ``debug["question"]`` says which search found the hit
        (0 = the whole message, 1.. = its questions).
        """
        args: dict[str, Any] = {
            "scope": scope, "k": k, "mode": mode, "category": category,
            "intent": intent, "options": options,
            "now": time.time() if now is None else now,
        }  # fmt: skip
        if not isinstance(query, str) or not self.settings.retrieval.question_parts:
            return self._search_query(query, **args)
        texts = self.query_texts(query)
        if not texts:  # nothing left to search: the error an empty query gets
            return self._search_query(query, **args)
        first = self._search_query(texts[0], **args)  # validates k, mode, the text
        if len(texts) == 1:
            return first
        # Taking turns, each question fills at most about k / (1 + questions) places
        # (more when lists share hits): half of k is ample, and ranks half as much.
        top = self._top_k(k)
        part_args = {**args, "k": -(-top // 2)}
        lists = [first, *(self._search_query(p, **part_args) for p in texts[1:])]
        merged: list[SearchHit] = []
        cap = float("inf")
        for i, hit in interleave(lists, top, key=lambda h: h.id):
            cap = min(hit.score, cap)
            merged.append(
                hit.model_copy(update={"score": cap, "debug": {**hit.debug, "question": float(i)}})
            )
        return merged

    def _search_query(
        self,
        query: str,
        *,
        scope: str,
        k: int | None,
        mode: str | None,
        category: str | None,
        intent: RecallIntent | None,
        options: PipelineOptions | None,
        now: float,
    ) -> list[SearchHit]:
        """Search one query text (no self-repair or compound handling)."""
        from langmem_ext.retrieval.pipeline import rank

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
        pool = max(k * rs.candidate_multiplier, 20)
        if category:
            pool *= 3
        self.workspace.refresh_if_stale()

        # ``None``: the engine did not run (its weight goes to the other one);
        # ``[]``: it ran and found nothing.
        vector: list[Candidate] | None = None
        keyword: list[Candidate] | None = None
        ahead: Future[list[Candidate]] | None = None
        if mode == "hybrid":  # BM25 runs anyway: overlap it with the vector side
            ahead = _keyword_pool().submit(self._keyword, q, scope, pool, fts=True)
        use_fts = mode in ("fts", "hybrid")
        if mode in ("vector", "hybrid"):
            try:
                vector = self._vector(q, scope, pool)
            except Exception as e:  # embedder or Chroma down: degrade to keyword search
                self._warn_once(
                    f"vector:{type(e).__name__}",
                    "vector search unavailable (%s); falling back to keyword search", e,
                )
                use_fts = True
        if ahead is not None:
            keyword = ahead.result()
        elif use_fts or mode == "keyword":
            keyword = self._keyword(q, scope, pool, fts=mode != "keyword")
        if category:
            vector = None if vector is None else [c for c in vector if c.category == category]
            keyword = None if keyword is None else [c for c in keyword if c.category == category]
        ranked = rank(
            vector, keyword, k=k, settings=rs, now=now, options=options, intent=intent,
            full_match_cosine=rs.vector_full_match,
            context=IndexNeighbours(
                self.workspace.keyword, scope, category, self.workspace.vectors.model_name
            ),
            cosine_baseline=self.cosine_baseline,
            copy_inputs=False,  # fresh candidates, used once
        )
        hits = [self._hit(c, scope) for c in ranked]
        for source in self._sources:
            try:
                extra = source(q, scope, k, intent)
                hits.extend(h for h in extra if not category or h.category == category)
            except Exception as e:  # an extra source must never break search
                self._warn_once(f"source:{source!r}", "extra search source failed: %s", e)
        hits.sort(key=lambda h: -h.score)
        return hits[:k]

    def _top_k(self, k: int | None) -> int:
        """``k`` (default ``retrieval.top_k``) clamped to ``retrieval.max_k``, validated."""
        rs = self.settings.retrieval
        if k is None:
            k = rs.top_k
        if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}.")
        return min(k, rs.max_k)

    def _vector(self, q: str, scope: str, pool: int) -> list[Candidate]:
        ws = self.workspace
        qvec = self.embeddings.embed_query(q)
        # Exact, from the vectors held in memory when the scope allows; else Chroma.
        exact = ws.keyword.nearest(scope, ws.vectors.model_name, qvec, pool)
        if exact is not None:
            vhits = [VectorHit(i, sim, None) for i, sim in exact]
        else:
            vhits = ws.vectors.query(scope, qvec, pool, with_embeddings=False)
        weight = self.settings.retrieval.context_vector_weight
        hit_ids = [h.id for h in vhits]
        previous: dict[str, tuple[str, Any]] = {}
        if weight > 0:  # the entries before them come in the same query
            found, previous = ws.keyword.docs_with_previous_vectors(
                hit_ids, ws.vectors.model_name, scope
            )
        else:
            found = ws.keyword.docs_with_vectors(hit_ids, ws.vectors.model_name, scope)
        # No valid kept copy (an index from before copies were kept, or a doc whose
        # new text is not embedded yet): Chroma's own vector, as before.
        missing = [i for i, (d, v) in found.items() if v is None and d.scope == scope]
        fetched = ws.vectors.embeddings(scope, missing) if missing else {}
        out: list[Candidate] = []
        for rank_i, h in enumerate(vhits):
            d, vec = found.get(h.id, (None, None))
            if d is None or d.scope != scope:  # stale vector: its doc is gone
                continue
            c = doc_candidate(d)
            c.vector_score = rescale_cosine(h.similarity, self.cosine_baseline)
            c.vector_rank = rank_i
            embedding: Any = vec if vec is not None else fetched.get(h.id)  # numpy, for MMR
            c.embedding = embedding
            out.append(c)
        if previous and out:
            self._contextual(out, qvec, weight, scope, previous)
        return out

    def _contextual(
        self,
        cands: list[Candidate],
        qvec: list[float],
        weight: float,
        scope: str,
        found: dict[str, tuple[str, Any]],
    ) -> None:
        """Score vector hits by their contextual vectors (:mod:`~langmem_ext.retrieval.contextual`).

        In place: ``vector_score`` becomes the rescaled cosine with the entry's unit
        vector plus ``weight`` times its predecessor's when that is higher (context
        only ever helps: an independent fact after an unrelated one keeps its own
        score), ``debug["own_vector"]`` then keeps the plain one, and the vector
        ranks follow the new scores.
        """
        ws = self.workspace
        with_vec = [c for c in cands if c.embedding is not None]
        missing = [p for p, vec in found.values() if vec is None]  # no kept copy: Chroma's
        fetched = ws.vectors.embeddings(scope, missing) if missing else {}
        prev: dict[str, Any] = {}
        for entry_id, (prev_id, vec) in found.items():
            got = vec if vec is not None else fetched.get(prev_id)
            if got is not None:
                prev[entry_id] = got
        own = [c.embedding for c in with_vec if c.embedding is not None]
        cosines = contextual_cosines(qvec, own, [prev.get(c.id) for c in with_vec], weight)
        for c, cos in zip(with_vec, cosines, strict=True):
            if c.id not in prev or c.vector_score is None:
                continue
            contextual = rescale_cosine(float(cos), self.cosine_baseline)
            if contextual > c.vector_score:
                c.debug["own_vector"] = c.vector_score
                c.vector_score = contextual
        cands.sort(key=lambda c: -(c.vector_score or 0.0))
        for i, c in enumerate(cands):
            c.vector_rank = i

    def _keyword(self, q: str, scope: str, pool: int, *, fts: bool) -> list[Candidate]:
        kw = self.workspace.keyword
        pairs: list[tuple[Doc, float]]
        if fts:
            try:
                pairs = kw.bm25(scope, q, pool)
            except sqlite3.Error as e:
                self._warn_once("fts", "FTS5 search failed (%s); using substring search", e)
                pairs = kw.substring(scope, q, pool)
        else:
            pairs = kw.substring(scope, q, pool)
        out: list[Candidate] = []
        for rank_i, (d, score) in enumerate(pairs):
            c = doc_candidate(d)
            c.bm25_score = score
            c.bm25_rank = rank_i
            out.append(c)
        return out

    @staticmethod
    def _hit(c: Candidate, scope: str) -> SearchHit:
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
            debug={key: round(float(v), 6) for key, v in c.debug.items()},
        )


__all__ = ["MODES", "ExtraSource", "SearchEngine"]

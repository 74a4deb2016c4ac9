"""Search of :class:`~langmem_ext.store.chroma.ChromaMemoryStore`: the package's one ranking stack.

Without a query, a search is a page of the items under the prefix that pass the
filter, newest first, cut in SQL. With a query, two engines bring candidates, as
for :meth:`langmem_ext.Memory.search`, and
:func:`langmem_ext.retrieval.pipeline.rank` ranks them:

* **vector**: each namespace under the prefix is asked for its texts nearest the
  query (all of them when it holds at most :data:`_EXACT_VECTOR_LIMIT` vectors;
  else the ``pool`` nearest, or, with a filter, the nearest among the vectors of
  the items the filter passes when SQL counts at most :data:`_EXACT_VECTOR_LIMIT`
  of them). The hits' items are read in one query in which the filter and the
  expiry apply; an item scores its best text's cosine, rescaled for the embedder
  (:func:`~langmem_ext.retrieval.calibration.rescale_cosine`).
* **keyword**: BM25 over the items' texts (the ledger's FTS5 index, one document
  per item), with the prefix, the filter and the expiry in the same query, and the
  query's full-match BM25 (:attr:`~langmem_ext.retrieval.candidate.Candidate.bm25_full`).

Each engine returns ``max(k x retrieval.candidate_multiplier, 200)`` candidates
(``k = offset + limit``); fusion is ``retrieval.fusion``, with the query's script
weighing keyword evidence (:mod:`langmem_ext.retrieval.fusion`). The stages of
:data:`STORE_STAGES` that fit memories, not a key-value store, are off. Items
neither engine ranked follow, newest first (a page query), so a search returns
every item that passes its filter, as LangGraph's stores do; no step reads the
items under the prefix into Python.

The ``score`` a hit reports is LangGraph's: the plain cosine of the query and the
item's closest text (read from the vector index for a hit the vector engine did not
return), ``None`` without indexed text or without a query vector.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
from langgraph.store.base import SearchOp

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.memory import KvSpace, StoredItem, TextMatch, VectorHit
from langmem_ext.retrieval.calibration import rescale_cosine
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.pipeline import PipelineOptions, rank
from langmem_ext.store.vectors import StoreVectors, Warn

logger = logging.getLogger(__name__)

_EXACT_VECTOR_LIMIT = 1000
"""A namespace (or a filter's share of one) with at most this many vectors is
searched exhaustively."""

_MIN_POOL = 200
"""Each engine returns at least this many candidates."""

_FILTERED_POOL = 5
"""A filter the vector index cannot take widens that namespace's pool this many times."""

STORE_STAGES = PipelineOptions(
    recency=False,
    importance=False,
    length_norm=False,
    time_decay=False,
    thresholds=False,
    noise=False,
    mmr=False,
    context=False,
)
"""Fusion only. A store search returns every item passing its filter, so the
thresholds and the noise filter (which drop hits) are off; items have no age-based,
importance or length preference, no near-duplicate demotion (each key is its own
item) and no file-section neighbours."""

Ranked = list[tuple[StoredItem, float | None]]


class StoreSearch:
    """Runs the store's searches.

    Args:
        kv: The workspace's store space.
        vectors: The store's vector partitions (synced before a vector search).
        partition: The partition key of a namespace key.
        settings: The retrieval settings.
        cosine_baseline: The store embedder's cosine baseline.
        warn: Logs a warning once per key.
    """

    def __init__(
        self,
        kv: KvSpace,
        vectors: StoreVectors,
        partition: Callable[[str], str],
        settings: RetrievalSettings,
        cosine_baseline: float,
        warn: Warn,
    ) -> None:
        self._kv = kv
        self._items = kv.items
        self._vectors = vectors
        self._partition = partition
        self._settings = settings
        self._baseline = cosine_baseline
        self._warn = warn

    def search(self, op: SearchOp, prefix: str, qvec: list[float] | None, now: float) -> Ranked:
        """The page of hits of ``op`` with their scores.

        Args:
            op: The search.
            prefix: The namespace key of ``op.namespace_prefix``.
            qvec: The query's vector (``None``: not embedded; keyword ranking only).
            now: The time that decides expiry.
        """
        offset, limit = max(op.offset, 0), max(op.limit, 0)
        if not op.query:
            return [(r, None) for r in self._items.page(prefix, op.filter, now, limit, offset)]
        k = offset + limit
        if k == 0:
            return []
        rs = self._settings
        pool = max(k * rs.candidate_multiplier, _MIN_POOL)
        texts: dict[int, list[TextMatch]] = {}
        cosine = None if qvec is None else self._nearest(op, prefix, qvec, pool, now, texts)
        keyword = self._keyword(op, prefix, pool, now, texts)
        vector = None if cosine is None else self._vector_candidates(cosine, texts)
        ranked = rank(
            vector,
            keyword,
            k=k,
            settings=rs if rs.max_k >= k else rs.model_copy(update={"max_k": k}),
            now=now,
            options=STORE_STAGES,
            full_match_cosine=rs.vector_full_match,
            cosine_baseline=self._baseline,
            copy_inputs=False,
            query=op.query,
        )
        order = [int(c.id) for c in ranked]
        rows = self._items.by_ids(order[offset:])
        if len(order) < k:  # the rest, newest first
            seen = set(order)
            for r in self._items.page(prefix, op.filter, now, k - len(order) + len(seen)):
                if r.id not in seen and len(order) < k:
                    order.append(r.id)
                    rows[r.id] = r
        window = [rows[i] for i in order[offset:k] if i in rows]
        if cosine is None or qvec is None:
            return [(r, None) for r in window]
        self._fill_cosines([r.id for r in window], texts, qvec, cosine)
        return [(r, cosine.get(r.id)) for r in window]

    # -- engines ---------------------------------------------------------------------

    def _nearest(
        self,
        op: SearchOp,
        prefix: str,
        qvec: list[float],
        pool: int,
        now: float,
        texts: dict[int, list[TextMatch]],
    ) -> dict[int, float] | None:
        """Item id -> its best text's cosine, for the vector hits passing the filter.

        Adds the hit texts to ``texts``. ``None`` when the embedder or the vector
        index failed (logged once): the search ranks by keywords only.
        """
        try:
            namespaces = self._items.indexed_namespaces(prefix)
            self._vectors.sync(namespaces)
            sims: dict[str, float] = {}
            for ns in namespaces:
                for hit in self._hits(ns, qvec, pool, op, now):
                    sims[hit.id] = hit.similarity
            cosine: dict[int, float] = {}
            for t in self._items.texts_by_vector(list(sims), op.filter, now):
                texts.setdefault(t.item_id, []).append(t)
                cosine[t.item_id] = max(sims[t.vec_id], cosine.get(t.item_id, -1.0))
            return cosine
        except Exception as e:  # embedder / vector index down: keyword ranking only
            self._warn(
                f"vector:{type(e).__name__}",
                "store vector search unavailable (%s); ranking by keywords only",
                e,
            )
            return None

    def _hits(
        self, ns: str, qvec: list[float], pool: int, op: SearchOp, now: float
    ) -> list[VectorHit]:
        """The nearest vectors of one namespace (see the module docstring)."""
        part = self._partition(ns)
        count = self._kv.count(part)
        if count <= _EXACT_VECTOR_LIMIT:
            return self._kv.query(part, qvec, count) if count else []
        if not op.filter:
            return self._kv.query(part, qvec, min(count, pool))
        ids = self._items.vector_ids(ns, op.filter, now, _EXACT_VECTOR_LIMIT + 1)
        if len(ids) <= _EXACT_VECTOR_LIMIT:
            try:  # the filter goes into the vector index as the ids it passes
                return self._kv.query(part, qvec, len(ids), ids=ids)
            except Exception as e:  # an id not held (a write in between): search it all
                logger.debug("store vector search by ids failed (%s); searching widely", e)
        return self._kv.query(part, qvec, min(count, pool * _FILTERED_POOL))

    def _vector_candidates(
        self, cosine: dict[int, float], texts: dict[int, list[TextMatch]]
    ) -> list[Candidate]:
        ranked = sorted(cosine.items(), key=lambda p: -p[1])
        out = []
        for i, (item_id, cos) in enumerate(ranked):
            c = _candidate(item_id, texts[item_id])
            c.vector_score = rescale_cosine(cos, self._baseline)
            c.vector_rank = i
            out.append(c)
        return out

    def _keyword(
        self,
        op: SearchOp,
        prefix: str,
        pool: int,
        now: float,
        texts: dict[int, list[TextMatch]],
    ) -> list[Candidate] | None:
        """The keyword engine's candidates, best first (``None``: it failed, logged once)."""
        query = op.query or ""
        try:
            hits = self._items.keyword_search(prefix, query, op.filter, now, pool)
            full = (self._items.full_match_score(query) or None) if hits else None
        except Exception as e:
            self._warn(
                f"keyword:{type(e).__name__}", "store keyword search failed (%s); skipped", e
            )
            return None
        for t in self._items.texts_of([h.item_id for h in hits if h.item_id not in texts]):
            texts.setdefault(t.item_id, []).append(t)
        out = []
        for i, h in enumerate(hits):
            c = _candidate(h.item_id, texts.get(h.item_id, []))
            c.bm25_score, c.bm25_rank, c.bm25_full = h.score, i, full
            out.append(c)
        return out

    # -- scores ----------------------------------------------------------------------

    def _fill_cosines(
        self,
        window: Sequence[int],
        texts: dict[int, list[TextMatch]],
        qvec: list[float],
        cosine: dict[int, float],
    ) -> None:
        """Add the cosine of returned items the vector engine did not return.

        Only a keyword hit or a later item of a namespace above the exhaustive limit
        can lack one; its vectors are read from the vector index, so that every
        returned indexed item carries its cosine.
        """
        want = [i for i in window if i not in cosine]
        if not want:
            return
        for t in self._items.texts_of([i for i in want if i not in texts]):
            texts.setdefault(t.item_id, []).append(t)
        missing: dict[str, dict[str, int]] = {}
        for i in want:
            for t in texts.get(i, []):
                missing.setdefault(t.ns, {})[t.vec_id] = i
        q = np.asarray(qvec, dtype=np.float32)
        qn = float(np.linalg.norm(q)) or 1.0
        try:
            for ns, item_of in missing.items():
                for vec_id, v in self._kv.vectors(self._partition(ns), list(item_of)).items():
                    sim = float(np.dot(q, v)) / (qn * (float(np.linalg.norm(v)) or 1.0))
                    item_id = item_of[vec_id]
                    cosine[item_id] = max(sim, cosine.get(item_id, -1.0))
        except Exception as e:  # vector index down: those items keep score None
            self._warn(
                f"cosine:{type(e).__name__}", "store vectors unreadable (%s); scores omitted", e
            )


def _candidate(item_id: int, texts: Sequence[TextMatch]) -> Candidate:
    return Candidate(
        id=str(item_id),
        text="\n".join(t.text for t in texts),
        category="fact",
        created_at=texts[0].created_at if texts else 0.0,
        importance=1.0,
    )


__all__ = ["STORE_STAGES", "StoreSearch"]

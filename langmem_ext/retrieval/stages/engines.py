"""The engine stages: the keyword and vector candidates of each query text.

Modes fall back when an engine fails (logged once, never raised): ``hybrid`` →
keyword search with BM25 when the embedder or the vector index is down; the keyword
engine itself falls back to substring search when BM25 fails. In ``hybrid`` mode the
keyword queries run on worker threads while the vector stage embeds the query.
"""

from __future__ import annotations

from dataclasses import dataclass

from langmem_ext.retrieval.stages.base import Pool, QueryContext


def _keywords(pool: Pool, ctx: QueryContext, *, fts: bool, ahead: bool) -> None:
    """Fetch each text's keyword candidates: on worker threads (``ahead``, read when
    needed) or now."""
    index = ctx.io.keyword
    if index is None:
        return
    if ahead:
        pool.keyword_futures = [index.submit(t, ctx.pool_size, fts=fts) for t in ctx.texts]
    else:
        pool.keywords = [index.search(t, ctx.pool_size, fts=fts) for t in ctx.texts]


@dataclass(frozen=True)
class Keyword:
    """Run the keyword engine on each text (``hybrid``, ``fts``: BM25; ``keyword``:
    substring search). In ``hybrid`` mode the queries run on worker threads while
    the vector stage embeds the query; a later stage reads them when it needs them
    (:meth:`~langmem_ext.retrieval.stages.base.Pool.keyword_lists`)."""

    name: str = "keyword"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Submit the keyword queries."""
        if ctx.mode in ("hybrid", "fts", "keyword"):
            _keywords(pool, ctx, fts=ctx.mode != "keyword", ahead=ctx.mode == "hybrid")
        return pool


@dataclass(frozen=True)
class Vector:
    """Embed each text and fetch its vector candidates (``hybrid``, ``vector``).

    When the embedder or the index fails, the search goes on with BM25 (logged once).
    """

    name: str = "vector"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Set ``pool.vectors`` and ``pool.query_vectors``."""
        index = ctx.io.vector
        if ctx.mode not in ("vector", "hybrid") or index is None:
            return pool
        try:
            pool.vectors = index.search(ctx.texts, ctx.pool_size, pool.query_vectors)
        except Exception as e:  # embedder or vector index down: degrade to keyword search
            ctx.warn(
                f"vector:{type(e).__name__}",
                f"vector search unavailable ({e}); falling back to keyword search",
            )
            pool.vectors = None
            pool.vector_failed = True
            if not pool.keyword_futures:
                _keywords(pool, ctx, fts=True, ahead=False)
        return pool


__all__ = ["Keyword", "Vector"]

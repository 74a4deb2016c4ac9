"""A reranker stage: any LangChain ``BaseDocumentCompressor`` reorders (or drops)
the results.

Off by default: give a compressor (``Memory(reranker=compressor)``) and the search
pipeline ends with it. The compressor sees each result as a ``Document`` (its text,
with ``metadata["id"]`` and ``metadata["score"]``); the results come back in the
order of the documents it returns, those it leaves out dropped. A
``metadata["relevance_score"]`` it sets (as cross-encoder rerankers do) is kept in
``debug["reranker"]``; otherwise that is the result's new place, 1 first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from langmem_ext.retrieval.stages.base import Pool, QueryContext

if TYPE_CHECKING:
    from langchain_core.documents import BaseDocumentCompressor


@dataclass(frozen=True)
class Reranker:
    """Reorder ``pool.ranked`` with a LangChain document compressor.

    Attributes:
        compressor: The compressor (a cross-encoder, an LLM reranker, ...).
        name: The stage name.
    """

    compressor: BaseDocumentCompressor
    name: str = "reranker"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Reorder ``pool.ranked`` as the compressor orders its documents.

        Raises:
            Exception: Whatever the compressor raises (a reranker the caller gave
                fails loudly rather than silently returning the unranked order).
        """
        from langchain_core.documents import Document

        if not pool.ranked:
            return pool
        docs = [
            Document(page_content=c.text, metadata={"id": c.id, "score": c.score})
            for c in pool.ranked
        ]
        by_id = {c.id: c for c in pool.ranked}
        out = []
        for place, doc in enumerate(self.compressor.compress_documents(docs, ctx.query), 1):
            c = by_id.pop(str(doc.metadata.get("id")), None)
            if c is None:  # unknown, or returned twice
                continue
            rel = doc.metadata.get("relevance_score")
            c.debug["reranker"] = float(rel) if isinstance(rel, (int, float)) else float(place)
            out.append(c)
        pool.ranked = out
        return pool


__all__ = ["Reranker"]

"""A LangChain ``BaseRetriever`` over :class:`~langmem_ext.Memory` search."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, ensure_config, run_in_executor
from pydantic import Field, field_validator

from langmem_ext.memory.scoping import check_scope, scope_from_config
from langmem_ext.memory.service import Memory
from langmem_ext.memory.types import SearchHit


def hit_to_document(hit: SearchHit) -> Document:
    """A search hit as a LangChain ``Document`` (text as content, the rest as metadata)."""
    return Document(
        id=hit.id,
        page_content=hit.text,
        metadata={
            "id": hit.id,
            "path": hit.path,
            "line": hit.line,
            "citation": hit.citation,
            "anchor": hit.anchor,
            "category": hit.category,
            "scope": hit.scope,
            "score": hit.score,
            "importance": hit.importance,
            "created_at": hit.created_at.isoformat(),
            "updated_at": hit.updated_at.isoformat(),
            "source": hit.source,
            **({"heading": hit.heading} if hit.heading else {}),  # a note's headings
        },
    )


class MemoryRetriever(BaseRetriever):
    """Retrieve memories of one scope as ``Document`` objects, best first.

    The scope of a call is, in order: a ``scope=`` keyword of the call, the run's
    ``config["configurable"]`` (``scope``, else ``user_id`` mapped by
    :func:`~langmem_ext.memory.scoping.scope_for_user`), this retriever's ``scope``
    field, then ``settings.default_scope``. Hits below the search thresholds are
    dropped, so a call may return fewer than ``k`` documents.

    Each document's ``id`` is the memory id; ``metadata`` holds ``id``, ``path``,
    ``line``, ``citation`` (``path:line``), ``anchor`` (``path#^id``, stays valid
    when lines move; ``Memory.get`` takes it), ``category``, ``scope``, ``score``,
    ``importance``, ``created_at`` / ``updated_at`` (ISO 8601) and ``source``.

    Setup:
        .. code-block:: bash

            pip install langmem-ext   # offline: embedded Chroma and a bundled embedder

    Instantiate:
        .. code-block:: python

            from langmem_ext import Memory
            from langmem_ext.retrievers import MemoryRetriever

            memory = Memory("./memory-ws")
            memory.add_many(["User likes ramen", "User's ramen shop is Ichiran"], scope="main")
            retriever = MemoryRetriever(memory=memory, k=4)

    Invoke:
        .. code-block:: python

            docs = retriever.invoke("ramen")
            docs[0].metadata["citation"]      # 'MEMORY.md:4'
            docs[0].metadata["anchor"]        # 'MEMORY.md#^m-…'
            retriever.invoke("ramen", k=1)    # at most one document

    Async:
        .. code-block:: python

            docs = await retriever.ainvoke("ramen", k=2)

    Use in a graph:
        .. code-block:: python

            from langgraph.graph import END, START, MessagesState, StateGraph

            def recall(state: MessagesState) -> dict:
                docs = retriever.invoke(state["messages"][-1].content)
                return {"messages": [("system", "\\n".join(d.page_content for d in docs))]}

            graph = StateGraph(MessagesState).add_node(recall)
            graph = graph.add_edge(START, "recall").add_edge("recall", END).compile()
            graph.invoke({"messages": [("user", "ramen?")]}, {"configurable": {"scope": "main"}})
    """

    memory: Memory
    """The memory service to search."""
    k: int = Field(default=4, ge=1)
    """Documents returned at most (override per call with ``invoke(query, k=...)``)."""
    scope: str | None = None
    """Scope searched when neither the call nor the run's config names one."""
    mode: str | None = None
    """Search mode (``hybrid``, ``vector``, ``fts``, ``keyword``); default from settings."""
    category: str | None = None
    """Only memories of this category (``system``, ``core``, ``fact``, ``episode``)."""

    @field_validator("scope")
    @classmethod
    def _valid_scope(cls, value: str | None) -> str | None:
        return None if value is None else check_scope(value)

    def _scope_of(self, config: RunnableConfig | None) -> str:
        return scope_from_config(config, self.scope or self.memory.settings.default_scope)

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Search memory; ``k`` and ``scope`` keywords override the fields for one call."""
        config = ensure_config(config)
        kwargs.setdefault("scope", self._scope_of(config))
        return super().invoke(input, config, **kwargs)

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Async version of :meth:`invoke`."""
        config = ensure_config(config)
        kwargs.setdefault("scope", self._scope_of(config))
        return await super().ainvoke(input, config, **kwargs)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        scope: str | None = None,
    ) -> list[Document]:
        hits = self.memory.search(
            query,
            scope=scope or self._scope_of(None),
            k=k or self.k,
            mode=self.mode,
            category=self.category,
        )
        return [hit_to_document(h) for h in hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        # The same search in a worker thread, as Memory.asearch runs it; BaseRetriever's
        # default would drop ``k`` and ``scope``.
        sync_manager = run_manager.get_sync()
        return await run_in_executor(
            None, self._get_relevant_documents, query, run_manager=sync_manager, **kwargs
        )


__all__ = ["MemoryRetriever", "hit_to_document"]

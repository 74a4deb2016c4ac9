"""ChromaMemoryStore search: the retrieval pipeline ranks it, filters run in the engines."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import PutOp

import langmem_ext.store.search as store_search
from langmem_ext import Memory
from langmem_ext.store.chroma import ChromaMemoryStore


@pytest.fixture
def store(fake_memory: Memory) -> ChromaMemoryStore:
    return ChromaMemoryStore(fake_memory, index={"fields": ["text"]})


def test_a_query_is_ranked_by_the_retrieval_pipeline(
    store: ChromaMemoryStore, fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put(("r",), "tea", {"text": "green tea every morning"})
    store.put(("r",), "bike", {"text": "a red bicycle"})
    calls: list[dict[str, Any]] = []
    real = store_search.rank

    def spy(vector: Any, keyword: Any, **kwargs: Any) -> Any:
        calls.append({"vector": vector, "keyword": keyword, **kwargs})
        return real(vector, keyword, **kwargs)

    monkeypatch.setattr(store_search, "rank", spy)
    hits = store.search(("r",), query="green tea")
    assert [h.key for h in hits] == ["tea", "bike"]
    [call] = calls
    assert call["options"] is store_search.STORE_STAGES and call["query"] == "green tea"
    assert len(call["vector"]) == 2 and len(call["keyword"]) == 1  # both engines ran
    assert call["keyword"][0].bm25_full is not None
    fake_memory.settings.retrieval.fusion = "rrf"  # the settings' fusion applies
    assert store.search(("r",), query="green tea")[0].key == "tea"
    assert calls[-1]["settings"].fusion == "rrf"


def test_a_filtered_search_of_a_large_namespace_searches_only_what_passes(
    store: ChromaMemoryStore, fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_search, "_EXACT_VECTOR_LIMIT", 3)
    texts = ["apple pie", "apple tart", "apple juice", "pear pie", "plum pie", "fig pie"]
    store.batch(
        [
            PutOp(("big",), f"k{i}", {"text": t, "lang": "fr" if i >= 3 else "en"})
            for i, t in enumerate(texts)
        ]
    )
    asked: list[Any] = []
    query = fake_memory.workspace.vectors.query

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get("ids"))
        return query(*args, **kwargs)

    monkeypatch.setattr(fake_memory.workspace.vectors, "query", spy)
    hits = store.search(("big",), query="apple pie", filter={"lang": "fr"}, limit=3)
    assert {h.key for h in hits} == {"k3", "k4", "k5"}
    assert all(h.score is not None for h in hits)
    # The filter went to the vector index as the ids of the three items it passes.
    assert asked and asked[-1] is not None and len(asked[-1]) == 3


def test_a_query_reads_only_the_items_it_returns(
    store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langmem_ext.workspace.sql.store_items as repo

    store.batch([PutOp(("n",), f"k{i}", {"text": f"note {i} about tea"}) for i in range(60)])
    read: list[int] = []
    item = repo.item

    def counting(r: Any) -> Any:
        read.append(1)
        return item(r)

    monkeypatch.setattr(repo, "item", counting)
    hits = store.search(("n",), query="tea", limit=3, offset=2)
    assert len(hits) == 3 and len(read) == 3

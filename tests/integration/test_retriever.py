"""MemoryRetriever: the langchain-tests standard suite, metadata, scope, async."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import create_retriever_tool
from langchain_tests.integration_tests import RetrieversIntegrationTests
from langgraph.graph import END, START, MessagesState, StateGraph

from langmem_ext import Memory
from langmem_ext.retrievers import MemoryRetriever

_SHARED: dict[str, Memory] = {}

RAMEN = [
    "User likes ramen",
    "User's favourite ramen shop is Ichiran",
    "User cooks ramen at home on Sundays",
    "User prefers tonkotsu ramen over shoyu ramen",
    "User had ramen in Tokyo last spring",
]


@pytest.fixture(scope="module", autouse=True)
def shared_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    mem = Memory(tmp_path_factory.mktemp("retriever") / "ws")
    mem.add_many(RAMEN, scope="main")
    mem.add_many(["User's dog is called Biscuit"], scope="main", category="core")
    mem.add("Alice eats ramen every Friday", scope="user_alice")
    _SHARED["memory"] = mem
    yield mem
    mem.close()
    _SHARED.clear()


def _mem() -> Memory:
    return _SHARED["memory"]


class TestMemoryRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return MemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": _mem(), "scope": "main"}

    @property
    def retriever_query_example(self) -> str:
        return "ramen"


def test_documents_carry_id_citation_and_metadata() -> None:
    docs = MemoryRetriever(memory=_mem(), k=3).invoke("tonkotsu ramen")
    assert docs and isinstance(docs[0], Document)
    top = docs[0]
    assert top.page_content == "User prefers tonkotsu ramen over shoyu ramen"
    md = top.metadata
    assert top.id == md["id"] and md["id"].startswith("m-")
    assert md["path"] == "MEMORY.md" and md["citation"] == f"MEMORY.md:{md['line']}"
    assert md["anchor"] == f"MEMORY.md#^{md['id']}"
    assert _mem().get(md["anchor"], scope="main").lines[0].endswith(f"^{md['id']}")
    assert md["category"] == "fact" and md["scope"] == "main" and md["source"] == "memory"
    assert isinstance(md["score"], float) and md["score"] > 0
    datetime.fromisoformat(md["created_at"])
    datetime.fromisoformat(md["updated_at"])
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)


def test_k_per_call_overrides_the_field() -> None:
    r = MemoryRetriever(memory=_mem(), k=5)
    assert len(r.invoke("ramen")) == 5
    assert len(r.invoke("ramen", k=2)) == 2


def test_scope_from_config_field_and_call() -> None:
    r = MemoryRetriever(memory=_mem(), k=5)
    alice = {"configurable": {"user_id": "alice"}}
    assert [d.page_content for d in r.invoke("ramen", alice)] == ["Alice eats ramen every Friday"]
    assert all(d.metadata["scope"] == "main" for d in r.invoke("ramen"))
    scoped = MemoryRetriever(memory=_mem(), scope="user_alice")
    assert [d.metadata["scope"] for d in scoped.invoke("ramen")] == ["user_alice"]
    # The run's config wins over the field; an explicit call keyword wins over both.
    assert all(
        d.metadata["scope"] == "main"
        for d in scoped.invoke("ramen", {"configurable": {"scope": "main"}})
    )
    assert [d.metadata["scope"] for d in r.invoke("ramen", scope="user_alice")] == ["user_alice"]


def test_category_filter_and_invalid_scope() -> None:
    docs = MemoryRetriever(memory=_mem(), category="core").invoke("what is my dog called?")
    assert [d.page_content for d in docs] == ["User's dog is called Biscuit"]
    with pytest.raises(ValueError, match="Invalid scope"):
        MemoryRetriever(memory=_mem(), scope="a/b")


async def test_async_uses_scope_and_k() -> None:
    r = MemoryRetriever(memory=_mem(), k=4)
    docs = await r.ainvoke("ramen", {"configurable": {"user_id": "alice"}})
    assert [d.page_content for d in docs] == ["Alice eats ramen every Friday"]
    assert len(await r.ainvoke("ramen", k=3)) == 3
    batch = await r.abatch(["ramen", "dog"], {"configurable": {"scope": "main"}})
    assert len(batch) == 2 and batch[1][0].page_content == "User's dog is called Biscuit"


def test_retriever_tool_in_a_graph_gets_the_users_scope() -> None:
    tool = create_retriever_tool(
        MemoryRetriever(memory=_mem(), k=3), "recall", "Search the user's memory."
    )

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [("ai", tool.invoke({"query": "ramen"}))]}

    graph = StateGraph(MessagesState).add_node("node", node)
    graph = graph.add_edge(START, "node").add_edge("node", END).compile()
    out = graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"user_id": "alice"}})
    assert out["messages"][-1].content == "Alice eats ramen every Friday"

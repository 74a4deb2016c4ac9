"""langmem's memory tools, ``create_agent(store=...)`` and ``get_store()`` on ChromaMemoryStore."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _agent_helpers import ScriptedChatModel, call, last_tool
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.config import get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langmem import create_manage_memory_tool, create_search_memory_tool

from langmem_ext import Memory
from langmem_ext.store.chroma import ChromaMemoryStore

NS = ("memories", "{langgraph_user_id}")


@pytest.fixture
def store(memory: Memory) -> ChromaMemoryStore:
    return ChromaMemoryStore(memory)


def _cfg(user: str) -> dict[str, Any]:
    return {"configurable": {"langgraph_user_id": user, "thread_id": f"t-{user}"}}


def test_langmem_tools_with_an_explicit_store(store: ChromaMemoryStore) -> None:
    manage = create_manage_memory_tool(namespace=NS, store=store)
    search = create_search_memory_tool(namespace=NS, store=store)
    out = manage.invoke({"content": "Alice prefers window seats on trains"}, _cfg("alice"))
    assert out.startswith("created memory ")
    memory_id = out.split()[-1]
    manage.invoke({"content": "Alice is vegetarian"}, _cfg("alice"))
    manage.invoke({"content": "Bob prefers aisle seats"}, _cfg("bob"))

    found = json.loads(search.invoke({"query": "seat preference on trains"}, _cfg("alice")))
    assert found[0]["key"] == memory_id
    assert found[0]["value"] == {"content": "Alice prefers window seats on trains"}
    assert found[0]["score"] is not None
    assert all("Bob" not in f["value"]["content"] for f in found)

    manage.invoke(
        {"action": "update", "id": memory_id, "content": "Alice prefers aisle seats now"},
        _cfg("alice"),
    )
    item = store.get(("memories", "alice"), memory_id)
    assert item is not None and item.value["content"] == "Alice prefers aisle seats now"
    assert item.created_at < item.updated_at
    manage.invoke({"action": "delete", "id": memory_id}, _cfg("alice"))
    assert store.get(("memories", "alice"), memory_id) is None
    assert sorted(store.list_namespaces(prefix=("memories",))) == [
        ("memories", "alice"),
        ("memories", "bob"),
    ]


async def test_langmem_tools_async(store: ChromaMemoryStore) -> None:
    manage = create_manage_memory_tool(namespace=NS, store=store)
    search = create_search_memory_tool(namespace=NS, store=store)
    await manage.ainvoke({"content": "Carol plays the cello"}, _cfg("carol"))
    found = json.loads(await search.ainvoke({"query": "musical instrument"}, _cfg("carol")))
    assert [f["value"]["content"] for f in found] == ["Carol plays the cello"]
    assert json.loads(await search.ainvoke({"query": "cello"}, _cfg("dave"))) == []


def test_create_agent_with_store_runs_langmem_tools_via_get_store(store: ChromaMemoryStore) -> None:
    tools = [create_manage_memory_tool(namespace=NS), create_search_memory_tool(namespace=NS)]
    model = ScriptedChatModel.of(
        [
            call("manage_memory", {"content": "Erin's favourite colour is teal"}),
            call("search_memory", {"query": "favourite colour"}, "c2"),
            lambda msgs: f"Found: {last_tool(msgs).content}",
        ]
    )
    agent = create_agent(model, tools=tools, store=store)
    out = agent.invoke(
        {"messages": [HumanMessage("Remember my favourite colour: teal")]}, _cfg("erin")
    )
    tool_msgs = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in tool_msgs] == ["manage_memory", "search_memory"]
    assert all(m.status == "success" for m in tool_msgs)
    assert "teal" in out["messages"][-1].content
    items = store.search(("memories", "erin"))
    assert [i.value["content"] for i in items] == ["Erin's favourite colour is teal"]


def test_get_store_in_a_graph_node(store: ChromaMemoryStore) -> None:
    store.put(("notes", "frank"), "n1", {"text": "Frank's meeting is on Tuesday"})

    def recall(state: MessagesState) -> dict[str, Any]:
        hits = get_store().search(("notes", "frank"), query=state["messages"][-1].content)
        get_store().put(("notes", "frank"), "n2", {"text": "Frank asked about his meeting"})
        return {"messages": [("ai", hits[0].value["text"])]}

    graph = StateGraph(MessagesState).add_node("recall", recall)
    graph = graph.add_edge(START, "recall").add_edge("recall", END).compile(store=store)
    out = graph.invoke({"messages": [("user", "when is my meeting?")]})
    assert out["messages"][-1].content == "Frank's meeting is on Tuesday"
    assert store.get(("notes", "frank"), "n2") is not None

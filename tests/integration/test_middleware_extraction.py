"""MemoryMiddleware extracts after the run's final answer, on the background writer."""

from __future__ import annotations

import asyncio
from typing import Any

from _agent_helpers import ScriptedChatModel, call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import tool_call
from langmem_ext.middleware import MemoryMiddleware

CONFIG: dict[str, Any] = {"configurable": {"user_id": "alice"}}


def _agent(memory: Memory, steps: list[Any], **kwargs: Any) -> Any:
    model = ScriptedChatModel.of(steps)
    return create_agent(model, middleware=[MemoryMiddleware(memory, **kwargs)])


def _notes(memory: Memory) -> list[str]:
    return [e.text for e in memory.list(scope="user_alice") if e.unconfirmed]


def test_a_stated_fact_is_noted_and_its_promotion_waits(fake_memory: Memory) -> None:
    agent = _agent(fake_memory, ["好的，记住了。"])
    agent.invoke({"messages": [("user", "我搬到广州了")]}, CONFIG)
    assert fake_memory.background.wait("user_alice", timeout=10)
    assert _notes(fake_memory) == ["[unconfirmed] 我搬到广州了"]
    [item] = fake_memory.list_pending(scope="user_alice")
    assert item.text == "我搬到广州了" and item.target == "long_term"


def test_the_async_agent_extracts_too(fake_memory: Memory) -> None:
    agent = _agent(fake_memory, ["Noted."])
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("I live in Oslo")]}, CONFIG))
    assert fake_memory.background.wait("user_alice", timeout=10)
    assert _notes(fake_memory) == ["[unconfirmed] I live in Oslo"]


def test_extract_false_turns_it_off(fake_memory: Memory) -> None:
    agent = _agent(fake_memory, ["Noted."], extract=False)
    agent.invoke({"messages": [HumanMessage("I live in Oslo")]}, CONFIG)
    assert fake_memory.background.wait(timeout=10)
    assert fake_memory.list(scope="user_alice") == []
    assert fake_memory.list_pending(scope="user_alice") == []


def test_only_the_final_answer_of_a_run_is_extracted_with_the_given_model(
    fake_memory: Memory,
) -> None:
    seen: list[str] = []

    def plan(messages: list[BaseMessage]) -> AIMessage:
        seen.append(str(messages[-1].content))
        actions = [{"op": "ADD", "text": "Alice has a cat named Mochi"}]
        return AIMessage("", tool_calls=[tool_call("ExtractionPlan", actions=actions)])

    extractor = ScriptedChatModel.of([plan])
    agent = _agent(
        fake_memory,
        [call("memory_search", {"query": "cat"}), "Your cat is Mochi, noted."],
        with_tools=True,
        extract_model=extractor,
    )
    agent.invoke({"messages": [HumanMessage("My cat is called Mochi")]}, CONFIG)
    assert fake_memory.background.wait("user_alice", timeout=10)
    assert len(seen) == 1  # one extraction per run, after the final answer
    assert "My cat is called Mochi" in seen[0] and "Your cat is Mochi, noted." in seen[0]
    assert _notes(fake_memory) == ["[unconfirmed] Alice has a cat named Mochi"]
    assert [p.text for p in fake_memory.list_pending(scope="user_alice")] == [
        "Alice has a cat named Mochi"
    ]

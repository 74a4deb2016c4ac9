"""Tool results carried to the next turn only (item 6; the ContextManager)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, build_memory_graph
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.graph import flush_turn_writes
from langmem_ext.short_term.tool_context import condense_tool_results, first_lines

REPORT = "Berlin weather: 21°C, sunny\nWind 5 km/h from the west\nUV index 6\n" + "x " * 400


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return REPORT


def _blocks(seen: list[list[BaseMessage]]) -> list[str]:
    return [
        "\n".join(str(m.content) for m in msgs if isinstance(m, SystemMessage)) for msgs in seen
    ]


def _answer_model(seen: list[list[BaseMessage]]) -> ScriptedChatModel:
    def policy(messages: list[BaseMessage]) -> AIMessage:
        seen.append(list(messages))
        last = messages[-1]
        if isinstance(last, HumanMessage) and "weather" in str(last.content):
            return AIMessage("", tool_calls=[tool_call("web_search", query="Berlin weather")])
        if isinstance(last, ToolMessage):
            return AIMessage("It is sunny in Berlin.")
        return AIMessage("OK.")

    return ScriptedChatModel(policy=policy)


def _run(memory: Memory, extractor: Any) -> list[str]:
    seen: list[list[BaseMessage]] = []
    graph = build_memory_graph(
        _answer_model(seen), memory, checkpointer=InMemorySaver(), tools=[web_search],
        extractor=extractor,
    )  # fmt: skip
    cfg = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    for text in ("What's the weather in Berlin?", "Should I take a jacket?", "Thanks, bye now"):
        graph.invoke({"messages": [HumanMessage(text)]}, cfg)
        flush_turn_writes(memory)
    return _blocks(seen)


def test_first_lines_reach_the_next_turn_only(fake_memory: Memory) -> None:
    blocks = _run(fake_memory, None)
    label = "context from the last turn's tool results"
    assert all(label not in b for b in blocks[:2])  # turn 1: its call and the answer after the tool
    assert label in blocks[2] and "21°C, sunny" in blocks[2] and "Wind 5 km/h" in blocks[2]
    assert "x x x x x x x x x x x x x x x x x x x x x x x x x" not in blocks[2]  # within budget
    assert label not in blocks[3]  # turn 3: gone
    assert all("21°C" not in e.text for e in fake_memory.list(scope="user_u1"))  # never memory


def test_a_model_condenses_them_in_the_background(fake_memory: Memory) -> None:
    condenser = ScriptedChatModel(policy=lambda _m: AIMessage("Berlin: 21°C and sunny today."))
    blocks = _run(fake_memory, condenser)
    assert "Berlin: 21°C and sunny today." in blocks[2]
    assert "Wind 5 km/h" not in blocks[2]


def test_condense_falls_back_to_first_lines_when_the_model_fails() -> None:
    class Broken(ScriptedChatModel):
        def invoke(self, *a: Any, **k: Any) -> Any:  # type: ignore[override]
            raise RuntimeError("down")

    results = [ToolMessage(REPORT, tool_call_id="c1", name="web_search")]
    text = condense_tool_results(results, Broken(policy=lambda _m: AIMessage("")))
    assert text == first_lines(results) and text.startswith("web_search: Berlin weather")

"""One recall and one window fitter for every surface: ``create_agent`` with
``MemoryMiddleware`` and ``build_memory_graph`` send the model the same memory block,
turn by turn, and fit their calls with the same fitter."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _agent_helpers import ScriptedChatModel, call
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings, build_memory_graph
from langmem_ext.memory.recall.block import BLOCK_CLOSE, BLOCK_OPEN
from langmem_ext.middleware import MemoryMiddleware

BLOCK = re.compile(re.escape(BLOCK_OPEN) + r".*?" + re.escape(BLOCK_CLOSE), re.S)
SAFETY = re.compile(r"<user_safety_profile>.*?</user_safety_profile>", re.S)

TURNS = [
    "Hi! Do you remember what my dog is called?",
    "What's the weather in Berlin today?",
    "上次我说过我喜欢吃什么？",
    "ok thanks",
    "Which city do I work in? remember?",
]


@tool
def weather(city: str) -> str:
    """The weather of a city."""
    return f"Sunny in {city}, 21°C, light wind from the west."


def _script() -> list[Any]:
    """The model's replies: turn 2 calls the user's own tool; nothing else is used."""
    return ["OK.", call("weather", {"city": "Berlin"}, "w1"), "Noted.", "OK.", "OK.", "OK."]


def _memory(root: Path) -> Memory:
    settings = Settings(workspace=root)
    memory = Memory(settings=settings)
    memory.add("My dog is called Biscuit", scope="user_alice")
    memory.add("I work as a nurse in Osaka", scope="user_alice")
    memory.add("我喜欢吃豚骨拉面", scope="user_alice")
    memory.add("I always keep an EpiPen in my bag", scope="user_alice", category="core")
    memory.add("Booked the dentist for Friday", scope="user_alice", target="daily")
    memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
    return memory


def _parts(seen: list[BaseMessage]) -> tuple[str, str]:
    """``(safety block, memory block)`` of one model call ("" when absent)."""
    system = "\n".join(m.text for m in seen if isinstance(m, SystemMessage))
    block = BLOCK.search(system)
    safety = SAFETY.search(system)
    return (safety.group(0) if safety else "", block.group(0) if block else "")


def _turn_blocks(model: ScriptedChatModel) -> list[tuple[str, str]]:
    return [_parts(seen) for seen in model.seen]


def test_middleware_and_graph_send_the_same_memory_block_turn_by_turn(tmp_path: Path) -> None:
    config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}

    graph_memory = _memory(tmp_path / "graph")
    graph_model = ScriptedChatModel.of(_script())
    graph = build_memory_graph(
        graph_model, graph_memory, tools=[weather], session_log=False, checkpointer=InMemorySaver()
    )
    for text in TURNS:
        graph.invoke({"messages": [HumanMessage(text)]}, config)

    agent_memory = _memory(tmp_path / "agent")
    agent_model = ScriptedChatModel.of(_script())
    agent = create_agent(
        agent_model,
        tools=[weather],
        middleware=[MemoryMiddleware(agent_memory, with_tools=True)],
        checkpointer=InMemorySaver(),
    )
    for text in TURNS:
        agent.invoke({"messages": [HumanMessage(text)]}, config)

    graph_blocks, agent_blocks = _turn_blocks(graph_model), _turn_blocks(agent_model)
    assert len(graph_blocks) == len(agent_blocks) == len(TURNS) + 1  # turn 2 calls twice
    for i, (g, a) in enumerate(zip(graph_blocks, agent_blocks, strict=True)):
        assert _without_scores(g) == _without_scores(a), f"model call {i}"
    safety, first = graph_blocks[0]
    assert "peanuts" in safety
    assert "Biscuit" in first and "EpiPen" in first  # the hit and the core memory
    assert "daily notes of" in first and "dentist" in first  # first turn: today's notes
    assert "daily notes of" not in graph_blocks[2][1]
    assert "Sunny in Berlin" in graph_blocks[3][1]  # turn 3: the last turn's tool result
    assert "豚骨拉面" in graph_blocks[3][1]
    assert "recalled" not in graph_blocks[4][1] and "EpiPen" in graph_blocks[4][1]  # chatter
    assert "Osaka" in graph_blocks[5][1]
    graph_memory.close()
    agent_memory.close()


def _without_scores(parts: tuple[str, str]) -> tuple[str, str]:
    """The blocks with the hits' scores and dates left out (the two workspaces were
    written a few milliseconds apart)."""
    safety, block = parts
    block = re.sub(r"recalled, score [0-9.]+, [0-9-]+ ", "recalled ", block)
    block = re.sub(r"\^m-[0-9a-f]+", "^m-…", block)
    return safety, block


@pytest.mark.usefixtures("fixed_clock")  # 24 h before 00:30 after a DST change is two days back
def test_the_first_turn_notes_follow_the_turns_date(tmp_path: Path) -> None:
    """Yesterday's notes join the first turn, the day before's do not."""
    memory = _memory(tmp_path / "ws")
    now = datetime.now().astimezone()
    memory.add(
        "Called the vet about Biscuit",
        scope="user_alice",
        target="daily",
        created_at=now - timedelta(days=1),
    )
    memory.add(
        "Paid the electricity bill",
        scope="user_alice",
        target="daily",
        created_at=now - timedelta(days=2),
    )
    model = ScriptedChatModel.of(["OK."])
    agent = create_agent(model, middleware=[MemoryMiddleware(memory)])
    agent.invoke({"messages": [HumanMessage("Morning!")]}, {"configurable": {"user_id": "alice"}})
    _, block = _parts(model.seen[0])
    assert "vet" in block and "dentist" in block and "electricity" not in block
    memory.close()

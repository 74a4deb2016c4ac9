"""The recall fallbacks in the graph: follow-ups searched with recent history,
and the static long-term file when search is unavailable."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import IndexUnavailableError, Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import build_memory_graph, create_preflight_recall_node
from langmem_ext.retrieval.followup import contextual_query, is_followup

MOMO = "Momo, my cat, was adopted from the Lisbon shelter"
MIMI = "咪咪是我的猫，今年三岁"
OTHERS = [
    "Rex, my dog, came from a breeder in Porto",
    "My sister Mei is vegetarian",
    "我的狗旺财七岁了",
    "I work as a nurse in Osaka",
]


@pytest.fixture
def pets(fake_memory: Memory) -> Memory:
    for text in [MOMO, MIMI, *OTHERS]:
        fake_memory.add(text, scope="alice")
    return fake_memory


def cfg(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread, "scope": "alice"}}


def ask(graph: Any, text: str, thread: str = "t") -> None:
    graph.invoke({"messages": [HumanMessage(text)]}, cfg(thread))


def block_of(model: ScriptedChatModel) -> str:
    return "\n".join(str(m.content) for m in model.calls[-1] if isinstance(m, SystemMessage))


def reply(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage("noted")


def test_followup_rule() -> None:
    for text in (
        "那它呢？",
        "那他的生日呢",
        "and what about him?",
        "where did it come from?",
        "why?",
    ):
        assert is_followup(text), text
    for text in ("好的", "thanks", "hi", "/help", "Where did my cat Momo come from, and when?"):
        assert not is_followup(text), text
    assert contextual_query("ok", ["earlier"], max_tokens=1000) == "ok"
    assert contextual_query("why?", ["a", "b", "c"], max_tokens=1000) == "why?\nb\nc"
    assert contextual_query("why?", ["a", "b"], max_tokens=0) == "why?"
    long = "word " * 500
    cut = contextual_query("why?", [long], max_tokens=50)
    assert cut.startswith("why?\nword") and len(cut) < len(long) / 4


@pytest.mark.parametrize(
    ("first", "followup", "wanted"),
    [
        ("Tell me about my cat Momo.", "and where did it come from?", MOMO),
        ("咪咪是谁？", "那它呢？", MIMI),
    ],
)
def test_a_followup_finds_its_memory_only_with_the_previous_turn(
    pets: Memory, first: str, followup: str, wanted: str
) -> None:
    model = ScriptedChatModel(policy=reply)
    graph = build_memory_graph(model, pets, checkpointer=InMemorySaver())
    ask(graph, first)
    ask(graph, followup)
    assert wanted in block_of(model)

    ask(graph, followup, thread="fresh")  # the same words without the turn before
    assert wanted not in block_of(model)


def test_recent_history_budget_zero_switches_context_off(pets: Memory) -> None:
    settings = pets.settings.model_copy(deep=True)
    settings.injection.recent_history_tokens = 0
    node = create_preflight_recall_node(pets, settings=settings)
    messages = [HumanMessage("Tell me about my cat Momo."), AIMessage("ok")]
    state: Any = {"messages": [*messages, HumanMessage("and where did it come from?")]}
    assert all(h["text"] != MOMO for h in node(state, cfg())["recalled"])
    on = create_preflight_recall_node(pets)
    assert any(h["text"] == MOMO for h in on(state, cfg())["recalled"])


@pytest.mark.parametrize(
    "error",
    [IndexUnavailableError("chroma and FTS down"), sqlite3.OperationalError("disk I/O error")],
)
def test_search_unavailable_injects_the_long_term_file_and_warns_once(
    pets: Memory,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(pets, "search", broken)
    model = ScriptedChatModel(policy=reply)
    graph = build_memory_graph(model, pets, checkpointer=InMemorySaver())
    with caplog.at_level(logging.WARNING, logger="langmem_ext.graph.nodes"):
        ask(graph, "Where did my cat Momo come from?")
    block = block_of(model)
    assert "long-term memory file (search unavailable" in block
    assert "Lisbon shelter" in block and "# Long-term memory" in block
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "search unavailable" in warnings[0].getMessage()


def test_the_static_fallback_is_capped(pets: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise IndexUnavailableError("down")

    monkeypatch.setattr(pets, "search", broken)
    settings = pets.settings.model_copy(deep=True)
    settings.injection.static_memory_chars = 40
    node = create_preflight_recall_node(pets, settings=settings)
    state: Any = {"messages": [HumanMessage("Where did my cat Momo come from?")]}
    block = node(state, cfg())["memory_context"]
    text = pets.long_term_text(scope="alice")
    assert text[:40].strip() in block.replace("\\n", "\n") and text[:80] not in block
    assert (
        "search unavailable"
        not in create_preflight_recall_node(pets)({"messages": [HumanMessage("hi")]}, cfg())[
            "memory_context"
        ]
    )  # small talk is not searched: nothing to fall back from


# --- the same fallbacks in the middleware -------------------------------------------


def _middleware_call(memory: Memory, messages: list[BaseMessage]) -> str:
    """The system text the middleware sends with ``messages`` (scope ``alice``)."""
    from langchain.agents import create_agent

    from langmem_ext import MemoryMiddleware

    model = ScriptedChatModel(policy=reply)
    agent = create_agent(model, middleware=[MemoryMiddleware(memory, scope="alice")])
    agent.invoke({"messages": messages})
    return block_of(model)


def test_the_middleware_searches_a_followup_with_the_previous_turn(pets: Memory) -> None:
    turn = [HumanMessage("Tell me about my cat Momo."), AIMessage("ok")]
    assert MOMO in _middleware_call(pets, [*turn, HumanMessage("and where did it come from?")])
    assert MOMO not in _middleware_call(pets, [HumanMessage("and where did it come from?")])


def test_the_middleware_injects_the_static_file_when_search_is_down(
    pets: Memory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(pets, "search", broken)
    with caplog.at_level(logging.WARNING):
        block = _middleware_call(pets, [HumanMessage("Where did my cat come from?")])
    assert "search unavailable" in block and "Lisbon shelter" in block
    assert sum("memory search unavailable" in r.getMessage() for r in caplog.records) == 1

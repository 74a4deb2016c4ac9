"""The hybrid window as ``short_term.mode``: graph and middleware, scripted models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, MemoryMiddleware, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import build_memory_graph, flush_turn_writes
from langmem_ext.short_term.checkpoint import SUMMARY_HEADER
from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY
from langmem_ext.short_term.validity import validate_messages
from langmem_ext.short_term.window import OLD_MARK, SUMMARY_MARK, WINDOW_HEADER

DECISION = (
    "我们决定采用 PostgreSQL 16 作为主库，Redis 只做缓存。下一步：周五前迁移订单表。"
    "TODO：给 DBA 发迁移计划。优先处理支付相关的表。"
)
CONFIG = {"configurable": {"thread_id": "t1", "user_id": "alice"}}


def _policy(messages: list[BaseMessage]) -> AIMessage:
    last = str(messages[-1].content)
    if last == FLUSH_PROMPT:
        return AIMessage(NO_REPLY)
    if "<new_messages>" in last or "<message>" in last:
        raise ValueError("no summaries from this model")  # the extractive summary writes them
    return AIMessage("好的。")


@pytest.fixture
def window_memory(tmp_path: Path) -> Iterator[Memory]:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.mode = "hybrid_window"
    mem = Memory(settings=s)
    yield mem
    mem.close()


def _say(graph: Any, text: str) -> dict[str, Any]:
    return dict(graph.invoke({"messages": [HumanMessage(text)]}, CONFIG))


def _answer_calls(model: ScriptedChatModel) -> list[list[BaseMessage]]:
    return [c for c in model.calls if "<new_messages>" not in str(c[-1].content)]


def _block(call: list[BaseMessage]) -> str:
    blocks = [str(m.content) for m in call if isinstance(m, SystemMessage)]
    return next(b for b in blocks if b.startswith(WINDOW_HEADER))


def test_default_mode_is_summary_n() -> None:
    assert Settings().short_term.mode == "summary_n"


def test_answer_call_holds_the_newest_5_verbatim_and_older_as_summaries(
    window_memory: Memory,
) -> None:
    model = ScriptedChatModel(policy=_policy)
    graph = build_memory_graph(model, window_memory, checkpointer=InMemorySaver())
    _say(graph, DECISION)
    for i in range(8):
        _say(graph, f"第 {i} 个普通问题")
    state = graph.get_state(CONFIG).values
    trigger = next(m for m in state["messages"] if m.content == DECISION)
    # made in the background, moved into the state (and the thread's checkpoint)
    stored = state["message_summaries"][trigger.id]
    assert "Decision:" in stored and "PostgreSQL 16" in stored and len(stored) <= 280
    plain = [m for m in state["messages"] if str(m.content).startswith("第 0 个")]
    assert plain and plain[0].id not in state["message_summaries"]  # no trigger: no summary

    out = _say(graph, "最后一个问题")
    call = _answer_calls(model)[-1]
    validate_messages(call)
    history = [m for m in out["messages"] if not isinstance(m, SystemMessage)]
    sent = [m for m in call if not isinstance(m, SystemMessage)]
    assert [m.content for m in sent] == [m.content for m in history[-6:-1]]  # newest 5
    block = _block(call)
    lines = [ln for ln in block.splitlines() if ln.startswith((SUMMARY_MARK, OLD_MARK))]
    assert len(lines) == len(history) - 1 - 5  # every older message has its line
    assert f"{SUMMARY_MARK} User: " in block and "PostgreSQL 16" in block
    assert any(ln.startswith(OLD_MARK) and "第 0 个" in ln for ln in lines)


def test_nothing_is_dropped_over_many_turns(window_memory: Memory) -> None:
    model = ScriptedChatModel(policy=_policy)
    graph = build_memory_graph(model, window_memory, checkpointer=InMemorySaver())
    facts = [f"记住：我的第 {i} 号储物柜密码是 {4100 + i}" for i in range(30)]
    for fact in facts:
        out = _say(graph, fact)
    assert out.get("checkpoints", 0) >= 1 and out["summary"]  # the window's length triggers
    assert len([m for m in out["messages"] if not isinstance(m, SystemMessage)]) <= 25
    _say(graph, "好")
    call = _answer_calls(model)[-1]
    validate_messages(call)
    seen = "\n".join(str(m.content) for m in call)
    assert SUMMARY_HEADER in seen and WINDOW_HEADER in seen
    missing = [i for i in range(30) if str(4100 + i) not in seen]
    assert not missing  # in a [Summary] / [Old] line, a verbatim message or the summary
    assert len(call) <= 10  # system prompt, summary, memory, window block, 5 verbatim


def test_without_background_writes_the_summary_is_made_in_the_answer_step(
    window_memory: Memory,
) -> None:
    model = ScriptedChatModel(policy=_policy)
    graph = build_memory_graph(
        model, window_memory, checkpointer=InMemorySaver(), background_writes=False
    )
    _say(graph, DECISION)
    state = graph.get_state(CONFIG).values
    assert any("PostgreSQL 16" in s for s in state["message_summaries"].values())


def test_summary_model_writes_the_summary_when_given(window_memory: Memory) -> None:
    def summarizing(messages: list[BaseMessage]) -> AIMessage:
        if "<message>" in str(messages[-1].content):
            return AIMessage("Decision: PostgreSQL 16 (model)")
        return AIMessage("[]")

    graph = build_memory_graph(
        ScriptedChatModel(policy=_policy),
        window_memory,
        checkpointer=InMemorySaver(),
        extractor=ScriptedChatModel(policy=summarizing),
    )
    _say(graph, DECISION)
    flush_turn_writes(window_memory)
    _say(graph, "下一个问题")
    summaries = graph.get_state(CONFIG).values["message_summaries"]
    assert "Decision: PostgreSQL 16 (model)" in summaries.values()


def test_middleware_sends_the_window_and_stores_the_summaries(window_memory: Memory) -> None:
    model = ScriptedChatModel(policy=_policy)
    agent = create_agent(
        model, middleware=[MemoryMiddleware(window_memory)], checkpointer=InMemorySaver()
    )
    agent.invoke({"messages": [HumanMessage(DECISION)]}, CONFIG)
    for i in range(4):
        agent.invoke({"messages": [HumanMessage(f"第 {i} 个普通问题")]}, CONFIG)
    call = model.calls[-1]
    text = "\n".join(str(m.content) for m in call)
    assert WINDOW_HEADER in text and SUMMARY_MARK in text and "PostgreSQL 16" in text
    assert str(call[-1].content) == "第 3 个普通问题"
    state = agent.get_state(CONFIG).values
    trigger = next(m for m in state["messages"] if m.content == DECISION)
    assert "PostgreSQL 16" in state["memory_message_summaries"][trigger.id]


def test_full_history_mode_does_not_checkpoint_between_turns(tmp_path: Path) -> None:
    def run(mode: str, turns: int) -> tuple[int, dict[str, Any]]:
        s = Settings(workspace=tmp_path / mode)
        s.embeddings.provider = "fake"
        s.short_term.mode = mode  # type: ignore[assignment]
        s.short_term.context_window = 8000
        mem = Memory(settings=s)
        try:
            graph = build_memory_graph(
                ScriptedChatModel(policy=_policy), mem, checkpointer=InMemorySaver()
            )
            for t in range(turns):
                out = _say(
                    graph, f"第 {t} 段：" + "这是一段比较长的普通聊天内容，没有什么要记的。" * 8
                )
                if out.get("checkpoints"):
                    return t, out
            return turns, out
        finally:
            mem.close()

    first, summary_n = run("summary_n", 80)
    assert summary_n.get("checkpoints") == 1
    _, full = run("full_history", first + 1)
    assert not full.get("checkpoints") and not full.get("summary")
    assert any(str(m.content).startswith("第 0 段") for m in full["messages"])

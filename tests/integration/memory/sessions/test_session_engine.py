"""One session engine: the Session API and the memory graph share each thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_ext import Memory, Settings, build_memory_graph
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.memory.lifecycle.jobs import summarize_threads
from langmem_ext.memory.sessions.manager import SessionManager, _encode
from langmem_ext.short_term.checkpoint import MemoryMode
from langmem_ext.short_term.content import message_text
from langmem_ext.workspace.records import CheckpointRow

FILLER = "今天继续聊聊阳台上的花草和绿植怎么照顾，顺便讲讲浇水的方法。"
ANSWER = "Sure. Water in the morning, keep the soil loose, and give the plants some light. " * 2


def _echo(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage(f"听到了：{message_text(messages[-1])}")


def _cfg(thread: str = "t1", scope: str = "main") -> Any:
    return {"configurable": {"thread_id": thread, "scope": scope}}


def _small(tmp_path: Path) -> Memory:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.context_window = 2000
    s.short_term.keep_last_turns = 3
    return Memory(settings=s)


def test_a_session_api_turn_is_in_the_graph_thread(fake_memory: Memory) -> None:
    sm = SessionManager(fake_memory)
    sm.write_turn("main", "t1", "我叫李雷，住在杭州。", "你好，李雷！")
    model = ScriptedChatModel(policy=_echo)
    graph = build_memory_graph(model, fake_memory, background_writes=False)
    before = graph.get_state(_cfg()).values["messages"]
    assert [message_text(m) for m in before] == ["我叫李雷，住在杭州。", "你好，李雷！"]
    graph.invoke({"messages": [HumanMessage("我住在哪里？")]}, _cfg())
    sent = "\n".join(message_text(m) for m in model.calls[-1])
    assert "我叫李雷，住在杭州。" in sent  # the model saw the API's turn
    after = graph.get_state(_cfg()).values["messages"]
    assert [message_text(m) for m in after][:3] == [*map(message_text, before), "我住在哪里？"]


def test_a_graph_turn_is_seen_by_the_session_api(fake_memory: Memory) -> None:
    graph = build_memory_graph(ScriptedChatModel(policy=_echo), fake_memory)
    graph.invoke({"messages": [HumanMessage("我对花生过敏。")]}, _cfg())
    sm = SessionManager(fake_memory)
    ctx = sm.query_context("main", "t1")
    assert [message_text(m) for m in ctx.history] == ["我对花生过敏。", "听到了：我对花生过敏。"]
    info = sm.session_info("main", "t1")
    assert info is not None and info.message_count == 2
    assert not sm.tracks("main", "t1")  # the hot-log job summarises graph-only threads
    r = sm.write_turn("main", "t1", "还有别的吗？", "没有了。")
    assert (r.first_seq, r.last_seq) == (3, 4)
    assert len(graph.get_state(_cfg()).values["messages"]) == 4
    assert sm.tracks("main", "t1")
    # another scope's conversation of the same id is its own thread
    assert sm.query_context("bob", "t1").full_history == []


def test_a_session_checkpoint_compacts_the_graph_thread(tmp_path: Path) -> None:
    memory = _small(tmp_path)
    sm = SessionManager(memory)
    for i in range(20):
        sm.write_turn("main", "t1", f"第{i}轮：{FILLER}", f"{i}: {ANSWER}")
    result = sm.checkpoint("main", "t1")
    assert result.made and result.compacted > 0
    graph = build_memory_graph(ScriptedChatModel(policy=_echo), memory)
    values = graph.get_state(_cfg()).values
    assert values["summary"] == result.summary and values["mode"] == "SUMMARY_N"
    assert len(values["messages"]) == 40 - result.compacted
    ctx = sm.query_context("main", "t1")
    assert ctx.mode is MemoryMode.SUMMARY_N and len(ctx.full_history) == 40  # archived
    graph.invoke({"messages": [HumanMessage("继续")]}, _cfg())
    ctx = sm.query_context("main", "t1")
    # the graph compacted again (this window is small): its removed messages are
    # archived too, and its rolled summary is the conversation's
    assert len(ctx.full_history) == 42
    assert ctx.summary == graph.get_state(_cfg()).values["summary"]
    memory.close()


def test_an_older_workspace_conversation_moves_into_the_thread_once(fake_memory: Memory) -> None:
    """Before the one engine, the Session API kept its messages in ``session_messages``."""
    ledger = fake_memory.workspace.ledger
    old = [
        HumanMessage("旧问题一", id="m1"),
        AIMessage("旧回答一", id="m2"),
        HumanMessage("旧问题二", id="m3"),
        AIMessage("旧回答二", id="m4"),
    ]
    with ledger.transaction():
        ledger.conversations.append("main", "t1", [(str(m.id), _encode(m)) for m in old], 1.0)
        ledger.conversations.mark_compacted("main", "t1", [1, 2])
        ledger.conversations.add_checkpoint(
            CheckpointRow(
                scope="main",
                thread_id="t1",
                kind="checkpoint",
                summary="Goal:\n- 旧的摘要",
                cut_seq=2,
                compacted=2,
                used_fallback=True,
                flushed=0,
                created_at=2.0,
                conversation_at=1.0,
            )
        )
        ledger.sessions.record_turn("main", "t1", 1.0, 4)
    sm = SessionManager(fake_memory)
    ctx = sm.query_context("main", "t1")
    assert ctx.summary == "Goal:\n- 旧的摘要" and ctx.mode is MemoryMode.SUMMARY_N
    assert [message_text(m) for m in ctx.history[1:]] == ["旧问题二", "旧回答二"]
    assert [m.id for m in ctx.full_history] == ["m1", "m2", "m3", "m4"]
    again = sm.query_context("main", "t1")  # read again: nothing moved twice
    assert [m.id for m in again.full_history] == ["m1", "m2", "m3", "m4"]
    graph = build_memory_graph(ScriptedChatModel(policy=_echo), fake_memory)
    values = graph.get_state(_cfg()).values
    assert [m.id for m in values["messages"]] == ["m3", "m4"]
    assert values["summary"] == "Goal:\n- 旧的摘要"
    assert sm.write_turn("main", "t1", "新问题", "新回答").first_seq == 5


def test_idle_jobs_leave_session_threads_to_summarize_idle(fake_memory: Memory) -> None:
    sm = SessionManager(fake_memory)
    sm.write_turn("main", "api", "My sister Priya lives in Toronto.", "Nice!", at=1_000.0)
    graph = build_memory_graph(
        ScriptedChatModel(policy=_echo), fake_memory, background_writes=False
    )
    graph.invoke({"messages": [HumanMessage("I work at Contoso Robotics.")]}, _cfg("g1"))
    threads = {e.thread_id for e in summarize_threads(fake_memory, idle_hours=0.0)}
    assert "g1" in threads and "api" not in threads
    assert [e.thread_id for e in sm.summarize_idle()] == ["api"]


def test_a_graph_turn_keeps_a_session_conversation_active(fake_memory: Memory) -> None:
    sm = SessionManager(fake_memory)
    sm.write_turn("main", "t1", "My sister Priya lives in Toronto.", "Nice!", at=1_000.0)
    assert [i.thread_id for i in sm.idle_sessions()] == ["t1"]
    graph = build_memory_graph(
        ScriptedChatModel(policy=_echo), fake_memory, background_writes=False
    )
    graph.invoke({"messages": [HumanMessage("She has a cat.")]}, _cfg())
    assert sm.idle_sessions() == []  # active again
    episode = sm.finalize_session("main", "t1")
    assert episode is not None and "cat" in episode.summary  # the graph's turn included

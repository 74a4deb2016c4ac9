"""End to end through the compiled memory graph, scripted model, real store."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _agent_helpers import cfg, memory_block, policy
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.graph import (
    ANSWER,
    PENDING_CONFIRM,
    PREFLIGHT_RECALL,
    PROPOSE_SAVES,
    RECORD_TURN,
    TurnWriter,
    build_memory_graph,
    create_pending_router,
    flush_turn_writes,
)
from langmem_ext.short_term.checkpoint import SUMMARY_HEADER
from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY
from langmem_ext.short_term.validity import validate_messages


@pytest.fixture
def graph_parts(memory: Memory) -> tuple[Any, ScriptedChatModel, Memory]:
    model = ScriptedChatModel(policy=policy)
    graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
    return graph, model, memory


def say(graph: Any, text: str, config: dict[str, Any]) -> dict[str, Any]:
    return dict(graph.invoke({"messages": [HumanMessage(text)]}, config))


def test_save_confirm_then_recall_in_a_new_thread(
    graph_parts: tuple[Any, ScriptedChatModel, Memory],
) -> None:
    graph, model, memory = graph_parts
    out = say(graph, "我喜欢吃拉面，请记住", cfg("t1"))
    assert len(out["pending_ids"]) == 1
    assert memory.search("拉面", scope="user_alice") == []  # not stored before confirmation
    out = say(graph, "确认", cfg("t1"))
    assert out["pending_ids"] == []
    [entry] = memory.list(scope="user_alice")
    assert entry.text == "主人喜欢吃拉面"
    # Days later, a new thread: the recall question forces a search.
    out = say(graph, "上次我说我喜欢吃什么？", cfg("t2"))
    assert out["messages"][-1].content == "你上次说你喜欢吃拉面。"
    # Recalled: the confirmed memory, and (from the session hot log) what was said.
    assert "主人喜欢吃拉面" in [h["text"] for h in out["recalled"]]
    assert "<memory_context>" in memory_block(model.calls[-1])
    # The answer used the memory: it is boosted, in the background, once the reply is out.
    assert flush_turn_writes(memory, timeout=10)
    boosted = memory.get_entry(entry.id, scope="user_alice").importance
    assert boosted > 1.0
    # Cooldown: using it again at once adds nothing.
    say(graph, "上次我说我喜欢吃什么？", cfg("t3"))
    assert flush_turn_writes(memory, timeout=10)
    assert memory.get_entry(entry.id, scope="user_alice").importance == boosted


def test_memory_block_and_notes_cite_the_anchor_with_the_line(
    graph_parts: tuple[Any, ScriptedChatModel, Memory],
) -> None:
    graph, model, memory = graph_parts
    say(graph, "我喜欢吃拉面，请记住", cfg("t1"))
    say(graph, "确认", cfg("t1"))
    [entry] = memory.list(scope="user_alice")
    shown = f"{entry.anchor} (line {entry.line})"
    assert f"confirmed and stored ({shown})" in memory_block(model.calls[-1])
    core_id = memory.add("主人的猫叫小白", scope="user_alice", category="core")
    core = memory.get_entry(core_id, scope="user_alice")
    out = say(graph, "上次我说我喜欢吃什么？", cfg("t2"))
    [recalled] = [h for h in out["recalled"] if h["id"] == entry.id]
    assert recalled["anchor"] == entry.anchor and recalled["citation"] == shown
    block = memory_block(model.calls[-1])
    assert f"({shown})" in block
    assert f"- core ({core.anchor} (line {core.line}))" in block


def test_rejection_stores_nothing(graph_parts: tuple[Any, ScriptedChatModel, Memory]) -> None:
    graph, _, memory = graph_parts
    say(graph, "记住：我今天心情不好", cfg("t1"))
    out = say(graph, "不用，取消", cfg("t1"))
    assert out["pending_ids"] == []
    assert memory.list(scope="user_alice") == []


def test_pending_save_expires(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.lifecycle.pending_ttl_hours = 0.3 / 3600
    with Memory(settings=s) as memory:
        graph = build_memory_graph(
            ScriptedChatModel(policy=policy), memory, checkpointer=InMemorySaver()
        )
        say(graph, "我喜欢吃拉面，请记住", cfg("t1"))
        time.sleep(0.5)
        out = say(graph, "确认", cfg("t1"))
        assert out["pending_ids"] == []
        # not stored as confirmed; its text stays in the day's notes, marked unconfirmed
        [note] = memory.list(scope="user_alice")
        assert note.text == "[unconfirmed] 主人喜欢吃拉面" and "LONG_TERM" not in note.path


def test_model_supplied_scope_has_no_effect_and_users_are_isolated(
    graph_parts: tuple[Any, ScriptedChatModel, Memory],
) -> None:
    graph, _, memory = graph_parts
    errors: list[BaseException] = []

    def user_session(user: str) -> None:
        try:
            say(graph, "Remember that my sister Mei is vegetarian", cfg(f"{user}-1", user))
            say(graph, "yes", cfg(f"{user}-1", user))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=user_session, args=("bob",))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    out = say(graph, "Is my sister vegetarian?", cfg("carol-1", "carol"))
    assert out["messages"][-1].content == "我搜索过了，但没有找到相关记忆。"
    assert out["recalled"] == []
    assert [e.text for e in memory.list(scope="user_bob")] == ["My sister Mei is vegetarian"]
    assert memory.list(scope="user_carol") == []


def test_checkpoint_runs_after_the_flush_and_leaves_a_valid_list(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.context_window = 4000  # the memory tools' schemas alone are ~1,500 tokens
    s.short_term.keep_last_turns = 2
    order: list[str] = []

    def flushing_policy(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.content == FLUSH_PROMPT:
            order.append("flush")
            return AIMessage(
                "", tool_calls=[tool_call("memory_save", text="User's locker code is 4711")]
            )
        if isinstance(last, ToolMessage) and any(
            isinstance(m, HumanMessage) and m.content == FLUSH_PROMPT for m in messages
        ):
            return AIMessage(NO_REPLY)
        if any(SUMMARY_HEADER in str(m.content) for m in messages if isinstance(m, SystemMessage)):
            order.append("answer-after-checkpoint")
        return AIMessage("Noted. " + "ok " * 40)

    with Memory(settings=s) as memory:
        graph = build_memory_graph(
            ScriptedChatModel(policy=flushing_policy), memory, checkpointer=InMemorySaver()
        )
        config = cfg("long")
        say(graph, "My locker code is 4711, remember it.", config)
        for i in range(12):
            out = say(graph, f"Turn {i}: let's talk about topic {i} " + "blah " * 60, config)
        assert "flush" in order
        assert out["summary"] and out.get("checkpoints", 0) >= 1
        pending = [p.text for p in memory.list_pending(scope="user_alice")]
        assert "User's locker code is 4711" in pending  # saved before anything was dropped
        state = graph.get_state(config).values
        validate_messages(state["messages"])
        assert isinstance(state["messages"][-1], AIMessage)
        assert "NO_REPLY" not in " ".join(str(m.content) for m in state["messages"])
        assert len(memory.list(scope="user_alice", category="episode")) >= 1
        say(graph, "And one more thing", config)
        # The model saw the summary only after a flush had run.
        assert order.index("flush") < order.index("answer-after-checkpoint")


def test_flush_model_failure_falls_back_and_drops_nothing(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.context_window = 4000
    s.short_term.keep_last_turns = 2

    def failing_flush(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage) and messages[-1].content == FLUSH_PROMPT:
            raise RuntimeError("model overloaded")
        return AIMessage("Noted. " + "ok " * 40)

    with Memory(settings=s) as memory:
        graph = build_memory_graph(
            ScriptedChatModel(policy=failing_flush), memory, checkpointer=InMemorySaver()
        )
        config = cfg("long")
        say(graph, "我叫林伟，我住在柏林。", config)
        for i in range(12):
            out = say(graph, f"Turn {i} about topic {i} " + "blah " * 60, config)
        pending = " ".join(p.text for p in memory.list_pending(scope="user_alice"))
        assert "林伟" in pending  # the extractive fallback saved it
        assert out["summary"]
        validate_messages(graph.get_state(config).values["messages"])


def test_human_in_the_loop_confirmation(memory: Memory) -> None:
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy),
        memory,
        checkpointer=InMemorySaver(),
        confirm_mode="interrupt",
    )
    config = cfg("hitl")
    out = graph.invoke({"messages": [HumanMessage("我喜欢吃拉面，请记住")]}, config)
    [intr] = out["__interrupt__"]
    assert intr.value["pending"][0]["text"] == "主人喜欢吃拉面"
    graph.invoke(Command(resume="yes"), config)
    assert [e.text for e in memory.list(scope="user_alice")] == ["主人喜欢吃拉面"]


def test_turns_go_to_the_session_hot_log(
    graph_parts: tuple[Any, ScriptedChatModel, Memory],
) -> None:
    graph, _, memory = graph_parts
    say(graph, "My favourite tea is oolong from Taiwan, by the way.", cfg("log-1"))
    from langmem_ext import SessionLog

    assert flush_turn_writes(memory, timeout=10)  # written in the background
    events = SessionLog(memory).recent("user_alice", thread_id="log-1")
    assert [e.role for e in events] == ["user", "assistant"]
    hits = memory.search("what did I say about tea earlier?", scope="user_alice")
    assert any(h.source == "session" and "oolong" in h.text for h in hits)


def node_names(graph: Any, text: str, config: dict[str, Any]) -> list[str]:
    """The nodes one turn ran, in order (``stream_mode="updates"``)."""
    chunks = graph.stream({"messages": [HumanMessage(text)]}, config, stream_mode="updates")
    return [name for chunk in chunks for name in chunk]


def test_pending_confirm_runs_only_when_something_is_pending(fake_memory: Memory) -> None:
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy), fake_memory, checkpointer=InMemorySaver()
    )
    assert node_names(graph, "hello there, how are you doing", cfg("r1")) == [
        PREFLIGHT_RECALL, ANSWER, PROPOSE_SAVES, RECORD_TURN,
    ]  # fmt: skip
    # A save proposed outside this thread (another thread, process or tool) is pending:
    # this thread never asked about it, so its "确认" answers nothing.
    outside = fake_memory.save("主人喜欢吃寿司", scope="user_alice")
    assert node_names(graph, "确认", cfg("r1")) == [
        PREFLIGHT_RECALL, ANSWER, PROPOSE_SAVES, RECORD_TURN,
    ]  # fmt: skip
    assert fake_memory.list(scope="user_alice") == []
    say(graph, "我喜欢吃拉面，请记住", cfg("r1"))  # proposed (and asked) in this thread
    assert node_names(graph, "确认", cfg("r1")) == [
        PENDING_CONFIRM, PREFLIGHT_RECALL, ANSWER, PROPOSE_SAVES, RECORD_TURN,
    ]  # fmt: skip
    assert [e.text for e in fake_memory.list(scope="user_alice")] == ["主人喜欢吃拉面"]
    assert [p.id for p in fake_memory.list_pending(scope="user_alice")] == [outside.id]
    state = graph.get_state(cfg("r1")).values
    assert state["proposed"] == [] and state["notes"] == []
    assert node_names(graph, "thanks", cfg("r1"))[0] == PREFLIGHT_RECALL


def test_pending_router_goes_to_pending_confirm_only_for_an_open_proposal(
    fake_memory: Memory,
) -> None:
    route = create_pending_router(fake_memory)
    config: Any = cfg("x")
    mine = fake_memory.save("主人喜欢吃拉面", scope="user_alice", thread_id="x")
    other = fake_memory.save("主人喜欢喝茶", scope="user_alice", thread_id="y")
    assert route({"messages": []}, config) == PREFLIGHT_RECALL
    assert route({"messages": [], "pending_ids": [mine.id]}, config) == PREFLIGHT_RECALL
    assert route({"messages": [], "proposed": [mine.id]}, config) == PENDING_CONFIRM
    assert route({"messages": [], "proposed": [other.id]}, config) == PREFLIGHT_RECALL
    fake_memory.confirm(mine.id, scope="user_alice")  # resolved elsewhere meanwhile
    assert route({"messages": [], "proposed": [mine.id]}, config) == PREFLIGHT_RECALL
    assert route({"messages": [], "notes": ["confirmed and stored"]}, config) == PENDING_CONFIRM


def test_interrupt_mode_pauses_only_when_something_is_pending(fake_memory: Memory) -> None:
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy),
        fake_memory,
        checkpointer=InMemorySaver(),
        confirm_mode="interrupt",
    )
    config = cfg("hitl-2")
    assert node_names(graph, "hello there, how are you doing", config) == [
        PREFLIGHT_RECALL, ANSWER, PROPOSE_SAVES, RECORD_TURN,
    ]  # fmt: skip
    assert graph.get_state(config).next == ()
    names = node_names(graph, "我喜欢吃拉面，请记住", config)
    assert names[-1] == "__interrupt__" and names[-3:-1] == [PROPOSE_SAVES, RECORD_TURN]
    assert graph.get_state(config).next == (PENDING_CONFIRM,)
    graph.invoke(Command(resume="no"), config)
    assert fake_memory.list_pending(scope="user_alice") == []
    assert fake_memory.list(scope="user_alice") == []


def test_turn_writer_runs_in_order_and_waits_per_scope() -> None:
    writer = TurnWriter()
    gate = threading.Event()
    done: list[str] = []
    writer.submit("a", lambda: (gate.wait(5), done.append("a1")))
    writer.submit("b", lambda: done.append("b1"))
    writer.submit("a", lambda: 1 / 0)  # a failing job is logged and skipped
    writer.submit("a", lambda: done.append("a2"))
    assert not writer.wait("b", timeout=0.05)  # behind "a1" in the queue
    assert writer.pending("a") == 3
    gate.set()
    assert writer.wait("a", timeout=5) and writer.wait(timeout=5)
    assert done == ["a1", "b1", "a2"] and writer.pending() == 0
    writer.close()
    writer.submit("a", lambda: done.append("after close"))  # runs at once
    assert done[-1] == "after close"


def test_turn_writes_are_drained_on_close_and_can_be_synchronous(tmp_path: Path) -> None:
    from langmem_ext import SessionLog

    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    with Memory(settings=s) as memory:
        graph = build_memory_graph(
            ScriptedChatModel(policy=policy), memory, checkpointer=InMemorySaver()
        )
        say(graph, "My favourite tea is oolong from Taiwan, by the way.", cfg("c1"))
    with Memory(settings=s) as memory:  # nothing queued was lost by close()
        assert [e.role for e in SessionLog(memory).recent("user_alice")] == ["user", "assistant"]
        [note] = memory.list(scope="user_alice")  # the extraction was drained too
        assert note.text == "[unconfirmed] My favourite tea is oolong from Taiwan"
        graph = build_memory_graph(
            ScriptedChatModel(policy=policy),
            memory,
            checkpointer=InMemorySaver(),
            background_writes=False,
        )
        say(graph, "我喜欢吃拉面，请记住", cfg("c2"))
        say(graph, "确认", cfg("c2"))  # confirms the ramen, and the tea it proposed
        [entry] = [e for e in memory.list(scope="user_alice") if e.text == "主人喜欢吃拉面"]
        say(graph, "上次我说我喜欢吃什么？", cfg("c3"))
        # written in the answer step: visible as soon as invoke returns
        assert memory.get_entry(entry.id, scope="user_alice").importance > 1.0
        assert len(SessionLog(memory).recent("user_alice")) == 8


def test_needs_checkpoint_agrees_with_the_full_plan(fake_memory: Memory) -> None:
    from langmem_ext.core.tokens import count_tokens
    from langmem_ext.graph.nodes import history_tokens, needs_checkpoint
    from langmem_ext.short_term.accounting import count_message_tokens
    from langmem_ext.short_term.checkpoint import plan_context

    settings = fake_memory.settings.model_copy(deep=True)
    settings.short_term.context_window = 600
    messages: list[BaseMessage] = []
    for i in range(30):
        messages.append(HumanMessage(f"turn {i}: " + "blah " * (i * 3), id=f"h{i}"))
        messages.append(AIMessage(f"answer {i} " + "ok " * i, id=f"a{i}"))
        for summary in (None, "Earlier: the user talked about tea. " * 3):
            state: Any = {"messages": messages, "summary": summary, "memory_context": "ctx " * 20}
            plan = plan_context(
                messages,
                running_summary=summary,
                settings=settings.short_term,
                system_tokens=count_tokens("ctx " * 20),
            )
            assert needs_checkpoint(state, settings) == plan.should_checkpoint
        assert history_tokens(messages) == count_message_tokens(messages)
    # an edited message (same id, new content) is counted again
    edited = [*messages[:-1], AIMessage("changed " * 50, id=messages[-1].id)]
    assert history_tokens(edited) == count_message_tokens(edited)


@pytest.mark.parametrize("mode", ["reply", "interrupt"])
def test_a_turn_embeds_its_query_once_and_small_talk_not_at_all(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    from collections import Counter

    fake_memory.add_many(["主人喜欢吃拉面", "Alice works as a nurse in Berlin"], scope="user_alice")
    calls: Counter[str] = Counter()
    lock = threading.Lock()
    emb = fake_memory.engine.embeddings
    inner = emb.embed_query

    def embed_query(text: str) -> list[float]:
        with lock:
            calls[text] += 1
        return inner(text)

    monkeypatch.setattr(emb, "embed_query", embed_query)
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy), fake_memory, checkpointer=InMemorySaver(),
        confirm_mode=mode,  # type: ignore[arg-type]
    )  # fmt: skip
    out = say(graph, "上次我说我喜欢吃什么？", cfg(f"pf-{mode}"))
    assert calls == Counter({"上次我说我喜欢吃什么？": 1})
    assert "拉面" in str(out["memory_context"])
    say(graph, "ok", cfg(f"pf-{mode}"))
    assert sum(calls.values()) == 1  # the gate skips small talk: nothing embedded


def test_a_pending_update_of_the_extractor_is_confirmed_as_a_new_version(
    fake_memory: Memory,
) -> None:
    """``extract_mode="pending"``: the extractor's UPDATE waits for the user, the
    interrupt names the memory it replaces, and "yes" writes it as that memory's new
    version (the old one superseded, not left beside it)."""
    fake_memory.settings.lifecycle.extract_mode = "pending"
    old = fake_memory.add("I live in Berlin", scope="user_alice")
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy),  # no extraction plan: the statement fallback
        fake_memory,
        checkpointer=InMemorySaver(),
        confirm_mode="interrupt",
        extractor=True,
        background_writes=False,
    )
    config = cfg("moved")
    say(graph, "I moved to Munich last month.", config)  # extracted after the answer
    [item] = fake_memory.list_pending(scope="user_alice")
    assert item.supersedes == old
    out = say(graph, "ok", config)  # the next answer's pending step asks
    [intr] = out["__interrupt__"]
    [proposed] = intr.value["pending"]
    assert proposed["supersedes"] == old and "Munich" in proposed["text"]
    long_term = [e for e in fake_memory.list(scope="user_alice") if not e.unconfirmed]
    assert [e.text for e in long_term] == ["I live in Berlin"]  # the move is only noted
    graph.invoke(Command(resume="yes"), config)
    [current] = [e for e in fake_memory.list(scope="user_alice") if e.path.endswith("LONG_TERM.md")]
    assert "Munich" in current.text and current.supersedes == old
    assert fake_memory.get_entry(old, scope="user_alice").valid_to is not None
    [note] = [e for e in fake_memory.list(scope="user_alice") if e.id != current.id]
    assert note.text == current.text and not note.unconfirmed  # the day's log, now confirmed

"""The post-turn nodes: what follows the final answer is in the drawn graph, and the
thread's pending saves are read from the ledger once per turn, kept in the state."""

from __future__ import annotations

from typing import Any

import pytest
from _agent_helpers import cfg, policy, tool_call
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import (
    ANSWER,
    PENDING_CONFIRM,
    PREFLIGHT_RECALL,
    PROPOSE_SAVES,
    RECORD_TURN,
    TOOLS,
    build_memory_graph,
    flush_turn_writes,
)


def updates(graph: Any, text: str, config: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(node, update)`` of one turn, in order (``stream_mode="updates"``)."""
    chunks = graph.stream({"messages": [HumanMessage(text)]}, config, stream_mode="updates")
    return [(name, update or {}) for chunk in chunks for name, update in chunk.items()]


@pytest.mark.parametrize("confirm_mode", ["reply", "interrupt"])
def test_the_drawn_graph_shows_the_post_turn_nodes(fake_memory: Memory, confirm_mode: Any) -> None:
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy),
        fake_memory,
        checkpointer=InMemorySaver(),
        confirm_mode=confirm_mode,
    )
    drawn = graph.get_graph()
    assert {PROPOSE_SAVES, RECORD_TURN} <= set(drawn.nodes)
    edges = {(e.source, e.target) for e in drawn.edges}
    assert {(ANSWER, TOOLS), (ANSWER, PROPOSE_SAVES), (PROPOSE_SAVES, RECORD_TURN)} <= edges
    assert (ANSWER, "__end__") not in edges  # every answered turn goes through them
    assert (RECORD_TURN, "__end__") in edges
    assert "record_turn" in drawn.draw_mermaid()


def test_answer_only_answers_and_the_post_turn_nodes_do_the_rest(fake_memory: Memory) -> None:
    turns: list[tuple[str, str]] = []
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy),
        fake_memory,
        checkpointer=InMemorySaver(),
        on_turn=lambda scope, thread, user, answer: turns.append((user, answer)),
    )
    # A turn with a tool loop: answer -> tools -> answer, then the post-turn nodes once.
    steps = updates(graph, "我喜欢吃拉面，请记住", cfg("p1"))
    assert [n for n, _ in steps] == [
        PREFLIGHT_RECALL, ANSWER, TOOLS, ANSWER, PROPOSE_SAVES, RECORD_TURN,
    ]  # fmt: skip
    for name, update in steps:
        if name == ANSWER:
            assert set(update) == {"messages"}  # the model's reply, nothing else
    propose, record = steps[-2][1], steps[-1][1]
    [pending] = fake_memory.list_pending(scope="user_alice")
    assert propose["proposed"] == [pending.id] == propose["pending_ids"]
    assert "token_count" not in propose and "pending_ids" not in record
    assert record["token_count"] > 0 and record["notes"] == []
    # the turn log is written by record_turn, once per turn, with the reply as asked
    reply = steps[3][1]["messages"][-1]
    assert isinstance(reply, AIMessage) and not reply.tool_calls
    assert turns == [("我喜欢吃拉面，请记住", str(reply.content))]
    assert flush_turn_writes(fake_memory, timeout=10)
    # The reply to it: pending_confirm resolves it and keeps the state's pending ids.
    steps = updates(graph, "确认", cfg("p1"))
    assert [n for n, _ in steps] == [
        PENDING_CONFIRM, PREFLIGHT_RECALL, ANSWER, PROPOSE_SAVES, RECORD_TURN,
    ]  # fmt: skip
    assert steps[0][1]["pending_ids"] == [] and steps[0][1]["notes"]
    assert steps[-1][1]["notes"] == []  # the notes were shown this turn: cleared
    assert len(turns) == 2


def _count_pending_reads(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every listing of a scope's pending saves in the ledger (what settles them and
    may sync files under the workspace lock), recorded by scope."""
    repo = memory.workspace.ledger.pending
    of_scope = repo.of_scope
    reads: list[str] = []

    def counted(scope: str, status: str = "pending") -> Any:
        reads.append(scope)
        return of_scope(scope, status)

    monkeypatch.setattr(repo, "of_scope", counted)
    return reads


def test_pending_saves_are_read_from_the_ledger_once_per_turn(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A common turn, a turn whose reply confirms a save and one whose reply rejects it
    each read the thread's pending saves once, at the turn's end (where the reply's
    question is decided): the saves a reply answers are kept in the state. (The
    background extraction, off the turn, is off here.)"""
    model = ScriptedChatModel(policy=policy)
    graph = build_memory_graph(model, fake_memory, checkpointer=InMemorySaver(), extractor=False)
    reads = _count_pending_reads(fake_memory, monkeypatch)

    def told() -> str:
        return "\n".join(str(m.content) for m in model.calls[-1] if isinstance(m, SystemMessage))

    def turn(text: str) -> tuple[int, dict[str, Any]]:
        assert flush_turn_writes(fake_memory, timeout=10)
        reads.clear()
        out = graph.invoke({"messages": [HumanMessage(text)]}, cfg("r"))
        return len(reads), out

    n, out = turn("hello there, how are you doing")  # a common turn
    assert n <= 1 and out["pending_ids"] == []
    n, out = turn("我喜欢吃拉面，请记住")  # the model's save: proposed and asked
    assert n <= 1 and len(out["pending_ids"]) == 1 == len(out["proposed"])
    n, out = turn("不用，取消")  # rejected
    assert n <= 1 and out["pending_ids"] == [] and out["proposed"] == []
    assert fake_memory.list(scope="user_alice") == []
    assert "rejected, not stored: 主人喜欢吃拉面" in told()
    turn("我喜欢吃拉面，请记住")
    n, out = turn("确认")  # confirmed
    assert n <= 1 and out["pending_ids"] == [] and out["proposed"] == []
    assert [e.text for e in fake_memory.list(scope="user_alice")] == ["主人喜欢吃拉面"]
    assert "confirmed and stored" in told() and "proposed for the profile" not in told()
    assert reads == ["user_alice"]  # of this scope


def test_confirming_a_safety_fact_reads_again_for_the_profile_change_it_proposes(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Confirming a memory that states a safety fact proposes the profile change in
    the thread (the proposal itself reads what waits already): one more read after
    the confirmation finds it, so the answer is told of it, and the turn's end reads
    as every turn does."""

    def allergy(messages: list[Any]) -> AIMessage:
        if messages[-1].content == "我对花生过敏，请记住":
            return AIMessage("", tool_calls=[tool_call("memory_save", text="我对花生过敏")])
        return policy(messages)

    model = ScriptedChatModel(policy=allergy)
    graph = build_memory_graph(model, fake_memory, checkpointer=InMemorySaver(), extractor=False)
    reads = _count_pending_reads(fake_memory, monkeypatch)
    graph.invoke({"messages": [HumanMessage("我对花生过敏，请记住")]}, cfg("s"))
    assert flush_turn_writes(fake_memory, timeout=10)
    reads.clear()
    out = graph.invoke({"messages": [HumanMessage("确认")]}, cfg("s"))
    assert len(reads) == 3
    [proposal] = fake_memory.list_pending(scope="user_alice")
    assert proposal.target == "profile" and out["proposed"] == [proposal.id]
    told = "\n".join(str(m.content) for m in model.calls[-1] if isinstance(m, SystemMessage))
    assert f"proposed for the profile, to be confirmed ({proposal.id})" in told

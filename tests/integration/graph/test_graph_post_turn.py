"""The post-turn nodes: what follows the final answer is in the drawn graph, and the
thread's pending saves are read from the ledger once per turn, kept in the state."""

from __future__ import annotations

from typing import Any

import pytest
from _agent_helpers import cfg, policy
from langchain_core.messages import AIMessage, HumanMessage
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


def test_pending_saves_are_read_once_per_turn(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ledger reads of a thread's pending saves, per turn (the background extraction,
    off the turn, is off here)."""
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy),
        fake_memory,
        checkpointer=InMemorySaver(),
        extractor=False,
    )
    reads: list[dict[str, Any]] = []
    list_pending = fake_memory.list_pending

    def counted(**kwargs: Any) -> Any:
        reads.append(kwargs)
        return list_pending(**kwargs)

    monkeypatch.setattr(fake_memory, "list_pending", counted)

    def turn(text: str) -> tuple[int, dict[str, Any]]:
        assert flush_turn_writes(fake_memory, timeout=10)
        reads.clear()
        out = graph.invoke({"messages": [HumanMessage(text)]}, cfg("r"))
        return len(reads), out

    n, out = turn("hello there, how are you doing")
    assert n == 1 and out["pending_ids"] == []
    n, out = turn("我喜欢吃拉面，请记住")  # the model's save: proposed and asked
    assert n == 1 and len(out["pending_ids"]) == 1 == len(out["proposed"])
    n, out = turn("不用，取消")  # rejected: read before resolving, then at the turn's end
    assert n == 2 and out["pending_ids"] == [] and fake_memory.list(scope="user_alice") == []
    turn("我喜欢吃拉面，请记住")
    n, out = turn("确认")  # a confirmation reads once more (it may propose a profile change)
    assert n == 3 and out["pending_ids"] == []
    assert [e.text for e in fake_memory.list(scope="user_alice")] == ["主人喜欢吃拉面"]
    # every read is of this thread's pending saves
    assert all(r.get("thread_id") == "r" for r in reads)

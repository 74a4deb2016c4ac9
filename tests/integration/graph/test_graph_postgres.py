"""The memory graph on a memory whose engines are PostgreSQL: the conversation is
checkpointed in the database (another replica continues the same thread), the
session log's transcript is a stored document, and nothing is written locally."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from _agent_helpers import cfg, policy
from langchain_core.messages import HumanMessage

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import build_memory_graph, flush_turn_writes


@pytest.fixture
def replicas(pg_replicas: tuple[Memory, Memory]) -> tuple[Memory, Memory]:
    return pg_replicas


def _say(graph: Any, text: str, thread: str) -> dict[str, Any]:
    return dict(graph.invoke({"messages": [HumanMessage(text)]}, cfg(thread)))


def test_a_two_turn_conversation_is_checkpointed_in_postgres(
    tmp_path: Path, pg_vector_url: str, replicas: tuple[Memory, Memory]
) -> None:
    a, b = replicas
    graph_a = build_memory_graph(ScriptedChatModel(policy=policy), a)
    out = _say(graph_a, "我喜欢吃拉面，请记住", "t1")
    assert len(out["pending_ids"]) == 1
    out = _say(graph_a, "确认", "t1")
    assert out["pending_ids"] == []
    assert [e.text for e in a.list(scope="user_alice")] == ["主人喜欢吃拉面"]
    assert flush_turn_writes(a, timeout=10)

    with psycopg.connect(pg_vector_url) as conn:
        stored = conn.execute("SELECT count(*) FROM langgraph.checkpoints").fetchone()
    assert stored is not None and stored[0] >= 2

    # Another replica continues the thread from the database's checkpoints.
    graph_b = build_memory_graph(ScriptedChatModel(policy=policy), b)
    said = [m.content for m in graph_b.get_state(cfg("t1")).values["messages"] if m.type == "human"]
    assert said == ["我喜欢吃拉面，请记住", "确认"]
    assert [e.text for e in b.list(scope="user_alice")] == ["主人喜欢吃拉面"]

    # The session log's transcript is a document of the scope, readable from b at
    # the line its event names.
    events = b.session_log.recent("user_alice", limit=10)
    assert events and events[0].text == "我喜欢吃拉面，请记住"
    line = b.get(events[0].path, scope="user_alice", from_line=events[0].line, lines=1).lines[0]
    assert "我喜欢吃拉面，请记住" in line

    for root in (tmp_path / "a", tmp_path / "b"):
        assert {p for p in root.rglob("*") if p.is_file()} == set()

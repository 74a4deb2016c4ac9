"""A profile that cannot be read safely is a typed error, and the model is told so.

A ``PROFILE.md`` that is not UTF-8, or one reached through a symlink (which could show
another scope's allergies as this scope's), is refused the way memory files are: the
profile calls raise a :class:`~langmem_ext.core.errors.LangmemError`, upserts are refused
without touching the file, and every model call of the memory graph and of the
middleware still runs, carrying the line that says the safety profile could not be
read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.core.errors import InvalidPathError, LangmemError, MemoryFileError
from langmem_ext.graph import build_memory_graph
from langmem_ext.memory.profile import UNREADABLE_SAFETY
from langmem_ext.middleware import MemoryMiddleware

ALICE = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
BOB = {"configurable": {"thread_id": "t2", "user_id": "bob"}}


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    with Memory(settings=s) as mem:
        yield mem


def _break_utf8(memory: Memory, scope: str) -> Path:
    path = memory.profiles.path(scope)
    path.write_bytes(path.read_bytes() + b"- note: caf\xe9 au lait\n")
    return path


def _system_texts(model: ScriptedChatModel) -> list[str]:
    return [str(c[0].content) for c in model.calls if c and isinstance(c[0], SystemMessage)]


def test_a_profile_that_is_not_utf8_is_a_typed_error_and_never_overwritten(
    memory: Memory,
) -> None:
    memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
    path = _break_utf8(memory, "user_alice")
    raw = path.read_bytes()
    history = memory.profile_history(scope="other")  # another scope reads on
    with pytest.raises(MemoryFileError, match=r"PROFILE\.md is not valid UTF-8.*line"):
        memory.profile(scope="user_alice")
    with pytest.raises(MemoryFileError):
        memory.safety_block(scope="user_alice")
    with pytest.raises(MemoryFileError):
        memory.upsert_facts({"allergies": ["shellfish"]}, scope="user_alice")
    with pytest.raises(MemoryFileError):
        memory.upsert_preferences({"tea": "green"}, scope="user_alice")
    with pytest.raises(MemoryFileError):
        memory.upsert_facts({"medications": ["aspirin"]}, scope="user_alice", source="agent")
    assert path.read_bytes() == raw
    assert memory.list_pending(scope="user_alice") == []
    assert history == []
    # fixed by hand: read again, nothing lost
    path.write_bytes(raw.replace(b"caf\xe9", "café".encode()))
    assert memory.profile(scope="user_alice").allergies == ["peanuts"]


def test_a_confirm_on_an_unreadable_profile_is_refused_and_stays_pending(memory: Memory) -> None:
    memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
    [item] = memory.upsert_facts(
        {"allergies": ["shellfish"]}, scope="user_alice", source="agent"
    ).pending
    path = _break_utf8(memory, "user_alice")
    raw = path.read_bytes()
    with pytest.raises(MemoryFileError):
        memory.confirm(item.id, scope="user_alice")
    assert path.read_bytes() == raw
    assert [p.id for p in memory.list_pending(scope="user_alice")] == [item.id]


def test_the_graph_turn_runs_and_the_model_is_told_the_profile_is_unreadable(
    memory: Memory,
) -> None:
    memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
    _break_utf8(memory, "user_alice")
    model = ScriptedChatModel(policy=lambda m: AIMessage("Let me ask first."))
    graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
    out = graph.invoke(
        {"messages": [HumanMessage("What am I allergic to? Can I eat satay?")]}, ALICE
    )
    assert out["messages"][-1].content == "Let me ask first."
    [system] = _system_texts(model)
    assert UNREADABLE_SAFETY in system


def test_the_middleware_runs_and_the_model_is_told_the_profile_is_unreadable(
    memory: Memory,
) -> None:
    memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
    _break_utf8(memory, "user_alice")
    model = ScriptedChatModel(policy=lambda m: AIMessage("Let me ask first."))
    agent = create_agent(
        model,
        system_prompt="You are helpful.",
        middleware=[MemoryMiddleware(memory)],
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke(
        {"messages": [HumanMessage("What am I allergic to? Can I eat satay?")]}, ALICE
    )
    assert out["messages"][-1].content == "Let me ask first."
    [system] = _system_texts(model)
    assert UNREADABLE_SAFETY in system


def test_a_symlinked_profile_of_another_scope_is_refused(memory: Memory) -> None:
    memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
    alice = memory.profiles.path("user_alice")
    bob = memory.profiles.path("user_bob")
    bob.parent.mkdir(parents=True, exist_ok=True)
    bob.symlink_to(alice)
    raw = alice.read_bytes()
    with pytest.raises(InvalidPathError, match="symlink"):
        memory.profile(scope="user_bob")
    with pytest.raises(InvalidPathError):
        memory.upsert_facts({"allergies": ["shellfish"]}, scope="user_bob")
    assert alice.read_bytes() == raw and bob.is_symlink()
    model = ScriptedChatModel(policy=lambda m: AIMessage("ok"))
    graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("What should I cook tonight?")]}, BOB)
    [system] = _system_texts(model)
    assert "peanuts" not in system and UNREADABLE_SAFETY in system
    assert memory.profile(scope="user_alice").allergies == ["peanuts"]  # hers is fine


@pytest.mark.parametrize("scope", ["main", "user_bob"])
def test_a_profile_in_a_symlinked_folder_or_at_the_root_is_refused(
    memory: Memory, scope: str
) -> None:
    memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
    alice = memory.profiles.path("user_alice")
    if scope == "main":  # the root's PROFILE.md, a link into another scope
        memory.profiles.path("main").symlink_to(alice)
    else:  # the whole scope folder is a link to alice's
        memory.workspace.layout.scope_dir(scope).symlink_to(alice.parent)
    with pytest.raises(LangmemError):
        memory.profile(scope=scope)
    assert UNREADABLE_SAFETY in _one_turn(memory, scope)


def _one_turn(memory: Memory, scope: str) -> str:
    model = ScriptedChatModel(policy=lambda m: AIMessage("ok"))
    graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"t-{scope}", "scope": scope}}
    graph.invoke({"messages": [HumanMessage("What should I cook tonight?")]}, config)
    [system] = _system_texts(model)
    return system

"""The profile's safety fields are in every answer call, through compactions."""

from __future__ import annotations

from pathlib import Path

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import build_memory_graph, flush_turn_writes
from langmem_ext.graph.prompts import BLOCK_OPEN, SYSTEM_PROMPT
from langmem_ext.middleware import MemoryMiddleware
from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY

ALLERGY = "花生"
USER = {"configurable": {"thread_id": "long", "user_id": "alice"}}


def _settings(tmp_path: Path, window: int) -> Settings:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.context_window = window
    s.short_term.keep_last_turns = 2
    return s


def _turn(i: int) -> str:
    if i % 10 == 3:
        return "好的"  # the adaptive gate skips recall
    if i % 10 == 7:
        return "你还记得我上次说的拉面吗？"  # recall forced
    return f"Turn {i}: let's plan the trip, topic {i} " + "harbour lantern " * 25


def _answer_calls(model: ScriptedChatModel) -> list[list[BaseMessage]]:
    return [
        c
        for c in model.calls
        if c and isinstance(c[0], SystemMessage) and str(c[0].content).startswith(SYSTEM_PROMPT)
    ]


def test_200_turns_with_compactions_keep_the_allergy_in_every_answer_call(
    tmp_path: Path,
) -> None:
    def reply(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage) and messages[-1].content == FLUSH_PROMPT:
            return AIMessage(NO_REPLY)
        return AIMessage("Noted. " + "ok " * 30)

    with Memory(settings=_settings(tmp_path, 4000)) as memory:
        memory.upsert_facts({"allergies": [ALLERGY], "name": "Alice"}, scope="user_alice")
        memory.add("主人喜欢吃拉面", scope="user_alice")
        model = ScriptedChatModel(policy=reply)
        graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
        for i in range(200):
            out = graph.invoke({"messages": [HumanMessage(_turn(i))]}, USER)
        flush_turn_writes(memory)
        calls = _answer_calls(model)
        assert len(calls) == 200
        for call in calls:  # in the first system message: never compacted, never clipped
            first = str(call[0].content)
            assert ALLERGY in first and "<user_safety_profile>" in first
            assert BLOCK_OPEN not in first  # the memory block comes after it
        assert any(BLOCK_OPEN in str(m.content) for c in calls for m in c)  # recall happened
        assert out.get("checkpoints", 0) > 0 and out["summary"]
        assert "Alice" not in str(calls[0][0].content)  # only the safety fields


def test_the_safety_block_follows_profile_changes_between_turns(tmp_path: Path) -> None:
    with Memory(settings=_settings(tmp_path, 16000)) as memory:
        model = ScriptedChatModel(policy=lambda m: AIMessage("好的。"))
        graph = build_memory_graph(
            model, memory, checkpointer=InMemorySaver(), extractor=True
        )  # the scripted model gives no plan: the extractor's fallback runs
        graph.invoke({"messages": [HumanMessage("你好，今天天气怎么样？")]}, USER)
        assert "<user_safety_profile>" not in str(_answer_calls(model)[-1][0].content)
        # the extractor's fallback proposes it: pending, not yet shown (the memory of it
        # waits too, noted in the day's notes meanwhile)
        graph.invoke({"messages": [HumanMessage("我对青霉素过敏")]}, USER)
        flush_turn_writes(memory)
        pending = memory.list_pending(scope="user_alice")
        assert sorted(p.category for p in pending) == ["fact", "profile"]
        assert memory.profile(scope="user_alice").allergies == []
        out = graph.invoke({"messages": [HumanMessage("谢谢")]}, USER)  # the answer asks
        assert "青霉素" in str(out["messages"][-1].content)
        graph.invoke({"messages": [HumanMessage("确认")]}, USER)  # the user confirms
        assert memory.profile(scope="user_alice").allergies == ["青霉素"]
        assert "青霉素" in str(_answer_calls(model)[-1][0].content)


def _agent_turns(memory: Memory, turns: int) -> ScriptedChatModel:
    model = ScriptedChatModel(policy=lambda m: AIMessage("Noted. " + "lantern harbour " * 40))
    agent = create_agent(
        model,
        system_prompt="You are helpful.",
        middleware=[MemoryMiddleware(memory)],
        checkpointer=InMemorySaver(),
    )
    for i in range(turns):
        agent.invoke({"messages": [HumanMessage(_turn(i))]}, USER)
    return model


def test_middleware_keeps_the_allergy_in_every_call_through_compactions(tmp_path: Path) -> None:
    with Memory(settings=_settings(tmp_path, 2000)) as memory:
        memory.upsert_facts({"allergies": [ALLERGY]}, scope="user_alice")
        memory.add("主人喜欢吃拉面", scope="user_alice")
        model = _agent_turns(memory, 40)
        assert len(model.calls) == 40
        for call in model.calls:
            system = str(call[0].content)
            assert isinstance(call[0], SystemMessage) and ALLERGY in system
            recalled = system.find(BLOCK_OPEN)
            assert recalled == -1 or system.index("<user_safety_profile>") < recalled
        assert any(BLOCK_OPEN in str(c[0].content) for c in model.calls)
        episodes = memory.list(scope="user_alice", category="episode")
        assert episodes  # compactions happened


def test_middleware_without_a_profile_adds_nothing(tmp_path: Path) -> None:
    with Memory(settings=_settings(tmp_path, 16000)) as memory:
        model = _agent_turns(memory, 2)
        assert all("user_safety_profile" not in str(c[0].content) for c in model.calls)

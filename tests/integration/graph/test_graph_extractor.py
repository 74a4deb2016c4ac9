"""The graph's background extractor: after each answered turn."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings, build_memory_graph
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.graph import flush_turn_writes


def _answer(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage("好的，我记下了。")


def _cfg(thread: str = "t1") -> dict[str, object]:
    return {"configurable": {"thread_id": thread, "user_id": "alice"}}


def test_fallback_extractor_supersedes_across_turns(fake_memory: Memory) -> None:
    fake_memory.settings.lifecycle.extract_mode = "direct"  # written at once
    graph = build_memory_graph(
        ScriptedChatModel(policy=_answer), fake_memory, checkpointer=InMemorySaver(),
        extractor=True,  # the scripted answer model gives no plan: the fallback runs
    )  # fmt: skip
    graph.invoke({"messages": [HumanMessage("我住在上海")]}, _cfg())
    graph.invoke({"messages": [HumanMessage("我上个月搬到深圳了")]}, _cfg())
    flush_turn_writes(fake_memory)
    current = [e.text for e in fake_memory.list(scope="user_alice")]
    assert current == ["我上个月搬到深圳了"]
    every = fake_memory.list(scope="user_alice", include_superseded=True)
    assert [(e.text, e.current) for e in every] == [
        ("我住在上海", False),
        ("我上个月搬到深圳了", True),
    ]
    assert all(e.source == "extractor" and not e.verified for e in every)


def test_extractor_model_sees_the_turn_and_the_recalled_ids(fake_memory: Memory) -> None:
    fake_memory.settings.lifecycle.extract_mode = "direct"
    old = fake_memory.add("Alice works at Siemens", scope="user_alice")
    seen: list[str] = []

    def extract_policy(messages: list[BaseMessage]) -> AIMessage:
        assert isinstance(messages[0], SystemMessage)
        seen.append(str(messages[-1].content))
        plan = [{"op": "UPDATE", "id": old, "text": "Alice works at Stripe"}]
        return AIMessage("", tool_calls=[tool_call("ExtractionPlan", actions=plan)])

    graph = build_memory_graph(
        ScriptedChatModel(policy=_answer), fake_memory, checkpointer=InMemorySaver(),
        extractor=ScriptedChatModel(policy=extract_policy),
    )  # fmt: skip
    graph.invoke(
        {"messages": [HumanMessage("Where does Alice work? She moved to Stripe.")]}, _cfg()
    )
    flush_turn_writes(fake_memory)
    assert len(seen) == 1 and old in seen[0] and "She moved to Stripe" in seen[0]
    assert [e.text for e in fake_memory.list(scope="user_alice")] == ["Alice works at Stripe"]


def test_the_deterministic_extractor_is_on_by_default_and_waits_for_the_user(
    fake_memory: Memory,
) -> None:
    calls: list[int] = []

    def answer(messages: list[BaseMessage]) -> AIMessage:
        calls.append(len(messages))
        return _answer(messages)

    graph = build_memory_graph(
        ScriptedChatModel(policy=answer), fake_memory, checkpointer=InMemorySaver()
    )
    graph.invoke({"messages": [HumanMessage("I live in Oslo")]}, _cfg())
    flush_turn_writes(fake_memory)
    assert len(calls) == 1  # no model call of its own
    [note] = fake_memory.list(scope="user_alice")
    assert note.text == "[unconfirmed] I live in Oslo" and note.source == "extractor"
    [item] = fake_memory.list_pending(scope="user_alice")
    assert item.text == "I live in Oslo" and item.target == "long_term"
    out = graph.invoke({"messages": [HumanMessage("Thanks!")]}, _cfg())
    assert out["proposed"] == [item.id]  # found after the last answer: asked now
    assert "I live in Oslo" in str(out["messages"][-1].content)
    out = graph.invoke({"messages": [HumanMessage("yes")]}, _cfg())  # the user confirms
    assert fake_memory.list_pending(scope="user_alice") == []
    texts = sorted(
        (e.path.rsplit("/", 1)[-1], e.text) for e in fake_memory.list(scope="user_alice")
    )
    assert texts[-1] == ("LONG_TERM.md", "I live in Oslo") and texts[0][1] == "I live in Oslo"


def test_extractor_false_turns_it_off(fake_memory: Memory) -> None:
    graph = build_memory_graph(
        ScriptedChatModel(policy=_answer), fake_memory, checkpointer=InMemorySaver(),
        extractor=False,
    )  # fmt: skip
    graph.invoke({"messages": [HumanMessage("I live in Oslo")]}, _cfg())
    flush_turn_writes(fake_memory)
    assert fake_memory.list(scope="user_alice") == []
    assert fake_memory.list_pending(scope="user_alice") == []


def test_a_deferred_job_waits_for_its_time_or_for_a_waiter() -> None:
    import time

    from langmem_ext.memory.background import TurnWriter

    writer = TurnWriter("test-writer")
    ran: list[float] = []
    start = time.monotonic()
    writer.submit("s", lambda: ran.append(time.monotonic()), defer=5.0)
    time.sleep(0.2)
    assert ran == []  # not before its time ...
    assert writer.wait("s", timeout=2.0)  # ... unless someone waits for it
    assert ran and ran[0] - start < 2.0
    writer.close()


def test_without_an_extractor_argument_the_memory_s_extraction_model_reads_the_turn(
    tmp_path: Path,
) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.lifecycle.extract_mode = "direct"
    plan = [{"op": "ADD", "text": "Alice has a cat named Mochi", "category": "fact"}]
    model = ScriptedChatModel(
        policy=lambda _m: AIMessage("", tool_calls=[tool_call("ExtractionPlan", actions=plan)])
    )
    with Memory(settings=s, extraction_model=model) as memory:
        graph = build_memory_graph(
            ScriptedChatModel(policy=_answer), memory, checkpointer=InMemorySaver()
        )
        graph.invoke({"messages": [HumanMessage("My cat is called Mochi")]}, _cfg())
        flush_turn_writes(memory)
        texts = [e.text for e in memory.list(scope="user_alice")]
        assert texts == ["Alice has a cat named Mochi"]  # the model's plan, not the patterns

"""A reply confirms or rejects only what it answers: through the real memory graph
(scripted model standing in for the LLM, real Chroma, SQLite and embedder)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy, tool_call
from langmem_ext.graph import build_memory_graph, flush_turn_writes
from langmem_ext.graph.proposals import MAX_ASKS
from langmem_ext.graph.replies import REPLY_PROMPT

SCOPE = "user_alice"
TWO = "记住：我喜欢吃拉面，每天早上喝咖啡"


def policy(messages: list[BaseMessage]) -> AIMessage:
    """The offline assistant; one message asks for two saves at once."""
    last = messages[-1]
    if isinstance(last, HumanMessage) and last.content == TWO:
        return AIMessage(
            "",
            tool_calls=[
                tool_call("memory_save", text="主人喜欢吃拉面"),
                tool_call("memory_save", text="主人每天早上喝咖啡"),
            ],
        )
    if isinstance(last, ToolMessage) and isinstance(messages[-2], ToolMessage):
        return AIMessage("我先记下了这两条。")  # does not ask: the graph must
    return offline_policy(messages)


@pytest.fixture
def graph(memory: Memory) -> Any:
    return build_memory_graph(
        ScriptedChatModel(policy=policy), memory, checkpointer=InMemorySaver()
    )


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread, "user_id": "alice"}}


def say(graph: Any, text: str, thread: str) -> dict[str, Any]:
    return dict(graph.invoke({"messages": [HumanMessage(text)]}, cfg(thread)))


def reply(out: dict[str, Any]) -> str:
    return str(out["messages"][-1].content)


def pending(memory: Memory) -> list[str]:
    return [p.text for p in memory.list_pending(scope=SCOPE)]


def stored(memory: Memory) -> list[str]:
    return [e.text for e in memory.list(scope=SCOPE)]


SEEN = [
    "你好",
    "行李箱放哪了？",
    "ok so what's the weather",
    "我不吃香菜",
    "No idea what to cook tonight",
]


@pytest.mark.parametrize("text", SEEN)
def test_a_message_in_a_new_thread_resolves_nothing(graph: Any, memory: Memory, text: str) -> None:
    say(graph, "我喜欢吃拉面，请记住", "a")
    out = say(graph, text, "b")
    assert pending(memory) == ["我喜欢吃拉面"] and stored(memory) == []
    assert out["messages"][-1].type == "ai"  # the conversation goes on


def test_the_seen_messages_after_a_proposal_leave_it_pending(graph: Any, memory: Memory) -> None:
    first = say(graph, "我喜欢吃拉面，请记住", "a")
    assert "要我记住这条吗" in reply(first)  # the assistant asks
    for text in SEEN:
        out = say(graph, text, "a")
        assert pending(memory) == ["我喜欢吃拉面"] and stored(memory) == [], text
        assert reply(out)  # answered
    # "a" kept asking? Once more after the first unrelated reply, then no more:
    asks = out["asks"]
    assert list(asks.values()) == [MAX_ASKS] and out["proposed"] == []
    say(graph, "好的，记住吧", "a")  # the last answer asked nothing: nothing to answer
    assert stored(memory) == []


def test_yes_in_another_thread_does_not_touch_a_save_pending_in_this_one(
    graph: Any, memory: Memory
) -> None:
    say(graph, "Remember that my sister Mei is vegetarian", "a")
    out = say(graph, "yes", "b")
    assert pending(memory) == ["My sister Mei is vegetarian"] and stored(memory) == []
    assert out["proposed"] == []
    say(graph, "yes", "a")
    assert stored(memory) == ["My sister Mei is vegetarian"] and pending(memory) == []


def test_two_proposals_are_numbered_and_answered_one_yes_one_no(graph: Any, memory: Memory) -> None:
    out = say(graph, TWO, "a")
    text = reply(out)
    assert text.startswith("我先记下了这两条。") and "1. 主人喜欢吃拉面" in text
    assert "2. 主人每天早上喝咖啡" in text  # numbered by the graph, in the order asked
    assert len(out["proposed"]) == 2
    out = say(graph, "第一个保存，第二个不要", "a")
    assert stored(memory) == ["主人喜欢吃拉面"] and pending(memory) == []
    notes = "\n".join(str(m.content) for m in out["messages"] if isinstance(m, AIMessage))
    assert "主人每天早上喝咖啡" in notes  # the scripted model reports both outcomes


def test_an_affirmative_answer_confirms_and_an_unrelated_one_waits(
    graph: Any, memory: Memory
) -> None:
    say(graph, "我喜欢吃拉面，请记住", "a")
    out = say(graph, "今天几号？", "a")  # unrelated: stays pending, asked once more
    assert pending(memory) == ["我喜欢吃拉面"]
    assert "要我记住这条吗" in reply(out) and out["proposed"]
    say(graph, "好的，记住吧", "a")
    assert stored(memory) == ["我喜欢吃拉面"] and pending(memory) == []


def test_saves_the_extractor_proposes_are_asked_about_in_their_thread(memory: Memory) -> None:
    memory.settings.lifecycle.extract_mode = "pending"
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy),
        memory,
        checkpointer=InMemorySaver(),
        extractor=True,  # no plan from the scripted model: the statement fallback
    )
    say(graph, "I moved to Munich last month.", "a")
    assert flush_turn_writes(memory, timeout=30)
    [item] = memory.list_pending(scope=SCOPE)
    assert item.thread_id == "a" and "Munich" in item.text
    out = say(graph, "What's a good name for a cat?", "b")  # another thread: not asked
    assert "Munich" not in reply(out)
    out = say(graph, "Thanks, that was helpful.", "a")
    assert "Munich" in reply(out) and out["proposed"] == [item.id]
    say(graph, "yes please", "a")
    assert any("Munich" in t for t in stored(memory))


def test_a_text_or_dict_resume_resolves_only_what_the_interrupt_proposed(
    memory: Memory,
) -> None:
    graph = build_memory_graph(
        ScriptedChatModel(policy=policy),
        memory,
        checkpointer=InMemorySaver(),
        confirm_mode="interrupt",
    )
    outside = memory.save("主人喜欢喝茶", scope=SCOPE, thread_id="elsewhere")
    out = say(graph, TWO, "h")
    [intr] = out["__interrupt__"]
    shown = intr.value["pending"]
    assert [(p["number"], p["text"]) for p in shown] == [
        (1, "主人喜欢吃拉面"),
        (2, "主人每天早上喝咖啡"),
    ]
    out = dict(graph.invoke(Command(resume="第一个保存，第二个不要"), cfg("h")))
    assert stored(memory) == ["主人喜欢吃拉面"] and pending(memory) == ["主人喜欢喝茶"]
    # A dict resume: ids the interrupt did not show are ignored.
    out = say(graph, "Remember that my sister Mei is vegetarian", "h")
    [intr] = out["__interrupt__"]
    [mei] = intr.value["pending"]
    out = dict(graph.invoke(Command(resume={"confirm": [mei["id"], outside.id]}), cfg("h")))
    assert sorted(stored(memory)) == sorted(["主人喜欢吃拉面", "My sister Mei is vegetarian"])
    assert pending(memory) == ["主人喜欢喝茶"]
    assert any("not proposed here" in n for n in out["notes"])


def test_with_a_reply_model_one_structured_call_decides(memory: Memory) -> None:
    reads: list[list[BaseMessage]] = []

    def with_reader(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[0], SystemMessage) and messages[0].content == REPLY_PROMPT:
            reads.append(messages)
            plan = {"kind": "deny", "confirm": [], "reject": [1]}
            return AIMessage("", tool_calls=[tool_call("ReplyPlan", **plan)])
        return policy(messages)

    graph = build_memory_graph(
        ScriptedChatModel(policy=with_reader),
        memory,
        checkpointer=InMemorySaver(),
        reply_model=True,
    )
    say(graph, "我喜欢吃拉面，请记住", "m")
    say(graph, "嗯……还是算了，我改天再说吧", "m")
    assert len(reads) == 1 and "1. 我喜欢吃拉面" in str(reads[0][-1].content)
    assert pending(memory) == [] and stored(memory) == []


def test_a_turns_saves_are_numbered_in_the_order_the_model_called_them(
    fake_memory: Memory,
) -> None:
    """Parallel tool calls may create them in another order; older ones come first."""
    from langmem_ext.graph.proposals import next_proposal

    old = fake_memory.save("主人住在杭州", scope=SCOPE, thread_id="t")
    a = fake_memory.save("主人喜欢吃拉面", scope=SCOPE, thread_id="t")
    b = fake_memory.save("主人每天早上喝咖啡", scope=SCOPE, thread_id="t")
    fake_memory.save("主人喜欢喝茶", scope=SCOPE, thread_id="other")
    found = next_proposal(fake_memory, SCOPE, "t", {old.id: 1}, called=[b.id, a.id])
    assert [p.id for p in found.items] == [old.id, b.id, a.id]
    assert found.asks == {old.id: 2, b.id: 1, a.id: 1}
    again = next_proposal(fake_memory, SCOPE, "t", found.asks)
    assert [p.id for p in again.items] == [a.id, b.id]  # the old one was asked twice


def test_a_profile_change_is_asked_about_in_words(memory: Memory) -> None:
    from langmem_ext.graph.proposals import question

    memory.upsert_facts({"allergies": ["花生"]}, scope=SCOPE, source="extractor")
    [item] = [p for p in memory.list_pending(scope=SCOPE) if p.target == "profile"]
    zh, en = question([item], chinese=True), question([item], chinese=False)
    assert "allergies +=" in item.text and "allergies +=" not in zh and "花生" in zh
    assert "add to your profile's allergies: 花生" in en

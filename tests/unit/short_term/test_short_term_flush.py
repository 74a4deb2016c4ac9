"""The pre-compaction flush: prompt, NO_REPLY, deterministic fact extraction."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.short_term.flush_prompt import (
    FLUSH_PROMPT,
    NO_REPLY,
    extract_candidate_facts,
    flush_message,
    is_flush_message,
    is_no_reply,
    should_flush,
)


def test_flush_prompt_is_firm() -> None:
    assert "memory_save" in FLUSH_PROMPT
    assert f"exactly {NO_REPLY}" in FLUSH_PROMPT
    for word in ("fact", "decision", "preference", "EACH", "exactly"):
        assert word in FLUSH_PROMPT
    message = flush_message()
    assert isinstance(message, HumanMessage)
    assert is_flush_message(message)
    assert not is_flush_message(HumanMessage("hello"))


@pytest.mark.parametrize(
    "reply", ["NO_REPLY", " NO_REPLY\n", "`NO_REPLY`", "**NO_REPLY**", '"NO_REPLY".', "NO_REPLY."]
)
def test_is_no_reply_true(reply: str) -> None:
    assert is_no_reply(reply)
    assert is_no_reply(AIMessage(reply))
    assert is_no_reply(AIMessage(content=[{"type": "text", "text": reply}]))


@pytest.mark.parametrize(
    "reply", ["", "no_reply", "NO_REPLY, saved 3 facts", "Sure! NO_REPLY", "NOREPLY"]
)
def test_is_no_reply_false(reply: str) -> None:
    assert not is_no_reply(reply)
    assert not is_no_reply(AIMessage(reply))


def test_tool_calling_turn_is_not_no_reply() -> None:
    calling = AIMessage("", tool_calls=[{"name": "memory_save", "args": {"text": "x"}, "id": "1"}])
    assert not is_no_reply(calling)
    assert is_no_reply(
        AIMessage(
            "NO_REPLY", tool_calls=[{"name": "memory_save", "args": {"text": "x"}, "id": "1"}]
        )
    )


def test_should_flush() -> None:
    assert should_flush(True, ShortTermSettings())
    assert not should_flush(False, ShortTermSettings())
    assert not should_flush(True, ShortTermSettings(flush_before_checkpoint=False))


@pytest.mark.parametrize(
    "fact",
    [
        "我喜欢吃拉面。",
        "我不喜欢香菜。",
        "我讨厌下雨天。",
        "我是一名护士。",
        "我叫李雷。",
        "我住在杭州西湖区。",
        "我的生日是5月3日。",
        "记住：车牌号是浙A12345。",
        "記住，我的電話是 0912-345-678。",
        "我们决定用 PostgreSQL 16。",
        "Remember that the wifi password is hunter2.",
        "I like green tea.",
        "I love hiking in the Alps.",
        "I hate cilantro.",
        "My name is Alice Chen.",
        "I live in Berlin.",
        "I'm allergic to peanuts.",
        "My daughter's school is Riverside Elementary.",
        "I work at Contoso as a data engineer.",
        "We decided to launch on Friday.",
        "We will migrate the billing service next week.",
        "My flight leaves on 2025-05-03 at 08:30.",
        "I’m allergic to penicillin.",
        "I have two cats named Mochi and Tofu.",
    ],
)
def test_candidate_facts_found(fact: str) -> None:
    messages = [HumanMessage(f"今天天气不错。{fact} Thanks for the chat.")]
    assert extract_candidate_facts(messages) == [fact]


@pytest.mark.parametrize(
    "text",
    [
        "今天天气不错。",
        "Thanks, that was helpful.",
        "Do you remember my name?",
        "你还记得我住在哪里吗？",
        "What is the capital of France?",
        "Let's talk about something else.",
        "The sky is blue.",
        "I have a question about the garden.",
        "I'm a bit tired of this.",
        "我是说那个花园。",
    ],
)
def test_non_facts_ignored(text: str) -> None:
    assert extract_candidate_facts([HumanMessage(text)]) == []


def test_only_user_messages_and_no_flush_prompt() -> None:
    messages = [
        AIMessage("My name is Assistant and I live in the cloud."),
        ToolMessage("I like JSON. My name is tool.", tool_call_id="1"),
        flush_message(),
        HumanMessage("我叫韩梅梅。"),
    ]
    assert extract_candidate_facts(messages) == ["我叫韩梅梅。"]


def test_max_facts_keeps_strongest_in_order() -> None:
    weak = [HumanMessage(f"I walked {i} km with my dog.") for i in range(30)]
    strong = [
        HumanMessage("My name is Alice."),
        HumanMessage("We decided to use Postgres on 2025-05-03."),
    ]
    facts = extract_candidate_facts([strong[0], *weak, strong[1]], max_facts=5)
    assert len(facts) == 5
    assert facts[0] == "My name is Alice."
    assert facts[-1] == "We decided to use Postgres on 2025-05-03."
    assert extract_candidate_facts(weak, max_facts=0) == []


def test_duplicates_collapse() -> None:
    messages = [HumanMessage("I'm allergic to peanuts."), HumanMessage("i'm allergic to peanuts")]
    assert len(extract_candidate_facts(messages)) == 1


def test_long_fact_clipped() -> None:
    facts = extract_candidate_facts([HumanMessage("My name is " + "A" * 1000)], max_chars=50)
    assert len(facts[0]) == 50 and facts[0].endswith("…")

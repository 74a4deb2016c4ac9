"""Structured summaries: model path, extractive fallback, budgets, failures."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from pydantic import Field
from short_term_shapes import simple, tool_round

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.short_term.extractive import parse_structured
from langmem_ext.short_term.summarizer import (
    Summarizer,
    asummarize_message,
    needs_message_summary,
    summarize_message,
)

CONVERSATION: list[BaseMessage] = [
    HumanMessage("我想规划下个月去东京的旅行。我叫李雷。"),
    AIMessage("好的，李雷。你想什么时候出发？"),
    HumanMessage("We decided to fly on 2025-05-03 with ANA flight NH 920. My budget is 3000 USD."),
    AIMessage("Noted. Next step: book the hotel near Shinjuku."),
    HumanMessage("TODO: 下周五之前订好酒店。我对花生过敏。"),
    HumanMessage("今天天气不错。"),
]


class RecordingModel(GenericFakeChatModel):
    """A fake chat model that remembers every prompt it was sent."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


class FailingModel(GenericFakeChatModel):
    """A fake chat model whose every call raises, like a provider outage."""

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        raise ConnectionError("provider down")


def _recording(*replies: str) -> RecordingModel:
    return RecordingModel(messages=iter(replies))


def _failing() -> FailingModel:
    return FailingModel(messages=iter([]))


# --- model path -----------------------------------------------------------------------


def test_model_summary_used_and_prompt_structured() -> None:
    model = _recording("Goal:\n- Tokyo trip\nFacts:\n- 我叫李雷")
    result = Summarizer(model).summarize(CONVERSATION, previous_summary="Facts:\n- old fact 42")
    assert not result.used_fallback
    assert result.error is None
    assert result.text == "Goal:\n- Tokyo trip\nFacts:\n- 我叫李雷"
    system, human = model.calls[0]
    for word in ("Goal:", "Decision:", "Todo:", "Facts:", "verbatim", "4000"):
        assert word in str(system.content)
    assert "old fact 42" in str(human.content)  # the previous summary is rolled in
    assert "NH 920" in str(human.content)


async def test_model_summary_async() -> None:
    model = _recording("Facts:\n- 我叫李雷")
    result = await Summarizer(model).asummarize(CONVERSATION)
    assert result == result.__class__("Facts:\n- 我叫李雷", False)


def test_model_output_over_budget_is_fitted() -> None:
    long = "Facts:\n" + "\n".join(f"- fact number {i} with some words" for i in range(200))
    result = Summarizer(_recording(long), max_chars=500).summarize(CONVERSATION)
    assert not result.used_fallback
    assert 0 < len(result.text) <= 500
    assert result.text.startswith("Facts:")


def test_model_code_fence_is_stripped() -> None:
    result = Summarizer(_recording("```\nGoal:\n- x\n```")).summarize(CONVERSATION)
    assert result.text == "Goal:\n- x"


def test_empty_model_output_falls_back() -> None:
    result = Summarizer(_recording("   ")).summarize(CONVERSATION)
    assert result.used_fallback
    assert "empty" in (result.error or "")
    assert "NH 920" in result.text


def test_chunked_input_rolls_summary_through_calls() -> None:
    model = _recording("Facts:\n- part one", "Facts:\n- part one\n- part two")
    messages = [HumanMessage("word " * 900), HumanMessage("more " * 900)]
    summarizer = Summarizer(model, max_chars=400, max_input_tokens=1400)
    result = summarizer.summarize(messages)
    assert len(model.calls) == 2
    assert "part one" in str(model.calls[1][1].content)  # first chunk's summary rolled in
    assert result.text.endswith("part two")


def test_max_input_tokens_too_small_raises() -> None:
    with pytest.raises(InvalidInputError):
        Summarizer(max_chars=4000, max_input_tokens=1000)
    with pytest.raises(InvalidInputError):
        Summarizer(max_chars=10)


# --- fallback -------------------------------------------------------------------------


def test_no_model_uses_extractive_fallback_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="langmem_ext.short_term.summarizer"):
        result = Summarizer().summarize(
            CONVERSATION, previous_summary="Facts:\n- I'm allergic to peanuts."
        )
    assert result.used_fallback
    assert result.error is None
    assert "extractive fallback" in caplog.text
    text = result.text
    # Decisions, todos, facts, numbers and names verbatim.
    for needle in (
        "We decided to fly on 2025-05-03 with ANA flight NH 920.",
        "My budget is 3000 USD.",
        "TODO: 下周五之前订好酒店。",
        "我对花生过敏。",
        "我叫李雷。",
        "I'm allergic to peanuts.",  # from the previous summary
    ):
        assert needle in text
    sections = {kind for kind, _ in parse_structured(text)}
    assert {"goal", "decision", "todo", "fact"} <= sections
    assert (
        text.index("Goal:") < text.index("Decision:") < text.index("Todo:") < text.index("Facts:")
    )


def test_model_exception_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="langmem_ext.short_term.summarizer"):
        result = Summarizer(_failing()).summarize(CONVERSATION)
    assert result.used_fallback
    assert result.error is not None and "ConnectionError" in result.error
    assert "provider down" in caplog.text
    assert "NH 920" in result.text


async def test_model_exception_falls_back_async() -> None:
    result = await Summarizer(_failing()).asummarize(CONVERSATION, "Facts:\n- kept 7")
    assert result.used_fallback
    assert "kept 7" in result.text


def test_fallback_respects_budget_and_prefers_important() -> None:
    filler = [
        HumanMessage(f"Just chatting about the garden, item {i} looks fine.") for i in range(300)
    ]
    messages = [
        HumanMessage("我叫李雷。"),
        *filler,
        HumanMessage("We decided to use PostgreSQL 16."),
    ]
    for budget in (200, 600, 4000):
        text = Summarizer(max_chars=budget).summarize(messages).text
        assert len(text) <= budget
        assert "我叫李雷。" in text
        assert "We decided to use PostgreSQL 16." in text


def test_fallback_is_deterministic() -> None:
    a = Summarizer().summarize(CONVERSATION, "Goal:\n- g").text
    b = Summarizer().summarize(CONVERSATION, "Goal:\n- g").text
    assert a == b


def test_fallback_rolls_free_form_previous_summary() -> None:
    previous = "The user is Li Lei, born 1990-01-02, and likes ramen."
    text = Summarizer().summarize([HumanMessage("hello")], previous).text
    assert previous in text


def test_fallback_ignores_code_blocks() -> None:
    message = HumanMessage("We decided to ship.\n```python\nx = 1  # TODO decide\n```")
    text = Summarizer().summarize([message]).text
    assert "x = 1" not in text
    assert "We decided to ship." in text


# --- per-message summaries ------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        ToolMessage("weather: sunny, 23°C", tool_call_id="c1", name="weather"),
        HumanMessage("- buy milk\n- buy eggs\n- call mom"),
        HumanMessage("1. install\n2. configure\n3. run"),
        AIMessage("Here is the fix:\n```python\nprint('hi')\n```"),
        HumanMessage("def f(x):\n    return x;\nclass A: {\n}"),
        HumanMessage("One. Two. Three. Four. Five. Six. Seven."),
        HumanMessage("\n".join(f"line {i}" for i in range(11))),
        HumanMessage("我们决定了"),
        HumanMessage("我們決定了"),
        HumanMessage("下一步呢"),
        HumanMessage("TODO later"),
        HumanMessage("这个优先"),
        HumanMessage("這個優先"),
        HumanMessage("we need to decide"),
        HumanMessage("what is the next step"),
        HumanMessage("set the priority"),
    ],
)
def test_needs_message_summary_true(message: BaseMessage) -> None:
    assert needs_message_summary(message)


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage("好的，谢谢"),
        AIMessage("Sure, happy to help."),
        HumanMessage("One. Two. Three."),
        ToolMessage("", tool_call_id="c1"),
        tool_round(["x"])[0],  # an AI message that only calls a tool
    ],
)
def test_needs_message_summary_false(message: BaseMessage) -> None:
    assert not needs_message_summary(message)


LONG_MESSAGES: list[BaseMessage] = [
    HumanMessage(
        "我想规划一次旅行。我们决定5月3日出发，航班是 NH 920。下一步：订酒店。"
        "我对花生过敏。预算是 3000 美元。" + "其他细节很多。" * 80
    ),
    AIMessage("We decided on Postgres. " + "Long explanation sentence here. " * 100),
    ToolMessage(
        "row,value\n" + "\n".join(f"{i},{i * i}" for i in range(500)), tool_call_id="c", name="sql"
    ),
    HumanMessage("x" * 5000),
    HumanMessage("- a\n- b\n" * 200),
]


@pytest.mark.parametrize("message", LONG_MESSAGES)
def test_message_summary_fallback_within_280(message: BaseMessage) -> None:
    text = summarize_message(message)
    assert 0 < len(text) <= 280
    assert text.split(":", 1)[0] in {"Goal", "Decision", "Todo", "Facts"}


def test_message_summary_keeps_key_items() -> None:
    text = summarize_message(LONG_MESSAGES[0])
    assert "我们决定5月3日出发，航班是 NH 920。" in text
    assert "Decision:" in text and "Todo:" in text
    tool_text = summarize_message(LONG_MESSAGES[2])
    assert tool_text.startswith("Facts: sql returned")


def test_message_summary_with_model_and_budget() -> None:
    model = _recording("Goal: trip\nDecision: fly NH 920 on 5月3日\n" + "Facts: " + "z" * 600)
    text = summarize_message(LONG_MESSAGES[0], model)
    assert len(text) <= 280
    assert "NH 920" in text
    prompt = model.calls[0]
    assert "280" in str(prompt[0].content)


def test_message_summary_model_failure_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        text = summarize_message(LONG_MESSAGES[0], _failing())
    assert "NH 920" in text
    assert "extractive fallback" in caplog.text


async def test_message_summary_async() -> None:
    assert await asummarize_message(LONG_MESSAGES[0]) == summarize_message(LONG_MESSAGES[0])
    result = await Summarizer(_failing()).asummarize_message(LONG_MESSAGES[1])
    assert result.used_fallback and len(result.text) <= 280


def test_summaries_of_plain_history_are_bounded() -> None:
    messages = simple(200)
    assert len(Summarizer(max_chars=1000).summarize(messages).text) <= 1000


def test_parse_structured_formats() -> None:
    rendered = "Goal:\n- plan\nTodo:\n- TODO: migrate billing\n- Decision: not a heading here\nFacts:\n- a 1"
    assert parse_structured(rendered) == [
        ("goal", "plan"),
        ("todo", "TODO: migrate billing"),
        ("todo", "Decision: not a heading here"),
        ("fact", "a 1"),
    ]
    seed_style = "Summary:\n- Goal: plan trip\n- Decision: fly 5月3日\n- Todo: book hotel\n- Facts: 预算 3000"
    assert parse_structured(seed_style) == [
        ("goal", "plan trip"),
        ("decision", "fly 5月3日"),
        ("todo", "book hotel"),
        ("fact", "预算 3000"),
    ]
    compact = "Goal: a; b\nFacts: TODO: c"
    assert parse_structured(compact) == [("goal", "a"), ("goal", "b"), ("fact", "TODO: c")]
    markdown = "## 目标\n- 旅行\n**Decisions:**\n1. use PG\nfree text line"
    assert parse_structured(markdown) == [
        ("goal", "旅行"),
        ("decision", "use PG"),
        ("decision", "free text line"),
    ]


def test_rendered_summary_round_trips() -> None:
    text = Summarizer().summarize(CONVERSATION).text
    again = Summarizer().summarize([], previous_summary=text).text
    assert again == text

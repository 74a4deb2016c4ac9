"""Token accounting of message lists."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.core.tokens import count_tokens
from langmem_ext.short_term.accounting import (
    MEDIA_BLOCK_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    context_ratio,
    count_message_tokens,
    message_tokens,
)


def test_empty_list_is_zero() -> None:
    assert count_message_tokens([]) == 0


def test_overhead_and_content() -> None:
    text = "我叫李雷，我住在杭州。My name is Alice."
    assert message_tokens(HumanMessage(text)) == MESSAGE_OVERHEAD_TOKENS + count_tokens(text)
    assert message_tokens(HumanMessage("")) == MESSAGE_OVERHEAD_TOKENS


def test_sum_of_messages() -> None:
    messages = [SystemMessage("be brief"), HumanMessage("hello"), AIMessage("hi!")]
    assert count_message_tokens(messages) == sum(message_tokens(m) for m in messages)


def test_list_of_blocks_counts_like_text() -> None:
    as_text = HumanMessage("hello world")
    as_blocks = HumanMessage(content=[{"type": "text", "text": "hello world"}])
    assert message_tokens(as_blocks) == message_tokens(as_text)
    two_blocks = HumanMessage(content=[{"type": "text", "text": "hello"}, "world"])
    assert message_tokens(two_blocks) == MESSAGE_OVERHEAD_TOKENS + count_tokens(
        "hello"
    ) + count_tokens("world")


def test_media_blocks_cost_a_flat_amount() -> None:
    with_image = HumanMessage(
        content=[
            {"type": "text", "text": "what is this"},
            {"type": "image_url", "image_url": {"url": "data:..."}},
        ]
    )
    assert message_tokens(with_image) == (
        MESSAGE_OVERHEAD_TOKENS + count_tokens("what is this") + MEDIA_BLOCK_TOKENS
    )


def test_tool_calls_count_names_and_args() -> None:
    plain = AIMessage("")
    small = AIMessage("", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}])
    big = AIMessage(
        "", tool_calls=[{"name": "search", "args": {"q": "北京天气 " * 50}, "id": "c1"}]
    )
    assert message_tokens(plain) < message_tokens(small) < message_tokens(big)
    assert message_tokens(big) - message_tokens(small) >= 50


def test_tool_use_block_not_double_counted() -> None:
    call = {"name": "search", "args": {"q": "x"}, "id": "c1"}
    only_calls = AIMessage("", tool_calls=[call])
    with_block = AIMessage(
        content=[{"type": "tool_use", "id": "c1", "name": "search", "input": {"q": "x"}}],
        tool_calls=[call],
    )
    assert message_tokens(with_block) == message_tokens(only_calls)


def test_tool_message_and_names_count() -> None:
    base = message_tokens(ToolMessage("result", tool_call_id=""))
    assert message_tokens(ToolMessage("result", tool_call_id="call_abc123")) > base
    assert message_tokens(HumanMessage("hi", name="alice")) > message_tokens(HumanMessage("hi"))


def test_context_ratio() -> None:
    assert context_ratio(12000, 16000) == pytest.approx(0.75)
    assert context_ratio(0, 16000) == 0.0
    assert context_ratio(20000, 16000) > 1.0
    with pytest.raises(InvalidInputError):
        context_ratio(10, 0)
    with pytest.raises(InvalidInputError):
        context_ratio(-1, 100)

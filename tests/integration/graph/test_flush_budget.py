"""The pre-compaction flush call fits the context window like every other model call.

A history longer than one call is read in slices (one silent turn each), a tool call
never leaves its results, every message is read by some call, and one message longer
than a slice is clipped with the ``[truncated …]`` marker.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.memory.sessions.flush import flush_slices, flush_to_pending
from langmem_ext.short_term.accounting import count_message_tokens, tool_schema_tokens
from langmem_ext.short_term.budget import TRUNCATED_MARK
from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY
from langmem_ext.short_term.validity import validate_messages

WORDS = ["harbour", "lantern", "orchard", "granite", "violet", "compass", "meadow", "ember"]
WINDOW = 3000


def words(seed: int, n: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


@pytest.fixture
def small_window_memory(tmp_path: Path) -> Iterator[Memory]:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.context_window = WINDOW
    mem = Memory(settings=s)
    yield mem
    mem.close()


def history(turns: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(turns):
        out.append(HumanMessage(f"fact {i}: my locker code is {1000 + i}. " + words(i, 150)))
        if i % 4 == 3:
            out.append(AIMessage("", tool_calls=[tool_call("memory_search", query=f"q{i}")]))
            out.append(ToolMessage(words(100 + i, 200), tool_call_id=out[-1].tool_calls[0]["id"]))
        out.append(AIMessage(words(200 + i, 120)))
    return out


def save_every_fact_policy(messages: list[BaseMessage]) -> AIMessage:
    """The flush model: saves each 'fact N' it sees once, then NO_REPLY."""
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(NO_REPLY)
    facts = [
        str(m.content).split(".")[0]
        for m in messages
        if isinstance(m, HumanMessage) and str(m.content).startswith("fact ")
    ]
    return AIMessage("", tool_calls=[tool_call("memory_save", text=f) for f in facts])


def schema() -> int:
    def memory_save(text: str, category: str = "fact") -> str:
        """Save one durable fact, decision, preference or commitment (pending)."""
        return text

    return tool_schema_tokens([StructuredTool.from_function(memory_save, name="memory_save")])


def test_a_history_longer_than_the_window_is_flushed_in_slices_that_fit(
    small_window_memory: Memory,
) -> None:
    msgs = history(24)
    assert count_message_tokens(msgs) > 3 * WINDOW
    model = ScriptedChatModel(policy=save_every_fact_policy)
    result = flush_to_pending(small_window_memory, "main", msgs, model)

    flush_calls = [c for c in model.calls if c and c[-1].content == FLUSH_PROMPT] + [
        c for c in model.calls if c and isinstance(c[-1], ToolMessage)
    ]
    assert len(model.calls) > 2
    tools_tokens = schema()
    for call in model.calls:
        assert count_message_tokens(call) + tools_tokens <= WINDOW
        validate_messages(call)  # no tool call without its results, no orphan result
    assert flush_calls
    # Every message of the history reached some call, so every fact was saved.
    seen = {id(m) for call in model.calls for m in call} | {
        str(m.content) for call in model.calls for m in call
    }
    for m in msgs:
        assert id(m) in seen or str(m.content) in seen
    saved = sorted(p.text for p in small_window_memory.list_pending())
    assert len(saved) == 24
    assert not result.used_fallback


def test_slices_keep_tool_pairs_and_clip_a_message_longer_than_a_slice() -> None:
    msgs = history(8)
    huge = HumanMessage("fact 99: the wifi password is hunter2. " + words(9, 3000))
    msgs.insert(3, huge)
    slices = flush_slices(msgs, 1200)
    assert len(slices) > 1
    for part in slices:
        assert count_message_tokens(part) <= 1200
        validate_messages([HumanMessage("x"), *part] if isinstance(part[0], AIMessage) else part)
    flat = [m for part in slices for m in part]
    assert len(flat) == len(msgs)
    clipped = [m for m in flat if TRUNCATED_MARK in str(m.content)]
    assert len(clipped) == 1
    assert str(clipped[0].content).startswith("fact 99: the wifi password is hunter2.")


def test_the_session_api_checkpoint_sends_no_call_over_the_window(
    small_window_memory: Memory,
) -> None:
    from langmem_ext.memory.sessions.manager import SessionManager
    from langmem_ext.short_term.summarizer import CHECKPOINT_SUMMARY_PROMPT

    def policy(messages: list[BaseMessage]) -> AIMessage:
        first = str(messages[0].content) if messages else ""
        if first.startswith(CHECKPOINT_SUMMARY_PROMPT[:60]):
            return AIMessage("Goal:\n- talk about the garden\nFacts:\n- locker codes")
        return AIMessage(NO_REPLY)

    model = ScriptedChatModel(policy=policy)
    sm = SessionManager(small_window_memory, model)
    for i in range(30):
        sm.write_turn("main", "t1", f"fact {i}: " + words(i, 120), words(500 + i, 90))
    assert sm.query_context("main", "t1").should_checkpoint
    assert sm.checkpoint("main", "t1").made
    summaries = [
        c for c in model.calls if str(c[0].content).startswith(CHECKPOINT_SUMMARY_PROMPT[:60])
    ]
    assert summaries  # the model wrote the summary (in chunks that fit)
    tools_tokens = schema()
    for call in model.calls:
        assert count_message_tokens(call) + tools_tokens <= WINDOW

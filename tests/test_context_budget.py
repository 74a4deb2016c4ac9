"""Every model call fits the context window, inside a turn too (issue 16).

A long conversation with tool calls: the memory graph must keep each call the model
receives (system prompt, memory block, history, tool results, the bound tools'
schemas) within ``short_term.context_window`` exact ``cl100k_base`` tokens.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings
from langmem_ext.graph import build_memory_graph
from langmem_ext.scripted import ScriptedChatModel, tool_call
from langmem_ext.short_term.accounting import count_message_tokens
from langmem_ext.short_term.flush import FLUSH_PROMPT, NO_REPLY
from langmem_ext.short_term.summarizer import CHECKPOINT_SUMMARY_PROMPT
from langmem_ext.short_term.validity import validate_messages
from langmem_ext.tokens import count_tokens
from langmem_ext.tools import create_memory_tools

WORDS = ["harbour", "lantern", "orchard", "granite", "violet", "compass", "meadow", "ember", "falcon", "quartz", "river", "saddle", "thimble", "walnut", "cobalt", "drizzle", "juniper", "marble", "nectar", "pepper", "ribbon", "summit", "tundra", "velvet", "willow", "anchor", "basalt", "cinder", "dune", "fjord", "glacier", "hazel", "iris", "jasper", "kettle", "lagoon", "mosaic", "nutmeg", "onyx", "prairie", "quill", "raven", "sable", "timber", "umber", "vesper"]


def long_text(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def schema_tokens(tools: Sequence[BaseTool]) -> int:
    """What a provider sends for the bound tools (their OpenAI function schemas)."""
    return sum(
        count_tokens(json.dumps(convert_to_openai_tool(t), ensure_ascii=False)) for t in tools
    )


def is_summary_call(messages: list[BaseMessage]) -> bool:
    first = messages[0] if messages else None
    return isinstance(first, SystemMessage) and str(first.content).startswith(
        CHECKPOINT_SUMMARY_PROMPT[:60]
    )


def long_conversation_policy(answers: list[int]) -> Any:
    """Answers long; every third answer first calls ``memory_search`` with k=10."""

    def policy(messages: list[BaseMessage]) -> AIMessage:
        if is_summary_call(messages):
            return AIMessage("Goal:\n- " + long_text(7, 120) + "\nFacts:\n- " + long_text(8, 120))
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.content == FLUSH_PROMPT:
            return AIMessage(NO_REPLY)
        if isinstance(last, ToolMessage):
            return AIMessage("From your memory: " + long_text(len(messages), 220))
        answers.append(1)
        if len(answers) % 3 == 0:
            query = "what did I say before about " + " ".join(str(last.content).split()[:6])
            return AIMessage(
                "", tool_calls=[tool_call("memory_search", query=query, k=10)]
            )
        return AIMessage("Noted. " + long_text(len(answers) + 1000, 220))

    return policy


def call_tokens(call: list[BaseMessage], tools_tokens: int) -> int:
    return count_message_tokens(call) + tools_tokens


def test_forty_long_turns_with_tool_calls_keep_every_call_within_the_window(
    tmp_path: Path,
) -> None:
    s = Settings(workspace=tmp_path / "ws")
    window = s.short_term.context_window
    assert window == 16000
    with Memory(settings=s) as memory:
        scope = "user_alice"
        for i in range(30):  # long memories the searches find
            memory.add(f"Note {i}: " + long_text(100 + i, 540), scope=scope)
        answers: list[int] = []
        model = ScriptedChatModel(policy=long_conversation_policy(answers))
        graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "long", "user_id": "alice"}}
        tools_tokens = schema_tokens(create_memory_tools(memory, scope=scope))
        for turn in range(40):
            graph.invoke(
                {"messages": [HumanMessage(f"Turn {turn}: " + long_text(turn, 700))]}, config
            )
        sizes = [call_tokens(c, tools_tokens) for c in model.calls]
        tool_calls_seen = sum(
            1 for c in model.calls if c and isinstance(c[-1], ToolMessage)
        )
        assert tool_calls_seen >= 12  # the searches really happened
        worst = max(sizes)
        assert worst <= window, f"a model call needs {worst} tokens ({worst / window:.0%})"
        for c in model.calls:
            validate_messages(c)
        state = graph.get_state(config).values
        validate_messages(state["messages"])

"""Every model call fits the context window, inside a turn too.

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
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.core.tokens import count_tokens
from langmem_ext.graph import build_memory_graph
from langmem_ext.short_term.accounting import count_message_tokens
from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY
from langmem_ext.short_term.summarizer import CHECKPOINT_SUMMARY_PROMPT
from langmem_ext.short_term.validity import validate_messages
from langmem_ext.tools import create_memory_tools

WORDS = [
    "harbour",
    "lantern",
    "orchard",
    "granite",
    "violet",
    "compass",
    "meadow",
    "ember",
    "falcon",
    "quartz",
    "river",
    "saddle",
    "thimble",
    "walnut",
    "cobalt",
    "drizzle",
    "juniper",
    "marble",
    "nectar",
    "pepper",
    "ribbon",
    "summit",
    "tundra",
    "velvet",
    "willow",
    "anchor",
    "basalt",
    "cinder",
    "dune",
    "fjord",
    "glacier",
    "hazel",
    "iris",
    "jasper",
    "kettle",
    "lagoon",
    "mosaic",
    "nutmeg",
    "onyx",
    "prairie",
    "quill",
    "raven",
    "sable",
    "timber",
    "umber",
    "vesper",
]


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
            return AIMessage("", tool_calls=[tool_call("memory_search", query=query, k=10)])
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
        tool_calls_seen = sum(1 for c in model.calls if c and isinstance(c[-1], ToolMessage))
        assert tool_calls_seen >= 12  # the searches really happened
        worst = max(sizes)
        assert worst <= window, f"a model call needs {worst} tokens ({worst / window:.0%})"
        for c in model.calls:
            validate_messages(c)
        state = graph.get_state(config).values
        validate_messages(state["messages"])


# -- tool-result budgets -------------------------------------------------------------


def huge_tool_factory(tokens_each: int) -> BaseTool:
    @tool
    def fetch_report(report: str) -> str:
        """Fetch a long report by name."""
        lines = [f"{report} line {i}: " + long_text(i, 20) for i in range(tokens_each // 22)]
        return "\n".join(lines)

    return fetch_report


def calls_tool_then_answers(name: str, parallel: int = 1) -> Any:
    def policy(messages: list[BaseMessage]) -> AIMessage:
        if is_summary_call(messages):
            return AIMessage("Goal:\n- read reports")
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.content == FLUSH_PROMPT:
            return AIMessage(NO_REPLY)
        if isinstance(last, HumanMessage):
            calls = [tool_call(name, report=f"r{i}") for i in range(parallel)]
            return AIMessage("", tool_calls=calls)
        return AIMessage("Read it.")

    return policy


def test_a_huge_tool_result_gets_a_marker_and_fits(fake_memory: Memory) -> None:
    model = ScriptedChatModel(policy=calls_tool_then_answers("fetch_report"))
    graph = build_memory_graph(
        model, fake_memory, checkpointer=InMemorySaver(), tools=[huge_tool_factory(40_000)]
    )
    config = {"configurable": {"thread_id": "t", "user_id": "alice"}}
    graph.invoke({"messages": [HumanMessage("Please read report r0 for me")]}, config)
    result = next(m for m in model.calls[-1] if isinstance(m, ToolMessage))
    text = str(result.content)
    assert count_tokens(text) <= 1500
    assert fake_memory.settings.short_term.tool_result_budget() == 1500
    assert "[truncated:" in text.splitlines()[-1]
    assert text.splitlines()[-2].startswith("r0 line ")  # cut at a line boundary
    limit = fake_memory.settings.short_term.context_window
    assert max(call_tokens(c, 0) for c in model.calls) <= limit


def test_parallel_tool_results_share_the_turn_budget(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.tool_results_turn_max_tokens = 1000
    with Memory(settings=s) as memory:
        model = ScriptedChatModel(policy=calls_tool_then_answers("fetch_report", parallel=3))
        graph = build_memory_graph(
            model, memory, checkpointer=InMemorySaver(), tools=[huge_tool_factory(3000)]
        )
        config = {"configurable": {"thread_id": "t", "user_id": "alice"}}
        graph.invoke({"messages": [HumanMessage("Read reports r0, r1 and r2")]}, config)
        results = [m for m in model.calls[-1] if isinstance(m, ToolMessage)]
        assert len(results) == 3
        assert sum(count_tokens(str(m.content)) for m in results) <= 1000
        assert all("[truncated:" in str(m.content) for m in results)
        validate_messages(model.calls[-1])


def test_memory_search_shows_fewer_whole_hits_within_its_budget(fake_memory: Memory) -> None:
    for i in range(12):
        fake_memory.add(f"Note {i} about harbour lanterns: " + long_text(i, 500))
    search = create_memory_tools(fake_memory)[0]
    assert search.name == "memory_search"
    search.max_result_tokens = 600  # type: ignore[attr-defined]
    text = str(search.invoke({"query": "harbour lanterns note", "k": 10}))
    assert count_tokens(text) <= 600
    assert "[truncated:" in text
    hit_lines = [line for line in text.splitlines() if line[:1].isdigit()]
    assert 1 <= len(hit_lines) <= 10
    for line in hit_lines:  # every hit shown is a whole line: quoted text, then its id
        assert line.rstrip().endswith(")") and "(id m-" in line and '…"' in line


# -- compaction inside a turn --------------------------------------------------------


def test_compaction_inside_a_turn_keeps_tool_pairs_and_the_newest_human_message(
    tmp_path: Path,
) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.context_window = 8000
    s.short_term.checkpoint_ratio = 0.99  # the between-turn checkpoint comes too late
    s.short_term.keep_last_turns = 3
    rounds = {"n": 0}

    def policy(messages: list[BaseMessage]) -> AIMessage:
        if is_summary_call(messages):
            return AIMessage("Goal:\n- compare reports")
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.content == FLUSH_PROMPT:
            return AIMessage(NO_REPLY)
        if isinstance(last, HumanMessage) or (isinstance(last, ToolMessage) and rounds["n"] % 3):
            rounds["n"] += 1
            return AIMessage("", tool_calls=[tool_call("fetch_report", report="q")])
        rounds["n"] += 1
        return AIMessage("Compared. " + long_text(rounds["n"], 150))

    with Memory(settings=s) as memory:
        model = ScriptedChatModel(policy=policy)
        graph = build_memory_graph(
            model, memory, checkpointer=InMemorySaver(), tools=[huge_tool_factory(1400)]
        )
        config = {"configurable": {"thread_id": "t", "user_id": "alice"}}
        tools_tokens = schema_tokens([*create_memory_tools(memory), huge_tool_factory(10)])
        newest = ""
        for turn in range(8):
            newest = f"Turn {turn}: " + long_text(turn, 500)
            graph.invoke({"messages": [HumanMessage(newest)]}, config)
        for c in model.calls:
            assert call_tokens(c, tools_tokens) <= 8000
            validate_messages(c)  # no orphaned ToolMessage, no call without its results
        last_answer_call = [c for c in model.calls if not is_summary_call(c)][-1]
        assert newest in [m.content for m in last_answer_call if isinstance(m, HumanMessage)]
        state = graph.get_state(config).values
        validate_messages(state["messages"])
        assert state["summary"]  # what was removed is in the summary ...
        episodes = memory.list(scope="user_alice", category="episode")
        assert episodes and all(e.source == "checkpoint" for e in episodes)  # ... and stored


def test_one_enormous_human_message_is_clipped_with_a_marker(fake_memory: Memory) -> None:
    model = ScriptedChatModel(policy=lambda messages: AIMessage("ok"))
    graph = build_memory_graph(model, fake_memory, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t", "user_id": "alice"}}
    huge = "Please read this. " + long_text(1, 30_000)
    graph.invoke({"messages": [HumanMessage(huge)]}, config)
    tools_tokens = schema_tokens(create_memory_tools(fake_memory))
    sent = model.calls[-1]
    assert call_tokens(sent, tools_tokens) <= fake_memory.settings.short_term.context_window
    human = next(m for m in sent if isinstance(m, HumanMessage))
    assert str(human.content).startswith("Please read this.")
    assert "[truncated:" in str(human.content)
    state = graph.get_state(config).values
    assert huge in [m.content for m in state["messages"]]  # the state keeps it whole


# -- the same guarantee in MemoryMiddleware (create_agent) ----------------------------


def test_middleware_keeps_every_agent_call_within_the_window(fake_memory: Memory) -> None:
    from langchain.agents import create_agent

    from langmem_ext.middleware import MemoryMiddleware

    answers: list[int] = []

    def policy(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage("The report says: " + long_text(len(messages), 200))
        answers.append(1)
        if len(answers) % 3 == 0:
            return AIMessage("", tool_calls=[tool_call("fetch_report", report="q")])
        return AIMessage("Noted. " + long_text(len(answers), 200))

    report = huge_tool_factory(20_000)
    model = ScriptedChatModel(policy=policy)
    agent = create_agent(
        model,
        tools=[report],
        system_prompt="You are helpful.",
        middleware=[MemoryMiddleware(fake_memory)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "m", "user_id": "alice"}}
    for turn in range(30):
        agent.invoke({"messages": [HumanMessage(f"Turn {turn}: " + long_text(turn, 700))]}, config)
    tools_tokens = schema_tokens([report])
    window = fake_memory.settings.short_term.context_window
    worst = max(call_tokens(c, tools_tokens) for c in model.calls)
    assert worst <= window, f"an agent call needs {worst} tokens ({worst / window:.0%})"
    for c in model.calls:
        validate_messages(c)
    results = [m for c in model.calls for m in c if isinstance(m, ToolMessage)]
    assert results and all(count_tokens(str(m.content)) <= 1500 for m in results)
    state = agent.get_state(config).values
    validate_messages(state["messages"])
    assert state.get("memory_summary")  # removed turns are summarised ...
    assert fake_memory.list(scope="user_alice", category="episode")  # ... and stored
    humans = [m for m in state["messages"] if isinstance(m, HumanMessage)]
    assert str(humans[-1].content).startswith("Turn 29: ")  # the newest turn is kept

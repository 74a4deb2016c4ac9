"""Give an existing LangGraph agent long-term memory — the five lines.

Your agent already exists; memory adds the memory tools (save → confirm, search,
get, update, forget) and, optionally, ``MemoryMiddleware``, which recalls relevant
memories into the system message before each model call::

    memory = Memory("./memory-ws")
    agent = create_agent(
        model,
        tools=[*my_tools, *create_memory_tools(memory)],
        middleware=[MemoryMiddleware(memory)],
    )

Part 2 does the same in a hand-built ``StateGraph`` with ``ToolNode``.

Runs offline with a scripted model standing in for the LLM (``--model
ollama:qwen2.5:7b`` to use a real one)::

    python examples/add_memory_to_my_agent.py
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.graph import resolve_model
from langmem_ext.middleware import MemoryMiddleware
from langmem_ext.tools import create_memory_tools

PENDING_ID = re.compile(r"\bp-[0-9a-f]{10}\b")


@tool
def weather(city: str) -> str:
    """The weather in a city (the agent's existing tool)."""
    return f"Sunny in {city}, 22 °C."


def _answer_from(context: str) -> AIMessage:
    if "vegetarian" in context:
        return AIMessage("From your memory: your sister Mei is vegetarian.")
    return AIMessage("I searched your memory but found nothing about your sister.")


def scripted_policy(messages: list[BaseMessage]) -> AIMessage:
    """What a tool-calling LLM would do here, written down so the example runs offline."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        if last.name == "memory_save" and (m := PENDING_ID.search(str(last.content))):
            return AIMessage(f"I'd remember that — shall I save it? ({m.group(0)})")
        if last.name == "memory_confirm":
            return AIMessage("Saved to your memory.")
        if last.name == "memory_search":
            return _answer_from(str(last.content))
        return AIMessage(str(last.content))
    text = str(last.content)
    system = str(messages[0].content) if isinstance(messages[0], SystemMessage) else ""
    if text.lower().startswith("remember"):
        fact = text.split(":", 1)[-1].strip()
        return AIMessage("", tool_calls=[tool_call("memory_save", text=fact)])
    if text.lower() in {"yes", "yes please", "确认"}:
        asked = [
            m for m in messages if isinstance(m, AIMessage) and PENDING_ID.search(str(m.content))
        ]
        pid = PENDING_ID.findall(str(asked[-1].content))[-1]
        return AIMessage("", tool_calls=[tool_call("memory_confirm", pending_id=pid)])
    if "weather" in text.lower():
        return AIMessage("", tool_calls=[tool_call("weather", city="Berlin")])
    if "sister" in text.lower():
        if "vegetarian" in system:  # MemoryMiddleware already recalled it
            return _answer_from(system)
        return AIMessage("", tool_calls=[tool_call("memory_search", query=text)])
    return AIMessage("Hello! How can I help?")


def chat(agent: Any, text: str, config: dict[str, Any]) -> str:
    out = agent.invoke({"messages": [HumanMessage(text)]}, config)
    reply = str(out["messages"][-1].content)
    print(f"  user: {text}\n  agent: {reply}")
    return reply


def part1_create_agent(model: BaseChatModel, memory: Memory) -> None:
    print("Part 1: create_agent + memory tools + MemoryMiddleware")
    my_tools = [weather]
    # --- the five lines -----------------------------------------------------
    agent = create_agent(
        model,
        tools=[*my_tools, *create_memory_tools(memory)],
        middleware=[MemoryMiddleware(memory)],
        checkpointer=InMemorySaver(),
    )
    # -------------------------------------------------------------------------
    alice = {"configurable": {"thread_id": "a-1", "user_id": "alice"}}
    chat(agent, "What's the weather in Berlin?", alice)
    chat(agent, "Remember: my sister Mei is vegetarian", alice)
    chat(agent, "yes", alice)
    print(f"  stored for alice: {[e.text for e in memory.list(scope='user_alice')]}")
    # A new thread days later: the middleware recalls the memory before the answer.
    chat(agent, "What should I cook for my sister on Sunday?", {
        "configurable": {"thread_id": "a-2", "user_id": "alice"}})  # fmt: skip
    # Another user shares the agent but not the memory.
    chat(agent, "What should I cook for my sister on Sunday?", {
        "configurable": {"thread_id": "b-1", "user_id": "bob"}})  # fmt: skip


def part2_state_graph(model: BaseChatModel, memory: Memory) -> None:
    print("\nPart 2: a hand-built StateGraph with ToolNode")
    tools = [weather, *create_memory_tools(memory)]
    bound = model.bind_tools(tools)

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    graph = builder.compile(checkpointer=InMemorySaver())
    # The scope of every memory tool call comes from config["configurable"], never
    # from the model's arguments.
    chat(
        graph,
        "Is my sister vegetarian?",
        {"configurable": {"thread_id": "g-1", "user_id": "alice"}},
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="chat model, e.g. ollama:qwen2.5:7b (default: scripted)")
    p.add_argument("--workspace", type=Path, help="keep the workspace here (default: temp)")
    args = p.parse_args()
    model = resolve_model(args.model) if args.model else ScriptedChatModel(policy=scripted_policy)
    with (
        tempfile.TemporaryDirectory(prefix="langmem-agent-") as tmp,
        Memory(args.workspace or Path(tmp) / "ws") as memory,
    ):
        part1_create_agent(model, memory)
        part2_state_graph(model, memory)
    print("done")


if __name__ == "__main__":
    main()

"""A scripted chat model for agent tests (tools, middleware, langmem compatibility)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from langmem_ext.chat_models.scripted import tool_call
from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY

Step = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]


class ScriptedChatModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` whose script steps may look at the conversation.

    A step is an ``AIMessage``, a string, or a callable receiving the messages sent
    to the model (so a step can use the pending id a tool returned). Every request
    is recorded in ``seen``. ``bind_tools`` returns the model itself, so it works in
    ``create_agent`` and hand-built graphs.
    """

    messages: Iterator[Any]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @classmethod
    def of(cls, steps: Sequence[Step]) -> ScriptedChatModel:
        return cls(messages=iter(steps), seen=[])

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        step = next(self.messages)
        if callable(step):
            step = step(messages)
        message = AIMessage(content=step) if isinstance(step, str) else step
        return ChatResult(generations=[ChatGeneration(message=message)])


def call(name: str, args: dict[str, Any], call_id: str = "c1") -> AIMessage:
    """An AI message calling one tool."""
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}]
    )


def last_tool(messages: Sequence[BaseMessage]) -> ToolMessage:
    """The last tool message of a conversation."""
    return next(m for m in reversed(messages) if isinstance(m, ToolMessage))


def pending_id_in(messages: Sequence[BaseMessage]) -> str:
    """The pending id the model saw in the last ``memory_save`` result."""
    for m in reversed(messages):
        if isinstance(m, ToolMessage) and m.name == "memory_save":
            found = re.search(r"\bp-[0-9a-f]+\b", str(m.content))
            if found:
                return found.group(0)
    raise AssertionError("no pending id in the conversation")


_CITED = re.compile(r"\[([^\]\s]+\.md)#\^(m-[0-9a-z]+) \(line (\d+)\)\]")
"""A memory cited in a ``memory_search`` result: ``[path#^m-… (line N)]``."""


def _first_cited(messages: Sequence[BaseMessage]) -> re.Match[str]:
    for m in reversed(messages):
        if isinstance(m, ToolMessage) and m.name == "memory_search":
            found = _CITED.search(str(m.content))
            if found:
                return found
    raise AssertionError("no citation in the conversation")


def citation_in(messages: Sequence[BaseMessage]) -> str:
    """The ``path:line`` of the first memory cited by the last ``memory_search`` result."""
    found = _first_cited(messages)
    return f"{found.group(1)}:{found.group(3)}"


def anchor_in(messages: Sequence[BaseMessage]) -> str:
    """The stable anchor (``path#^m-…``) of the first memory cited by the last search."""
    found = _first_cited(messages)
    return f"{found.group(1)}#^{found.group(2)}"


SAVE_RULES = {
    "我喜欢吃拉面，请记住": "主人喜欢吃拉面",
    "记住：我今天心情不好": "今天心情不好",
    "Remember that my sister Mei is vegetarian": "My sister Mei is vegetarian",
}


def memory_block(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))


def policy(messages: list[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        if "pending" in str(last.content).lower():
            return AIMessage("我先记下了，等你确认。Please confirm.")
        return AIMessage(f"Search says: {last.content}")
    text = str(last.content)
    if text == FLUSH_PROMPT:
        return AIMessage(NO_REPLY)
    if text in SAVE_RULES:
        return AIMessage("", tool_calls=[tool_call("memory_save", text=SAVE_RULES[text])])
    if "吃什么" in text or "vegetarian?" in text:
        block = memory_block(messages)
        if "拉面" in block:
            return AIMessage("你上次说你喜欢吃拉面。")
        if "vegetarian" in block:
            return AIMessage("Yes, Mei is vegetarian.")
        return AIMessage("我搜索过了，但没有找到相关记忆。")
    return AIMessage("好的。")


def cfg(thread: str, user: str = "alice") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}

"""A scripted chat model: a policy function decides each reply, offline.

Used by the demo when no real model is reachable (it says so), by the examples in
CI, and by tests. It is a real ``BaseChatModel``: it binds tools, streams, and
emits tool calls that LangGraph's ``ToolNode`` executes.

Example:
    .. code-block:: python

        from langchain_core.messages import AIMessage
        from langmem_ext.scripted import ScriptedChatModel

        model = ScriptedChatModel(policy=lambda messages: AIMessage("好的"))
        model.invoke("你好").content  # '好的'
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field

Policy = Callable[[list[BaseMessage]], AIMessage]
"""``policy(messages) -> reply``."""

_ids = itertools.count(1)


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    """A tool call dict for ``AIMessage(tool_calls=[...])`` with a fresh id."""
    return {"name": name, "args": args, "id": f"call_{next(_ids)}", "type": "tool_call"}


class ScriptedChatModel(BaseChatModel):
    """A chat model whose replies come from a policy function.

    Args:
        policy: Called with the full message list; returns the reply.
    """

    policy: Policy
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    """Every message list the model was called with (for inspection)."""
    bound_tools: list[str] = Field(default_factory=list)
    """Names of the tools last bound."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        reply = self.policy(list(messages))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tool names; the policy decides which to call."""
        self.bound_tools = [getattr(t, "name", str(t)) for t in tools]
        return self  # type: ignore[return-value]


__all__ = ["Policy", "ScriptedChatModel", "tool_call"]

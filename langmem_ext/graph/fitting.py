"""Every model call of the memory graph fits the context window, inside a turn too.

- :func:`budget_tool_calls` wraps each call of the graph's ``ToolNode`` (memory
  tools and the user's tools alike): a result is cut to its share of the per-result
  and per-turn budgets, with a ``[truncated …]`` marker
  (:mod:`langmem_ext.short_term.budget`).
- :class:`~langmem_ext.short_term.fitter.CallFitter` (the one window fitter, shared
  with :class:`~langmem_ext.MemoryMiddleware`) runs before each answer-model call.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.short_term.budget import budget_result
from langmem_ext.short_term.fitter import CallFitter, FittedCall

logger = logging.getLogger(__name__)

ToolHandler = Callable[[ToolCallRequest], ToolMessage | Command[Any]]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


def budget_tool_calls(
    settings: ShortTermSettings,
) -> tuple[
    Callable[[ToolCallRequest, ToolHandler], ToolMessage | Command[Any]],
    Callable[[ToolCallRequest, AsyncToolHandler], Awaitable[ToolMessage | Command[Any]]],
]:
    """``(wrap_tool_call, awrap_tool_call)`` for a ``ToolNode`` that budgets results.

    Args:
        settings: Per-result and per-turn budgets (``tool_result_budget()``,
            ``tool_turn_budget()``).

    Returns:
        The sync and async wrappers.

    Example:
        .. code-block:: python

            wrap, awrap = budget_tool_calls(memory.settings.short_term)
            node = ToolNode(tools, wrap_tool_call=wrap, awrap_tool_call=awrap)
    """

    def wrap(request: ToolCallRequest, handler: ToolHandler) -> ToolMessage | Command[Any]:
        return budget_result(handler(request), request.state, settings)

    async def awrap(
        request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolMessage | Command[Any]:
        return budget_result(await handler(request), request.state, settings)

    return wrap, awrap


__all__ = ["CallFitter", "FittedCall", "budget_tool_calls"]

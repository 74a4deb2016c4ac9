"""Every model call of the memory graph fits the context window, inside a turn too.

- :func:`budget_tool_calls` wraps each call of the graph's ``ToolNode`` (memory
  tools and the user's tools alike): a result is cut to its share of the per-result
  and per-turn budgets, with a ``[truncated …]`` marker
  (:mod:`langmem_ext.short_term.budget`).
- :class:`CallFitter` runs before each answer-model call: when system prompt,
  summary, memory block, history and tool schemas exceed ``context_window -
  reserved_output_tokens``, it compacts with the one checkpoint routine
  (:func:`~langmem_ext.short_term.checkpoint.make_checkpoint`: tool calls stay with
  their results, the newest human turn stays verbatim, what is removed goes into
  the summary and the episode), and clips what still does not fit. In
  ``short_term.mode="hybrid_window"`` the history it sends is the hybrid window
  (:func:`~langmem_ext.short_term.window.settings_window`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langmem_ext.config import ShortTermSettings
from langmem_ext.short_term.accounting import count_message_tokens
from langmem_ext.short_term.budget import budget_result, clip_to_fit
from langmem_ext.short_term.checkpoint import Checkpoint, make_checkpoint, summary_message
from langmem_ext.short_term.summarizer import Summarizer
from langmem_ext.short_term.validity import safe_cut_index
from langmem_ext.short_term.window import is_window_mode, settings_window

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


@dataclass(frozen=True)
class FittedCall:
    """The messages of one model call, fitted to the window.

    Attributes:
        messages: What to send.
        checkpoint: The compaction made inside the turn, or ``None``.
        clipped: Whether a message had to be clipped (after compaction).
    """

    messages: list[BaseMessage]
    checkpoint: Checkpoint | None
    clipped: bool


class CallFitter:
    """Fits an answer call into ``context_window - reserved_output_tokens``.

    Args:
        settings: Window, reserve, checkpoint settings.
        summarizer: The summariser of the checkpoint routine.
        tools_tokens: Tokens of the bound tools' schemas, sent with every call.
    """

    def __init__(
        self, settings: ShortTermSettings, summarizer: Summarizer, tools_tokens: int = 0
    ) -> None:
        self.settings = settings
        self.summarizer = summarizer
        self.tools_tokens = tools_tokens

    @property
    def limit(self) -> int:
        """Tokens the messages of one call may use (tool schemas already taken off)."""
        return self.settings.call_budget() - self.tools_tokens

    def fit(
        self,
        system: Sequence[BaseMessage],
        history: Sequence[BaseMessage],
        summary: str | None,
        summaries: Mapping[str, str] | None = None,
    ) -> FittedCall:
        """The call to send: compacted inside the turn and clipped when needed.

        Args:
            system: The system prompt and the memory block (sent first; the
                summary message goes after the first of them).
            history: The conversation (no system messages).
            summary: The running summary, or ``None``.
            summaries: Per-message summaries by message id, for the
                ``[Summary]`` lines of the hybrid window (``hybrid_window`` mode).

        Returns:
            The messages to send, and the checkpoint to apply to the state (its
            removed messages are in its summary).
        """
        call = self._assemble(system, history, summary, summaries)
        if count_message_tokens(call) <= self.limit:
            return FittedCall(call, None, False)
        checkpoint = None
        if history and safe_cut_index(list(history), 1) > 0:
            system_tokens = count_message_tokens(system) + self.tools_tokens
            checkpoint = make_checkpoint(
                history, summary, self.summarizer, self.settings, system_tokens=system_tokens
            )
            if checkpoint.removed_count:
                logger.info(
                    "compacted inside the turn: %d messages moved into the summary",
                    checkpoint.removed_count,
                )
                call = self._assemble(system, checkpoint.kept, checkpoint.summary, summaries)
            else:
                checkpoint = None
        if count_message_tokens(call) <= self.limit:
            return FittedCall(call, checkpoint, False)
        return FittedCall(clip_to_fit(call, self.limit), checkpoint, True)

    def _assemble(
        self,
        system: Sequence[BaseMessage],
        history: Sequence[BaseMessage],
        summary: str | None,
        summaries: Mapping[str, str] | None,
    ) -> list[BaseMessage]:
        head = list(system[:1])
        if summary and summary.strip():
            head.append(summary_message(summary))
        body = [m for m in history if not isinstance(m, SystemMessage)]
        if is_window_mode(self.settings):
            body = settings_window(body, summaries, self.settings)
        return [*head, *system[1:], *body]


__all__ = ["CallFitter", "FittedCall", "budget_tool_calls"]

"""The one window fitter: every model call fits the context window, inside a turn too.

:class:`CallFitter` runs before each model call of the memory graph's answer node
and of :class:`~langmem_ext.MemoryMiddleware`: when system prompt, summary, memory
block, history and tool schemas exceed ``context_window - reserved_output_tokens``,
it compacts with the one checkpoint routine
(:func:`~langmem_ext.short_term.checkpoint.make_checkpoint`: tool calls stay with
their results, the newest human turn stays verbatim, what is removed goes into the
summary), and clips what still does not fit, with a ``[truncated …]`` marker. In
``short_term.mode="hybrid_window"`` the history it sends is the hybrid window
(:func:`~langmem_ext.short_term.window.settings_window`).
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, SystemMessage

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.short_term._steps import arun_steps, run_steps
from langmem_ext.short_term.accounting import count_message_tokens
from langmem_ext.short_term.budget import clip_to_fit
from langmem_ext.short_term.checkpoint import (
    Checkpoint,
    amake_checkpoint,
    make_checkpoint,
    summary_message,
)
from langmem_ext.short_term.summarizer import Summarizer
from langmem_ext.short_term.validity import safe_cut_index
from langmem_ext.short_term.window import Pack, is_window_mode, settings_window

logger = logging.getLogger(__name__)

_CheckpointRequest = tuple[list[BaseMessage], str | None, int]
"""``(history, running summary, system tokens)`` of a compaction."""


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
    """Fits a model call into ``context_window - reserved_output_tokens``.

    The one window fitter of every surface: the memory graph's answer node and
    :class:`~langmem_ext.MemoryMiddleware` both send what it returns.

    Args:
        settings: Window, reserve, checkpoint settings.
        summarizer: The summariser of the checkpoint routine.
        tools_tokens: Tokens of the bound tools' schemas, sent with every call.
        pack: How the hybrid window packs older messages (``"system"``: one system
            message; ``"roles"``: user / assistant messages, for callers that send
            a single system message, see
            :func:`~langmem_ext.short_term.window.build_hybrid_window`).
    """

    def __init__(
        self,
        settings: ShortTermSettings,
        summarizer: Summarizer,
        tools_tokens: int = 0,
        *,
        pack: Pack = "system",
    ) -> None:
        self.settings = settings
        self.summarizer = summarizer
        self.tools_tokens = tools_tokens
        self.pack: Pack = pack

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
        return run_steps(self._fit(system, history, summary, summaries), self._checkpoint)

    async def afit(
        self,
        system: Sequence[BaseMessage],
        history: Sequence[BaseMessage],
        summary: str | None,
        summaries: Mapping[str, str] | None = None,
    ) -> FittedCall:
        """Async :meth:`fit` (the summariser is awaited)."""
        steps = self._fit(system, history, summary, summaries)
        return await arun_steps(steps, self._acheckpoint)

    def _checkpoint(self, request: _CheckpointRequest) -> Checkpoint:
        history, summary, system_tokens = request
        return make_checkpoint(
            history, summary, self.summarizer, self.settings, system_tokens=system_tokens
        )

    async def _acheckpoint(self, request: _CheckpointRequest) -> Checkpoint:
        history, summary, system_tokens = request
        return await amake_checkpoint(
            history, summary, self.summarizer, self.settings, system_tokens=system_tokens
        )

    def _fit(
        self,
        system: Sequence[BaseMessage],
        history: Sequence[BaseMessage],
        summary: str | None,
        summaries: Mapping[str, str] | None,
    ) -> Generator[_CheckpointRequest, Checkpoint, FittedCall]:
        """The body of :meth:`fit` / :meth:`afit`: yields the checkpoint it needs."""
        call = self._assemble(system, history, summary, summaries)
        if count_message_tokens(call) <= self.limit:
            return FittedCall(call, None, False)
        checkpoint = None
        if history and safe_cut_index(list(history), 1) > 0:
            system_tokens = count_message_tokens(system) + self.tools_tokens
            checkpoint = yield (list(history), summary, system_tokens)
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
            body = settings_window(body, summaries, self.settings, pack=self.pack)
        return [*head, *system[1:], *body]


__all__ = ["CallFitter", "FittedCall"]

"""Checkpoints: summary + last N turns once history passes 0.75 × the window.

Two memory modes:

- ``FULL_HISTORY``: no checkpoint yet, the whole history is sent;
- ``SUMMARY_N``: a running summary (as a system message) plus the turns kept
  verbatim at the last checkpoint and everything since.

:func:`plan_context` decides what to send, its estimated tokens and share of the
window, and whether to checkpoint. :func:`make_checkpoint` summarises everything before the last
``keep_last_turns`` turns (rolling the previous summary in) and says which message
ids to remove; if even those turns do not fit under the threshold it keeps fewer,
but never fewer than the latest human turn. :func:`finalize_session` is
``FinalizeSession``: a summary of the whole session plus the last turns.

Leading system messages (a system prompt kept in the history) are never summarised
or removed. Nothing here reads or writes storage.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from langchain_core.messages import BaseMessage, RemoveMessage, SystemMessage

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.short_term._steps import arun_steps, run_steps
from langmem_ext.short_term.accounting import context_ratio, count_message_tokens
from langmem_ext.short_term.content import leading_system_count
from langmem_ext.short_term.summarizer import Summarizer, SummaryResult
from langmem_ext.short_term.validity import safe_cut_index, snap_to_safe_cut, turn_starts

logger = logging.getLogger(__name__)

SUMMARY_HEADER = "Summary of the earlier conversation (older messages were condensed):"
"""First line of the system message that carries the running summary."""


class MemoryMode(StrEnum):
    """How the short-term history is sent to the model."""

    FULL_HISTORY = "FULL_HISTORY"
    """The whole history; no checkpoint has been made."""
    SUMMARY_N = "SUMMARY_N"
    """The running summary plus the most recent turns."""


@dataclass(frozen=True)
class ContextPlan:
    """What to send to the model this turn, and whether to checkpoint first.

    Attributes:
        messages_to_send: Leading system messages, the summary message (in
            ``SUMMARY_N``), then the history.
        mode: ``FULL_HISTORY`` or ``SUMMARY_N``.
        estimated_tokens: Tokens of ``messages_to_send`` plus ``system_tokens``.
        ratio: ``estimated_tokens / context_window``.
        should_checkpoint: True when ``ratio`` exceeds ``checkpoint_ratio`` and a
            checkpoint can remove something (there is history before the latest
            human turn).
        budget_tokens: ``checkpoint_ratio * context_window``, the threshold in tokens.
    """

    messages_to_send: list[BaseMessage]
    mode: MemoryMode
    estimated_tokens: int
    ratio: float
    should_checkpoint: bool
    budget_tokens: int


@dataclass(frozen=True)
class Checkpoint:
    """The result of a checkpoint.

    Attributes:
        summary: The new running summary (previous summary rolled in).
        kept: The messages that stay: leading system messages and the last turns.
        removed_ids: Ids of the summarised messages, oldest first (messages
            without an id cannot be removed from a graph state and are skipped).
        used_fallback: True when any summary in this checkpoint was written by
            the extractive fallback.
        estimated_tokens: Tokens of ``kept`` with the summary message, plus
            ``system_tokens``.
        over_budget: True when even the latest human turn alone does not fit
            under the threshold (nothing more can be removed).
        removed_count: Messages summarised away, with or without an id.
    """

    summary: str
    kept: list[BaseMessage]
    removed_ids: list[str]
    used_fallback: bool
    estimated_tokens: int = 0
    over_budget: bool = False
    removed_count: int = 0

    def remove_messages(self) -> list[RemoveMessage]:
        """``RemoveMessage`` markers for LangGraph's ``add_messages`` reducer.

        Returns:
            One marker per id in ``removed_ids``.

        Example:
            .. code-block:: python

                cp = make_checkpoint(state["messages"], state.get("summary"), summarizer, settings)
                return {"messages": cp.remove_messages(), "summary": cp.summary}
        """
        return [RemoveMessage(id=message_id) for message_id in self.removed_ids]

    def messages_to_send(self) -> list[BaseMessage]:
        """The kept messages with the summary message after the leading system messages."""
        return with_summary(self.kept, self.summary)


def summary_message(summary: str) -> SystemMessage:
    """The system message that carries a running summary.

    Args:
        summary: The running summary.

    Returns:
        A ``SystemMessage`` starting with :data:`SUMMARY_HEADER`.
    """
    return SystemMessage(f"{SUMMARY_HEADER}\n{summary.strip()}")


def with_summary(messages: Sequence[BaseMessage], summary: str | None) -> list[BaseMessage]:
    """Insert the summary message after the leading system messages.

    Args:
        messages: The history (possibly starting with a system prompt).
        summary: The running summary; ``None`` or blank inserts nothing.

    Returns:
        A new list; system messages stay first, as strict providers require.
    """
    if not summary or not summary.strip():
        return list(messages)
    pinned = leading_system_count(messages)
    return [*messages[:pinned], summary_message(summary), *messages[pinned:]]


def checkpoint_budget(settings: ShortTermSettings) -> int:
    """The checkpoint threshold in tokens: ``checkpoint_ratio * context_window``."""
    return int(settings.checkpoint_ratio * settings.context_window)


def plan_context(
    messages: Sequence[BaseMessage],
    *,
    running_summary: str | None,
    settings: ShortTermSettings,
    system_tokens: int = 0,
) -> ContextPlan:
    """Decide what to send this turn and whether a checkpoint is due (``QueryMemoryContext``).

    Args:
        messages: The history in the graph state (after any earlier checkpoint:
            the kept turns and everything since).
        running_summary: The summary of the last checkpoint, or ``None``.
        settings: Window size, checkpoint ratio, kept turns.
        system_tokens: Tokens sent besides ``messages`` (system prompt, recalled
            memories, tool schemas).

    Returns:
        The plan; ``mode`` is ``SUMMARY_N`` exactly when there is a running summary.

    Raises:
        InvalidInputError: If ``system_tokens < 0`` or the window is not positive.

    Example:
        .. code-block:: python

            plan = plan_context(state["messages"], running_summary=state.get("summary"),
                                settings=settings.short_term, system_tokens=prompt_tokens)
            if plan.should_checkpoint:
                ...  # flush, then make_checkpoint(...)
    """
    if system_tokens < 0:
        raise InvalidInputError(f"system_tokens cannot be negative, got {system_tokens}")
    has_summary = bool(running_summary and running_summary.strip())
    to_send = with_summary(messages, running_summary)
    estimated = system_tokens + count_message_tokens(to_send)
    ratio = context_ratio(estimated, settings.context_window)
    over = ratio > settings.checkpoint_ratio
    body = messages[leading_system_count(messages) :]
    removable = bool(body) and safe_cut_index(body, 1) > 0
    if over and not removable:
        logger.warning(
            "context is at %.0f%% of the window but only the latest human turn is left; "
            "a checkpoint cannot shrink it further",
            ratio * 100,
        )
    return ContextPlan(
        messages_to_send=to_send,
        mode=MemoryMode.SUMMARY_N if has_summary else MemoryMode.FULL_HISTORY,
        estimated_tokens=estimated,
        ratio=ratio,
        should_checkpoint=over and removable,
        budget_tokens=checkpoint_budget(settings),
    )


# --- checkpoint steps (shared by the sync and async versions) -------------------------


@dataclass
class _Cutter:
    """The state of one checkpoint while its cut moves later."""

    pinned: list[BaseMessage]
    body: list[BaseMessage]
    settings: ShortTermSettings
    system_tokens: int
    cut: int = 0

    @classmethod
    def start(
        cls,
        messages: Sequence[BaseMessage],
        previous_summary: str | None,
        settings: ShortTermSettings,
        system_tokens: int,
    ) -> _Cutter:
        if system_tokens < 0:
            raise InvalidInputError(f"system_tokens cannot be negative, got {system_tokens}")
        pinned_count = leading_system_count(messages)
        self = cls(
            list(messages[:pinned_count]), list(messages[pinned_count:]), settings, system_tokens
        )
        # Keep as many of the last ``keep_last_turns`` turns as fit next to a summary
        # at least as long as the previous one; later steps correct the estimate.
        self.cut = safe_cut_index(self.body, settings.keep_last_turns)
        while self.tokens(previous_summary) > self.budget:
            later = self.next_cut()
            if later is None:
                break
            self.cut = later
        return self

    @property
    def budget(self) -> int:
        """What summary + kept turns must fit after the checkpoint (the target, not
        the trigger threshold: leaves headroom before the next checkpoint)."""
        s = self.settings
        return int(min(s.checkpoint_target_ratio, s.checkpoint_ratio) * s.context_window)

    def tokens(self, summary: str | None) -> int:
        kept = with_summary([*self.pinned, *self.body[self.cut :]], summary)
        return self.system_tokens + count_message_tokens(kept)

    def next_cut(self) -> int | None:
        """The next safe cut one turn later, never past the latest human turn."""
        for start in turn_starts(self.body):
            if start <= self.cut:
                continue
            cut = snap_to_safe_cut(self.body, start)
            if cut > self.cut:
                return cut
        return None

    def finish(self, summary: str, used_fallback: bool) -> Checkpoint:
        removed = self.body[: self.cut]
        estimated = self.tokens(summary)
        over = estimated > self.budget
        if over:
            logger.warning(
                "after the checkpoint the context still needs %d tokens (threshold %d): "
                "only the summary and the latest human turn are left, and they do not fit",
                estimated,
                self.budget,
            )
        return Checkpoint(
            summary=summary,
            kept=[*self.pinned, *self.body[self.cut :]],
            removed_ids=[m.id for m in removed if m.id],
            used_fallback=used_fallback,
            estimated_tokens=estimated,
            over_budget=over,
            removed_count=len(removed),
        )


def _merge(summary: str | None, result: SummaryResult, used_fallback: bool) -> tuple[str, bool]:
    text = result.text.strip() or (summary or "")
    return text, used_fallback or result.used_fallback


def _checkpoint_steps(
    cutter: _Cutter, previous_summary: str | None
) -> Generator[tuple[list[BaseMessage], str | None], SummaryResult, Checkpoint]:
    """The checkpoint loop without I/O: yields ``(messages, summary so far)`` to
    summarise, receives the summarizer's result, returns the checkpoint. The sync
    and async versions only differ in how they call the summarizer."""
    summary, used_fallback = previous_summary or "", False
    summarized = 0
    while True:
        if cutter.cut > summarized:
            result = yield cutter.body[summarized : cutter.cut], summary or None
            summary, used_fallback = _merge(summary, result, used_fallback)
            summarized = cutter.cut
        if cutter.tokens(summary) <= cutter.budget:
            break
        later = cutter.next_cut()
        if later is None:
            break
        cutter.cut = later
    return cutter.finish(summary, used_fallback)


def make_checkpoint(
    messages: Sequence[BaseMessage],
    previous_summary: str | None,
    summarizer: Summarizer,
    settings: ShortTermSettings,
    *,
    system_tokens: int = 0,
) -> Checkpoint:
    """Summarise everything before the last turns and keep those turns (``Checkpoint``).

    The cut comes from :func:`~langmem_ext.short_term.validity.safe_cut_index` with
    ``settings.keep_last_turns``, so tool calls stay with their results and the
    latest human message is kept. When summary + kept turns still exceed
    ``checkpoint_ratio * context_window``, whole turns move into the summary
    (rolled in with another summarizer call) until they fit or only the latest
    human turn is left.

    Args:
        messages: The history in the graph state, oldest first.
        previous_summary: The running summary of the last checkpoint, or ``None``.
        summarizer: Writes the summary (with a model or the extractive fallback).
        settings: Window size, checkpoint ratio, kept turns.
        system_tokens: Tokens sent besides the history (system prompt, memories).

    Returns:
        The new summary, the kept messages and the ids to remove.

    Raises:
        InvalidInputError: If ``settings.keep_last_turns < 1`` or
            ``system_tokens < 0``.
    """
    cutter = _Cutter.start(messages, previous_summary, settings, system_tokens)
    steps = _checkpoint_steps(cutter, previous_summary)
    return run_steps(steps, lambda part: summarizer.summarize(*part))


async def amake_checkpoint(
    messages: Sequence[BaseMessage],
    previous_summary: str | None,
    summarizer: Summarizer,
    settings: ShortTermSettings,
    *,
    system_tokens: int = 0,
) -> Checkpoint:
    """Async :func:`make_checkpoint` (uses ``summarizer.asummarize``)."""
    cutter = _Cutter.start(messages, previous_summary, settings, system_tokens)
    steps = _checkpoint_steps(cutter, previous_summary)
    return await arun_steps(steps, lambda part: summarizer.asummarize(*part))


def _finalize_cutter(messages: Sequence[BaseMessage], settings: ShortTermSettings) -> _Cutter:
    pinned_count = leading_system_count(messages)
    cutter = _Cutter(list(messages[:pinned_count]), list(messages[pinned_count:]), settings, 0)
    cutter.cut = safe_cut_index(cutter.body, settings.keep_last_turns)
    return cutter


def finalize_session(
    messages: Sequence[BaseMessage],
    previous_summary: str | None,
    summarizer: Summarizer,
    settings: ShortTermSettings,
) -> Checkpoint:
    """Final checkpoint of a session (``FinalizeSession``).

    The summary covers the *whole* session — the previous summary rolled in and
    every message, the kept turns included — so it can be stored as an episode;
    the last ``keep_last_turns`` turns are still kept for a resumed session.

    Args:
        messages: The history in the graph state, oldest first.
        previous_summary: The running summary, or ``None``.
        summarizer: Writes the summary.
        settings: Kept turns, window and ratio.

    Returns:
        The final checkpoint.
    """
    cutter = _finalize_cutter(messages, settings)
    result = summarizer.summarize(cutter.body, previous_summary)
    summary, used_fallback = _merge(previous_summary, result, False)
    return cutter.finish(summary, used_fallback)


async def afinalize_session(
    messages: Sequence[BaseMessage],
    previous_summary: str | None,
    summarizer: Summarizer,
    settings: ShortTermSettings,
) -> Checkpoint:
    """Async :func:`finalize_session`."""
    cutter = _finalize_cutter(messages, settings)
    result = await summarizer.asummarize(cutter.body, previous_summary)
    summary, used_fallback = _merge(previous_summary, result, False)
    return cutter.finish(summary, used_fallback)


__all__ = [
    "SUMMARY_HEADER",
    "Checkpoint",
    "ContextPlan",
    "MemoryMode",
    "afinalize_session",
    "amake_checkpoint",
    "checkpoint_budget",
    "finalize_session",
    "make_checkpoint",
    "plan_context",
    "summary_message",
    "with_summary",
]

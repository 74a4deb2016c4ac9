"""The per-message summaries for the graph's hybrid window, made off the reply path.

In ``short_term.mode="hybrid_window"`` the answer call holds the newest
``window_verbatim`` messages verbatim and the older ones as ``[Summary]`` / ``[Old]``
lines (:func:`~langmem_ext.short_term.window.settings_window`, used by
:class:`~langmem_ext.graph.fitting.CallFitter`). A message that fires one of the
summary triggers (tool output, a list, code, more than 6 sentences or 10 lines,
决定 / 下一步 / TODO / 优先 …) gets a structured summary of at most
``summary_max_chars`` characters, stored in the state key ``message_summaries``
(by message id) and so saved with the thread's checkpoint:

- after the final answer of a turn, :meth:`MessageSummaries.after` queues one job
  on the memory's background :class:`~langmem_ext.graph.bookkeeping.TurnWriter` that
  summarises the turn's new trigger messages (with the summary model, or the
  deterministic extractive summary without one or when it fails);
- the next turn's ``preflight_recall`` waits for the scope's jobs anyway;
  :meth:`MessageSummaries.before` then moves the finished summaries into the state.

A summary not stored yet when a message is condensed (the process stopped in
between) is made extractively at that point
(:func:`~langmem_ext.short_term.window.with_fallback_summaries`). Without a
background writer the summaries are made in the answer step.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.graph.bookkeeping import TurnWriter
from langmem_ext.graph.nodes import BACKGROUND_DEFER, Node
from langmem_ext.graph.state import MemoryState
from langmem_ext.memory.scoping import scope_from_config
from langmem_ext.short_term.summarizer import Summarizer
from langmem_ext.short_term.window import summaries_due

logger = logging.getLogger(__name__)


class MessageSummaries:
    """Makes the per-message summaries of a graph's threads and hands them to the state.

    Args:
        settings: ``summary_max_chars`` and the window settings.
        model: The summary model; ``None`` for the extractive summary.
        writer: The background writer; ``None`` summarises in the answer step.
        default_scope: Scope when a run's config names none.
    """

    def __init__(
        self,
        settings: ShortTermSettings,
        model: BaseChatModel | None = None,
        *,
        writer: TurnWriter | None = None,
        default_scope: str = "main",
    ) -> None:
        self.summarizer = Summarizer(model, message_max_chars=settings.summary_max_chars)
        self.writer = writer
        self.default_scope = default_scope
        self._lock = threading.Lock()
        self._ready: dict[tuple[str, str], dict[str, str]] = {}
        self._busy: set[str] = set()

    def _key(self, config: RunnableConfig) -> tuple[str, str]:
        thread = ((config or {}).get("configurable") or {}).get("thread_id") or "default"
        return scope_from_config(config, self.default_scope), str(thread)

    def summarize(self, messages: Sequence[BaseMessage]) -> dict[str, str]:
        """Summaries of ``messages`` by id (model, or extractive fallback)."""
        out: dict[str, str] = {}
        for message in messages:
            assert message.id is not None  # summaries_due keeps messages with an id
            out[message.id] = self.summarizer.summarize_message(message).text
        return out

    def after(self, node: Node) -> Node:
        """``node`` (the answer step's final node), then queue this turn's summaries."""

        def after_answer(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
            update = node(state, config)
            stored = state.get("message_summaries") or {}
            with self._lock:
                due = [
                    m
                    for m in summaries_due(state.get("messages", []), stored)
                    if m.id not in self._busy
                ]
                self._busy.update(m.id for m in due if m.id)
            if not due:
                return update
            if self.writer is None:
                self._done(due)
                return {**update, "message_summaries": self.summarize(due)}
            key = self._key(config)

            def job() -> None:
                try:
                    made = self.summarize(due)
                    with self._lock:
                        self._ready.setdefault(key, {}).update(made)
                finally:
                    self._done(due)

            self.writer.submit(key[0], job, defer=BACKGROUND_DEFER)
            return update

        return after_answer

    def before(self, node: Node) -> Node:
        """``node`` (``preflight_recall``, which waits for the scope's jobs), then
        move the thread's finished summaries into the state."""

        def with_summaries(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
            update = node(state, config)
            with self._lock:
                ready = self._ready.pop(self._key(config), None)
            if ready:
                logger.debug("%d message summaries stored", len(ready))
                update = {**update, "message_summaries": ready}
            return update

        return with_summaries

    def _done(self, messages: Sequence[BaseMessage]) -> None:
        with self._lock:
            self._busy.difference_update(m.id for m in messages if m.id)


__all__ = ["MessageSummaries"]

"""The hybrid short-term window.

The last ``size`` (15) messages go to the model: the oldest ``size - verbatim``
(10) as one line each — ``[Summary]`` with the message's stored structured
summary, or ``[Old]`` with a truncated copy when it has none — and the newest
``verbatim`` (5) unchanged.

The verbatim part is where strict providers look: it never begins with tool
results cut off from their call. When its boundary would split a tool-call group,
the group is condensed whole if it belongs to an earlier turn and kept whole if it
belongs to the current one; the boundary always reaches back to the latest human
message. The list the model gets is therefore valid whenever the input is.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.short_term.content import (
    clip,
    leading_system_count,
    message_text,
    one_line,
    render_message,
    role_label,
)
from langmem_ext.short_term.extractive import extractive_message_summary
from langmem_ext.short_term.summarizer import needs_message_summary
from langmem_ext.short_term.validity import latest_human_index, next_safe_cut, snap_to_safe_cut

logger = logging.getLogger(__name__)

SUMMARY_MARK = "[Summary]"
"""Prefix of a line carrying a message's stored summary."""
OLD_MARK = "[Old]"
"""Prefix of a line carrying a truncated copy of a message without a summary."""
WINDOW_HEADER = (
    "Earlier in this conversation (oldest first; [Summary] = structured summary of a "
    "message, [Old] = shortened original):"
)
"""First line of the packed block of older messages."""

Pack = Literal["system", "roles"]


def render_old_line(
    message: BaseMessage,
    summaries: Mapping[str, str] | None = None,
    *,
    max_chars: int = 280,
) -> str:
    """Render one older message as a ``[Summary]`` or ``[Old]`` line.

    Args:
        message: The message.
        summaries: Stored summaries by message id.
        max_chars: Cap of the summary or truncated text (after the role).

    Returns:
        ``[Summary] User: Goal: ... | Facts: ...`` when the message has a stored
        summary (its lines joined with `` | ``), else ``[Old] AI: first words…``.
    """
    summary = summaries.get(message.id) if summaries and message.id else None
    if summary and summary.strip():
        lines = (one_line(line) for line in summary.splitlines() if line.strip())
        return f"{SUMMARY_MARK} {role_label(message)}: {clip(' | '.join(lines), max_chars)}"
    return f"{OLD_MARK} {render_message(message, max_chars=max_chars)}"


def build_hybrid_window(
    messages: Sequence[BaseMessage],
    summaries: Mapping[str, str] | None = None,
    *,
    size: int = 15,
    verbatim: int = 5,
    pack: Pack = "system",
    line_max_chars: int = 280,
) -> list[BaseMessage]:
    """Build the hybrid window: older messages condensed, newest ones verbatim.

    Leading system messages of ``messages`` (a system prompt) are kept first and
    not counted. Of the remaining history, the last ``size`` messages are used:

    - the newest ``verbatim`` unchanged, with the boundary moved so that no
      tool-call group (an ``AIMessage`` with tool calls and all of its
      ``ToolMessage`` results) is split: a group from an earlier turn is
      condensed whole (the verbatim part shrinks), a group of the current turn
      is kept whole (the verbatim part grows). The latest ``HumanMessage`` is
      always verbatim, even when it is older than ``size`` messages;
    - the others as ``[Summary]`` lines (stored summary, by message id) or
      ``[Old]`` lines (truncated text), packed into one ``SystemMessage``
      (``pack="system"``) or into ``HumanMessage`` / ``AIMessage`` blocks that keep
      each line's role (``pack="roles"``; consecutive lines of one role share a
      message, tool results count as the AI's side, and the first block is a
      ``HumanMessage`` carrying the header).

    Args:
        messages: The full history, oldest first.
        summaries: Stored per-message summaries, by message id.
        size: Messages in the window (15).
        verbatim: Newest messages kept verbatim (5).
        pack: ``"system"`` or ``"roles"``, see above.
        line_max_chars: Cap of each ``[Summary]`` / ``[Old]`` line's text.

    Returns:
        The messages to send. Valid for strict providers whenever ``messages`` is
        (see :func:`~langmem_ext.short_term.validity.validate_messages`).

    Raises:
        InvalidInputError: If ``size < 1``, ``verbatim < 0`` or ``verbatim > size``.

    Example:
        .. code-block:: python

            window = build_hybrid_window(state["messages"], summaries, size=15, verbatim=5)
            response = model.invoke([system_prompt, *window])
    """
    if size < 1:
        raise InvalidInputError(f"window size must be at least 1, got {size}")
    if not 0 <= verbatim <= size:
        raise InvalidInputError(f"verbatim must be between 0 and size={size}, got {verbatim}")
    if pack not in ("system", "roles"):
        raise InvalidInputError(f"pack must be 'system' or 'roles', got {pack!r}")

    pinned_count = leading_system_count(messages)
    pinned = list(messages[:pinned_count])
    history = list(messages[pinned_count:])
    n = len(history)

    wanted = max(0, n - verbatim)
    latest_human = latest_human_index(history)
    start = snap_to_safe_cut(history, wanted)
    if start != wanted:
        later = next_safe_cut(history, wanted)
        if latest_human is not None and later <= latest_human:
            start = later  # the split group is from an earlier turn: condense it whole
    if latest_human is not None and latest_human < start:
        start = snap_to_safe_cut(history, latest_human)
    if start < n - verbatim:
        logger.debug("verbatim part extended from %d to %d messages", verbatim, n - start)

    older = history[max(0, n - size) : start]
    recent = history[start:]
    if not older:
        return [*pinned, *recent]
    if pack == "system":
        lines = [render_old_line(m, summaries, max_chars=line_max_chars) for m in older]
        block = SystemMessage("\n".join([WINDOW_HEADER, *lines]))
        return [*pinned, block, *recent]
    return [*pinned, *_pack_by_role(older, summaries, line_max_chars), *recent]


def is_window_mode(settings: ShortTermSettings) -> bool:
    """Whether answer calls are built from the hybrid window (``mode="hybrid_window"``)."""
    return settings.mode == "hybrid_window"


def summaries_due(
    messages: Sequence[BaseMessage], summaries: Mapping[str, str] | None = None
) -> list[BaseMessage]:
    """Messages that need a per-message summary and have none.

    Args:
        messages: The history.
        summaries: The stored summaries, by message id.

    Returns:
        The messages with an id for which
        :func:`~langmem_ext.short_term.summarizer.needs_message_summary` is true and
        ``summaries`` holds nothing, oldest first.
    """
    stored = summaries or {}
    return [m for m in messages if m.id and m.id not in stored and needs_message_summary(m)]


def with_fallback_summaries(
    messages: Sequence[BaseMessage],
    summaries: Mapping[str, str] | None,
    settings: ShortTermSettings,
) -> dict[str, str]:
    """``summaries`` completed with extractive ones for older messages still missing one.

    A summary made in the background may not be stored yet (the job has not run, or
    the process restarted in between); a message that would be condensed is then
    summarised here, deterministically, so that its facts are not cut off at the
    ``[Old]`` line's length.

    Args:
        messages: The history.
        summaries: The stored summaries, by message id.
        settings: ``window_verbatim`` and ``summary_max_chars``.

    Returns:
        A new mapping (``summaries`` is not changed).
    """
    out = dict(summaries or {})
    older = messages[: max(0, len(messages) - settings.window_verbatim)]
    for message in summaries_due(older, out):
        assert message.id is not None  # summaries_due keeps messages with an id
        out[message.id] = extractive_message_summary(message, settings.summary_max_chars)
    return out


def settings_window(
    messages: Sequence[BaseMessage],
    summaries: Mapping[str, str] | None,
    settings: ShortTermSettings,
    *,
    pack: Pack = "system",
) -> list[BaseMessage]:
    """The hybrid window of ``settings``, dropping nothing that is in ``messages``.

    :func:`build_hybrid_window` with ``window_messages``, ``window_verbatim`` and
    ``summary_max_chars``, except that messages older than the window are condensed
    too instead of left out: what a checkpoint has not yet moved into the running
    summary stays visible as a ``[Summary]`` / ``[Old]`` line. Summaries missing for
    condensed messages are filled in by :func:`with_fallback_summaries`.

    Args:
        messages: The history (after the last checkpoint), oldest first.
        summaries: Stored per-message summaries, by message id.
        settings: The short-term settings.
        pack: ``"system"`` or ``"roles"`` (see :func:`build_hybrid_window`).

    Returns:
        The messages to send after the system prompt and the running summary.
    """
    return build_hybrid_window(
        messages,
        with_fallback_summaries(messages, summaries, settings),
        size=max(settings.window_messages, len(messages)),
        verbatim=settings.window_verbatim,
        pack=pack,
        line_max_chars=settings.summary_max_chars,
    )


def window_overflow(messages: Sequence[BaseMessage], settings: ShortTermSettings) -> bool:
    """Whether a hybrid-window history is due for a checkpoint by its length.

    True in ``hybrid_window`` mode once the history (system messages left out)
    holds more than ``window_messages + (window_messages - window_verbatim)``
    messages: the checkpoint moves what has left the window into the running
    summary, a batch at a time (one summary call per batch, not per turn).
    """
    if not is_window_mode(settings):
        return False
    history = sum(1 for m in messages if not isinstance(m, SystemMessage))
    slack = settings.window_messages - settings.window_verbatim
    return history > settings.window_messages + slack


def _pack_by_role(
    older: Sequence[BaseMessage], summaries: Mapping[str, str] | None, line_max_chars: int
) -> list[BaseMessage]:
    groups: list[tuple[bool, list[str]]] = []  # (is_human_side, lines)
    for message in older:
        human_side = isinstance(message, HumanMessage | SystemMessage)
        line = render_old_line(message, summaries, max_chars=line_max_chars)
        if groups and groups[-1][0] == human_side:
            groups[-1][1].append(line)
        else:
            groups.append((human_side, [line]))
    if groups[0][0]:
        groups[0][1].insert(0, WINDOW_HEADER)
    else:  # open with the user's side, as some providers require
        groups.insert(0, (True, [WINDOW_HEADER]))
    packed: list[BaseMessage] = []
    for human_side, lines in groups:
        text = "\n".join(lines)
        packed.append(HumanMessage(text) if human_side else AIMessage(text))
    return packed


def window_text(messages: Sequence[BaseMessage]) -> str:
    """Render a window as plain text, e.g. for logging or a text-only prompt.

    Args:
        messages: A window from :func:`build_hybrid_window`.

    Returns:
        One block per message, the packed block as is and verbatim messages as
        ``Role: text`` lines.
    """
    parts: list[str] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            parts.append(message_text(message))
        else:
            parts.append(render_message(message))
    return "\n".join(parts)


__all__ = [
    "OLD_MARK",
    "SUMMARY_MARK",
    "WINDOW_HEADER",
    "Pack",
    "build_hybrid_window",
    "is_window_mode",
    "render_old_line",
    "settings_window",
    "summaries_due",
    "window_overflow",
    "window_text",
    "with_fallback_summaries",
]

"""Structured summaries: Goal / Decision / Todo / Facts.

Two sizes:

- a *checkpoint summary* of everything before the kept turns, rolling the previous
  summary in, within ``max_chars`` (4000 characters by default);
- a *per-message summary* of one long or important message, at most 280
  characters, shown as ``[Summary]`` lines in the hybrid window.

With a chat model, a structured-summary prompt asks it to keep names, numbers and
dates verbatim. Without one — or when it raises or returns nothing — a
deterministic extractive fallback (:mod:`langmem_ext.short_term.extractive`) picks
the decisions, todos, facts, numbers and names verbatim, and says so in the log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.core.tokens import count_tokens, truncate_by_tokens
from langmem_ext.language.sentences import split_sentences
from langmem_ext.language.summary_cues import SUMMARY_KEYWORDS_RE
from langmem_ext.short_term._steps import arun_steps, run_steps
from langmem_ext.short_term.content import clip, message_text, render_message
from langmem_ext.short_term.extractive import (
    extractive_message_summary,
    extractive_summary,
    items_from_summary,
    pack_items,
)

logger = logging.getLogger(__name__)

DEFAULT_CHECKPOINT_MAX_CHARS = 4000
"""Default budget of a checkpoint summary, in characters."""
DEFAULT_MESSAGE_MAX_CHARS = 280
"""Budget of a per-message summary, in characters."""

CHECKPOINT_SUMMARY_PROMPT = """\
You keep the running memory of a conversation between a user and an AI assistant.
Merge the previous summary (if any) and the new messages into ONE updated summary.

Use exactly this format; leave out a section only when it has nothing:
Goal:
- what the user is trying to achieve
Decision:
- each decision made (what, and why if stated)
Todo:
- each open task, next step or priority, with owner and deadline if stated
Facts:
- durable facts: preferences, names, numbers, dates, settings, constraints, results

Rules:
- Copy every name, number, date, amount, identifier and quoted phrase verbatim.
- Keep everything from the previous summary that is still true; update what changed;
  drop only what the conversation made obsolete or what was completed.
- Write in the language of the conversation (中文对话用中文写).
- No preamble, no closing remarks. At most {max_chars} characters."""
"""System prompt of a checkpoint summary; ``{max_chars}`` is filled in."""

MESSAGE_SUMMARY_PROMPT = """\
Summarise the single chat message below for a compact conversation log.
Use only the lines that apply, one line each, in this order:
Goal: ...
Decision: ...
Todo: ...
Facts: ...
Copy names, numbers, dates and identifiers verbatim. Write in the message's language.
No preamble. At most {max_chars} characters in total."""
"""System prompt of a per-message summary; ``{max_chars}`` is filled in."""

_LIST_LINE_RE = re.compile(r"^\s*(?:[-*•·+]|\d{1,3}[.)、]|[①-⑳])\s+\S")
_CODE_LINE_RE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import |function |const |let |var |public |private "
    r"|return\b|#include|SELECT |INSERT |UPDATE |CREATE |<[a-zA-Z/][^>]*>)"
    r"|[;{}]\s*$|^\s*[}\])]"
)
_FENCE_STRIP_RE = re.compile(r"^\s*```[\w-]*\s*\n?|\n?\s*```\s*$")
_PROMPT_RESERVE_TOKENS = 600


@dataclass(frozen=True)
class SummaryResult:
    """What a summary call produced.

    Attributes:
        text: The structured summary (may be ``""`` when there was nothing to say).
        used_fallback: True when the extractive fallback wrote it (no model, or
            the model failed or returned nothing).
        error: Why the model was not used, when it failed; ``None`` otherwise.
    """

    text: str
    used_fallback: bool
    error: str | None = None


def needs_message_summary(
    message: BaseMessage, *, max_sentences: int = 6, max_lines: int = 10
) -> bool:
    """Whether one message deserves its own structured summary.

    True for tool output, lists, code, text of more than ``max_sentences``
    sentences or ``max_lines`` lines, and short text with a keyword such as
    决定 / 下一步 / TODO / 优先 / decide / next step / priority.

    Args:
        message: Any message.
        max_sentences: Sentence count above which a summary is needed.
        max_lines: Line count above which a summary is needed.

    Returns:
        Whether to summarise the message.
    """
    text = message_text(message)
    if not text.strip():
        return False
    if isinstance(message, ToolMessage):
        return True
    if "```" in text or SUMMARY_KEYWORDS_RE.search(text):
        return True
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > max_lines:
        return True
    if sum(1 for line in lines if _LIST_LINE_RE.match(line)) >= 2:
        return True
    if sum(1 for line in lines if _CODE_LINE_RE.search(line)) >= 2:
        return True
    return len(split_sentences(text)) > max_sentences


def _strip_fences(text: str) -> str:
    return _FENCE_STRIP_RE.sub("", text.strip()).strip()


def _fit(text: str, max_chars: int, *, compact: bool) -> str:
    """Bring a model's summary within budget, dropping its least important items."""
    text = _strip_fences(text)
    if len(text) <= max_chars:
        return text
    packed = pack_items(items_from_summary(text), max_chars, compact=compact)
    return packed or clip(text, max_chars)


class Summarizer:
    """Writes structured summaries with a chat model, or extractively without one.

    Setup:
        Pass any LangChain ``BaseChatModel`` (``ChatOllama``, ``ChatOpenAI``, ...)
        or nothing for the offline extractive summaries.

    Instantiate:
        .. code-block:: python

            from langchain_ollama import ChatOllama
            from langmem_ext.short_term.summarizer import Summarizer

            summarizer = Summarizer(ChatOllama(model="qwen2.5:7b"), max_chars=4000)
            offline = Summarizer()  # extractive only

    Invoke:
        .. code-block:: python

            result = summarizer.summarize(old_messages, previous_summary=summary)
            result.text  # "Goal:\\n- ...\\nDecision:\\n- ..."
            result.used_fallback  # True when the model was missing or failed

    Async:
        .. code-block:: python

            result = await summarizer.asummarize(old_messages, summary)
    """

    def __init__(
        self,
        model: BaseChatModel | None = None,
        *,
        max_chars: int = DEFAULT_CHECKPOINT_MAX_CHARS,
        message_max_chars: int = DEFAULT_MESSAGE_MAX_CHARS,
        max_input_tokens: int | None = None,
    ) -> None:
        """Create a summarizer.

        Args:
            model: Chat model used for summaries; ``None`` means extractive only.
            max_chars: Budget of a checkpoint summary, in characters.
            message_max_chars: Budget of a per-message summary, in characters.
            max_input_tokens: When set, the transcript sent to the model per call
                stays under this many tokens: longer stretches are summarised in
                chunks, rolling the summary through them.

        Raises:
            InvalidInputError: If a budget is too small to hold a summary.
        """
        if max_chars < 40:
            raise InvalidInputError(f"max_chars must be at least 40, got {max_chars}")
        if message_max_chars < 40:
            raise InvalidInputError(
                f"message_max_chars must be at least 40, got {message_max_chars}"
            )
        if (
            max_input_tokens is not None
            and max_input_tokens < max_chars + _PROMPT_RESERVE_TOKENS + 200
        ):
            raise InvalidInputError(
                f"max_input_tokens={max_input_tokens} leaves no room for the transcript: "
                f"use at least {max_chars + _PROMPT_RESERVE_TOKENS + 200} or a smaller max_chars"
            )
        self.model = model
        self.max_chars = max_chars
        self.message_max_chars = message_max_chars
        self.max_input_tokens = max_input_tokens

    # --- prompts --------------------------------------------------------------------

    def _chunks(self, messages: Sequence[BaseMessage]) -> list[str]:
        """Transcript chunks, each within the model's input budget."""
        lines = [render_message(m) for m in messages]
        if self.max_input_tokens is None:
            return ["\n".join(lines)]
        budget = self.max_input_tokens - _PROMPT_RESERVE_TOKENS - self.max_chars
        chunks: list[str] = []
        current: list[str] = []
        used = 0
        for line in lines:
            tokens = count_tokens(line) + 1
            if tokens > budget:
                line = truncate_by_tokens(line, budget - 2) + "…"
                tokens = budget
            if current and used + tokens > budget:
                chunks.append("\n".join(current))
                current, used = [], 0
            current.append(line)
            used += tokens
        if current:
            chunks.append("\n".join(current))
        return chunks

    def _checkpoint_prompt(self, transcript: str, previous: str | None) -> list[BaseMessage]:
        parts = []
        if previous and previous.strip():
            parts.append(f"<previous_summary>\n{previous.strip()}\n</previous_summary>")
        parts.append(f"<new_messages>\n{transcript}\n</new_messages>")
        parts.append("Write the updated summary now.")
        return [
            SystemMessage(CHECKPOINT_SUMMARY_PROMPT.format(max_chars=self.max_chars)),
            HumanMessage("\n\n".join(parts)),
        ]

    def _message_prompt(self, message: BaseMessage) -> list[BaseMessage]:
        return [
            SystemMessage(MESSAGE_SUMMARY_PROMPT.format(max_chars=self.message_max_chars)),
            HumanMessage(f"<message>\n{render_message(message)}\n</message>"),
        ]

    # --- fallbacks ------------------------------------------------------------------

    def _fallback(
        self,
        messages: Sequence[BaseMessage],
        previous_summary: str | None,
        error: Exception | None,
    ) -> SummaryResult:
        self._log_fallback("checkpoint summary", error)
        text = extractive_summary(messages, previous_summary, self.max_chars)
        return SummaryResult(text, True, _describe(error))

    def _message_fallback(self, message: BaseMessage, error: Exception | None) -> SummaryResult:
        self._log_fallback("message summary", error)
        text = extractive_message_summary(message, self.message_max_chars)
        return SummaryResult(text, True, _describe(error))

    def _log_fallback(self, what: str, error: Exception | None) -> None:
        if error is None and self.model is None:
            logger.info("no chat model configured: %s written by the extractive fallback", what)
        else:
            logger.warning(
                "summary model failed (%s): %s written by the extractive fallback",
                _describe(error),
                what,
            )

    # --- checkpoint summaries -------------------------------------------------------

    def summarize(
        self, messages: Sequence[BaseMessage], previous_summary: str | None = None
    ) -> SummaryResult:
        """Summarise ``messages``, rolling ``previous_summary`` in.

        Args:
            messages: The stretch of conversation to summarise, oldest first.
            previous_summary: The running summary so far, if any.

        Returns:
            The summary within ``max_chars``; ``used_fallback`` tells whether the
            extractive fallback wrote it.
        """
        return run_steps(self._summary_steps(messages, previous_summary), self._invoke)

    async def asummarize(
        self, messages: Sequence[BaseMessage], previous_summary: str | None = None
    ) -> SummaryResult:
        """Async :meth:`summarize` (the model is called with ``ainvoke``)."""
        return await arun_steps(self._summary_steps(messages, previous_summary), self._ainvoke)

    def _invoke(self, prompt: list[BaseMessage]) -> BaseMessage:
        assert self.model is not None  # the steps ask for a call only when there is a model
        return self.model.invoke(prompt)

    async def _ainvoke(self, prompt: list[BaseMessage]) -> BaseMessage:
        assert self.model is not None
        return await self.model.ainvoke(prompt)

    def _summary_steps(
        self, messages: Sequence[BaseMessage], previous_summary: str | None
    ) -> Generator[list[BaseMessage], BaseMessage, SummaryResult]:
        """The checkpoint summary without I/O: yields each prompt, receives the
        model's answer (see :mod:`langmem_ext.short_term._steps`)."""
        if self.model is None:
            return self._fallback(messages, previous_summary, None)
        if not messages:
            return SummaryResult((previous_summary or "").strip(), False)
        summary = previous_summary
        try:
            for chunk in self._chunks(messages):
                response = yield self._checkpoint_prompt(chunk, summary)
                summary = self._accept(response, compact=False)
        except Exception as error:
            return self._fallback(messages, previous_summary, error)
        return SummaryResult(summary or "", False)

    def _accept(self, response: BaseMessage, *, compact: bool) -> str:
        budget = self.message_max_chars if compact else self.max_chars
        text = _fit(message_text(response), budget, compact=compact)
        if not text:
            raise ValueError("the model returned an empty summary")
        return text

    # --- per-message summaries ------------------------------------------------------

    def summarize_message(self, message: BaseMessage) -> SummaryResult:
        """Summarise one message in at most ``message_max_chars`` characters.

        Args:
            message: The message (typically one for which
                :func:`needs_message_summary` is true).

        Returns:
            Compact ``Goal: ...`` / ``Decision: ...`` / ``Todo: ...`` /
            ``Facts: ...`` lines.
        """
        return run_steps(self._message_steps(message), self._invoke)

    async def asummarize_message(self, message: BaseMessage) -> SummaryResult:
        """Async :meth:`summarize_message`."""
        return await arun_steps(self._message_steps(message), self._ainvoke)

    def _message_steps(
        self, message: BaseMessage
    ) -> Generator[list[BaseMessage], BaseMessage, SummaryResult]:
        if self.model is None:
            return self._message_fallback(message, None)
        try:
            response = yield self._message_prompt(message)
            return SummaryResult(self._accept(response, compact=True), False)
        except Exception as error:
            return self._message_fallback(message, error)


def _describe(error: Exception | None) -> str | None:
    if error is None:
        return None
    return f"{type(error).__name__}: {error}"


def summarize_message(
    message: BaseMessage,
    model: BaseChatModel | None = None,
    *,
    max_chars: int = DEFAULT_MESSAGE_MAX_CHARS,
) -> str:
    """Structured summary of one message, at most ``max_chars`` characters.

    Args:
        message: The message to summarise.
        model: Chat model to use; ``None`` (or a failing model) uses the
            extractive fallback.
        max_chars: Budget in characters (280 by default).

    Returns:
        Compact ``Goal:`` / ``Decision:`` / ``Todo:`` / ``Facts:`` lines.

    Example:
        .. code-block:: python

            if needs_message_summary(msg):
                summaries[msg.id] = summarize_message(msg, model)
    """
    return Summarizer(model, message_max_chars=max_chars).summarize_message(message).text


async def asummarize_message(
    message: BaseMessage,
    model: BaseChatModel | None = None,
    *,
    max_chars: int = DEFAULT_MESSAGE_MAX_CHARS,
) -> str:
    """Async :func:`summarize_message`."""
    summarizer = Summarizer(model, message_max_chars=max_chars)
    return (await summarizer.asummarize_message(message)).text


class GivenSummary(Summarizer):
    """A summarizer that answers with a summary written elsewhere (by the calling agent).

    The session engine's checkpoint and finalize take it when their caller supplies
    the summary: every call returns that text, so the summary of what is removed
    (and the running summary after it) is exactly the caller's.

    Args:
        text: The summary.

    Raises:
        InvalidInputError: ``text`` is empty.
    """

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("The summary is empty: pass the text of the summary.")
        super().__init__(None)
        self.text = text.strip()

    def summarize(
        self, messages: Sequence[BaseMessage], previous_summary: str | None = None
    ) -> SummaryResult:
        """The given summary (``messages`` and ``previous_summary`` are what it covers)."""
        return SummaryResult(self.text, False)

    async def asummarize(
        self, messages: Sequence[BaseMessage], previous_summary: str | None = None
    ) -> SummaryResult:
        """The given summary."""
        return SummaryResult(self.text, False)


def summarizer_within(model: BaseChatModel | None, settings: ShortTermSettings) -> Summarizer:
    """The checkpoint summariser whose model calls fit one call's budget.

    Every surface that checkpoints (the graph, the middleware, the session API)
    builds its summariser here, so no summary call is sent over the window.

    Args:
        model: The summary model, or ``None`` for the extractive summary only.
        settings: The short-term settings (``call_budget()``).

    Returns:
        A :class:`Summarizer` that chunks its transcript to ``call_budget()``, its
        summary shortened where the window is small so that a chunk still has room
        (at most half of what is left after the prompt); one that sends the
        transcript whole only when the window is too small to chunk at all.
    """
    budget = settings.call_budget()
    room = budget - _PROMPT_RESERVE_TOKENS - 200
    max_chars = min(DEFAULT_CHECKPOINT_MAX_CHARS, max(40, room // 2))
    try:
        return Summarizer(model, max_chars=max_chars, max_input_tokens=budget)
    except InvalidInputError:  # the window is too small for chunked input: send it whole
        return Summarizer(model)


__all__ = [
    "CHECKPOINT_SUMMARY_PROMPT",
    "DEFAULT_CHECKPOINT_MAX_CHARS",
    "DEFAULT_MESSAGE_MAX_CHARS",
    "MESSAGE_SUMMARY_PROMPT",
    "GivenSummary",
    "Summarizer",
    "SummaryResult",
    "asummarize_message",
    "needs_message_summary",
    "summarize_message",
    "summarizer_within",
]

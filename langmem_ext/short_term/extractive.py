"""Deterministic, model-free extraction of the sentences worth keeping.

This is the fallback behind every summary: when no chat
model is configured, or the model fails, a summary is still produced — by picking
sentences, never rewriting them, so names, numbers and dates stay verbatim.

Each sentence (:func:`~langmem_ext.language.sentences.split_sentences`) gets a kind
(goal, decision, todo, fact) and a score from the bilingual (Chinese / English) cues
of :mod:`langmem_ext.language.summary_cues`: decision words (决定 / decided / we
will), todo words (TODO / 下一步 / next step / deadline), priority words (优先 /
priority), durable personal facts (我叫 / 我住在 / my name is / I'm allergic), dates,
numbers and proper names. Summaries are packed into a character budget highest score first,
newer before older on ties, and rendered in the structured format::

    Goal:
    - ...
    Decision:
    - ...
    Todo:
    - ...
    Facts:
    - ...
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from langmem_ext.language.sentences import is_question, normalize_quotes, split_sentences
from langmem_ext.language.summary_cues import (
    DATE_RE,
    DECISION_RE,
    DURABLE_RE,
    NOT_NAMES,
    PRIORITY_RE,
    REQUEST_RE,
    SECTION_NAMES,
    SUMMARY_HEADING_RE,
    TODO_RE,
)
from langmem_ext.short_term.content import clip, message_text, one_line, role_label

Kind = Literal["goal", "decision", "todo", "fact"]

SECTION_ORDER: tuple[Kind, ...] = ("goal", "decision", "todo", "fact")
"""Order of the sections in a rendered summary."""
SECTION_TITLES: dict[Kind, str] = {
    "goal": "Goal",
    "decision": "Decision",
    "todo": "Todo",
    "fact": "Facts",
}
"""Heading of each section."""

ITEM_MAX_CHARS = 300
"""Longest single item in a checkpoint summary (longer sentences are clipped)."""
MAX_GOALS = 3
"""Goals kept in a rolling summary: the first one and the most recent ones."""
GOAL_SCORE = 4.0
"""Score of a goal item: goals are few and orient everything else."""
STRONG_SCORE = 3.0
"""Raw score of a sentence with a decision, todo or durable-fact cue."""

# --- cues ---------------------------------------------------------------------------

NUMBER_RE = re.compile(r"\d")
_QUOTED_RE = re.compile(r"[「『“《][^」』”》]{1,40}[」』”》]")
_WORD_RE = re.compile(r"[A-Za-z][\w'’&.+-]*")
_KEY_RE = re.compile(r"[\W_]+", re.UNICODE)

_ROLE_WEIGHT: dict[str, float] = {"human": 1.0, "ai": 0.6, "tool": 0.4}
MESSAGE_SCAN_CHARS = 20000
"""Characters of a user or AI message read by the extractive fallback."""
TOOL_SCAN_CHARS = 4000
"""Characters of a tool result read by the extractive fallback."""
KEEP_THRESHOLD = 1.0
"""Weighted score an item needs to enter a summary as a scored item."""
CONTEXT_SCORE = 0.1
"""Score of a plain user sentence kept only as context when budget remains."""


@dataclass(frozen=True)
class Item:
    """One sentence chosen for a summary.

    Attributes:
        text: The sentence, verbatim (whitespace collapsed).
        kind: Section it belongs to: goal, decision, todo or fact.
        score: Importance; higher survives a tight budget.
        order: Position in the conversation; higher is newer.
    """

    text: str
    kind: Kind
    score: float
    order: float


# --- scoring ------------------------------------------------------------------------


def has_name(sentence: str) -> bool:
    """Whether the sentence mentions a proper name.

    English: a capitalised word that is not the sentence's first word (or a
    mixed-case / digit-bearing identifier such as ``PostgreSQL`` or ``GPT-4``
    anywhere). Chinese: a quoted term (「…」, “…”, 《…》).
    """
    if _QUOTED_RE.search(sentence):
        return True
    words = _WORD_RE.findall(sentence)
    for index, word in enumerate(words):
        if word in NOT_NAMES:
            continue
        mixed = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
        if mixed or (word[0].isupper() and any(c.isdigit() for c in word)):
            return True
        if index > 0 and word[0].isupper():
            return True
    return False


@dataclass(frozen=True)
class Cues:
    """Which cue patterns a sentence matches (quotes normalised first)."""

    decision: bool
    todo: bool
    priority: bool
    durable: bool
    date: bool
    number: bool


def cues(sentence: str) -> Cues:
    """The :class:`Cues` of one sentence: what :func:`classify` and the flush's fact
    scoring weigh."""
    sentence = normalize_quotes(sentence)
    return Cues(
        decision=bool(DECISION_RE.search(sentence)),
        todo=bool(TODO_RE.search(sentence)),
        priority=bool(PRIORITY_RE.search(sentence)),
        durable=bool(DURABLE_RE.search(sentence)),
        date=bool(DATE_RE.search(sentence)),
        number=bool(NUMBER_RE.search(sentence)),
    )


def classify(sentence: str) -> tuple[Kind, float]:
    """Give a sentence its section and raw (role-independent) score.

    Scoring: decision / todo / durable-fact cue +3, priority +1, date +2, other
    number +1, proper name +1.

    Args:
        sentence: One sentence.

    Returns:
        ``(kind, score)``; kind is ``decision`` when a decision cue matches, else
        ``todo`` for todo or priority cues, else ``fact``.
    """
    cue = cues(sentence)
    score = 0.0
    if cue.decision or cue.todo or cue.durable:
        score += 3.0
    if cue.priority:
        score += 1.0
    if cue.date:
        score += 2.0
    elif cue.number:
        score += 1.0
    if has_name(sentence):
        score += 1.0
    kind: Kind = "decision" if cue.decision else "todo" if (cue.todo or cue.priority) else "fact"
    return kind, score


_ROLES: dict[str, str | None] = {"User": "human", "AI": "ai", "Tool": "tool", "System": None}
"""Extraction role by :func:`role_label`; other message classes count as the AI's."""


def _role(message: BaseMessage) -> str | None:
    return _ROLES.get(role_label(message), "ai")


def goal_candidate(messages: Sequence[BaseMessage]) -> str | None:
    """The first user sentence that asks for something, as a goal.

    Args:
        messages: A stretch of conversation.

    Returns:
        The sentence (clipped to :data:`ITEM_MAX_CHARS`), or ``None``.
    """
    for message in messages:
        if not isinstance(message, HumanMessage):
            continue
        for sentence in split_sentences(message_text(message)):
            if is_question(sentence) or REQUEST_RE.search(sentence):
                return clip(sentence, ITEM_MAX_CHARS)
    return None


def extract_items(
    messages: Sequence[BaseMessage],
    *,
    start_order: float = 0.0,
    include_context: bool = True,
) -> list[Item]:
    """Score every sentence of ``messages`` and keep the ones worth summarising.

    Scores are weighted by role (user 1.0, AI 0.6, tool 0.4; system messages are
    skipped) and kept from :data:`KEEP_THRESHOLD` up. Only the first
    :data:`MESSAGE_SCAN_CHARS` characters of a message (:data:`TOOL_SCAN_CHARS`
    of a tool result) are read, and a sentence is judged by its first
    :data:`ITEM_MAX_CHARS` characters — the part a summary can show. Questions are never kept as
    items (they may become the goal). With ``include_context``, plain user
    sentences are kept too, at :data:`CONTEXT_SCORE`, so leftover budget still
    carries what was said.

    Args:
        messages: The conversation stretch, oldest first.
        start_order: Order given to the first sentence (later ones count up).
        include_context: Keep low-score user sentences as context.

    Returns:
        The items, oldest first.
    """
    items: list[Item] = []
    order = start_order
    for message in messages:
        role = _role(message)
        if role is None:
            continue
        weight = _ROLE_WEIGHT[role]
        limit = TOOL_SCAN_CHARS if role == "tool" else MESSAGE_SCAN_CHARS
        for sentence in split_sentences(message_text(message)[:limit]):
            order += 1
            if is_question(sentence):
                continue
            text = clip(sentence, ITEM_MAX_CHARS)
            kind, raw = classify(text)  # score what the summary will show
            score = raw * weight
            if score >= KEEP_THRESHOLD:
                items.append(Item(text, kind, score, order))
            elif include_context and role == "human":
                items.append(Item(text, "fact", CONTEXT_SCORE, order))
    return items


# --- structured text ----------------------------------------------------------------

_HEADING_ONLY_RE = re.compile(
    rf"^\s*(?:#+\s*)?(?:\*\*)?({SECTION_NAMES})(?:\*\*)?\s*[:：]?\s*(?:\*\*)?\s*$", re.IGNORECASE
)
_HEADING_INLINE_RE = re.compile(
    rf"^\s*(?:[-*•]\s*)?(?:\*\*)?({SECTION_NAMES})(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*(.+)$",
    re.IGNORECASE,
)
_ITEM_MARK_RE = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)、])\s+")
COMPACT_SEPARATOR = "; "


def _kind_of(name: str) -> Kind:
    name = name.casefold()
    if name.startswith(("goal", "目")):
        return "goal"
    if name.startswith(("decision", "决", "決")):
        return "decision"
    if name.startswith(("todo", "to-do", "next", "待")):
        return "todo"
    return "fact"


def parse_structured(text: str) -> list[tuple[Kind, str]]:
    """Read a structured summary back into ``(kind, item)`` pairs.

    Understands the format this module renders (headings ``Goal:`` / ``Decision:``
    / ``Todo:`` / ``Facts:`` with ``- item`` lines, or ``Goal: a; b`` inline),
    ``- Goal: ...`` bullets, the same with Markdown ``##`` or bold headings,
    and Chinese headings. Under a heading line, a bullet such as ``- TODO: x`` is an
    item, not a new section. Lines outside any section — free text from a model —
    become facts.

    Args:
        text: A summary.

    Returns:
        The items in order, each with its section.
    """
    pairs: list[tuple[Kind, str]] = []
    current: Kind = "fact"
    under_heading = False  # after a heading line, "- Todo: x" is an item, not a heading
    for raw in text.splitlines():
        if not raw.strip() or SUMMARY_HEADING_RE.match(raw):
            continue
        heading = _HEADING_ONLY_RE.match(raw)
        if heading:
            current = _kind_of(heading.group(1))
            under_heading = True
            continue
        bullet = bool(_ITEM_MARK_RE.match(raw))
        inline = None if (under_heading and bullet) else _HEADING_INLINE_RE.match(raw)
        if inline:
            current = _kind_of(inline.group(1))
            for part in inline.group(2).split(COMPACT_SEPARATOR):
                part = part.strip()
                if part:
                    pairs.append((current, part))
            continue
        line = _ITEM_MARK_RE.sub("", raw).strip()
        if line:
            pairs.append((current, line))
    return pairs


def items_from_summary(summary: str | None) -> list[Item]:
    """Turn a previous summary into items older than anything new.

    Each item keeps its section and is re-scored with :func:`classify` (at least
    :data:`CONTEXT_SCORE`; goals get the goal score), so an item competes for the
    budget exactly as it did when it was first chosen.

    Args:
        summary: A previous summary, or ``None``.

    Returns:
        The items with negative orders (older than new sentences).
    """
    if not summary or not summary.strip():
        return []
    pairs = parse_structured(summary)
    items: list[Item] = []
    for index, (kind, text) in enumerate(pairs):
        text = clip(one_line(text), ITEM_MAX_CHARS)
        score = GOAL_SCORE if kind == "goal" else max(classify(text)[1], CONTEXT_SCORE)
        items.append(Item(text, kind, score, float(index - len(pairs))))
    return items


def item_key(text: str) -> str:
    """Normalised text used to drop duplicate items (case, spaces, punctuation)."""
    return _KEY_RE.sub("", text.casefold())


def merge_items(items: Iterable[Item]) -> list[Item]:
    """Drop duplicate items, keeping the highest score and the newest order.

    The first occurrence keeps its section, except that a sentence with a strong
    cue (decision, todo, durable fact) is never filed as a goal. At most
    :data:`MAX_GOALS` goals stay goals (the first one and the most recent ones);
    the others become facts and compete for the budget like any fact.

    Args:
        items: Items, oldest first.

    Returns:
        Unique items, oldest first.
    """
    by_key: dict[str, Item] = {}
    for item in items:
        key = item_key(item.text)
        if not key:
            continue
        seen = by_key.get(key)
        if seen is None:
            by_key[key] = item
            continue
        kind = seen.kind
        if kind == "goal" and item.kind != "goal" and item.score >= STRONG_SCORE:
            kind = item.kind  # a decision / todo / durable fact is not demoted to a goal
        elif kind != "goal" and item.kind == "goal" and seen.score < STRONG_SCORE:
            kind = "goal"  # a sentence without a strong cue that is also the goal
        by_key[key] = replace(
            seen, kind=kind, score=max(seen.score, item.score), order=max(seen.order, item.order)
        )
    merged = sorted(by_key.values(), key=lambda it: it.order)
    goals = [it for it in merged if it.kind == "goal"]
    if len(goals) > MAX_GOALS:
        # Older goals (but the first) become facts: still kept while budget allows.
        demote = {id(it) for it in goals[1 : len(goals) - (MAX_GOALS - 1)]}
        merged = [
            replace(it, kind="fact", score=max(classify(it.text)[1], CONTEXT_SCORE))
            if id(it) in demote
            else it
            for it in merged
        ]
    return merged


def pack_items(items: Sequence[Item], max_chars: int, *, compact: bool = False) -> str:
    """Render the most important items that fit in ``max_chars`` characters.

    Items are chosen highest score first (newer first on ties); an item that does
    not fit is skipped and smaller ones may still fit. In ``compact`` mode (the
    ≤ 280-character per-message summary) each section is one line ``Goal: a; b``
    and the last item may be clipped with ``…`` to use the remaining room;
    otherwise sections are headings with ``- item`` lines and items stay whole.

    Args:
        items: Candidate items.
        max_chars: Budget of the whole rendered text.
        compact: One line per section.

    Returns:
        The rendered summary (``""`` when nothing fits or nothing was given).
    """
    if max_chars <= 0:
        return ""
    ranked = sorted(items, key=lambda it: (-it.score, -it.order))
    chosen: list[Item] = []
    used_sections: set[Kind] = set()
    length = -1  # the last line has no trailing newline
    for item in ranked:
        if compact:
            if item.kind in used_sections:
                cost = len(COMPACT_SEPARATOR) + len(item.text)
            else:
                cost = len(SECTION_TITLES[item.kind]) + 2 + len(item.text) + 1
        else:
            cost = len(item.text) + 3
            if item.kind not in used_sections:
                cost += len(SECTION_TITLES[item.kind]) + 2
        if length + cost <= max_chars:
            chosen.append(item)
            used_sections.add(item.kind)
            length += cost
            continue
        if compact:
            room = max_chars - length - (cost - len(item.text))
            if room >= 12:
                chosen.append(replace(item, text=clip(item.text, room)))
                used_sections.add(item.kind)
                break
    return render_items(chosen, compact=compact)


def render_items(items: Sequence[Item], *, compact: bool = False) -> str:
    """Render items in section order (Goal, Decision, Todo, Facts), oldest first.

    Args:
        items: The items to render.
        compact: One line per section (``Goal: a; b``) instead of headings with
            ``- item`` lines.

    Returns:
        The structured text.
    """
    lines: list[str] = []
    for kind in SECTION_ORDER:
        section = sorted((it for it in items if it.kind == kind), key=lambda it: it.order)
        if not section:
            continue
        if compact:
            lines.append(
                f"{SECTION_TITLES[kind]}: " + COMPACT_SEPARATOR.join(it.text for it in section)
            )
        else:
            lines.append(f"{SECTION_TITLES[kind]}:")
            lines.extend(f"- {it.text}" for it in section)
    return "\n".join(lines)


def extractive_summary(
    messages: Sequence[BaseMessage],
    previous_summary: str | None,
    max_chars: int,
) -> str:
    """Summarise ``messages`` without a model, rolling ``previous_summary`` in.

    Args:
        messages: The stretch of conversation to summarise, oldest first.
        previous_summary: The running summary so far, or ``None``.
        max_chars: Budget of the result in characters.

    Returns:
        A structured summary within ``max_chars``; the most important sentences,
        verbatim.
    """
    old = items_from_summary(previous_summary)
    new = extract_items(messages)
    goal = goal_candidate(messages)
    if goal is not None:
        new.insert(0, Item(goal, "goal", GOAL_SCORE, 0.5))
    return pack_items(merge_items([*old, *new]), max_chars)


def extractive_message_summary(message: BaseMessage, max_chars: int) -> str:
    """Summarise one message without a model, in the compact structured format.

    Args:
        message: The message.
        max_chars: Budget in characters (callers pass ``short_term.summary_max_chars``, 280
            by default).

    Returns:
        ``Goal: ...`` / ``Decision: ...`` / ``Todo: ...`` / ``Facts: ...`` lines
        within ``max_chars``. A message without any cue is summarised by its
        first sentences; a tool result is labelled with the tool name.
    """
    items = extract_items([message], include_context=False)
    if isinstance(message, HumanMessage):
        goal = goal_candidate([message])
        if goal is not None:
            items.append(Item(goal, "goal", GOAL_SCORE, 0.0))
    if not items:
        text = message_text(message)
        sentences = split_sentences(text) or (
            [clip(one_line(text), ITEM_MAX_CHARS)] if text.strip() else []
        )
        if isinstance(message, ToolMessage):
            label = f"{message.name} returned" if message.name else "tool returned"
            sentences = [
                f"{label}: {sentences[0]}" if sentences else f"{label} no text",
                *sentences[1:],
            ]
        items = [Item(s, "fact", 1.0 - i * 0.01, float(i)) for i, s in enumerate(sentences[:5])]
    return pack_items(merge_items(items), max_chars, compact=True)


__all__ = [
    "CONTEXT_SCORE",
    "GOAL_SCORE",
    "ITEM_MAX_CHARS",
    "KEEP_THRESHOLD",
    "MAX_GOALS",
    "MESSAGE_SCAN_CHARS",
    "SECTION_ORDER",
    "SECTION_TITLES",
    "STRONG_SCORE",
    "TOOL_SCAN_CHARS",
    "Cues",
    "Item",
    "Kind",
    "classify",
    "cues",
    "extract_items",
    "extractive_message_summary",
    "extractive_summary",
    "goal_candidate",
    "has_name",
    "item_key",
    "items_from_summary",
    "merge_items",
    "pack_items",
    "parse_structured",
    "render_items",
]

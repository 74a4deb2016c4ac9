"""The memory reviewer: PROMOTE / KEEP / DELETE.

A fact is reviewed when its importance reaches ``lifecycle.core_review_at`` (2.5,
a *promotion* review: should it become ``core``?) or falls below
``lifecycle.fact_review_below`` (a *decay* review: is it still worth keeping?).

With a chat model, one run: the model sees the memory and its top-5 related
memories (:meth:`Memory.search <langmem_ext.Memory.search>`), may call the
``search_memories`` tool up to ``lifecycle.review_search_rounds`` times (3 by
default), and ends with one ``review_decision`` call whose arguments
are validated by :class:`ReviewDecision`. Anything else (no decision, a fourth
search, arguments that do not validate, a model error) is logged and the
deterministic fallback decides:

- promotion review: PROMOTE once the memory was boosted on
  ``lifecycle.promote_boost_days`` (3) distinct days and its text was never
  changed (no ``update`` / ``hand-edit`` / supersession in its history), else KEEP;
- decay review: KEEP.

Decisions:

============  =============================  ============================
decision      promotion review               decay review
============  =============================  ============================
PROMOTE       ``core``, moved to ``## Core``  treated as KEEP
KEEP          unchanged                      importance reset to 0.5
DELETE        deleted (history kept)         deleted (history kept)
============  =============================  ============================

``core`` and ``system`` memories are never deleted by a review. A promotion review
that keeps a memory remembers the importance it was reviewed at (``meta``), so the
memory is reviewed again only once boosts raise it further.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from langmem_ext.core.errors import EntryNotFoundError, InvalidInputError, InvalidReviewError
from langmem_ext.memory.lifecycle.decay import NEVER_DECAY, day_of
from langmem_ext.memory.lifecycle.operations import (
    MemoryHost,
    delete_entries,
    last_active,
    promote,
    reset_importance,
)
from langmem_ext.workspace.records import EntryState

if TYPE_CHECKING:
    from langmem_ext.memory.types import SearchHit

logger = logging.getLogger(__name__)

ReviewKind = Literal["promotion", "decay"]
Decision = Literal["PROMOTE", "KEEP", "DELETE"]

RELATED_K = 5
"""Related memories shown with the memory under review (top 5)."""
REVIEWED_KEY = "lifecycle.promotion_reviewed:{entry_id}"
"""``meta`` key: the importance at which a promotion review kept an entry."""
CHANGED_OPS = frozenset({"update", "hand-edit", "superseded", "hand-supersede"})
"""History ops that mean a memory's text was replaced: the fallback does not promote it
(nor a version that replaced an earlier one: the fact changes over time)."""


class ReviewDecision(BaseModel):
    """Your decision on the memory under review. Call this exactly once, at the end."""

    model_config = ConfigDict(title="review_decision")

    decision: Decision = Field(
        description="PROMOTE: make it a core memory; KEEP: keep it; DELETE: forget it."
    )
    reason: str = Field(default="", max_length=1000, description="One sentence: why.")


class SearchMemories(BaseModel):
    """Search the user's other memories before deciding (a few searches at most)."""

    model_config = ConfigDict(title="search_memories")

    query: str = Field(min_length=1, max_length=500, description="What to look for.")


DECISION_TOOL = "review_decision"
SEARCH_TOOL = "search_memories"

PROMOTION_PROMPT = """You review one memory of an assistant about its user: should it \
become a CORE memory, one shown in every conversation from now on?

Core memories are long-term, stable, important facts: the user's name, birthday, \
lasting preferences, important commitments, health facts such as allergies.
Not core: passing states ("tired today"), short-term plans, topics that were merely \
frequent lately but are not lasting facts.

You see the memory, how often it was used, and related memories. You may call \
search_memories to look for more (at most {rounds} searches), for example to check \
whether a newer memory contradicts or replaces it. Then call review_decision once:
PROMOTE (make it core), KEEP (leave it as an ordinary memory) or DELETE (it is wrong \
or obsolete)."""

DECAY_PROMPT = """You review one memory of an assistant about its user that has not \
been used for a long time and is about to be forgotten.

Ask: is it still worth keeping? Has a newer memory replaced it? Would deleting it \
make the assistant forget something important?

You see the memory and related memories. You may call search_memories to look for \
more (at most {rounds} searches). Then call review_decision once: KEEP (it stays, \
with its importance restored) or DELETE (forget it)."""


@dataclass
class ReviewResult:
    """What one review decided and did.

    Attributes:
        entry_id: The memory reviewed.
        scope: Its scope.
        kind: ``promotion`` or ``decay``.
        decision: PROMOTE, KEEP or DELETE as decided.
        action: What was done: ``promoted``, ``kept`` (unchanged), ``reset``
            (importance reset), ``deleted`` or ``none`` (a core memory: nothing).
        text: The memory's text.
        importance_before: Its importance before the review.
        importance_after: Its importance after (``None`` when deleted).
        reason: The model's reason, or the fallback's rule.
        used_fallback: The deterministic fallback decided.
        searches: The queries of the model's searches.
        error: Why the model's answer was not used, when it was not.
    """

    entry_id: str
    scope: str
    kind: ReviewKind
    decision: Decision
    action: str
    text: str
    importance_before: float
    importance_after: float | None
    reason: str
    used_fallback: bool
    searches: list[str] = field(default_factory=list)
    error: str | None = None


def review_kind(memory: MemoryHost, state: EntryState) -> ReviewKind | None:
    """Which review a memory is due for (``None``: none).

    A fact at or above ``core_review_at`` is due a promotion review unless a review
    already kept it at this importance or higher; a fact below ``fact_review_below``
    is due a decay review. Other categories, and superseded versions (history), are
    never reviewed.
    """
    lc = memory.settings.lifecycle
    if state.category != "fact" or state.valid_to is not None:
        return None
    if state.importance < lc.fact_review_below:
        return "decay"
    if state.importance >= lc.core_review_at:
        seen = memory.workspace.ledger.meta.get(REVIEWED_KEY.format(entry_id=state.id))
        try:
            if seen is not None and state.importance <= float(seen) + 1e-9:
                return None
        except ValueError:
            pass
        return "promotion"
    return None


def _when(ts: float | None) -> str:
    return "never" if ts is None else datetime.fromtimestamp(ts).strftime("%Y-%m-%d")


def _render_hits(hits: Sequence[SearchHit]) -> str:
    if not hits:
        return "(nothing found)"
    return "\n".join(
        f'{i}. [{h.id}] ({h.category}, {h.created_at:%Y-%m-%d}) "{h.text}"'
        for i, h in enumerate(hits, 1)
    )


def _related(memory: MemoryHost, text: str, scope: str, exclude: str) -> list[SearchHit]:
    hits = memory.search(text, scope=scope, k=RELATED_K + 1, intent=None)
    return [h for h in hits if h.id != exclude and h.source == "memory"][:RELATED_K]


def _prompt(
    memory: MemoryHost, state: EntryState, text: str, kind: ReviewKind, boost_days: int
) -> list[BaseMessage]:
    rounds = memory.settings.lifecycle.review_search_rounds
    system = (PROMOTION_PROMPT if kind == "promotion" else DECAY_PROMPT).format(rounds=rounds)
    related = _related(memory, text, state.scope, state.id)
    body = (
        f"Memory under review [{state.id}] ({state.category}, importance "
        f"{state.importance:.2f}, saved {_when(state.created_at)}, last used "
        f"{_when(state.last_access)}, boosted on {boost_days} distinct days, "
        f'source {state.source}):\n"{text}"\n\n'
        f"Related memories:\n{_render_hits(related)}"
    )
    return [SystemMessage(system), HumanMessage(body)]


def _ask_model(
    memory: MemoryHost,
    model: BaseChatModel,
    messages: list[BaseMessage],
    scope: str,
    searches: list[str],
) -> ReviewDecision:
    """Run the review conversation; the validated decision (``searches`` gets the
    queries of the searches made).

    Raises:
        InvalidReviewError: No single valid decision within the rounds.
    """
    rounds = memory.settings.lifecycle.review_search_rounds
    bound = model.bind_tools([SearchMemories, ReviewDecision])
    for _ in range(rounds + 1):
        reply = bound.invoke(messages)
        if not isinstance(reply, AIMessage):
            raise InvalidReviewError(f"the model returned {type(reply).__name__}, not a message")
        decisions = [c for c in reply.tool_calls if c.get("name") == DECISION_TOOL]
        if decisions:
            if len(decisions) > 1:
                raise InvalidReviewError("the model made several decisions")
            try:
                return ReviewDecision.model_validate(decisions[0].get("args") or {})
            except ValidationError as e:
                raise InvalidReviewError(f"invalid decision: {e.errors()[0]['msg']}") from e
        calls = [c for c in reply.tool_calls if c.get("name") == SEARCH_TOOL]
        if not calls:
            raise InvalidReviewError("the model answered without calling review_decision")
        if len(searches) >= rounds:
            raise InvalidReviewError(f"the model searched more than {rounds} times")
        messages.append(reply)
        for call in reply.tool_calls:
            messages.append(
                ToolMessage(
                    _run_search(memory, call, scope, searches, rounds),
                    tool_call_id=str(call.get("id") or ""),
                )
            )
    raise InvalidReviewError(f"no decision after {rounds} searches")


def _run_search(memory: MemoryHost, call: Any, scope: str, searches: list[str], rounds: int) -> str:
    if call.get("name") != SEARCH_TOOL:
        return f"Unknown tool {call.get('name')!r}: use {SEARCH_TOOL} or {DECISION_TOOL}."
    if len(searches) >= rounds:
        return f"No searches left: call {DECISION_TOOL} now."
    try:
        query = SearchMemories.model_validate(call.get("args") or {}).query
    except ValidationError as e:
        return f"Invalid search: {e.errors()[0]['msg']}"
    searches.append(query)
    return _render_hits(memory.search(query, scope=scope, k=RELATED_K, intent=None))


def _boost_days(memory: MemoryHost, entry_id: str) -> int:
    return len({day_of(t) for t in memory.workspace.ledger.boosts.times(entry_id)})


def fallback_decision(
    memory: MemoryHost, state: EntryState, kind: ReviewKind
) -> tuple[Decision, str]:
    """The deterministic decision: ``(decision, the rule that gave it)``."""
    if kind == "decay":
        return "KEEP", "no reviewer model: a decayed memory is kept"
    need = memory.settings.lifecycle.promote_boost_days
    days = _boost_days(memory, state.id)
    changed = state.supersedes is not None or any(
        row.op in CHANGED_OPS
        for row in memory.workspace.ledger.entries.history(state.id, state.scope)
    )
    if days >= need and not changed:
        return "PROMOTE", f"boosted on {days} distinct days, never changed"
    why = "its text was changed" if changed else f"boosted on {days} of {need} distinct days"
    return "KEEP", f"not promoted: {why}"


def review_entry(
    memory: MemoryHost,
    entry_id: str,
    *,
    scope: str,
    kind: ReviewKind | None = None,
    model: BaseChatModel | None = None,
) -> ReviewResult:
    """Review one memory and carry out the decision.

    Args:
        memory: The memory.
        entry_id: The memory to review.
        scope: Its scope.
        kind: ``promotion`` or ``decay``; default the review it is due for.
        model: The reviewer chat model; ``None`` uses the deterministic fallback.

    Returns:
        What was decided and done.

    Raises:
        EntryNotFoundError: No such live memory in the scope.
        InvalidInputError: ``kind`` not given and the memory is due for no review.
    """
    st = memory.workspace.ledger.entries.get(str(entry_id).strip())
    if st is None or st.scope != scope:
        raise EntryNotFoundError(f"No memory {entry_id!r} in this scope.")
    kind = kind or review_kind(memory, st)
    if kind is None:
        raise InvalidInputError(
            f"Memory {st.id} ({st.category}, importance {st.importance:.2f}) is due for no "
            "review: pass kind='promotion' or kind='decay' to review it anyway."
        )
    doc = memory.workspace.keyword.docs([st.id]).get(st.id)
    text = doc.text if doc is not None else ""
    answer: ReviewDecision | None = None
    searches: list[str] = []
    error: str | None = None
    if model is not None:
        try:
            messages = _prompt(memory, st, text, kind, _boost_days(memory, st.id))
            answer = _ask_model(memory, model, messages, scope, searches)
        except Exception as e:  # any model failure: the deterministic rule decides
            error = str(e) or type(e).__name__
            logger.warning("reviewer model failed on %s (%s); using the fallback", st.id, error)
    if answer is None:
        decision, reason = fallback_decision(memory, st, kind)
        if error is None:
            logger.info("review of %s without a model: %s (%s)", st.id, decision, reason)
    else:
        decision, reason = answer.decision, answer.reason
    result = ReviewResult(
        entry_id=st.id,
        scope=scope,
        kind=kind,
        decision=decision,
        action="none",
        text=text,
        importance_before=st.importance,
        importance_after=st.importance,
        reason=reason,
        used_fallback=answer is None,
        searches=searches,
        error=error,
    )
    _apply(memory, st, result)
    return result


def _apply(memory: MemoryHost, st: EntryState, result: ReviewResult) -> None:
    """Carry out a decision; fills ``action`` and ``importance_after``."""
    lc = memory.settings.lifecycle
    if st.category in NEVER_DECAY:
        return
    if result.decision == "DELETE":
        deleted, _skipped = delete_entries(memory, [st.id], scope=st.scope)
        if deleted:
            result.action, result.importance_after = "deleted", None
        return
    if result.kind == "promotion":
        if result.decision == "PROMOTE":
            new = promote(memory, st.id, scope=st.scope)
            result.action, result.importance_after = "promoted", new.importance
        else:
            memory.workspace.ledger.meta.set(
                REVIEWED_KEY.format(entry_id=st.id), repr(st.importance)
            )
            result.action = "kept"
        return
    reset_importance(memory, st.id, scope=st.scope, importance=lc.review_keep_importance)
    result.action, result.importance_after = "reset", lc.review_keep_importance


def due_reviews(memory: MemoryHost, scope: str) -> list[tuple[EntryState, ReviewKind]]:
    """The facts of a scope due for a review, least recently active first."""
    out: list[tuple[EntryState, ReviewKind]] = []
    for st in memory.workspace.ledger.entries.of_scope(scope):
        kind = review_kind(memory, st)
        if kind is not None:
            out.append((st, kind))
    out.sort(key=lambda pair: last_active(pair[0]))
    return out


def review_all(
    memory: MemoryHost, scope: str, *, model: BaseChatModel | None = None
) -> list[ReviewResult]:
    """Review every fact of a scope that is due (see :func:`review_kind`)."""
    results: list[ReviewResult] = []
    for st, kind in due_reviews(memory, scope):
        try:
            results.append(review_entry(memory, st.id, scope=scope, kind=kind, model=model))
        except EntryNotFoundError:
            continue  # deleted meanwhile
    return results


__all__ = [
    "DECISION_TOOL",
    "SEARCH_TOOL",
    "Decision",
    "InvalidReviewError",
    "ReviewDecision",
    "ReviewKind",
    "ReviewResult",
    "SearchMemories",
    "due_reviews",
    "fallback_decision",
    "review_all",
    "review_entry",
    "review_kind",
]

"""Background extraction: what one turn changes in long-term memory.

After an answered turn, one model call reads the turn and the memories recalled for
it (with their ids) and returns validated structured output: ``ADD`` a new fact,
``UPDATE`` a memory that changed (a new version supersedes it), ``BOOST`` a memory
that shaped the reply, ``DELETE`` a memory the user says is wrong, or ``SKIP``.
Ids the model was not shown (another scope's, made up) are ignored and logged.

Without a model, or when the model fails or answers something invalid, the
deterministic fallback (:mod:`langmem_ext.language.statements`) finds explicit
first-person statements (我叫 / 我住在 / I moved to / I'm allergic to …); each has a
slot, so a later statement of the same slot supersedes the current memory of that
slot instead of sitting beside it.

Extracted memories are written with ``source="extractor"`` and ``verified=False``;
``lifecycle.extract_mode`` decides what happens to them:

- ``pending`` (the default): each fact is written at once to the day's notes,
  marked ``[unconfirmed]``, and its promotion to long-term memory (a new memory, or
  a new version of the one it replaces) waits for the user as a pending save
  (:meth:`Memory.save_found <langmem_ext.Memory.save_found>`). A fact already
  proposed or stored, or one the turn's own ``memory_save`` or an open pending save
  already covers (the statement's value is in its text), is not proposed again. Unconfirmed notes are never shown to the model as
  memories to update.
- ``direct``: written to long-term memory at once (a fact the scope stores already
  is not written again).
- ``off``: nothing is extracted.

Core and system memories are never deleted by the extractor.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    MessageLikeRepresentation,
    SystemMessage,
    convert_to_messages,
)
from pydantic import BaseModel, Field

from langmem_ext.core.errors import InvalidMessagesError, LangmemError
from langmem_ext.language.statements import ITEMS_SPLIT_RE, Statement, extract_statements
from langmem_ext.memory.extraction.ports import PendingSaves, SaveCall
from langmem_ext.memory.extraction.unconfirmed import is_unconfirmed
from langmem_ext.memory.profile import PROFILE_TARGET
from langmem_ext.short_term.content import message_text

if TYPE_CHECKING:
    from langmem_ext.core.config import Settings
    from langmem_ext.memory.profile import ProfileUpdate
    from langmem_ext.memory.types import MemoryEntry, PendingItem, SearchHit


class MemoryOps(PendingSaves, Protocol):
    """What extraction uses of :class:`~langmem_ext.Memory` (which implements it)."""

    settings: Settings

    def search(
        self, query: str, *, scope: str | None = ..., k: int | None = ..., intent: None = ...
    ) -> list[SearchHit]: ...

    def slot_memories(self, slot: str, *, scope: str | None = ...) -> list[MemoryEntry]: ...

    def add(
        self,
        text: str,
        *,
        scope: str | None = ...,
        category: str = ...,
        created_at: float | None = ...,
        source: str = ...,
        slot: str | None = ...,
    ) -> str: ...

    @property
    def save_found(self) -> SaveCall[PendingItem | None]: ...

    def stores(self, text: str, *, scope: str | None = ...) -> bool: ...

    def list_pending(
        self, *, scope: str | None = ..., thread_id: str | None = ...
    ) -> list[PendingItem]: ...

    def update(
        self,
        entry_id: str,
        text: str,
        *,
        scope: str | None = ...,
        at: float | None = ...,
        source: str | None = ...,
        verified: bool | None = ...,
    ) -> MemoryEntry: ...

    def boost(self, entry_id: str, *, scope: str | None = ..., reason: str = ...) -> float: ...

    def get_entry(self, entry_id: str, *, scope: str | None = ...) -> MemoryEntry: ...

    def delete(self, entry_id: str, *, scope: str | None = ...) -> None: ...

    def upsert_facts(
        self,
        facts: dict[str, Any],
        *,
        scope: str | None = ...,
        source: str = ...,
        thread_id: str | None = ...,
    ) -> ProfileUpdate: ...


logger = logging.getLogger(__name__)

SOURCE = "extractor"
"""``source`` of every memory the extractor writes."""
SAVE_TOOL = "memory_save"
"""The tool a model saves with: what it saved in the turn is not proposed again."""
SHOWN_MEMORIES = 5
"""Related memories shown to the model when the caller passes none."""
PROTECTED = frozenset({"core", "system"})
PROFILE_PREDICATES = {"allergic_to": "allergies", "name": "name"}
"""Statement predicates that are also profile fields (the fallback proposes them)."""

EXTRACTION_PROMPT = """You maintain the long-term memory of an assistant. Read the last \
conversation turn and the memories recalled for it, then decide what changes.

Actions:
- ADD text [category]: a durable fact the user stated (about themself, people, plans, \
preferences). One self-contained sentence in the user's language. category: fact \
(default), core (stable identity facts), episode (an event).
- UPDATE id text: a recalled memory is outdated or wrong; text is the complete new version \
(the old one is kept as superseded).
- BOOST id: a recalled memory really shaped the assistant's reply.
- DELETE id: the user says a recalled memory is wrong and nothing replaces it.
- SKIP: nothing to change (small talk, questions, things already remembered).

Rules: a change over time is not a contradiction ("was nervous ten days ago" and "is \
relaxed now" are both true): UPDATE only when the new state replaces the old. A memory \
counts as used only if it shaped the reply. A correction supersedes the wrong memory \
(UPDATE) or deletes it and adds the right one. Use only the ids listed below."""


class MemoryAction(BaseModel):
    """One change the extractor proposes."""

    op: Literal["ADD", "UPDATE", "BOOST", "DELETE", "SKIP"]
    id: str | None = Field(default=None, description="Memory id, for UPDATE, BOOST and DELETE.")
    text: str | None = Field(default=None, description="The fact, for ADD and UPDATE.")
    category: Literal["fact", "core", "episode"] = "fact"


class ExtractionPlan(BaseModel):
    """The memory actions after one conversation turn."""

    actions: list[MemoryAction] = Field(default_factory=list)


class ExtractionReport(BaseModel):
    """What :meth:`Memory.extract <langmem_ext.Memory.extract>` changed.

    Attributes:
        added: Entry ids written (``direct`` mode).
        updated: Ids of the new versions written by UPDATE or a superseding statement.
        superseded: Ids of the versions they replaced.
        boosted: Entry ids boosted.
        deleted: Entry ids deleted.
        pending: Pending ids queued for confirmation (``pending`` mode).
        ignored: Actions not applied, with the reason.
        used_fallback: The deterministic extractor ran (no model, or it failed).
        error: The model's error, when it failed.
    """

    added: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    boosted: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    pending: list[str] = Field(default_factory=list)
    profile: list[str] = Field(default_factory=list)
    """Profile changes: fields written, or pending ids (safety-critical fields)."""
    ignored: list[str] = Field(default_factory=list)
    used_fallback: bool = False
    error: str | None = None


ACCEPTED_MESSAGES = (
    'BaseMessage objects, (role, text) tuples such as ("user", "我搬到广州了"), '
    'dicts {"role": "user", "content": ...} or strings (user messages), in a list; '
    "or one string (a user message)"
)


def as_messages(messages: str | Sequence[MessageLikeRepresentation]) -> list[BaseMessage]:
    """The conversation as message objects, from any form LangChain reads.

    Args:
        messages: What ``langchain_core.messages.convert_to_messages`` takes
            (``[("user", "我搬到广州了"), ("assistant", "好的")]``, role dicts, message
            objects, strings), or one string: a single user message.

    Returns:
        The messages, in order.

    Raises:
        InvalidMessagesError: anything else (a number, an unknown role, a dict
            without ``content`` ...); the message says what is accepted.
    """
    if isinstance(messages, str):
        return [HumanMessage(messages)]
    try:
        return convert_to_messages(messages)
    except (TypeError, ValueError, NotImplementedError, KeyError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InvalidMessagesError(
            f"Cannot read the messages ({reason}). Pass {ACCEPTED_MESSAGES}."
        ) from None


def saves_of_turn(messages: Sequence[BaseMessage]) -> list[str]:
    """The texts the model saved with ``memory_save`` after the last user message."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    return [
        str((call.get("args") or {}).get("text") or "")
        for m in messages[start + 1 :]
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call.get("name") == SAVE_TOOL
    ]


def last_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The last user message and the assistant's text replies after it."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    if start < 0:
        return []
    turn: list[BaseMessage] = [messages[start]]
    for m in messages[start + 1 :]:
        if isinstance(m, AIMessage) and message_text(m).strip():
            turn.append(AIMessage(message_text(m)))
    return turn


def statements_in(messages: Sequence[BaseMessage]) -> list[Statement]:
    """Statements of the user's (human) messages, oldest first; a later statement of
    the same slot replaces an earlier one within the list."""
    latest: dict[str, Statement] = {}
    for message in messages:
        if isinstance(message, HumanMessage):
            for st in extract_statements(message_text(message)):
                latest.pop(st.slot, None)
                latest[st.slot] = st
    return list(latest.values())


class Extractor:
    """Applies one turn's extraction to a memory (see the module docstring).

    Args:
        memory: The memory service.
        scope: The scope written.
        at: When the turn happened (epoch seconds): new versions are valid from then.
        saved: What the answer model saved in the turn (:func:`saves_of_turn`).
        thread_id: The conversation of the turn (what waits for confirmation is
            proposed there).
    """

    def __init__(
        self,
        memory: MemoryOps,
        scope: str,
        at: float,
        saved: Sequence[str] = (),
        thread_id: str | None = None,
    ) -> None:
        self.memory = memory
        self.scope = scope
        self.at = at
        self.saved = list(saved)
        self.thread_id = thread_id  # where what waits for confirmation is proposed
        self.mode = memory.settings.lifecycle.extract_mode
        self.report = ExtractionReport()

    def run(
        self,
        turn: Sequence[BaseMessage],
        model: BaseChatModel | None,
        shown: Sequence[tuple[str, str]],
    ) -> ExtractionReport:
        """Extract from ``turn`` (:func:`last_turn` of the conversation) with ``model``
        (or the fallback), ``shown`` the ``(id, text)`` memories the model may refer to."""
        turn = list(turn)
        if not turn or self.mode == "off":
            return self.report
        shown = [(i, t) for i, t in shown if not is_unconfirmed(t)]  # a log, not a memory
        plan = self._ask(model, turn, shown) if model is not None else None
        if plan is None:
            self.report.used_fallback = True
            logger.info("extraction without a model: explicit first-person statements")
            for st in statements_in(turn):
                self._profile(st)  # first: the memory written next finds it proposed
                self._statement(st, shown)
            return self.report
        allowed = {i for i, _ in shown}
        for action in plan.actions:
            self._apply(action, allowed)
        return self.report

    def _ask(
        self, model: BaseChatModel, turn: list[BaseMessage], shown: Sequence[tuple[str, str]]
    ) -> ExtractionPlan | None:
        listed = "\n".join(f"- {i}: {t}" for i, t in shown) or "(none)"
        convo = "\n".join(
            f"{'User' if isinstance(m, HumanMessage) else 'Assistant'}: {message_text(m)}"
            for m in turn
        )
        prompt = [
            SystemMessage(EXTRACTION_PROMPT),
            HumanMessage(f"Recalled memories:\n{listed}\n\nLast turn:\n{convo}"),
        ]
        try:
            out = model.with_structured_output(ExtractionPlan, include_raw=True).invoke(prompt)
        except Exception as e:  # the model failed: the fallback decides
            logger.warning("extraction model failed (%s); using the deterministic fallback", e)
            self.report.error = str(e)
            return None
        parsed = out.get("parsed") if isinstance(out, dict) else out
        if not isinstance(parsed, ExtractionPlan):
            err = out.get("parsing_error") if isinstance(out, dict) else None
            logger.warning("extraction answer invalid (%s); using the fallback", err)
            self.report.error = f"invalid extraction answer: {err}"
            return None
        return parsed

    def _ignore(self, why: str) -> None:
        logger.info("extractor action ignored: %s", why)
        self.report.ignored.append(why)

    def _apply(self, action: MemoryAction, allowed: set[str]) -> None:
        if action.op == "SKIP":
            return
        if action.op == "ADD":
            if action.text and action.text.strip():
                self._add(action.text, action.category, None)
            else:
                self._ignore("ADD without text")
            return
        if action.id is None or action.id not in allowed:
            self._ignore(f"{action.op} {action.id!r}: not one of the memories shown")
            return
        try:
            if action.op == "UPDATE":
                if not action.text or not action.text.strip():
                    self._ignore(f"UPDATE {action.id}: no text")
                else:
                    self._update(action.id, action.text)
            elif action.op == "BOOST":
                self.memory.boost(action.id, scope=self.scope, reason="extractor")
                self.report.boosted.append(action.id)
            else:
                self._delete(action.id)
        except LangmemError as e:
            self._ignore(f"{action.op} {action.id}: {e}")

    def _statement(self, st: Statement, shown: Sequence[tuple[str, str]]) -> None:
        """The fallback: a statement supersedes the current memory of its slot (one
        written with that slot, or a shown memory stating the same slot)."""
        if self.mode == "pending" and self._covered(st):
            self._ignore(f"statement {st.text!r}: a pending save already covers it")
            return
        current = self.memory.slot_memories(st.slot, scope=self.scope)
        target = (
            (current[-1].id, current[-1].text)
            if current
            else next(
                ((i, t) for i, t in shown if any(s.slot == st.slot for s in extract_statements(t))),
                None,
            )
        )
        if target is None:
            self._add(st.text, "fact", st.slot)
            return
        entry_id, text = target
        if text == st.text:
            return  # said again: nothing new
        try:
            self._update(entry_id, st.text)
        except LangmemError as e:
            self._ignore(f"statement {st.text!r}: {e}")

    def _covered(self, st: Statement) -> bool:
        """Whether the turn's own save or an open pending memory save (a profile change
        is another kind of proposal) already says what ``st``
        says: it holds the statement's value (``拉面`` in "主人喜欢吃拉面", the model's
        wording of "我喜欢吃拉面，请记住"), whether or not the user answered it yet."""
        value = st.object.strip().casefold()
        if not value:
            return False
        word = re.compile(rf"(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])")
        pending = self.memory.list_pending(scope=self.scope)
        texts = [*self.saved, *(p.text for p in pending if p.target != PROFILE_TARGET)]
        return any(word.search(t.casefold()) for t in texts)

    def _profile(self, st: Statement) -> None:
        """A statement of a profile field also proposes the profile change (pending for
        a safety-critical field). A negated one ("我不再对花生过敏") changes only memory."""
        field = PROFILE_PREDICATES.get(st.predicate)
        if field is None or st.negated:
            return
        value: Any = st.object if field != "allergies" else ITEMS_SPLIT_RE.split(st.object)
        try:
            up = self.memory.upsert_facts(
                {field: value}, scope=self.scope, source=SOURCE, thread_id=self.thread_id
            )
        except LangmemError as e:
            self._ignore(f"profile {field} {st.object!r}: {e}")
            return
        self.report.profile += [c.field for c in up.changed] + [p.id for p in up.pending]

    def _add(
        self, text: str, category: str, slot: str | None, supersedes: str | None = None
    ) -> None:
        said: dict[str, Any] = {
            "scope": self.scope,
            "category": category,
            "source": SOURCE,
            "created_at": self.at,
        }
        try:
            if self.mode == "pending":  # noted now, waits for the user; an update names
                item = self.memory.save_found(  # its old one
                    text, supersedes=supersedes, thread_id=self.thread_id, **said
                )
                if item is None:
                    self._ignore(f"{text[:60]!r}: proposed or stored before")
                else:
                    self.report.pending.append(item.id)
            elif self.memory.stores(text, scope=self.scope):  # a turn extracted again
                self._ignore(f"{text[:60]!r}: stored before")
            else:
                self.report.added.append(self.memory.add(text, slot=slot, **said))
        except LangmemError as e:
            self._ignore(f"{'UPDATE ' + supersedes if supersedes else 'ADD'} {text[:60]!r}: {e}")

    def _update(self, entry_id: str, text: str) -> None:
        if self.mode == "pending":
            self._add(text, "fact", None, supersedes=entry_id)
            return
        new = self.memory.update(
            entry_id, text, scope=self.scope, at=self.at, source=SOURCE, verified=False
        )
        if new.id != entry_id:
            self.report.updated.append(new.id)
            self.report.superseded.append(entry_id)

    def _delete(self, entry_id: str) -> None:
        entry = self.memory.get_entry(entry_id, scope=self.scope)
        if entry.category in PROTECTED:
            self._ignore(f"DELETE {entry_id}: {entry.category} memories are never deleted here")
            return
        self.memory.delete(entry_id, scope=self.scope)
        self.report.deleted.append(entry_id)


def related_memories(
    memory: MemoryOps, scope: str, turn: Sequence[BaseMessage]
) -> list[tuple[str, str]]:
    """The memories shown to the model when the caller recalled none: a search for
    the turn's user message (current versions)."""
    text = next((message_text(m) for m in turn if isinstance(m, HumanMessage)), "")
    if not text.strip():
        return []
    try:
        hits = memory.search(text, scope=scope, k=SHOWN_MEMORIES, intent=None)
    except LangmemError:
        return []
    return [(h.id, h.text) for h in hits if h.source == "memory"]


__all__ = [
    "ACCEPTED_MESSAGES",
    "EXTRACTION_PROMPT",
    "ExtractionPlan",
    "ExtractionReport",
    "Extractor",
    "MemoryAction",
    "MemoryOps",
    "as_messages",
    "last_turn",
    "related_memories",
    "saves_of_turn",
    "statements_in",
]

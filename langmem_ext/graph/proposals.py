"""Which pending saves a conversation proposes to the user, and asking about them.

A pending save belongs to the conversation that proposed it (``thread_id``: the
model's ``memory_save`` / ``profile_update`` call, the background extractor, the
pre-compaction flush of that thread). After each answer the graph records in the
thread's state which of them the reply asks about (``proposed``): the new ones, and
once more those an earlier question left unanswered; it makes sure the reply
really asks, adding a short numbered question when it does not. Only the user's
next message in that thread can answer them (:mod:`langmem_ext.graph.replies`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langmem_ext.core.errors import LangmemError
from langmem_ext.language.replies_vocab import ASKS_RE
from langmem_ext.memory import Memory
from langmem_ext.memory.profile import PROFILE_TARGET, FieldOp, ProfileUpdate
from langmem_ext.memory.safety.facts import safety_facts
from langmem_ext.memory.types import PendingItem, cite
from langmem_ext.short_term.content import message_text

MAX_PROPOSED = 5
"""Pending saves one reply asks about at most (the others are asked in later turns)."""
MAX_ASKS = 2
"""Times a pending save is asked about at most; then it waits in the pending list
(``langmem-ext pending``, the admin UI) until it expires."""

_PENDING_ID = re.compile(r"\bp-[0-9a-f]{10}\b")
_CJK = re.compile(r"[\u3400-\u9fff]")


def thread_pending(memory: Memory, scope: str, thread: str | None) -> list[PendingItem]:
    """The pending saves proposed in this thread, oldest first: one ledger read
    (settling and expiring as :meth:`Memory.list_pending <langmem_ext.Memory.list_pending>`
    does); ``[]`` without a thread."""
    if thread is None:
        return []
    return memory.list_pending(scope=scope, thread_id=thread)


def open_proposals(
    memory: Memory,
    scope: str,
    thread: str | None,
    ids: Sequence[str],
    pending: Sequence[PendingItem] | None = None,
) -> list[PendingItem]:
    """Those of ``ids`` still pending in this thread, in the given order (an item of
    another thread, or resolved or expired meanwhile, drops out).

    Args:
        memory: The memory service.
        scope: The scope.
        thread: The conversation (``None``: nothing is open).
        ids: The proposed ids.
        pending: The thread's pending saves as just read (:func:`thread_pending`);
            ``None`` reads them.
    """
    if thread is None or not ids:
        return []
    mine = thread_pending(memory, scope, thread) if pending is None else pending
    live = {p.id: p for p in mine}
    return [live[i] for i in ids if i in live]


def kept_proposals(
    kept: Sequence[Mapping[str, Any]], ids: Sequence[str], now: float | None = None
) -> list[PendingItem] | None:
    """Those of ``ids`` as the state keeps them (``proposals``: the fields of each
    :class:`~langmem_ext.PendingItem` the asking turn read), in the given order, without
    a ledger read; those whose time ran out meanwhile drop out.

    Args:
        kept: The kept items (``PendingItem`` fields, as JSON).
        ids: The proposed ids.
        now: Epoch seconds to expire at (default now).

    Returns:
        The items, or ``None`` when the state keeps no item for one of the ids (a
        thread checkpointed before the state kept them): read the ledger then.
    """
    by_id = {str(item.get("id")): item for item in kept}
    if any(i not in by_id for i in ids):
        return None
    at = time.time() if now is None else now
    items = [PendingItem.model_validate(by_id[i]) for i in ids]
    return [p for p in items if p.expires_at.timestamp() > at]


@dataclass(frozen=True)
class Proposal:
    """What one answer asks about: the items (numbered in this order), the
    updated ask counts of the thread and every pending save of the thread (ids,
    oldest first)."""

    items: list[PendingItem]
    asks: dict[str, int]
    pending_ids: list[str] = field(default_factory=list)


def next_proposal(
    memory: Memory,
    scope: str,
    thread: str | None,
    asks: Mapping[str, int] | None,
    called: Sequence[str] = (),
) -> Proposal:
    """The pending saves of this thread the answer should ask about: those asked
    fewer than :data:`MAX_ASKS` times, at most :data:`MAX_PROPOSED`; older ones
    first, then this turn's in the order the model called its tools (``called``:
    their ids, which parallel tool calls may have created in another order)."""
    if thread is None:
        return Proposal([], {})
    position = {pid: i for i, pid in enumerate(called)}
    pending = thread_pending(memory, scope, thread)
    # stable: the ledger's order (oldest first) among the older ones
    mine = sorted(pending, key=lambda p: position.get(p.id, -1))
    counts = {p.id: int((asks or {}).get(p.id, 0)) for p in mine}
    due = [p for p in mine if counts[p.id] < MAX_ASKS][:MAX_PROPOSED]
    for p in due:
        counts[p.id] += 1
    return Proposal(due, {i: n for i, n in counts.items() if n}, [p.id for p in pending])


def seen_in_turn(messages: Sequence[BaseMessage]) -> list[str]:
    """Pending ids the model read in this turn's tool results (after the user's
    last message), in the order of its tool calls: it was told to ask about them."""
    start = max((i + 1 for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
    seen: list[str] = []
    for m in messages[start:]:
        if isinstance(m, ToolMessage):
            seen += [i for i in _PENDING_ID.findall(message_text(m)) if i not in seen]
    return seen


def reply_asks(text: str) -> bool:
    """Whether a reply asks the user something about saving (a question, or
    "confirm" / "确认" / "yes")."""
    return bool(ASKS_RE.search(text))


def shown(item: PendingItem, chinese: bool) -> str:
    """What the user is asked to keep: a memory's text, or a profile change in words."""
    if item.target != PROFILE_TARGET:
        return item.text
    try:
        op = FieldOp.from_pending(item.text)
    except LangmemError:
        return item.text
    values = op.value if isinstance(op.value, list) else [op.value]
    listed = "、".join(map(str, values)) if chinese else ", ".join(map(str, values))
    field = op.field.replace("_", " ")
    if op.op == "-=":
        return (
            f"从个人资料的 {field} 中去掉：{listed}"
            if chinese
            else (f"remove from your profile's {field}: {listed}")
        )
    if op.op == "+=":
        return (
            f"在个人资料的 {field} 中加上：{listed}"
            if chinese
            else (f"add to your profile's {field}: {listed}")
        )
    return (
        f"把个人资料的 {field} 设为：{listed}"
        if chinese
        else f"set your profile's {field} to {listed}"
    )


def question(items: Sequence[PendingItem], chinese: bool) -> str:
    """The numbered question about ``items`` the graph adds when the reply does not
    ask (in Chinese when the user wrote Chinese)."""
    if len(items) == 1:
        text = shown(items[0], chinese)
        if chinese:
            return f"要我记住这条吗：“{text}”？回复“好的”保存，“不用”放弃。"
        return f'Shall I remember this: "{text}"? Reply yes to save it, no to drop it.'
    listed = "\n".join(f"{i}. {shown(p, chinese)}" for i, p in enumerate(items, 1))
    if chinese:
        return (
            f"要我记住这些吗？\n{listed}\n回复“好的”全部保存、“不用”全部放弃，"
            "或说第几个，例如“第一个保存，第二个不要”。"
        )
    return (
        f"Shall I remember these?\n{listed}\nReply yes to save them all, no to drop them, "
        'or name them by number, e.g. "save 1, not 2".'
    )


def asking_reply(
    reply: AIMessage, items: Sequence[PendingItem], messages: Sequence[BaseMessage]
) -> AIMessage | None:
    """The reply with the question added, or ``None`` when it already asks.

    One item the model saved itself this turn is asked about by the model (its tool
    result told it to); several are numbered by the graph (so "第二个" means what the
    user sees), and items the model never saw (extracted, flushed, asked again)
    are always asked by the graph.
    """
    seen = seen_in_turn(messages)
    text = message_text(reply)
    if len(items) == 1 and items[0].id in seen and reply_asks(text):
        return None
    user = next((message_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    ask = question(items, bool(_CJK.search(user or text)))
    if reply.id is None:  # cannot be replaced in the state: the question follows it
        return AIMessage(ask)
    if isinstance(reply.content, str):
        content: str | list[str | dict[str, object]] = f"{reply.content}\n\n{ask}".lstrip()
    else:
        content = [*reply.content, {"type": "text", "text": f"\n\n{ask}"}]
    return reply.model_copy(update={"content": content})


@dataclass(frozen=True)
class Resolution:
    """What answering a proposal did: notes for the model and the thread's pending
    saves left (ids, oldest first)."""

    notes: list[str]
    pending_ids: list[str]


def may_propose_profile(texts: Sequence[str]) -> bool:
    """Whether confirming memories of these texts may propose a profile change: one of
    them states a safety fact with items (an allergy, a condition ...)."""
    return any(f.items and not f.negated for t in texts for f in safety_facts(t))


def resolve_pending(
    memory: Memory,
    scope: str,
    thread: str | None,
    pending: Sequence[PendingItem],
    confirm: Sequence[str] = (),
    reject: Sequence[str] = (),
    *,
    pending_ids: Sequence[str] | None = None,
) -> Resolution:
    """Confirm and reject pending saves of this thread; notes for the model.

    The thread's pending saves are not read again, except after confirming a memory
    that states a safety fact: it may propose a profile change in this thread (asked
    next), which a second read finds.

    Args:
        memory: The memory service.
        scope: The scope.
        thread: The conversation they were proposed in.
        pending: The proposed saves the reply answers (their texts go in the notes).
        confirm: Ids to confirm.
        reject: Ids to reject.
        pending_ids: The thread's pending saves as last read (ids, oldest first);
            ``None``: those of ``pending``.

    Returns:
        The notes and the thread's pending saves left.
    """
    texts = {p.id: p.text for p in pending}
    notes: list[str] = []
    for pid in confirm:
        try:
            done = memory.confirm(pid, scope=scope)
            where = "profile" if isinstance(done, ProfileUpdate) else cite(done)
            notes.append(f"confirmed and stored ({where}): {texts.get(pid, pid)}")
        except LangmemError as err:
            notes.append(f"{pid}: {err}")
    for pid in reject:
        try:
            memory.reject(pid, scope=scope)
            notes.append(f"rejected, not stored: {texts.get(pid, pid)}")
        except LangmemError as err:
            notes.append(f"{pid}: {err}")
    answered = {*confirm, *reject}  # resolved now, or not pending any more (the errors)
    known = [p.id for p in pending] if pending_ids is None else list(pending_ids)
    left = [i for i in known if i not in answered]
    if confirm and may_propose_profile([texts.get(pid, "") for pid in confirm]):
        before = set(known)
        now = thread_pending(memory, scope, thread)
        for p in now:
            if p.id not in before and p.target == PROFILE_TARGET:
                notes.append(f"proposed for the profile, to be confirmed ({p.id}): {p.text}")
        left = [p.id for p in now]
    return Resolution(notes, left)


__all__ = [
    "MAX_ASKS",
    "MAX_PROPOSED",
    "Proposal",
    "Resolution",
    "asking_reply",
    "kept_proposals",
    "may_propose_profile",
    "next_proposal",
    "open_proposals",
    "question",
    "reply_asks",
    "resolve_pending",
    "seen_in_turn",
    "thread_pending",
]

"""Unconfirmed facts in the daily notes: nobody's silence loses what the system found.

A pending save waits for the user and expires after ``lifecycle.pending_ttl_hours``.
So that a fact is not gone because nobody answered:

- **Found by the system** (the pre-compaction flush, the daily archive, the
  extractor in ``lifecycle.extract_mode="pending"``): written at once to the scope's
  daily notes of the day it was said (``memory/YYYY-MM-DD.md``,
  ``memory/scopes/<scope>/YYYY-MM-DD.md``), marked ``[unconfirmed]``: a log of that
  day, searchable, decaying like the other notes. Its promotion to long-term memory
  is a pending save, as for every save (:func:`save_found`).
- **Expired**: any pending save that expires (the agent's or the user's too) leaves
  its text in the daily notes of the day it was said, marked the same way, unless
  the scope already holds that text, marked or not: the flush's note and the expiry
  never write one fact twice (:func:`expire`).
- **Confirmed**: long-term memory gets the memory; the day's note stays as the log
  of that day and loses its marker, since the user confirmed it. A confirmed save
  to the daily notes is itself the note: the marked copy is removed
  (:func:`settle`).
- **Rejected**: the marked note is deleted; the user said not to keep it.

A note keeps the source of whoever found or proposed the fact (``flush``,
``archive``, ``extractor``, ``agent`` …), is not ``verified`` and states no slot, so
the extractor never supersedes a note. :func:`is_unconfirmed` tells a marked text
(``SearchHit.unconfirmed``, ``MemoryEntry.unconfirmed``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from langmem_ext.core.errors import LangmemError
from langmem_ext.memory.extraction.ports import PendingSaves
from langmem_ext.memory.profile import PROFILE_TARGET
from langmem_ext.memory.types import UNCONFIRMED_MARK
from langmem_ext.short_term.content import clip
from langmem_ext.workspace.markdown import normalise_text

if TYPE_CHECKING:
    from langmem_ext.core.config import Settings
    from langmem_ext.memory.types import MemoryEntry, PendingItem
    from langmem_ext.workspace.records import PendingRow
    from langmem_ext.workspace.store import Workspace


class NoteHost(PendingSaves, Protocol):
    """What the notes use of a memory service (:class:`~langmem_ext.Memory` is one):
    the service calls this module, so it names this protocol, not the service."""

    settings: Settings
    workspace: Workspace

    def add(
        self,
        text: str,
        *,
        scope: str | None = ...,
        category: str = ...,
        target: str = ...,
        created_at: float | None = ...,
        source: str = ...,
    ) -> str: ...

    def update(
        self, entry_id: str, text: str, *, scope: str | None = ..., supersede: bool = ...
    ) -> MemoryEntry: ...

    def delete(self, entry_id: str, *, scope: str | None = ...) -> None: ...


logger = logging.getLogger(__name__)

MARK = UNCONFIRMED_MARK
"""What opens the text of a note the user has not confirmed."""


def mark(text: str) -> str:
    """``text`` as an unconfirmed note: ``[unconfirmed] text``."""
    return f"{MARK} {unmark(text)}"


def is_unconfirmed(text: str) -> bool:
    """Whether ``text`` is marked unconfirmed."""
    return text.startswith(MARK)


def unmark(text: str) -> str:
    """``text`` without the unconfirmed marker."""
    return text[len(MARK) :].strip() if is_unconfirmed(text) else text


def holds(memory: NoteHost, scope: str, text: str) -> bool:
    """Whether the scope stores ``text`` already, as a memory or as a note, marked or not."""
    plain = normalise_text(unmark(text))
    keyword = memory.workspace.keyword
    return keyword.has_text(scope, plain) or keyword.has_text(scope, mark(plain))


def known(memory: NoteHost, scope: str, text: str) -> bool:
    """Proposed before (a pending save of any status) or stored already (:func:`holds`)."""
    key = normalise_text(text)
    return memory.workspace.ledger.pending.has_text(scope, key) or holds(memory, scope, key)


def write_note(memory: NoteHost, scope: str, text: str, *, at: float, source: str) -> str | None:
    """Write ``text`` to the scope's daily notes of ``at``'s day, marked unconfirmed,
    unless the scope holds it already.

    Args:
        memory: The memory.
        scope: Whose notes.
        text: The fact.
        at: When it was said (epoch seconds): the day of the note.
        source: Who found or proposed it.

    Returns:
        The note's entry id, or ``None`` when the scope already held the text.
    """
    with memory.workspace.lock.hold_scope(scope):  # the check and the write are one step
        if holds(memory, scope, text):
            return None
        return memory.add(
            clip(mark(text), memory.settings.max_text_chars),
            scope=scope,
            category="fact",
            target="daily",
            created_at=at,
            source=source,
        )


def save_found(
    memory: NoteHost,
    scope: str,
    text: str,
    *,
    category: str = "fact",
    source: str,
    at: float,
    supersedes: str | None = None,
    thread_id: str | None = None,
) -> PendingItem | None:
    """A fact the system found: noted at once, its promotion to long-term pending.

    The pending save is made first (it validates the text: nothing is written for
    a greeting or an empty text), then the note (:func:`write_note`).

    Args:
        memory: The memory.
        scope: Whose memory.
        text: The fact.
        category: Its category once confirmed.
        source: ``flush``, ``archive``, ``extractor`` …
        at: When it was said (epoch seconds).
        supersedes: The memory it replaces once confirmed.
        thread_id: The conversation it was found in (its next answer asks).

    Returns:
        The pending save, or ``None`` when the fact was proposed or stored before.

    Raises:
        InvalidInputError: the text cannot be a memory (empty, too long, noise …).
    """
    if known(memory, scope, text):
        return None
    item = memory.save(
        text,
        scope=scope,
        category=category,
        source=source,
        created_at=at,
        supersedes=supersedes,
        thread_id=thread_id,
    )
    write_note(memory, scope, item.text, at=at, source=source)
    return item


def expire(memory: NoteHost, rows: Sequence[PendingRow], at: float) -> list[PendingRow]:
    """Expire the pending saves ``rows`` at ``at``; each leaves its text in the daily
    notes of the day it was said first (:func:`write_note`; a profile change has no
    text of its own to leave).

    A row whose note cannot be written now stays pending (logged) and is expired
    by a later call: the item is marked expired only once its text is safe.

    Returns:
        The rows expired (rows already resolved meanwhile are left out).
    """
    if not rows:
        return []
    ws = memory.workspace
    done: list[PendingRow] = []
    with ws.lock.hold():
        still = ws.ledger.pending.ids_with_status([r.id for r in rows], "pending")
        for row in rows:
            if row.id not in still:
                continue
            if row.target != PROFILE_TARGET:
                try:
                    write_note(memory, row.scope, row.text, at=row.said_at, source=row.source)
                except LangmemError as e:
                    logger.warning("pending %s not expired yet: its note failed (%s)", row.id, e)
                    continue
            done.append(row)
        ws.ledger.pending.expire([r.id for r in done], at)
    return done


def settle(memory: NoteHost, row: PendingRow, decision: str) -> list[str]:
    """The notes of a resolved pending save: unmarked when it was confirmed into
    long-term memory, removed when it was confirmed into the daily notes or rejected.

    Args:
        memory: The memory.
        row: The pending save.
        decision: ``confirmed`` or ``rejected``.

    Returns:
        The ids of the notes changed.
    """
    if row.target == PROFILE_TARGET:
        return []
    scope = row.scope
    ids = memory.workspace.keyword.ids_with_text(scope, normalise_text(mark(row.text)))
    for note_id in ids:
        try:
            if decision == "confirmed" and row.target == "long_term":
                memory.update(note_id, unmark(row.text), scope=scope, supersede=False)
            else:
                memory.delete(note_id, scope=scope)
        except LangmemError as e:  # edited or deleted by hand meanwhile
            logger.info("note %s of pending %s left as it is: %s", note_id, row.id, e)
    return ids


__all__ = [
    "MARK",
    "expire",
    "holds",
    "is_unconfirmed",
    "known",
    "mark",
    "save_found",
    "settle",
    "unmark",
    "write_note",
]

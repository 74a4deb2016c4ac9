"""Memories and the profile's safety fields: links both ways, proposals, safety recall.

When a memory is stored (:meth:`Memory.add <langmem_ext.Memory.add>` / ``add_many``,
``confirm``, ``update``), the safety facts its text states
(:func:`~langmem_ext.memory.safety.facts.safety_facts`) become links (``safety_links``):
memory → profile field, whom it is about, the items. For the user's own facts
(see :mod:`langmem_ext.memory.safety.facts` for whom a fact is about):

- the memory's history gets a ``profile`` row naming the fields it states;
- the items the profile does not state yet are **proposed** as a pending profile
  change (source ``memory:<ids>``; confirming it records that source in the
  profile's history). Nothing is written to the profile before the user confirms.
  Episodes and system memories are linked, never proposed; a negated fact ("I'm no
  longer allergic to peanuts") is linked, and shown, never proposed.

The links are read back the other way: the profile's safety fields know the
memories that state them (:meth:`SafetyLinks.stated`: the safety block, the
profile, the admin profile page), and a question about a safety topic puts the
profile's fields and every memory stating them first (:meth:`SafetyLinks.recall`
for the memory block, :meth:`SafetyLinks.linked` for the search's safety stage).

A memory written before the links existed, or by hand, is not linked until it is
written again through ``Memory``; the search's safety stage still reads the facts
of every candidate it ranks, so it is found and ranked first all the same.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from langmem_ext.memory.profile import (
    SAFETY_FIELDS,
    FieldOp,
    Profile,
    ProfileBook,
    Stated,
    render_safety,
)
from langmem_ext.memory.safety.facts import (
    DETECTED_FIELDS,
    USER,
    SafetyTopic,
    item_key,
    safety_facts,
    safety_topic,
)
from langmem_ext.memory.types import MemoryEntry, PendingItem
from langmem_ext.workspace.records import HistoryRow, SafetyLinkRow
from langmem_ext.workspace.store import Workspace

NOT_PROPOSED = frozenset({"episode", "system"})
"""Categories whose memories are linked but never propose a profile change."""
SOURCE_PREFIX = "memory:"
"""``source`` of a profile change a memory proposed: ``memory:<id>[,<id>…]``."""


@dataclass(frozen=True)
class Written:
    """A memory just stored: what :meth:`SafetyLinks.record` reads."""

    id: str
    text: str
    text_hash: str
    category: str = "fact"


class SafetySection(BaseModel):
    """One safety field a question asks about, for the memory block.

    Attributes:
        field: The profile field (``allergies`` …).
        subject: ``user``, or the person the question asks about (``sister``).
        profile: The profile's value of the field (the user's only).
        memories: Every current memory stating the field about the subject.
    """

    field: str
    subject: str = USER
    profile: list[str] | str | None = None
    memories: list[MemoryEntry] = Field(default_factory=list)


class SafetyLinks:
    """The links between a workspace's memories and its profiles' safety fields.

    Args:
        workspace: The workspace.
        profiles: The profiles (names resolve "Lin Wei is allergic…" to the user;
            proposals wait in their pending queue).
    """

    def __init__(self, workspace: Workspace, profiles: ProfileBook) -> None:
        self.workspace = workspace
        self.profiles = profiles
        self._names: dict[str, tuple[str, ...]] | None = None
        """Scope -> names, in a view for one search (:meth:`for_one_read`)."""

    def for_one_read(self) -> SafetyLinks:
        """A view of these links that reads each profile's names once: a search asks
        for them from several stages (the question, whom each memory is about, the
        profile's fields), and they are one read of the profile for all of them.

        Returns:
            The view; writes through it are the links' own.
        """
        view = copy.copy(self)
        view._names = {}
        return view

    def names(self, scope: str) -> tuple[str, ...]:
        """The profile's name and preferred name (a fact about them is the user's)."""
        kept = self._names
        if kept is not None and scope in kept:
            return kept[scope]
        p = self.profiles.read(scope, wait=False)
        names = tuple(n for n in (p.name, p.preferred_name) if n)
        if kept is not None:
            kept[scope] = names
        return names

    # -- writing ----------------------------------------------------------------------

    def record(
        self,
        scope: str,
        entries: Sequence[Written],
        *,
        propose: bool = True,
        thread_id: str | None = None,
    ) -> list[PendingItem]:
        """Link stored memories to the safety fields they state; propose what is new.

        Args:
            scope: Their scope.
            entries: The memories just stored.
            propose: Propose the user's new items as pending profile changes.
            thread_id: The conversation the memories were confirmed in: the
                proposals are asked about there.

        Returns:
            The pending profile changes proposed (one per field at most).
        """
        names = self.names(scope)
        now = time.time()
        rows: list[SafetyLinkRow] = []
        mine: dict[str, list[tuple[str, tuple[str, ...], bool]]] = {}
        wanted: dict[str, list[str]] = {}
        sources: dict[str, list[str]] = {}
        for e in entries:
            for fact in safety_facts(e.text, names):
                rows += [
                    SafetyLinkRow(
                        e.id, scope, e.text_hash, fact.field, fact.subject, item, fact.negated, now
                    )
                    for item in fact.items or ("",)
                ]
                if fact.subject != USER:
                    continue
                mine.setdefault(e.id, []).append((fact.field, fact.items, fact.negated))
                if propose and not fact.negated and fact.items and e.category not in NOT_PROPOSED:
                    wanted.setdefault(fact.field, []).extend(fact.items)
                    sources.setdefault(fact.field, []).append(e.id)
        self.workspace.ledger.safety.add(rows)
        pending: list[PendingItem] = []
        for field, items in wanted.items():
            ids = list(dict.fromkeys(sources[field]))
            pending += self.profiles.propose(
                scope,
                [FieldOp(field, "+=", items)],
                SOURCE_PREFIX + ",".join(ids[:3]),
                thread_id=thread_id,
            )
        if mine:
            self._history(scope, mine, pending, now)
        return pending

    def _history(
        self,
        scope: str,
        mine: dict[str, list[tuple[str, tuple[str, ...], bool]]],
        pending: Sequence[PendingItem],
        now: float,
    ) -> None:
        """One ``profile`` history row per memory: the fields it states and whether
        they are in the profile or proposed (the pending id)."""
        profile = self.profiles.read(scope)
        proposed = {FieldOp.from_pending(p.text).field: p.id for p in pending}
        rows = []
        for entry_id, facts in mine.items():
            parts = []
            for field, items, negated in facts:
                shown = json.dumps(list(items), ensure_ascii=False)
                if negated:
                    parts.append(f"{field}: not {shown}")
                    continue
                have = {item_key(v) for v in getattr(profile, field) or []}
                if items and all(item_key(i) in have for i in items):
                    parts.append(f"{field}: {shown} (in the profile)")
                elif field in proposed:
                    parts.append(f"{field}: {shown} (proposed for the profile: {proposed[field]})")
                else:
                    parts.append(f"{field}: {shown}")
            rows.append(HistoryRow(entry_id, scope, "profile", None, "; ".join(parts), now))
        self.workspace.ledger.entries.record_history_many(rows)

    # -- reading ----------------------------------------------------------------------

    def stated(self, scope: str, profile: Profile | None = None) -> dict[str, Stated]:
        """Per safety field, what the user's current memories state of it: their ids,
        the items the profile lacks, the items they deny."""
        profile = profile if profile is not None else self.profiles.read(scope, wait=False)
        subjects = [USER, *(n.casefold() for n in self.names(scope))]
        ids: dict[str, list[str]] = {}
        missing: dict[str, list[str]] = {}
        denied: dict[str, list[str]] = {}
        for r in self.workspace.ledger.safety.of_scope(scope, subjects=subjects):
            ids.setdefault(r.field, [])
            if r.entry_id not in ids[r.field]:
                ids[r.field].append(r.entry_id)
            if not r.item:
                continue
            have = {item_key(v) for v in getattr(profile, r.field) or []}
            bucket = denied if r.negated else missing
            if (r.negated or item_key(r.item) not in have) and r.item not in bucket.get(
                r.field, []
            ):
                bucket.setdefault(r.field, []).append(r.item)
        return {
            f: Stated(tuple(ids[f]), tuple(missing.get(f, ())), tuple(denied.get(f, ())))
            for f in SAFETY_FIELDS
            if f in ids
        }

    def block(self, scope: str, max_tokens: int) -> str:
        """The safety block: the profile's safety fields with the memories stating them."""
        profile = self.profiles.read(scope, wait=False)
        return render_safety(profile, max_tokens, self.stated(scope, profile))

    def topic(self, scope: str, query: str) -> SafetyTopic | None:
        """The safety fields ``query`` asks about, and whom (the profile's names count
        as the user)."""
        return safety_topic(query, self.names(scope))

    def subjects(self, scope: str, topic: SafetyTopic) -> list[str]:
        """The subject keys the links of ``topic``'s person are stored under."""
        if topic.subject != USER:
            return [topic.subject]
        return [USER, *(n.casefold() for n in self.names(scope))]

    def linked(self, scope: str, topic: SafetyTopic) -> dict[str, tuple[str, ...]]:
        """Entry id → the asked fields it states about the asked person (current
        memories, oldest first)."""
        fields = [f for f in topic.fields if f in DETECTED_FIELDS]
        rows = self.workspace.ledger.safety.of_scope(scope, fields, self.subjects(scope, topic))
        return _fields_by_entry(rows)

    def linked_among(
        self, scope: str, topic: SafetyTopic, entry_ids: Sequence[str]
    ) -> dict[str, tuple[str, ...]]:
        """:meth:`linked`, of these entries only (one read by key, whatever the size
        of the scope)."""
        fields = {f for f in topic.fields if f in DETECTED_FIELDS}
        subjects = set(self.subjects(scope, topic))
        rows = [
            r
            for r in self.workspace.ledger.safety.of_entries(entry_ids)
            if r.scope == scope and r.field in fields and r.subject in subjects
        ]
        return _fields_by_entry(rows)

    def worth_joining(
        self, scope: str, topic: SafetyTopic, limit: int
    ) -> list[tuple[str, tuple[str, ...]]]:
        """At most ``limit`` memories of :meth:`linked`, those most worth reading first
        (the newest statement of each distinct item, then the others, newest first),
        each with its fields: a search joins these, not every statement of the scope."""
        fields = [f for f in topic.fields if f in DETECTED_FIELDS]
        rows = self.workspace.ledger.safety.worth_reading(
            scope, fields, self.subjects(scope, topic), limit
        )
        return list(_fields_by_entry(rows).items())[:limit]

    def fields_of(self, scope: str, entry_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Entry id → the safety fields of the user's profile it states."""
        users = {USER, *(n.casefold() for n in self.names(scope))}
        out: dict[str, list[str]] = {}
        for r in self.workspace.ledger.safety.of_entries(entry_ids):
            if r.scope == scope and r.subject in users and r.field not in out.get(r.entry_id, []):
                out.setdefault(r.entry_id, []).append(r.field)
        return {i: tuple(f) for i, f in out.items()}


def _fields_by_entry(rows: Sequence[SafetyLinkRow]) -> dict[str, tuple[str, ...]]:
    """Entry id → the fields of its rows, in the rows' order."""
    out: dict[str, list[str]] = {}
    for r in rows:
        if r.field not in out.setdefault(r.entry_id, []):
            out[r.entry_id].append(r.field)
    return {i: tuple(f) for i, f in out.items()}


__all__ = ["NOT_PROPOSED", "SOURCE_PREFIX", "SafetyLinks", "SafetySection", "Written"]

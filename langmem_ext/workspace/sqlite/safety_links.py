"""Repository of the ledger's ``safety_links`` table (ledger migration 10).

A row says that a memory states one safety fact: a profile field (``allergies``
…), whom it is about and one item. Rows are written from the memory's text when it
is stored; the reads join ``entries`` and count a row only while its entry is live,
current and still has that text (``text_hash``), so deleting, superseding or
editing a memory withdraws its links with no hook, as for the knowledge graph's
support rows (a row of an edited text stays, unread).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import astuple
from typing import Any

from langmem_ext.workspace.records import SafetyLinkRow
from langmem_ext.workspace.sql.base import SQLITE
from langmem_ext.workspace.sql.safety_links import (
    LINK_COLUMNS,
    SELECT_LINKS,
    SharedSafetyLinkReads,
)
from langmem_ext.workspace.sqlite._repo import SqliteRepo
from langmem_ext.workspace.sqlite._sql import from_row

_BY_ENTRY = SELECT_LINKS.replace(" JOIN entries e", " CROSS JOIN entries e", 1)
"""The links of given entries: SQLite's ``CROSS JOIN`` keeps the links as the outer
loop, so each id is found by the primary key (without statistics the planner would
scan the scope's links once per entry instead)."""
_KEPT_READS = 64
"""Answers of :meth:`SqliteSafetyLinks.worth_reading` kept at the most."""
_KEPT_ENTRIES = 20_000
"""Entries whose links :meth:`SqliteSafetyLinks.of_entries` keeps at the most."""


class SqliteSafetyLinks(SqliteRepo, SharedSafetyLinkReads):
    """:class:`~langmem_ext.workspace.records.SafetyLinkRepository` on SQLite."""

    dialect = SQLITE

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        super().__init__(conn, lock)
        self._worth: dict[tuple[Any, ...], tuple[tuple[int, int], tuple[SafetyLinkRow, ...]]] = {}
        self._by_entry: dict[str, tuple[SafetyLinkRow, ...]] = {}
        """Entry id -> its current links, read at :attr:`_by_entry_key`."""
        self._by_entry_key: tuple[int, int] | None = None

    def add(self, rows: Sequence[SafetyLinkRow]) -> None:
        if rows:
            with self._atomic():
                self._run_many(
                    f"INSERT OR REPLACE INTO safety_links ({LINK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                    [astuple(r) for r in rows],
                )

    def worth_reading(
        self, scope: str, fields: Sequence[str], subjects: Sequence[str], limit: int
    ) -> list[SafetyLinkRow]:
        """Every safety question of a search asks; the answer is kept until the ledger
        changes, so a scope with many statements of one field is not ranked again on
        each search (see the shared read for the order)."""
        ask = (scope, tuple(fields), tuple(subjects), limit)
        with self._lock:
            key = self._ledger_version()
            kept = self._worth.get(ask)
            if key is not None and kept is not None and kept[0] == key:
                return list(kept[1])
            rows = super().worth_reading(scope, fields, subjects, limit)
            if key is not None:
                if len(self._worth) >= _KEPT_READS:
                    self._worth.clear()
                self._worth[ask] = (key, tuple(rows))
            return rows

    def of_entries(self, entry_ids: Sequence[str]) -> list[SafetyLinkRow]:
        """Every search asks about its candidates, and the next search meets many of
        them again: each entry's links are kept until the ledger changes, and only
        the entries not kept are read. Rows come grouped by entry, in the order of
        ``entry_ids``."""
        ids = list(dict.fromkeys(entry_ids))
        with self._lock:
            key = self._ledger_version()
            if key is None:
                return self._read_of_entries(ids)
            if key != self._by_entry_key:
                self._by_entry.clear()
                self._by_entry_key = key
            kept = self._by_entry
            missing = [i for i in ids if i not in kept]
            if missing:
                if len(kept) + len(missing) > _KEPT_ENTRIES:
                    kept.clear()
                    missing = ids
                read: dict[str, list[SafetyLinkRow]] = {i: [] for i in missing}
                for r in self._read_of_entries(missing):
                    read[r.entry_id].append(r)
                kept.update((i, tuple(rows)) for i, rows in read.items())
            return [r for i in ids for r in kept.get(i, ())]

    def _read_of_entries(self, entry_ids: Sequence[str]) -> list[SafetyLinkRow]:
        rows = self._all_in(f"{_BY_ENTRY} WHERE l.entry_id IN ({{marks}})", entry_ids)
        return [from_row(SafetyLinkRow, r) for r in rows]


__all__ = ["SqliteSafetyLinks"]

"""Repository of the ledger's ``safety_links`` table (ledger migration 10).

A row says that a memory states one safety fact: a profile field (``allergies``
…), whom it is about and one item. Rows are written from the memory's text when it
is stored; the reads join ``entries`` and count a row only while its entry is live,
current and still has that text (``text_hash``), so deleting, superseding or
editing a memory withdraws its links with no hook, as for the knowledge graph's
support rows (a row of an edited text stays, unread).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple

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


class SqliteSafetyLinks(SqliteRepo, SharedSafetyLinkReads):
    """:class:`~langmem_ext.workspace.records.SafetyLinkRepository` on SQLite."""

    dialect = SQLITE

    def add(self, rows: Sequence[SafetyLinkRow]) -> None:
        if rows:
            with self._atomic():
                self._run_many(
                    f"INSERT OR REPLACE INTO safety_links ({LINK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                    [astuple(r) for r in rows],
                )

    def of_entries(self, entry_ids: Sequence[str]) -> list[SafetyLinkRow]:
        rows = self._all_in(f"{_BY_ENTRY} WHERE l.entry_id IN ({{marks}})", entry_ids)
        return [from_row(SafetyLinkRow, r) for r in rows]


__all__ = ["SqliteSafetyLinks"]

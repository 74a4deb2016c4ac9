"""Repository of the ledger's ``entries`` and ``entry_history`` tables."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from langmem_ext.workspace.records import (
    EntryActivity,
    EntryDistribution,
    EntryState,
    EntryTableRow,
    HistoryRow,
)
from langmem_ext.workspace.sqlite._repo import SqliteRepo
from langmem_ext.workspace.sqlite._sql import from_row, in_chunks, without_index

_KEPT_READS = 64
"""Slot questions whose answers :meth:`SqliteEntries.current_of_slots` keeps."""


class SqliteEntries(SqliteRepo):
    """:class:`~langmem_ext.workspace.records.EntryRepository` on SQLite."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        super().__init__(conn, lock)
        self._closed: dict[str, tuple[tuple[int, int], dict[str, float]]] = {}
        """Scope -> (the ledger's state when read, its superseded versions)."""
        self._slots: dict[
            tuple[str, tuple[str, ...], int | None],
            tuple[tuple[int, int], tuple[EntryState, ...]],
        ] = {}
        """``current_of_slots`` asks -> (the ledger's state when read, its answer)."""

    def get(self, entry_id: str, *, include_deleted: bool = False) -> EntryState | None:
        """The state of one entry (live only unless ``include_deleted``), or ``None``."""
        sql = "SELECT * FROM entries WHERE id = ?"
        if not include_deleted:
            sql += " AND deleted_at IS NULL"
        row = self._one(sql, (entry_id,))
        return from_row(EntryState, row) if row else None

    def many(self, ids: Iterable[str]) -> dict[str, EntryState]:
        """States of many live entries, by id (unknown and deleted ids are left out)."""
        out: dict[str, EntryState] = {}
        for chunk, marks in in_chunks(list(ids)):
            for row in self._all(
                f"SELECT * FROM entries WHERE deleted_at IS NULL AND id IN ({marks})", chunk
            ):
                st = from_row(EntryState, row)
                out[st.id] = st
        return out

    def of_scope(self, scope: str) -> list[EntryState]:
        """All live entries of a scope, oldest first."""
        rows = self._all(
            "SELECT * FROM entries WHERE scope = ? AND deleted_at IS NULL ORDER BY created_at",
            (scope,),
        )
        return [from_row(EntryState, r) for r in rows]

    def table_of_scope(self, scope: str) -> dict[str, EntryTableRow]:
        """The live entries of a scope as the rows of a table, by id (no full states)."""
        rows = self._all(
            "SELECT id, source, verified, last_access, valid_to FROM entries "
            "WHERE scope = ? AND deleted_at IS NULL",
            (scope,),
        )
        return {str(r[0]): EntryTableRow(str(r[1]), bool(r[2]), r[3], r[4]) for r in rows}

    def distribution(self, scope: str, *, since: float) -> EntryDistribution:
        """How the scope's current memories spread over importance and UTC days.

        Two aggregate queries over the scope's rows: no entry is materialised, so
        the admin stats page costs the same at 100k memories as a count does.
        """
        current = "WHERE scope = ? AND deleted_at IS NULL AND valid_to IS NULL"
        tenths = [0] * 10
        for b, n in self._all(
            f"SELECT min(CAST(importance * 10 AS INTEGER), 9) AS b, count(*) FROM entries "
            f"{current} GROUP BY b",
            (scope,),
        ):
            if 0 <= int(b) <= 9:
                tenths[int(b)] += int(n)
        days = self._all(
            f"SELECT date(created_at, 'unixepoch') AS d, count(*) FROM entries "
            f"{current} AND created_at >= ? GROUP BY d",
            (scope, since),
        )
        return EntryDistribution(tuple(tenths), {str(d): int(n) for d, n in days})

    def all_ids(self) -> set[str]:
        """Every id the ledger knows (live or deleted): never to be reused."""
        return {str(r[0]) for r in self._all("SELECT id FROM entries")}

    def exists(self, entry_id: str) -> bool:
        """Whether the ledger knows the id (live or deleted)."""
        return self._one("SELECT 1 FROM entries WHERE id = ?", (entry_id,)) is not None

    def known(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` the ledger knows (live or deleted), in one read."""
        out: set[str] = set()
        for chunk, marks in in_chunks(list(ids)):
            out |= {
                str(r[0]) for r in self._all(f"SELECT id FROM entries WHERE id IN ({marks})", chunk)
            }
        return out

    def live_ids_of_path(self, path: str) -> list[str]:
        """Ids of the live entries the ledger places in the file ``path``."""
        rows = self._all("SELECT id FROM entries WHERE path = ? AND deleted_at IS NULL", (path,))
        return [str(r[0]) for r in rows]

    def live_ids_outside(self, path: str) -> set[str]:
        """Ids of the live entries of every other file than ``path``."""
        rows = self._all("SELECT id FROM entries WHERE deleted_at IS NULL AND path != ?", (path,))
        return {str(r[0]) for r in rows}

    def upsert(self, state: EntryState) -> None:
        """Insert or replace an entry's state."""
        self._run(
            "INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            _state_values(state),
        )

    def add(self, states: Sequence[EntryState], history: Sequence[HistoryRow]) -> None:
        """Store new entries: their states (insert or replace) and their history rows,
        in one transaction (or the caller's)."""
        with self._atomic():
            self._run_many(
                "INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [_state_values(st) for st in states],
            )
            self._run_many(
                "INSERT INTO entry_history (entry_id, scope, op, old_text, new_text, at) "
                "VALUES (?,?,?,?,?,?)",
                [(r.entry_id, r.scope, r.op, r.old_text, r.new_text, r.at) for r in history],
            )

    def closed_of_scope(self, scope: str) -> dict[str, float]:
        """Superseded live versions of a scope: id -> when they were replaced.

        Every search asks; the answer is kept per scope until the ledger changes (a
        write of this connection, or a commit of any other, which SQLite's
        ``data_version`` shows), so a scope with a long history is not re-read on
        each search. Callers get a copy of their own.
        """
        with self._lock:
            key = self._ledger_version()
            if key is not None:
                kept = self._closed.get(scope)
                if kept is not None and kept[0] == key:
                    return dict(kept[1])
            rows = self._all(
                "SELECT id, valid_to FROM entries WHERE scope = ? AND valid_to IS NOT NULL "
                "AND deleted_at IS NULL",
                (scope,),
            )
            closed = {str(r[0]): float(r[1]) for r in rows}
            if key is not None:
                self._closed[scope] = (key, closed)
            return dict(closed)

    def current_of_slots(
        self, scope: str, slots: Iterable[str], *, limit: int | None = None
    ) -> list[EntryState]:
        """Current live versions whose slot is one of ``slots`` or starts with one of
        them followed by ``|`` (``user|allergic_to`` covers ``user|allergic_to|花生``),
        oldest first; with ``limit``, the newest ``limit`` of each of ``slots``.

        Every search that asks about an attribute asks; the answer is kept until the
        ledger changes (as :meth:`closed_of_scope`'s)."""
        slots = tuple(slots)
        ask = (scope, slots, limit)
        with self._lock:
            key = self._ledger_version()
            kept = self._slots.get(ask)
            if key is not None and kept is not None and kept[0] == key:
                return list(kept[1])
            out = self._current_of_slots(scope, slots, limit)
            if key is not None:
                if len(self._slots) >= _KEPT_READS:
                    self._slots.clear()
                self._slots[ask] = (key, tuple(out))
            return out

    def _current_of_slots(
        self, scope: str, slots: Sequence[str], limit: int | None
    ) -> list[EntryState]:
        out: list[EntryState] = []
        for slot in slots:
            if limit:
                out.extend(reversed(self._newest_of_slot(scope, slot, limit)))
                continue
            # the range lets the slot index answer (a scan of the scope otherwise: 180 ms
            # at 100k); the exact test keeps "user|lives_in" from "user|lives_inx"
            rows = self._all(
                "SELECT * FROM entries WHERE scope = ? AND slot >= ? AND slot < ? "
                "AND (slot = ? OR substr(slot, 1, ?) = ?) "
                "AND valid_to IS NULL AND deleted_at IS NULL ORDER BY created_at DESC",
                (scope, slot, slot + "}", slot, len(slot) + 1, slot + "|"),
            )
            out.extend(from_row(EntryState, r) for r in reversed(rows))
        return out

    def _newest_of_slot(self, scope: str, slot: str, limit: int) -> list[EntryState]:
        """The newest ``limit`` current rows of ``slot`` and its sub-slots, newest first.

        Walks the distinct current slots in ``slot``'s range on the index
        ``entries_current_slot`` (one seek each) and reads the newest ``limit`` of
        each from the same index: the cost follows the number of distinct slots, not
        of the memories stating them (a scope of imported statements holds thousands
        of one slot; sorting them all took 14-45 ms at 100k).
        """
        end = slot + "}"  # past every "slot|..." ("|" < "}")
        step = (
            "SELECT min(slot) FROM entries WHERE scope = ? AND slot {} ? AND slot < ? "
            "AND valid_to IS NULL AND deleted_at IS NULL"
        )
        found: list[EntryState] = []
        with self._lock:  # one walk: no write of this process between its steps
            row = self._one(step.format(">="), (scope, slot, end))
            name = row[0] if row else None
            while name is not None:
                if name == slot or name.startswith(slot + "|"):
                    found.extend(
                        from_row(EntryState, r)
                        for r in self._all(
                            "SELECT * FROM entries WHERE scope = ? AND slot = ? "
                            "AND valid_to IS NULL AND deleted_at IS NULL "
                            "ORDER BY created_at DESC, rowid LIMIT ?",
                            (scope, name, limit),
                        )
                    )
                row = self._one(step.format(">"), (scope, name, end))
                name = row[0] if row else None
        # newest first; ties in slot order, then in the order written (stable sort)
        found.sort(key=lambda st: -st.created_at)
        return found[:limit]

    def successor(self, entry_id: str) -> EntryState | None:
        """The version that replaced ``entry_id`` (live or deleted), or ``None``."""
        row = self._one(
            "SELECT * FROM entries WHERE supersedes = ? ORDER BY created_at DESC LIMIT 1",
            (entry_id,),
        )
        return from_row(EntryState, row) if row else None

    def set_valid_to(self, entry_id: str, valid_to: float | None) -> None:
        """Close (a time) or reopen (``None``) a version."""
        self._run("UPDATE entries SET valid_to = ? WHERE id = ?", (valid_to, entry_id))

    def mark_deleted(self, entry_id: str, at: float) -> None:
        """Mark an entry deleted at ``at`` (its row and history are kept)."""
        self._run("UPDATE entries SET deleted_at = ? WHERE id = ?", (at, entry_id))

    def touch(self, entry_id: str, *, importance: float, at: float) -> None:
        """Set an entry's importance and last access, counting one more access."""
        self._run(
            "UPDATE entries SET importance = ?, last_access = ?, access_count = access_count + 1 "
            "WHERE id = ?",
            (importance, at, entry_id),
        )

    def record_history(self, row: HistoryRow) -> None:
        """Append one edit to an entry's history."""
        self._run(
            "INSERT INTO entry_history (entry_id, scope, op, old_text, new_text, at) "
            "VALUES (?,?,?,?,?,?)",
            (row.entry_id, row.scope, row.op, row.old_text, row.new_text, row.at),
        )

    def record_history_many(self, rows: Iterable[HistoryRow]) -> None:
        """Append many edits (one statement per row, in one transaction)."""
        values = [(r.entry_id, r.scope, r.op, r.old_text, r.new_text, r.at) for r in rows]
        with self._atomic():
            self._run_many(
                "INSERT INTO entry_history (entry_id, scope, op, old_text, new_text, at) "
                "VALUES (?,?,?,?,?,?)",
                values,
            )

    def history(self, entry_id: str, scope: str) -> list[HistoryRow]:
        """The edits of an entry of ``scope``, oldest first (empty when none)."""
        rows = self._all(
            "SELECT entry_id, scope, op, old_text, new_text, at FROM entry_history "
            "WHERE entry_id = ? AND scope = ? ORDER BY seq",
            (entry_id, scope),
        )
        return [from_row(HistoryRow, r) for r in rows]

    def scopes(self) -> list[str]:
        """Scopes that have live entries, sorted."""
        rows = self._all("SELECT DISTINCT scope FROM entries WHERE deleted_at IS NULL ORDER BY 1")
        return [str(r[0]) for r in rows]

    def activity(self, scope: str) -> list[EntryActivity]:
        """The live current entries of a scope that decay may change (not ``system`` /
        ``core``, not superseded versions: they are history)."""
        rows = self._all(
            "SELECT id, category, importance, created_at, "
            "max(created_at, updated_at, coalesce(last_access, 0)) FROM entries "
            "WHERE scope = ? AND deleted_at IS NULL AND valid_to IS NULL "
            "AND category NOT IN ('system', 'core')",
            (scope,),
        )
        return [EntryActivity._make(r) for r in rows]

    def set_importances(self, changes: Iterable[tuple[str, float]]) -> None:
        """Set the importance of entries ``(id, importance)``, nothing else (decay, review)."""
        rows = [(float(importance), entry_id) for entry_id, importance in changes]
        with self._atomic():
            self._run_many("UPDATE entries SET importance = ? WHERE id = ?", rows)

    def mark_accessed(self, ids: Iterable[str], *, scope: str, at: float) -> int:
        """Record that live entries of ``scope`` reached the model at ``at`` (a recall)."""
        marked = 0
        with self._atomic():
            for chunk, marks in in_chunks(list(dict.fromkeys(ids))):
                cur = self._run(
                    "UPDATE entries SET last_access = max(coalesce(last_access, 0), ?), "
                    "access_count = access_count + 1 "
                    f"WHERE {without_index('scope')} = ? AND deleted_at IS NULL AND id IN ({marks})",
                    (at, scope, *chunk),
                )
                marked += int(cur.rowcount or 0)
        return marked


def _state_values(st: EntryState) -> tuple[Any, ...]:
    """The ``entries`` row of a state, in column order."""
    return (
        st.id,
        st.scope,
        st.path,
        st.category,
        st.text_hash,
        st.importance,
        st.created_at,
        st.updated_at,
        st.last_access,
        st.access_count,
        st.source,
        int(st.verified),
        st.deleted_at,
        st.valid_to,
        st.supersedes,
        st.slot,
    )

"""Repository of the ledger's ``entries`` and ``entry_history`` tables on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.records import (
    EntryActivity,
    EntryDistribution,
    EntryState,
    EntryTableRow,
    HistoryRow,
)
from langmem_ext.workspace.sqlite._repo import columns
from langmem_ext.workspace.sqlite._sql import from_row

_COLS = columns(EntryState)
_SELECT = f"SELECT {_COLS} FROM entries"
_UPSERT = (
    f"INSERT INTO entries ({_COLS}) VALUES ({', '.join(['%s'] * 16)}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _COLS.split(", ")[1:])
    + ", rowid = nextval(pg_get_serial_sequence('entries', 'rowid'))"
)
"""Insert or replace; a replaced row is written anew (a new ``rowid``, as SQLite's
``INSERT OR REPLACE`` gives), so ties keep the order rows were written in."""
_HISTORY = (
    "INSERT INTO entry_history (entry_id, scope, op, old_text, new_text, at) "
    "VALUES (%s, %s, %s, %s, %s, %s)"
)
_NEWEST = " ORDER BY created_at DESC, slot, rowid"


class PgEntries(PgRepo):
    """:class:`~langmem_ext.workspace.records.EntryRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.entries.SqliteEntries`)."""

    def get(self, entry_id: str, *, include_deleted: bool = False) -> EntryState | None:
        """The state of one entry (live only unless ``include_deleted``), or ``None``."""
        sql = f"{_SELECT} WHERE id = %s"
        if not include_deleted:
            sql += " AND deleted_at IS NULL"
        row = self._one(sql, (entry_id,))
        return from_row(EntryState, row) if row else None

    def many(self, ids: Iterable[str]) -> dict[str, EntryState]:
        """States of many live entries, by id (unknown and deleted ids are left out)."""
        rows = self._all(f"{_SELECT} WHERE id = ANY(%s) AND deleted_at IS NULL", (list(ids),))
        return {str(r[0]): from_row(EntryState, r) for r in rows}

    def of_scope(self, scope: str) -> list[EntryState]:
        """All live entries of a scope, oldest first."""
        rows = self._all(
            f"{_SELECT} WHERE scope = %s AND deleted_at IS NULL ORDER BY created_at, rowid",
            (scope,),
        )
        return [from_row(EntryState, r) for r in rows]

    def table_of_scope(self, scope: str) -> dict[str, EntryTableRow]:
        """The live entries of a scope as the rows of a table, by id (no full states)."""
        rows = self._all(
            "SELECT id, source, verified, last_access, valid_to FROM entries "
            "WHERE scope = %s AND deleted_at IS NULL",
            (scope,),
        )
        return {str(r[0]): EntryTableRow(str(r[1]), bool(r[2]), r[3], r[4]) for r in rows}

    def distribution(self, scope: str, *, since: float) -> EntryDistribution:
        """How the scope's current memories spread over importance and UTC days
        (two aggregate queries)."""
        current = "WHERE scope = %s AND deleted_at IS NULL AND valid_to IS NULL"
        tenths = [0] * 10
        for b, n in self._all(
            "SELECT least(floor(importance * 10)::int, 9) AS b, count(*) FROM entries "
            f"{current} GROUP BY b",
            (scope,),
        ):
            if b is not None and 0 <= int(b) <= 9:
                tenths[int(b)] += int(n)
        days = self._all(
            "SELECT to_char(to_timestamp(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS d, "
            f"count(*) FROM entries {current} AND created_at >= %s GROUP BY d",
            (scope, since),
        )
        return EntryDistribution(tuple(tenths), {str(d): int(n) for d, n in days})

    def all_ids(self) -> set[str]:
        """Every id the ledger knows (live or deleted): never to be reused."""
        return {str(r[0]) for r in self._all("SELECT id FROM entries")}

    def exists(self, entry_id: str) -> bool:
        """Whether the ledger knows the id (live or deleted)."""
        return self._one("SELECT 1 FROM entries WHERE id = %s", (entry_id,)) is not None

    def known(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` the ledger knows (live or deleted), in one read."""
        rows = self._all("SELECT id FROM entries WHERE id = ANY(%s)", (list(ids),))
        return {str(r[0]) for r in rows}

    def live_ids_of_path(self, path: str) -> list[str]:
        """Ids of the live entries the ledger places in the file ``path``."""
        rows = self._all(
            "SELECT id FROM entries WHERE path = %s AND deleted_at IS NULL ORDER BY rowid", (path,)
        )
        return [str(r[0]) for r in rows]

    def live_ids_outside(self, path: str) -> set[str]:
        """Ids of the live entries of every other file than ``path``."""
        rows = self._all("SELECT id FROM entries WHERE deleted_at IS NULL AND path != %s", (path,))
        return {str(r[0]) for r in rows}

    def upsert(self, state: EntryState) -> None:
        """Insert or replace an entry's state."""
        self._run(_UPSERT, _state_values(state))

    def add(self, states: Sequence[EntryState], history: Sequence[HistoryRow]) -> None:
        """Store new entries (insert or replace) and their history rows in one write."""
        with self._atomic():
            self._run_many(_UPSERT, [_state_values(st) for st in states])
            self._run_many(_HISTORY, [_history_values(r) for r in history])

    def closed_of_scope(self, scope: str) -> dict[str, float]:
        """Superseded live versions of a scope: id -> when they were replaced."""
        rows = self._all(
            "SELECT id, valid_to FROM entries WHERE scope = %s AND valid_to IS NOT NULL "
            "AND deleted_at IS NULL",
            (scope,),
        )
        return {str(r[0]): float(r[1]) for r in rows}

    def current_of_slots(
        self, scope: str, slots: Iterable[str], *, limit: int | None = None
    ) -> list[EntryState]:
        """Current live versions whose slot is one of ``slots`` or starts with one of
        them followed by ``|``, oldest first; with ``limit``, the newest ``limit`` of
        each of ``slots``."""
        out: list[EntryState] = []
        for slot in slots:
            # the range lets the slot index answer; the exact test keeps
            # "user|lives_in" from "user|lives_inx"
            sql = (
                f"{_SELECT} WHERE scope = %s AND slot >= %s AND slot < %s "
                "AND (slot = %s OR left(slot, %s) = %s) "
                f"AND valid_to IS NULL AND deleted_at IS NULL{_NEWEST}"
            )
            params: list[Any] = [scope, slot, slot + "}", slot, len(slot) + 1, slot + "|"]
            if limit:
                sql += " LIMIT %s"
                params.append(int(limit))
            rows = self._all(sql, params)
            out.extend(from_row(EntryState, r) for r in reversed(rows))
        return out

    def successor(self, entry_id: str) -> EntryState | None:
        """The version that replaced ``entry_id`` (live or deleted), or ``None``."""
        row = self._one(
            f"{_SELECT} WHERE supersedes = %s ORDER BY created_at DESC, rowid DESC LIMIT 1",
            (entry_id,),
        )
        return from_row(EntryState, row) if row else None

    def set_valid_to(self, entry_id: str, valid_to: float | None) -> None:
        """Close (a time) or reopen (``None``) a version."""
        self._run("UPDATE entries SET valid_to = %s WHERE id = %s", (valid_to, entry_id))

    def mark_deleted(self, entry_id: str, at: float) -> None:
        """Mark an entry deleted at ``at`` (its row and history are kept)."""
        self._run("UPDATE entries SET deleted_at = %s WHERE id = %s", (at, entry_id))

    def touch(self, entry_id: str, *, importance: float, at: float) -> None:
        """Set an entry's importance and last access, counting one more access."""
        self._run(
            "UPDATE entries SET importance = %s, last_access = %s, "
            "access_count = access_count + 1 WHERE id = %s",
            (importance, at, entry_id),
        )

    def record_history(self, row: HistoryRow) -> None:
        """Append one edit to an entry's history."""
        self._run(_HISTORY, _history_values(row))

    def record_history_many(self, rows: Iterable[HistoryRow]) -> None:
        """Append many edits in one write."""
        self._run_many(_HISTORY, [_history_values(r) for r in rows])

    def history(self, entry_id: str, scope: str) -> list[HistoryRow]:
        """The edits of an entry of ``scope``, oldest first (empty when none)."""
        rows = self._all(
            "SELECT entry_id, scope, op, old_text, new_text, at FROM entry_history "
            "WHERE entry_id = %s AND scope = %s ORDER BY seq",
            (entry_id, scope),
        )
        return [from_row(HistoryRow, r) for r in rows]

    def scopes(self) -> list[str]:
        """Scopes that have live entries, sorted."""
        rows = self._all(
            'SELECT DISTINCT scope COLLATE "C" AS s FROM entries WHERE deleted_at IS NULL ORDER BY s'
        )
        return [str(r[0]) for r in rows]

    def activity(self, scope: str) -> list[EntryActivity]:
        """The live current entries of a scope that decay may change."""
        rows = self._all(
            "SELECT id, category, importance, created_at, "
            "greatest(created_at, updated_at, coalesce(last_access, 0)) FROM entries "
            "WHERE scope = %s AND deleted_at IS NULL AND valid_to IS NULL "
            "AND category NOT IN ('system', 'core')",
            (scope,),
        )
        return [EntryActivity._make(r) for r in rows]

    def set_importances(self, changes: Iterable[tuple[str, float]]) -> None:
        """Set the importance of entries ``(id, importance)``, nothing else."""
        rows = [(float(importance), entry_id) for entry_id, importance in changes]
        self._run_many("UPDATE entries SET importance = %s WHERE id = %s", rows)

    def mark_accessed(self, ids: Iterable[str], *, scope: str, at: float) -> int:
        """Record that live entries of ``scope`` reached the model at ``at``."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return 0
        return self._run(
            "UPDATE entries SET last_access = greatest(coalesce(last_access, 0), %s), "
            "access_count = access_count + 1 "
            "WHERE id = ANY(%s) AND scope = %s AND deleted_at IS NULL",
            (at, wanted, scope),
        )


def _state_values(st: EntryState) -> tuple[Any, ...]:
    """The ``entries`` row of a state, in column order."""
    return (
        st.id, st.scope, st.path, st.category, st.text_hash, st.importance, st.created_at,
        st.updated_at, st.last_access, st.access_count, st.source, int(st.verified),
        st.deleted_at, st.valid_to, st.supersedes, st.slot,
    )  # fmt: skip


def _history_values(r: HistoryRow) -> tuple[Any, ...]:
    return (r.entry_id, r.scope, r.op, r.old_text, r.new_text, r.at)


__all__ = ["PgEntries"]

"""Repositories of the ledger's small tables on PostgreSQL: ``meta``, ``boosts``,
``profile_history`` and ``safety_links``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.records import ProfileChangeRow, SafetyLinkRow
from langmem_ext.workspace.sql.base import POSTGRES
from langmem_ext.workspace.sql.safety_links import (
    LINK_COLUMNS,
    SELECT_LINKS,
    SharedSafetyLinkReads,
)
from langmem_ext.workspace.sqlite._repo import columns
from langmem_ext.workspace.sqlite._sql import from_row


class PgMeta(PgRepo):
    """:class:`~langmem_ext.workspace.records.MetaRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.meta.SqliteMeta`)."""

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None``."""
        row = self._one("SELECT value FROM meta WHERE key = %s", (key,))
        return str(row[0]) if row else None

    def set(self, key: str, value: str) -> None:
        """Write ``key`` (replacing its value)."""
        self._run(
            "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Every key starting with ``prefix``, with its value."""
        rows = self._all(
            'SELECT key, value FROM meta WHERE left(key, %s) = %s ORDER BY key COLLATE "C"',
            (len(prefix), prefix),
        )
        return {str(k): str(v) for k, v in rows}

    def delete(self, key: str) -> None:
        """Remove ``key`` (nothing when it is not there)."""
        self._run("DELETE FROM meta WHERE key = %s", (key,))


class PgBoosts(PgRepo):
    """:class:`~langmem_ext.workspace.records.BoostRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.boosts.SqliteBoosts`)."""

    def record(self, entry_id: str, amount: float, at: float, reason: str | None) -> None:
        """Record one boost."""
        self._run(
            "INSERT INTO boosts (entry_id, amount, at, reason) VALUES (%s, %s, %s, %s)",
            (entry_id, amount, at, reason),
        )

    def last_at(self, entry_id: str) -> float | None:
        """When the entry was last boosted, or ``None``."""
        row = self._one("SELECT max(at) FROM boosts WHERE entry_id = %s", (entry_id,))
        return float(row[0]) if row and row[0] is not None else None

    def total_since(self, entry_id: str, since: float) -> float:
        """Importance added to the entry by boosts after ``since``."""
        row = self._one(
            "SELECT coalesce(sum(amount), 0) FROM boosts WHERE entry_id = %s AND at > %s",
            (entry_id, since),
        )
        return float(row[0]) if row else 0.0

    def times(self, entry_id: str) -> list[float]:
        """When the entry was boosted (epoch seconds), oldest first."""
        rows = self._all("SELECT at FROM boosts WHERE entry_id = %s ORDER BY at, seq", (entry_id,))
        return [float(r[0]) for r in rows]


_PROFILE_COLS = columns(ProfileChangeRow)


class PgProfileHistory(PgRepo):
    """:class:`~langmem_ext.workspace.records.ProfileHistoryRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.profile.SqliteProfileHistory`)."""

    def record(self, rows: Sequence[ProfileChangeRow]) -> None:
        """Append changes (in one write)."""
        self._run_many(
            f"INSERT INTO profile_history ({_PROFILE_COLS}) VALUES (%s, %s, %s, %s, %s, %s)",
            [astuple(r) for r in rows],
        )

    def of_scope(self, scope: str, field: str | None = None) -> list[ProfileChangeRow]:
        """A scope's changes (of one field when given), oldest first."""
        sql = f"SELECT {_PROFILE_COLS} FROM profile_history WHERE scope = %s"
        params: tuple[str, ...] = (scope,)
        if field is not None:
            sql += " AND field = %s"
            params = (scope, field)
        return [from_row(ProfileChangeRow, r) for r in self._all(sql + " ORDER BY seq", params)]

    def latest(self, scope: str) -> dict[str, str | None]:
        """The last recorded value (JSON) of every field the scope ever changed."""
        rows = self._all(
            "SELECT DISTINCT ON (field) field, new_value FROM profile_history "
            "WHERE scope = %s ORDER BY field, seq DESC",
            (scope,),
        )
        return {str(f): (None if v is None else str(v)) for f, v in rows}


class PgSafetyLinks(PgRepo, SharedSafetyLinkReads):
    """:class:`~langmem_ext.workspace.records.SafetyLinkRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.safety_links.SqliteSafetyLinks`)."""

    dialect = POSTGRES

    def add(self, rows: Sequence[SafetyLinkRow]) -> None:
        self._run_many(
            f"INSERT INTO safety_links ({LINK_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (entry_id, field, subject, item, negated) DO UPDATE SET "
            "scope = excluded.scope, text_hash = excluded.text_hash, at = excluded.at",
            [(*astuple(r)[:6], int(r.negated), r.at) for r in rows],
        )

    def of_entries(self, entry_ids: Sequence[str]) -> list[SafetyLinkRow]:
        rows = self._all(f"{SELECT_LINKS} WHERE l.entry_id = ANY(%s)", (list(entry_ids),))
        return [from_row(SafetyLinkRow, r) for r in rows]


__all__ = ["PgBoosts", "PgMeta", "PgProfileHistory", "PgSafetyLinks"]

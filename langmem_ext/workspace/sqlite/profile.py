"""Repository of the ledger's ``profile_history`` table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple

from langmem_ext.workspace.records import ProfileChangeRow
from langmem_ext.workspace.sqlite._repo import SqliteRepo, columns
from langmem_ext.workspace.sqlite._sql import from_row

_COLUMNS = columns(ProfileChangeRow)


class SqliteProfileHistory(SqliteRepo):
    """:class:`~langmem_ext.workspace.records.ProfileHistoryRepository` on SQLite."""

    def record(self, rows: Sequence[ProfileChangeRow]) -> None:
        """Append changes (in one write)."""
        if rows:
            with self._atomic():
                self._run_many(
                    f"INSERT INTO profile_history ({_COLUMNS}) VALUES (?,?,?,?,?,?)",
                    [astuple(r) for r in rows],
                )

    def of_scope(self, scope: str, field: str | None = None) -> list[ProfileChangeRow]:
        """A scope's changes (of one field when given), oldest first."""
        sql = f"SELECT {_COLUMNS} FROM profile_history WHERE scope = ?"
        params: tuple[str, ...] = (scope,)
        if field is not None:
            sql += " AND field = ?"
            params = (scope, field)
        return [from_row(ProfileChangeRow, r) for r in self._all(sql + " ORDER BY seq", params)]

    def latest(self, scope: str) -> dict[str, str | None]:
        """The last recorded value (JSON) of every field the scope ever changed."""
        rows = self._all(
            "SELECT field, new_value FROM profile_history WHERE seq IN "
            "(SELECT max(seq) FROM profile_history WHERE scope = ? GROUP BY field)",
            (scope,),
        )
        return {str(f): (None if v is None else str(v)) for f, v in rows}


__all__ = ["SqliteProfileHistory"]

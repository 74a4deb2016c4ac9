"""Repository of the ledger's ``meta`` table."""

from __future__ import annotations

from langmem_ext.workspace.sqlite._repo import SqliteRepo


class SqliteMeta(SqliteRepo):
    """:class:`~langmem_ext.workspace.records.MetaRepository` on SQLite."""

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None``."""
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return str(row[0]) if row else None

    def set(self, key: str, value: str) -> None:
        """Write ``key`` (replacing its value)."""
        self._run("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Every key starting with ``prefix``, with its value."""
        rows = self._all(
            "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key",
            (len(prefix), prefix),
        )
        return {str(k): str(v) for k, v in rows}

    def delete(self, key: str) -> None:
        """Remove ``key`` (nothing when it is not there)."""
        self._run("DELETE FROM meta WHERE key = ?", (key,))

"""Repository of the ledger's ``idempotency_keys`` table on SQLite (ledger migration 12).

The embedded engine's write goes file, then ledger, then index, so the key's row
cannot commit with the whole write; the server stores it right after the write,
both under the workspace lock (see :mod:`langmem_ext.server.idempotency`).
"""

from __future__ import annotations

from langmem_ext.workspace.sql.base import SQLITE
from langmem_ext.workspace.sql.idempotency import SharedIdempotencyKeys
from langmem_ext.workspace.sqlite._repo import SqliteRepo


class SqliteIdempotencyKeys(SqliteRepo, SharedIdempotencyKeys):
    """:class:`~langmem_ext.workspace.records.IdempotencyKeyRepository` in ``state.db``."""

    dialect = SQLITE


__all__ = ["SqliteIdempotencyKeys"]

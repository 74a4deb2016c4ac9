"""Repository of the ledger's ``idempotency_keys`` table on PostgreSQL (ledger
migration 12).

Called inside the write's transaction (:meth:`Workspace.one_commit
<langmem_ext.workspace.store.Workspace.one_commit>`), the key's row commits with the
write: a replica killed mid-write leaves both or neither.
"""

from __future__ import annotations

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.sql.base import POSTGRES
from langmem_ext.workspace.sql.idempotency import SharedIdempotencyKeys


class PgIdempotencyKeys(PgRepo, SharedIdempotencyKeys):
    """:class:`~langmem_ext.workspace.records.IdempotencyKeyRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.idempotency.SqliteIdempotencyKeys`)."""

    dialect = POSTGRES


__all__ = ["PgIdempotencyKeys"]

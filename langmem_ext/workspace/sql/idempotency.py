"""The idempotency keys' statements both engines run (``idempotency_keys``, ledger
migration 12).

A row holds what a write sent with an ``Idempotency-Key`` answered, per scope,
caller and key. Written inside the write's own transaction, it commits with the
write or not at all (where the engine's writes are one transaction: PostgreSQL).
"""

from __future__ import annotations

from dataclasses import astuple

from langmem_ext.workspace.records import IdempotencyRow
from langmem_ext.workspace.sql.base import SharedRepo, columns, from_row

_COLS = columns(IdempotencyRow)


class SharedIdempotencyKeys(SharedRepo):
    """:class:`~langmem_ext.workspace.records.IdempotencyKeyRepository` in either
    dialect."""

    def get(self, scope: str, caller: str, key: str) -> IdempotencyRow | None:
        row = self._one(
            self.dialect.sql(
                f"SELECT {_COLS} FROM idempotency_keys WHERE scope = ? AND caller = ? AND key = ?"
            ),
            (scope, caller, key),
        )
        return from_row(IdempotencyRow, row) if row is not None else None

    def put(self, row: IdempotencyRow) -> bool:
        marks = ", ".join("?" * len(astuple(row)))
        return bool(
            self._changed(
                self.dialect.sql(
                    f"INSERT INTO idempotency_keys ({_COLS}) VALUES ({marks}) "
                    "ON CONFLICT (scope, caller, key) DO NOTHING"
                ),
                astuple(row),
            )
        )

    def prune(self, before: float) -> int:
        return self._changed(
            self.dialect.sql("DELETE FROM idempotency_keys WHERE created_at < ?"), (before,)
        )


__all__ = ["SharedIdempotencyKeys"]

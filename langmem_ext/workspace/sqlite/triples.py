"""Repository of the knowledge graph's tables on SQLite: ``triples``,
``triple_support``, ``triple_marks`` (ledger migration 5). The statements are
shared with PostgreSQL (:mod:`langmem_ext.workspace.sql.triples`)."""

from __future__ import annotations

from langmem_ext.workspace.records import triple_id
from langmem_ext.workspace.sql.base import SQLITE
from langmem_ext.workspace.sql.triples import SharedTriples
from langmem_ext.workspace.sqlite._repo import SqliteRepo


class SqliteTriples(SqliteRepo, SharedTriples):
    """:class:`~langmem_ext.workspace.records.TripleRepository` on SQLite."""

    dialect = SQLITE


__all__ = ["SqliteTriples", "triple_id"]

"""Repository of the knowledge graph's tables on PostgreSQL: ``triples``,
``triple_support`` and ``triple_marks``. The statements are shared with SQLite
(:mod:`langmem_ext.workspace.sql.triples`)."""

from __future__ import annotations

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.sql.base import POSTGRES
from langmem_ext.workspace.sql.triples import SharedTriples


class PgTriples(PgRepo, SharedTriples):
    """:class:`~langmem_ext.workspace.records.TripleRepository` on PostgreSQL."""

    dialect = POSTGRES


__all__ = ["PgTriples"]

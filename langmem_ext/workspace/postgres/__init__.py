"""The PostgreSQL engines of the workspace: everything in one database, shared by
replicas.

The ledger with the same tables and numbered migrations as
:mod:`langmem_ext.workspace.sqlite` (:mod:`~langmem_ext.workspace.postgres.schema`),
the Markdown documents as line rows with their edit history, the keyword index (BM25 as FTS5 computes
it, over the project's own tokens, Chinese included), pgvector for vectors, advisory
locks for the workspace lock, job leases, LangGraph's ``PostgresSaver`` for
checkpoints, and the embedding cache; psycopg 3 with one connection pool.
:func:`~langmem_ext.workspace.postgres.engines.open_postgres_engines` opens them from
a URL; :mod:`~langmem_ext.workspace.postgres.copy` moves an embedded workspace in
and its files out. Needs the ``postgres`` extra (``pip install
"langmem-ext[postgres]"``); nothing here is imported unless a PostgreSQL URL is used.
"""

from __future__ import annotations

import importlib.util


def _register() -> None:
    """Register this engine set for ``postgresql://`` URLs with the workspace's engine
    factory (:mod:`langmem_ext.workspace.engines`), when the package has one; the
    factory imports this package on the first such URL."""
    if importlib.util.find_spec("langmem_ext.workspace.engines") is None:
        return
    from langmem_ext.workspace import engines as factory
    from langmem_ext.workspace.postgres.engines import open_for_request

    for scheme in ("postgresql", "postgres"):
        factory.register_engine(scheme, open_for_request)  # type: ignore[attr-defined]


_register()

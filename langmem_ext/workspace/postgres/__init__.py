"""The PostgreSQL engines of the workspace: everything in one database, shared by
replicas.

The ledger with the same tables and numbered migrations as
:mod:`langmem_ext.workspace.sqlite` (:mod:`~langmem_ext.workspace.postgres.schema`),
the Markdown documents as versioned rows, the keyword index (BM25 as FTS5 computes
it, over the project's own tokens, Chinese included), pgvector for vectors, advisory
locks for the workspace lock, job leases, LangGraph's ``PostgresSaver`` for
checkpoints, and the embedding cache; psycopg 3 with one connection pool.
:func:`~langmem_ext.workspace.postgres.engines.open_postgres_engines` opens them from
a URL; :mod:`~langmem_ext.workspace.postgres.copy` moves an embedded workspace in
and its files out. Needs the ``postgres`` extra (``pip install
"langmem-ext[postgres]"``); nothing here is imported unless a PostgreSQL URL is used.
"""

"""The PostgreSQL engine of the workspace: the ledger, vectors, keywords and lock in
one database.

The same tables and numbered migrations as :mod:`langmem_ext.workspace.sqlite`
(:mod:`~langmem_ext.workspace.postgres.schema`), psycopg 3 with a connection pool,
pgvector for vectors, full-text search over the project's own tokens, advisory locks
for the workspace lock and LangGraph's ``PostgresSaver`` for checkpoints. Needs the
``postgres`` extra (``pip install "langmem-ext[postgres]"``); nothing here is
imported unless a PostgreSQL URL is used.
"""

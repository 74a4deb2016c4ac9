"""The SQLite engine of the workspace: the one package that knows SQL.

The ledger (``state.db``: connection, WAL, transactions, the versioned schema and
one repository per table family) and the derived keyword index (``.index/index.db``:
the doc table, FTS5, kept vectors, ``data_version``). Services and the rest of the
workspace call the repositories' typed methods; a second engine (PostgreSQL) fills
the same methods.
"""

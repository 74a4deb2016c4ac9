"""The ledger's schema on PostgreSQL and its versioned migrations.

The same tables and the same numbered steps as
:mod:`langmem_ext.workspace.sqlite.schema` (a version means the same thing on both
engines), in PostgreSQL's dialect: ``DOUBLE PRECISION`` times, identity columns
for SQLite's ``AUTOINCREMENT``, and the keyword tables (``session_events_fts``,
``store_fts``) as token arrays in place of FTS5 (the store's with a ``tsvector``
under a GIN index, the events' with a postings table, ``session_event_terms``).
Text columns compared by range (``slot``, ``ns``) use the ``"C"`` collation (byte
order, as SQLite compares). ``entries`` carries a ``rowid`` (a new one on each
upsert, as SQLite's ``INSERT OR REPLACE`` gives) for the order rows were written.

The version lives in ``ledger_schema``. Opening runs the missing steps under a
session advisory lock, one transaction each, so replicas starting together
migrate once.
"""

from __future__ import annotations

import logging
from typing import Any

from langmem_ext.core.errors import SchemaVersionError
from langmem_ext.workspace.sql import schema as ddl
from langmem_ext.workspace.sqlite.schema import LEDGER_MIGRATIONS as _SQLITE_STEPS
from langmem_ext.workspace.sqlite.schema import Migration

logger = logging.getLogger(__name__)

MIGRATION_LOCK_KEY = 0x6C6D_6C65_6467_0001
"""The advisory lock key held while the ledger is migrated."""

_T = ddl.POSTGRES_TYPES
_ENTRIES = (
    *ddl.entries(_T),
    "CREATE INDEX IF NOT EXISTS entries_path ON entries(path) WHERE deleted_at IS NULL",
    *ddl.entry_history(_T),
)
_PENDING = (
    *ddl.pending(_T),
    "CREATE INDEX IF NOT EXISTS pending_entry ON pending(entry_id)",
)
_BOOSTS_META = ddl.boosts_meta(_T)
_SESSION_EVENTS = (
    *ddl.session_events(_T),
    # FTS5's table: each event's distinct tokens under its id, and their postings
    # (term, scope -> count, length) that BM25 is summed over
    """CREATE TABLE IF NOT EXISTS session_events_fts (
    id BIGINT PRIMARY KEY,
    tokens TEXT[] NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS session_event_terms (
    term TEXT COLLATE "C" NOT NULL,
    scope TEXT COLLATE "C" NOT NULL,
    id BIGINT NOT NULL,
    tf INTEGER NOT NULL,
    dl INTEGER NOT NULL,
    PRIMARY KEY (term, scope, id) INCLUDE (tf, dl)
)""",
    "CREATE INDEX IF NOT EXISTS session_event_terms_id ON session_event_terms(id)",
)
_SESSIONS = ddl.sessions(_T)
_STORE = ddl.store(_T)
_STORE_FTS = (
    # One document per store item: its texts' tokens.
    """CREATE TABLE IF NOT EXISTS store_fts (
    item_id BIGINT PRIMARY KEY,
    tokens TEXT[] NOT NULL,
    tsv TSVECTOR GENERATED ALWAYS AS (array_to_tsvector(tokens)) STORED
)""",
    "CREATE INDEX IF NOT EXISTS store_fts_tsv ON store_fts USING gin(tsv)",
    "INSERT INTO store_fts (item_id, tokens) SELECT item_id, "
    "array_remove(string_to_array(string_agg(tokens, ' '), ' '), '') FROM store_texts "
    "GROUP BY item_id",
)


_STATEMENTS: dict[int, tuple[str, ...]] = {
    1: _ENTRIES + _PENDING + _BOOSTS_META + _SESSION_EVENTS + _SESSIONS + _STORE,
    2: (
        "ALTER TABLE entries ADD COLUMN IF NOT EXISTS valid_to DOUBLE PRECISION",
        "ALTER TABLE entries ADD COLUMN IF NOT EXISTS supersedes TEXT",
        'ALTER TABLE entries ADD COLUMN IF NOT EXISTS slot TEXT COLLATE "C"',
        "CREATE INDEX IF NOT EXISTS entries_closed ON entries(scope, valid_to) "
        "WHERE valid_to IS NOT NULL",
        "CREATE INDEX IF NOT EXISTS entries_slot ON entries(scope, slot) WHERE slot IS NOT NULL",
        "CREATE INDEX IF NOT EXISTS entries_supersedes ON entries(supersedes) "
        "WHERE supersedes IS NOT NULL",
    ),
    3: _STORE_FTS,
    4: ddl.profile(_T),
    5: ddl.triples(_T),
    6: (
        "CREATE INDEX IF NOT EXISTS entries_current_slot ON entries(scope, slot, created_at) "
        "WHERE slot IS NOT NULL AND valid_to IS NULL AND deleted_at IS NULL",
    ),
    7: ("ALTER TABLE pending ADD COLUMN IF NOT EXISTS supersedes TEXT",),
    8: ddl.repair_times(
        _T, "entries", ("created_at", "updated_at"), ("last_access", "deleted_at", "valid_to")
    )
    + ddl.repair_times(_T, "pending", ("created_at", "expires_at", "said_at"), ("resolved_at",))
    + ddl.repair_times(_T, "entry_history", ("at",), ())
    + ddl.repair_times(_T, "boosts", ("at",), ()),
    9: ("ALTER TABLE pending ADD COLUMN IF NOT EXISTS thread_id TEXT",),
    10: ddl.safety_links(_T),
    11: ddl.job_leases(_T),
    12: ddl.idempotency_keys(_T),
    13: ddl.turn_jobs(_T),
}

PG_LEDGER_MIGRATIONS: tuple[Migration, ...] = tuple(
    Migration(step.version, step.description, _STATEMENTS[step.version]) for step in _SQLITE_STEPS
)
"""Every step of the ledger's schema on PostgreSQL, oldest first: the SQLite steps'
versions and descriptions with PostgreSQL statements."""

_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS ledger_schema (version INTEGER NOT NULL)"


def schema_version(conn: Any) -> int:
    """The version a database is at (0 when never migrated)."""
    if conn.execute("SELECT to_regclass('ledger_schema')").fetchone()[0] is None:
        return 0
    row = conn.execute("SELECT max(version) FROM ledger_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(conn: Any, migrations: tuple[Migration, ...] = PG_LEDGER_MIGRATIONS) -> list[int]:
    """Bring a database to the newest version, one transaction per step, under the
    migration advisory lock (another process migrating waits, then finds it done).

    Args:
        conn: An autocommit psycopg connection.
        migrations: The steps, oldest first.

    Returns:
        The versions applied (empty when the database was current).

    Raises:
        SchemaVersionError: The database is at a version this code does not know.
    """
    newest = migrations[-1].version if migrations else 0
    applied: list[int] = []
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
    try:
        current = schema_version(conn)
        if current > newest:
            raise SchemaVersionError(
                f"the database is at schema version {current}, newer than this package's "
                f"{newest}: upgrade langmem-ext"
            )
        for step in migrations:
            if step.version <= current:
                continue
            with conn.transaction():
                conn.execute(_VERSION_TABLE)
                for statement in step.statements:
                    conn.execute(statement)
                conn.execute("DELETE FROM ledger_schema")
                conn.execute("INSERT INTO ledger_schema VALUES (%s)", (step.version,))
            applied.append(step.version)
            logger.info("ledger migrated to schema version %d: %s", step.version, step.description)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
    return applied


__all__ = ["MIGRATION_LOCK_KEY", "PG_LEDGER_MIGRATIONS", "migrate", "schema_version"]

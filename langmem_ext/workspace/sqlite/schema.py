"""The ledger's schema (``state.db``) and its versioned migrations.

One module knows every step of the ledger's schema (the tables both engines
create are declared in :mod:`langmem_ext.workspace.sql.schema`). A database records the version it
was migrated to in ``PRAGMA user_version``; opening applies, in one transaction
each, the migrations above it, so an old workspace is migrated once and a new one
is created by the same path. A workspace written before versions existed is at
version 0 with some or all of version 1's tables: version 1 only creates what is
missing (``IF NOT EXISTS``), so it migrates such a workspace without touching a row.

To change the schema, append a :class:`Migration`; never edit a released one.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass

from langmem_ext.core.errors import SchemaVersionError
from langmem_ext.workspace.sql import schema as ddl

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Migration:
    """One step of the schema.

    Attributes:
        version: The ``user_version`` after this step (1, 2, ...).
        description: What the step adds, for the log.
        statements: SQL statements run in order inside one transaction.
    """

    version: int
    description: str
    statements: tuple[str, ...]


_T = ddl.SQLITE_TYPES
_ENTRIES = ddl.entries(_T) + ddl.entry_history(_T)
_PENDING = ddl.pending(_T)
_BOOSTS_META = ddl.boosts_meta(_T)
_SESSION_EVENTS = (
    *ddl.session_events(_T),
    "CREATE VIRTUAL TABLE IF NOT EXISTS session_events_fts "
    "USING fts5(tokens, tokenize = 'ascii', detail = 'none')",
)
_SESSIONS = ddl.sessions(_T)
_STORE = ddl.store(_T)
_STORE_FTS = (
    # One document per store item (rowid = store_items.id): its texts' tokens.
    "CREATE VIRTUAL TABLE IF NOT EXISTS store_fts USING fts5(tokens, tokenize = 'unicode61')",
    "INSERT INTO store_fts (rowid, tokens) "
    "SELECT item_id, group_concat(tokens, ' ') FROM store_texts GROUP BY item_id",
)


LEDGER_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "entries, history, pending, boosts, meta, session events, sessions, "
        "checkpoints, store items",
        _ENTRIES + _PENDING + _BOOSTS_META + _SESSION_EVENTS + _SESSIONS + _STORE,
    ),
    Migration(
        2,
        "memory versions: entries.valid_to (superseded at), supersedes (the version it "
        "replaced), slot (what a later statement of the same fact replaces)",
        (
            "ALTER TABLE entries ADD COLUMN valid_to REAL",
            "ALTER TABLE entries ADD COLUMN supersedes TEXT",
            "ALTER TABLE entries ADD COLUMN slot TEXT",
            "CREATE INDEX IF NOT EXISTS entries_closed ON entries(scope, valid_to) "
            "WHERE valid_to IS NOT NULL",
            "CREATE INDEX IF NOT EXISTS entries_slot ON entries(scope, slot) "
            "WHERE slot IS NOT NULL",
            "CREATE INDEX IF NOT EXISTS entries_supersedes ON entries(supersedes) "
            "WHERE supersedes IS NOT NULL",
        ),
    ),
    Migration(3, "keyword index of store items (store_fts)", _STORE_FTS),
    Migration(4, "user profiles: every change of a field (profile_history)", ddl.profile(_T)),
    Migration(
        5,
        "knowledge graph: triples, the memories supporting them (triple_support), "
        "which memories were extracted (triple_marks)",
        ddl.triples(_T),
    ),
    Migration(
        6,
        "current versions by slot, newest first (entries_current_slot): the slot stage "
        "reads the newest memories of a slot without sorting all of them",
        (
            "CREATE INDEX IF NOT EXISTS entries_current_slot "
            "ON entries(scope, slot, created_at) "
            "WHERE slot IS NOT NULL AND valid_to IS NULL AND deleted_at IS NULL",
        ),
    ),
    Migration(
        7,
        "pending updates: pending.supersedes (the memory a confirmed item replaces as its "
        "new version)",
        ("ALTER TABLE pending ADD COLUMN supersedes TEXT",),
    ),
    Migration(
        8,
        "times out of range repaired: epoch milliseconds written by older versions become "
        "seconds; other impossible times of entries, pending items, history and boosts "
        "become the time of the repair (or empty where a time is optional)",
        ddl.repair_times(
            _T, "entries", ("created_at", "updated_at"), ("last_access", "deleted_at", "valid_to")
        )
        + ddl.repair_times(_T, "pending", ("created_at", "expires_at", "said_at"), ("resolved_at",))
        + ddl.repair_times(_T, "entry_history", ("at",), ())
        + ddl.repair_times(_T, "boosts", ("at",), ()),
    ),
    Migration(
        9,
        "pending saves: pending.thread_id (the conversation that proposed it; only a reply "
        "in that conversation may confirm it)",
        ("ALTER TABLE pending ADD COLUMN thread_id TEXT",),
    ),
    Migration(
        10,
        "safety links: the profile's safety fields each memory states (safety_links)",
        ddl.safety_links(_T),
    ),
    Migration(
        11,
        "job leases: which process runs a background job of a scope, until when (job_leases)",
        ddl.job_leases(_T),
    ),
    Migration(
        12,
        "idempotency keys: the stored response of a write sent with an Idempotency-Key "
        "(idempotency_keys)",
        ddl.idempotency_keys(_T),
    ),
    Migration(
        13,
        "turn jobs: turns accepted and waiting for extraction, with their claims (turn_jobs)",
        ddl.turn_jobs(_T),
    ),
)
"""Every step of the ledger's schema, oldest first."""

LEDGER_VERSION = LEDGER_MIGRATIONS[-1].version
"""The version this code writes and reads."""


def schema_version(conn: sqlite3.Connection) -> int:
    """The version a database is at (``PRAGMA user_version``; 0 when never migrated)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(
    conn: sqlite3.Connection, migrations: tuple[Migration, ...] = LEDGER_MIGRATIONS
) -> list[int]:
    """Bring a database to the newest version, one transaction per step.

    Args:
        conn: An autocommit connection (``isolation_level=None``).
        migrations: The steps, oldest first.

    Returns:
        The versions applied (empty when the database was current).

    Raises:
        SchemaVersionError: The database is at a version this code does not know.
    """
    current = schema_version(conn)
    newest = migrations[-1].version if migrations else 0
    if current > newest:
        raise SchemaVersionError(
            f"the database is at schema version {current}, newer than this package's "
            f"{newest}: upgrade langmem-ext"
        )
    applied: list[int] = []
    for step in migrations:
        if step.version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if schema_version(conn) >= step.version:  # another process got here first
                conn.execute("ROLLBACK")
                continue
            for statement in step.statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {int(step.version)}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(step.version)
        logger.info("ledger migrated to schema version %d: %s", step.version, step.description)
    return applied


__all__ = [
    "LEDGER_MIGRATIONS",
    "LEDGER_VERSION",
    "Migration",
    "migrate",
    "schema_version",
]

"""The ledger's schema (``state.db``) and its versioned migrations.

One module knows every table of the ledger. A database records the version it
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


_ENTRIES = (
    """CREATE TABLE IF NOT EXISTS entries (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    path TEXT NOT NULL,
    category TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    importance REAL NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_access REAL,
    access_count INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'user',
    verified INTEGER NOT NULL DEFAULT 0,
    deleted_at REAL
)""",
    "CREATE INDEX IF NOT EXISTS entries_scope ON entries(scope, deleted_at)",
    """CREATE TABLE IF NOT EXISTS entry_history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    op TEXT NOT NULL,
    old_text TEXT,
    new_text TEXT,
    at REAL NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS entry_history_entry ON entry_history(entry_id)",
)

_PENDING = (
    """CREATE TABLE IF NOT EXISTS pending (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    text TEXT NOT NULL,
    target TEXT NOT NULL,
    category TEXT NOT NULL,
    importance REAL NOT NULL,
    source TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    status TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    resolved_at REAL,
    said_at REAL NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS pending_scope ON pending(scope, status)",
)

_BOOSTS_META = (
    """CREATE TABLE IF NOT EXISTS boosts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id TEXT NOT NULL,
    amount REAL NOT NULL,
    at REAL NOT NULL,
    reason TEXT
)""",
    "CREATE INDEX IF NOT EXISTS boosts_entry ON boosts(entry_id, at)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

_SESSION_EVENTS = (
    """CREATE TABLE IF NOT EXISTS session_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    at REAL NOT NULL,
    path TEXT NOT NULL,
    line INTEGER NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS session_events_scope_at ON session_events(scope, at)",
    "CREATE INDEX IF NOT EXISTS session_events_thread_at ON session_events(scope, thread_id, at)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS session_events_fts "
    "USING fts5(tokens, tokenize = 'ascii', detail = 'none')",
)

_SESSIONS = (
    """CREATE TABLE IF NOT EXISTS session_messages (
    scope TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    message TEXT NOT NULL,
    at REAL NOT NULL,
    compacted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, thread_id, seq)
)""",
    """CREATE TABLE IF NOT EXISTS sessions (
    scope TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0,
    summarized_seq INTEGER NOT NULL DEFAULT 0,
    flushed_seq INTEGER NOT NULL DEFAULT 0,
    first_turn_at REAL,
    episode_id TEXT,
    episode_day TEXT,
    PRIMARY KEY (scope, thread_id)
)""",
    "CREATE INDEX IF NOT EXISTS sessions_updated ON sessions(updated_at)",
    """CREATE TABLE IF NOT EXISTS checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    cut_seq INTEGER NOT NULL,
    compacted INTEGER NOT NULL,
    used_fallback INTEGER NOT NULL,
    flushed INTEGER NOT NULL,
    created_at REAL NOT NULL,
    conversation_at REAL NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS checkpoints_thread ON checkpoints(scope, thread_id, id)",
)

_STORE = (
    """CREATE TABLE IF NOT EXISTS store_items (
    id INTEGER PRIMARY KEY,
    ns TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    ttl_minutes REAL,
    expires_at REAL,
    UNIQUE (ns, key)
)""",
    "CREATE INDEX IF NOT EXISTS store_items_expires ON store_items(expires_at)",
    """CREATE TABLE IF NOT EXISTS store_texts (
    item_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    ns TEXT NOT NULL,
    vec_id TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vec_hash TEXT,
    PRIMARY KEY (item_id, path)
)""",
    "CREATE INDEX IF NOT EXISTS store_texts_ns ON store_texts(ns, vec_hash)",
    "CREATE INDEX IF NOT EXISTS store_texts_vec ON store_texts(vec_id)",
)

_STORE_FTS = (
    # One document per store item (rowid = store_items.id): its texts' tokens.
    "CREATE VIRTUAL TABLE IF NOT EXISTS store_fts USING fts5(tokens, tokenize = 'unicode61')",
    "INSERT INTO store_fts (rowid, tokens) "
    "SELECT item_id, group_concat(tokens, ' ') FROM store_texts GROUP BY item_id",
)

_PROFILE = (
    """CREATE TABLE IF NOT EXISTS profile_history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    field TEXT NOT NULL,
    old_value TEXT,
    new_value TEXT,
    source TEXT NOT NULL,
    at REAL NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS profile_history_scope ON profile_history(scope, field, seq)",
)

_TRIPLES = (
    """CREATE TABLE IF NOT EXISTS triples (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    subject_key TEXT NOT NULL,
    subject TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object_key TEXT NOT NULL,
    object TEXT NOT NULL,
    negated INTEGER NOT NULL DEFAULT 0,
    frequency TEXT,
    condition TEXT,
    created_at REAL NOT NULL,
    UNIQUE (scope, subject_key, predicate, object_key, negated)
)""",
    "CREATE INDEX IF NOT EXISTS triples_subject ON triples(scope, subject_key)",
    "CREATE INDEX IF NOT EXISTS triples_object ON triples(scope, object_key)",
    """CREATE TABLE IF NOT EXISTS triple_support (
    triple_id TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    PRIMARY KEY (triple_id, entry_id)
)""",
    "CREATE INDEX IF NOT EXISTS triple_support_entry ON triple_support(entry_id)",
    """CREATE TABLE IF NOT EXISTS triple_marks (
    entry_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    extractor TEXT NOT NULL,
    at REAL NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS triple_marks_scope ON triple_marks(scope)",
)

_SAFETY_LINKS = (
    """CREATE TABLE IF NOT EXISTS safety_links (
    entry_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    field TEXT NOT NULL,
    subject TEXT NOT NULL,
    item TEXT NOT NULL,
    negated INTEGER NOT NULL DEFAULT 0,
    at REAL NOT NULL,
    PRIMARY KEY (entry_id, field, subject, item, negated)
)""",
    "CREATE INDEX IF NOT EXISTS safety_links_scope ON safety_links(scope, field, subject)",
)


_JOB_LEASES = (
    """CREATE TABLE IF NOT EXISTS job_leases (
    job TEXT NOT NULL,
    scope TEXT NOT NULL,
    holder TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (job, scope)
)""",
)


_EARLIEST, _LATEST = -2208988800.0, 32503680000.0
"""1900-01-01 and 3000-01-01 UTC in epoch seconds: the range of a time the package writes."""


def _repair_times(
    table: str, required: tuple[str, ...], optional: tuple[str, ...]
) -> tuple[str, ...]:
    """Statements that bring the times of ``table`` back into range: a value a thousand
    times too large (milliseconds) is divided by 1000; any other out-of-range value of
    a required column becomes the time of the repair, of an optional one ``NULL``."""
    out: list[str] = []
    bad = f"NOT BETWEEN {_EARLIEST} AND {_LATEST}"
    for col in (*required, *optional):
        out.append(
            f"UPDATE {table} SET {col} = {col} / 1000.0 WHERE {col} >= {_LATEST} "
            f"AND {col} / 1000.0 BETWEEN {_EARLIEST} AND {_LATEST}"
        )
    for col in required:
        out.append(
            f"UPDATE {table} SET {col} = (julianday('now') - 2440587.5) * 86400.0 WHERE {col} {bad}"
        )
    for col in optional:
        out.append(f"UPDATE {table} SET {col} = NULL WHERE {col} {bad}")
    return tuple(out)


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
    Migration(4, "user profiles: every change of a field (profile_history)", _PROFILE),
    Migration(
        5,
        "knowledge graph: triples, the memories supporting them (triple_support), "
        "which memories were extracted (triple_marks)",
        _TRIPLES,
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
        _repair_times(
            "entries", ("created_at", "updated_at"), ("last_access", "deleted_at", "valid_to")
        )
        + _repair_times("pending", ("created_at", "expires_at", "said_at"), ("resolved_at",))
        + _repair_times("entry_history", ("at",), ())
        + _repair_times("boosts", ("at",), ()),
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
        _SAFETY_LINKS,
    ),
    Migration(
        11,
        "job leases: which process runs a background job of a scope, until when (job_leases)",
        _JOB_LEASES,
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

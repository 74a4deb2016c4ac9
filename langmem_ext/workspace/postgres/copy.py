"""Move an embedded workspace's ledger and Markdown files into PostgreSQL.

:func:`copy_ledger` copies every table of a SQLite ledger (``state.db``) into an
empty PostgreSQL ledger in one transaction: the same rows with the same ids (ids
other tables name: store items, events, checkpoints), entries in the order they were
written, the keyword tables in PostgreSQL's form (an event's tokens as an array, the
store's documents rebuilt from their texts), and every identity sequence moved past
the ids copied. :func:`copy_documents` copies the scopes' memory files into the
document store. Both refuse a target that already holds data, and a failure leaves
the target as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.workspace.layout import Layout
from langmem_ext.workspace.postgres.documents import PgDocuments
from langmem_ext.workspace.postgres.events import POST_EVENTS
from langmem_ext.workspace.postgres.ledger import PgLedger
from langmem_ext.workspace.sqlite.ledger import Ledger

TABLES: tuple[tuple[str, str | None], ...] = (
    ("meta", None),
    ("entries", None),
    ("entry_history", "seq"),
    ("pending", None),
    ("boosts", "seq"),
    ("session_events", "id"),
    ("session_messages", None),
    ("sessions", None),
    ("checkpoints", "id"),
    ("store_items", "id"),
    ("store_texts", None),
    ("profile_history", "seq"),
    ("triples", None),
    ("triple_support", None),
    ("triple_marks", None),
    ("safety_links", None),
)
"""The ledger's tables copied as they are, each with its identity column (if any)."""


def copy_ledger(source: Ledger, target: PgLedger, *, batch: int = 2_000) -> dict[str, int]:
    """Copy every row of ``source`` into ``target`` (one transaction).

    Args:
        source: The SQLite ledger (read only).
        target: An empty PostgreSQL ledger (migrated, no entries, events or items).
        batch: Rows sent per statement batch.

    Returns:
        Rows copied per table (``session_events_fts``: events with keyword tokens).

    Raises:
        InvalidInputError: ``target`` already holds rows.
    """
    copied: dict[str, int] = {}
    with target.transaction() as conn:
        for table, _identity in TABLES:
            if table == "meta":
                continue  # the target's own settings (tokenizer) are kept, others added
            if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0]:
                raise InvalidInputError(
                    f"the PostgreSQL ledger already holds {table}: copy into an empty database"
                )
        for table, identity in TABLES:
            cols = [str(r[1]) for r in source.query(f"PRAGMA table_info({table})")]
            order = "rowid" if table == "entries" else (identity or "rowid")
            rows = source.query(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}")
            sql = (
                f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})"
            )
            if table == "meta":
                sql += " ON CONFLICT (key) DO NOTHING"
            _insert(conn, sql, rows, batch)
            copied[table] = len(rows)
            if identity is not None:
                conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{identity}'), "
                    f"coalesce((SELECT max({identity}) FROM {table}), 0) + 1, false)"
                )
        events = source.query("SELECT rowid, tokens FROM session_events_fts ORDER BY rowid")
        _insert(
            conn,
            "INSERT INTO session_events_fts (id, tokens) VALUES (%s, %s)",
            [(int(i), [t for t in str(toks).split(" ") if t]) for i, toks in events],
            batch,
        )
        copied["session_events_fts"] = len(events)
        conn.execute(POST_EVENTS + " GROUP BY t, e.scope, f.id")
        conn.execute(
            "INSERT INTO store_fts (item_id, tokens) SELECT item_id, "
            "array_remove(string_to_array(string_agg(tokens, ' '), ' '), '') FROM store_texts "
            "GROUP BY item_id"
        )
    return copied


def _insert(conn: Any, sql: str, rows: list[tuple[Any, ...]], batch: int) -> None:
    with conn.cursor() as cur:
        for start in range(0, len(rows), batch):
            cur.executemany(sql, rows[start : start + batch])


def copy_documents(root: Path, target: PgDocuments) -> dict[str, int]:
    """Copy the memory files of every scope of the workspace at ``root``.

    Returns:
        Files copied per scope.

    Raises:
        InvalidInputError: ``target`` already holds files.
        MemoryFileError: A file is not UTF-8.
    """
    if target.scopes():
        raise InvalidInputError("the document store already holds files: copy into an empty one")
    layout = Layout(root)
    copied: dict[str, int] = {}
    with target.transaction():
        for scope in layout.scopes():
            for path in layout.memory_files(scope):
                target.write(scope, layout.rel(path), layout.read(path, scope))
                copied[scope] = copied.get(scope, 0) + 1
    return copied


def export_documents(source: PgDocuments, root: Path) -> dict[str, int]:
    """Write every scope's memory files from ``source`` into the folder ``root``, as the
    embedded engines lay them out (``MEMORY.md``, ``memory/…``), each atomically.

    Returns:
        Files written per scope.

    Raises:
        InvalidInputError: A file to write exists already with other text.
    """
    from langmem_ext.workspace.files import atomic_write_text

    layout = Layout(root)
    planned: list[tuple[str, Path, str]] = []
    for scope in source.scopes():
        for rel in source.list(scope):
            path, text = layout.root / rel, source.read(scope, rel)
            if path.exists() and path.read_text(encoding="utf-8") != text:
                raise InvalidInputError(f"{path} exists with other text: export into a new folder")
            planned.append((scope, path, text))
    written: dict[str, int] = {}
    for scope, path, text in planned:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        written[scope] = written.get(scope, 0) + 1
    return written


__all__ = ["TABLES", "copy_documents", "copy_ledger", "export_documents"]

"""Move an embedded workspace (ledger, Markdown files, checkpoints) into PostgreSQL.

:func:`copy_ledger` copies every table of a SQLite ledger (``state.db``) into an
empty PostgreSQL ledger in one transaction: the same rows with the same ids (ids
other tables name: store items, events, checkpoints), entries in the order they were
written, the keyword tables in PostgreSQL's form (an event's tokens as an array, the
store's documents rebuilt from their texts), and every identity sequence moved past
the ids copied. :func:`copy_documents` copies the tree of files a person reads
(memory files, ``PROFILE.md``, transcripts) into the document store;
:func:`copy_checkpoints` copies every conversation thread's checkpoints through
LangGraph's saver API. :func:`migrate_workspace` does all three in one transaction
and checks the counts before it commits. Each refuses a target that already holds
data, and a failure leaves the target as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmem_ext.core.errors import InvalidInputError, MigrationError, TargetNotEmptyError
from langmem_ext.workspace.documents import FileDocuments
from langmem_ext.workspace.layout import Layout
from langmem_ext.workspace.postgres.checkpoints import PgCheckpoints
from langmem_ext.workspace.postgres.documents import PgDocuments
from langmem_ext.workspace.postgres.events import POST_EVENTS
from langmem_ext.workspace.postgres.ledger import PgLedger
from langmem_ext.workspace.sqlite.ledger import Ledger
from langmem_ext.workspace.tree import stored_tree

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
        TargetNotEmptyError: ``target`` already holds rows.
    """
    copied: dict[str, int] = {}
    with target.transaction() as conn:
        for table, _identity in TABLES:
            if table == "meta":
                continue  # the target's own settings (tokenizer) are kept, others added
            if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0]:
                raise TargetNotEmptyError(
                    f"the PostgreSQL ledger already holds {table}: copy into an empty "
                    "database, or replace what it holds (--force)"
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
    """Copy every file of the tree of the workspace at ``root`` (memory files,
    ``PROFILE.md``, transcripts; see :mod:`~langmem_ext.workspace.tree`), in one
    transaction.

    Returns:
        Files copied per kind (:data:`~langmem_ext.workspace.tree.KINDS`).

    Raises:
        TargetNotEmptyError: ``target`` already holds files.
        MemoryFileError: A file is not UTF-8.
        InvalidPathError: A file is a symlink.
    """
    if target.tree():
        raise TargetNotEmptyError("the document store already holds files: copy into an empty one")
    files = stored_tree(FileDocuments(Layout(root)))
    copied: dict[str, int] = {}
    with target.transaction():
        for f in files:
            target.write(f.scope, f.rel, f.text)
            copied[f.kind] = copied.get(f.kind, 0) + 1
    return copied


def copy_checkpoints(source: Any, target: Any) -> dict[str, int]:
    """Copy every thread's checkpoints, oldest first, with their parents, metadata
    and pending writes, through LangGraph's saver API (``list``, ``put``,
    ``put_writes``).

    Args:
        source: The saver to read (``BaseCheckpointSaver``).
        target: The saver to write.

    Returns:
        ``{"threads": …, "checkpoints": …, "writes": …}`` copied.
    """
    tuples = list(source.list(None))
    tuples.reverse()  # list() gives the newest first
    threads: set[str] = set()
    writes = 0
    for t in tuples:
        own = t.config["configurable"]
        config: dict[str, Any] = {
            "configurable": {"thread_id": own["thread_id"], "checkpoint_ns": own["checkpoint_ns"]}
        }
        if t.parent_config is not None:
            config["configurable"]["checkpoint_id"] = t.parent_config["configurable"][
                "checkpoint_id"
            ]
        saved = target.put(config, t.checkpoint, t.metadata, t.checkpoint["channel_versions"])
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task_id, channel, value in t.pending_writes or ():
            by_task.setdefault(task_id, []).append((channel, value))
        for task_id, task_writes in by_task.items():
            target.put_writes(saved, task_writes, task_id)
            writes += len(task_writes)
        threads.add(str(own["thread_id"]))
    return {"threads": len(threads), "checkpoints": len(tuples), "writes": writes}


_CLEARED = (
    *(t for t, _ in TABLES if t != "meta"),
    "session_events_fts",
    "session_event_terms",
    "store_fts",
    "documents",
    "document_heads",
    "document_lines",
    "document_edits",
)
"""What ``force`` empties before a copy: the ledger (but its settings) with its keyword
tables, and the documents."""


def migrate_workspace(
    root: Path,
    ledger: PgLedger,
    documents: PgDocuments,
    checkpoints: PgCheckpoints,
    *,
    force: bool = False,
    lock_timeout: float = 30.0,
) -> dict[str, int]:
    """Copy the embedded workspace at ``root`` into a PostgreSQL database, whole or not
    at all.

    One transaction on the database holds everything: (with ``force``) emptying the
    target, the ledger's rows (:func:`copy_ledger`), the tree of files
    (:func:`copy_documents`), every conversation thread's checkpoints
    (:func:`copy_checkpoints`, through a ``PostgresSaver`` on the transaction's
    connection), then a check that the target holds as many rows per table, files and
    checkpoints as were read; any failure rolls it all back. The workspace is read
    under its write lock. The derived indexes (keyword, vectors) are not copied: the
    caller rebuilds them from what was copied.

    Args:
        root: The embedded workspace folder (its ``state.db``, files and
            ``checkpoints.db``).
        ledger: The target's ledger (migrated).
        documents: The target's documents, on the ledger's connections.
        checkpoints: The target's checkpointers.
        force: Replace what the target holds (default: refuse a target with data).
        lock_timeout: Seconds to wait for the workspace's write lock.

    Returns:
        Counts copied: rows per ledger table, ``files.<kind>`` per kind of file,
        ``threads``, ``checkpoints`` and ``writes``.

    Raises:
        InvalidInputError: ``root`` holds no embedded workspace.
        TargetNotEmptyError: The target holds data and ``force`` is not set.
        MigrationError: The target did not read back the counts copied.
        MemoryFileError: A file of the workspace is not UTF-8.
        InvalidPathError: A file of the workspace is a symlink.
    """
    from langgraph.checkpoint.postgres import PostgresSaver

    from langmem_ext.workspace.files import WorkspaceLock as FileLock
    from langmem_ext.workspace.postgres.checkpoints import SCHEMA
    from langmem_ext.workspace.sqlite.checkpoints import SqliteCheckpoints

    layout = Layout(root)
    if not layout.state_db.is_file():
        raise InvalidInputError(
            f"{root} holds no embedded workspace (no state.db): name the workspace folder"
        )
    checkpoints.saver()  # LangGraph's tables exist before the transaction uses them
    source = Ledger(layout.state_db)
    saver: Any = None
    try:
        with FileLock(layout.lock_file, lock_timeout).hold():
            db_file = root / "checkpoints.db"
            saver = SqliteCheckpoints(db_file).saver() if db_file.is_file() else None
            with ledger.transaction() as conn:
                if force:
                    conn.execute(f"TRUNCATE {', '.join(_CLEARED)} RESTART IDENTITY")
                copied = copy_ledger(source, ledger)
                copied.update({f"files.{k}": n for k, n in copy_documents(root, documents).items()})
                _verify(conn, copied)
                if len(documents.tree()) != sum(
                    n for k, n in copied.items() if k.startswith("files.")
                ):
                    raise MigrationError("the database holds other files than were copied")
                conn.execute(f"SET LOCAL search_path TO {SCHEMA}")
                target = PostgresSaver(conn)
                held = {str(t.config["configurable"]["thread_id"]) for t in target.list(None)}
                if held and not force:
                    raise TargetNotEmptyError(
                        f"the database already holds {len(held)} conversation thread(s): "
                        "copy into an empty database, or replace what it holds (--force)"
                    )
                for thread_id in sorted(held):
                    target.delete_thread(thread_id)
                copied.update(
                    copy_checkpoints(saver, target)
                    if saver is not None
                    else {"threads": 0, "checkpoints": 0, "writes": 0}
                )
                if sum(1 for _ in target.list(None)) != copied["checkpoints"]:
                    raise MigrationError("the database holds other checkpoints than were copied")
    finally:
        source.close()
        if saver is not None:
            saver.conn.close()
    return copied


def _verify(conn: Any, copied: dict[str, int]) -> None:
    """Raise :class:`MigrationError` when a table holds another number of rows than
    was copied into it."""
    for table, _ in TABLES:
        if table == "meta":
            continue
        held = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        if held != copied[table]:
            raise MigrationError(
                f"{table} holds {held} rows after copying {copied[table]}; nothing was kept"
            )


__all__ = ["TABLES", "copy_checkpoints", "copy_documents", "copy_ledger", "migrate_workspace"]

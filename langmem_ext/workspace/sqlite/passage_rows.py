"""Passages of ``.index/index.db``: prose chunks and session events, beside the docs.

A *passage* is a text a person wrote or said that is searchable without being a
memory: it has no ledger state, no versions, no importance of its own. Two kinds:

- ``prose``: a chunk of a memory file's prose (:mod:`~langmem_ext.workspace.prose`),
  found by keywords (``passages_fts``) and by its vector; ``prose_files`` remembers
  the file hash each file's chunks were read from, so a sync knows which files'
  prose lags behind their entries;
- ``event``: a message of the session hot log (the ledger's ``session_events``
  keeps it and its keyword tokens), here for its vector only.

A passage's vector is kept in its row (``vec``, of ``vec_model``, embedding the text
whose hash is ``vec_hash``) and written to the vector index's partition of its kind
and scope (:func:`partition`). The doc table runs the statements here inside its
own transactions, so the prose of a file changes with its entries, and lines that
move move for both. Like the rest of ``index.db``, it can be deleted and rebuilt
(from the Markdown files and the ledger).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from langmem_ext.workspace.docs import FileStamp
from langmem_ext.workspace.prose import ProseChunk
from langmem_ext.workspace.sql.passages import COLS, P_COLS, Passage, passage
from langmem_ext.workspace.sql.prose_rows import SELECT_PROSE_ROWS, prose_plan
from langmem_ext.workspace.sql.schema import PASSAGE_INDEXES, PROSE_FILES, SQLITE_TYPES, passages
from langmem_ext.workspace.sqlite.fts import index_doc, unindex_doc

Kind = Literal["prose", "event"]
KINDS: tuple[Kind, ...] = ("prose", "event")

SCHEMA = "\n" + "".join(
    f"{statement};\n"
    for statement in (
        passages(SQLITE_TYPES),
        *PASSAGE_INDEXES,
        "CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(tokens, tokenize = 'unicode61')",
        PROSE_FILES,
    )
)

FTS_TABLE = "passages_fts"


def partition(kind: str, scope: str) -> str:
    """The vector index partition of a kind's passages of a scope (``prose.main``).

    A scope name has no ``.``, so no partition is ever a scope's own collection.
    """
    return f"{kind}.{scope}"


def split_vector_id(vector_id: str) -> tuple[str, str]:
    """``(path, id)`` of a :attr:`Passage.vector_id`."""
    path, _sep, pid = vector_id.rpartition("#^")
    return path, pid


@dataclass(frozen=True)
class ProseFile:
    """The prose of one memory file as just read: what the doc table stores for it.

    Attributes:
        path: Workspace-relative path.
        scope: Its scope.
        hash: The file hash its chunks were read from (its stamp's).
        chunks: Its chunks, in file order.
        created_at: The time of a chunk seen for the first time (a daily note's
            day, else now); a chunk already indexed keeps its own.
    """

    path: str
    scope: str
    hash: str
    chunks: Sequence[ProseChunk]
    created_at: float


def _queue_delete(c: sqlite3.Connection, kind: str, scope: str, vector_id: str) -> None:
    c.execute(
        "INSERT OR REPLACE INTO vec_deletes VALUES (?, ?)", (vector_id, partition(kind, scope))
    )


def write_prose(c: sqlite3.Connection, pf: ProseFile) -> bool:
    """Make the prose passages of ``pf.path`` its chunks; inside a write.

    A chunk already indexed under its anchor keeps its row, its time and (when its
    headings did not change) its vector; only its place is updated. New chunks are
    added (to be embedded), gone ones removed and their vectors queued for deletion.

    Returns:
        Whether a vector became stale (a chunk added, removed or re-headed).
    """
    plan = prose_plan(c.execute(SELECT_PROSE_ROWS, (pf.path,)), pf.scope, pf.chunks)
    for ch, h in plan.added:
        cur = c.execute(
            "INSERT INTO passages (kind, id, scope, path, line, end_line, category, heading,"
            " role, text, text_hash, created_at) VALUES ('prose',?,?,?,?,?,?,?,NULL,?,?,?)",
            (ch.anchor, pf.scope, pf.path, ch.line, ch.end_line, ch.category, ch.heading,
             ch.text, h, pf.created_at),
        )  # fmt: skip
        rowid = int(cur.lastrowid or 0)
        index_doc(c, rowid, ch.indexed_text, FTS_TABLE)
        c.execute("DELETE FROM vec_deletes WHERE id = ?", (f"{pf.path}#^{ch.anchor}",))
    for ch, h, old in plan.moved:
        c.execute(
            "UPDATE passages SET scope = ?, line = ?, end_line = ?, category = ?, heading = ?,"
            " text = ?, text_hash = ? WHERE rowid = ?",
            (pf.scope, ch.line, ch.end_line, ch.category, ch.heading, ch.text, h, old.rowid),
        )
        if plan.rewritten(h, old):
            unindex_doc(c, old.rowid, FTS_TABLE)
            index_doc(c, old.rowid, ch.indexed_text, FTS_TABLE)
            if old.scope != pf.scope:
                _queue_delete(c, "prose", old.scope, f"{pf.path}#^{ch.anchor}")
                c.execute("UPDATE passages SET vec_hash = NULL WHERE rowid = ?", (old.rowid,))
    for anchor, old in plan.gone.items():
        _delete_row(c, old.rowid, "prose", old.scope, f"{pf.path}#^{anchor}")
    c.execute(
        "INSERT OR REPLACE INTO prose_files (path, scope, hash) VALUES (?, ?, ?)",
        (pf.path, pf.scope, pf.hash),
    )
    return plan.stale


def _delete_row(c: sqlite3.Connection, rowid: int, kind: str, scope: str, vector_id: str) -> None:
    if kind == "prose":
        unindex_doc(c, rowid, FTS_TABLE)
    c.execute("DELETE FROM passages WHERE rowid = ?", (rowid,))
    _queue_delete(c, kind, scope, vector_id)


def drop_prose(c: sqlite3.Connection, path: str) -> bool:
    """Remove the prose of a file that is gone; inside a write. Returns whether any was held."""
    rows = c.execute(
        "SELECT rowid, scope, id FROM passages WHERE kind = 'prose' AND path = ?", (path,)
    ).fetchall()
    for rowid, scope, pid in rows:
        _delete_row(c, int(rowid), "prose", str(scope), f"{path}#^{pid}")
    c.execute("DELETE FROM prose_files WHERE path = ?", (path,))
    return bool(rows)


def shift_prose(c: sqlite3.Connection, path: str, after: int, count: int) -> None:
    """Move the prose of ``path`` below line ``after`` down ``count`` lines; inside a write."""
    c.execute(
        "UPDATE passages SET line = line + ?, end_line = end_line + ? "
        "WHERE kind = 'prose' AND path = ? AND line > ?",
        (count, count, path, after),
    )


def follow_stamp(c: sqlite3.Connection, stamp: FileStamp) -> None:
    """A file's new stamp, written by a change that left its prose as it was (entries
    added, edited or moved; lines below moved by :func:`shift_prose`): the prose read
    from the file before is the prose of the file now. Run before the stamp is stored."""
    c.execute(
        "UPDATE prose_files SET hash = ? WHERE path = ? AND hash = "
        "(SELECT hash FROM files WHERE path = ?)",
        (stamp.hash, stamp.path, stamp.path),
    )


def purge_events(c: sqlite3.Connection, before: float) -> int:
    """Remove the event passages said before ``before`` (the hot log's TTL); inside a write."""
    rows = c.execute(
        "SELECT rowid, scope, path, id FROM passages WHERE kind = 'event' AND created_at < ?",
        (before,),
    ).fetchall()
    for rowid, scope, path, pid in rows:
        _delete_row(c, int(rowid), "event", str(scope), f"{path}#^{pid}")
    return len(rows)


__all__ = [
    "COLS",
    "FTS_TABLE",
    "KINDS",
    "P_COLS",
    "SCHEMA",
    "Kind",
    "Passage",
    "ProseFile",
    "drop_prose",
    "follow_stamp",
    "partition",
    "passage",
    "purge_events",
    "shift_prose",
    "split_vector_id",
    "write_prose",
]

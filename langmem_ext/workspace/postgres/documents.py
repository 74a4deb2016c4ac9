"""The Markdown documents in PostgreSQL: the same text per scope and file, as
versioned rows.

:class:`PgDocuments` has the methods of the embedded file store (``read``,
``write``, ``delete``, ``list``, ``scopes``): paths are the workspace-relative
POSIX paths the files would have (``MEMORY.md``, ``memory/2026-01-31.md``,
``memory/scopes/u1/LONG_TERM.md``) and must belong to the scope named with them.
Each write adds a version (a delete adds an empty tombstone version), so a file's
history stays readable (:meth:`PgDocuments.versions`). Called inside a ledger
transaction of the same connections and thread, a write joins it: the text and the
ledger rows commit together.
"""

from __future__ import annotations

import builtins
from pathlib import Path, PurePosixPath
from typing import Any

from langmem_ext.core.errors import InvalidPathError
from langmem_ext.workspace.layout import _DAILY_RE, Layout, check_scope
from langmem_ext.workspace.postgres._base import PgConnections

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS documents (
    scope TEXT COLLATE "C" NOT NULL,
    rel TEXT COLLATE "C" NOT NULL,
    version INTEGER NOT NULL,
    text TEXT,
    written_at DOUBLE PRECISION NOT NULL DEFAULT extract(epoch FROM clock_timestamp()),
    PRIMARY KEY (scope, rel, version)
)""",
)
"""A row per version of a file; ``text`` is ``NULL`` for a delete."""

_LATEST = (
    "SELECT DISTINCT ON (rel) rel, text FROM documents WHERE scope = %s ORDER BY rel, version DESC"
)
_PLACES = Layout(Path("/workspace"))
"""Where a scope's files are, as relative paths (no file is touched)."""


def check_rel(scope: str, rel: str) -> str:
    """``rel`` when it is a Markdown file of ``scope`` (see the module docstring).

    Raises:
        InvalidPathError: ``rel`` is empty, absolute, holds ``..``, a NUL or a
            backslash, is not Markdown, or belongs to another scope.
    """
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        raise InvalidPathError(f"Invalid memory file path {rel!r}; refused.")
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or pure.suffix != ".md":
        raise InvalidPathError(
            f"{rel!r} is not a workspace-relative Markdown path (no '..', not absolute); refused."
        )
    if _PLACES.scope_of_rel(pure.as_posix()) != check_scope(scope):
        raise InvalidPathError(f"{rel} is not a memory file of scope {scope!r}; refused.")
    return pure.as_posix()


def _is_memory_file(scope: str, rel: str) -> bool:
    """Whether ``rel`` is the scope's long-term file or one of its daily notes."""
    if rel == _PLACES.rel(_PLACES.long_term(scope)):
        return True
    folder = _PLACES.rel(_PLACES.scope_dir(scope))
    parent, _, name = rel.rpartition("/")
    return parent == folder and bool(_DAILY_RE.match(name))


def _latest(conn: Any, columns: str, scope: str, rel: str) -> Any:
    """``columns`` of the newest version of one file (``None`` when it has none);
    ``columns`` is a constant of this module, never input."""
    return conn.execute(
        f"SELECT {columns} FROM documents WHERE scope = %s AND rel = %s "
        "ORDER BY version DESC LIMIT 1",
        (scope, rel),
    ).fetchone()


class PgDocuments:
    """Markdown text per scope and workspace-relative path, in a PostgreSQL table.

    Args:
        db: The engine's connections.
    """

    def __init__(self, db: PgConnections) -> None:
        self._db = db
        with db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('documents', 0))")
            for statement in SCHEMA:
                conn.execute(statement)

    def transaction(self) -> Any:
        """A transaction for several writes (they commit together, or none does)."""
        return self._db.transaction()

    def read(self, scope: str, rel: str) -> str:
        """The text of one file of ``scope`` (``""`` when it does not exist).

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        with self._db.connection() as conn:
            row = _latest(conn, "text", scope, rel)
        return "" if row is None or row[0] is None else str(row[0])

    def write(self, scope: str, rel: str, text: str) -> None:
        """Replace one file's text: a new version, committed whole (a reader sees the
        old or the new text).

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        self._add(scope, check_rel(scope, rel), text)

    def delete(self, scope: str, rel: str) -> bool:
        """Remove one file of ``scope`` (a tombstone version; the history is kept).

        Returns:
            Whether it existed.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        return self._add(scope, rel, None)

    def _add(self, scope: str, rel: str, text: str | None) -> bool:
        """Append a version of ``rel``; returns whether the file existed before."""
        with self._db.transaction() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (f"document\x1f{scope}\x1f{rel}",),
            )
            row = _latest(conn, "version, text IS NOT NULL", scope, rel)
            existed = bool(row and row[1])
            if text is None and not existed:
                return False
            conn.execute(
                "INSERT INTO documents (scope, rel, version, text) VALUES (%s, %s, %s, %s)",
                (scope, rel, (row[0] if row else 0) + 1, text),
            )
        return existed

    def stamp(self, scope: str, rel: str) -> tuple[int, int] | None:
        """``(version, size in bytes)`` of one file of ``scope`` (``None`` when it does
        not exist or was deleted); every write adds a version, so any write changes it.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        with self._db.connection() as conn:
            row = _latest(conn, "version, octet_length(text)", scope, rel)
        return None if row is None or row[1] is None else (int(row[0]), int(row[1]))

    def versions(self, scope: str, rel: str) -> builtins.list[tuple[int, str | None, float]]:
        """Every version of one file, oldest first: ``(version, text or None for a
        delete, written at)``.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT version, text, written_at FROM documents WHERE scope = %s AND rel = %s "
                "ORDER BY version",
                (scope, rel),
            ).fetchall()
        return [(int(v), t, float(at)) for v, t, at in rows]

    def list(self, scope: str) -> builtins.list[str]:
        """The scope's memory files: its long-term file, then its daily notes by date."""
        scope = check_scope(scope)
        with self._db.connection() as conn:
            rows = conn.execute(_LATEST, (scope,)).fetchall()
        live = [str(rel) for rel, text in rows if text is not None]
        long_term = _PLACES.rel(_PLACES.long_term(scope))
        files = [r for r in live if _is_memory_file(scope, r)]
        return sorted(files, key=lambda r: (r != long_term, r))

    def _newest(self) -> builtins.list[tuple[Any, ...]]:
        """``(scope, rel, text)`` of the newest version of every file (``None``: deleted)."""
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT ON (scope, rel) scope, rel, text FROM documents "
                "ORDER BY scope, rel, version DESC"
            ).fetchall()
        return list(rows)

    def scopes(self) -> builtins.list[str]:
        """The scopes that have memory files."""
        rows = self._newest()
        found = {str(s) for s, rel, text in rows if text is not None and _is_memory_file(s, rel)}
        return sorted(found)

    def tree(self) -> builtins.list[tuple[str, str]]:
        """Every file a person reads, as ``(scope, rel)`` sorted by path: each scope's
        memory files, ``PROFILE.md`` and transcripts."""
        from langmem_ext.workspace.tree import place_of

        rows = self._newest()
        placed = [
            (str(s), str(r))
            for s, r, text in rows
            if text is not None and (place_of(str(r)) or ("",))[0] == s
        ]
        return sorted(placed, key=lambda f: f[1])


__all__ = ["SCHEMA", "PgDocuments", "check_rel"]

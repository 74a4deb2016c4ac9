"""The Markdown documents in PostgreSQL: the same text per scope and file, as a row
per line with the history of its edits.

:class:`PgDocuments` has the methods of the embedded file store (``read``,
``write``, ``delete``, ``list``, ``scopes``): paths are the workspace-relative
POSIX paths the files would have (``MEMORY.md``, ``memory/2026-01-31.md``,
``memory/scopes/u1/LONG_TERM.md``) and must belong to the scope named with them.
Each write adds a version that records only the lines it changed (a delete adds a
tombstone), so an edit of one bullet in a 100k-line file writes a few rows, and a
file's history stays readable (:meth:`PgDocuments.versions` rebuilds every version). Called inside a ledger
transaction of the same connections and thread, a write joins it: the text and the
ledger rows commit together.
"""

from __future__ import annotations

import builtins
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

from langmem_ext.core.errors import InvalidPathError, MemoryFileError
from langmem_ext.workspace.layout import _DAILY_RE, Layout, check_scope
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.positions import keys_between, spread_keys

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS documents (
    scope TEXT COLLATE "C" NOT NULL,
    rel TEXT COLLATE "C" NOT NULL,
    version INTEGER NOT NULL,
    text TEXT,
    written_at DOUBLE PRECISION NOT NULL DEFAULT extract(epoch FROM clock_timestamp()),
    PRIMARY KEY (scope, rel, version)
)""",
    """CREATE TABLE IF NOT EXISTS document_heads (
    scope TEXT COLLATE "C" NOT NULL,
    rel TEXT COLLATE "C" NOT NULL,
    version INTEGER NOT NULL,
    base INTEGER NOT NULL,
    token TEXT NOT NULL,
    lines INTEGER NOT NULL,
    size BIGINT NOT NULL,
    live BOOLEAN NOT NULL,
    PRIMARY KEY (scope, rel)
)""",
    """CREATE TABLE IF NOT EXISTS document_lines (
    scope TEXT COLLATE "C" NOT NULL,
    rel TEXT COLLATE "C" NOT NULL,
    pos TEXT COLLATE "C" NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (scope, rel, pos)
)""",
    """CREATE TABLE IF NOT EXISTS document_edits (
    scope TEXT COLLATE "C" NOT NULL,
    rel TEXT COLLATE "C" NOT NULL,
    version INTEGER NOT NULL,
    at INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    added TEXT[],
    written_at DOUBLE PRECISION NOT NULL DEFAULT extract(epoch FROM clock_timestamp()),
    PRIMARY KEY (scope, rel, version)
)""",
)
"""The documents' tables.

``document_heads``: a row per file, its newest ``version`` (``live`` false: deleted),
its line count and size in bytes, and a ``token`` that every write changes (a process
keeps the text of a token it read or wrote, see :class:`PgDocuments`).
``document_lines``: the file's text split at ``\\n``, a row per line, ordered by
``pos`` (:mod:`~langmem_ext.workspace.postgres.positions`: a line inserted between
two others gets a key between theirs; no other row changes). ``document_edits``: a
row per version after ``base``, the lines it replaced (``removed`` lines from line
``at``, counted from 0) and the lines put there (``added``, ``NULL``: the file was
deleted). ``documents``: whole texts of the versions up to ``base`` (a database
written before the line rows; read once into them when it is opened, and kept as the
history's start).
"""

_CACHE_LINES = 1_000_000
"""Lines of the files a :class:`PgDocuments` keeps the text of, over all files (the
least recently used file goes first; ~130 bytes a line with its key: ten files of
100k memories)."""
_PLACES = Layout(Path("/workspace"))
"""Where a scope's files are, as relative paths (no file is touched)."""


@dataclass(frozen=True)
class _Held:
    """The lines of one file at one write (its text split at ``\\n``), their ordering
    keys and the text's size in bytes. The text is joined when first asked for."""

    token: str
    keys: builtins.list[str]
    lines: builtins.list[str]
    size: int
    odd: bool
    """Whether a line may hold a line break other than ``\\n`` (what
    :meth:`str.splitlines` also splits at: the parser would count lines otherwise)."""

    @cached_property
    def text(self) -> str:
        """The file's text."""
        return "\n".join(self.lines)

    @classmethod
    def of(
        cls,
        token: str,
        keys: builtins.list[str],
        lines: builtins.list[str],
        size: int,
        odd: bool,
        text: str,
    ) -> _Held:
        """A copy whose text is already known."""
        held = cls(token, keys, lines, size, odd)
        held.__dict__["text"] = text
        return held


_ODD_BREAK = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""The line breaks :meth:`str.splitlines` reads besides ``\\n``."""


def _has_odd_break(text: str) -> bool:
    return _ODD_BREAK.search(text) is not None


def _size(text: str | None) -> int:
    """Bytes of a text (``None``: a deleted file, 0)."""
    return 0 if text is None else len(text.encode("utf-8"))


def _pieces(text: str | None) -> builtins.list[str]:
    """The line rows of a text (``None``: a deleted file has none)."""
    return [] if text is None else text.split("\n")


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


def _edited(lines: builtins.list[str], at: int, removed: int, added: Sequence[str] | None) -> None:
    """Apply one ``document_edits`` row to ``lines`` in place."""
    if added is None:
        lines.clear()
    else:
        lines[at : at + removed] = added


def _changed_span(old: Sequence[str], new: Sequence[str]) -> tuple[int, int, int]:
    """``(start, old end, new end)``: ``old[start:old end]`` became
    ``new[start:new end]`` and the lines around are the same."""
    n = min(len(old), len(new))
    start = 0
    while start < n and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return start, end_old, end_new


_CHUNK = 1 << 16
"""Characters compared at a time when looking for where two texts differ."""


def _same_run(a: str, b: str, limit: int, *, from_end: bool) -> int:
    """How many characters ``a`` and ``b`` share at their start (or end), at most
    ``limit``: compared a chunk at a time, then halving within the first chunk that
    differs (string comparison in C, no loop per character)."""

    def part(t: str, i: int, j: int) -> str:
        return t[len(t) - j : len(t) - i] if from_end else t[i:j]

    done = 0
    while done < limit:
        j = min(done + _CHUNK, limit)
        if part(a, done, j) != part(b, done, j):
            break
        done = j
    else:
        return limit
    lo, hi = done, min(done + _CHUNK, limit)  # part(done, lo) is the same, (done, hi) not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if part(a, done, mid) == part(b, done, mid):
            lo = mid
        else:
            hi = mid
    return lo


def _text_change(old: str, new: str) -> tuple[int, int, builtins.list[str], int]:
    """``(start, end, added, grown)``: lines ``start`` to ``end`` (exclusive, counted
    from 0) of ``old`` became the lines ``added`` of ``new``; every other line is the
    same; ``new`` is ``grown`` bytes longer than ``old`` in UTF-8.

    Only the texts' differing middle is split into lines: the shared start and end
    are found by comparing characters, then counted in lines.
    """
    prefix = _same_run(old, new, min(len(old), len(new)), from_end=False)
    suffix = _same_run(old, new, min(len(old), len(new)) - prefix, from_end=True)
    start = old.count("\n", 0, prefix)
    begin = old.rfind("\n", 0, prefix) + 1  # where line ``start`` begins, in both
    tail = old.count("\n", len(old) - suffix)  # whole lines shared at the end
    old_end = old.find("\n", len(old) - suffix) if tail else len(old)
    new_end = old_end - len(old) + len(new) if tail else len(new)
    was_text, now_text = old[begin:old_end], new[begin:new_end]
    grown = len(now_text.encode("utf-8")) - len(was_text.encode("utf-8"))
    was, now = was_text.split("\n"), now_text.split("\n")
    first, end_was, end_now = _changed_span(was, now)
    return start + first, start + end_was, now[first:end_now], grown


class PgDocuments:
    """Markdown text per scope and workspace-relative path, in PostgreSQL tables.

    A file is a row per line (see :data:`SCHEMA`). A write compares the new text with
    the one it replaces and writes only the lines between the first and the last that
    differ, with a row of the file's history; the text it replaces comes from this
    process's own copy when the file's token says no one wrote it since (else from
    the line rows). :meth:`read` answers from that copy the same way, so a process
    that edits a file reads and writes O(the edit) rows, not O(the file).

    Args:
        db: The engine's connections.
    """

    def __init__(self, db: PgConnections) -> None:
        self._db = db
        self._held: OrderedDict[tuple[str, str], _Held] = OrderedDict()
        self._held_lock = threading.Lock()
        with db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('documents', 0))")
            for statement in SCHEMA:
                conn.execute(statement)
            self._adopt_whole_versions(conn)

    def _adopt_whole_versions(self, conn: Any) -> int:
        """Give the files that have only whole-text versions (``documents``, as an
        older engine wrote them) their line rows; their versions stay the history's
        start. Returns how many files were read."""
        rows = conn.execute(
            "SELECT DISTINCT ON (d.scope, d.rel) d.scope, d.rel, d.version, d.text "
            "FROM documents d WHERE NOT EXISTS (SELECT 1 FROM document_heads h "
            "WHERE h.scope = d.scope AND h.rel = d.rel) "
            "ORDER BY d.scope, d.rel, d.version DESC"
        ).fetchall()
        for scope, rel, version, text in rows:
            lines = _pieces(text)
            keys = spread_keys(len(lines))
            conn.execute(
                "INSERT INTO document_heads VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (scope, rel, version, version, uuid.uuid4().hex, len(lines), _size(text),
                 text is not None),
            )  # fmt: skip
            _insert_lines(conn, scope, rel, keys, lines)
        return len(rows)

    def transaction(self) -> Any:
        """A transaction for several writes (they commit together, or none does)."""
        return self._db.transaction()

    # -- the copy this process keeps ------------------------------------

    def _remember(self, scope: str, rel: str, held: _Held) -> None:
        with self._held_lock:
            self._held.pop((scope, rel), None)
            self._held[(scope, rel)] = held
            total = sum(len(h.keys) for h in self._held.values())
            while total > _CACHE_LINES and len(self._held) > 1:
                _key, gone = self._held.popitem(last=False)
                total -= len(gone.keys)

    def _kept(self, scope: str, rel: str, token: str) -> _Held | None:
        with self._held_lock:
            held = self._held.get((scope, rel))
            if held is None or held.token != token:
                return None
            self._held.move_to_end((scope, rel))
            return held

    def _load(self, conn: Any, scope: str, rel: str) -> _Held | None:
        """The file's text as the database holds it (``None``: no such file); from
        this process's copy when its token is the file's."""
        for _attempt in range(8):
            head = _head(conn, scope, rel)
            if head is None:
                return None
            kept = self._kept(scope, rel, head[0])
            if kept is not None:
                return kept
            rows = conn.execute(
                "SELECT pos, text FROM document_lines WHERE scope = %s AND rel = %s ORDER BY pos",
                (scope, rel),
            ).fetchall()
            again = _head(conn, scope, rel)
            if again is not None and again[0] == head[0]:  # no write in between
                keys = [str(r[0]) for r in rows]
                lines = [str(r[1]) for r in rows]
                text = "\n".join(lines)
                held = _Held.of(head[0], keys, lines, head[1], _has_odd_break(text), text)
                self._remember(scope, rel, held)
                return held
        raise MemoryFileError(f"{rel} of scope {scope!r} kept changing while it was read")

    # -- reads and writes -----------------------------------------------

    def read(self, scope: str, rel: str) -> str:
        """The text of one file of ``scope`` (``""`` when it does not exist).

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        with self._db.connection() as conn:
            held = self._load(conn, scope, rel)
        return "" if held is None else held.text

    def write(self, scope: str, rel: str, text: str) -> None:
        """Replace one file's text: a new version, committed whole (a reader sees the
        old or the new text); only the lines that changed are written.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        self._put(scope, check_rel(scope, rel), text)

    def delete(self, scope: str, rel: str) -> bool:
        """Remove one file of ``scope`` (its lines go; the history keeps a tombstone).

        Returns:
            Whether it existed.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        return self._put(scope, rel, None)

    def lines(self, scope: str, rel: str) -> builtins.list[str] | None:
        """The lines of one file of ``scope``: its text split at ``\\n``, a new list the
        caller may change (no text is joined); ``None`` when it does not exist or when
        a line may hold another line break that :meth:`str.splitlines` reads (a
        carriage return, a line separator: the caller then reads the text).

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        with self._db.connection() as conn:
            held = self._load(conn, scope, rel)
        return None if held is None or held.odd else list(held.lines)

    def splice(self, scope: str, rel: str, at: int, removed: int, added: Sequence[str]) -> None:
        """Replace ``removed`` lines of one file from line ``at`` (counted from 0, lines
        as :meth:`lines` gives them) by the lines ``added``: a new version, as
        :meth:`write` makes, without the whole text being compared or joined.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
            MemoryFileError: The file does not exist.
            ValueError: The lines named are not all in the file.
        """
        rel = check_rel(scope, rel)
        with self._db.transaction() as conn:
            head = self._lock_head(conn, scope, rel)
            old = self._load(conn, scope, rel) if head is not None and head[1] else None
            if head is None or old is None:
                raise MemoryFileError(f"{rel} of scope {scope!r} does not exist; nothing changed.")
            if at < 0 or removed < 0 or at + removed > len(old.lines):
                raise ValueError(f"lines {at}..{at + removed} are not all in {rel}")
            gone = old.lines[at : at + removed]
            size = old.size - sum(map(_size, gone)) + sum(map(_size, added))
            size += len(added) - len(gone)  # the line breaks between them
            self._commit_change(conn, scope, rel, head, old, at, at + removed, list(added), size)

    def _lock_head(self, conn: Any, scope: str, rel: str) -> tuple[int, bool] | None:
        """Take the file's write lock (inside ``conn``'s transaction); its head's
        ``(version, live)``, ``None`` when it was never written."""
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"document\x1f{scope}\x1f{rel}",),
        )
        head = conn.execute(
            "SELECT version, live FROM document_heads WHERE scope = %s AND rel = %s",
            (scope, rel),
        ).fetchone()
        return None if head is None else (int(head[0]), bool(head[1]))

    def _put(self, scope: str, rel: str, text: str | None) -> bool:
        """Write a version of ``rel``; returns whether the file existed before."""
        with self._db.transaction() as conn:
            head = self._lock_head(conn, scope, rel)
            existed = bool(head and head[1])
            if text is None and not existed:
                return False
            old = self._load(conn, scope, rel) if existed else None
            added: builtins.list[str] | None
            if old is None or text is None:
                start, end_old, size = 0, len(old.keys) if old else 0, _size(text)
                added = None if text is None else _pieces(text)
            else:
                start, end_old, added, grown = _text_change(old.text, text)
                size = old.size + grown
            self._commit_change(conn, scope, rel, head, old, start, end_old, added, size, text)
        return existed

    def _commit_change(
        self,
        conn: Any,
        scope: str,
        rel: str,
        head: tuple[int, bool] | None,
        old: _Held | None,
        start: int,
        end_old: int,
        added: builtins.list[str] | None,
        size: int,
        text: str | None = None,
    ) -> None:
        """Write the rows of one version: lines ``start`` to ``end_old`` of ``old``
        became ``added`` (``None``: the file is deleted), the new size is ``size``;
        the new copy is kept (with ``text`` when the caller has it)."""
        old_keys = old.keys if old is not None else []
        new_lines = [] if added is None else added
        lines = len(old_keys) - (end_old - start) + len(new_lines)
        fresh = (
            keys_between(
                old_keys[start - 1] if start > 0 else None,
                old_keys[end_old] if end_old < len(old_keys) else None,
                len(new_lines),
            )
            if old_keys
            else spread_keys(len(new_lines))
        )
        if end_old > start:
            conn.execute(
                "DELETE FROM document_lines WHERE scope = %s AND rel = %s "
                "AND pos BETWEEN %s AND %s",
                (scope, rel, old_keys[start], old_keys[end_old - 1]),
            )
        _insert_lines(conn, scope, rel, fresh, new_lines)
        version = (head[0] if head else 0) + 1
        token = uuid.uuid4().hex
        conn.execute(
            "INSERT INTO document_heads VALUES (%s, %s, %s, 0, %s, %s, %s, %s) "
            "ON CONFLICT (scope, rel) DO UPDATE SET version = excluded.version, "
            "token = excluded.token, lines = excluded.lines, size = excluded.size, "
            "live = excluded.live",
            (scope, rel, version, token, lines, size, added is not None),
        )
        conn.execute(
            "INSERT INTO document_edits (scope, rel, version, at, removed, added) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (scope, rel, version, start, end_old - start, added),
        )
        if added is not None:
            keys = [*old_keys[:start], *fresh, *old_keys[end_old:]]
            kept = [*old.lines[:start], *added, *old.lines[end_old:]] if old else list(added)
            odd = bool(old and old.odd) or any(map(_has_odd_break, added))
            held = (
                _Held(token, keys, kept, size, odd)
                if text is None
                else _Held.of(token, keys, kept, size, odd, text)
            )
            self._remember(scope, rel, held)

    def stamp(self, scope: str, rel: str) -> tuple[int, int] | None:
        """``(version, size in bytes)`` of one file of ``scope`` (``None`` when it does
        not exist or was deleted); every write adds a version, so any write changes it.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT version, size FROM document_heads WHERE scope = %s AND rel = %s AND live",
                (scope, rel),
            ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def versions(self, scope: str, rel: str) -> builtins.list[tuple[int, str | None, float]]:
        """Every version of one file, oldest first: ``(version, text or None for a
        delete, written at)`` (each rebuilt from the history's rows).

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        rel = check_rel(scope, rel)
        with self._db.connection() as conn:
            whole = conn.execute(
                "SELECT version, text, written_at FROM documents WHERE scope = %s AND rel = %s "
                "AND version <= coalesce((SELECT base FROM document_heads WHERE scope = %s "
                "AND rel = %s), 0) ORDER BY version",
                (scope, rel, scope, rel),
            ).fetchall()
            edits = conn.execute(
                "SELECT version, at, removed, added, written_at FROM document_edits "
                "WHERE scope = %s AND rel = %s ORDER BY version",
                (scope, rel),
            ).fetchall()
        out = [(int(v), t, float(at)) for v, t, at in whole]
        lines = _pieces(whole[-1][1]) if whole else []
        for version, at, removed, added, written_at in edits:
            _edited(lines, int(at), int(removed), added)
            text = None if added is None else "\n".join(lines)
            out.append((int(version), text, float(written_at)))
        return out

    def list(self, scope: str) -> builtins.list[str]:
        """The scope's memory files: its long-term file, then its daily notes by date."""
        scope = check_scope(scope)
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT rel FROM document_heads WHERE scope = %s AND live", (scope,)
            ).fetchall()
        long_term = _PLACES.rel(_PLACES.long_term(scope))
        files = [str(r[0]) for r in rows if _is_memory_file(scope, str(r[0]))]
        return sorted(files, key=lambda r: (r != long_term, r))

    def _live(self) -> builtins.list[tuple[str, str]]:
        """``(scope, rel)`` of every file that exists."""
        with self._db.connection() as conn:
            rows = conn.execute("SELECT scope, rel FROM document_heads WHERE live").fetchall()
        return [(str(s), str(r)) for s, r in rows]

    def scopes(self) -> builtins.list[str]:
        """The scopes that have memory files."""
        return sorted({s for s, rel in self._live() if _is_memory_file(s, rel)})

    def tree(self) -> builtins.list[tuple[str, str]]:
        """Every file a person reads, as ``(scope, rel)`` sorted by path: each scope's
        memory files, ``PROFILE.md`` and transcripts."""
        from langmem_ext.workspace.tree import place_of

        placed = [(s, r) for s, r in self._live() if (place_of(r) or ("",))[0] == s]
        return sorted(placed, key=lambda f: f[1])


def _head(conn: Any, scope: str, rel: str) -> tuple[str, int] | None:
    """``(token, size)`` of a file that exists, else ``None``."""
    row = conn.execute(
        "SELECT token, size FROM document_heads WHERE scope = %s AND rel = %s AND live",
        (scope, rel),
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def _insert_lines(
    conn: Any, scope: str, rel: str, keys: Sequence[str], lines: Sequence[str]
) -> None:
    """Insert line rows (one statement)."""
    if lines:
        conn.execute(
            "INSERT INTO document_lines (scope, rel, pos, text) "
            "SELECT %s, %s, k, t FROM unnest(%s::text[], %s::text[]) AS u(k, t)",
            (scope, rel, list(keys), list(lines)),
        )


__all__ = ["SCHEMA", "PgDocuments", "check_rel"]

"""Where a scope's files live in a workspace, and which paths a scope may read.

Scope ``main`` keeps ``MEMORY.md`` and ``memory/YYYY-MM-DD.md`` at the top; every
other scope lives under ``memory/scopes/<scope>/`` (``LONG_TERM.md``,
``YYYY-MM-DD.md``, ``transcripts/YYYY-MM-DD.md``). Paths given by callers are
always relative to the workspace and are checked against the caller's scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path, PurePosixPath

from langmem_ext.errors import InvalidPathError, InvalidScopeError

MAIN_SCOPE = "main"
_SCOPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")
_DAILY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")


def check_scope(scope: str) -> str:
    """Validate a scope name (letters, digits, ``_``, ``-``; up to 64 chars).

    Raises:
        InvalidScopeError: for anything else (``..``, slashes, empty, ...).
    """
    if not isinstance(scope, str) or not _SCOPE_RE.match(scope):
        msg = (
            f"Invalid scope {scope!r}: use 1-64 letters, digits, '_' or '-', starting "
            "with a letter or digit (e.g. 'main', 'direct_42', 'group_team')."
        )
        raise InvalidScopeError(msg)
    return scope


@dataclass(frozen=True)
class Layout:
    """The file layout of one workspace folder."""

    root: Path

    @property
    def state_db(self) -> Path:
        """The SQLite ledger."""
        return self.root / "state.db"

    @property
    def index_dir(self) -> Path:
        """The derived index folder (safe to delete)."""
        return self.root / ".index"

    @property
    def lock_file(self) -> Path:
        """The inter-process write lock."""
        return self.root / ".lock"

    def scope_dir(self, scope: str) -> Path:
        """Folder holding the scope's daily notes."""
        check_scope(scope)
        if scope == MAIN_SCOPE:
            return self.root / "memory"
        return self.root / "memory" / "scopes" / scope

    def long_term(self, scope: str) -> Path:
        """The scope's long-term file."""
        check_scope(scope)
        if scope == MAIN_SCOPE:
            return self.root / "MEMORY.md"
        return self.scope_dir(scope) / "LONG_TERM.md"

    def daily(self, scope: str, day: date) -> Path:
        """The scope's daily notes of ``day``."""
        return self.scope_dir(scope) / f"{day.isoformat()}.md"

    def transcript(self, scope: str, day: date) -> Path:
        """The scope's transcript of ``day``."""
        return self.scope_dir(scope) / "transcripts" / f"{day.isoformat()}.md"

    def rel(self, path: Path) -> str:
        """Workspace-relative POSIX form of ``path``."""
        return path.relative_to(self.root).as_posix()

    def memory_files(self, scope: str) -> list[Path]:
        """The scope's indexed memory files (long-term + daily notes) that exist."""
        out: list[Path] = []
        lt = self.long_term(scope)
        if lt.is_file():
            out.append(lt)
        folder = self.scope_dir(scope)
        if folder.is_dir():
            out.extend(sorted(p for p in folder.iterdir() if _DAILY_RE.match(p.name)))
        return out

    def scopes(self) -> list[str]:
        """Scopes that have files in this workspace."""
        found = []
        if self.long_term(MAIN_SCOPE).is_file() or any(
            _DAILY_RE.match(p.name) for p in self._iter(self.root / "memory")
        ):
            found.append(MAIN_SCOPE)
        base = self.root / "memory" / "scopes"
        if base.is_dir():
            found.extend(
                sorted(p.name for p in base.iterdir() if p.is_dir() and _SCOPE_RE.match(p.name))
            )
        return found

    @staticmethod
    def _iter(folder: Path) -> list[Path]:
        return list(folder.iterdir()) if folder.is_dir() else []

    def scope_of_rel(self, rel: str) -> str | None:
        """Which scope a workspace-relative memory path belongs to (or ``None``)."""
        parts = PurePosixPath(rel).parts
        if parts == ("MEMORY.md",) or (
            len(parts) >= 2 and parts[0] == "memory" and parts[1] != "scopes"
        ):
            return MAIN_SCOPE
        if len(parts) >= 4 and parts[:2] == ("memory", "scopes"):
            return parts[2]
        return None

    def resolve_for_scope(self, user_path: str, scope: str) -> Path:
        """Resolve a caller-supplied path, refusing anything outside ``scope``.

        Accepts workspace-relative paths (``MEMORY.md``, ``memory/2026-11-21.md``,
        ``memory/scopes/u1/LONG_TERM.md``) and, for convenience, paths relative to
        the scope folder (``2026-11-21.md``, ``LONG_TERM.md``).

        Raises:
            InvalidPathError: on ``..``, absolute paths, symlinks that leave the
                scope, paths of another scope, non-Markdown or missing files.
        """
        check_scope(scope)
        raw = (user_path or "").strip()
        if not raw:
            raise InvalidPathError("Empty path: pass a memory file path such as 'MEMORY.md'.")
        if "\x00" in raw or raw.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", raw):
            raise InvalidPathError(
                f"Path {user_path!r} is absolute: pass a path relative to the memory "
                "workspace, as memory_search returns it."
            )
        pure = PurePosixPath(raw.replace("\\", "/"))
        if any(part == ".." for part in pure.parts):
            raise InvalidPathError(f"Path {user_path!r} contains '..': it is refused.")
        candidates = [self.root / pure]
        if scope != MAIN_SCOPE or len(pure.parts) == 1:
            candidates.append(self.scope_dir(scope) / pure)
        allowed = self._allowed_roots(scope)
        for cand in candidates:
            if not self._inside_scope(cand, scope):
                continue
            real = cand.resolve()
            if not any(real == a or a in real.parents for a in allowed):
                raise InvalidPathError(
                    f"Path {user_path!r} leaves the memory of this scope (symlink); refused."
                )
            if real.is_file():
                if real.suffix != ".md":
                    raise InvalidPathError(f"Path {user_path!r} is not a Markdown memory file.")
                return cand
        raise InvalidPathError(
            f"No memory file {user_path!r} in this scope. Use a path returned by "
            "memory_search, e.g. 'MEMORY.md' or 'memory/2026-01-31.md'."
        )

    def _allowed_roots(self, scope: str) -> list[Path]:
        if scope == MAIN_SCOPE:
            return [self.long_term(scope).resolve(), self.scope_dir(scope).resolve()]
        return [self.scope_dir(scope).resolve()]

    def _inside_scope(self, cand: Path, scope: str) -> bool:
        try:
            rel = cand.relative_to(self.root).as_posix()
        except ValueError:
            return False
        return self.scope_of_rel(rel) == scope


__all__ = ["MAIN_SCOPE", "Layout", "check_scope"]

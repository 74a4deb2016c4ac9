"""Where a scope's files live in a workspace, and which paths a scope may read.

Scope ``main`` keeps ``MEMORY.md`` and ``memory/YYYY-MM-DD.md`` at the top; every
other scope lives under ``memory/scopes/<scope>/`` (``LONG_TERM.md``,
``YYYY-MM-DD.md``, ``transcripts/YYYY-MM-DD.md``). Paths given by callers are
always relative to the workspace and are checked against the caller's scope.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from pathlib import Path, PurePosixPath

from langmem_ext.core.errors import InvalidPathError, InvalidScopeError, MemoryFileError

logger = logging.getLogger(__name__)

MAIN_SCOPE = "main"
SCOPE_MAX_CHARS = 64
_DAILY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
_MAX_PATH_CHARS = 1024
_MAX_NAME_BYTES = 255


def _scope_char_ok(ch: str, first: bool) -> bool:
    cat = unicodedata.category(ch)
    if cat[0] in "LN":
        return True
    return not first and (cat[0] == "M" or ch in "_-")


def check_scope(scope: str) -> str:
    """Validate a scope name and return its canonical (NFC) form.

    A scope name is 1-64 letters or digits of any script (``main``, ``direct_42``,
    ``用户``, ``équipe``), ``_`` and ``-``, starting with a letter or digit. It
    becomes a folder name under ``memory/scopes/``, so ``/``, ``.``, spaces,
    control characters and anything else are refused. Names are NFC-normalised, so
    a composed and a decomposed ``é`` name the same scope.

    Raises:
        InvalidScopeError: for anything else (``..``, slashes, empty, ...).
    """
    if isinstance(scope, str):
        norm = unicodedata.normalize("NFC", scope)
        if (
            1 <= len(norm) <= SCOPE_MAX_CHARS
            and _scope_char_ok(norm[0], True)
            and all(_scope_char_ok(ch, False) for ch in norm[1:])
            and len(norm.encode("utf-8")) <= _MAX_NAME_BYTES
        ):
            return norm
    msg = (
        f"Invalid scope {scope!r}: use 1-{SCOPE_MAX_CHARS} letters or digits (any script), "
        "'_' or '-', starting with a letter or digit (e.g. 'main', 'direct_42', "
        "'group_team', '用户')."
    )
    raise InvalidScopeError(msg)


def _is_scope_name(name: str) -> bool:
    try:
        return check_scope(name) == name
    except InvalidScopeError:
        return False


_UNTIL_FIXED = "sync skips it and writes to it are refused"
"""What happens to a memory file that is not UTF-8 until it is fixed (said in the error)."""


def decode_memory_file(data: bytes, name: str, until: str = _UNTIL_FIXED) -> str:
    """Decode a memory file's bytes as UTF-8, or raise an error naming the file.

    Args:
        data: The file's bytes.
        name: How to name the file in the message (workspace-relative path).
        until: What happens to the file until it is fixed (said in the message).

    Raises:
        MemoryFileError: when the bytes are not valid UTF-8.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        msg = (
            f"{name} is not valid UTF-8 (byte 0x{data[e.start]:02x} on line {line}): "
            f"re-save it as UTF-8 or fix that line by hand; until then {until}."
        )
        raise MemoryFileError(msg) from None


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

    @cached_property
    def real_root(self) -> Path:
        """The workspace folder with every symlink above it resolved."""
        return self.root.resolve()

    def scope_dir(self, scope: str) -> Path:
        """Folder holding the scope's daily notes."""
        scope = check_scope(scope)
        if scope == MAIN_SCOPE:
            return self.root / "memory"
        return self.root / "memory" / "scopes" / scope

    def long_term(self, scope: str) -> Path:
        """The scope's long-term file."""
        scope = check_scope(scope)
        if scope == MAIN_SCOPE:
            return self.root / "MEMORY.md"
        return self.scope_dir(scope) / "LONG_TERM.md"

    def profile(self, scope: str) -> Path:
        """The scope's user profile (``PROFILE.md``, next to its long-term file)."""
        return self.long_term(scope).parent / "PROFILE.md"

    def daily(self, scope: str, day: date) -> Path:
        """The scope's daily notes of ``day``."""
        return self.scope_dir(scope) / f"{day.isoformat()}.md"

    def transcript(self, scope: str, day: date) -> Path:
        """The scope's transcript of ``day``."""
        return self.scope_dir(scope) / "transcripts" / f"{day.isoformat()}.md"

    def rel(self, path: Path) -> str:
        """Workspace-relative POSIX form of ``path``."""
        return path.relative_to(self.root).as_posix()

    def memory_files(self, scope: str, refused: dict[str, str] | None = None) -> list[Path]:
        """The scope's indexed memory files (long-term + daily notes) that exist.

        Symlinks, and files inside a symlinked folder, are left out: a link could
        show another scope's file (or one outside the workspace) as this scope's.

        Args:
            scope: The scope.
            refused: When given, every file left out is added to it
                (workspace-relative path → reason).
        """
        out: list[Path] = []
        lt = self.long_term(scope)
        folder = self.scope_dir(scope)
        folder_problem = self.link_problem(folder) if folder.exists() else None
        found: list[tuple[Path, bool, bool]] = []  # (path, is a plain file, is a link)
        try:
            st = os.lstat(lt)
        except OSError:
            pass
        else:
            found.append((lt, stat.S_ISREG(st.st_mode), stat.S_ISLNK(st.st_mode)))
        if folder.is_dir():
            with os.scandir(folder) as it:
                found.extend(
                    (Path(e.path), e.is_file(follow_symlinks=False), e.is_symlink())
                    for e in sorted(it, key=lambda e: e.name)
                    if _DAILY_RE.match(e.name)
                )
        for path, plain, link in found:
            problem = folder_problem if path.parent == folder else None
            if problem is None and link:
                problem = self.link_problem(path)
            if problem is None and plain:
                out.append(path)
            elif problem is not None and refused is not None:
                refused[self.rel(path)] = problem
        return out

    def scopes(self) -> list[str]:
        """Scopes that have files in this workspace."""
        found = []
        if self.memory_files(MAIN_SCOPE):
            found.append(MAIN_SCOPE)
        base = self.root / "memory" / "scopes"
        if base.is_dir() and self.link_problem(base) is None:
            found.extend(
                sorted(
                    p.name
                    for p in base.iterdir()
                    if _is_scope_name(p.name) and not p.is_symlink() and p.is_dir()
                )
            )
        return found

    def memory_folders(self) -> list[Path]:
        """Folders that hold memory files: the root, ``memory/``, each scope's folder.

        Symlinked scope folders are left out.
        """
        out = [self.root]
        mem = self.root / "memory"
        if mem.is_dir() and not mem.is_symlink():
            out.append(mem)
            base = mem / "scopes"
            if base.is_dir() and not base.is_symlink():
                out.extend(p for p in self._iter(base) if p.is_dir() and not p.is_symlink())
        return out

    def link_problem(self, path: Path) -> str | None:
        """Why ``path`` may not be read as a memory file of the workspace (``None``: fine).

        A path is refused when it, or a folder between the workspace root and it, is
        a symlink, or when it lies outside the workspace.
        """
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return "outside the workspace"
        try:
            real = path.resolve()
        except (OSError, RuntimeError) as e:
            return f"cannot be resolved ({e})"
        if real != self.real_root / rel:
            return "a symlink (or inside a symlinked folder); memory files must be plain files"
        return None

    def check_own(self, path: Path, scope: str) -> None:
        """Refuse to read or write ``path`` as a memory file of ``scope``.

        Raises:
            InvalidPathError: when the path is a symlink, lies in a symlinked folder,
                leaves the workspace or belongs to another scope.
        """
        try:
            rel = self.rel(path)
        except ValueError:
            raise InvalidPathError(f"{path} is outside the workspace; refused.") from None
        if self.scope_of_rel(rel) != check_scope(scope):
            raise InvalidPathError(f"{rel} is not a memory file of scope {scope!r}; refused.")
        problem = self.link_problem(path)
        if problem is not None:
            logger.warning("refusing memory file %s: %s", rel, problem)
            raise InvalidPathError(f"{rel} is {problem}; refused.")

    def read(self, path: Path, scope: str, *, until: str = _UNTIL_FIXED) -> str:
        """Read one of the scope's files ("" when it does not exist).

        Args:
            path: The file (a memory file, or the scope's ``PROFILE.md``).
            scope: The scope it must belong to.
            until: What happens to the file until it is fixed, said when it is
                not UTF-8.

        Raises:
            InvalidPathError: see :meth:`check_own`.
            MemoryFileError: the file is not UTF-8 or cannot be read; the message
                names it.
        """
        self.check_own(path, scope)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return ""
        except OSError as e:
            msg = f"{self.rel(path)} cannot be read ({e.strerror or e}); check the file."
            raise MemoryFileError(msg) from None
        return decode_memory_file(data, self.rel(path), until)

    @staticmethod
    def _iter(folder: Path) -> list[Path]:
        return list(folder.iterdir()) if folder.is_dir() else []

    def scope_of_rel(self, rel: str) -> str | None:
        """Which scope a workspace-relative memory path belongs to (or ``None``)."""
        parts = PurePosixPath(rel).parts
        if parts in (("MEMORY.md",), ("PROFILE.md",)) or (
            len(parts) >= 2 and parts[0] == "memory" and parts[1] != "scopes"
        ):
            return MAIN_SCOPE
        if len(parts) >= 4 and parts[:2] == ("memory", "scopes"):
            return parts[2]
        return None

    def resolve_for_scope(
        self, user_path: str, scope: str, *, stored: Callable[[Path], bool] | None = None
    ) -> Path:
        """Resolve a caller-supplied path, refusing anything outside ``scope``.

        Accepts workspace-relative paths (``MEMORY.md``, ``memory/2026-11-21.md``,
        ``memory/scopes/u1/LONG_TERM.md``) and, for convenience, paths relative to
        the scope folder (``2026-11-21.md``, ``LONG_TERM.md``).

        Args:
            user_path: The path the caller gave.
            scope: The scope it must belong to.
            stored: Whether a candidate exists, for documents kept elsewhere than
                this folder (``None``: the folder's files, links refused).

        Raises:
            InvalidPathError: on ``..``, absolute paths, symlinks that leave the
                scope, paths of another scope, non-Markdown or missing files.
        """
        scope = check_scope(scope)
        raw = (user_path or "").strip()
        if not raw:
            raise InvalidPathError("Empty path: pass a memory file path such as 'MEMORY.md'.")
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidPathError(
                f"Path {user_path!r} contains a lone surrogate (not valid Unicode); "
                "pass a path returned by memory_search."
            ) from None
        if "\x00" in raw or raw.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", raw):
            raise InvalidPathError(
                f"Path {user_path!r} is absolute: pass a path relative to the memory "
                "workspace, as memory_search returns it."
            )
        pure = PurePosixPath(raw.replace("\\", "/"))
        if len(raw) > _MAX_PATH_CHARS or any(
            len(part.encode("utf-8")) > _MAX_NAME_BYTES for part in pure.parts
        ):
            raise InvalidPathError(
                f"Path {raw[:40]!r}... is too long ({len(raw)} characters): pass a path "
                "returned by memory_search, e.g. 'MEMORY.md' or 'memory/2026-01-31.md'."
            )
        if any(part == ".." for part in pure.parts):
            raise InvalidPathError(f"Path {user_path!r} contains '..': it is refused.")
        candidates = [self.root / pure]
        if scope != MAIN_SCOPE or len(pure.parts) == 1:
            candidates.append(self.scope_dir(scope) / pure)
        for cand in candidates:
            if not self._inside_scope(cand, scope):
                continue
            if stored is not None:
                if stored(cand):
                    if cand.suffix != ".md":
                        raise InvalidPathError(f"Path {user_path!r} is not a Markdown memory file.")
                    return cand
                continue
            try:
                exists = cand.is_file() or cand.is_symlink()
            except OSError as e:
                if e.errno == errno.ENAMETOOLONG:
                    raise InvalidPathError(f"Path {raw[:40]!r}... is too long.") from None
                raise InvalidPathError(
                    f"Path {user_path!r} cannot be read ({e.strerror or e})."
                ) from None
            if not exists:
                continue
            problem = self.link_problem(cand)
            if problem is not None:
                logger.warning("refusing memory file %s: %s", self.rel(cand), problem)
                raise InvalidPathError(
                    f"Path {user_path!r} is {problem}; refused (it could show memory of "
                    "another scope)."
                )
            if not cand.is_file():
                continue
            if cand.suffix != ".md":
                raise InvalidPathError(f"Path {user_path!r} is not a Markdown memory file.")
            return cand
        raise InvalidPathError(
            f"No memory file {user_path!r} in this scope. Use a path returned by "
            "memory_search, e.g. 'MEMORY.md' or 'memory/2026-01-31.md'."
        )

    def _inside_scope(self, cand: Path, scope: str) -> bool:
        try:
            rel = cand.relative_to(self.root).as_posix()
        except ValueError:
            return False
        return self.scope_of_rel(rel) == scope


__all__ = ["MAIN_SCOPE", "SCOPE_MAX_CHARS", "Layout", "check_scope", "decode_memory_file"]

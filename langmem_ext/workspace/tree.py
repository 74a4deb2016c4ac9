"""The tree of Markdown files a person reads, taken out of a workspace and put back.

Per scope the tree holds its long-term file (``MEMORY.md`` for ``main``,
``memory/scopes/<scope>/LONG_TERM.md`` for the others), its ``PROFILE.md`` next to
it, its daily notes (``…/YYYY-MM-DD.md``) and its transcripts
(``…/transcripts/YYYY-MM-DD.md``): the paths the embedded engine keeps as files and
the PostgreSQL engine as document rows.

:func:`read_tree` reads such a tree from a folder a person may have edited, refusing
anything that could write outside it or into another scope (a symlink, a Markdown
file in no known place, text that is not UTF-8) before anything is returned;
:func:`write_tree` writes files into a folder, refusing to overwrite other text.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from langmem_ext.core.errors import InvalidInputError, InvalidPathError
from langmem_ext.workspace.layout import _DAILY_RE, Layout, _is_scope_name, decode_memory_file
from langmem_ext.workspace.protocols import DocumentStore, WorkspaceLock

_PLACES = Layout(Path("/workspace"))
"""Where a scope's files are, as relative paths (no file is touched)."""

KINDS = ("long_term", "profile", "daily", "transcript")
"""The kinds of files of a scope's tree."""


@dataclass(frozen=True)
class TreeFile:
    """One file of the tree.

    Attributes:
        scope: The scope it belongs to.
        rel: Its workspace-relative POSIX path.
        text: Its text.
    """

    scope: str
    rel: str
    text: str

    @property
    def kind(self) -> str:
        """Which of :data:`KINDS` it is."""
        found = place_of(self.rel)
        assert found is not None  # a TreeFile is only made of a placed path
        return found[1]


def place_of(rel: str) -> tuple[str, str] | None:
    """The scope and kind (:data:`KINDS`) of a workspace-relative path, or ``None``
    when the path is no file of the tree."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or pure.suffix != ".md":
        return None
    rel = pure.as_posix()
    scope = _PLACES.scope_of_rel(rel)
    if scope is None or not _is_scope_name(scope):
        return None
    long_term = _PLACES.long_term(scope)
    if rel == _PLACES.rel(long_term):
        return scope, "long_term"
    if rel == _PLACES.rel(_PLACES.profile(scope)):
        return scope, "profile"
    folder = _PLACES.rel(_PLACES.scope_dir(scope))
    parent, _, name = rel.rpartition("/")
    if _DAILY_RE.match(name) and parent == folder:
        return scope, "daily"
    if _DAILY_RE.match(name) and parent == f"{folder}/transcripts":
        return scope, "transcript"
    return None


def _walk(folder: Path, *, strict: bool) -> list[tuple[str, str, Path]]:
    """``(scope, rel, path)`` of the tree's files under ``folder``, sorted by path.

    Dot files and folders, and files that are not Markdown, are passed over. With
    ``strict``, a symlink anywhere under the folder and a Markdown file in no place of
    the tree are refused; without, they are passed over.

    Raises:
        InvalidPathError: ``folder`` is no folder, or (``strict``) see above.
    """
    if not folder.is_dir():
        raise InvalidPathError(f"{folder} is not a folder.")
    found: list[tuple[str, str, Path]] = []
    for here, dirs, files in os.walk(folder):
        base = Path(here)
        for name in list(dirs):
            if name.startswith(".") or (base / name).is_symlink():
                dirs.remove(name)
                if strict and not name.startswith("."):
                    rel = (base / name).relative_to(folder).as_posix()
                    raise InvalidPathError(
                        f"{rel} is a symlink: the tree must hold plain folders and files "
                        "(a link could reach outside it or into another scope); refused."
                    )
        for name in files:
            path = base / name
            if name.startswith(".") or not name.endswith(".md"):
                continue
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                if strict:
                    raise InvalidPathError(
                        f"{rel} is a symlink: the tree must hold plain files (a link could "
                        "reach outside it or into another scope); refused."
                    )
                continue
            place = place_of(rel)
            if place is None:
                if strict:
                    raise InvalidPathError(
                        f"{rel} is no file of a memory tree (MEMORY.md, PROFILE.md, "
                        "memory/YYYY-MM-DD.md, memory/transcripts/YYYY-MM-DD.md, "
                        "memory/scopes/<scope>/…); move it out of the folder."
                    )
                continue
            found.append((place[0], rel, path))
    return sorted(found, key=lambda f: f[1])


def tree_paths(folder: Path) -> list[tuple[str, str]]:
    """``(scope, rel)`` of the tree's files in a workspace folder (symlinks and other
    files passed over), sorted by path.

    Args:
        folder: The workspace folder.

    Returns:
        The files, as scope and workspace-relative path.
    """
    if not folder.is_dir():
        return []
    return [(scope, rel) for scope, rel, _ in _walk(folder, strict=False)]


def read_tree(folder: Path) -> list[TreeFile]:
    """Read the tree of files in ``folder``, all checked before any is returned.

    Args:
        folder: A folder laid out as a workspace's Markdown files (what
            :func:`write_tree` writes, possibly edited by hand).

    Returns:
        Its files, sorted by path.

    Raises:
        InvalidPathError: ``folder`` is no folder; a symlink (file or folder) is in
            it; a Markdown file is in no place of the tree.
        MemoryFileError: A file is not UTF-8 (the message names it and the line).
    """
    root = folder.expanduser().resolve()
    out: list[TreeFile] = []
    for scope, rel, path in _walk(root, strict=True):
        real = path.resolve()
        if real.parent != root / PurePosixPath(rel).parent:  # raced into a link
            raise InvalidPathError(f"{rel} leads outside the folder; refused.")
        text = decode_memory_file(path.read_bytes(), rel, "nothing of the folder is taken")
        out.append(TreeFile(scope, rel, text))
    return out


def write_tree(files: list[TreeFile], folder: Path) -> dict[str, int]:
    """Write ``files`` under ``folder`` (created when missing), each atomically.

    Nothing is written when a file to write exists already with other text.

    Args:
        files: The files.
        folder: Where to write them.

    Returns:
        Files written per kind (:data:`KINDS`).

    Raises:
        InvalidInputError: A file exists already with other text, or ``folder`` is a
            file.
    """
    from langmem_ext.workspace.files import atomic_write_text

    if folder.exists() and not folder.is_dir():
        raise InvalidInputError(f"{folder} is a file: export into a folder.")
    for f in files:
        path = folder / f.rel
        if path.is_symlink() or (path.exists() and path.read_bytes() != f.text.encode("utf-8")):
            raise InvalidInputError(
                f"{path} exists with other text: export into a new or empty folder."
            )
    written: dict[str, int] = {}
    for f in files:
        path = folder / f.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, f.text)
        written[f.kind] = written.get(f.kind, 0) + 1
    return written


def stored_tree(documents: DocumentStore) -> list[TreeFile]:
    """Every file of the tree a document store holds, with its text, sorted by path.

    Args:
        documents: The workspace's document store (files or database rows).

    Returns:
        The files.

    Raises:
        InvalidPathError: A stored file is a symlink (the embedded store).
        MemoryFileError: A stored file is not UTF-8.
    """
    return [TreeFile(s, r, documents.read(s, r)) for s, r in documents.tree()]


def store_tree(
    documents: DocumentStore, lock: WorkspaceLock, files: list[TreeFile]
) -> list[TreeFile]:
    """Write the files whose text differs from the stored one, under the workspace lock
    (in one transaction when the store has them); the caller syncs afterwards.

    Args:
        documents: The workspace's document store.
        lock: The workspace lock.
        files: The files (from :func:`read_tree`).

    Returns:
        The files written.
    """
    changed: list[TreeFile] = []
    transaction: Any = getattr(documents, "transaction", None)
    with lock.hold(), transaction() if transaction is not None else nullcontext():
        for f in files:
            if documents.read(f.scope, f.rel) != f.text:
                documents.write(f.scope, f.rel, f.text)
                changed.append(f)
    return changed


__all__ = [
    "KINDS",
    "TreeFile",
    "place_of",
    "read_tree",
    "store_tree",
    "stored_tree",
    "tree_paths",
    "write_tree",
]

"""The Markdown documents of a workspace kept as files (the embedded document store).

:class:`FileDocuments` implements :class:`~langmem_ext.workspace.protocols.DocumentStore`
over the workspace folder: a path names a file under it, reads refuse symlinks
and non-UTF-8 text (:meth:`Layout.read <langmem_ext.workspace.layout.Layout.read>`),
and writes are atomic (:func:`~langmem_ext.workspace.files.atomic_write_text`).
"""

from __future__ import annotations

import builtins
import contextlib
from pathlib import Path, PurePosixPath

from langmem_ext.core.errors import InvalidPathError
from langmem_ext.workspace.files import atomic_write_text, fsync_dir
from langmem_ext.workspace.layout import Layout


class FileDocuments:
    """Markdown text per scope and workspace-relative path, in the workspace folder.

    Args:
        layout: The workspace's file layout.
    """

    def __init__(self, layout: Layout) -> None:
        self.layout = layout

    def path(self, scope: str, rel: str) -> Path:
        """The file ``rel`` names, checked to be a Markdown file of ``scope``.

        Args:
            scope: The scope the file must belong to.
            rel: Workspace-relative POSIX path (``memory/2026-01-31.md``).

        Returns:
            The absolute path.

        Raises:
            InvalidPathError: ``rel`` is empty, absolute, holds ``..`` or a NUL, is not
                Markdown, belongs to another scope or reaches through a symlink.
        """
        if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
            raise InvalidPathError(f"Invalid memory file path {rel!r}; refused.")
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or pure.suffix != ".md":
            raise InvalidPathError(
                f"{rel!r} is not a workspace-relative Markdown path (no '..', not absolute); "
                "refused."
            )
        path = self.layout.root / pure
        self.layout.check_own(path, scope)
        return path

    def read(self, scope: str, rel: str) -> str:
        """The text of one file of ``scope`` (``""`` when it does not exist).

        Raises:
            InvalidPathError: see :meth:`path`.
            MemoryFileError: the file is not UTF-8 or cannot be read.
        """
        return self.layout.read(self.path(scope, rel), scope)

    def write(self, scope: str, rel: str, text: str) -> None:
        """Replace one file's text atomically (temp file, fsync, rename, fsync folder).

        Raises:
            InvalidPathError: see :meth:`path`.
        """
        atomic_write_text(self.path(scope, rel), text)

    def delete(self, scope: str, rel: str) -> bool:
        """Remove one file of ``scope`` (durably: its folder is fsynced).

        Returns:
            Whether it existed.

        Raises:
            InvalidPathError: see :meth:`path`.
        """
        path = self.path(scope, rel)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        with contextlib.suppress(OSError):
            fsync_dir(path.parent)
        return True

    def stamp(self, scope: str, rel: str) -> tuple[int, int] | None:
        """``(mtime_ns, size)`` of one file of ``scope`` (``None`` when missing).

        Only the path is joined (no link check: this is the cheap "did it change"
        look before a read, which checks).
        """
        try:
            s = (self.layout.root / rel).stat()
        except OSError:
            return None
        return s.st_mtime_ns, s.st_size

    def list(self, scope: str) -> builtins.list[str]:
        """The scope's memory files (long-term file, daily notes), symlinks left out."""
        return [self.layout.rel(p) for p in self.layout.memory_files(scope)]

    def scopes(self) -> builtins.list[str]:
        """The scopes that have memory files."""
        return self.layout.scopes()

    def tree(self) -> builtins.list[tuple[str, str]]:
        """Every file a person reads, as ``(scope, rel)`` sorted by path: each scope's
        memory files, ``PROFILE.md`` and transcripts (symlinks left out)."""
        from langmem_ext.workspace.tree import tree_paths

        return tree_paths(self.layout.root)


__all__ = ["FileDocuments"]

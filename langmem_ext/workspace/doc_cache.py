"""Docs and their kept vectors, held in memory for search.

Every search reads the doc and the kept vector of each vector hit (and of the entry
before it) from ``index.db``. SQLite answers that in well under a millisecond, but
turning ~60 rows into docs and arrays costs as much again; at 10k memories that was
a fifth of a search's own time. The doc table therefore loads a scope's docs
and vectors into a :class:`DocCache` on its first search (when the scope is not
larger than ``index.cache_max_entries``) and answers from it after.

The cache never serves stale data: the doc table drops the entries each of its
writes touches (an upsert, delete, line move, vector or importance change), and
drops everything when another connection (another process) commits to the file.
An entry that is missing is read from SQLite and kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langmem_ext.workspace.docs import Entry


class DocCache:
    """Docs with their kept vectors (of one embedder model), by id."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}
        self._loaded: set[str] = set()
        self._skipped: set[str] = set()

    def is_loaded(self, scope: str) -> bool:
        """Whether the scope was loaded whole (since the last :meth:`clear`)."""
        return scope in self._loaded

    def is_skipped(self, scope: str) -> bool:
        """Whether the scope was found too large to hold (since the last :meth:`clear`)."""
        return scope in self._skipped

    def skip(self, scope: str) -> None:
        """Remember that the scope is too large to hold."""
        self._skipped.add(scope)

    def load(self, scope: str, entries: Iterable[tuple[str, Entry]]) -> None:
        """Add a whole scope's entries."""
        self._entries.update(entries)
        self._loaded.add(scope)

    def split(self, ids: Sequence[str]) -> tuple[dict[str, Entry], list[str]]:
        """``(found, missing)``: the cached entries of ``ids`` and the ids not cached."""
        found: dict[str, Entry] = {}
        missing: list[str] = []
        get = self._entries.get
        for i in ids:
            e = get(i)
            if e is None:
                missing.append(i)
            else:
                found[i] = e
        return found, missing

    def put(self, entries: dict[str, Entry]) -> None:
        """Keep entries read from SQLite (only for scopes held whole)."""
        for i, e in entries.items():
            if e[0].scope in self._loaded:
                self._entries[i] = e

    def drop(self, ids: Iterable[str]) -> None:
        """Forget entries (they changed)."""
        for i in ids:
            self._entries.pop(i, None)

    def drop_path(self, path: str) -> None:
        """Forget the entries of one file (their lines moved)."""
        for i in [i for i, (d, _v) in self._entries.items() if d.path == path]:
            del self._entries[i]

    def clear(self) -> None:
        """Forget everything (another process wrote the index)."""
        self._entries.clear()
        self._loaded.clear()
        self._skipped.clear()


__all__ = ["DocCache"]

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

A scope too large to load whole keeps the entries its searches read, the most
recently used :data:`RECENT_MAX_ENTRIES` of them (~2.5 KB each at 512-d): the next
search that meets the same hits or neighbours (a follow-up question, the recall of
the next turn) reads only the rest. Writes drop them as above.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langmem_ext.workspace.docs import Entry

RECENT_MAX_ENTRIES = 10_000
"""Entries of scopes too large to load whole that a doc cache keeps, most recently
used first."""


class DocCache:
    """Docs with their kept vectors (of one embedder model), by id."""

    def __init__(self, recent_max: int = RECENT_MAX_ENTRIES) -> None:
        self._entries: dict[str, Entry] = {}
        self._recent: dict[str, Entry] = {}
        """Entries of skipped scopes, least recently used first."""
        self._loaded: set[str] = set()
        self._skipped: set[str] = set()
        self.recent_max = recent_max
        """How many entries of skipped scopes are kept (0: none)."""

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
        recent = self._recent
        for i in ids:
            e = get(i)
            if e is None and (e := recent.pop(i, None)) is not None:
                recent[i] = e  # now the most recently used
            if e is None:
                missing.append(i)
            else:
                found[i] = e
        return found, missing

    def put(self, entries: dict[str, Entry]) -> None:
        """Keep entries read from SQLite: all of scopes held whole, the most recently
        used ones of scopes too large for that."""
        recent = self._recent
        for i, e in entries.items():
            scope = e[0].scope
            if scope in self._loaded:
                self._entries[i] = e
            elif scope in self._skipped and self.recent_max > 0:
                recent.pop(i, None)
                recent[i] = e
        while len(recent) > self.recent_max:
            del recent[next(iter(recent))]

    def drop(self, ids: Iterable[str]) -> None:
        """Forget entries (they changed)."""
        for i in ids:
            self._entries.pop(i, None)
            self._recent.pop(i, None)

    def drop_path(self, path: str) -> None:
        """Forget the entries of one file (their lines moved)."""
        for held in (self._entries, self._recent):
            for i in [i for i, (d, _v) in held.items() if d.path == path]:
                del held[i]

    def clear(self) -> None:
        """Forget everything (another process wrote the index)."""
        self._entries.clear()
        self._recent.clear()
        self._loaded.clear()
        self._skipped.clear()


__all__ = ["DocCache"]

"""The order of a scope's entries in their file sections, held in memory.

Search asks two questions of it for every query: which entries sit around a
candidate (the context stage) and which entry comes just before a vector hit (its
contextual vector). Both used to be SQL queries, a third of the search's own time
at 10k memories; against this map they are dictionary lookups.

A section is one file's entries of one category, ordered by line (then id, for
entries on one line), as :meth:`~langmem_ext.workspace.sqlite.keyword_index.KeywordIndex.neighbours`
documents. The doc table builds a map per scope on first use and drops it when
the docs table changes (see ``KeywordIndex._sections_of``).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple


class _Place(NamedTuple):
    path: str
    category: str
    ids: list[str]
    lines: list[int]
    at: int


class ScopeSections:
    """Entry order of one scope's file sections.

    Args:
        rows: ``(id, path, category, line)`` of every entry of the scope, sorted by
            path, category, line and id.
    """

    def __init__(self, rows: Iterable[tuple[str, str, str, int]]) -> None:
        self._places: dict[str, _Place] = {}
        self._sections: dict[tuple[str, str], tuple[list[str], list[int]]] = {}
        for (path, category), group in groupby(rows, key=itemgetter(1, 2)):
            section = list(group)
            ids = [r[0] for r in section]
            lines = [int(r[3]) for r in section]
            self._sections[(path, category)] = (ids, lines)
            for at, entry_id in enumerate(ids):
                self._places[entry_id] = _Place(path, category, ids, lines, at)

    def append(self, entry_id: str, path: str, category: str, line: int) -> bool:
        """Add a new entry that comes after every entry of its section (an appended
        bullet), in place: O(1) instead of a rebuild.

        Returns:
            ``False`` (nothing changed) when the entry is known already or would not
            be the last of its section: the caller rebuilds the map then.
        """
        if entry_id in self._places:
            return False
        ids, lines = self._sections.setdefault((path, category), ([], []))
        if ids and (lines[-1], ids[-1]) >= (line, entry_id):
            return False
        ids.append(entry_id)
        lines.append(line)
        self._places[entry_id] = _Place(path, category, ids, lines, len(ids) - 1)
        return True

    def around(
        self, entry_id: str, path: str, category: str, line: int, window: int, span: int
    ) -> list[tuple[int, str]] | None:
        """The entries up to ``window`` places before and after an entry of its section.

        Only entries within ``span`` lines of ``line`` count (as when a section is
        read by line range).

        Args:
            entry_id: The anchor entry.
            path: Where the caller saw it.
            category: Its category as the caller saw it.
            line: Its line as the caller saw it.
            window: Places on each side.
            span: Lines on each side.

        Returns:
            ``(offset, id)`` pairs in file order, negative offsets before the anchor;
            ``None`` when the anchor is gone or no longer where the caller saw it.
        """
        p = self._places.get(entry_id)
        if p is None or p.path != path or p.category != category:
            return None
        if abs(p.lines[p.at] - line) > span:
            return None
        lo, hi = max(p.at - window, 0), min(p.at + window + 1, len(p.ids))
        return [
            (j - p.at, p.ids[j])
            for j in range(lo, hi)
            if j != p.at and abs(p.lines[j] - line) <= span
        ]

    def previous(self, entry_id: str) -> str | None:
        """The entry just before ``entry_id`` in its section (``None``: first or unknown)."""
        p = self._places.get(entry_id)
        return None if p is None or p.at == 0 else p.ids[p.at - 1]


__all__ = ["ScopeSections"]

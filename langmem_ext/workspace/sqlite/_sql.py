"""Small SQL helpers shared by the workspace's SQLite repositories (no I/O)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from langmem_ext.workspace.sql.base import from_row

T = TypeVar("T")

IN_CHUNK = 500
"""Values bound per ``IN (...)`` query: well under SQLite's bound-parameter limit."""


def in_chunks(values: Sequence[T], size: int = IN_CHUNK) -> Iterator[tuple[Sequence[T], str]]:
    """``values`` in chunks of at most ``size``, each with the ``?,?,...``
    placeholders of its ``IN (...)`` clause.

    Example:
        >>> [(list(c), marks) for c, marks in in_chunks("abc", 2)]
        [(['a', 'b'], '?,?'), (['c'], '?')]
    """
    for start in range(0, len(values), size):
        chunk = values[start : start + size]
        yield chunk, ",".join("?" * len(chunk))


def without_index(column: str) -> str:
    """``column`` as a term SQLite's planner uses no index for (a unary ``+``).

    For a filter beside a lookup by key: in ``scope = ? AND deleted_at IS NULL AND
    id IN (...)`` with three ids or more, the planner (without statistics) prefers
    the two equality terms of the ``(scope, deleted_at)`` index to the primary key,
    and reads every live entry of the scope (17 ms at 100k entries) to keep the few
    it was asked for (0.05 ms by the key). ``without_index("scope") = ?`` keeps the
    filter and leaves the key to lead.

    Example:
        >>> without_index("e.scope")
        '+e.scope'
    """
    return f"+{column}"


__all__ = ["IN_CHUNK", "from_row", "in_chunks", "without_index"]

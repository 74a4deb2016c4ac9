"""Small SQL helpers shared by the workspace's SQLite repositories (no I/O)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

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

"""Small SQL helpers shared by the workspace's SQLite repositories (no I/O)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")
_Row = TypeVar("_Row", bound="DataclassInstance")

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


_FROM_SQLITE: dict[str, Callable[[Any], Any]] = {"float": float, "int": int, "bool": bool}
"""How a column comes back to its field's type; others (``str``, nullable) stay as read."""


def _same(value: Any) -> Any:
    return value


@functools.cache
def _converters(cls: type[Any]) -> tuple[Callable[[Any], Any], ...]:
    """Per field of a row dataclass, how its column is read (computed once per class)."""
    return tuple(_FROM_SQLITE.get(str(f.type), _same) for f in fields(cls))


def from_row(cls: type[_Row], row: Sequence[Any]) -> _Row:
    """A row dataclass from a row whose columns are its fields, in order (a ``SELECT *``
    of its table, or the columns named in field order)."""
    return cls(*(c(v) for c, v in zip(_converters(cls), row, strict=False)))

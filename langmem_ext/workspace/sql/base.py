"""Dialects and the base of the repositories both SQL engines share."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Row = TypeVar("_Row", bound="DataclassInstance")


_FROM_COLUMN: dict[str, Callable[[Any], Any]] = {"float": float, "int": int, "bool": bool}
"""How a column comes back to its field's type; others (``str``, nullable) stay as read."""


def _same(value: Any) -> Any:
    return value


@functools.cache
def _converters(cls: type[Any]) -> tuple[Callable[[Any], Any], ...]:
    """Per field of a row dataclass, how its column is read (computed once per class)."""
    return tuple(_FROM_COLUMN.get(str(f.type), _same) for f in fields(cls))


def from_row(cls: type[_Row], row: Sequence[Any]) -> _Row:
    """A row dataclass from a row whose columns are its fields, in order (a ``SELECT *``
    of its table, or the columns named in field order)."""
    return cls(*(c(v) for c, v in zip(_converters(cls), row, strict=False)))


def columns(record: type[Any], *, alias: str = "", skip: Collection[str] = ()) -> str:
    """The column list of a row type whose fields are named after its table's columns.

    In the fields' order, so a row read with it is ``record(*row)``.

    Args:
        record: A dataclass.
        alias: The table's alias in the query (``"e"`` gives ``e.id, e.scope, …``).
        skip: Fields left out (e.g. an id the table assigns).

    Example:
        >>> from langmem_ext.workspace.records import EventFilter
        >>> columns(EventFilter, alias="f", skip={"role"})
        'f.scope, f.since, f.until, f.thread_id'
    """
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + f.name for f in fields(record) if f.name not in skip)


@dataclass(frozen=True)
class Dialect:
    """What a shared statement needs to know of its engine's SQL.

    Args:
        mark: The driver's placeholder (``?`` for sqlite3, ``%s`` for psycopg).
        greatest: The function giving the largest of its arguments.
        binary_order: See the attribute.
        any_list: See the attribute.
    """

    mark: str
    greatest: str
    binary_order: str
    """What follows a text column in ``ORDER BY`` to order it by code point."""
    any_list: bool
    """Whether a list binds as one array parameter (``= ANY(%s)``) rather than
    one placeholder per value (``IN (?,?)``)."""
    unindexed: str = ""
    """What a column is prefixed with for the planner to use no index for it (see
    :meth:`no_index`)."""
    list_chunk: int | None = None
    """How many values one statement binds at the most (``None``: any number)."""

    def sql(self, text: str) -> str:
        """``text`` with each ``?`` made this dialect's placeholder (a shared
        statement uses ``?`` only as a placeholder and no ``%``).

        Example:
            >>> POSTGRES.sql("SELECT a FROM t WHERE b = ? AND c = ?")
            'SELECT a FROM t WHERE b = %s AND c = %s'
        """
        return text if self.mark == "?" else text.replace("?", self.mark)

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """The condition that ``column`` is one of ``values`` (not empty), and its
        parameters.

        Example:
            >>> SQLITE.one_of("l.field", ["a", "b"])
            ('l.field IN (?,?)', ['a', 'b'])
            >>> POSTGRES.one_of("l.field", ["a", "b"])
            ('l.field = ANY(%s)', [['a', 'b']])
        """
        if self.any_list:
            return f"{column} = ANY({self.mark})", [list(values)]
        return f"{column} IN ({','.join(self.mark * len(values))})", list(values)

    def no_index(self, column: str) -> str:
        """``column`` as a term the planner uses no index for, where the planner needs
        telling: SQLite's, which has no statistics, may prefer an index on a filter to
        the primary key of an ``IN`` list (a unary ``+`` stops it); PostgreSQL's does not.

        Example:
            >>> SQLITE.no_index("e.scope"), POSTGRES.no_index("e.scope")
            ('+e.scope', 'e.scope')
        """
        return f"{self.unindexed}{column}"

    def chunks(self, values: Sequence[Any]) -> list[Sequence[Any]]:
        """``values`` (each once, in order) in as many lists as one statement may bind.

        Example:
            >>> SQLITE.chunks(["a", "b", "a"]), POSTGRES.chunks([])
            ([['a', 'b']], [])
        """
        unique = list(dict.fromkeys(values))
        size = self.list_chunk or max(len(unique), 1)
        return [unique[i : i + size] for i in range(0, len(unique), size)]


SQLITE = Dialect(
    mark="?", greatest="MAX", binary_order="", any_list=False, unindexed="+", list_chunk=500
)
"""SQLite through :mod:`sqlite3`."""
POSTGRES = Dialect(mark="%s", greatest="greatest", binary_order=' COLLATE "C"', any_list=True)
"""PostgreSQL through psycopg."""


class SharedRepo:
    """The base of a repository whose statements both engines run.

    An engine's class derives from its own repository base first (which runs the
    statements: ``_one``, ``_all``, ``_run``) and from the shared class, and names
    its :class:`Dialect`.
    """

    dialect: ClassVar[Dialect]

    if TYPE_CHECKING:  # supplied by the engine's repository base

        def _all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

        def _one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None: ...

        def _run(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

        def _changed(self, sql: str, params: Sequence[Any] = ()) -> int: ...

        def _atomic(self) -> AbstractContextManager[Any]: ...

    def _in(self, sql: str, column: str, ids: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """``sql`` (``?`` placeholders) in this dialect, with ``{in_ids}`` made the
        condition that ``column`` is one of ``ids`` (each once), and the condition's
        parameters: once per chunk of ids the engine binds in one statement."""
        text = self.dialect.sql(sql)
        for chunk in self.dialect.chunks(ids):
            cond, bound = self.dialect.one_of(column, chunk)
            yield text.format(in_ids=cond), bound

    def _all_of(
        self,
        sql: str,
        column: str,
        ids: Sequence[Any],
        before: Sequence[Any] = (),
        after: Sequence[Any] = (),
    ) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` whose ``{in_ids}`` says that ``column`` is one of ``ids``
        (see :meth:`_in`); ``before`` and ``after`` are bound around the ids."""
        rows: list[tuple[Any, ...]] = []
        for text, bound in self._in(sql, column, ids):
            rows += self._all(text, (*before, *bound, *after))
        return rows

    def _changed_of(self, sql: str, column: str, ids: Sequence[Any]) -> int:
        """Run the write ``sql`` whose ``{in_ids}`` says that ``column`` is one of
        ``ids`` (see :meth:`_in`); returns the rows it changed."""
        return sum(self._changed(text, bound) for text, bound in self._in(sql, column, ids))


__all__ = ["POSTGRES", "SQLITE", "Dialect", "SharedRepo", "columns", "from_row"]

"""Filters of the LangGraph store's items: the engine-neutral semantics.

A ``filter`` maps keys to conditions; every condition must hold. A key with dots
(``"meta.lang"``) is a path into nested objects, as in LangGraph's SQLite and Postgres
stores. A condition is a value (equality; a dict without ``$`` keys matches a subset
of a nested object, a list matches an equal list) or a dict of operators: ``$eq``,
``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``. Equality is Python's (``1 == 1.0 ==
True``; a missing field equals ``None``); ``$ne`` is its negation, so a missing field
passes ``{"$ne": "x"}``. Ordering compares numbers with numbers and strings with
strings (ISO dates order as text); other pairs never match.

:func:`matches_filter` is the reference: a storage engine translates what it can
into its own query language (SQLite: :mod:`langmem_ext.workspace.sqlite.json_filter`)
and checks the rest of a filter (ints beyond 64 bits, keys its paths cannot spell)
with it, on the rows its query returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langmem_ext.core.errors import InvalidInputError

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
"""The comparison operators a filter may use."""


def unsupported(op: str) -> InvalidInputError:
    """The error for a filter operator other than :data:`OPERATORS`."""
    msg = f"Unsupported filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt or $lte."
    return InvalidInputError(msg)


def is_operators(cond: Any) -> bool:
    """Whether a condition is a dict of operators (has a ``$`` key), not a subset match."""
    return isinstance(cond, Mapping) and any(isinstance(k, str) and k.startswith("$") for k in cond)


def lookup(value: Mapping[str, Any], key: str) -> Any:
    """The field a filter key names: ``"a.b"`` is ``value["a"]["b"]`` (``None`` if absent)."""
    cur: Any = value
    for part in key.split("."):
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


def is_number(x: Any) -> bool:
    """Whether ``x`` orders as a number (``bool`` does not)."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op not in OPERATORS:
        raise unsupported(op)
    if is_number(arg) and is_number(value):
        a, b = float(value), float(arg)
    elif isinstance(arg, str) and isinstance(value, str):
        a, b = value, arg  # type: ignore[assignment]
    else:
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _compare(value: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        if is_operators(expected):
            return all(_operator(value, op, arg) for op, arg in expected.items())
        if not isinstance(value, Mapping):
            return False
        return all(_compare(value.get(k), v) for k, v in expected.items())
    if isinstance(expected, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(expected)
            and all(_compare(a, b) for a, b in zip(value, expected, strict=True))
        )
    return bool(value == expected)


def matches_filter(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether an item value passes a store ``filter`` (all conditions must hold).

    Args:
        value: The item's value.
        filter: ``{key_or_dotted_path: value_or_operators}``; see the module docstring.

    Returns:
        ``True`` when every condition holds (always for an empty filter).
    """
    return not filter or all(_compare(lookup(value, k), v) for k, v in filter.items())


def check_operators(cond: Any) -> None:
    """Refuse an unsupported operator anywhere in a condition, before any row is read.

    Raises:
        InvalidInputError: An operator other than :data:`OPERATORS`.
    """
    if isinstance(cond, Mapping):
        if is_operators(cond):
            for op in cond:
                if op not in OPERATORS:
                    raise unsupported(str(op))
            return
        for sub in cond.values():
            check_operators(sub)
    elif isinstance(cond, list | tuple):
        for sub in cond:
            check_operators(sub)


__all__ = [
    "OPERATORS",
    "check_operators",
    "is_number",
    "is_operators",
    "lookup",
    "matches_filter",
    "unsupported",
]

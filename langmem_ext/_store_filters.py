"""Filters of :class:`~langmem_ext.store.ChromaMemoryStore`: one semantics, two evaluators.

A ``filter`` maps keys to conditions; every condition must hold. A key with dots
(``"meta.lang"``) is a path into nested objects, as in LangGraph's SQLite and Postgres
stores. A condition is a value (equality; a dict without ``$`` keys matches a subset
of a nested object, a list matches an equal list) or a dict of operators: ``$eq``,
``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``. Equality is Python's (``1 == 1.0 ==
True``; a missing field equals ``None``); ``$ne`` is its negation, so a missing field
passes ``{"$ne": "x"}``. Ordering compares numbers with numbers and strings with
strings (ISO dates order as text); other pairs never match.

:func:`compile_filter` turns the conditions it can express exactly into SQL over the
JSON column ``value`` (``json_extract`` / ``json_type``); :func:`matches_filter`
evaluates any filter in Python. The store pushes the SQL into its query and runs the
Python check only for the conditions SQL could not take.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langmem_ext.errors import InvalidInputError

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_INT64 = 2**63


def _unsupported(op: str) -> InvalidInputError:
    msg = f"Unsupported filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt or $lte."
    return InvalidInputError(msg)


# -- Python ------------------------------------------------------------------------------


def lookup(value: Mapping[str, Any], key: str) -> Any:
    """The field a filter key names: ``"a.b"`` is ``value["a"]["b"]`` (``None`` if absent)."""
    cur: Any = value
    for part in key.split("."):
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op not in _OPERATORS:
        raise _unsupported(op)
    if _is_number(arg) and _is_number(value):
        a, b = float(value), float(arg)
    elif isinstance(arg, str) and isinstance(value, str):
        a, b = value, arg  # type: ignore[assignment]
    else:
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _compare(value: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in expected):
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


# -- SQL ---------------------------------------------------------------------------------


def _json_path(key: str) -> str | None:
    parts = key.split(".")
    if any(not p or '"' in p or "\\" in p for p in parts):
        return None
    return "$" + "".join(f'."{p}"' for p in parts)


def _scalar_ok(x: Any) -> bool:
    """Whether SQLite can bind ``x`` as itself (ints beyond 64 bits cannot).

    Floats bind as they are: ``inf`` compares like a number, ``nan`` binds as NULL,
    which never compares true, as ``nan`` never does in Python.
    """
    if isinstance(x, bool) or x is None or isinstance(x, str | float):
        return True
    return isinstance(x, int) and -_INT64 <= x < _INT64


def _eq_sql(col: str, path: str, arg: Any) -> tuple[str, list[Any]] | None:
    """SQL that is true exactly when ``lookup(value, key) == arg`` (never NULL)."""
    if not _scalar_ok(arg):
        return None
    if arg is None:
        return f"(json_extract({col}, ?) IS NULL)", [path]
    if isinstance(arg, str):
        return (
            f"COALESCE(json_type({col}, ?) = 'text' AND json_extract({col}, ?) = ?, 0)",
            [path, path, arg],
        )
    # Python's numeric equality: True == 1 == 1.0 (JSON true/false extract as 1/0).
    return (
        f"COALESCE(json_type({col}, ?) IN ('integer', 'real', 'true', 'false') "
        f"AND json_extract({col}, ?) = ?, 0)",
        [path, path, float(arg) if isinstance(arg, float) else int(arg)],
    )


def _order_sql(col: str, path: str, op: str, arg: Any) -> tuple[str, list[Any]] | None:
    sign = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[op]
    if _is_number(arg):
        if not _scalar_ok(arg):
            return None  # a huge int: Python compares it
        kinds = "('integer', 'real')"
    elif isinstance(arg, str):
        kinds = "('text')"
    else:
        return "0", []
    return (
        f"COALESCE(json_type({col}, ?) IN {kinds} AND json_extract({col}, ?) {sign} ?, 0)",
        [path, path, arg],
    )


def _condition_sql(col: str, key: str, cond: Any) -> tuple[str, list[Any]] | None:
    path = _json_path(key)
    if path is None:
        return None
    if isinstance(cond, Mapping):
        if not any(isinstance(k, str) and k.startswith("$") for k in cond):
            return None  # subset match of a nested object: Python
        parts: list[str] = []
        params: list[Any] = []
        for op, arg in cond.items():
            if op not in _OPERATORS:
                raise _unsupported(op)
            if op in ("$eq", "$ne"):
                eq = _eq_sql(col, path, arg)
                if eq is None:
                    return None
                parts.append(eq[0] if op == "$eq" else f"NOT {eq[0]}")
                params += eq[1]
            else:
                order = _order_sql(col, path, op, arg)
                if order is None:
                    return None
                parts.append(order[0])
                params += order[1]
        return " AND ".join(parts) or "1", params
    if isinstance(cond, list | tuple):
        return None
    return _eq_sql(col, path, cond)


def compile_filter(
    filter: Mapping[str, Any] | None, col: str = "value"
) -> tuple[str, list[Any], dict[str, Any]]:
    """Split a filter into SQL over the JSON column ``col`` and a Python remainder.

    Args:
        filter: A store filter (see the module docstring).
        col: The column holding the item value as JSON text.

    Returns:
        ``(sql, params, rest)``: ``sql`` (``"1"`` when nothing compiled) holds exactly
        for the values passing the compiled conditions; ``rest`` is the sub-filter to
        check with :func:`matches_filter` (empty when SQL decides alone).

    Raises:
        InvalidInputError: An operator other than the six supported ones.
    """
    parts: list[str] = []
    params: list[Any] = []
    rest: dict[str, Any] = {}
    for key, cond in (filter or {}).items():
        compiled = _condition_sql(col, str(key), cond)
        if compiled is None:
            if isinstance(cond, Mapping):
                for op in cond:
                    if isinstance(op, str) and op.startswith("$") and op not in _OPERATORS:
                        raise _unsupported(op)
            rest[key] = cond
        else:
            parts.append(f"({compiled[0]})")
            params += compiled[1]
    return (" AND ".join(parts) or "1"), params, rest


__all__ = ["compile_filter", "lookup", "matches_filter"]

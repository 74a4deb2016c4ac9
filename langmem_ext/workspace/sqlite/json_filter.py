"""Store filters as SQLite SQL over a JSON column (``json_extract`` / ``json_type``).

The semantics are :mod:`langmem_ext.workspace.item_filter`'s. :func:`compile_filter`
translates every condition SQLite can decide exactly (equality, the operators, subset
matches of nested objects, list equality, at any depth) and returns the rest (ints
beyond 64 bits, ``$eq`` of a dict or list, keys with ``"`` or ``\\`` or an empty
part) for :func:`~langmem_ext.workspace.item_filter.matches_filter` to check on the
rows the SQL returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langmem_ext.workspace.item_filter import (
    OPERATORS,
    check_operators,
    is_number,
    is_operators,
    unsupported,
)

_INT64 = 2**63

_Sql = tuple[str, list[Any]]
_Path = Sequence[str | int]


def _json_path(parts: _Path) -> str | None:
    """``$."a"."b"[0]``; ``None`` when a key cannot be spelled in a SQLite JSON path."""
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif not p or '"' in p or "\\" in p:
            return None
        else:
            out += f'."{p}"'
    return out


def _scalar_ok(x: Any) -> bool:
    """Whether SQLite can bind ``x`` as itself (ints beyond 64 bits cannot).

    Floats bind as they are: ``inf`` compares like a number, ``nan`` binds as NULL,
    which never compares true, as ``nan`` never does in Python.
    """
    if isinstance(x, bool) or x is None or isinstance(x, str | float):
        return True
    return isinstance(x, int) and -_INT64 <= x < _INT64


def _eq_sql(col: str, path: str, arg: Any) -> _Sql | None:
    """SQL that is true exactly when the field at ``path`` equals ``arg`` (never NULL)."""
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


def _order_sql(col: str, path: str, op: str, arg: Any) -> _Sql | None:
    sign = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[op]
    if is_number(arg):
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


def _all_of(parts: Sequence[_Sql | None]) -> _Sql | None:
    """The conjunction of compiled parts; ``None`` when one of them did not compile."""
    if any(p is None for p in parts):
        return None
    done = [p for p in parts if p is not None]
    return " AND ".join(f"({s})" for s, _ in done) or "1", [x for _, ps in done for x in ps]


def _operators_sql(col: str, path: str, cond: Mapping[str, Any]) -> _Sql | None:
    parts: list[_Sql | None] = []
    for op, arg in cond.items():
        if op not in OPERATORS:
            raise unsupported(op)
        if op in ("$eq", "$ne"):
            eq = _eq_sql(col, path, arg)
            parts.append(eq if eq is None or op == "$eq" else (f"NOT {eq[0]}", eq[1]))
        else:
            parts.append(_order_sql(col, path, op, arg))
    return _all_of(parts)


def _condition_sql(col: str, parts: _Path, cond: Any) -> _Sql | None:
    """SQL true exactly when the field at ``parts`` meets ``cond``, or ``None``."""
    path = _json_path(parts)
    if path is None:
        return None
    if isinstance(cond, Mapping):
        if is_operators(cond):
            return _operators_sql(col, path, cond)
        if any(not isinstance(k, str) for k in cond):
            return None  # JSON keys are strings: Python decides (never equal)
        kind: _Sql = (f"COALESCE(json_type({col}, ?) = 'object', 0)", [path])
        return _all_of([kind, *(_condition_sql(col, [*parts, k], v) for k, v in cond.items())])
    if isinstance(cond, list | tuple):
        size: _Sql = (
            f"COALESCE(json_type({col}, ?) = 'array' AND json_array_length({col}, ?) = ?, 0)",
            [path, path, len(cond)],
        )
        return _all_of([size, *(_condition_sql(col, [*parts, i], v) for i, v in enumerate(cond))])
    return _eq_sql(col, path, cond)


def compile_filter(
    filter: Mapping[str, Any] | None, col: str = "value"
) -> tuple[str, list[Any], dict[str, Any]]:
    """Split a filter into SQL over the JSON column ``col`` and a remainder.

    Args:
        filter: A store filter (see :mod:`langmem_ext.workspace.item_filter`).
        col: The column holding the item value as JSON text.

    Returns:
        ``(sql, params, rest)``: ``sql`` (``"1"`` when nothing compiled) holds exactly
        for the values passing the compiled conditions; ``rest`` is the sub-filter to
        check with :func:`~langmem_ext.workspace.item_filter.matches_filter` (empty
        when SQL decides alone).

    Raises:
        InvalidInputError: An operator other than the six supported ones.
    """
    parts: list[str] = []
    params: list[Any] = []
    rest: dict[str, Any] = {}
    for key, cond in (filter or {}).items():
        check_operators(cond)
        compiled = _condition_sql(col, str(key).split("."), cond)
        if compiled is None:
            rest[key] = cond
        else:
            parts.append(f"({compiled[0]})")
            params += compiled[1]
    return (" AND ".join(parts) or "1"), params, rest


__all__ = ["compile_filter"]

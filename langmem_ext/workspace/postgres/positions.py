"""Ordering keys that never need renumbering: a line inserted between two others gets
a key between theirs, and no other key changes.

A key is a non-empty string of lowercase hex digits, read as the fraction ``0.<key>``
in base 16 and never ending in ``0``; for such strings the byte order (PostgreSQL's
``COLLATE "C"``) is the order of the fractions, so any two distinct keys have room
between them. :func:`keys_between` places new keys close after the lower bound
(1/1024 of the gap per key), so the usual pattern — lines added one after another at
the same place, each after the previous one — costs a key about 1/3000 of a
digit per addition, not half the remaining gap each time.
"""

from __future__ import annotations

_SPREAD = 1024
"""A run of ``n`` new keys takes at most ``n / (1024 n + 1)`` of its gap, near its
lower end."""


def _value(key: str, width: int) -> int:
    """``key`` as an integer of ``width`` hex digits (zeros appended)."""
    return int(key.ljust(width, "0"), 16)


def _key(value: int, width: int) -> str:
    """The key of the ``width``-digit fraction ``value`` (trailing zeros dropped)."""
    return format(value, "x").rjust(width, "0").rstrip("0")


def keys_between(low: str | None, high: str | None, count: int) -> list[str]:
    """``count`` increasing keys, all after ``low`` and before ``high``.

    Args:
        low: The key before the new ones (``None``: the start).
        high: The key after them (``None``: the end); greater than ``low``.
        count: How many keys.

    Returns:
        The keys, in order.

    Raises:
        ValueError: ``high`` is not after ``low``, or a key is malformed.
    """
    if count <= 0:
        return []
    for k in (low, high):
        if k is not None and (not k or k.endswith("0") or k.strip("0123456789abcdef")):
            raise ValueError(f"not an ordering key: {k!r}")
    if low is not None and high is not None and low >= high:
        raise ValueError(f"ordering keys out of order: {low!r} >= {high!r}")
    width = max(len(low or ""), len(high or ""), 1)
    need = _SPREAD * count + 1
    while True:
        lo = _value(low, width) if low is not None else 0
        hi = _value(high, width) if high is not None else 16**width
        if hi - lo > need:
            break
        width += 1
    step = (hi - lo) // need
    return [_key(lo + step * (i + 1), width) for i in range(count)]


def spread_keys(count: int) -> list[str]:
    """``count`` increasing keys spread over the whole range (a new document's lines:
    the same gap after each, so later insertions anywhere stay short)."""
    if count <= 0:
        return []
    width = 1
    while 16**width <= _SPREAD * (count + 1):
        width += 1
    step = 16**width // (count + 1)
    return [_key(step * (i + 1), width) for i in range(count)]


__all__ = ["keys_between", "spread_keys"]

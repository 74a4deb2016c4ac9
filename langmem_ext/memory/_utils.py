"""Private helpers shared by the memory modules (no I/O of their own)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from typing import Concatenate, ParamSpec, TypeVar

from langmem_ext.core.errors import InvalidInputError, InvalidTimeError

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def async_method(
    fn: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Awaitable[R]]:
    """Build ``afoo`` from the method ``foo``: the same code, run in a worker thread.

    Args:
        fn: A synchronous method.

    Returns:
        A coroutine method with the same signature.
    """

    async def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(fn, self, *args, **kwargs)

    wrapper.__name__ = "a" + fn.__name__
    wrapper.__qualname__ = fn.__qualname__.rpartition(".")[0] + ".a" + fn.__name__
    wrapper.__doc__ = f"Async version of :meth:`{fn.__name__}` (runs it in a worker thread)."
    return wrapper


def check_unicode(value: str, what: str) -> None:
    """Refuse a text with a lone surrogate (it cannot be written as UTF-8).

    Args:
        value: The text.
        what: What it is, for the message (``"Memory text"``).

    Raises:
        InvalidInputError: ``value`` holds a lone surrogate.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidInputError(
            f"{what} contains a lone surrogate {value[e.start]!r} at character {e.start}: "
            "it is not valid Unicode and cannot be stored as UTF-8. Fix the text (for "
            "example decode the input with errors='replace')."
        ) from None


def utc(ts: float) -> datetime:
    """Epoch seconds to an aware UTC datetime."""
    return datetime.fromtimestamp(ts, tz=UTC)


EARLIEST = datetime(1900, 1, 1, tzinfo=UTC).timestamp()
"""The earliest time a memory may carry (epoch seconds)."""
LATEST = datetime(3000, 1, 1, tzinfo=UTC).timestamp()
"""The latest time a memory may carry (epoch seconds)."""


def to_epoch(value: datetime | date | str | float | int | None, default: float) -> float:
    """Epoch seconds of a datetime (naive = local time), a date (local noon), an ISO
    8601 string or a number of epoch seconds.

    Args:
        value: The time, or ``None``.
        default: Returned when ``value`` is ``None``.

    Raises:
        InvalidTimeError: ``value`` is no time, not finite, or outside the years
            1900-2999 (a number a thousand times too large is named as milliseconds).
    """
    if value is None:
        return default
    if isinstance(value, str):
        text = value
        try:
            value = datetime.fromisoformat(text.strip())
        except ValueError:
            raise InvalidTimeError(
                f"{text[:40]!r} is not an ISO 8601 time (e.g. 2026-03-01T09:30:00+01:00)."
            ) from None
    if isinstance(value, bool) or not isinstance(value, int | float | datetime | date):
        raise InvalidTimeError(
            f"Expected a datetime, date, ISO 8601 string or epoch seconds, "
            f"got {type(value).__name__}."
        )
    if isinstance(value, datetime):
        try:
            ts = value.timestamp() if value.tzinfo else value.astimezone().timestamp()
        except (OverflowError, OSError, ValueError):
            ts = math.inf
    elif isinstance(value, date):
        ts = datetime(value.year, value.month, value.day, 12).timestamp()
    else:
        ts = float(value)
    if not math.isfinite(ts):
        raise InvalidTimeError(f"A time must be a finite number of epoch seconds, got {value!r}.")
    if not EARLIEST <= ts < LATEST:
        hint = ""
        if EARLIEST <= ts / 1000 < LATEST:
            hint = " It looks like milliseconds: pass epoch seconds (divide by 1000)."
        raise InvalidTimeError(f"The time {value!r} is outside the years 1900-2999.{hint}")
    return ts


def to_epoch_or_none(value: datetime | date | str | float | int | None) -> float | None:
    """:func:`to_epoch` that keeps ``None``."""
    return None if value is None else to_epoch(value, 0.0)


__all__ = ["EARLIEST", "LATEST", "async_method", "to_epoch", "to_epoch_or_none", "utc"]

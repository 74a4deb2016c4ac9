"""Private helpers shared by the memory modules (no I/O of their own)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from typing import Concatenate, ParamSpec, TypeVar

from langmem_ext.errors import InvalidInputError

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


def utc(ts: float) -> datetime:
    """Epoch seconds to an aware UTC datetime."""
    return datetime.fromtimestamp(ts, tz=UTC)


def to_epoch(value: datetime | date | float | int | None, default: float) -> float:
    """Epoch seconds of a datetime (naive = local time), a date (local noon) or a number.

    Args:
        value: The time, or ``None``.
        default: Returned when ``value`` is ``None``.

    Raises:
        InvalidInputError: For anything else.
    """
    if value is None:
        return default
    if isinstance(value, bool):
        raise InvalidInputError(f"Expected a time, got {value!r}.")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp() if value.tzinfo else value.astimezone().timestamp()
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, 12).timestamp()
    raise InvalidInputError(
        f"Expected a datetime, date or epoch seconds, got {type(value).__name__}."
    )


__all__ = ["async_method", "to_epoch", "utc"]

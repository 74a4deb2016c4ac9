"""Async plumbing of :class:`~langmem_ext.store.chroma.ChromaMemoryStore`.

* :class:`OpQueue` groups the operations of concurrent ``abatch`` calls (every
  ``aput``, ``aget``, ``asearch`` … is one) into one ``batch`` in a worker thread:
  1,000 concurrent ``aput`` calls become one ledger transaction and one embedding
  batch instead of 1,000 of each. This is what LangGraph's ``AsyncBatchedBaseStore``
  does, without its rule that the store be created inside a running event loop
  (and that its sync methods refuse to run there).
* :class:`AwaitableInt`, :class:`AwaitableFlag` and :class:`SweeperFuture` are
  results the sync TTL methods return that can also be awaited, so code written for
  ``SqliteStore`` (``store.sweep_ttl()``) and for ``AsyncSqliteStore``
  (``await store.sweep_ttl()``) both work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import Op, Result


class AwaitableInt(int):
    """An ``int`` that ``await`` also returns (e.g. the count of ``sweep_ttl``)."""

    def __await__(self) -> Generator[Any, None, int]:
        yield from ()
        return int(self)


class AwaitableFlag(int):
    """A truth value (``1``/``0``, shown as ``True``/``False``) that ``await`` returns as a bool."""

    def __new__(cls, flag: bool) -> AwaitableFlag:
        return super().__new__(cls, 1 if flag else 0)

    def __repr__(self) -> str:
        return repr(bool(self))

    def __await__(self) -> Generator[Any, None, bool]:
        yield from ()
        return bool(self)


class SweeperFuture(concurrent.futures.Future[None]):
    """The sweeper's future: done when it stops; ``await`` returns it at once.

    ``await store.start_ttl_sweeper()`` (as on ``AsyncSqliteStore``) therefore
    starts the sweeper without waiting for it to end.
    """

    def __await__(self) -> Generator[Any, None, SweeperFuture]:
        yield from ()
        return self


@dataclass
class _LoopQueue:
    pending: list[tuple[list[Op], asyncio.Future[list[Result]]]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class OpQueue:
    """Runs the ops of concurrent async calls as one sync ``batch`` per drain.

    Args:
        run: The store's sync ``batch``. It runs in a worker thread, once per drain
            with the ops of every call queued since the last drain, in call order.
            If it raises, each call's ops are re-run alone, so one caller's bad
            value fails only that caller (``batch`` validates before writing).
    """

    def __init__(self, run: Callable[[list[Op]], list[Result]]) -> None:
        self._run = run
        self._lock = threading.Lock()
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopQueue] = (
            weakref.WeakKeyDictionary()
        )

    async def submit(self, ops: Sequence[Op]) -> list[Result]:
        """Queue ``ops`` for the next drain on this event loop and wait for their results."""
        loop = asyncio.get_running_loop()
        with self._lock:
            q = self._loops.get(loop)
            if q is None:
                q = self._loops[loop] = _LoopQueue()
        fut: asyncio.Future[list[Result]] = loop.create_future()
        q.pending.append((list(ops), fut))
        if q.task is None or q.task.done():
            q.task = loop.create_task(self._drain(q))
        return await fut

    async def _drain(self, q: _LoopQueue) -> None:
        while q.pending:
            await asyncio.sleep(0)  # let callers scheduled in the same tick join
            group, q.pending = q.pending, []
            merged = [op for ops, _ in group for op in ops]
            try:
                results = await asyncio.to_thread(self._run, merged)
            except Exception as e:
                if len(group) == 1:  # nothing to isolate: the error is this caller's
                    if not group[0][1].done():
                        group[0][1].set_exception(e)
                else:
                    await self._one_by_one(group)
                continue
            start = 0
            for ops, fut in group:
                if not fut.done():
                    fut.set_result(results[start : start + len(ops)])
                start += len(ops)

    async def _one_by_one(self, group: list[tuple[list[Op], asyncio.Future[list[Result]]]]) -> None:
        for ops, fut in group:
            try:
                res = await asyncio.to_thread(self._run, ops)
            except Exception as e:
                if not fut.done():
                    fut.set_exception(e)
            else:
                if not fut.done():
                    fut.set_result(res)


__all__ = ["AwaitableFlag", "AwaitableInt", "OpQueue", "SweeperFuture"]

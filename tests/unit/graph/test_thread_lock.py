"""First-come locks per conversation thread, for OS threads and asyncio tasks."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from langmem_ext import ThreadConflictError
from langmem_ext.graph.thread_lock import ThreadLocks


def test_thread_locks_grant_in_request_order_and_free_their_keys() -> None:
    locks = ThreadLocks()
    order: list[int] = []
    queued = [threading.Event() for _ in range(5)]

    def waiter(i: int) -> None:
        queued[i].set()
        with locks.hold("k"):
            order.append(i)

    with locks.hold("k"):
        threads = []
        for i in range(5):  # each queues only after the previous one has
            t = threading.Thread(target=waiter, args=(i,))
            t.start()
            assert queued[i].wait(10)
            while len(locks._slots["k"].waiters) < i + 1:
                time.sleep(0.001)
            threads.append(t)
    for t in threads:
        t.join(10)
    assert order == [0, 1, 2, 3, 4]
    assert locks._slots == {}  # no key outlives its last user


async def test_a_cancelled_async_waiter_leaves_the_queue() -> None:
    locks = ThreadLocks()
    got: list[str] = []

    async def take(name: str) -> None:
        async with locks.ahold("k"):
            got.append(name)

    async with locks.ahold("k"):
        cancelled = asyncio.ensure_future(take("cancelled"))
        later = asyncio.ensure_future(take("later"))
        await asyncio.sleep(0)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
    await later
    assert got == ["later"]
    assert locks._slots == {}


def test_holding_a_key_twice_in_one_os_thread_raises_instead_of_hanging() -> None:
    locks = ThreadLocks()
    with locks.hold("k", "'t1'"):
        with (
            pytest.raises(ThreadConflictError, match="thread 't1' is still open"),
            locks.hold("k", "'t1'"),
        ):
            pass
        with locks.hold("other"):  # other keys are free
            pass
    with locks.hold("k"):  # and the key itself once released
        pass
    assert locks._slots == {}


async def test_os_threads_and_tasks_queue_on_one_lock() -> None:
    locks = ThreadLocks()
    order: list[str] = []
    release, holding = threading.Event(), threading.Event()

    def sync_holder() -> None:
        with locks.hold("k"):
            holding.set()
            assert release.wait(10)
            order.append("thread")

    holder = threading.Thread(target=sync_holder)
    holder.start()
    assert await asyncio.to_thread(holding.wait, 10)

    async def task() -> None:
        async with locks.ahold("k"):
            order.append("task")

    waiting = asyncio.ensure_future(task())
    await asyncio.sleep(0)  # queued behind the OS thread; the loop keeps running
    assert not waiting.done()
    release.set()
    await waiting
    await asyncio.to_thread(holder.join, 10)
    assert order == ["thread", "task"]
    assert locks._slots == {}

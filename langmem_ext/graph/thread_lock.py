"""First-come, first-served locks keyed by a conversation thread.

One lock per key (the memory graph uses one per checkpointer and ``thread_id``),
taken alike by OS threads (:meth:`ThreadLocks.hold`) and asyncio tasks
(:meth:`ThreadLocks.ahold`), in the order they asked: a sync ``invoke`` and an
``ainvoke`` of the server on one thread queue on the same lock, while other keys
never wait. A task waiting on the lock does not block its event loop; one cancelled
while it waits leaves the queue (and passes the lock on if it had just been handed
it). A key's entry exists only while someone holds or waits for it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from contextlib import asynccontextmanager, contextmanager

from langmem_ext.core.errors import ThreadConflictError

_WAITING, _GRANTED, _GONE = "waiting", "granted", "gone"


class _Waiter:
    """One queued acquirer: how to wake it, and whether it got the lock."""

    __slots__ = ("ident", "state", "wake")

    def __init__(self, ident: int, wake: Callable[[], None]) -> None:
        self.ident = ident
        self.wake = wake
        self.state = _WAITING


class _Slot:
    """The lock of one key: its holder's OS thread, its queue, its users."""

    __slots__ = ("owner", "users", "waiters")

    def __init__(self) -> None:
        self.owner: int | None = None  # the holder's OS thread; None: free
        self.waiters: deque[_Waiter] = deque()
        self.users = 0  # holder + waiters: the slot goes when it drops to 0


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class ThreadLocks:
    """Locks keyed by any hashable, granted in request order (sync and async).

    Example:
        .. code-block:: python

            locks = ThreadLocks()
            with locks.hold(("saver-1", "t1")):
                ...  # one run of thread t1 at a time
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._slots: dict[Hashable, _Slot] = {}

    @contextmanager
    def hold(self, key: Hashable, label: str = "") -> Iterator[None]:
        """Hold ``key``'s lock for the ``with`` block, waiting for earlier holders.

        Args:
            key: What the lock is for.
            label: How an error names the key (default its ``repr``).

        Raises:
            ThreadConflictError: This OS thread holds ``key`` already (a run of the
                thread is still open here, e.g. an unfinished ``stream``): waiting
                would never end.
        """
        ident = threading.get_ident()
        event = threading.Event()
        waiter = self._enter(key, ident, event.set, refuse_own=label or repr(key))
        if waiter is not None:
            with self._leaving_on_error(key, waiter):
                event.wait()
        try:
            yield
        finally:
            self._release(key)

    @asynccontextmanager
    async def ahold(self, key: Hashable) -> AsyncIterator[None]:
        """Hold ``key``'s lock for the ``async with`` block without blocking the loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_resolve, future)

        waiter = self._enter(key, threading.get_ident(), wake, refuse_own=None)
        if waiter is not None:
            with self._leaving_on_error(key, waiter):
                await future
        try:
            yield
        finally:
            self._release(key)

    def _enter(
        self, key: Hashable, ident: int, wake: Callable[[], None], *, refuse_own: str | None
    ) -> _Waiter | None:
        """Take the lock when free (``None``), else queue and return the waiter.

        ``refuse_own``: the key's label when this OS thread must not wait for itself.
        """
        with self._guard:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot()
            if refuse_own is not None and slot.owner == ident:
                raise ThreadConflictError(
                    f"A run of thread {refuse_own} is still open in this OS thread (an "
                    "unfinished stream?): finish or close it before starting the next."
                )
            slot.users += 1
            if slot.owner is None:
                slot.owner = ident
                return None
            waiter = _Waiter(ident, wake)
            slot.waiters.append(waiter)
            return waiter

    @contextmanager
    def _leaving_on_error(self, key: Hashable, waiter: _Waiter) -> Iterator[None]:
        """The ``with`` block waits for ``waiter``'s turn; when the wait ends with an
        error (a cancel, an interrupt), the waiter leaves the queue."""
        try:
            yield
        except BaseException:
            self._abandon(key, waiter)
            raise

    def _release(self, key: Hashable) -> None:
        """Hand the lock to the first live waiter, or free it."""
        with self._guard:
            slot = self._slots[key]
            slot.users -= 1
            while slot.waiters:
                waiter = slot.waiters.popleft()
                waiter.state = _GRANTED
                slot.owner = waiter.ident
                try:
                    waiter.wake()
                except RuntimeError:  # its event loop is closed: it will never run
                    waiter.state = _GONE
                    slot.users -= 1
                    continue
                return
            slot.owner = None
            if slot.users == 0:
                del self._slots[key]

    def _abandon(self, key: Hashable, waiter: _Waiter) -> None:
        """A waiter stopped waiting (cancelled, interrupted): leave, or pass the lock on."""
        with self._guard:
            granted = waiter.state == _GRANTED
            if not granted:
                waiter.state = _GONE
                slot = self._slots[key]
                slot.waiters.remove(waiter)
                slot.users -= 1
                if slot.users == 0:
                    del self._slots[key]
        if granted:  # handed over just before the wait ended: release it at once
            self._release(key)


__all__ = ["ThreadLocks"]

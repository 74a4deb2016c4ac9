"""One ordered background writer per memory: work that must not delay a reply.

A :class:`TurnWriter` is a queue of jobs run one at a time by a daemon thread.
Each :class:`~langmem_ext.Memory` owns one (:attr:`Memory.background
<langmem_ext.Memory.background>`): the graph hands it a turn's bookkeeping (hot log
lines, boosts, extraction), and the memory itself hands it the triples of new
memories. Guarantees:

- order: a memory's jobs run one at a time, in the order they were submitted;
- read-your-writes on request: :meth:`TurnWriter.wait` blocks until the jobs of a
  scope submitted so far have run (the graph's recall waits before it searches);
- nothing is dropped on a clean shutdown: :meth:`Memory.close
  <langmem_ext.Memory.close>` and interpreter exit wait for the queue;
- a failing job is logged and skipped; it never reaches the caller;
- work to look for when nothing is queued (:meth:`TurnWriter.when_idle`: the turns
  another process accepted and never extracted) runs between jobs, never beside one.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable

logger = logging.getLogger(__name__)

Job = Callable[[], object]

_live: weakref.WeakSet[TurnWriter] = weakref.WeakSet()
_live_lock = threading.Lock()


class TurnWriter:
    """An ordered queue of jobs run by one daemon thread, with per-scope waiting.

    The thread starts on the first :meth:`submit`.

    Args:
        name: The worker thread's name.
    """

    def __init__(self, name: str = "langmem-turn-writer") -> None:
        self.name = name
        self._queue: queue.SimpleQueue[tuple[str, Job, float] | None] = queue.SimpleQueue()
        self._pending: Counter[str] = Counter()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._carried: dict[tuple[str, str], str] = {}
        self._hurry = 0
        self._idle: tuple[Job, float] | None = None
        self._idle_due = 0.0
        with _live_lock:
            _live.add(self)

    def submit(self, scope: str, job: Job, *, defer: float = 0.0) -> None:
        """Queue ``job`` (run after every job submitted before it).

        Args:
            scope: Whose job (what :meth:`wait` waits for).
            job: The work.
            defer: Start no sooner than this many seconds from now, so a heavy job
                (a model call, an embedding) leaves the reply it follows the CPU
                to finish; a :meth:`wait` (the next turn's recall) starts it at once.

        After :meth:`close` the job runs at once in the caller's thread.
        """
        with self._cond:
            if self._closed:
                run_now = True
            else:
                run_now = False
                self._pending[scope] += 1
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                    self._thread.start()
        if run_now:
            self._call(job)
            return
        self._queue.put((scope, job, time.monotonic() + defer))

    def when_idle(self, job: Job | None, every: float = 60.0) -> None:
        """Run ``job`` on the writer's thread whenever nothing was queued for
        ``every`` seconds (``None``: stop). It starts the thread.

        Args:
            job: The work (one at a time with the queued jobs; its failure is logged).
            every: Seconds of an empty queue between two runs.
        """
        with self._cond:
            self._idle = None if job is None else (job, float(every))
            self._idle_due = time.monotonic() + float(every)
            if job is not None and self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()

    def _next(self) -> tuple[str, Job, float] | None:
        """The next queued job, running the idle job meanwhile when it is due."""
        while True:
            with self._cond:
                idle = self._idle
                due = self._idle_due
            if idle is None:
                return self._queue.get()
            try:
                return self._queue.get(timeout=max(due - time.monotonic(), 0.0))
            except queue.Empty:
                pass
            with self._cond:
                if self._idle is None:  # turned off meanwhile
                    continue
                job, every = self._idle
            self._call(job)
            with self._cond:
                self._idle_due = time.monotonic() + every

    def pending(self, scope: str | None = None) -> int:
        """Jobs queued or running (of ``scope``, or of every scope)."""
        with self._cond:
            return self._pending[scope] if scope is not None else sum(self._pending.values())

    def carry(self, scope: str, thread_id: str, text: str) -> None:
        """Keep ``text`` for the thread's next turn (see :meth:`take`)."""
        with self._cond:
            self._carried[(scope, thread_id)] = text

    def take(self, scope: str, thread_id: str) -> str | None:
        """What a job carried for this thread's turn, once (``None`` when nothing)."""
        with self._cond:
            return self._carried.pop((scope, thread_id), None)

    def wait(self, scope: str | None = None, timeout: float | None = None) -> bool:
        """Block until the jobs of ``scope`` (default: all) submitted so far have run.

        Returns:
            ``False`` when ``timeout`` seconds passed first.
        """
        if threading.current_thread() is self._thread:
            return True  # a job waiting for the queue it runs on would never return
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._hurry += 1  # deferred jobs start now
            self._cond.notify_all()
        try:
            return self._wait_until_done(scope, deadline)
        finally:
            with self._cond:
                self._hurry -= 1

    def _wait_until_done(self, scope: str | None, deadline: float | None) -> bool:
        with self._cond:
            while (self._pending[scope] if scope is not None else sum(self._pending.values())) > 0:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float | None = None) -> None:
        """Run what is queued, then stop the thread (later jobs run synchronously)."""
        self.wait(timeout=timeout)
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._idle = None
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout)

    @staticmethod
    def _call(job: Job) -> None:
        try:
            job()
        except Exception:  # a bookkeeping failure must not reach the conversation
            logger.exception("background turn write failed")

    def _run(self) -> None:
        while True:
            item = self._next()
            if item is None:
                return
            scope, job, start = item
            with self._cond:  # a deferred job: until its time, or until someone waits
                while not self._hurry and (left := start - time.monotonic()) > 0:
                    self._cond.wait(left)
            self._call(job)
            with self._cond:
                self._idle_due = time.monotonic() + (self._idle[1] if self._idle else 0.0)
                self._pending[scope] -= 1
                if self._pending[scope] <= 0:
                    del self._pending[scope]
                self._cond.notify_all()


@atexit.register
def _drain_at_exit() -> None:  # pragma: no cover - runs at interpreter exit
    with _live_lock:
        writers = list(_live)
    for writer in writers:
        writer.wait(timeout=10.0)


__all__ = ["Job", "TurnWriter"]

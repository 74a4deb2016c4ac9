"""Turn bookkeeping off the answer path: one ordered background writer per memory.

After the answer, a turn still has writes to make that the reply does not wait
for: its user / assistant messages go to the session hot log (a transcript line
fsynced, a ledger row) and the recalled memories the answer used are BOOSTed
(a durable ledger write). :func:`build_memory_graph` hands them to a
:class:`TurnWriter`, one worker thread per :class:`~langmem_ext.Memory`, which runs
them in submission order.

Guarantees:

- order: a memory's jobs run one at a time, in the order they were submitted;
- read-your-writes for the next turn: ``preflight_recall`` waits for the pending
  jobs of its scope before it searches, so a turn's recall always sees the previous
  turns' log events and boosts (in the same process);
- nothing is dropped on a clean shutdown: :meth:`Memory.close
  <langmem_ext.Memory.close>` and interpreter exit wait for the queue;
- a failing job is logged and skipped; it never reaches the conversation.

A process killed between the reply and the job loses that turn's log lines and
boosts (the conversation itself is in the checkpoint). Code that reads the hot log
or importances right after ``invoke`` from elsewhere (tests, an admin view) calls
:func:`flush_turn_writes` first.
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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langmem_ext.memory import Memory

logger = logging.getLogger(__name__)

Job = Callable[[], object]


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
            item = self._queue.get()
            if item is None:
                return
            scope, job, start = item
            with self._cond:  # a deferred job: until its time, or until someone waits
                while not self._hurry and (left := start - time.monotonic()) > 0:
                    self._cond.wait(left)
            self._call(job)
            with self._cond:
                self._pending[scope] -= 1
                if self._pending[scope] <= 0:
                    del self._pending[scope]
                self._cond.notify_all()


_writers: weakref.WeakKeyDictionary[Memory, TurnWriter] = weakref.WeakKeyDictionary()
_writers_lock = threading.Lock()


def turn_writer(memory: Memory) -> TurnWriter:
    """The background writer of ``memory`` (created on first use).

    It is drained when the memory closes and when the interpreter exits.
    """
    with _writers_lock:
        writer = _writers.get(memory)
        if writer is None:
            writer = TurnWriter()
            _writers[memory] = writer
            memory.on_close(writer.close)
        return writer


def flush_turn_writes(
    memory: Memory, *, scope: str | None = None, timeout: float | None = None
) -> bool:
    """Wait until the background turn writes of ``memory`` (one scope, or all) are done.

    Returns:
        ``False`` when ``timeout`` seconds passed first (``True`` when there is no writer).
    """
    with _writers_lock:
        writer = _writers.get(memory)
    return True if writer is None else writer.wait(scope, timeout)


@atexit.register
def _drain_at_exit() -> None:  # pragma: no cover - runs at interpreter exit
    with _writers_lock:
        writers = list(_writers.values())
    for writer in writers:
        writer.wait(timeout=10.0)


__all__ = ["TurnWriter", "flush_turn_writes", "turn_writer"]

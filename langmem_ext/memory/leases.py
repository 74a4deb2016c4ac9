"""A memory's background jobs run once per scope across the processes sharing a
workspace: each takes a lease (:class:`~langmem_ext.workspace.protocols.Leases`) first.

:class:`JobLeases` is one process's side of the workspace's leases: its holder name,
the lease time (``lifecycle.lease_seconds``) and :meth:`JobLeases.held`, which takes
the lease of a job of a scope, renews it while the job runs (every third of the lease
time, on a thread of its own) and releases it after.

The jobs that take one keep what they did in the ledger and re-read it under the
lease (``maintain`` its time, the day archive its days, decay its day per scope, the
knowledge graph its extracted memories), so a process that waited for another's
lease and then runs the job finds the work done; and when the holder died, its lease
runs out and the next process to run the job finishes it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.workspace.protocols import Leases

logger = logging.getLogger(__name__)

WHOLE_WORKSPACE = "*"
"""The scope of a lease of a job over every scope (``maintain``, the day archive)."""
EXTRACT_JOB = "extract"
"""Lease name of a turn's extraction (:meth:`Memory.extract <langmem_ext.Memory.extract>`)."""
POLL_S = 0.2
"""Seconds between two looks at a lease another process holds, while waiting for it."""


def holder_name() -> str:
    """A name for this process's leases, unique across machines and restarts."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class JobLeases:
    """One process's leases of background jobs.

    Args:
        leases: The workspace's leases.
        seconds: How long a lease lasts without renewal (``lifecycle.lease_seconds``).
        holder: This process's name (default: host, process id and a random part).

    Raises:
        InvalidInputError: ``seconds`` is not positive.
    """

    def __init__(self, leases: Leases, seconds: float, holder: str | None = None) -> None:
        if not seconds > 0:
            raise InvalidInputError(f"a lease lasts a positive number of seconds, not {seconds!r}")
        self.leases = leases
        self.seconds = float(seconds)
        self.holder = holder or holder_name()
        self._guard = threading.Lock()
        self._renewers: dict[tuple[str, str], tuple[threading.Event, int]] = {}

    @contextmanager
    def held(
        self,
        job: str,
        scope: str = WHOLE_WORKSPACE,
        *,
        wait: bool = True,
        cancel: threading.Event | None = None,
    ) -> Iterator[bool]:
        """Hold the lease of ``job`` in ``scope`` for the body of a ``with``.

        Args:
            job: The job's name.
            scope: Whose job (:data:`WHOLE_WORKSPACE` for one over every scope).
            wait: When another process holds it, wait until it is released or runs
                out (``False``: give up at once).
            cancel: Stops the wait when set.

        Yields:
            Whether the lease is held (``False``: another process holds it and
            ``wait`` was off, or ``cancel`` was set); the body runs the job only then.

        Threads of this process share the holder's name, so they hold a lease
        together: it is renewed while any of them is inside and released when the
        last one leaves.
        """
        key = (job, scope)
        with self._guard:  # a thread of this process holds it: join (and keep it)
            joined = key in self._renewers
            if joined:
                stop, inside = self._renewers[key]
                self._renewers[key] = (stop, inside + 1)
        if not joined:
            if not self._take(job, scope, wait, cancel):
                yield False
                return
            with self._guard:
                if key in self._renewers:  # another thread took it meanwhile
                    stop, inside = self._renewers[key]
                    self._renewers[key] = (stop, inside + 1)
                else:
                    stop = threading.Event()
                    self._renewers[key] = (stop, 1)
                    threading.Thread(
                        target=self._renew,
                        args=(job, scope, stop),
                        name=f"langmem-lease-{job}",
                        daemon=True,
                    ).start()
        try:
            yield True
        finally:
            with self._guard:  # released under the guard: a thread joining waits for it
                stop, inside = self._renewers[key]
                if inside == 1:
                    del self._renewers[key]
                    self._let_go(job, scope, stop)
                else:
                    self._renewers[key] = (stop, inside - 1)

    def _let_go(self, job: str, scope: str, stop: threading.Event) -> None:
        """Stop renewing and release the lease (the last thread of this process left)."""
        stop.set()
        try:
            self.leases.release(job, scope, self.holder)
        except Exception:  # the lease runs out by itself
            logger.warning("releasing the %s lease of %s failed", job, scope, exc_info=True)

    def _take(self, job: str, scope: str, wait: bool, cancel: threading.Event | None) -> bool:
        while not self.leases.acquire(job, scope, self.holder, self.seconds):
            if not wait:
                logger.info("%s of %s skipped: another process holds its lease", job, scope)
                return False
            if cancel is not None and cancel.is_set():
                return False
            time.sleep(POLL_S)
        return True

    def _renew(self, job: str, scope: str, stop: threading.Event) -> None:
        while not stop.wait(self.seconds / 3):
            try:
                kept = self.leases.renew(job, scope, self.holder, self.seconds)
            except Exception:  # a database hiccup: try again at the next tick
                logger.warning("renewing the %s lease of %s failed", job, scope, exc_info=True)
                continue
            if not kept:
                logger.warning(
                    "the %s lease of %s ran out while the job ran; another process may run it",
                    job,
                    scope,
                )
                return


__all__ = ["EXTRACT_JOB", "POLL_S", "WHOLE_WORKSPACE", "JobLeases", "holder_name"]

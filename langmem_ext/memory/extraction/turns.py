"""Turns waiting for extraction, kept in the ledger until they are extracted.

A turn the graph or the middleware hands to extraction is written to the ledger's
``turn_jobs`` (:class:`~langmem_ext.workspace.records.TurnJobRepository`) before the
reply returns, claimed by the process that accepted it for one lease time
(``lifecycle.lease_seconds``); the background writer extracts it and deletes the
row. A process that dies first leaves the row: once its claim runs out, any
process sharing the workspace claims it and extracts it — at start, on the daily
pass (:class:`~langmem_ext.memory.lifecycle.jobs.DailyJobs`) and whenever its
background writer has been idle for a lease time.

Exactly once in effect: a claim is atomic (one process gets a job), and a turn is
extracted under the scope's ``extract`` lease, claimed again there, so two
processes never extract one turn side by side. A process that dies after the
extraction's writes and before the row's deletion leaves the turn to be extracted
again; the extractor neither proposes a fact proposed or stored before nor adds
(``direct`` mode) one stored before (see
:mod:`~langmem_ext.memory.extraction.extractor`), so the second run adds nothing.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    HumanMessage,
    MessageLikeRepresentation,
    messages_from_dict,
    messages_to_dict,
)

from langmem_ext.memory.extraction.extractor import ExtractionReport, as_messages
from langmem_ext.memory.leases import EXTRACT_JOB
from langmem_ext.workspace.records import TurnJob, TurnJobRepository

if TYPE_CHECKING:
    from langmem_ext.memory.leases import JobLeases
    from langmem_ext.workspace.store import Workspace

logger = logging.getLogger(__name__)

TURNS = "turn-jobs"
"""The background writer's name for the work of picking up other processes' turns."""


class TurnHost(Protocol):
    """What a :class:`TurnQueue` uses of its memory
    (:class:`~langmem_ext.memory.service.Memory` is one)."""

    workspace: Workspace
    leases: JobLeases

    def extract(
        self,
        messages: str | Sequence[MessageLikeRepresentation],
        *,
        scope: str | None = None,
        model: BaseChatModel | None = None,
        recalled: Sequence[tuple[str, str]] | None = None,
        at: float | None = None,
        thread_id: str | None = None,
    ) -> ExtractionReport:
        """Update long-term memory from the last turn of a conversation."""
        ...


class TurnQueue:
    """A memory's side of the ledger's turns waiting for extraction.

    Args:
        memory: The memory whose turns are extracted (its ledger, leases and
            :meth:`~langmem_ext.Memory.extract`).
    """

    def __init__(self, memory: TurnHost) -> None:
        self._memory = memory

    @property
    def _jobs(self) -> TurnJobRepository:
        return self._memory.workspace.ledger.turn_jobs

    def accept(
        self,
        messages: str | Sequence[MessageLikeRepresentation],
        *,
        scope: str,
        model: BaseChatModel | None = None,
        recalled: Sequence[tuple[str, str]] | None = None,
        at: float | None = None,
        thread_id: str | None = None,
    ) -> Callable[[], ExtractionReport | None]:
        """Write the turn to the ledger (claimed by this process) and return its
        extraction, for the caller's background writer.

        Args:
            messages: The conversation; its last user message and what follows are kept.
            scope: Whose memory.
            model: The chat model this process extracts with (a process picking the
                turn up after this one died uses its memory's ``extraction_model``).
            recalled: The memories recalled for the turn, ``(id, text)``.
            at: When the turn happened (default now).
            thread_id: The conversation of the turn.

        Returns:
            The extraction of the turn (see :meth:`run`).

        Raises:
            InvalidMessagesError: ``messages`` is no conversation LangChain reads.
        """
        conversation = as_messages(messages)
        start = max(
            (i for i, m in enumerate(conversation) if isinstance(m, HumanMessage)), default=0
        )
        leases = self._memory.leases
        job = TurnJob(
            id=f"t-{secrets.token_hex(8)}",
            scope=scope,
            thread_id=thread_id,
            messages=json.dumps(messages_to_dict(conversation[start:]), ensure_ascii=False),
            recalled=None if recalled is None else json.dumps([list(r) for r in recalled]),
            at=time.time() if at is None else float(at),
            created_at=time.time(),
        )
        self._jobs.add(job, holder=leases.holder, seconds=leases.seconds)
        return lambda: self.run(job.id, job.scope, model)

    def run(
        self, job_id: str, scope: str, model: BaseChatModel | None = None
    ) -> ExtractionReport | None:
        """Extract one turn of the ledger under the scope's ``extract`` lease, then
        delete it.

        Returns:
            What the extraction did; ``None`` when another process holds the turn or
            extracted it already.
        """
        leases = self._memory.leases
        with leases.held(EXTRACT_JOB, scope):
            job = self._jobs.claim(job_id, leases.holder, leases.seconds)
            if job is None:
                return None
            return self._extract(job, model)

    def recover(self, limit: int | None = None) -> int:
        """Extract the turns nobody holds: their process died, or never ran them.

        Args:
            limit: Turns at the most (default: until none is left).

        Returns:
            How many turns were extracted.
        """
        leases = self._memory.leases
        done = 0
        while limit is None or done < limit:
            job = self._jobs.claim_next(leases.holder, leases.seconds)
            if job is None:
                break
            with leases.held(
                EXTRACT_JOB, job.scope
            ):  # then claimed again: the lease may have waited
                if self._jobs.claim(job.id, leases.holder, leases.seconds) is None:
                    continue
                logger.info("extracting turn %s of %s left by another process", job.id, job.scope)
                self._extract(job, None)
            done += 1
        return done

    def waiting(self, scope: str | None = None) -> int:
        """Turns waiting for extraction or being extracted (of ``scope``, or all)."""
        return int(self._jobs.count(scope))

    def _extract(self, job: TurnJob, model: BaseChatModel | None) -> ExtractionReport | None:
        """Extract a claimed turn and delete it; a turn whose extraction fails is
        logged and deleted too (it would fail again on every pick-up)."""
        memory = self._memory
        report: ExtractionReport | None = None
        try:
            report = memory.extract(
                messages_from_dict(json.loads(job.messages)),
                scope=job.scope,
                model=model,
                recalled=None
                if job.recalled is None
                else [(str(i), str(t)) for i, t in json.loads(job.recalled)],
                at=job.at,
                thread_id=job.thread_id,
            )
            logger.debug("turn extraction: %s", report)
        except Exception:
            logger.exception("extraction of turn %s of %s failed", job.id, job.scope)
        self._jobs.done(job.id, memory.leases.holder)
        return report


__all__ = ["TURNS", "TurnHost", "TurnQueue"]

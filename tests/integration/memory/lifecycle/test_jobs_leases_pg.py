"""The daily jobs of replicas on one PostgreSQL database run once: each pass holds the
job's lease, and a replica killed mid-job leaves the job to another after the lease
runs out (real PostgreSQL, real embedder, a real process killed with SIGKILL)."""

from __future__ import annotations

import textwrap
import threading
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _process_helpers import killed_after
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langmem_ext import Memory, Settings
from langmem_ext.memory.lifecycle.jobs import (
    ARCHIVE_KEY,
    MAINTAIN_JOB,
    DailyJobs,
    JobsRun,
)
from langmem_ext.memory.lifecycle.maintenance import MAINTAIN_AT_KEY
from langmem_ext.memory.sessions.log import SessionLog

LEASE_S = 5.0
"""Long enough that a renewal late by a loaded machine's scheduling never lets the lease lapse
under a live replica; short enough to wait out in a test."""


class SlowSummaries(BaseChatModel):
    """A chat model that answers every call with one summary, slowly, counting calls."""

    delay: float = 0.4
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "slow-summaries"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls += 1
        time.sleep(self.delay)
        message = AIMessage(content="The user planned a trip to Lisbon and booked a hotel.")
        return ChatResult(generations=[ChatGeneration(message=message)])


def _settings(root: Path, url: str) -> Settings:
    return Settings(workspace=root, database_url=url, lifecycle={"lease_seconds": LEASE_S})


def _yesterday() -> date:
    return date.fromtimestamp(time.time()) - timedelta(days=1)


def _talk(memory: Memory, day: date) -> None:
    noon = datetime.combine(day, datetime.min.time()).replace(hour=12).timestamp()
    log = SessionLog(memory)
    log.append("main", "t1", "user", "I am planning a trip to Lisbon next month.", at=noon)
    log.append("main", "t1", "assistant", "Lovely, Lisbon is great in spring.", at=noon + 5)


def _day_episodes(memory: Memory, day: date) -> list[str]:
    header = f"Day {day.isoformat()} (main), summary"
    return [
        e.id for e in memory.list(scope="main", category="episode") if e.text.startswith(header)
    ]


@pytest.fixture
def replicas(tmp_path: Path, pg_vector_url: str) -> Iterator[tuple[Memory, Memory]]:
    a = Memory(settings=_settings(tmp_path / "a", pg_vector_url))
    b = Memory(settings=_settings(tmp_path / "b", pg_vector_url))
    yield a, b
    a.close()
    b.close()


def test_two_replicas_running_the_daily_jobs_at_once_run_them_once(
    replicas: tuple[Memory, Memory],
) -> None:
    a, b = replicas
    day = _yesterday()
    _talk(a, day)
    models = [SlowSummaries(), SlowSummaries()]
    jobs = [DailyJobs(a, model=models[0]), DailyJobs(b, model=models[1])]
    runs: list[JobsRun] = []
    start = threading.Barrier(2)

    def run(i: int) -> None:
        start.wait()
        runs.append(jobs[i].run_due())

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(runs) == 2 and not any(r.errors for r in runs)
    assert sum(r.maintenance is not None for r in runs) == 1  # maintain ran once
    assert sum(len(r.archived) for r in runs) == 1  # one day episode, by one replica
    assert len(_day_episodes(a, day)) == 1
    assert (models[0].calls == 0) != (models[1].calls == 0)  # one replica's model summarised
    texts = [p.text for p in a.list_pending(scope="main")]
    assert len(texts) == len(set(texts))  # the flush proposed nothing twice
    assert a.workspace.leases.holder(MAINTAIN_JOB, "*") is None  # released


_KILLED_REPLICA = textwrap.dedent(
    """
    import sys, time
    from typing import Any
    from langchain_core.language_models import BaseChatModel
    from langchain_core.outputs import ChatResult
    from langmem_ext import Memory, Settings
    from langmem_ext.memory.lifecycle.jobs import DailyJobs

    class Stuck(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "stuck"

        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatResult:
            print("in-job", flush=True)  # the archive's summary: the job is half done
            time.sleep(600)
            raise AssertionError("not killed")

    root, url, lease = sys.argv[1], sys.argv[2], float(sys.argv[3])
    memory = Memory(settings=Settings(
        workspace=root, database_url=url, lifecycle={"lease_seconds": lease}
    ))
    DailyJobs(memory, model=Stuck()).run_due()
    """
)


def test_a_replica_killed_mid_job_leaves_it_to_another_after_the_lease(
    tmp_path: Path, replicas: tuple[Memory, Memory], pg_vector_url: str
) -> None:
    a, _b = replicas
    day = _yesterday()
    _talk(a, day)
    with killed_after(_KILLED_REPLICA, str(tmp_path / "c"), pg_vector_url, str(LEASE_S)) as line:
        assert line.strip() == "in-job", f"the replica did not reach the job ({line!r})"
        assert a.workspace.leases.holder(MAINTAIN_JOB, "*") is not None
        time.sleep(LEASE_S)  # it keeps renewing while alive
        assert a.workspace.leases.holder(MAINTAIN_JOB, "*") is not None
    assert a.workspace.leases.holder(MAINTAIN_JOB, "*") is not None  # dead, not yet run out
    meta = a.workspace.ledger.meta
    assert meta.get(MAINTAIN_AT_KEY) is not None  # maintain ran, the archive did not end
    assert meta.get(ARCHIVE_KEY.format(scope="main", day=day.isoformat())) is None
    assert _day_episodes(a, day) == []

    started = time.monotonic()
    run = DailyJobs(a, model=SlowSummaries(delay=0.0)).run_due()
    waited = time.monotonic() - started
    assert not run.errors
    assert run.maintenance is None  # done by the killed replica before it died
    assert [e.scope for e in run.archived] == ["main"]  # its unfinished archive, finished
    assert _day_episodes(a, day) == [run.archived[0].entry_id]
    assert meta.get(ARCHIVE_KEY.format(scope="main", day=day.isoformat())) is not None
    assert waited < LEASE_S + 30

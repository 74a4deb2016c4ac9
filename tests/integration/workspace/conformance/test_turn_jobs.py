"""The turns waiting for extraction, through
:class:`~langmem_ext.workspace.records.TurnJobRepository` only: one claimant per turn
among every opening of the workspace's storage, a claim nobody renews runs out and
moves, and only the claimant deletes a turn."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from langmem_ext.workspace.engines import Engines
from langmem_ext.workspace.records import TurnJob, TurnJobRepository


def _job(job_id: str, scope: str = "main", created_at: float = 1.0) -> TurnJob:
    return TurnJob(
        id=job_id,
        scope=scope,
        thread_id="t1",
        messages='[{"type": "human", "data": {"content": "我住在青岛"}}]',
        recalled='[["m-1", "User lives in Qingdao"]]',
        at=1_700_000_000.5,
        created_at=created_at,
    )


def _two(open_engines: Callable[..., Engines]) -> tuple[TurnJobRepository, TurnJobRepository]:
    return open_engines().ledger.turn_jobs, open_engines().ledger.turn_jobs


def test_a_turn_is_kept_as_written_and_claimed_by_one_holder(
    open_engines: Callable[..., Engines],
) -> None:
    a, b = _two(open_engines)
    a.add(_job("t-1"), holder="replica-a", seconds=30)
    assert b.count() == 1 and b.count("main") == 1 and b.count("u1") == 0
    assert b.claim("t-1", "replica-b", 30) is None  # replica-a holds it
    assert b.claim_next("replica-b", 30) is None
    job = a.claim("t-1", "replica-a", 30)  # its own: renewed
    assert job is not None
    assert (job.id, job.scope, job.thread_id, job.at, job.claimed_by) == (
        "t-1", "main", "t1", 1_700_000_000.5, "replica-a"
    )  # fmt: skip
    assert job.messages == _job("t-1").messages and job.recalled == _job("t-1").recalled
    assert not b.done("t-1", "replica-b")
    assert a.done("t-1", "replica-a")
    assert b.count() == 0 and a.claim("t-1", "replica-a", 30) is None  # gone


def test_the_oldest_free_turn_is_claimed_first(open_engines: Callable[..., Engines]) -> None:
    a, b = _two(open_engines)
    a.add(_job("t-late", created_at=3.0))
    a.add(_job("t-held", created_at=1.0), holder="replica-a", seconds=30)
    a.add(_job("t-early", scope="u1", created_at=2.0))
    first, second = b.claim_next("replica-b", 30), b.claim_next("replica-b", 30)
    assert first is not None and second is not None
    assert (first.id, second.id) == ("t-early", "t-late")
    assert b.claim_next("replica-b", 30) is None


def test_a_claim_nobody_renews_runs_out_and_moves(open_engines: Callable[..., Engines]) -> None:
    a, b = _two(open_engines)
    a.add(_job("t-1"), holder="replica-a", seconds=0.3)
    assert b.claim_next("replica-b", 30) is None
    time.sleep(0.5)  # replica-a died
    job = b.claim_next("replica-b", 30)
    assert job is not None and job.claimed_by == "replica-b"
    assert a.claim("t-1", "replica-a", 30) is None  # it lost the turn
    assert not a.done("t-1", "replica-a")
    assert b.done("t-1", "replica-b")


def test_racing_openings_claim_each_turn_once(open_engines: Callable[..., Engines]) -> None:
    repos = [open_engines().ledger.turn_jobs for _ in range(4)]
    for i in range(12):
        repos[0].add(_job(f"t-{i:02d}", created_at=float(i)))
    got: list[list[str]] = [[] for _ in repos]
    start = threading.Barrier(len(repos))

    def race(i: int) -> None:
        start.wait()
        while (job := repos[i].claim_next(f"replica-{i}", 30)) is not None:
            got[i].append(job.id)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(repos))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    claimed = [job_id for ids in got for job_id in ids]
    assert sorted(claimed) == [f"t-{i:02d}" for i in range(12)]  # each once


def test_a_turn_written_in_a_rolled_back_transaction_is_not_kept(
    open_engines: Callable[..., Engines],
) -> None:
    ledger = open_engines().ledger
    try:
        with ledger.transaction():
            ledger.turn_jobs.add(_job("t-1"))
            raise RuntimeError("the turn's own write failed")
    except RuntimeError:
        pass
    assert ledger.turn_jobs.count() == 0
    with ledger.transaction():
        ledger.turn_jobs.add(_job("t-2"))
    assert ledger.turn_jobs.count() == 1

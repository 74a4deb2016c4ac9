"""A turn handed to extraction survives the process that accepted it: it is in the
ledger before the reply returns, and a process killed (SIGKILL) before extracting it
leaves it to another memory on the same folder or PostgreSQL database, which extracts
it once its claim runs out; its proposal is made exactly once."""

from __future__ import annotations

import textwrap
import threading
import time
from pathlib import Path

import pytest
from _process_helpers import killed_after
from langchain_core.messages import AIMessage, HumanMessage

from langmem_ext import Memory, Settings
from langmem_ext.memory.leases import EXTRACT_JOB

LEASE_S = 1.0
"""The lease of the memories that pick left turns up: their writers look every second."""
CLAIM_S = 8.0
"""The lease of the process that accepts the turn and dies: its claim outlives the time
another memory takes to open on a loaded machine, so that memory sees the turn waiting."""
FACT = "我住在青岛"

_ACCEPTING_PROCESS = textwrap.dedent(
    """
    import sys, threading, time
    from langchain_core.messages import AIMessage, HumanMessage
    from langmem_ext import Memory, Settings
    from langmem_ext.middleware import MemoryMiddleware

    root, url, lease = sys.argv[1], sys.argv[2] or None, float(sys.argv[3])
    memory = Memory(settings=Settings(
        workspace=root, database_url=url, lifecycle={"lease_seconds": lease}
    ))
    memory.background.submit("main", threading.Event().wait)  # the writer is busy
    state = {"messages": [HumanMessage(sys.argv[4]), AIMessage("好的")]}
    MemoryMiddleware(memory).after_agent(state, None)  # the run returns: the turn is queued
    print("accepted", memory.turns.waiting(), flush=True)
    time.sleep(600)
    """
)


def _settings(root: Path, url: str | None, lease: float = LEASE_S) -> Settings:
    """Settings of a memory whose writer looks for left turns every ``lease`` seconds."""
    return Settings(workspace=root, database_url=url, lifecycle={"lease_seconds": lease})


def _proposals(memory: Memory) -> list[str]:
    return [p.text for p in memory.list_pending(scope="main")]


def _kill_after_accepting(root: Path, url: str | None) -> None:
    args = (str(root), url or "", str(CLAIM_S), FACT)
    with killed_after(_ACCEPTING_PROCESS, *args) as line:
        assert line.split() == ["accepted", "1"], f"the process did not accept the turn ({line!r})"


@pytest.fixture(params=["embedded", "postgresql"])
def database(request: pytest.FixtureRequest) -> str | None:
    """No URL (the folder's SQLite ledger), or a fresh PostgreSQL database."""
    if request.param == "embedded":
        return None
    url: str = request.getfixturevalue("pg_vector_url")
    return url


def test_a_turn_accepted_by_a_killed_process_is_extracted_by_another_once(
    tmp_path: Path, database: str | None
) -> None:
    root = tmp_path / "ws"  # on PostgreSQL each process has a folder of its own
    _kill_after_accepting(root / "a" if database else root, database)
    with Memory(settings=_settings(root / "b" if database else root, database)) as other:
        assert other.turns.waiting() == 1  # the dead process's turn, not extracted
        assert _proposals(other) == []
        deadline = time.monotonic() + 60
        while other.turns.waiting() and time.monotonic() < deadline:
            time.sleep(0.1)  # its writer picks the turn up once the claim runs out
        assert other.turns.waiting() == 0
        assert other.background.wait(timeout=30)
        assert _proposals(other) == [FACT]
        assert other.turns.recover() == 0  # nothing left, nothing proposed again
        assert _proposals(other) == [FACT]


def test_processes_racing_for_left_turns_extract_each_once(
    tmp_path: Path, database: str | None
) -> None:
    root = tmp_path / "ws"
    roots = (root / "a", root / "b") if database else (root, root)
    with (  # long leases: their writers stay out of the race
        Memory(settings=_settings(roots[0], database, 600)) as a,
        Memory(settings=_settings(roots[1], database, 600)) as b,
    ):
        facts = ["我住在青岛", "我叫小林", "我喜欢喝乌龙茶"]
        for fact in facts:  # accepted by a process that died: claimed by nobody
            a.turns.accept([HumanMessage(fact), AIMessage("好的")], scope="main")
        jobs = a.workspace.ledger.turn_jobs
        with a.workspace.ledger.transaction() as conn:  # its claims: released
            conn.execute("UPDATE turn_jobs SET claimed_by = NULL, claimed_until = NULL")
        assert jobs.count() == 3
        done: list[int] = []
        start = threading.Barrier(2)

        def pick_up(memory: Memory) -> None:
            start.wait()
            done.append(memory.turns.recover())

        threads = [threading.Thread(target=pick_up, args=(m,)) for m in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert sorted(done) in ([0, 3], [1, 2]) and sum(done) == 3
        assert jobs.count() == 0
        assert sorted(_proposals(a)) == sorted(facts)


def test_a_turn_another_process_holds_is_left_to_it(tmp_path: Path) -> None:
    with Memory(settings=_settings(tmp_path / "ws", None, 600)) as memory:
        run = memory.turns.accept([HumanMessage(FACT), AIMessage("好的")], scope="main")
        jobs = memory.workspace.ledger.turn_jobs
        [job_id] = [r[0] for r in memory.workspace.ledger.query("SELECT id FROM turn_jobs")]
        assert jobs.claim(job_id, "other-process", 30) is None  # this process holds it
        assert memory.turns.recover() == 0  # held: nobody else's to pick up
        assert run() is not None
        assert jobs.count() == 0 and _proposals(memory) == [FACT]
        assert run() is None  # extracted and deleted: a second run does nothing
        assert memory.workspace.leases.holder(EXTRACT_JOB, "main") is None

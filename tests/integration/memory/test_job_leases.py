"""A memory's job leases on the embedded workspace (SQLite ``state.db``): held for the
body of a ``with``, renewed while a long job runs, waited for or skipped when another
process holds them, taken over when their holder stopped renewing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmem_ext import Memory, Settings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.memory.leases import JobLeases
from langmem_ext.memory.lifecycle.operations import DECAY_JOB, catch_up_on_open, decay_due


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    s = Settings(workspace=tmp_path / "ws", lifecycle={"lease_seconds": 0.3})
    s.embeddings.provider = "fake"
    mem = Memory(settings=s)
    yield mem
    mem.close()


def test_a_lease_is_renewed_while_the_job_runs_and_released_after(memory: Memory) -> None:
    other = JobLeases(memory.workspace.leases, 30.0, holder="other")
    with memory.leases.held("maintain") as held:
        assert held
        time.sleep(1.0)  # three lease times: only renewal keeps it
        assert memory.workspace.leases.holder("maintain", "*") == memory.leases.holder
        with other.held("maintain", wait=False) as taken:
            assert not taken
    assert memory.workspace.leases.holder("maintain", "*") is None
    with other.held("maintain", wait=False) as taken:
        assert taken


def test_a_waiting_job_runs_once_the_holder_releases(memory: Memory) -> None:
    other = JobLeases(memory.workspace.leases, 30.0, holder="other")
    order: list[str] = []
    inside = threading.Event()

    def first() -> None:
        with other.held("extract", "main"):
            inside.set()
            time.sleep(0.5)
            order.append("first")

    thread = threading.Thread(target=first)
    thread.start()
    assert inside.wait(10)
    with memory.leases.held("extract", "main") as held:
        order.append("second")
    thread.join()
    assert held and order == ["first", "second"]


def test_a_dead_holders_lease_is_taken_over_when_it_runs_out(memory: Memory) -> None:
    assert memory.workspace.leases.acquire("knowledge", "main", "dead-process", 0.5)
    started = time.monotonic()
    with memory.leases.held("knowledge", "main", wait=False) as held:
        assert not held
    with memory.leases.held("knowledge", "main") as held:
        assert held
    assert time.monotonic() - started >= 0.3


def test_a_wait_stops_when_cancelled(memory: Memory) -> None:
    assert memory.workspace.leases.acquire("idle", "*", "other", 30)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    with memory.leases.held("idle", cancel=cancel) as held:
        assert not held
    assert memory.workspace.leases.holder("idle", "*") == "other"


def test_a_lease_time_must_be_positive(memory: Memory) -> None:
    with pytest.raises(InvalidInputError):
        JobLeases(memory.workspace.leases, 0.0)
    with pytest.raises(ValueError):
        Settings(lifecycle={"lease_seconds": -1})


def test_decay_on_open_leaves_the_decay_to_the_process_holding_its_lease(memory: Memory) -> None:
    memory.add("User likes green tea")
    assert decay_due(memory)
    assert memory.workspace.leases.acquire(DECAY_JOB, "*", "other", 30)
    assert catch_up_on_open(memory) is None  # the other process decays
    assert decay_due(memory)
    memory.workspace.leases.release(DECAY_JOB, "*", "other")
    assert catch_up_on_open(memory) == []  # nothing idle long enough; the run is recorded
    assert not decay_due(memory)


def test_threads_of_one_process_hold_a_lease_together(memory: Memory) -> None:
    other = JobLeases(memory.workspace.leases, 30.0, holder="other")
    first_in, second_out = threading.Event(), threading.Event()
    taken_by_other: list[bool] = []

    def first() -> None:
        with memory.leases.held("extract", "main"):
            first_in.set()
            assert second_out.wait(10)
            time.sleep(0.5)  # the second thread left: the lease is still this process's
            with other.held("extract", "main", wait=False) as taken:
                taken_by_other.append(taken)

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(10)
    with memory.leases.held("extract", "main") as held:
        assert held
    second_out.set()
    thread.join()
    assert taken_by_other == [False]
    assert memory.workspace.leases.holder("extract", "main") is None  # the last one released

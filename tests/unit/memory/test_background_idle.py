"""The background writer's idle work runs only while nothing is queued, between jobs,
and stops when the writer closes."""

from __future__ import annotations

import threading
import time

from langmem_ext.memory.background import TurnWriter


def test_idle_work_runs_when_nothing_is_queued_and_never_beside_a_job() -> None:
    writer = TurnWriter()
    log: list[str] = []
    busy = threading.Event()

    def job() -> None:
        busy.set()
        time.sleep(0.3)
        log.append("job")
        busy.clear()

    def idle() -> None:
        log.append("idle-during-job" if busy.is_set() else "idle")

    writer.when_idle(idle, every=0.05)
    deadline = time.monotonic() + 10
    while "idle" not in log and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "idle" in log  # the thread started for it, with nothing queued
    writer.submit("main", job)
    assert writer.wait("main", timeout=10)
    assert "idle-during-job" not in log and "job" in log
    writer.close(timeout=10)
    seen = len(log)
    time.sleep(0.2)
    assert len(log) == seen  # closed: no idle work after


def test_idle_work_can_be_turned_off() -> None:
    writer = TurnWriter()
    runs: list[float] = []
    writer.when_idle(lambda: runs.append(time.monotonic()), every=0.05)
    deadline = time.monotonic() + 10
    while not runs and time.monotonic() < deadline:
        time.sleep(0.01)
    writer.when_idle(None)
    seen = len(runs)
    time.sleep(0.3)
    assert runs and len(runs) == seen
    writer.close(timeout=10)

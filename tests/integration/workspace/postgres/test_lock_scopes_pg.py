"""On PostgreSQL the writes of two scopes run at once: each holds its scope's
advisory lock and the workspace's lock shared, so one scope's writer completes while
another scope's holds its lock, across threads and across openings (replicas)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from langmem_ext.workspace.engines import engines_from_url

MODEL = "lock-scopes"


@pytest.mark.parametrize("across", [False, True], ids=["threads", "openings"])
def test_writers_of_two_scopes_proceed_at_once(
    tmp_path: Path, pg_vector_url: str, across: bool
) -> None:
    first = engines_from_url(pg_vector_url, root=tmp_path / "a", model_name=MODEL, lock_timeout=5)
    second = (
        engines_from_url(pg_vector_url, root=tmp_path / "b", model_name=MODEL, lock_timeout=5)
        if across
        else first
    )
    try:
        held, release = threading.Event(), threading.Event()

        def holder() -> None:
            with first.lock.hold_scope("u1"):
                held.set()
                release.wait(30)

        thread = threading.Thread(target=holder)
        thread.start()
        assert held.wait(10)
        done = threading.Event()

        def other_scope() -> None:
            with second.lock.hold_scope("u2"):
                done.set()

        writer = threading.Thread(target=other_scope)
        writer.start()
        completed = done.wait(10)  # while u1's lock is held
        release.set()
        thread.join()
        writer.join()
        assert completed
    finally:
        first.close()
        if across:
            second.close()

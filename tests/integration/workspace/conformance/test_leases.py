"""The job leases' contract, through :class:`~langmem_ext.workspace.protocols.Leases`
only: one holder per job and scope among every opening of the workspace's storage,
a lease nobody renews runs out and moves."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.workspace.engines import Engines
from langmem_ext.workspace.protocols import Leases


def _two(open_engines: Callable[..., Engines]) -> tuple[Leases, Leases]:
    return open_engines().leases, open_engines().leases


def test_one_holder_at_a_time_per_job_and_scope(open_engines: Callable[..., Engines]) -> None:
    a, b = _two(open_engines)
    assert isinstance(a, Leases)
    assert a.acquire("extract", "main", "replica-a", 30)
    assert not b.acquire("extract", "main", "replica-b", 30)
    assert b.acquire("extract", "u1", "replica-b", 30)  # another scope
    assert b.acquire("decay", "main", "replica-b", 30)  # another job
    assert a.acquire("extract", "main", "replica-a", 30)  # its own: renewed
    assert b.holder("extract", "main") == "replica-a"
    assert not b.release("extract", "main", "replica-b")
    assert a.release("extract", "main", "replica-a")
    assert a.holder("extract", "main") is None
    assert b.acquire("extract", "main", "replica-b", 30)


def test_a_lease_nobody_renews_runs_out_and_moves(open_engines: Callable[..., Engines]) -> None:
    a, b = _two(open_engines)
    assert a.acquire("maintain", "*", "replica-a", 0.3)
    assert a.renew("maintain", "*", "replica-a", 0.3)
    assert not b.acquire("maintain", "*", "replica-b", 30)
    time.sleep(0.5)  # replica-a died: it never renews
    assert b.holder("maintain", "*") is None
    assert b.acquire("maintain", "*", "replica-b", 30)
    assert not a.renew("maintain", "*", "replica-a", 30)  # it must stop
    assert b.renew("maintain", "*", "replica-b", 30)
    assert a.holder("maintain", "*") == "replica-b"


def test_racing_openings_get_one_lease(open_engines: Callable[..., Engines]) -> None:
    leases = [open_engines().leases for _ in range(4)]
    won: list[int] = []
    start = threading.Barrier(len(leases))

    def race(i: int) -> None:
        start.wait()
        if leases[i].acquire("knowledge", "main", f"replica-{i}", 30):
            won.append(i)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(leases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1


@pytest.mark.parametrize(
    "args", [("", "main", "r", 1.0), ("job", "", "r", 1.0), ("job", "main", "r", 0.0)]
)
def test_bad_leases_are_refused(engines: Engines, args: tuple[str, str, str, float]) -> None:
    with pytest.raises(InvalidInputError):
        engines.leases.acquire(*args)
    with pytest.raises(InvalidInputError):
        engines.leases.renew(*args)
    assert engines.leases.holder("job", "main") is None

"""Job leases in the database: one replica runs a scope's job; a dead one's lease runs
out and another takes the job over."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.leases import PgLeases


@pytest.fixture
def two_replicas(pg_url: str) -> Iterator[tuple[PgLeases, PgLeases]]:
    a, b = PgConnections(pg_url), PgConnections(pg_url)
    yield PgLeases(a), PgLeases(b)
    a.close()
    b.close()


def test_one_holder_at_a_time_per_job_and_scope(two_replicas: tuple[PgLeases, PgLeases]) -> None:
    a, b = two_replicas
    assert a.acquire("extraction", "main", "replica-a", 30)
    assert not b.acquire("extraction", "main", "replica-b", 30)
    assert b.acquire("extraction", "u1", "replica-b", 30)  # another scope
    assert b.acquire("decay", "main", "replica-b", 30)  # another job
    assert a.acquire("extraction", "main", "replica-a", 30)  # its own: renewed
    assert b.holder("extraction", "main") == "replica-a"
    assert not b.release("extraction", "main", "replica-b")
    assert a.release("extraction", "main", "replica-a")
    assert b.acquire("extraction", "main", "replica-b", 30)


def test_a_lease_left_by_a_dead_replica_runs_out_and_moves(
    two_replicas: tuple[PgLeases, PgLeases],
) -> None:
    a, b = two_replicas
    assert a.acquire("daily", "main", "replica-a", 0.3)
    assert not b.acquire("daily", "main", "replica-b", 30)
    time.sleep(0.5)  # replica-a died: it never renews
    assert a.holder("daily", "main") is None
    assert b.acquire("daily", "main", "replica-b", 30)
    assert not a.renew("daily", "main", "replica-a", 30)  # it must stop
    assert b.renew("daily", "main", "replica-b", 30)


def test_racing_replicas_get_one_lease(pg_url: str) -> None:
    dbs = [PgConnections(pg_url, max_size=2) for _ in range(6)]
    leases = [PgLeases(db) for db in dbs]
    won: list[int] = []
    start = threading.Barrier(len(leases))

    def race(i: int) -> None:
        start.wait()
        if leases[i].acquire("extraction", "main", f"replica-{i}", 30):
            won.append(i)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(leases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for db in dbs:
        db.close()
    assert len(won) == 1


def test_bad_leases_are_refused(two_replicas: tuple[PgLeases, PgLeases]) -> None:
    a, _b = two_replicas
    for args in (("", "main", "r", 1.0), ("job", "main", "r", 0.0), ("job", "main", "r", -1.0)):
        with pytest.raises(InvalidInputError):
            a.acquire(*args)

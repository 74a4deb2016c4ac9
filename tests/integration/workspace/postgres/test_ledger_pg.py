"""The ledger's repository tests, run on the PostgreSQL ledger.

The tests are those of the SQLite ledger (imported, not copied): the ``ledger`` and
``other`` fixtures below give them a :class:`PgLedger` and a second one on the same
database instead. Only a test of SQLite's query planner is left out.
"""

from __future__ import annotations

from collections.abc import Iterator

import integration.workspace.test_ledger_repositories as sqlite_tests  # type: ignore[import-not-found]
import pytest

from langmem_ext.workspace.postgres.ledger import PgLedger

SQLITE_ONLY = {
    "test_lookups_by_id_lead_with_the_key_not_the_scope_index",
    "test_current_of_slots_follow_every_write_of_this_and_other_connections",
}
"""The SQLite ledger's tests that read SQLite's query planner or its statements."""

SHARED = [
    getattr(sqlite_tests, name)
    for name in dir(sqlite_tests)
    if name.startswith("test_") and name not in SQLITE_ONLY
]
"""The SQLite ledger's tests this module runs (pytest collects them under their names)."""
globals().update({test.__name__: test for test in SHARED})


@pytest.fixture
def ledger(pg_url: str) -> Iterator[PgLedger]:
    led = PgLedger(pg_url)
    yield led
    led.close()


@pytest.fixture
def other(pg_url: str, ledger: PgLedger) -> Iterator[PgLedger]:
    """A second ledger on the same database: it sees only committed rows."""
    led = PgLedger(pg_url)
    yield led
    led.close()

"""The ledger's repository tests, run on the PostgreSQL ledger.

The tests are those of the SQLite ledger (imported, not copied): the ``ledger`` and
``other`` fixtures below give them a :class:`PgLedger` and a second one on the same
database instead. Only a test of SQLite's query planner is left out.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from integration.workspace.test_ledger_repositories import (  # type: ignore[import-not-found]
    test_a_call_outside_a_transaction_commits_on_its_own,
    test_boosts_last_time_and_total_since,
    test_by_entry_and_confirm_entries,
    test_closed_versions_follow_every_write_of_this_and_other_connections,
    test_confirm_written_settles_items_whose_entry_is_live_in_their_scope,
    test_count_open_leaves_out_resolved_and_timed_out_items,
    test_deleted_entries_are_hidden_but_their_ids_stay_taken,
    test_entry_rows_round_trip_with_their_types,
    test_expire_touches_only_items_still_pending,
    test_history_is_in_write_order_and_per_scope,
    test_live_ids_by_path,
    test_many_reads_more_ids_than_one_query_binds,
    test_newest_of_a_slot_come_from_all_its_children_current_and_live_only,
    test_pending_of_scope_filters_status_and_orders_by_creation,
    test_pending_round_trips_and_is_scoped,
    test_repository_writes_inside_a_transaction_roll_back_with_it,
    test_resolve_and_has_text,
    test_scope_entries_are_live_ones_of_that_scope_oldest_first,
    test_touch_sets_importance_and_counts_accesses,
    test_writes_commit_together_and_not_before_the_block_ends,
)

from langmem_ext.workspace.postgres.ledger import PgLedger

SHARED = [
    test_a_call_outside_a_transaction_commits_on_its_own,
    test_boosts_last_time_and_total_since,
    test_by_entry_and_confirm_entries,
    test_closed_versions_follow_every_write_of_this_and_other_connections,
    test_confirm_written_settles_items_whose_entry_is_live_in_their_scope,
    test_count_open_leaves_out_resolved_and_timed_out_items,
    test_deleted_entries_are_hidden_but_their_ids_stay_taken,
    test_entry_rows_round_trip_with_their_types,
    test_expire_touches_only_items_still_pending,
    test_history_is_in_write_order_and_per_scope,
    test_live_ids_by_path,
    test_many_reads_more_ids_than_one_query_binds,
    test_newest_of_a_slot_come_from_all_its_children_current_and_live_only,
    test_pending_of_scope_filters_status_and_orders_by_creation,
    test_pending_round_trips_and_is_scoped,
    test_repository_writes_inside_a_transaction_roll_back_with_it,
    test_resolve_and_has_text,
    test_scope_entries_are_live_ones_of_that_scope_oldest_first,
    test_touch_sets_importance_and_counts_accesses,
    test_writes_commit_together_and_not_before_the_block_ends,
]
"""The SQLite ledger's tests this module runs (pytest collects the imported names)."""


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

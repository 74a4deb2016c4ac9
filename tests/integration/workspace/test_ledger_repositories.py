"""The ledger's entry, pending and boost repositories on a real SQLite ``state.db``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from langmem_ext.workspace.records import EntryState, HistoryRow, PendingRow
from langmem_ext.workspace.sqlite._repo import SqliteRepo
from langmem_ext.workspace.sqlite.ledger import Ledger


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    led = Ledger(tmp_path / "state.db")
    yield led
    led.close()


@pytest.fixture
def other(tmp_path: Path, ledger: Ledger) -> Iterator[Ledger]:
    """A second connection to the same file: it sees only committed rows."""
    led = Ledger(tmp_path / "state.db")
    yield led
    led.close()


def _entry(entry_id: str, scope: str = "main", path: str = "MEMORY.md", **kw: object) -> EntryState:
    fields: dict[str, object] = {
        "id": entry_id,
        "scope": scope,
        "path": path,
        "category": "fact",
        "text_hash": "h-" + entry_id,
        "importance": 1.0,
        "created_at": 100.0,
        "updated_at": 100.0,
        "last_access": None,
        "access_count": 0,
        "source": "user",
        "verified": False,
        "deleted_at": None,
    }
    fields.update(kw)
    return EntryState(**fields)  # type: ignore[arg-type]


def _pending(
    pending_id: str,
    scope: str = "main",
    *,
    entry_id: str | None = None,
    text: str | None = None,
    created_at: float = 100.0,
    expires_at: float = 1e12,
    status: str = "pending",
) -> PendingRow:
    return PendingRow(
        id=pending_id,
        scope=scope,
        text=text or f"text of {pending_id}",
        target="long_term",
        category="fact",
        importance=1.5,
        source="agent",
        created_at=created_at,
        expires_at=expires_at,
        status=status,
        entry_id=entry_id or "m-" + pending_id,
        resolved_at=None,
        said_at=created_at - 10,
    )


# -- transactions ------------------------------------------------------------------


def test_repository_writes_inside_a_transaction_roll_back_with_it(ledger: Ledger) -> None:
    ledger.entries.upsert(_entry("m-keep1"))
    with pytest.raises(RuntimeError), ledger.transaction():
        ledger.entries.upsert(_entry("m-new01"))
        ledger.entries.mark_deleted("m-keep1", 200.0)
        ledger.entries.record_history(HistoryRow("m-new01", "main", "add", None, "x", 200.0))
        ledger.pending.insert(_pending("p-1"))
        ledger.pending.expire(["p-1"], 200.0)  # a multi-statement write joins it too
        ledger.boosts.record("m-keep1", 0.3, 200.0, "used")
        raise RuntimeError("abort")
    assert ledger.entries.get("m-new01") is None
    assert ledger.entries.get("m-keep1") is not None  # the delete was rolled back
    assert ledger.entries.history("m-new01", "main") == []
    assert ledger.pending.get("p-1") is None
    assert ledger.boosts.last_at("m-keep1") is None


def test_writes_commit_together_and_not_before_the_block_ends(
    ledger: Ledger, other: Ledger
) -> None:
    with ledger.transaction():
        ledger.entries.upsert(_entry("m-aaaa1"))
        ledger.pending.insert(_pending("p-1"))
        ledger.pending.expire(["p-1"], 5.0)
        assert other.entries.get("m-aaaa1") is None  # not committed yet
        assert other.pending.get("p-1") is None
    assert other.entries.get("m-aaaa1") == _entry("m-aaaa1")
    row = other.pending.get("p-1")
    assert row is not None and row.status == "expired" and row.resolved_at == 5.0


def test_a_call_outside_a_transaction_commits_on_its_own(ledger: Ledger, other: Ledger) -> None:
    ledger.entries.upsert(_entry("m-aaaa1"))
    ledger.pending.insert(_pending("p-1"))
    ledger.pending.expire(["p-1"], 7.0)
    ledger.boosts.record("m-aaaa1", 0.3, 50.0, None)
    assert other.entries.exists("m-aaaa1")
    assert other.pending.ids_with_status(["p-1"], "expired") == {"p-1"}
    assert other.boosts.last_at("m-aaaa1") == 50.0


# -- entries -----------------------------------------------------------------------


def test_entry_rows_round_trip_with_their_types(ledger: Ledger) -> None:
    st = _entry("m-aaaa1", importance=2, verified=True, last_access=3, access_count=4)
    ledger.entries.upsert(st)
    got = ledger.entries.get("m-aaaa1")
    assert got == st
    assert got is not None and isinstance(got.verified, bool) and isinstance(got.importance, float)
    ledger.entries.upsert(replace(st, text_hash="new"))  # replaces, never duplicates
    assert ledger.entries.get("m-aaaa1") == replace(st, text_hash="new")
    assert ledger.entries.all_ids() == {"m-aaaa1"}


def test_deleted_entries_are_hidden_but_their_ids_stay_taken(ledger: Ledger) -> None:
    ledger.entries.upsert(_entry("m-live1"))
    ledger.entries.upsert(_entry("m-gone1"))
    ledger.entries.mark_deleted("m-gone1", 300.0)
    assert ledger.entries.get("m-gone1") is None
    gone = ledger.entries.get("m-gone1", include_deleted=True)
    assert gone is not None and gone.deleted_at == 300.0
    assert set(ledger.entries.many(["m-live1", "m-gone1", "m-nope1"])) == {"m-live1"}
    assert ledger.entries.all_ids() == {"m-live1", "m-gone1"}
    assert ledger.entries.exists("m-gone1") and not ledger.entries.exists("m-nope1")


def test_scope_entries_are_live_ones_of_that_scope_oldest_first(ledger: Ledger) -> None:
    ledger.entries.upsert(_entry("m-late1", created_at=30.0))
    ledger.entries.upsert(_entry("m-early", created_at=10.0))
    ledger.entries.upsert(_entry("m-bob01", scope="bob", created_at=5.0))
    ledger.entries.upsert(_entry("m-gone1", created_at=1.0, deleted_at=2.0))
    assert [e.id for e in ledger.entries.of_scope("main")] == ["m-early", "m-late1"]
    assert [e.id for e in ledger.entries.of_scope("bob")] == ["m-bob01"]
    assert ledger.entries.of_scope("carol") == []


def test_newest_of_a_slot_come_from_all_its_children_current_and_live_only(
    ledger: Ledger,
) -> None:
    slots = {
        "m-pea01": ("user|allergic_to|花生", 1.0), "m-pea02": ("user|allergic_to|花生", 5.0),
        "m-pea03": ("user|allergic_to|花生", 4.0), "m-shr01": ("user|allergic_to|shrimp", 6.0),
        "m-shr02": ("user|allergic_to|shrimp", 2.0), "m-bare1": ("user|allergic_to", 3.0),
        "m-look1": ("user|allergic_tox", 10.0),  # a look-alike, not a child
    }  # fmt: skip
    for entry_id, (slot, at) in slots.items():
        ledger.entries.upsert(_entry(entry_id, slot=slot, created_at=at))
    ledger.entries.upsert(
        _entry("m-old01", slot="user|allergic_to|虾", created_at=9.0, valid_to=9.5)
    )
    ledger.entries.upsert(
        _entry("m-del01", slot="user|allergic_to|虾", created_at=8.0, deleted_at=8.5)
    )
    ledger.entries.upsert(_entry("m-bob01", scope="bob", slot="user|allergic_to", created_at=7.0))
    every = [e.id for e in ledger.entries.current_of_slots("main", ["user|allergic_to"])]
    assert every == ["m-pea01", "m-shr02", "m-bare1", "m-pea03", "m-pea02", "m-shr01"]
    for limit in (1, 3, 10):  # the newest `limit`, oldest first, as the whole list ends
        newest = ledger.entries.current_of_slots("main", ["user|allergic_to"], limit=limit)
        assert [e.id for e in newest] == every[-limit:]
    both = ledger.entries.current_of_slots(
        "main", ["user|allergic_tox", "user|allergic_to"], limit=2
    )
    assert [e.id for e in both] == ["m-look1", "m-pea02", "m-shr01"]
    assert ledger.entries.current_of_slots("main", ["user|lives_in"], limit=3) == []
    for entry_id, slot in (("m-tie02", "b"), ("m-tie01", "a"), ("m-tie03", "a")):
        ledger.entries.upsert(_entry(entry_id, slot=f"user|likes|{slot}", created_at=20.0))
    every = [e.id for e in ledger.entries.current_of_slots("main", ["user|likes"])]
    assert every == ["m-tie02", "m-tie03", "m-tie01"]  # ties: slot order, then written order
    for limit in (1, 2):
        ties = ledger.entries.current_of_slots("main", ["user|likes"], limit=limit)
        assert [e.id for e in ties] == every[-limit:]


def test_current_of_slots_follow_every_write_of_this_and_other_connections(
    ledger: Ledger, other: Ledger
) -> None:
    """The answer is kept between searches; a write of this connection, a commit of
    another and a rolled-back change each show in the next read."""

    def ids(limit: int | None = 3) -> list[str]:
        found = ledger.entries.current_of_slots("main", ["user|lives_in"], limit=limit)
        return [e.id for e in found]

    ledger.entries.upsert(_entry("m-city1", slot="user|lives_in", created_at=1.0))
    assert ids() == ["m-city1"]
    statements: list[str] = []
    ledger._conn.set_trace_callback(statements.append)
    assert ids() == ["m-city1"]
    ledger._conn.set_trace_callback(None)
    assert not [s for s in statements if "FROM entries" in s]  # kept, not read again
    ledger.entries.upsert(_entry("m-city2", slot="user|lives_in|杭州", created_at=2.0))
    assert ids() == ["m-city1", "m-city2"]  # this connection's write
    other.entries.set_valid_to("m-city1", 2.0)  # another connection's commit
    assert ids() == ["m-city2"]
    assert ids(None) == ["m-city2"]
    with pytest.raises(RuntimeError), ledger.transaction():
        ledger.entries.mark_deleted("m-city2", 3.0)
        assert ids() == []  # inside the transaction: its own rows
        raise RuntimeError
    assert ids() == ["m-city2"]
    other.entries.upsert(_entry("m-city3", slot="user|lives_in", created_at=4.0))
    assert ids() == ["m-city2", "m-city3"]
    ids().clear()  # a caller's list is its own
    assert ids(1) == ["m-city3"]


def test_closed_versions_follow_every_write_of_this_and_other_connections(
    ledger: Ledger, other: Ledger
) -> None:
    ledger.entries.upsert(_entry("m-old01"))
    ledger.entries.upsert(_entry("m-old02"))
    assert ledger.entries.closed_of_scope("main") == {}
    ledger.entries.set_valid_to("m-old01", 50.0)  # this connection
    assert ledger.entries.closed_of_scope("main") == {"m-old01": 50.0}
    other.entries.set_valid_to("m-old02", 60.0)  # another connection's commit
    assert ledger.entries.closed_of_scope("main") == {"m-old01": 50.0, "m-old02": 60.0}
    ledger.entries.closed_of_scope("main")["m-old03"] = 1.0  # a caller's copy
    assert set(ledger.entries.closed_of_scope("main")) == {"m-old01", "m-old02"}
    with pytest.raises(RuntimeError), ledger.transaction():
        ledger.entries.set_valid_to("m-old01", None)  # reopened, then rolled back
        assert ledger.entries.closed_of_scope("main") == {"m-old02": 60.0}
        raise RuntimeError
    assert ledger.entries.closed_of_scope("main") == {"m-old01": 50.0, "m-old02": 60.0}
    assert other.entries.closed_of_scope("main") == {"m-old01": 50.0, "m-old02": 60.0}
    ledger.entries.mark_deleted("m-old02", 70.0)
    assert ledger.entries.closed_of_scope("main") == {"m-old01": 50.0}
    assert ledger.entries.closed_of_scope("bob") == {}


def test_many_reads_more_ids_than_one_query_binds(ledger: Ledger) -> None:
    ids = [f"m-{i:05d}" for i in range(1203)]
    with ledger.transaction():
        for i in ids:
            ledger.entries.upsert(_entry(i))
    got = ledger.entries.many([*ids, "m-nope1"])
    assert set(got) == set(ids) and got["m-01202"].id == "m-01202"


def test_live_ids_by_path(ledger: Ledger) -> None:
    ledger.entries.upsert(_entry("m-aaaa1", path="MEMORY.md"))
    ledger.entries.upsert(_entry("m-aaaa2", path="MEMORY.md", deleted_at=1.0))
    ledger.entries.upsert(_entry("m-bbbb1", path="memory/2024-01-01.md"))
    ledger.entries.upsert(_entry("m-bbbb2", path="memory/2024-01-01.md", deleted_at=1.0))
    assert ledger.entries.live_ids_of_path("MEMORY.md") == ["m-aaaa1"]
    assert ledger.entries.live_ids_outside("MEMORY.md") == {"m-bbbb1"}
    assert ledger.entries.live_ids_outside("memory/2024-01-01.md") == {"m-aaaa1"}


def test_touch_sets_importance_and_counts_accesses(ledger: Ledger) -> None:
    ledger.entries.upsert(_entry("m-aaaa1", access_count=2))
    ledger.entries.touch("m-aaaa1", importance=1.3, at=500.0)
    ledger.entries.touch("m-aaaa1", importance=1.6, at=600.0)
    st = ledger.entries.get("m-aaaa1")
    assert st is not None
    assert (st.importance, st.last_access, st.access_count) == (1.6, 600.0, 4)


def test_history_is_in_write_order_and_per_scope(ledger: Ledger) -> None:
    rows = [
        HistoryRow("m-aaaa1", "main", "add", None, "one", 300.0),
        HistoryRow("m-aaaa1", "main", "update", "one", "two", 100.0),  # clock went back
        HistoryRow("m-aaaa1", "other", "add", None, "foreign", 200.0),
        HistoryRow("m-bbbb1", "main", "add", None, "b", 150.0),
        HistoryRow("m-aaaa1", "main", "delete", "two", None, 50.0),
    ]
    for r in rows:
        ledger.entries.record_history(r)
    assert ledger.entries.history("m-aaaa1", "main") == [rows[0], rows[1], rows[4]]
    assert ledger.entries.history("m-aaaa1", "other") == [rows[2]]
    assert ledger.entries.history("m-aaaa1", "bob") == []


# -- pending -----------------------------------------------------------------------


def test_pending_round_trips_and_is_scoped(ledger: Ledger) -> None:
    row = _pending("p-1", "alice")
    ledger.pending.insert(row)
    assert ledger.pending.get("p-1") == row
    assert ledger.pending.get("p-1", scope="alice") == row
    assert ledger.pending.get("p-1", scope="bob") is None
    assert ledger.pending.get("p-nope") is None


def test_pending_of_scope_filters_status_and_orders_by_creation(ledger: Ledger) -> None:
    ledger.pending.insert(_pending("p-late", created_at=300.0))
    ledger.pending.insert(_pending("p-early", created_at=100.0))
    ledger.pending.insert(_pending("p-done", created_at=50.0, status="confirmed"))
    ledger.pending.insert(_pending("p-bob", "bob", created_at=10.0))
    assert [r.id for r in ledger.pending.of_scope("main")] == ["p-early", "p-late"]
    assert [r.id for r in ledger.pending.of_scope("main", "confirmed")] == ["p-done"]
    assert [r.id for r in ledger.pending.of_scope("bob")] == ["p-bob"]


def test_expire_touches_only_items_still_pending(ledger: Ledger) -> None:
    ledger.pending.insert(_pending("p-open"))
    ledger.pending.insert(_pending("p-took", status="confirmed"))
    ledger.pending.insert(_pending("p-kept"))
    ledger.pending.expire(["p-open", "p-took", "p-nope"], 900.0)
    open_, took, kept = (ledger.pending.get(i) for i in ("p-open", "p-took", "p-kept"))
    assert open_ is not None and (open_.status, open_.resolved_at) == ("expired", 900.0)
    assert took is not None and (took.status, took.resolved_at) == ("confirmed", None)
    assert kept is not None and kept.status == "pending"
    ledger.pending.expire([], 901.0)  # nothing to do
    assert ledger.pending.ids_with_status(["p-open", "p-took", "p-kept"], "expired") == {"p-open"}


def test_count_open_leaves_out_resolved_and_timed_out_items(ledger: Ledger) -> None:
    ledger.pending.insert(_pending("p-1", expires_at=1000.0))
    ledger.pending.insert(_pending("p-2", expires_at=2000.0))
    ledger.pending.insert(_pending("p-3", expires_at=2000.0, status="rejected"))
    ledger.pending.insert(_pending("p-4", "bob", expires_at=2000.0))
    assert ledger.pending.count_open("main", 500.0) == 2
    assert ledger.pending.count_open("main", 1000.0) == 1  # expires_at is exclusive
    assert ledger.pending.count_open("main", 2000.0) == 0
    assert ledger.pending.count_open("bob", 500.0) == 1


def test_resolve_and_has_text(ledger: Ledger) -> None:
    ledger.pending.insert(_pending("p-1", text="likes tea"))
    ledger.pending.resolve("p-1", "rejected", 42.0)
    row = ledger.pending.get("p-1")
    assert row is not None and (row.status, row.resolved_at) == ("rejected", 42.0)
    assert ledger.pending.has_text("main", "likes tea")  # any status counts
    assert not ledger.pending.has_text("bob", "likes tea")
    assert not ledger.pending.has_text("main", "likes te")


def test_by_entry_and_confirm_entries(ledger: Ledger) -> None:
    ledger.pending.insert(_pending("p-1", entry_id="m-aaaa1"))
    ledger.pending.insert(_pending("p-2", entry_id="m-aaaa2", status="rejected"))
    ledger.pending.insert(_pending("p-3", entry_id="m-aaaa3"))
    found = ledger.pending.by_entry(["m-aaaa1", "m-aaaa2", "m-nope1"])
    assert {k: v.id for k, v in found.items()} == {"m-aaaa1": "p-1", "m-aaaa2": "p-2"}
    ledger.pending.confirm_entries(["m-aaaa1", "m-aaaa2"], 77.0)
    assert ledger.pending.ids_with_status(["p-1", "p-2", "p-3"], "confirmed") == {"p-1"}
    assert ledger.pending.ids_with_status(["p-2"], "rejected") == {"p-2"}  # resolved stays


def test_confirm_written_settles_items_whose_entry_is_live_in_their_scope(
    ledger: Ledger, other: Ledger
) -> None:
    ledger.entries.upsert(_entry("m-main1"))
    ledger.entries.upsert(_entry("m-bob01", scope="bob"))
    ledger.entries.upsert(_entry("m-gone1", deleted_at=5.0))
    ledger.entries.upsert(_entry("m-else1", scope="bob"))
    ledger.pending.insert(_pending("p-main", entry_id="m-main1"))
    ledger.pending.insert(_pending("p-bob", "bob", entry_id="m-bob01"))
    ledger.pending.insert(_pending("p-gone", entry_id="m-gone1"))
    ledger.pending.insert(_pending("p-else", entry_id="m-else1"))  # entry of another scope
    ledger.pending.insert(_pending("p-none", entry_id="m-none1"))
    ledger.pending.insert(_pending("p-rej", entry_id="m-main1", status="rejected"))
    assert ledger.pending.confirm_written("main") == ["p-main"]
    assert other.pending.ids_with_status(["p-main", "p-bob"], "confirmed") == {"p-main"}
    assert ledger.pending.confirm_written() == ["p-bob"]
    assert ledger.pending.confirm_written() == []
    still = ledger.pending.of_scope("main")
    assert {r.id for r in still} == {"p-gone", "p-else", "p-none"}
    assert ledger.pending.ids_with_status(["p-rej"], "rejected") == {"p-rej"}


# -- boosts ------------------------------------------------------------------------


def test_boosts_last_time_and_total_since(ledger: Ledger) -> None:
    assert ledger.boosts.last_at("m-aaaa1") is None
    assert ledger.boosts.total_since("m-aaaa1", 0.0) == 0.0
    ledger.boosts.record("m-aaaa1", 0.3, 100.0, "used")
    ledger.boosts.record("m-aaaa1", 0.2, 300.0, None)
    ledger.boosts.record("m-aaaa1", 0.1, 200.0, "used")
    ledger.boosts.record("m-bbbb1", 5.0, 400.0, "used")
    assert ledger.boosts.last_at("m-aaaa1") == 300.0
    assert ledger.boosts.total_since("m-aaaa1", 100.0) == pytest.approx(0.3)  # after, not at
    assert ledger.boosts.total_since("m-aaaa1", 99.0) == pytest.approx(0.6)
    assert ledger.boosts.total_since("m-bbbb1", 0.0) == pytest.approx(5.0)


def test_lookups_by_id_lead_with_the_key_not_the_scope_index(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write's own extraction check and a recall's access marks name a few ids of a
    scope: each must find them by the primary key. Led by the ``(scope, deleted_at)``
    index instead (what SQLite picks for ``scope = ? AND id IN``), each read every
    live entry of the scope, so a single add cost more as the store grew."""
    ledger.entries.add([_entry(f"m-{i:04d}") for i in range(300)], [])
    seen: list[tuple[str, tuple[object, ...]]] = []
    for name in ("_all", "_run"):
        method = getattr(SqliteRepo, name)

        def traced(self: SqliteRepo, sql: str, params: Any = (), _m: Any = method) -> Any:
            seen.append((sql, tuple(params)))
            return _m(self, sql, params)

        monkeypatch.setattr(SqliteRepo, name, traced)
    ids = ["m-0042", "m-0007", "m-0100", "m-0299", "nope"]  # from three ids, the plan changed
    assert [i for i, _h in ledger.triples.unextracted_of("main", ids)] == sorted(ids[:4])
    with ledger.transaction(durable=False):
        assert ledger.entries.mark_accessed(ids, scope="main", at=5.0) == 4
        assert ledger.entries.mark_accessed(ids, scope="other", at=5.0) == 0
    monkeypatch.undo()
    by_ids = [(sql, params) for sql, params in seen if "entries" in sql and " IN (" in sql]
    assert len(by_ids) == 3
    for sql, params in by_ids:
        rows = ledger._conn.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()
        plan = " | ".join(str(r[3]) for r in rows)
        assert "entries_scope" not in plan, (sql, plan)
        assert "sqlite_autoindex_entries_1 (id=?)" in plan, (sql, plan)
    got = ledger.entries.get("m-0007")
    assert got is not None and got.last_access == 5.0 and got.access_count == 1

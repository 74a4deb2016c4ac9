"""The ledger's contract, through :class:`~langmem_ext.workspace.protocols.Ledger` only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from langmem_ext.workspace.docs import text_hash
from langmem_ext.workspace.engines import Engines
from langmem_ext.workspace.protocols import Ledger
from langmem_ext.workspace.records import (
    EntryState,
    EventFilter,
    ExtractedEntry,
    HistoryRow,
    ItemWrite,
    NewEventRow,
    NewTriple,
    PendingRow,
    ProfileChangeRow,
    SafetyLinkRow,
)

T0 = 1_700_000_000.0
"""A fixed instant the rows are dated from (no test reads today's date)."""


def state(
    entry_id: str, text: str, *, scope: str = "main", path: str = "MEMORY.md", **kw: object
) -> EntryState:
    fields: dict[str, object] = {
        "id": entry_id,
        "scope": scope,
        "path": path,
        "category": "fact",
        "text_hash": text_hash(text),
        "importance": 1.0,
        "created_at": T0,
        "updated_at": T0,
        "last_access": None,
        "access_count": 0,
        "source": "test",
        "verified": True,
        "deleted_at": None,
    }
    fields.update(kw)
    return EntryState(**fields)  # type: ignore[arg-type]


def add(ledger: Ledger, entry_id: str, text: str, **kw: Any) -> EntryState:
    st = state(entry_id, text, **kw)
    ledger.entries.add([st], [HistoryRow(entry_id, st.scope, "add", None, text, st.created_at)])
    return st


def pending(
    pid: str, text: str, *, scope: str = "main", entry_id: str = "e-p", **kw: object
) -> PendingRow:
    fields: dict[str, object] = {
        "id": pid,
        "scope": scope,
        "text": text,
        "target": "long_term",
        "category": "fact",
        "importance": 1.0,
        "source": "test",
        "created_at": T0,
        "expires_at": T0 + 3600,
        "status": "pending",
        "entry_id": entry_id,
        "resolved_at": None,
        "said_at": T0,
    }
    fields.update(kw)
    return PendingRow(**fields)  # type: ignore[arg-type]


# -- entries ---------------------------------------------------------------


def test_an_added_entry_reads_back_whole(ledger: Ledger) -> None:
    st = add(ledger, "e1", "Lives in Lyon", slot="user|lives_in")
    assert ledger.entries.get("e1") == st
    assert ledger.entries.exists("e1")
    assert not ledger.entries.exists("e2")
    assert ledger.entries.get("e2") is None


def test_many_and_of_scope_keep_scopes_apart(ledger: Ledger) -> None:
    add(ledger, "a1", "one")
    add(ledger, "a2", "two")
    add(ledger, "b1", "three", scope="u1", path="memory/scopes/u1/LONG_TERM.md")
    assert set(ledger.entries.many(["a1", "b1", "nope"])) == {"a1", "b1"}
    assert {s.id for s in ledger.entries.of_scope("main")} == {"a1", "a2"}
    assert {s.id for s in ledger.entries.of_scope("u1")} == {"b1"}
    assert set(ledger.entries.scopes()) == {"main", "u1"}
    assert ledger.entries.all_ids() == {"a1", "a2", "b1"}


def test_upsert_replaces_the_state(ledger: Ledger) -> None:
    st = add(ledger, "e1", "old text")
    changed = replace(st, text_hash=text_hash("new text"), importance=2.5, updated_at=T0 + 5)
    ledger.entries.upsert(changed)
    assert ledger.entries.get("e1") == changed


def test_history_keeps_every_change_in_order(ledger: Ledger) -> None:
    add(ledger, "e1", "v1")
    ledger.entries.record_history(HistoryRow("e1", "main", "update", "v1", "v2", T0 + 1))
    ledger.entries.record_history_many(
        [HistoryRow("e1", "main", "update", "v2", "v3 咖啡 ☕", T0 + 2)]
    )
    rows = ledger.entries.history("e1", "main")
    assert [(r.op, r.old_text, r.new_text) for r in rows] == [
        ("add", None, "v1"),
        ("update", "v1", "v2"),
        ("update", "v2", "v3 咖啡 ☕"),
    ]
    assert ledger.entries.history("e1", "other") == []


def test_a_supersede_chain_links_versions(ledger: Ledger) -> None:
    add(ledger, "v1", "Lives in Lyon", slot="user|lives_in")
    add(ledger, "v2", "Lives in Paris", slot="user|lives_in", supersedes="v1", created_at=T0 + 10)
    ledger.entries.set_valid_to("v1", T0 + 10)
    add(ledger, "v3", "Lives in Rome", slot="user|lives_in", supersedes="v2", created_at=T0 + 20)
    ledger.entries.set_valid_to("v2", T0 + 20)
    got_v1 = ledger.entries.get("v1")
    assert got_v1 is not None and got_v1.valid_to == T0 + 10
    succ = ledger.entries.successor("v1")
    assert succ is not None and succ.id == "v2"
    succ2 = ledger.entries.successor("v2")
    assert succ2 is not None and succ2.id == "v3"
    assert ledger.entries.successor("v3") is None
    assert ledger.entries.closed_of_scope("main") == {"v1": T0 + 10, "v2": T0 + 20}
    current = ledger.entries.current_of_slots("main", ["user|lives_in"])
    assert [s.id for s in current] == ["v3"]


def test_a_deleted_entry_is_hidden_but_kept(ledger: Ledger) -> None:
    add(ledger, "e1", "one")
    add(ledger, "e2", "two")
    ledger.entries.mark_deleted("e1", T0 + 3)
    assert ledger.entries.get("e1") is None
    kept = ledger.entries.get("e1", include_deleted=True)
    assert kept is not None and kept.deleted_at == T0 + 3
    assert ledger.entries.live_ids_of_path("MEMORY.md") == ["e2"]


def test_live_ids_by_path(ledger: Ledger) -> None:
    add(ledger, "a", "one", path="MEMORY.md")
    add(ledger, "b", "two", path="memory/2026-01-31.md")
    assert ledger.entries.live_ids_of_path("MEMORY.md") == ["a"]
    assert ledger.entries.live_ids_outside("MEMORY.md") == {"b"}


def test_access_and_importance_are_recorded(ledger: Ledger) -> None:
    add(ledger, "e1", "one")
    add(ledger, "e2", "two")
    assert ledger.entries.mark_accessed(["e1"], scope="main", at=T0 + 7) == 1
    assert ledger.entries.mark_accessed(["e2"], scope="u1", at=T0 + 7) == 0  # another scope
    ledger.entries.set_importances([("e2", 3.0)])
    e1, e2 = ledger.entries.get("e1"), ledger.entries.get("e2")
    assert e1 is not None and e1.last_access == T0 + 7 and e1.access_count == 1
    assert e2 is not None and e2.importance == 3.0 and e2.last_access is None


# -- transactions ----------------------------------------------------------


def test_a_transaction_commits_its_writes_together(ledger: Ledger) -> None:
    with ledger.transaction():
        add(ledger, "e1", "one")
        ledger.meta.set("k", "v")
    assert ledger.entries.exists("e1") and ledger.meta.get("k") == "v"


def test_a_failed_transaction_leaves_nothing(ledger: Ledger) -> None:
    with pytest.raises(RuntimeError, match="boom"), ledger.transaction():
        add(ledger, "e1", "one")
        ledger.meta.set("k", "v")
        raise RuntimeError("boom")
    assert not ledger.entries.exists("e1")
    assert ledger.entries.history("e1", "main") == []
    assert ledger.meta.get("k") is None


def test_a_non_durable_transaction_still_commits(ledger: Ledger) -> None:
    with ledger.transaction(durable=False):
        ledger.meta.set("hot", "1")
    assert ledger.meta.get("hot") == "1"


# -- meta, pending, boosts -------------------------------------------------


def test_meta_set_get_prefix_delete(ledger: Ledger) -> None:
    ledger.meta.set("intent:a", "1")
    ledger.meta.set("intent:b", "2")
    ledger.meta.set("other", "3")
    ledger.meta.set("intent:a", "9")
    assert ledger.meta.with_prefix("intent:") == {"intent:a": "9", "intent:b": "2"}
    ledger.meta.delete("intent:a")
    assert ledger.meta.get("intent:a") is None and ledger.meta.get("other") == "3"


def test_pending_is_per_scope(ledger: Ledger) -> None:
    row = pending("p1", "Likes tea")
    ledger.pending.insert(row)
    ledger.pending.insert(pending("p2", "Likes 绿茶", scope="u1", entry_id="e-q"))
    assert ledger.pending.get("p1") == row
    assert ledger.pending.get("p1", scope="u1") is None
    assert [p.id for p in ledger.pending.of_scope("main")] == ["p1"]
    assert ledger.pending.has_text("u1", "Likes 绿茶")
    assert not ledger.pending.has_text("main", "Likes 绿茶")
    assert ledger.pending.count_open("main", T0 + 1) == 1
    assert ledger.pending.count_open("main", T0 + 7200) == 0  # past its expiry


def test_pending_resolve_and_expire(ledger: Ledger) -> None:
    ledger.pending.insert(pending("p1", "one", entry_id="e1"))
    ledger.pending.insert(pending("p2", "two", entry_id="e2"))
    ledger.pending.resolve("p1", "rejected", T0 + 1)
    ledger.pending.expire(["p2"], T0 + 2)
    p1, p2 = ledger.pending.get("p1"), ledger.pending.get("p2")
    assert p1 is not None and p1.status == "rejected" and p1.resolved_at == T0 + 1
    assert p2 is not None and p2.status == "expired"
    assert ledger.pending.ids_with_status(["p1", "p2"], "rejected") == {"p1"}
    assert ledger.pending.of_scope("main") == []


def test_pending_confirmed_by_its_entry(ledger: Ledger) -> None:
    ledger.pending.insert(pending("p1", "one", entry_id="e1"))
    found = ledger.pending.by_entry(["e1", "e9"])
    assert set(found) == {"e1"} and found["e1"].id == "p1"
    ledger.pending.confirm_entries(["e1"], T0 + 5)
    p1 = ledger.pending.get("p1")
    assert p1 is not None and p1.status == "confirmed"


def test_boosts_sum_over_a_window(ledger: Ledger) -> None:
    add(ledger, "e1", "one")
    ledger.boosts.record("e1", 0.5, T0 + 1, "recalled")
    ledger.boosts.record("e1", 0.25, T0 + 100, None)
    assert ledger.boosts.last_at("e1") == T0 + 100
    assert ledger.boosts.total_since("e1", T0 + 50) == pytest.approx(0.25)
    assert ledger.boosts.times("e1") == [T0 + 1, T0 + 100]
    assert ledger.boosts.last_at("e2") is None


# -- profile, triples, events, sessions, store items -----------------------


def test_profile_history_and_latest_values(ledger: Ledger) -> None:
    ledger.profile.record(
        [
            ProfileChangeRow("main", "name", None, "Ana", "user", T0),
            ProfileChangeRow("main", "city", None, "Lyon", "user", T0 + 1),
            ProfileChangeRow("main", "city", "Lyon", "巴黎", "user", T0 + 2),
            ProfileChangeRow("u1", "name", None, "Bo", "user", T0),
        ]
    )
    assert ledger.profile.latest("main") == {"name": "Ana", "city": "巴黎"}
    city = ledger.profile.of_scope("main", "city")
    assert [(r.old_value, r.new_value) for r in city] == [(None, "Lyon"), ("Lyon", "巴黎")]
    assert ledger.profile.latest("u1") == {"name": "Bo"}


def _triple(subject: str, predicate: str, obj: str) -> NewTriple:
    return NewTriple(subject.lower(), subject, predicate, None, obj.lower(), obj, False, None)


def test_triples_follow_their_supporting_entries(ledger: Ledger) -> None:
    add(ledger, "e1", "Ana lives in Lyon")
    add(ledger, "e2", "Ana works at Acme")
    new = ledger.triples.record(
        "main",
        [
            ExtractedEntry(
                "e1", text_hash("Ana lives in Lyon"), (_triple("Ana", "lives_in", "Lyon"),)
            ),
            ExtractedEntry(
                "e2", text_hash("Ana works at Acme"), (_triple("Ana", "works_at", "Acme"),)
            ),
        ],
        extractor="rules",
        at=T0,
    )
    assert new == 2
    assert ledger.triples.count("main") == 2 and ledger.triples.count("u1") == 0
    current = {(r.triple.predicate, r.triple.object) for r in ledger.triples.current("main")}
    assert current == {("lives_in", "Lyon"), ("works_at", "Acme")}
    assert ledger.triples.unextracted("main", 10) == []
    ledger.entries.mark_deleted("e2", T0 + 1)
    assert {r.triple.predicate for r in ledger.triples.current("main")} == {"lives_in"}
    assert ledger.triples.clear("main") == 2
    assert ledger.triples.count() == 0


def test_safety_links_worth_reading_come_one_per_item_first(ledger: Ledger) -> None:
    """The newest statement of each distinct item first, then the rest newest first;
    bounded, current memories only, of the scope, fields and subjects asked."""
    said = [
        ("a1", "Allergic to peanuts", "allergies", "user", "Peanuts", 1),
        ("a2", "Allergic to penicillin", "allergies", "user", "penicillin", 2),
        ("a3", "Peanut allergy again", "allergies", "user", "peanuts", 3),
        ("a4", "Peanuts, still", "allergies", "user", "peanuts", 4),
        ("a5", "Has allergies", "allergies", "user", "", 5),
        ("s1", "Sister: shellfish", "allergies", "sister", "shellfish", 6),
        ("m1", "Takes metformin", "medications", "user", "metformin", 7),
        ("o1", "Other scope peanuts", "allergies", "user", "peanuts", 8),
    ]
    for entry_id, text, field, subject, item, hour in said:
        scope = "other" if entry_id == "o1" else "main"
        add(ledger, entry_id, text, scope=scope, created_at=T0 + hour * 3600)
        ledger.safety.add(
            [SafetyLinkRow(entry_id, scope, text_hash(text), field, subject, item, False, T0)]
        )
    ledger.entries.upsert(replace(ledger.entries.get("a4"), valid_to=T0 + 9 * 3600))  # superseded
    rows = ledger.safety.worth_reading("main", ["allergies"], ["user"], 10)
    ids = [r.entry_id for r in rows]
    assert ids[:3] == ["a5", "a3", "a2"]  # newest of each item: "", peanuts, penicillin
    assert ids[3:] == ["a1"]
    assert [
        r.entry_id for r in ledger.safety.worth_reading("main", ["allergies"], ["user"], 2)
    ] == [
        "a5",
        "a3",
    ]
    assert ledger.safety.worth_reading("main", [], ["user"], 5) == []
    assert sorted(r.entry_id for r in ledger.safety.of_entries(["a1", "s1", "m1"])) == [
        "a1",
        "m1",
        "s1",
    ]


def test_unextracted_entries_are_listed(ledger: Ledger) -> None:
    add(ledger, "e1", "Ana lives in Lyon")
    assert [i for i, _text in ledger.triples.unextracted("main", 10)] == ["e1"]


def _event(text: str, at: float, *, thread: str = "t1", role: str = "user") -> NewEventRow:
    return NewEventRow(
        "main", thread, role, text, at, "memory/scopes/x.md", 1, tuple(text.lower().split())
    )


def test_events_are_found_by_time_and_by_token(ledger: Ledger) -> None:
    ids = ledger.events.add(
        [
            _event("booked flight to lisbon", T0),
            _event("dinner at eight", T0 + 60, role="assistant"),
        ]
    )
    assert len(ids) == 2 and ids[0] < ids[1]
    recent = ledger.events.recent(EventFilter("main", since=T0 - 1))
    assert [e.text for e in recent] == ["dinner at eight", "booked flight to lisbon"]
    only_user = ledger.events.recent(EventFilter("main", since=T0 - 1, role="user"))
    assert [e.text for e in only_user] == ["booked flight to lisbon"]
    hits = ledger.events.matching(EventFilter("main", since=T0 - 1), ["lisbon"], 5)
    assert [h.event.text for h in hits] == ["booked flight to lisbon"]
    assert ledger.events.recent(EventFilter("u1", since=T0 - 1)) == []
    assert ledger.events.purge(T0 + 30) == 1
    assert [e.text for e in ledger.events.recent(EventFilter("main", since=0))] == [
        "dinner at eight"
    ]


def test_sessions_count_turns(ledger: Ledger) -> None:
    ledger.sessions.record_turn("main", "t1", T0, 2)
    ledger.sessions.record_turn("main", "t1", T0 + 5, 4)
    row = ledger.sessions.get("main", "t1")
    assert row is not None and row.last_seq == 4 and row.updated_at == T0 + 5
    assert ledger.sessions.get("u1", "t1") is None
    assert [r.thread_id for r in ledger.sessions.idle(T0 + 10)] == ["t1"]


def test_store_items_write_read_delete(ledger: Ledger) -> None:
    ledger.store.write(
        [
            ItemWrite("users.u1", "k1", '{"text": "likes 抹茶"}'),
            ItemWrite("users.u2", "k1", '{"text": "likes coffee"}'),
        ],
        T0,
    )
    item = ledger.store.get("users.u1", "k1", T0)
    assert item is not None and item.value == {"text": "likes 抹茶"}
    assert sorted(ledger.store.namespaces(T0)) == ["users.u1", "users.u2"]
    assert [i.ns for i in ledger.store.page("users.u1", None, T0, 10)] == ["users.u1"]
    ledger.store.write([ItemWrite("users.u1", "k1", None)], T0 + 1)
    assert ledger.store.get("users.u1", "k1", T0 + 1) is None


# -- reopening -------------------------------------------------------------


def test_reopening_keeps_everything_and_migrates_once(open_engines: Callable[[], Engines]) -> None:
    first = open_engines()
    add(first.ledger, "e1", "kept across opens")
    first.ledger.pending.insert(pending("p1", "waiting"))
    first.ledger.meta.set("k", "v")
    first.close()
    for _ in range(3):  # every open runs the migrations; none may change the data
        again = open_engines()
        assert again.ledger.entries.get("e1") is not None
        assert again.ledger.pending.get("p1") is not None
        assert again.ledger.meta.get("k") == "v"
        assert [r.op for r in again.ledger.entries.history("e1", "main")] == ["add"]
        again.close()

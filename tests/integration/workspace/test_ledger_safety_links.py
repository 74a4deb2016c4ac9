"""The ``safety_links`` repository: a link counts while its memory is live, current
and still has the text it was read from (rows written by hand here: the texts state
nothing the detector reads, so only these rows exist)."""

from __future__ import annotations

import time

from langmem_ext import Memory
from langmem_ext.workspace.records import SafetyLinkRow
from langmem_ext.workspace.store import text_hash


def _link(memory: Memory, entry_id: str, text: str, field: str, item: str) -> SafetyLinkRow:
    return SafetyLinkRow(entry_id, "main", text_hash(text), field, "user", item, False, time.time())


def test_links_count_only_for_live_current_unedited_memories(fake_memory: Memory) -> None:
    texts = ["Likes green tea", "Lives in Lyon", "Works as a nurse", "Plays the cello"]
    ids = fake_memory.add_many(texts)
    repo = fake_memory.workspace.ledger.safety
    fields = ["allergies", "medications", "surgeries", "dietary_restrictions"]
    items = ["peanuts", "aspirin", "knee surgery", "vegan"]
    rows = zip(ids, texts, fields, items, strict=True)
    repo.add([_link(fake_memory, i, t, f, x) for i, t, f, x in rows])
    repo.add([_link(fake_memory, ids[0], texts[0], "allergies", "peanuts")])  # again: one row
    assert sorted(r.item for r in repo.of_scope("main")) == sorted(items)
    fake_memory.delete(ids[1])  # deleted
    fake_memory.update(ids[2], "Works as a nurse in Lyon")  # superseded by a new version
    fake_memory.update(ids[3], "Plays the cello well", supersede=False)  # edited in place
    assert [r.entry_id for r in repo.of_scope("main")] == [ids[0]]
    assert repo.of_scope("main", fields=["medications"]) == []
    assert repo.of_scope("main", subjects=["sister"]) == []
    assert repo.of_scope("main", fields=[]) == []
    assert [r.field for r in repo.of_entries(ids)] == ["allergies"]
    assert repo.of_scope("other") == []


def test_links_of_given_memories_are_found_by_key_not_by_scanning_the_scope(
    fake_memory: Memory,
) -> None:
    """Read for every search's results: each id is looked up by the primary key, never
    by walking every link of the scope (the planner has no statistics to tell them apart)."""
    from langmem_ext.workspace.sqlite import safety_links as module

    ids = fake_memory.add_many([f"Plays chess on day {i}" for i in range(30)])
    rows = [
        _link(fake_memory, i, f"Plays chess on day {n}", "allergies", "peanuts")
        for n, i in enumerate(ids)
    ]
    fake_memory.workspace.ledger.safety.add(rows)
    conn = fake_memory.workspace.ledger.safety._conn
    sql = f"{module._BY_ENTRY} WHERE l.entry_id IN (?, ?)"
    plan = " | ".join(str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", ids[:2]))
    assert "safety_links_scope" not in plan, plan
    assert "SEARCH l USING INDEX sqlite_autoindex_safety_links_1 (entry_id=?)" in plan, plan
    assert sorted(
        r.entry_id for r in fake_memory.workspace.ledger.safety.of_entries(ids[:2])
    ) == sorted(ids[:2])


def test_links_worth_reading_are_read_again_once_the_ledger_changes(fake_memory: Memory) -> None:
    """The answer is kept between searches, and a write shows in the next one."""
    repo = fake_memory.workspace.ledger.safety
    first = fake_memory.add("Likes green tea")
    repo.add([_link(fake_memory, first, "Likes green tea", "allergies", "peanuts")])
    assert [r.entry_id for r in repo.worth_reading("main", ["allergies"], ["user"], 5)] == [first]
    assert [r.entry_id for r in repo.worth_reading("main", ["allergies"], ["user"], 5)] == [first]
    second = fake_memory.add("Plays the cello")
    repo.add([_link(fake_memory, second, "Plays the cello", "allergies", "penicillin")])
    ids = [r.entry_id for r in repo.worth_reading("main", ["allergies"], ["user"], 5)]
    assert sorted(ids) == sorted([first, second])
    fake_memory.delete(first)
    assert [r.entry_id for r in repo.worth_reading("main", ["allergies"], ["user"], 5)] == [second]


def test_links_of_given_memories_are_read_again_once_the_ledger_changes(
    fake_memory: Memory,
) -> None:
    """Each entry's links are kept between searches (only entries not seen yet are
    read), and a write of this or another process shows in the next read."""
    repo = fake_memory.workspace.ledger.safety
    texts = ["Likes green tea", "Plays the cello", "Lives in Lyon"]
    ids = fake_memory.add_many(texts)
    repo.add([_link(fake_memory, ids[0], texts[0], "allergies", "peanuts")])
    repo.add([_link(fake_memory, ids[0], texts[0], "medications", "aspirin")])

    def links(asked: list[str]) -> list[tuple[str, str]]:
        return [(r.entry_id, r.field) for r in repo.of_entries(asked)]

    both = [(ids[0], "allergies"), (ids[0], "medications")]
    assert links(ids[:2]) == both
    statements: list[str] = []
    conn = fake_memory.workspace.ledger._conn
    conn.set_trace_callback(statements.append)
    assert links([ids[1], ids[0], ids[0]]) == both
    assert links([ids[2], ids[0]]) == both
    conn.set_trace_callback(None)
    read = [s for s in statements if "safety_links" in s]
    assert len(read) == 1 and ids[2] in read[0] and ids[0] not in read[0]  # only the new one
    repo.add([_link(fake_memory, ids[1], texts[1], "surgeries", "knee surgery")])
    assert links(ids) == [*both, (ids[1], "surgeries")]
    fake_memory.update(ids[0], "Likes green tea a lot", supersede=False)  # edited in place
    assert links(ids) == [(ids[1], "surgeries")]
    other = Memory(settings=fake_memory.settings)
    try:
        other.delete(ids[1])  # another process's commit
    finally:
        other.close()
    assert links(ids) == []

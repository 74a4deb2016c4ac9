"""The ledger's other repositories give the same answers on SQLite and PostgreSQL.

Each test runs on both engines (``engine`` fixture) with the same calls and the same
expected results: the session hot log and its BM25, the store's items and keyword
search, the knowledge graph, sessions and conversations, profiles, safety links and
``meta``. The BM25 scores of PostgreSQL are compared with FTS5's own.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langmem_ext.core.errors import SchemaVersionError
from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.workspace.postgres.ledger import PgLedger
from langmem_ext.workspace.postgres.schema import PG_LEDGER_MIGRATIONS, migrate, schema_version
from langmem_ext.workspace.records import (
    CheckpointRow,
    EntryState,
    EventFilter,
    ExtractedEntry,
    ItemText,
    ItemWrite,
    NewEventRow,
    NewTriple,
    ProfileChangeRow,
    SafetyLinkRow,
)
from langmem_ext.workspace.sqlite.ledger import Ledger
from langmem_ext.workspace.sqlite.schema import LEDGER_MIGRATIONS, LEDGER_VERSION


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        led: Any = Ledger(tmp_path / "state.db")
    else:
        led = PgLedger(request.getfixturevalue("pg_url"))
    yield led
    led.close()


def _entry(entry_id: str, scope: str = "main", **kw: Any) -> EntryState:
    base: dict[str, Any] = dict(
        id=entry_id, scope=scope, path="MEMORY.md", category="fact", text_hash="h-" + entry_id,
        importance=1.0, created_at=100.0, updated_at=100.0, last_access=None, access_count=0,
        source="user", verified=False, deleted_at=None,
    )  # fmt: skip
    base.update(kw)
    return EntryState(**base)


_EVENTS = [
    ("t1", "user", "I'm allergic to peanuts and shellfish", 10.0),
    ("t1", "assistant", "Noted: no peanuts in the recipes", 11.0),
    ("t2", "user", "我对花生过敏，也不吃虾", 12.0),
    ("t2", "user", "The red bicycle is in the garage", 13.0),
    ("t1", "user", "peanuts peanuts everywhere at the fair", 14.0),
]


def _log(led: Any) -> list[int]:
    rows = [
        NewEventRow(
            "main",
            t,
            role,
            text,
            at,
            f"sessions/{t}.jsonl",
            i + 1,
            tuple(dict.fromkeys(index_tokens(text))),
        )
        for i, (t, role, text, at) in enumerate(_EVENTS)
    ]
    with led.transaction(durable=False):
        return list(led.events.add(rows))


def test_event_log_reads_and_bm25_agree(engine: Any) -> None:
    ids = _log(engine)
    assert ids == sorted(ids) and engine.events.last_id() == ids[-1]
    where = EventFilter("main", since=0.0)
    assert [e.text for e in engine.events.recent(where, 2)] == [_EVENTS[4][2], _EVENTS[3][2]]
    t1 = EventFilter("main", since=0.0, thread_id="t1", role="user")
    assert [e.at for e in engine.events.recent(t1)] == [14.0, 10.0]
    assert [e.id for e in engine.events.after(ids[1], 2)] == ids[2:4]
    assert set(engine.events.many(EventFilter("main", 0.0, until=12.5), ids)) == set(ids[:3])
    found = engine.events.matching(where, query_tokens("peanuts allergy"), 10)
    assert [m.event.id for m in found][:1] == [ids[0]]  # both tokens beat one, twice
    assert {m.event.id for m in found} == {ids[0], ids[1], ids[4]}
    zh = engine.events.matching(where, query_tokens("花生"), 10)
    assert [m.event.id for m in zh] == [ids[2]] and "花生" in zh[0].tokens
    assert engine.events.bm25_full(query_tokens("peanuts allergy")) > 0
    assert engine.events.unindexed(10) == []
    assert engine.events.purge(12.0) == 2
    assert [e.id for e in engine.events.recent(where)] == [ids[4], ids[3], ids[2]]
    assert {m.event.id for m in engine.events.matching(where, ["peanut"], 10)} == {ids[4]}


def test_bm25_scores_are_fts5_scores(tmp_path: Path, pg_url: str) -> None:
    """The same events scored by FTS5 and by the PostgreSQL table: equal to 1e-9."""
    lite, pg = Ledger(tmp_path / "state.db"), PgLedger(pg_url)
    try:
        _log(lite)
        _log(pg)
        where = EventFilter("main", since=0.0)
        for query in ("peanuts allergy", "red bicycle garage", "花生 虾", "peanuts"):
            toks = query_tokens(query)
            a = [(m.event.text, m.bm25) for m in lite.events.matching(where, toks, 10)]
            b = [(m.event.text, m.bm25) for m in pg.events.matching(where, toks, 10)]
            assert [t for t, _ in a] == [t for t, _ in b], query
            assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-9), query
            assert lite.events.bm25_full(toks) == pytest.approx(pg.events.bm25_full(toks))
    finally:
        lite.close()
        pg.close()


def _put(led: Any, key: str, *texts: str, ns: str = "n.a", ttl: float | None = None,
         now: float = 1000.0) -> None:  # fmt: skip
    with led.transaction():
        led.store.write(
            [
                ItemWrite(
                    ns,
                    key,
                    json.dumps({"t": list(texts), "n": len(texts)}),
                    tuple(ItemText(f"p{i}", f"{key}{i}", t, t) for i, t in enumerate(texts)),
                    ttl,
                )
            ],
            now=now,
        )


def test_store_items_and_their_keyword_search_agree(engine: Any) -> None:
    store = engine.store
    _put(engine, "k1", "red bicycle", "green tea")
    _put(engine, "k2", "ramen noodles", ns="n.a.b")
    _put(engine, "k3", "short lived tea", ttl=1)
    _put(engine, "k4", "tea", ns="n.ab")
    ids = {it.key: it.id for it in store.page("", None, 1001.0, 10)}
    assert store.get("n.a", "k1", 1001.0).value == {"t": ["red bicycle", "green tea"], "n": 2}
    assert [i.key for i in store.page("n.a", None, 1001.0, 10)] == ["k3", "k2", "k1"]
    assert [i.key for i in store.page("n.a", {"n": 2}, 1001.0, 10)] == ["k1"]
    assert [i.key for i in store.page("n.a", {"n": {"$gte": 1}}, 1001.0, 1, 1)] == ["k2"]
    hits = store.keyword_search("n.a", "tea", None, 1001.0, 10)
    assert {h.item_id for h in hits} == {ids["k1"], ids["k3"]}
    assert store.keyword_search("n.a", "tea", None, 5000.0, 10)[0].item_id == ids["k1"]
    assert store.keyword_search("", "tea", {"n": 1}, 5000.0, 10)[0].item_id == ids["k4"]
    assert store.full_match_score("bicycle") > store.full_match_score("tea") > 0
    assert sorted(store.indexed_namespaces("n.a")) == ["n.a", "n.a.b"]
    assert sorted(store.namespaces(5000.0)) == ["n.a", "n.a.b", "n.ab"]
    with engine.transaction():  # one text went, the other changed
        dropped = store.write([ItemWrite("n.a", "k1", "{}", (ItemText("p0", "k10", "tea", "tea"),))],
                              1000.0)  # fmt: skip
    assert dropped == {"n.a": ["k11"]}
    assert [t.vec_id for t in store.texts_of([ids["k1"]])] == ["k10"]
    assert store.keyword_search("", "bicycle", None, 1001.0, 10) == []
    todo = store.unembedded("n.a", "")
    assert {t.vec_id for t in todo} == {"k10", "k30"}
    store.mark_embedded(todo, "")
    assert store.embedded_count("n.a") == 2 and store.unembedded("n.a", "") == []
    assert set(store.vector_ids("n.a", None, 1001.0, 10)) == {"k10", "k30"}
    assert store.vector_ids("n.a", {"n": 1}, 1001.0, 10) == ["k30"]
    assert [t.item_id for t in store.texts_by_vector(["k30"], None, 1001.0)] == [ids["k3"]]
    with engine.transaction():
        count, dropped = store.sweep(2000.0)
    assert (count, dropped) == (1, {"n.a": ["k30"]})
    assert store.keyword_search("", "lived", None, 1500.0, 10) == []
    store.forget_vectors("n.a")
    assert store.embedded_count("n.a") == 0
    with engine.transaction():
        assert store.write([ItemWrite("n.a.b", "k2", None)], 2000.0) == {"n.a.b": ["k20"]}
    assert store.by_ids([ids["k2"]]) == {}


def _triple(s: str, p: str, o: str, negated: bool = False) -> NewTriple:
    return NewTriple(s.lower(), s, p, None, o.lower(), o, negated, None)


def test_knowledge_graph_reads_follow_the_entries(engine: Any) -> None:
    for i, at in (("m-a", 10.0), ("m-b", 20.0), ("m-c", 30.0)):
        engine.entries.upsert(_entry(i, created_at=at))
    assert [i for i, _ in engine.triples.unextracted("main", 10)] == ["m-a", "m-b", "m-c"]
    new = engine.triples.record(
        "main",
        [ExtractedEntry("m-a", "h-m-a", (_triple("User", "likes", "Tea"),)),
         ExtractedEntry("m-b", "h-m-b", (_triple("User", "likes", "Tea"),
                                          _triple("User", "lives_in", "Oslo")))],
        extractor="rules", at=50.0,
    )  # fmt: skip
    assert new == 2 and engine.triples.count("main") == 2
    assert engine.triples.unextracted_of("main", ["m-c", "m-a", "m-b"]) == [("m-c", "h-m-c")]
    live = engine.triples.live("main", ["user"], None, False, 10)
    assert [(r.triple.predicate, len(r.support)) for r in live] == [("likes", 2), ("lives_in", 1)]
    assert engine.triples.degrees("main") == {"user": 2, "tea": 1, "oslo": 1}
    engine.entries.set_valid_to("m-b", 40.0)
    assert [r.triple.predicate for r in engine.triples.live("main", ["oslo"], None, False, 5)] == []
    closed = engine.triples.live("main", ["oslo"], 35.0, False, 5)
    assert [r.valid_to for r in closed] == [40.0]  # counted at 35: supported then
    assert [r.valid_to for r in engine.triples.live("main", ["oslo"], None, True, 5)] == [40.0]
    assert [r.triple.object for r in engine.triples.current("main")] == ["Tea"]
    supported = engine.triples.supported_by(["m-b"])
    engine.entries.mark_deleted("m-b", 60.0)
    assert engine.triples.prune_entries(["m-b"], [t for t, _s, _o in supported]) == 1
    assert engine.triples.count() == 1 and engine.triples.prune() == 0
    assert engine.triples.clear("main") == 1 and engine.triples.count() == 0


def test_sessions_conversations_and_checkpoints_agree(engine: Any) -> None:
    assert engine.conversations.append("main", "t1", [("a", "{}"), ("b", "{}")], 5.0) == 1
    assert engine.conversations.append("main", "t1", [("c", "{}")], 6.0) == 3
    engine.conversations.mark_compacted("main", "t1", [1, 2])
    assert [m.seq for m in engine.conversations.messages("main", "t1")] == [3]
    every = engine.conversations.messages("main", "t1", include_compacted=True)
    assert [m.compacted for m in every] == [True, True, False]
    engine.sessions.record_turn("main", "t1", 6.0, 3)
    engine.sessions.record_turn("main", "t1", 4.0, 3)  # an older clock never goes back
    engine.sessions.mark_flushed("main", "t1", 2)
    engine.sessions.mark_summarized("main", "t1", 1)
    engine.sessions.set_episode("main", "t1", "ep-1", "2024-01-02", 7.0)
    engine.sessions.mark_first_turn("main", "t2", 8.0)
    row = engine.sessions.get("main", "t1")
    assert (row.updated_at, row.last_seq, row.flushed_seq, row.summarized_seq) == (6.0, 3, 2, 1)
    assert (row.episode_id, row.episode_day) == ("ep-1", "2024-01-02")
    assert [r.thread_id for r in engine.sessions.idle(6.0)] == ["t1"]
    first = engine.conversations.add_checkpoint(
        CheckpointRow("main", "t1", "checkpoint", "sum", 2, 2, True, 0, 9.0, 6.0)
    )
    second = engine.conversations.add_checkpoint(
        CheckpointRow("main", "t1", "final", "sum2", 3, 1, False, 1, 10.0, 6.0)
    )
    latest = engine.conversations.latest_checkpoint("main", "t1")
    assert second > first and latest.id == second and latest.used_fallback is False


def test_concurrent_appends_to_one_conversation_get_distinct_seqs(engine: Any) -> None:
    firsts: list[int] = []

    def append(i: int) -> None:
        firsts.append(engine.conversations.append("main", "t", [(f"m{i}", "{}")] * 3, 1.0))

    threads = [threading.Thread(target=append, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(firsts) == [1, 4, 7, 10, 13, 16]
    seqs = [m.seq for m in engine.conversations.messages("main", "t")]
    assert seqs == list(range(1, 19))


def test_profile_safety_links_and_meta_agree(engine: Any) -> None:
    engine.profile.record([
        ProfileChangeRow("main", "name", None, '"Ann"', "app", 1.0),
        ProfileChangeRow("main", "allergies", None, '["peanut"]', "agent", 2.0),
        ProfileChangeRow("main", "name", '"Ann"', '"Anna"', "hand-edit", 3.0),
        ProfileChangeRow("bob", "name", None, '"Bob"', "app", 4.0),
    ])  # fmt: skip
    assert [r.new_value for r in engine.profile.of_scope("main", "name")] == ['"Ann"', '"Anna"']
    assert engine.profile.latest("main") == {"name": '"Anna"', "allergies": '["peanut"]'}
    engine.entries.upsert(_entry("m-a", created_at=1.0))
    engine.entries.upsert(_entry("m-b", created_at=2.0))
    links = [
        SafetyLinkRow("m-b", "main", "h-m-b", "allergies", "user", "shrimp", False, 5.0),
        SafetyLinkRow("m-a", "main", "h-m-a", "allergies", "user", "peanut", False, 5.0),
        SafetyLinkRow("m-a", "main", "old", "medications", "user", "x", True, 5.0),
    ]
    engine.safety.add(links)
    assert engine.safety.of_scope("main") == [links[1], links[0]]  # oldest memory first
    assert engine.safety.of_scope("main", fields=[]) == []
    assert engine.safety.of_entries(["m-b"]) == [links[0]]
    engine.entries.set_valid_to("m-b", 9.0)
    assert engine.safety.of_scope("main", ["allergies"], ["user"]) == [links[1]]
    engine.meta.set("embed:a", "1")
    engine.meta.set("embed:b", "2")
    engine.meta.set("embed:a", "3")
    engine.meta.set("other", "x")
    assert engine.meta.with_prefix("embed:") == {"embed:a": "3", "embed:b": "2"}
    engine.meta.delete("embed:a")
    assert engine.meta.get("embed:a") is None and engine.meta.get("other") == "x"


def test_entry_reads_of_aggregates_agree(engine: Any) -> None:
    day = 86400.0
    for i, (imp, at) in enumerate([(0.05, day), (0.95, day), (1.0, 2 * day), (0.55, 2 * day)]):
        engine.entries.upsert(_entry(f"m-{i}", importance=imp, created_at=at, updated_at=at))
    engine.entries.upsert(_entry("m-old", importance=0.5, created_at=day, valid_to=3 * day))
    engine.entries.upsert(_entry("m-core", category="core", created_at=day, last_access=9 * day))
    dist = engine.entries.distribution("main", since=1.5 * day)
    assert dist.importance_tenths == (1, 0, 0, 0, 0, 1, 0, 0, 0, 3)
    assert dist.added_per_day == {"1970-01-03": 2}
    assert {a.id for a in engine.entries.activity("main")} == {"m-0", "m-1", "m-2", "m-3"}
    assert engine.entries.mark_accessed(["m-0", "m-0", "m-old", "nope"], scope="main", at=5.0) == 2
    assert engine.entries.get("m-0").access_count == 1
    engine.entries.set_importances([("m-1", 0.25)])
    assert engine.entries.get("m-1").importance == 0.25
    engine.entries.upsert(_entry("m-new", supersedes="m-old", created_at=3 * day))
    assert engine.entries.successor("m-old").id == "m-new"
    assert engine.entries.scopes() == ["main"]
    assert set(engine.entries.table_of_scope("main")) == {
        "m-0", "m-1", "m-2", "m-3", "m-old", "m-core", "m-new"
    }  # fmt: skip


def test_the_postgres_schema_has_the_sqlite_steps(pg_url: str) -> None:
    assert [m.version for m in PG_LEDGER_MIGRATIONS] == [m.version for m in LEDGER_MIGRATIONS]
    assert [m.description for m in PG_LEDGER_MIGRATIONS] == [
        m.description for m in LEDGER_MIGRATIONS
    ]
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert schema_version(conn) == 0
        assert migrate(conn, PG_LEDGER_MIGRATIONS[:4]) == [1, 2, 3, 4]
        assert migrate(conn) == [m.version for m in PG_LEDGER_MIGRATIONS[4:]]
        assert schema_version(conn) == LEDGER_VERSION and migrate(conn) == []
        conn.execute("UPDATE ledger_schema SET version = version + 1")
    with pytest.raises(SchemaVersionError, match="newer"):
        PgLedger(pg_url)


def test_replicas_opening_together_migrate_once(pg_url: str) -> None:
    opened: list[PgLedger] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            opened.append(PgLedger(pg_url, max_size=2))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == [] and len(opened) == 4
        assert opened[0].query("SELECT count(*) FROM ledger_schema") == [(1,)]
        opened[1].entries.upsert(_entry("m-1"))
        assert opened[2].entries.exists("m-1")
    finally:
        for led in opened:
            led.close()

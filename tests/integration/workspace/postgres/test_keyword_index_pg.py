"""The PostgreSQL keyword index answers as the SQLite one does: the same docs, the
same BM25 scores as FTS5 (Chinese included), the same doc-table bookkeeping."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langmem_ext.workspace.docs import Doc, FileStamp
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.keyword_index import PgKeywordIndex
from langmem_ext.workspace.prose import parse_prose
from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex
from langmem_ext.workspace.sqlite.passage_rows import Passage, ProseFile

TEXTS = {
    "alice": [
        "Alice likes climbing at the gym on Mondays",
        "主人喜欢吃拉面，尤其是豚骨拉面",
        "Alice's cat is called Miso",
        "上周去了北京出差，住在朝阳区",
        "climbing climbing climbing: a long day at the gym with the climbing club",
    ],
    "bob": [
        "Bob likes ramen and climbing",
        "Bob 的猫叫 Miso，喜欢吃鱼",
        "下周去北京开会",
    ],
}
QUERIES = ["climbing gym", "拉面", "Miso 猫", "北京", "ramen 拉面 climbing", "cats", "nothing"]


def _doc(scope: str, i: int, text: str, **kw: Any) -> Doc:
    base: dict[str, Any] = dict(
        id=f"{scope}-{i}", scope=scope, path=f"{scope}/MEMORY.md", line=i + 1, category="fact",
        text=text, text_hash=f"h{i}", created_at=1.0, updated_at=1.0, importance=1.0,
    )  # fmt: skip
    base.update(kw)
    return Doc(**base)


def _all_docs() -> list[Doc]:
    return [_doc(s, i, t) for s, texts in TEXTS.items() for i, t in enumerate(texts)]


@pytest.fixture(params=["sqlite", "postgresql"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        kw: Any = KeywordIndex(tmp_path / "index.db")
        yield kw
        kw.close()
        return
    db = PgConnections(request.getfixturevalue("pg_url"))
    yield PgKeywordIndex(db)
    db.close()


def test_bm25_gives_fts5_s_docs_and_scores(both: tuple[KeywordIndex, PgKeywordIndex]) -> None:
    lite, pg = both
    for d in _all_docs():  # one write per doc, interleaved scopes as a server writes
        lite.apply(upserts=[d])
        pg.apply(upserts=[d])
    for scope in TEXTS:
        for q in QUERIES:
            a, b = lite.bm25(scope, q, 10), pg.bm25(scope, q, 10)
            assert [d for d, _ in a] == [d for d, _ in b], (scope, q)
            assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-9), (scope, q)
            assert lite.bm25_full(q) == pytest.approx(pg.bm25_full(q), rel=1e-12), q
            assert lite.substring(scope, q, 10) == pg.substring(scope, q, 10), (scope, q)
    assert [d.id for d, _ in pg.bm25("alice", "拉面", 5)] == ["alice-1"]
    assert pg.bm25("nobody", "拉面", 5) == []


def test_a_large_index_matches_on_the_query_s_rarer_tokens(
    both: tuple[KeywordIndex, PgKeywordIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    from langmem_ext.workspace.postgres import keyword_index as pg_module
    from langmem_ext.workspace.sqlite import keyword_index as lite_module

    docs = [
        _doc("main", i, "meeting notes" + (" kiwi" if i in (7, 42) else "")) for i in range(200)
    ]
    for kw in both:
        kw.apply(upserts=docs)
    monkeypatch.setattr(lite_module, "GATE_MIN_DOCS", 100)
    monkeypatch.setattr(pg_module, "GATE_MIN_DOCS", 100)
    lite, pg = both
    for q in ("meeting kiwi", "meeting notes"):
        a, b = lite.bm25("main", q, 500), pg.bm25("main", q, 500)
        assert {d.id for d, _ in a} == {d.id for d, _ in b}, q
        assert sorted(s for _, s in a) == pytest.approx(sorted(s for _, s in b), rel=1e-9), q
    assert {d.id for d, _ in pg.bm25("main", "meeting kiwi", 500)} == {"main-7", "main-42"}


def test_the_doc_table_bookkeeping_agrees(index: Any) -> None:
    docs = _all_docs()
    stamp = FileStamp("alice/MEMORY.md", "alice", "fh", 5, 10)
    assert index.apply(upserts=docs, files=[stamp], generation=True) == 1
    assert index.file_stamps("alice") == {stamp.path: stamp} and index.file_stamps("bob") == {}
    assert index.count() == 8 and index.count("bob") == 3
    assert index.docs(["alice-0", "nope"]) == {"alice-0": docs[0]}
    assert [d.id for d in index.scope_docs("bob")] == ["bob-0", "bob-1", "bob-2"]
    assert index.has_text("bob", TEXTS["bob"][2]) and not index.has_text("alice", TEXTS["bob"][2])
    assert index.ids_with_text("alice", TEXTS["alice"][0]) == ["alice-0"]
    assert index.category_counts("alice") == {"fact": 5}
    assert index.lines_of_path("bob/MEMORY.md") == {"bob-0": 1, "bob-1": 2, "bob-2": 3}
    # lines: two inserted above line 1 of bob's file, then one doc moved
    index.apply(shifts=[("bob/MEMORY.md", 1, 2)], lines=[(9, "bob-0")])
    assert index.lines_of_path("bob/MEMORY.md") == {"bob-0": 9, "bob-1": 4, "bob-2": 5}
    assert len(index.vector_todo()) == 8 and index.vector_todo_count() == 8
    vecs = np.array([[1, 0, 0, 0], [0.8, 0.6, 0, 0], [0, 0, 1, 0]], dtype=np.float32)
    done = [("alice-0", "h0"), ("alice-1", "h1"), ("alice-2", "h2")]
    index.mark_vectors(done, model="m", vectors=vecs)
    assert index.vector_todo_count() == 5
    found = index.docs_with_vectors(["alice-0", "alice-3"], "m")
    assert np.allclose(found["alice-0"][1], vecs[0]) and found["alice-3"][1] is None
    assert index.missing_vectors("m") == []
    nearest = index.nearest("alice", "m", vecs[1].tolist(), 2)
    assert [i for i, _s in nearest] == ["alice-1", "alice-0"]
    assert [s for _i, s in nearest] == pytest.approx([1.0, 0.8], abs=1e-6)
    # a changed text needs a new vector; a move of scope queues the old vector's delete
    index.apply(upserts=[_doc("alice", 0, "Alice likes bouldering", text_hash="h0b")])
    assert "alice-0" in {d.id for d in index.vector_todo()}
    assert index.docs_with_vectors(["alice-0"], "m")["alice-0"][1] is None
    moved = Doc(
        "alice-1", "bob", "bob/MEMORY.md", 9, "fact", TEXTS["alice"][1], "h1", 1.0, 1.0, 1.0
    )
    index.apply(upserts=[moved])
    assert index.vector_deletes() == [("alice-1", "alice")]
    assert [d.id for d, _ in index.bm25("bob", "拉面", 5)] == ["alice-1"]
    assert index.bm25("alice", "拉面", 5) == []
    index.apply(deletes=[("alice-2", "alice")], drop_files=[stamp.path])
    assert sorted(index.vector_deletes()) == [("alice-1", "alice"), ("alice-2", "alice")]
    assert index.docs(["alice-2"]) == {} and index.file_stamps() == {}
    index.mark_vectors([], deleted=["alice-1", "alice-2"])
    assert index.vector_deletes() == []
    index.set_importances([("bob-0", 0.25)])
    index.set_importance("bob-1", 0.5)
    importance = {d.id: d.importance for d in index.scope_docs("bob")}
    assert (importance["bob-0"], importance["bob-1"], importance["bob-2"]) == (0.25, 0.5, 1.0)
    index.keep_vectors("m2", {"bob-0": [1.0, 0.0]}, {"bob-0": "stale"})
    assert index.docs_with_vectors(["bob-0"], "m2")["bob-0"][1] is None  # not its text
    index.set_meta("k", "v")
    assert index.get_meta("k") == "v" and index.bump_generation() == 2


def test_neighbours_and_previous_entries_follow_the_file_sections(index: Any) -> None:
    docs = [_doc("main", i, f"note number {i}") for i in range(6)]
    docs.append(_doc("main", 9, "a preference", category="preference", line=4))
    index.apply(upserts=docs)
    around = index.neighbours("main", [("main-2", "main/MEMORY.md", 3, "fact")], 2)
    assert around == {"main-2": [(-2, "main-0"), (-1, "main-1"), (1, "main-3"), (2, "main-4")]}
    got, before = index.docs_with_previous_vectors(["main-0", "main-3", "main-9"], "m", "main")
    assert set(got) == {"main-0", "main-3", "main-9"}
    assert before["main-3"].id == "main-2" and before["main-3"].text == "note number 2"
    assert "main-0" not in before and "main-9" not in before


_NOTES = """# Memory

## Facts

We moved to Oslo in the spring; the flat is near the harbour and gets the
morning sun.

- likes green tea

## Preferences

旅行的时候喜欢住在安静的小旅馆，早上去市场买水果。

Climbing on Mondays and Thursdays keeps the week in shape.
"""


def _prose(path: str, scope: str, text: str, file_hash: str) -> ProseFile:
    return ProseFile(path, scope, file_hash, parse_prose(text, path), 100.0)


def test_prose_passages_give_the_same_answers_and_scores(
    both: tuple[KeywordIndex, PgKeywordIndex],
) -> None:
    stamp = FileStamp("MEMORY.md", "main", "f1", 1, 1)
    other = FileStamp("memory/scopes/u1/LONG_TERM.md", "u1", "g1", 1, 1)
    for kw in both:
        kw.apply(
            files=[stamp, other],
            prose=[_prose("MEMORY.md", "main", _NOTES, "f1"),
                   _prose(other.path, "u1", "# Memory\n\nThe harbour café opens at seven.\n", "g1")],
        )  # fmt: skip
    lite, pg = both
    for q in ("harbour sun", "小旅馆 水果", "climbing", "Oslo flat harbour"):
        a, b = lite.prose_bm25("main", q, 10), pg.prose_bm25("main", q, 10)
        assert [p for p, _ in a] == [p for p, _ in b], q
        assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-9), q
        assert lite.prose_bm25_full(q) == pytest.approx(pg.prose_bm25_full(q), rel=1e-12)
    for kw in both:
        assert kw.prose_lagging("main") == [] and kw.has_passages("prose", "main")
        kw.apply(shifts=[("MEMORY.md", 1, 2)], files=[FileStamp("MEMORY.md", "main", "f2", 2, 2)])
        assert kw.prose_lagging("main") == []  # the prose followed the stamp
        kw.apply(files=[FileStamp("MEMORY.md", "main", "f3", 3, 3)], generation=False)
    assert [p.line for p in lite.passages_of_path("prose", "MEMORY.md")] == [
        p.line for p in pg.passages_of_path("prose", "MEMORY.md")
    ]
    todo_lite, todo_pg = lite.passage_todo("prose"), pg.passage_todo("prose")
    assert [p for _r, p in todo_lite] == [p for _r, p in todo_pg]
    vecs = np.eye(len(todo_pg), 8, dtype=np.float32)
    from langmem_ext.workspace.docs import text_hash

    for kw, todo in ((lite, todo_lite), (pg, todo_pg)):
        kw.mark_passages([(r, text_hash(p.indexed_text)) for r, p in todo], "m", vecs)
        assert kw.passage_todo("prose") == []
    main_count = sum(1 for _r, p in todo_pg if p.scope == "main")
    a = lite.passage_nearest("prose", "main", "m", vecs[1].tolist(), 2)
    b = pg.passage_nearest("prose", "main", "m", vecs[1].tolist(), 2)
    assert a is not None and b is not None and [p for p, _ in a] == [p for p, _ in b]
    assert len(pg.passage_nearest("prose", "main", "m", vecs[0].tolist(), 99) or []) == main_count
    vid = b[0][0].vector_id
    assert pg.passages_by_vector_id("prose", [vid, "x#^y"]) == {vid: b[0][0]}
    for kw in both:  # the file is gone: its prose goes, its vectors are queued
        kw.apply(drop_files=["MEMORY.md"])
        assert not kw.has_passages("prose", "main")
    assert sorted(lite.vector_deletes()) == sorted(pg.vector_deletes())


def test_event_passages_are_added_searched_and_purged(index: Any) -> None:
    events = [
        Passage("event", f"ev-{i}", "main", "memory/transcripts/2026-01-02.md", i, i, "episode",
                "", role, text, float(10 * i))
        for i, (role, text) in enumerate([("user", "I like tea"), ("assistant", "Noted"),
                                          ("user", "Tea again")], start=1)
    ]  # fmt: skip
    index.add_events(events, "m", np.eye(3, 4, dtype=np.float32))
    found = index.passage_nearest("event", "main", "m", [1, 0, 0, 0], 5, role="user")
    assert [p.id for p, _ in found] == ["ev-1", "ev-3"]
    since = index.passage_nearest("event", "main", "m", [1, 0, 0, 0], 5, since=15.0)
    assert {p.id for p, _ in since} == {"ev-2", "ev-3"}
    assert index.purge_event_passages(25.0) == 2
    assert index.passage_count("event", "main") == 1
    assert sorted(i for i, _s in index.vector_deletes()) == [
        "memory/transcripts/2026-01-02.md#^ev-1",
        "memory/transcripts/2026-01-02.md#^ev-2",
    ]


def _layout(n: int) -> list[Doc]:
    """``n`` docs over two files and two categories, some bullets several lines
    long, two on one line (seeded)."""
    rng = np.random.default_rng(5)
    docs, line = [], {"main/MEMORY.md": 1, "main/memory/2026-01-02.md": 1}
    for i in range(n):
        path = "main/MEMORY.md" if rng.random() < 0.7 else "main/memory/2026-01-02.md"
        cat = "fact" if rng.random() < 0.8 else "preference"
        docs.append(_doc("main", i, f"note {i}", path=path, category=cat, line=line[path]))
        line[path] += 0 if rng.random() < 0.05 else int(rng.integers(1, 4))
    return docs


def test_neighbours_and_previous_read_only_the_anchors_surroundings(
    both: tuple[KeywordIndex, PgKeywordIndex],
) -> None:
    lite, pg = both
    docs = _layout(1500)
    for index in (lite, pg):
        index.apply(upserts=docs)
    rng = np.random.default_rng(9)
    picks = [docs[int(i)] for i in rng.choice(len(docs), size=12, replace=False)]
    anchors = [(d.id, d.path, d.line, d.category) for d in picks]
    anchors.append(("main-3", docs[3].path, docs[3].line + 40, docs[3].category))  # moved
    anchors.append(("gone", "main/MEMORY.md", 5, "fact"))
    ids = [d.id for d in picks]
    read: list[int] = []
    query = pg._q

    def counted(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        rows = query(sql, params)
        read.append(len(rows))
        return rows

    pg._q = counted  # type: ignore[method-assign]
    for window in (1, 2, 3):
        assert pg.neighbours("main", anchors, window) == lite.neighbours("main", anchors, window)
    got, before = pg.docs_with_previous_vectors(ids, "m", "main")
    want, want_before = lite.docs_with_previous_vectors(ids, "m", "main")
    assert set(got) == set(want) and before == want_before and len(before) >= 10
    # each anchor's surroundings, never the scope's 1,500 entries
    assert max(read) <= len(anchors) * (2 * 5 + 1)


def test_exact_search_reads_the_vectors_again_only_after_a_write(pg_url: str) -> None:
    db_a, db_b = PgConnections(pg_url), PgConnections(pg_url)
    a, b = PgKeywordIndex(db_a), PgKeywordIndex(db_b)  # two replicas of one database
    rng = np.random.default_rng(3)
    m = rng.standard_normal((40, 8)).astype(np.float32)
    docs = [_doc("main", i, f"note {i}") for i in range(40)]
    a.apply(upserts=docs[:30], model="m", embedded=[(d.id, d.text_hash) for d in docs[:30]],
            vectors=m[:30])  # fmt: skip
    read: list[str] = []
    query = a._q

    def counted(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        read.append(sql)
        return query(sql, params)

    a._q = counted  # type: ignore[method-assign]

    def vector_reads() -> int:
        return sum("v.vec" in sql for sql in read)

    q = m[35].tolist()
    first = a.nearest("main", "m", q, 3)
    assert first is not None and first[0][0] != "main-35" and vector_reads() == 1
    assert a.nearest("main", "m", q, 3) == first and vector_reads() == 1  # nothing changed
    b.apply(upserts=docs[30:], model="m", embedded=[(d.id, d.text_hash) for d in docs[30:]],
            vectors=m[30:])  # fmt: skip
    after = a.nearest("main", "m", q, 3)
    assert after is not None and after[0][0] == "main-35" and vector_reads() == 2
    b.apply(deletes=[("main-35", "main")])
    gone = a.nearest("main", "m", q, 3)
    assert gone is not None and "main-35" not in [i for i, _ in gone] and vector_reads() == 3
    b.apply(upserts=[_doc("main", 36, "changed", text_hash="new")])  # not embedded yet
    assert a.nearest("main", "m", q, 3) is not None and vector_reads() == 4
    db_a.close()
    db_b.close()

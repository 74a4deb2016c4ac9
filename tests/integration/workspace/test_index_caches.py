"""The keyword index's in-memory caches (section order, docs with kept vectors).

Search answers from them after a scope's first search; these tests check that no
write — of this index object, of another one, of another process — leaves them
serving stale docs, vectors, neighbours or predecessors.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from langmem_ext import Memory
from langmem_ext.workspace.doc_cache import DocCache
from langmem_ext.workspace.docs import Doc
from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex

MODEL = "test-model"


def _doc(
    i: int,
    line: int,
    *,
    text: str | None = None,
    category: str = "fact",
    path: str = "MEMORY.md",
    scope: str = "main",
    importance: float = 1.0,
) -> Doc:
    text = text if text is not None else f"entry {i}"
    return Doc(
        id=f"m-{i:03d}", scope=scope, path=path, line=line, category=category, text=text,
        text_hash=f"h-{text}", created_at=1.0, updated_at=1.0, importance=importance,
    )  # fmt: skip


def _vec(seed: int) -> list[float]:
    return [float(x) for x in np.random.default_rng(seed).standard_normal(8)]


def _embed(kw: KeywordIndex, docs: list[Doc]) -> None:
    kw.mark_vectors([(d.id, d.text_hash) for d in docs], model=MODEL,
                    vectors=[_vec(hash(d.text) % 1000) for d in docs])  # fmt: skip


def _fresh_read(path: Path, ids: list[str], scope: str = "main") -> tuple[dict, dict]:  # type: ignore[type-arg]
    """What a brand-new index object (no cache) answers."""
    kw = KeywordIndex(path, cache_max_entries=0)
    try:
        docs = kw.docs_with_vectors(ids, MODEL)
        _d, prev = kw.docs_with_previous_vectors(ids, MODEL, scope)
        return docs, prev
    finally:
        kw.close()


def _same(a: dict, b: dict) -> bool:  # type: ignore[type-arg]
    """Equal docs and vectors (``None`` or array) per id."""
    if a.keys() != b.keys():
        return False
    for key in a:
        (x, xv), (y, yv) = a[key], b[key]
        if x != y or (xv is None) != (yv is None):
            return False
        if xv is not None and not np.array_equal(xv, yv):
            return False
    return True


def _filled(path: Path, **options: int) -> KeywordIndex:
    kw = KeywordIndex(path, **options)
    docs = [_doc(i, 2 + i) for i in range(6)] + [_doc(10, 20, category="episode")]
    kw.apply(upserts=docs)
    _embed(kw, docs)
    return kw


@pytest.fixture
def index(tmp_path: Path) -> Iterator[KeywordIndex]:
    kw = _filled(tmp_path / "index.db")
    yield kw
    kw.close()


IDS = [f"m-{i:03d}" for i in (0, 1, 2, 3, 4, 5, 10)]


def _check(index: KeywordIndex) -> None:
    docs = index.docs_with_vectors(IDS, MODEL, "main")
    _d, prev = index.docs_with_previous_vectors(IDS, MODEL, "main")
    ref_docs, ref_prev = _fresh_read(index.path, IDS)
    assert _same(docs, ref_docs)
    assert prev.keys() == ref_prev.keys()
    for key, (pid, text, vec) in prev.items():
        rpid, rtext, rvec = ref_prev[key]
        assert pid == rpid and text == rtext
        assert (vec is None) == (rvec is None)
        assert vec is None or np.array_equal(vec, rvec)


def test_cached_answers_equal_uncached_ones_after_every_kind_of_write(index: KeywordIndex) -> None:
    _check(index)  # loads the scope
    index.set_importance("m-002", 3.0)
    _check(index)
    assert index.docs_with_vectors(["m-002"], MODEL, "main")["m-002"][0].importance == 3.0
    changed = _doc(3, 5, text="entry three, edited")
    index.apply(upserts=[changed])  # new text: its vector is now stale
    _check(index)
    assert index.docs_with_vectors(["m-003"], MODEL, "main")["m-003"][1] is None
    _embed(index, [changed])
    _check(index)
    index.apply(deletes=[("m-001", "main")])  # m-002's predecessor is now m-000
    _check(index)
    assert index.docs_with_previous_vectors(["m-002"], MODEL, "main")[1]["m-002"][0] == "m-000"
    index.apply(shifts=[("MEMORY.md", 3, 10)])  # lines inserted after line 3
    _check(index)
    assert index.docs_with_vectors(["m-004"], MODEL, "main")["m-004"][0].line == 16
    index.apply(upserts=[_doc(20, 4, text="new entry")])  # inserted between 0 and 2
    _check(index)
    assert index.docs_with_previous_vectors(["m-002"], MODEL, "main")[1]["m-002"][0] == "m-020"
    index.apply(lines=[(18, "m-000")])  # moved to the end of its section
    _check(index)
    assert index.neighbours("main", [("m-000", "MEMORY.md", 18, "fact")], 1) == {
        "m-000": [(-1, "m-005")]
    }


def test_a_scope_too_large_to_hold_keeps_the_entries_it_read_and_never_a_stale_one(
    tmp_path: Path,
) -> None:
    kw = _filled(tmp_path / "index.db", cache_max_entries=3)  # the scope has 7
    try:
        _check(kw)
        cache = kw._doc_caches[MODEL]
        assert cache.is_skipped("main") and not cache.is_loaded("main")
        assert set(cache.split(IDS)[0]) == set(IDS)  # kept from the reads above
        test_cached_answers_equal_uncached_ones_after_every_kind_of_write(kw)
    finally:
        kw.close()


def test_recent_entries_are_bounded_least_recently_used_first() -> None:
    cache = DocCache(recent_max=2)
    cache.skip("big")
    cache.load("small", [("m-s", (_doc(9, 1, scope="small"), None))])
    entries = {f"m-{i:03d}": (_doc(i, i, scope="big"), None) for i in range(3)}
    cache.put({"m-000": entries["m-000"], "m-001": entries["m-001"]})
    assert cache.split(["m-000"])[0].keys() == {"m-000"}  # now used after m-001
    cache.put({"m-002": entries["m-002"]})
    assert cache.split(["m-000", "m-001", "m-002", "m-s"]) == (
        {
            "m-000": entries["m-000"],
            "m-002": entries["m-002"],
            "m-s": cache.split(["m-s"])[0]["m-s"],
        },
        ["m-001"],
    )
    cache.put({"m-x": (_doc(7, 7, scope="other"), None)})  # neither held nor skipped
    assert cache.split(["m-x"])[1] == ["m-x"]
    cache.drop(["m-000"])
    assert cache.split(["m-000"])[1] == ["m-000"]
    cache.drop_path("MEMORY.md")
    assert cache.split(["m-002", "m-s"])[1] == ["m-002", "m-s"]


def test_appended_docs_join_the_cached_section_order_in_place(index: KeywordIndex) -> None:
    _check(index)  # loads the scope's section order
    cached = index._sections["main"]
    index.apply(upserts=[_doc(30, 40), _doc(31, 41), _doc(32, 30, category="episode")])
    assert index._sections["main"] is cached  # appended, not rebuilt
    ids = [*IDS, "m-030", "m-031", "m-032"]
    _d, prev = index.docs_with_previous_vectors(ids, MODEL, "main")
    fresh = KeywordIndex(index.path, cache_max_entries=0)
    try:
        _d2, ref = fresh.docs_with_previous_vectors(ids, MODEL, "main")
        anchors = [("m-031", "MEMORY.md", 41, "fact"), ("m-032", "MEMORY.md", 30, "episode")]
        assert index.neighbours("main", anchors, 2) == fresh.neighbours("main", anchors, 2)
    finally:
        fresh.close()
    assert {k: v[0] for k, v in prev.items()} == {k: v[0] for k, v in ref.items()}
    assert prev["m-031"][0] == "m-030" and prev["m-032"][0] == "m-010"
    index.apply(upserts=[_doc(33, 3)])  # not at the end of its section: rebuilt
    assert "main" not in index._sections
    _check(index)


def test_another_connection_s_write_is_seen(index: KeywordIndex) -> None:
    _check(index)
    other = KeywordIndex(index.path)
    try:
        other.set_importance("m-004", 2.5)
        other.apply(upserts=[_doc(30, 3, text="from elsewhere")])
    finally:
        other.close()
    _check(index)
    assert index.docs_with_vectors(["m-004"], MODEL, "main")["m-004"][0].importance == 2.5
    assert index.docs_with_previous_vectors(["m-002"], MODEL, "main")[1]["m-002"][0] == "m-030"


def test_another_process_s_write_is_seen(index: KeywordIndex) -> None:
    _check(index)
    code = (
        "import sys; from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex\n"
        "kw = KeywordIndex(__import__('pathlib').Path(sys.argv[1]))\n"
        "kw.set_importance('m-005', 4.0); kw.apply(deletes=[('m-004', 'main')]); kw.close()\n"
    )
    subprocess.run([sys.executable, "-c", code, str(index.path)], check=True, timeout=60)
    _check(index)
    assert "m-004" not in index.docs_with_vectors(["m-004"], MODEL, "main")
    assert index.docs_with_vectors(["m-005"], MODEL, "main")["m-005"][0].importance == 4.0


def test_cached_vectors_are_read_only(index: KeywordIndex) -> None:
    _d, vec = index.docs_with_vectors(["m-000"], MODEL, "main")["m-000"]
    assert vec is not None
    with pytest.raises(ValueError):
        vec[0] = 1.0  # a caller changing it would change every later search
    assert index.docs_with_vectors(["m-000"], MODEL, "main")["m-000"][1] is not None


def test_other_scopes_are_not_served(index: KeywordIndex) -> None:
    index.apply(upserts=[_doc(40, 2, path="memory/scopes/b/MEMORY.md", scope="b")])
    index.docs_with_vectors(IDS, MODEL, "main")
    found = index.docs_with_previous_vectors(["m-040", "m-000"], MODEL, "main")
    # the docs lookup is by id (the caller checks scopes); predecessors only in scope
    assert found[0]["m-040"][0].scope == "b"
    assert "m-040" not in found[1]


@pytest.mark.parametrize("limit", [0, 3])
def test_scopes_over_the_limit_read_sqlite_and_answer_the_same(tmp_path: Path, limit: int) -> None:
    kw = KeywordIndex(tmp_path / "index.db", cache_max_entries=limit)
    try:
        docs = [_doc(i, 2 + i) for i in range(6)]
        kw.apply(upserts=docs)
        _embed(kw, docs)
        got = kw.docs_with_vectors(IDS, MODEL, "main")
        kw.set_importance("m-001", 2.0)
        again = kw.docs_with_vectors(IDS, MODEL, "main")
        assert _same(got, _fresh_read(kw.path, IDS)[0]) is False  # importance changed since
        assert _same(again, _fresh_read(kw.path, IDS)[0])
        assert len(again) == 6
    finally:
        kw.close()


def test_search_sees_an_importance_boost_and_a_hand_edit(fake_memory: Memory) -> None:
    ids = fake_memory.add_many(["Alice likes green tea", "Bob likes black coffee"])
    first = fake_memory.search("green tea", k=2)
    assert first[0].id == ids[0]
    fake_memory.workspace.keyword.set_importance(ids[0], 3.0)
    boosted = fake_memory.search("green tea", k=2)
    assert boosted[0].importance == 3.0 and boosted[0].score > first[0].score
    md = fake_memory.workspace.layout.root / "MEMORY.md"
    md.write_text(md.read_text(encoding="utf-8").replace("green tea", "jasmine tea"), "utf-8")
    edited = fake_memory.search("jasmine tea", k=2)
    assert edited[0].text == "Alice likes jasmine tea"


# -- exact nearest neighbours over kept vectors ------------------------------------


def _brute(kw: KeywordIndex, scope: str, query: list[float], n: int) -> list[str]:
    docs = kw.scope_docs(scope)
    found = kw.docs_with_vectors([d.id for d in docs], MODEL)
    sims = []
    for d in docs:
        vec = found[d.id][1]
        if vec is None:
            continue
        v = np.asarray(vec, dtype=np.float64)
        q = np.asarray(query, dtype=np.float64)
        sims.append((-(v @ q) / (np.linalg.norm(v) * np.linalg.norm(q)), d.id))
    return [i for _s, i in sorted(sims)[:n]]


@pytest.mark.parametrize("seed", range(3))
def test_nearest_is_the_exact_cosine_ranking(index: KeywordIndex, seed: int) -> None:
    q = _vec(1000 + seed)
    got = index.nearest("main", MODEL, q, 4)
    assert got is not None
    assert [i for i, _s in got] == _brute(index, "main", q, 4)
    assert all(a[1] >= b[1] for a, b in pairwise(got))
    assert len(index.nearest("main", MODEL, q, 100) or []) == 7  # all, never more


def test_nearest_follows_writes(index: KeywordIndex) -> None:
    q = _vec(7)
    index.nearest("main", MODEL, q, 3)  # builds the matrix
    new = _doc(50, 40, text="a new entry")
    index.apply(upserts=[new])
    assert "m-050" not in [
        i for i, _s in index.nearest("main", MODEL, q, 100) or []
    ]  # not embedded
    index.mark_vectors([(new.id, new.text_hash)], model=MODEL, vectors=[q])  # its vector is q
    got = index.nearest("main", MODEL, q, 1)
    assert got is not None and got[0][0] == "m-050" and got[0][1] == pytest.approx(1.0, abs=1e-5)
    index.apply(deletes=[("m-050", "main")])
    assert "m-050" not in [i for i, _s in index.nearest("main", MODEL, q, 100) or []]
    index.apply(upserts=[_doc(2, 4, text="entry two, edited")])  # vector stale: not searched
    assert "m-002" not in [i for i, _s in index.nearest("main", MODEL, q, 100) or []]


def test_nearest_never_crosses_scopes(index: KeywordIndex) -> None:
    other = _doc(60, 2, path="memory/scopes/b/MEMORY.md", scope="b")
    index.apply(upserts=[other])
    q = _vec(11)
    index.mark_vectors([(other.id, other.text_hash)], model=MODEL, vectors=[q])
    assert "m-060" not in [i for i, _s in index.nearest("main", MODEL, q, 100) or []]
    assert [i for i, _s in index.nearest("b", MODEL, q, 100) or []] == ["m-060"]


def test_nearest_leaves_it_to_chroma_when_it_cannot_answer(tmp_path: Path) -> None:
    kw = KeywordIndex(tmp_path / "index.db", exact_max_entries=3)
    try:
        docs = [_doc(i, 2 + i) for i in range(3)]
        kw.apply(upserts=docs)
        _embed(kw, docs)
        assert kw.nearest("main", MODEL, _vec(1), 2) is not None
        other = sqlite3.connect(kw.path)  # a writer that embedded m-001 but kept no copy
        with other:
            other.execute("DELETE FROM kept_vectors WHERE id = 'm-001'")
        other.close()
        assert kw.nearest("main", MODEL, _vec(1), 2) is None
        _embed(kw, [docs[1]])
        assert kw.nearest("main", MODEL, _vec(1), 2) is not None
        assert kw.nearest("main", MODEL, [1.0, 2.0], 2) is None  # another dimension
        more = _doc(3, 9)
        kw.apply(upserts=[more])
        _embed(kw, [more])
        assert kw.nearest("main", MODEL, _vec(1), 2) is None  # 4 entries: over the limit
    finally:
        kw.close()


def test_search_answers_the_same_exact_or_through_chroma(tmp_path: Path) -> None:
    from langmem_ext.core.config import Settings

    texts = ["Alice likes green tea", "Bob drinks black coffee", "主人喜欢吃拉面",
             "Carol works as a nurse in Berlin", "我的妹妹在上海当老师", "Dentist on Friday at 10"]  # fmt: skip
    out = {}
    for limit in (0, 5_000):
        s = Settings(workspace=tmp_path / f"ws-{limit}")
        s.embeddings.provider = "fake"
        s.index.exact_search_max_entries = limit
        with Memory(settings=s) as mem:
            mem.add_many(texts)
            out[limit] = [
                [h.text for h in mem.search(q, k=3)] for q in ("green tea", "拉面", "老师")
            ]
    assert out[0] == out[5_000]


def test_a_matrix_kept_up_to_date_equals_a_fresh_one() -> None:
    from langmem_ext.workspace.vector_matrix import ScopeMatrix

    rng = np.random.default_rng(5)
    live: dict[str, np.ndarray] = {f"e{i}": rng.standard_normal(16) for i in range(40)}
    matrix = ScopeMatrix(list(live), list(live.values()))
    for step in range(300):
        key = f"e{rng.integers(0, 80)}"
        if rng.random() < 0.35:
            matrix.remove(key)
            live.pop(key, None)
        else:
            vec = rng.standard_normal(16)
            matrix.upsert(key, vec)
            live[key] = vec
        if step % 50 == 0:
            q = rng.standard_normal(16)
            fresh = ScopeMatrix(list(live), list(live.values()))
            got, ref = matrix.nearest(q, 10), fresh.nearest(q, 10)
            assert [i for i, _ in got] == [i for i, _ in ref]
            assert np.allclose([c for _, c in got], [c for _, c in ref], atol=1e-6)
    assert sorted(matrix.ids) == sorted(live) and len(matrix) == len(live)
    with pytest.raises(ValueError):
        matrix.upsert("e0", np.ones(3))


def test_the_index_s_matrix_follows_writes_like_a_fresh_index(index: KeywordIndex) -> None:
    def fresh(q: list[float]) -> list[tuple[str, float]] | None:
        other = KeywordIndex(index.path)
        try:
            return other.nearest("main", MODEL, q, 100)
        finally:
            other.close()

    q = _vec(99)
    assert index.nearest("main", MODEL, q, 100) == fresh(q)  # built
    added = [_doc(70 + i, 50 + i, text=f"added {i}") for i in range(5)]
    index.apply(upserts=added)
    _embed(index, added)  # goes into the built matrix
    index.apply(deletes=[("m-003", "main")])
    index.apply(upserts=[_doc(1, 3, text="entry one, edited")])  # leaves until re-embedded
    index.apply(upserts=[_doc(4, 6, path="memory/scopes/b/MEMORY.md", scope="b")])  # moved
    got = index.nearest("main", MODEL, q, 100)
    assert got is not None
    assert {i for i, _ in got} == {"m-000", "m-002", "m-005", "m-010", *(d.id for d in added)}
    ref = fresh(q)
    assert ref is not None and [i for i, _ in got] == [i for i, _ in ref]
    _embed(index, [_doc(1, 3, text="entry one, edited")])
    assert "m-001" in {i for i, _ in index.nearest("main", MODEL, q, 100) or []}


def test_searches_while_another_thread_writes_see_whole_states(fake_memory: Memory) -> None:
    import threading as th

    base = fake_memory.add_many([f"note {i} about green tea and 拉面" for i in range(60)])
    errors: list[BaseException] = []
    stop = th.Event()

    def writer() -> None:
        try:
            for i in range(40):
                new = fake_memory.add(f"fresh note {i} about green tea")
                fake_memory.delete(new)
            fake_memory.delete(base[0])
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            stop.set()

    t = th.Thread(target=writer)
    t.start()
    searches = 0
    while not stop.is_set() or searches < 5:
        for hit in fake_memory.search("green tea", k=5):
            assert hit.text  # every hit is a whole, live entry
        searches += 1
    t.join()
    assert not errors
    assert base[0] not in {h.id for h in fake_memory.search("note 0 about green tea", k=20)}

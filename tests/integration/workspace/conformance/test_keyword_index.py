"""The keyword index's contract, through
:class:`~langmem_ext.workspace.protocols.KeywordIndex` only."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from langmem_ext.workspace.docs import Doc, FileStamp, text_hash
from langmem_ext.workspace.engines import Engines
from langmem_ext.workspace.protocols import KeywordIndex

from .conftest import MODEL, unit_vector

T0 = 1_700_000_000.0


def doc(
    entry_id: str,
    text: str,
    *,
    scope: str = "main",
    path: str = "MEMORY.md",
    line: int = 3,
    category: str = "fact",
    importance: float = 1.0,
) -> Doc:
    return Doc(entry_id, scope, path, line, category, text, text_hash(text), T0, T0, importance)


ENGLISH = [
    doc("en1", "Ana drinks black coffee every morning", line=3),
    doc("en2", "Ana's brother plays the violin", line=4),
    doc("en3", "The office moved to Lisbon in spring", line=5, category="episode"),
]
CHINESE = [
    doc("zh1", "我每天早上喝黑咖啡", line=6),
    doc("zh2", "我哥哥在上海拉小提琴", line=7),
]


@pytest.fixture
def filled(keyword: KeywordIndex) -> KeywordIndex:
    keyword.apply(
        upserts=[*ENGLISH, *CHINESE],
        files=[FileStamp("MEMORY.md", "main", "h1", 1, 100)],
    )
    return keyword


def test_applied_docs_read_back(filled: KeywordIndex) -> None:
    assert filled.docs(["en1", "zh1", "missing"]) == {"en1": ENGLISH[0], "zh1": CHINESE[0]}
    assert set(filled.docs_of_path("MEMORY.md")) == {"en1", "en2", "en3", "zh1", "zh2"}
    assert filled.lines_of_path("MEMORY.md")["en3"] == 5
    assert len(filled.scope_docs("main")) == 5 and filled.scope_docs("u1") == []
    assert filled.category_counts("main") == {"fact": 4, "episode": 1}
    assert [d.id for d in filled.scope_docs("main", "episode")] == ["en3"]


def test_english_keyword_search_ranks_the_match_first(filled: KeywordIndex) -> None:
    hits = filled.bm25("main", "who drinks coffee", 5)
    assert hits and hits[0][0].id == "en1"
    assert all(score > 0 for _d, score in hits)
    assert "en2" not in {d.id for d, _s in hits}


def test_chinese_keyword_search_finds_chinese_text(filled: KeywordIndex) -> None:
    hits = filled.bm25("main", "咖啡", 5)
    assert [d.id for d, _s in hits][:1] == ["zh1"]
    violin = filled.bm25("main", "小提琴", 5)
    assert [d.id for d, _s in violin][:1] == ["zh2"]


def test_a_query_with_no_indexed_token_finds_nothing(filled: KeywordIndex) -> None:
    assert filled.bm25("main", "zeppelin", 5) == []
    assert filled.bm25("main", "   ", 5) == []


def test_full_match_score_bounds_a_hit(filled: KeywordIndex) -> None:
    full = filled.bm25_full("coffee morning")
    hits = filled.bm25("main", "coffee morning", 5)
    assert full > 0 and hits and hits[0][1] > 0


def test_search_never_leaves_the_scope(keyword: KeywordIndex) -> None:
    keyword.apply(
        upserts=[
            doc("a", "tea with lemon", scope="main"),
            doc("b", "tea with honey", scope="u1", path="memory/scopes/u1/LONG_TERM.md"),
        ]
    )
    assert [d.id for d, _s in keyword.bm25("main", "tea", 5)] == ["a"]
    assert [d.id for d, _s in keyword.bm25("u1", "tea", 5)] == ["b"]
    assert keyword.bm25("u2", "tea", 5) == []
    assert [d.id for d, _s in keyword.substring("u1", "honey", 5)] == ["b"]


def test_substring_search_matches_part_of_a_word(filled: KeywordIndex) -> None:
    assert [d.id for d, _s in filled.substring("main", "Lisbo", 5)] == ["en3"]


def test_a_deleted_doc_is_not_found(filled: KeywordIndex) -> None:
    filled.apply(deletes=[("en1", "main")])
    assert "en1" not in filled.docs(["en1"])
    assert filled.bm25("main", "coffee", 5) == []
    assert len(filled.scope_docs("main")) == 4


def test_an_updated_text_is_found_by_its_new_words_only(filled: KeywordIndex) -> None:
    filled.apply(upserts=[doc("en1", "Ana drinks green tea every morning")])
    assert filled.bm25("main", "coffee", 5) == []
    assert [d.id for d, _s in filled.bm25("main", "green tea", 5)][:1] == ["en1"]
    assert filled.has_text("main", "Ana drinks green tea every morning")
    assert filled.ids_with_text("main", "Ana drinks green tea every morning") == ["en1"]


def test_file_stamps_are_kept_and_dropped(filled: KeywordIndex) -> None:
    filled.apply(files=[FileStamp("memory/2026-01-31.md", "main", "h2", 2, 10)])
    stamps = filled.file_stamps("main")
    assert stamps["MEMORY.md"] == FileStamp("MEMORY.md", "main", "h1", 1, 100)
    assert set(stamps) == {"MEMORY.md", "memory/2026-01-31.md"}
    filled.apply(drop_files=["memory/2026-01-31.md"])
    assert set(filled.file_stamps()) == {"MEMORY.md"}
    assert filled.file_stamps("u1") == {}


def test_shifts_move_the_lines_below_an_insertion(filled: KeywordIndex) -> None:
    filled.apply(shifts=[("MEMORY.md", 4, 2)])  # two lines inserted after line 4
    lines = filled.lines_of_path("MEMORY.md")
    assert (lines["en1"], lines["en2"], lines["en3"], lines["zh1"]) == (3, 4, 7, 8)


def test_importance_is_copied_into_docs(filled: KeywordIndex) -> None:
    filled.set_importance("en1", 2.5)
    filled.set_importances([("en2", 0.5), ("zh1", 3.0)])
    got = filled.docs(["en1", "en2", "zh1"])
    assert (got["en1"].importance, got["en2"].importance, got["zh1"].importance) == (2.5, 0.5, 3.0)


def test_the_vector_outbox_empties_as_vectors_are_marked(filled: KeywordIndex) -> None:
    todo = filled.vector_todo()
    assert {d.id for d in todo} == {"en1", "en2", "en3", "zh1", "zh2"}
    assert filled.vector_todo_count() == 5
    matrix = np.stack([unit_vector(d.text) for d in todo])
    filled.mark_vectors([(d.id, d.text_hash) for d in todo], model=MODEL, vectors=matrix)
    assert filled.vector_todo() == [] and filled.vector_todo_count() == 0
    kept = filled.docs_with_vectors(["en1"], MODEL)
    vec = kept["en1"][1]
    assert vec is not None and np.allclose(vec, unit_vector(ENGLISH[0].text))
    filled.apply(deletes=[("en2", "main")])
    assert ("en2", "main") in filled.vector_deletes()
    filled.mark_vectors([], ["en2"])
    assert filled.vector_deletes() == []


def test_exact_search_over_kept_vectors(filled: KeywordIndex) -> None:
    todo = filled.vector_todo()
    matrix = np.stack([unit_vector(d.text) for d in todo])
    filled.mark_vectors([(d.id, d.text_hash) for d in todo], model=MODEL, vectors=matrix)
    found = filled.nearest_many("main", MODEL, [unit_vector(CHINESE[1].text).tolist()], 2)
    assert found is not None
    assert found[0][0][0] == "zh2" and found[0][0][1] == pytest.approx(1.0)
    many = filled.nearest_many("main", MODEL, [unit_vector(ENGLISH[2].text).tolist()], 1)
    assert many is not None and [i for i, _s in many[0]] == ["en3"]


def test_meta_and_generation(keyword: KeywordIndex) -> None:
    first = keyword.bump_generation()
    assert keyword.bump_generation() == first + 1
    assert keyword.apply(generation=True) == first + 2
    keyword.set_meta("k", "v")
    assert keyword.get_meta("k") == "v" and keyword.get_meta("none") is None


def test_the_index_survives_a_reopen(open_engines: Callable[[], Engines]) -> None:
    first = open_engines()
    index = first.open_keyword()
    index.apply(upserts=[CHINESE[0]])
    index.close()
    first.close()
    again = open_engines().open_keyword()
    try:
        assert [d.id for d, _s in again.bm25("main", "咖啡", 5)] == ["zh1"]
    finally:
        again.close()


def test_discarding_the_index_empties_it(open_engines: Callable[[], Engines]) -> None:
    engines = open_engines()
    index = engines.open_keyword()
    index.apply(upserts=[ENGLISH[0]])
    index.close()
    engines.discard_index()
    fresh = engines.open_keyword()
    try:
        assert fresh.docs(["en1"]) == {} and fresh.bm25("main", "coffee", 5) == []
    finally:
        fresh.close()

"""KeywordIndex builds its Doc objects the fast way: they must equal ordinary ones."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from langmem_ext.workspace.docs import _DOC_COLS, Doc, _doc
from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex


def test_fast_doc_equals_a_constructed_doc() -> None:
    row = ("m-1", "main", "MEMORY.md", 7, "fact", "text", "h", 1, 2.5, 3)
    fast = _doc(row)
    built = Doc("m-1", "main", "MEMORY.md", 7, "fact", "text", "h", 1.0, 2.5, 3.0)
    assert fast == built and hash(fast) == hash(built)
    assert vars(fast) == vars(built)
    assert [f.name for f in dataclasses.fields(Doc)] == [c.strip() for c in _DOC_COLS.split(",")]
    assert isinstance(fast.created_at, float) and isinstance(fast.line, int)


def test_docs_round_trip_through_the_index(tmp_path: Path) -> None:
    kw = KeywordIndex(tmp_path / "index.db")
    try:
        doc = Doc("m-2", "main", "MEMORY.md", 3, "core", "主人喜欢拉面", "h2", 10.0, 11.0, 3.0)
        kw.apply(upserts=[doc])
        assert kw.docs(["m-2"]) == {"m-2": doc}
        assert kw.scope_docs("main") == [doc]
        assert [d for d, _ in kw.bm25("main", "拉面", 5)] == [doc]
    finally:
        kw.close()


def test_bm25_full_survives_a_doc_count_older_than_the_vocabulary(fake_memory: Any) -> None:
    # A writer committing between the count and the vocabulary read leaves a term in
    # more docs than counted: the IDF floors at 1e-6, never a math domain error.
    m = fake_memory
    m.add_many(["green tea in the morning", "green tea at noon", "black coffee"])
    index = m.workspace.keyword
    assert index.bm25_full("green tea") > 0
    version = int(index._reader().execute("PRAGMA data_version").fetchone()[0])
    index._reader_local.n_docs = (version, 0)  # as if counted before the adds
    assert index.bm25_full("green tea") == pytest.approx(2e-6)


def test_a_large_index_matches_on_the_query_s_rarer_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langmem_ext.workspace.sqlite import keyword_index

    kw = KeywordIndex(tmp_path / "index.db")
    try:
        docs = [
            Doc(f"m-{i:03d}", "main", "MEMORY.md", i + 1, "fact",
                "meeting notes" + (" kiwi" if i in (7, 42) else ""), f"h{i}", 1.0, 1.0, 1.0)
            for i in range(200)
        ]  # fmt: skip
        kw.apply(upserts=docs)
        both = {d.id for d, _ in kw.bm25("main", "meeting kiwi", 500)}
        assert len(both) == 200  # a small index matches on every token
        monkeypatch.setattr(keyword_index, "GATE_MIN_DOCS", 100)
        gated = kw.bm25("main", "meeting kiwi", 500)
        assert [d.id for d, _ in gated][:2] and {d.id for d, _ in gated} == {"m-007", "m-042"}
        assert {d.id for d, _ in kw.bm25("main", "meeting notes", 500)} == both  # all common
    finally:
        kw.close()

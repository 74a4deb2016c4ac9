"""BM25 reads only its scope's rowid block: same answers as a search of every scope."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.workspace.docs import _D_COLS, Doc, _doc
from langmem_ext.workspace.sqlite.keyword_index import BLOCK_BITS, KeywordIndex

TEXTS = {
    "alice": [
        "Alice likes climbing at the gym on Mondays",
        "主人喜欢吃拉面，尤其是豚骨拉面",
        "Alice's cat is called Miso",
        "上周去了北京出差，住在朝阳区",
    ],
    "bob": [
        "Bob likes ramen and climbing",
        "Bob 的猫叫 Miso，喜欢吃鱼",
        "下周去北京开会",
    ],
}
QUERIES = ["climbing gym", "拉面", "Miso 猫", "北京", "ramen 拉面 climbing"]


def _doc_of(scope: str, i: int, text: str) -> Doc:
    return Doc(
        f"{scope}-{i}", scope, f"{scope}/MEMORY.md", i + 1, "fact", text, f"h{i}", 1.0, 1.0, 1.0
    )


def _interleaved() -> list[Doc]:
    """The two users' memories written turn by turn, as a shared server writes them."""
    out = []
    for i in range(max(len(v) for v in TEXTS.values())):
        for scope, texts in TEXTS.items():
            if i < len(texts):
                out.append(_doc_of(scope, i, texts[i]))
    return out


def _every_scope_bm25(path: Path, scope: str, query: str, limit: int) -> list[tuple[Doc, float]]:
    """BM25 over the whole FTS table, filtered by scope afterwards (no rowid range)."""
    match = " OR ".join(f'"{t}"' for t in query_tokens(query))
    con = sqlite3.connect(path)
    try:
        rows = con.execute(
            f"SELECT {_D_COLS}, bm25(fts) AS s FROM fts JOIN docs d ON d.rowid = fts.rowid "
            "WHERE fts MATCH ? AND d.scope = ? ORDER BY s LIMIT ?",
            (match, scope, limit),
        ).fetchall()
    finally:
        con.close()
    return [(_doc(r[:10]), -float(r[10])) for r in rows]


def _check_all(kw: KeywordIndex, path: Path) -> None:
    for scope in TEXTS:
        for q in QUERIES:
            got = kw.bm25(scope, q, 10)
            assert got == _every_scope_bm25(path, scope, q, 10), (scope, q)
            assert all(d.scope == scope for d, _ in got)


def test_interleaved_scopes_get_contiguous_blocks_and_the_same_answers(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    kw = KeywordIndex(path)
    try:
        for doc in _interleaved():
            kw.apply(upserts=[doc])
        con = sqlite3.connect(path)
        blocks = dict(con.execute("SELECT scope, rowid >> ? FROM docs", (BLOCK_BITS,)).fetchall())
        assert blocks["alice"] != blocks["bob"]
        for scope, block in blocks.items():  # every doc of a scope in its block, in order
            ids = [
                r[0]
                for r in con.execute(
                    "SELECT id FROM docs WHERE rowid >> ? = ? ORDER BY rowid", (BLOCK_BITS, block)
                )
            ]
            assert ids == [f"{scope}-{i}" for i in range(len(TEXTS[scope]))]
        con.close()
        _check_all(kw, path)
        assert [d.id for d, _ in kw.bm25("alice", "拉面", 5)] == ["alice-1"]
        assert kw.bm25("nobody", "拉面", 5) == []
    finally:
        kw.close()


def test_a_doc_moved_to_another_scope_is_found_there_only(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    kw = KeywordIndex(path)
    try:
        kw.apply(upserts=_interleaved())
        moved = _doc_of("alice", 1, TEXTS["alice"][1])
        kw.apply(
            upserts=[
                Doc(moved.id, "bob", "bob/MEMORY.md", 9, "fact", moved.text, "h1", 1.0, 1.0, 1.0)
            ]
        )
        assert "alice-1" not in [d.id for d, _ in kw.bm25("alice", "拉面", 10)]
        assert "alice-1" in [d.id for d, _ in kw.bm25("bob", "豚骨拉面", 10)]
        _check_all(kw, path)
    finally:
        kw.close()


def test_an_index_from_before_blocks_is_moved_into_them_on_open(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    KeywordIndex(path).close()  # the schema
    con = sqlite3.connect(path)  # docs as the earlier version wrote them: rowids 1, 2, ...
    for rowid, d in enumerate(_interleaved(), start=1):
        con.execute(
            "INSERT INTO docs (rowid, id, scope, path, line, category, text, text_hash, "
            "created_at, updated_at, importance) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (rowid, d.id, d.scope, d.path, d.line, d.category, d.text, d.text_hash, 1.0, 1.0, 1.0),
        )
        con.execute(
            "INSERT INTO fts (rowid, tokens) VALUES (?, ?)", (rowid, " ".join(index_tokens(d.text)))
        )
    con.commit()
    con.close()

    kw = KeywordIndex(path)
    try:
        con = sqlite3.connect(path)
        assert (
            con.execute("SELECT count(*) FROM docs WHERE rowid < ?", (1 << BLOCK_BITS,)).fetchone()[
                0
            ]
            == 0
        )
        assert con.execute("SELECT count(*) FROM fts").fetchone()[0] == len(_interleaved())
        con.close()
        assert [d.id for d in kw.scope_docs("bob")] == ["bob-0", "bob-1", "bob-2"]
        _check_all(kw, path)
        kw.apply(upserts=[_doc_of("alice", 9, "Alice started learning 日语")])  # next in block
        assert [d.id for d, _ in kw.bm25("alice", "日语", 5)] == ["alice-9"]
    finally:
        kw.close()


def test_bm25_reads_on_its_own_connections_sees_each_write_and_closes_them(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "index.db"
    kw = KeywordIndex(path)
    results: list[list[str]] = []

    def search() -> None:
        results.append([d.id for d, _ in kw.bm25("alice", "拉面", 5)])

    kw.apply(upserts=[_doc_of("alice", 1, TEXTS["alice"][1])])
    workers = [threading.Thread(target=search) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    search()
    assert results == [["alice-1"]] * 3
    kw.apply(deletes=[("alice-1", "alice")])  # committed: every reader sees it at once
    assert kw.bm25("alice", "拉面", 5) == []
    readers = list(kw._readers)
    assert len(readers) == 3  # one per thread that searched
    kw.close()
    for conn in readers:
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")

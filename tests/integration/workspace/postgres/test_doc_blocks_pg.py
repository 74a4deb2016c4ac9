"""PostgreSQL doc rows keep their lines in blocks: after any sequence of edits every
doc's line is the one the SQLite doc table gives, an edit rewrites only the rows of
the block it falls in, and an index of the layout with a ``line`` column is moved
into blocks on open."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest

from langmem_ext.workspace.docs import Doc
from langmem_ext.workspace.postgres import doc_blocks
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.keyword_index import PgKeywordIndex
from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex

PATHS = ("main/MEMORY.md", "main/memory/2026-01-02.md")


def _doc(entry_id: str, path: str, line: int, text: str | None = None) -> Doc:
    return Doc(
        entry_id, "main", path, line, "fact", text or f"note {entry_id}", f"h-{entry_id}",
        1.0, 1.0, 1.0,
    )  # fmt: skip


class _File:
    """A file as the index sees it: the id on each line (``None``: a line of no bullet)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: list[str | None] = [None, None]  # a heading and a blank line

    def ids(self) -> dict[str, int]:
        return {i: n + 1 for n, i in enumerate(self.lines) if i is not None}


def _check_blocks(url: str) -> None:
    """Every block's bounds hold its rows' lines, and no block is over twice full."""
    with psycopg.connect(url, autocommit=True) as conn:
        bad = conn.execute(
            "SELECT b.blk, b.first, b.last, min(r.base + b.delta), max(r.base + b.delta), "
            "count(*) FROM doc_blocks b JOIN doc_rows r ON r.blk = b.blk "
            "GROUP BY b.blk HAVING min(r.base + b.delta) < b.first "
            "OR max(r.base + b.delta) > b.last OR count(*) > %s",
            (2 * doc_blocks.BLOCK_ROWS,),
        ).fetchall()
        assert bad == []
        mixed = conn.execute(
            "SELECT r.id FROM doc_rows r JOIN doc_blocks b ON b.blk = r.blk WHERE b.path != r.path"
        ).fetchall()
        assert mixed == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_edits_keep_every_line_of_every_doc(
    both: tuple[KeywordIndex, PgKeywordIndex],
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
) -> None:
    monkeypatch.setattr(doc_blocks, "BLOCK_ROWS", 4)  # many blocks, many splits
    lite, pg = both
    rng = np.random.default_rng(seed)
    files = {p: _File(p) for p in PATHS}
    made = 0

    def apply(**kw: Any) -> None:
        for index in (lite, pg):
            index.apply(**kw)

    for _step in range(120):
        f = files[PATHS[int(rng.integers(len(PATHS)))]]
        op = rng.choice(["append", "insert", "delete", "text", "moves", "rewrite"])
        held = [n for n, i in enumerate(f.lines) if i is not None]
        if op == "append" or not held:  # a batch at the end of the file
            new = [f"d{made + k}" for k in range(int(rng.integers(1, 12)))]
            made += len(new)
            f.lines += new
            at = f.ids()
            apply(upserts=[_doc(i, f.path, at[i]) for i in new])
        elif op == "insert":  # a bullet below line ``after``: the lines below move down
            after = int(rng.integers(0, len(f.lines) + 1))
            new_id = f"d{made}"
            made += 1
            f.lines.insert(after, new_id)
            apply(shifts=[(f.path, after, 1)], upserts=[_doc(new_id, f.path, after + 1)])
        elif op == "delete":  # a bullet goes: the lines below move up
            n = int(rng.choice(held))
            gone = f.lines.pop(n)
            assert gone is not None
            apply(shifts=[(f.path, n + 1, -1)], deletes=[(gone, "main")])
        elif op == "text":  # lines of prose added or removed, no bullet touched
            after = int(rng.integers(0, len(f.lines) + 1))
            count = int(rng.integers(1, 4))
            blank = [
                k for k in range(after, min(after + count, len(f.lines))) if f.lines[k] is None
            ]
            if rng.random() < 0.5 and len(blank) == count:
                del f.lines[after : after + count]
                apply(shifts=[(f.path, after + count, -count)])
            else:
                f.lines[after:after] = [None] * count
                apply(shifts=[(f.path, after, count)])
        elif op == "moves":  # a hand edit reordered some bullets: their lines are written
            picked = [int(n) for n in rng.choice(held, size=min(len(held), 5), replace=False)]
            ids = [f.lines[n] for n in picked]
            for n, entry_id in zip(picked, rng.permutation(ids), strict=True):
                f.lines[n] = str(entry_id)
            at = f.ids()
            apply(lines=[(at[str(i)], str(i)) for i in ids])
        else:  # a doc written again at a blank line (its text edited and moved)
            blank = [k for k, i in enumerate(f.lines) if i is None]
            n, to = int(rng.choice(held)), int(rng.choice(blank))
            entry_id = f.lines[n]
            assert entry_id is not None
            f.lines[n], f.lines[to] = None, entry_id
            apply(upserts=[_doc(entry_id, f.path, to + 1, f"moved {entry_id} {_step}")])
        for g in files.values():
            want = g.ids()
            assert lite.lines_of_path(g.path) == want
            assert pg.lines_of_path(g.path) == want, (op, _step)
        _check_blocks(pg_url)
    every = [d for d in lite.scope_docs("main")]
    assert [(d.id, d.line) for d in pg.scope_docs("main")] == [(d.id, d.line) for d in every]
    picks = [every[int(k)] for k in rng.choice(len(every), size=min(len(every), 20), replace=False)]
    anchors = [(d.id, d.path, d.line, d.category) for d in picks]
    for window in (1, 3):
        assert pg.neighbours("main", anchors, window) == lite.neighbours("main", anchors, window)
    ids = [d.id for d in picks]
    assert (
        pg.docs_with_previous_vectors(ids, "m", "main")[1]
        == (lite.docs_with_previous_vectors(ids, "m", "main")[1])
    )


def test_an_edit_rewrites_only_its_block_s_rows(
    both: tuple[KeywordIndex, PgKeywordIndex], pg_url: str
) -> None:
    _lite, pg = both
    n = 20 * doc_blocks.BLOCK_ROWS
    path = PATHS[0]
    pg.apply(upserts=[_doc(f"d{i}", path, i + 3) for i in range(n)])

    def versions() -> dict[str, str]:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            rows = conn.execute("SELECT id, xmin::text FROM doc_rows").fetchall()
        return {str(i): str(x) for i, x in rows}

    before = versions()
    pg.apply(shifts=[(path, n // 2, -1)], deletes=[("d" + str(n // 2 - 3), "main")])
    after = versions()
    rewritten = [i for i, x in after.items() if before[i] != x]
    assert len(rewritten) <= 2 * doc_blocks.BLOCK_ROWS  # not the ~n/2 rows below the edit
    lines = pg.lines_of_path(path)
    assert lines[f"d{n - 1}"] == n + 1 and lines[f"d{n // 2 - 4}"] == n // 2 - 1
    assert lines[f"d{n // 2 - 2}"] == n // 2 and f"d{n // 2 - 3}" not in lines
    _check_blocks(pg_url)


_OLD_DOCS = """CREATE TABLE docs (
    rowid BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id TEXT COLLATE "C" NOT NULL UNIQUE,
    scope TEXT COLLATE "C" NOT NULL,
    path TEXT COLLATE "C" NOT NULL,
    line INTEGER NOT NULL,
    category TEXT COLLATE "C" NOT NULL,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    importance DOUBLE PRECISION NOT NULL,
    vec_hash TEXT,
    tokens TEXT[] NOT NULL
)"""


def test_an_index_with_a_line_column_is_moved_into_blocks(pg_url: str) -> None:
    n = 3 * doc_blocks.BLOCK_ROWS + 5
    rows = [(f"d{i}", PATHS[i % 2], i // 2 + 3, f"note d{i}") for i in range(n)]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(_OLD_DOCS)
        conn.execute("CREATE INDEX docs_path_line ON docs(path, line)")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO docs (id, scope, path, line, category, text, text_hash, created_at, "
                "updated_at, importance, vec_hash, tokens) VALUES "
                "(%s, 'main', %s, %s, 'fact', %s, 'h', 1, 1, 1, 'h', %s)",
                [(i, p, line, t, t.split()) for i, p, line, t in rows],
            )
    db = PgConnections(pg_url)
    try:
        pg = PgKeywordIndex(db)
        for path in PATHS:
            assert pg.lines_of_path(path) == {i: line for i, p, line, _t in rows if p == path}
        assert [d.id for d, _s in pg.bm25("main", "d7", 3)] == ["d7"]
        assert pg.vector_todo_count() == 0  # what was embedded stays embedded
        pg.apply(shifts=[(PATHS[0], 10, 2)], upserts=[_doc("new", PATHS[0], n)])
        lines = pg.lines_of_path(PATHS[0])
        assert lines["d0"] == 3 and lines["d20"] == 13 + 2 and lines["new"] == n
        PgKeywordIndex(db)  # opened again: nothing left to move
        assert pg.lines_of_path(PATHS[0]) == lines
        _check_blocks(pg_url)
    finally:
        db.close()


def test_opening_again_waits_for_no_writer(pg_url: str) -> None:
    """A replica starting again while another writes the doc rows takes no table lock
    on them (its schema statements would deadlock with the writer's order)."""
    db = PgConnections(pg_url)
    try:
        pg = PgKeywordIndex(db)
        pg.apply(upserts=[_doc("d1", PATHS[0], 3)])
        with psycopg.connect(pg_url) as writer:  # a write under way, not committed
            for table in ("doc_rows", "doc_blocks", "doc_postings", "doc_files", "passages"):
                writer.execute(f"LOCK TABLE {table} IN ROW EXCLUSIVE MODE")
            with psycopg.connect(pg_url, autocommit=True) as probe:
                probe.execute("SET lock_timeout = '2s'")
                doc_blocks.ensure_schema(probe)  # raised LockNotAvailable before
            sep = "&" if "?" in pg_url else "?"
            again = PgConnections(f"{pg_url}{sep}options=-c%20lock_timeout%3D2s")
            try:
                PgKeywordIndex(again)  # another replica starting: no schema statement
            finally:
                again.close()
            writer.rollback()
    finally:
        db.close()

"""PostgreSQL documents as a row per line: an edit writes only the lines it changed,
reads give back the exact text the file store would hold, the history rebuilds every
version, and two processes writing one file never read a stale copy."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langmem_ext.workspace.documents import FileDocuments
from langmem_ext.workspace.layout import Layout
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.documents import PgDocuments

REL = "MEMORY.md"


@pytest.fixture
def db(pg_url: str) -> Iterator[PgConnections]:
    conns = PgConnections(pg_url, max_size=4)
    yield conns
    conns.close()


def _rows(url: str) -> dict[str, str]:
    """``pos -> xmin`` of the file's line rows (xmin: the transaction that wrote it)."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pos, xmin::text FROM document_lines WHERE scope = 'main' AND rel = %s",
            (REL,),
        ).fetchall()
    return {str(p): str(x) for p, x in rows}


def _touched(before: dict[str, str], after: dict[str, str]) -> int:
    """Rows a write inserted, rewrote or deleted."""
    gone = before.keys() - after.keys()
    written = [p for p, x in after.items() if before.get(p) != x]
    return len(gone) + len(written)


def _bullets(n: int) -> list[str]:
    return [
        "# Memory",
        "",
        "## Facts",
        "",
        *(f"- fact number {i} <!-- id:m{i} -->" for i in range(n)),
    ]


@pytest.mark.parametrize("where", [0, 2500, 4999])
def test_an_edit_of_a_large_document_touches_only_its_lines(
    db: PgConnections, pg_url: str, where: int
) -> None:
    docs = PgDocuments(db)
    lines = _bullets(5000)
    docs.write("main", REL, "\n".join(lines) + "\n")
    at = 4 + where
    cases = [
        [*lines[:at], "- fact rewritten", *lines[at + 1 :]],  # an update in place
        lines[:at] + lines[at + 1 :],  # a delete: every line below moves up one
        [*lines[:at], "- a new fact", "  over two lines", *lines[at:]],  # an insert
    ]
    for edited in cases:
        before = _rows(pg_url)
        docs.write("main", REL, "\n".join(edited) + "\n")
        assert _touched(before, _rows(pg_url)) <= 3
        assert docs.read("main", REL) == "\n".join(edited) + "\n"
        assert PgDocuments(db).read("main", REL) == "\n".join(edited) + "\n"  # from the rows
        lines = edited
    assert len(_rows(pg_url)) == len(lines) + 1


_LINE = st.text(alphabet=st.sampled_from("ab-# \r\t<>é中"), max_size=6)
_EDIT = st.one_of(
    st.tuples(
        st.just("splice"), st.integers(0, 40), st.integers(0, 4), st.lists(_LINE, max_size=4)
    ),
    st.tuples(st.just("whole"), st.just(0), st.just(0), st.lists(_LINE, max_size=12)),
    st.tuples(st.just("delete"), st.just(0), st.just(0), st.just([])),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=st.lists(_EDIT, min_size=1, max_size=12), end=st.sampled_from(["", "\n", "\r\n"]))
def test_reads_and_history_match_the_file_store_over_any_edits(
    db: PgConnections, tmp_path_factory: pytest.TempPathFactory, edits: list, end: str
) -> None:
    pg = PgDocuments(db)
    with db.transaction() as conn:
        conn.execute("TRUNCATE document_heads, document_lines, document_edits, documents")
    files = FileDocuments(Layout(tmp_path_factory.mktemp("files")))
    written: list[str | None] = []
    for kind, at, removed, added in edits:
        current = files.read("main", REL)
        if kind == "delete":
            assert pg.delete("main", REL) == files.delete("main", REL)
            written.append(None)
            continue
        lines = current.split("\n") if kind == "splice" and current else []
        at = min(at, len(lines))
        lines[at : at + removed] = added
        text = "\n".join(lines) + end
        pg.write("main", REL, text)
        files.write("main", REL, text)
        written.append(text)
        assert pg.read("main", REL) == files.read("main", REL) == text
        assert pg.stamp("main", REL) is not None
        assert pg.stamp("main", REL)[1] == len(text.encode("utf-8"))  # type: ignore[index]
    assert PgDocuments(db).read("main", REL) == files.read("main", REL)
    history = [t for _v, t, _at in pg.versions("main", REL)]
    assert history == _effective(written)


def _effective(written: list[str | None]) -> list[str | None]:
    """The versions a file has after ``written`` (a delete of a missing file adds none)."""
    out: list[str | None] = []
    for w in written:
        if w is None and (not out or out[-1] is None):
            continue
        out.append(w)
    return out


def test_two_processes_editing_one_file_never_read_a_stale_copy(pg_url: str) -> None:
    a_db, b_db = PgConnections(pg_url), PgConnections(pg_url)
    try:
        a, b = PgDocuments(a_db), PgDocuments(b_db)
        a.write("main", REL, "- one\n- two\n")
        assert b.read("main", REL) == "- one\n- two\n"
        b.write("main", REL, "- one\n- two\n- three\n")
        assert a.read("main", REL) == "- one\n- two\n- three\n"
        a.write("main", REL, "- zero\n- one\n- two\n- three\n")  # diffed against b's text
        assert b.read("main", REL) == "- zero\n- one\n- two\n- three\n"
        with pytest.raises(RuntimeError), a_db.transaction():
            a.write("main", REL, "- rolled back\n")
            assert a.read("main", REL) == "- rolled back\n"
            raise RuntimeError
        assert a.read("main", REL) == b.read("main", REL) == "- zero\n- one\n- two\n- three\n"
        a.write("main", REL, "- zero\n- two\n- three\n")
        assert b.read("main", REL) == "- zero\n- two\n- three\n"
    finally:
        a_db.close()
        b_db.close()


def test_files_written_as_whole_versions_are_read_into_lines_once(
    db: PgConnections, pg_url: str
) -> None:
    PgDocuments(db)  # the tables, as an older engine would find them
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE document_heads, document_lines, document_edits")
        conn.execute(
            "INSERT INTO documents (scope, rel, version, text) VALUES "
            "('main', 'MEMORY.md', 1, '- tea\n'), ('main', 'MEMORY.md', 2, '- green tea\n'), "
            "('main', 'memory/2026-01-02.md', 1, '- gone\n'), "
            "('main', 'memory/2026-01-02.md', 2, NULL)"
        )
    docs = PgDocuments(db)
    assert docs.read("main", REL) == "- green tea\n" and docs.list("main") == [REL]
    assert docs.stamp("main", REL) == (2, len("- green tea\n"))
    assert docs.read("main", "memory/2026-01-02.md") == ""
    docs.write("main", REL, "- green tea\n- coffee\n")
    PgDocuments(db)  # opened again: nothing read twice
    assert [(v, t) for v, t, _at in docs.versions("main", REL)] == [
        (1, "- tea\n"),
        (2, "- green tea\n"),
        (3, "- green tea\n- coffee\n"),
    ]
    assert docs.read("main", REL) == "- green tea\n- coffee\n"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        n = conn.execute("SELECT count(*) FROM document_lines WHERE rel = 'MEMORY.md'").fetchone()
    assert n is not None and n[0] == 3

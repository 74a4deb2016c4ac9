"""On PostgreSQL an edit of one bullet writes only its lines: the whole text is neither
written, joined nor split, the file reads back as the embedded engine writes it, a line
break only ``str.splitlines`` reads sends the edit through the whole text, and
another process's write is seen."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmem_ext.core.errors import MemoryFileError
from langmem_ext.embeddings.factory import HashingEmbeddings
from langmem_ext.workspace.engines import engines_from_url
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.documents import PgDocuments, _Held
from langmem_ext.workspace.store import NewEntry, Workspace

MODEL = "hashing-256"


def _workspace(root: Path, url: str | None = None) -> Workspace:
    engines = engines_from_url(url, root=root, model_name=MODEL) if url else None
    return Workspace(root, HashingEmbeddings(), model_name=MODEL, engines=engines)


def _entry(n: int, text: str) -> NewEntry:
    return NewEntry(f"m-edit{n:04d}", text, "fact", 0.5, 1.7e9 + n, "user")


def _facts(ws: Workspace, n: int) -> tuple[Path, str]:
    """Write ``n`` facts to the long-term file; its path and relative path."""
    path = ws.layout.long_term("main")
    with ws.lock.hold():
        ws.write_entries("main", path, [_entry(i, f"fact number {i}") for i in range(n)],
                         title="Long-term memory")  # fmt: skip
    return path, ws.layout.rel(path)


def _edits(ws: Workspace) -> str:
    """The same edits on any engine; returns the file's text after them."""
    path = ws.layout.long_term("main")
    with ws.lock.hold():
        ws.write_entries("main", path, [_entry(i, f"fact number {i}") for i in range(40)],
                         title="Long-term memory")  # fmt: skip
        ws.rewrite_entry("main", path, "m-edit0007", "fact number seven,\nover two lines")
        ws.rewrite_entry("main", path, "m-edit0011", None)
        ws.supersede("main", path, "m-edit0020", _entry(100, "fact twenty, newer"))
        ws.rewrite_entry("main", path, "m-edit0039", None)  # the last bullet
        ws.supersede("main", path, "m-edit0000", _entry(101, "fact zero, newer"))
        ws.rewrite_entry("main", path, "m-edit0007", "fact seven on one line")
    return ws.documents.read("main", ws.layout.rel(path))


def _check_index(ws: Workspace) -> None:
    """Every doc row's line holds its bullet's id."""
    rel = ws.layout.rel(ws.layout.long_term("main"))
    lines = ws.documents.read("main", rel).splitlines()
    docs = ws.keyword.scope_docs("main")
    assert docs
    for d in docs:
        assert lines[d.line - 1].endswith(f"^{d.id}") or f"^{d.id}" in lines[d.line], d.id


def test_edits_write_only_their_lines_and_read_back_as_on_files(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded = _workspace(tmp_path / "files")
    want = _edits(embedded)
    embedded.close()
    pg = _workspace(tmp_path / "pg", pg_url)
    documents = pg.documents
    assert isinstance(documents, PgDocuments)
    written, joined = [], []
    write = documents.write
    monkeypatch.setattr(documents, "write", lambda *a: written.append(a[1]) or write(*a))
    text = _Held.text.func  # type: ignore[attr-defined]
    monkeypatch.setattr(_Held, "text", property(lambda h: joined.append(1) or text(h)))
    got = _edits(pg)
    monkeypatch.undo()
    assert got == want
    # the first write makes the file; the six edits write lines, join no text
    assert len(written) == 1 and joined == [1]  # the one join: ``read`` above
    _check_index(pg)
    history = documents.versions("main", pg.layout.rel(pg.layout.long_term("main")))
    assert history[-1][1] == want and len(history) == 7
    pg.close()


@pytest.mark.parametrize("odd", ["\r", "\u2028"])
def test_a_line_break_only_splitlines_reads_edits_the_whole_text(
    tmp_path: Path, pg_url: str, odd: str
) -> None:
    ws = _workspace(tmp_path / "pg", pg_url)
    path, rel = _facts(ws, 6)
    text = ws.documents.read("main", rel)
    lines = text.split("\n")
    at = next(n for n, t in enumerate(lines) if t.endswith("^m-edit0002"))
    lines[at - 1] += odd  # a hand edit: a carriage return or a line separator
    ws.documents.write("main", rel, "\n".join(lines))
    with ws.lock.hold():
        ws.sync(["main"])
        ws.rewrite_entry("main", path, "m-edit0002", "fact two, edited")
        ws.supersede("main", path, "m-edit0004", _entry(9, "fact four, newer"))
        ws.rewrite_entry("main", path, "m-edit0005", None)
    docs = {d.id: d for d in ws.keyword.scope_docs("main")}
    assert docs["m-edit0002"].text == "fact two, edited" and "m-edit0005" not in docs
    after = ws.documents.read("main", rel).splitlines()
    for d in docs.values():
        assert after[d.line - 1].endswith(f"^{d.id}"), d.id
    ws.close()


def test_an_edit_after_another_process_wrote_reads_the_new_lines(
    tmp_path: Path, pg_url: str
) -> None:
    ws = _workspace(tmp_path / "a", pg_url)
    path, rel = _facts(ws, 5)
    other = _workspace(tmp_path / "b", pg_url)  # another replica adds a line by hand
    text = other.documents.read("main", rel)
    other.documents.write("main", rel, "A note written by hand.\n\n" + text)
    other.close()
    with ws.lock.hold():
        ws.rewrite_entry("main", path, "m-edit0003", "fact three, edited")
    after = ws.documents.read("main", rel)
    assert after.startswith("A note written by hand.\n\n")
    assert "- fact three, edited ^m-edit0003" in after.splitlines()
    _check_index(ws)
    ws.close()


def test_a_splice_names_lines_of_the_file(pg_url: str) -> None:
    db = PgConnections(pg_url)
    docs = PgDocuments(db)
    docs.write("main", "MEMORY.md", "a\nb\nc\n")
    docs.splice("main", "MEMORY.md", 1, 1, ["B", "B2"])
    assert docs.read("main", "MEMORY.md") == "a\nB\nB2\nc\n"
    assert docs.lines("main", "MEMORY.md") == ["a", "B", "B2", "c", ""]
    assert docs.stamp("main", "MEMORY.md") == (2, len(b"a\nB\nB2\nc\n"))
    fresh = PgDocuments(db)  # another process: reads the rows, not a kept copy
    assert fresh.read("main", "MEMORY.md") == "a\nB\nB2\nc\n"
    with pytest.raises(ValueError):
        docs.splice("main", "MEMORY.md", 4, 2, [])
    with pytest.raises(MemoryFileError):
        docs.splice("main", "memory/2026-01-01.md", 0, 0, ["x"])
    assert docs.stamp("main", "MEMORY.md")[0] == 2  # nothing written by a refused splice
    db.close()


def test_an_add_reads_the_kept_lines_and_follows_a_carriage_return(
    tmp_path: Path, pg_url: str
) -> None:
    ws = _workspace(tmp_path / "pg", pg_url)
    path, rel = _facts(ws, 4)
    with ws.lock.hold():
        ws.rewrite_entry("main", path, "m-edit0001", None)  # lines kept, no text
        ws.write_entries("main", path, [_entry(10, "fact ten")], title="Long-term memory")
    text = ws.documents.read("main", rel)
    assert text.endswith("- fact number 3 ^m-edit0003\n- fact ten ^m-edit0010\n")
    ws.documents.write("main", rel, text.replace("\n", "\r\n"))  # written on Windows
    with ws.lock.hold():
        ws.sync(["main"])
        ws.write_entries("main", path, [_entry(11, "fact eleven")], title="Long-term memory")
    after = ws.documents.read("main", rel).splitlines()
    assert after.count("## Facts") == 1 and after[-1] == "- fact eleven ^m-edit0011"
    docs = ws.keyword.scope_docs("main")
    assert {d.id for d in docs} == {f"m-edit{i:04d}" for i in (0, 2, 3, 10, 11)}
    for d in docs:
        assert after[d.line - 1].endswith(f"^{d.id}"), d.id
    ws.close()

"""On PostgreSQL a file's stamp names its text by the stored document's version: a
write, an edit and a delete of one memory hash no whole text, and a text written by
another process is still found changed and read again."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmem_ext.embeddings.factory import HashingEmbeddings
from langmem_ext.workspace import store as store_module
from langmem_ext.workspace.engines import engines_from_url
from langmem_ext.workspace.store import NewEntry, Workspace

MODEL = "hashing-256"


def _workspace(root: Path, url: str) -> Workspace:
    engines = engines_from_url(url, root=root, model_name=MODEL)
    return Workspace(root, HashingEmbeddings(), model_name=MODEL, engines=engines)


def _entry(n: int, text: str) -> NewEntry:
    return NewEntry(f"m-stamp{n:04d}", text, "fact", 0.5, 1.7e9 + n, "user")


def test_writes_and_edits_hash_no_whole_text(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path / "ws", pg_url)
    path = ws.layout.long_term("main")
    with ws.lock.hold():
        ws.write_entries("main", path, [_entry(i, f"fact number {i}") for i in range(50)],
                         title="Long-term memory")  # fmt: skip

    def refused(content: str) -> str:
        raise AssertionError("a whole text was hashed")

    monkeypatch.setattr(store_module, "_file_hash", refused)
    with ws.lock.hold():
        ws.write_entries("main", path, [_entry(100, "one more fact")], title="Long-term memory")
        ws.rewrite_entry("main", path, "m-stamp0007", "fact number seven, edited")
        ws.rewrite_entry("main", path, "m-stamp0011", None)
        ws.supersede("main", path, "m-stamp0020", _entry(101, "fact twenty, newer"))
    monkeypatch.undo()
    stamp = ws.keyword.file_stamps("main")[ws.layout.rel(path)]
    assert (stamp.mtime_ns, stamp.size) == ws.documents.stamp("main", ws.layout.rel(path))
    docs = {d.id: d for d in ws.keyword.scope_docs("main")}
    assert docs["m-stamp0007"].text == "fact number seven, edited"
    assert "m-stamp0011" not in docs and "m-stamp0101" in docs and "m-stamp0100" in docs
    lines = ws.documents.read("main", ws.layout.rel(path)).splitlines()
    for d in docs.values():
        assert lines[d.line - 1].endswith(f"^{d.id}"), d.id
    ws.close()


def test_a_text_written_by_another_process_is_read_again(tmp_path: Path, pg_url: str) -> None:
    ws = _workspace(tmp_path / "a", pg_url)
    path = ws.layout.long_term("main")
    rel = ws.layout.rel(path)
    with ws.lock.hold():
        ws.write_entries("main", path, [_entry(1, "I live in Berlin")], title="Long-term memory")
    other = _workspace(tmp_path / "b", pg_url)  # another replica edits the document by hand
    text = other.documents.read("main", rel)
    other.documents.write("main", rel, text + "- I work at the harbour ^m-stamp0002\n")
    other.close()
    with ws.lock.hold():
        ws.sync(["main"])
    assert {d.id for d in ws.keyword.scope_docs("main")} == {"m-stamp0001", "m-stamp0002"}
    stamp = ws.keyword.file_stamps("main")[rel]
    assert (stamp.mtime_ns, stamp.size) == ws.documents.stamp("main", rel)
    ws.close()

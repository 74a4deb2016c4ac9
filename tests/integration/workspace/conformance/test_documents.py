"""The document store's contract, through
:class:`~langmem_ext.workspace.protocols.DocumentStore` only."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from langmem_ext.core.errors import InvalidPathError, InvalidScopeError, MemoryFileError
from langmem_ext.workspace.engines import EMBEDDED, Engines
from langmem_ext.workspace.protocols import DocumentStore

LONG_TERM = "MEMORY.md"
DAILY = "memory/2026-01-31.md"
U1_LONG_TERM = "memory/scopes/u1/LONG_TERM.md"


def test_a_missing_file_reads_empty(documents: DocumentStore) -> None:
    assert documents.read("main", LONG_TERM) == ""
    assert documents.list("main") == []


def test_write_then_read(documents: DocumentStore) -> None:
    documents.write("main", LONG_TERM, "# Long-term memory\n\n- likes tea\n")
    assert documents.read("main", LONG_TERM) == "# Long-term memory\n\n- likes tea\n"


def test_a_write_replaces_the_whole_text(documents: DocumentStore) -> None:
    documents.write("main", DAILY, "first version, rather long\n" * 20)
    documents.write("main", DAILY, "second\n")
    assert documents.read("main", DAILY) == "second\n"


def test_stamp_marks_a_file_and_changes_with_each_write(documents: DocumentStore) -> None:
    assert documents.stamp("main", DAILY) is None
    documents.write("main", DAILY, "- one\n")
    first = documents.stamp("main", DAILY)
    assert first is not None and first[1] == len(b"- one\n")
    documents.write("main", DAILY, "- one\n- 二\n")
    second = documents.stamp("main", DAILY)
    assert second is not None and second != first and second[1] == len("- one\n- 二\n".encode())
    assert documents.stamp("main", DAILY) == second  # reading changes nothing
    documents.delete("main", DAILY)
    assert documents.stamp("main", DAILY) is None


def test_unicode_text_round_trips(documents: DocumentStore) -> None:
    text = "# 记忆\n\n- 喜欢绿茶 🍵\n- Café au lait, naïve résumé\n- emoji ‍👩‍💻 and RTL שלום\n"
    documents.write("u1", U1_LONG_TERM, text)
    assert documents.read("u1", U1_LONG_TERM) == text


def test_list_names_the_scopes_files(documents: DocumentStore) -> None:
    documents.write("main", "memory/2026-02-01.md", "b\n")
    documents.write("main", DAILY, "a\n")
    documents.write("main", LONG_TERM, "lt\n")
    documents.write("u1", U1_LONG_TERM, "other scope\n")
    assert documents.list("main") == [LONG_TERM, DAILY, "memory/2026-02-01.md"]
    assert documents.list("u1") == [U1_LONG_TERM]
    assert documents.scopes() == ["main", "u1"]


def test_delete_removes_one_file(documents: DocumentStore) -> None:
    documents.write("main", LONG_TERM, "x\n")
    documents.write("main", DAILY, "y\n")
    assert documents.delete("main", DAILY) is True
    assert documents.delete("main", DAILY) is False
    assert documents.read("main", DAILY) == ""
    assert documents.list("main") == [LONG_TERM]


@pytest.mark.parametrize(
    "rel",
    [
        "../outside.md",
        "memory/../../outside.md",
        "/etc/passwd.md",
        "",
        "memory/scopes/u1/../../../MEMORY.md",
        "MEMORY.txt",
        "memory/a\x00b.md",
    ],
)
def test_paths_leaving_the_workspace_are_refused(documents: DocumentStore, rel: str) -> None:
    with pytest.raises(InvalidPathError):
        documents.write("main", rel, "nope\n")
    with pytest.raises(InvalidPathError):
        documents.read("main", rel)


def test_another_scopes_file_is_refused(documents: DocumentStore) -> None:
    documents.write("u1", U1_LONG_TERM, "private to u1\n")
    with pytest.raises(InvalidPathError):
        documents.read("main", U1_LONG_TERM)
    with pytest.raises(InvalidPathError):
        documents.write("u2", U1_LONG_TERM, "overwrite\n")
    with pytest.raises(InvalidPathError):
        documents.delete("main", U1_LONG_TERM)
    assert documents.read("u1", U1_LONG_TERM) == "private to u1\n"


def test_an_invalid_scope_is_refused(documents: DocumentStore) -> None:
    with pytest.raises(InvalidScopeError):
        documents.read("../u1", U1_LONG_TERM)


def test_a_refused_write_leaves_nothing(documents: DocumentStore) -> None:
    with pytest.raises(InvalidPathError):
        documents.write("main", "memory/scopes/u1/LONG_TERM.md", "wrong scope\n")
    assert documents.list("u1") == [] and documents.scopes() == []


def test_concurrent_writes_never_show_a_mix(documents: DocumentStore) -> None:
    """A reader sees one whole version or another, never half of each."""
    versions = [f"- version {i}\n" * 2000 for i in range(2)]
    documents.write("main", LONG_TERM, versions[0])
    stop = threading.Event()
    seen: list[str] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            documents.write("main", LONG_TERM, versions[i % 2])

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(200):
            seen.append(documents.read("main", LONG_TERM))
    finally:
        stop.set()
        thread.join()
    assert set(seen) <= set(versions)


def test_writes_survive_a_reopen(open_engines: Callable[[], Engines]) -> None:
    first = open_engines()
    first.documents.write("main", LONG_TERM, "durable ✓\n")
    first.close()
    assert open_engines().documents.read("main", LONG_TERM) == "durable ✓\n"


# -- the files of the embedded engine ---------------------------------------


def _embedded(engines: Engines, root: Path) -> Path:
    if engines.name != EMBEDDED:
        pytest.skip("symlinks and bytes on disk are the embedded document store's")
    return root


def test_a_symlinked_file_is_refused(
    engines: Engines, workspace_root: Path, tmp_path: Path
) -> None:
    root = _embedded(engines, workspace_root)
    outside = tmp_path / "secret.md"
    outside.write_text("secret\n", encoding="utf-8")
    os.symlink(outside, root / LONG_TERM)
    with pytest.raises(InvalidPathError):
        engines.documents.read("main", LONG_TERM)
    with pytest.raises(InvalidPathError):
        engines.documents.write("main", LONG_TERM, "through the link\n")
    assert outside.read_text(encoding="utf-8") == "secret\n"
    assert engines.documents.list("main") == []


def test_a_symlinked_scope_folder_is_refused(
    engines: Engines, workspace_root: Path, tmp_path: Path
) -> None:
    root = _embedded(engines, workspace_root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "memory" / "scopes").mkdir(parents=True)
    os.symlink(elsewhere, root / "memory" / "scopes" / "u1")
    with pytest.raises(InvalidPathError):
        engines.documents.write("u1", U1_LONG_TERM, "through the link\n")
    assert list(elsewhere.iterdir()) == []


def test_text_that_is_not_utf8_is_a_typed_error(engines: Engines, workspace_root: Path) -> None:
    root = _embedded(engines, workspace_root)
    (root / LONG_TERM).write_bytes(b"- caf\xe9\n")
    with pytest.raises(MemoryFileError, match="UTF-8"):
        engines.documents.read("main", LONG_TERM)


def test_a_write_leaves_no_temp_file(engines: Engines, workspace_root: Path) -> None:
    root = _embedded(engines, workspace_root)
    engines.documents.write("main", DAILY, "x\n")
    assert sorted(p.name for p in (root / "memory").iterdir()) == ["2026-01-31.md"]


def test_tree_names_every_file_a_person_reads(documents: DocumentStore) -> None:
    written = [
        ("main", "MEMORY.md"), ("main", "PROFILE.md"), ("main", "memory/2026-01-02.md"),
        ("main", "memory/transcripts/2026-01-02.md"), ("u1", "memory/scopes/u1/PROFILE.md"),
        ("u1", "memory/scopes/u1/transcripts/2026-01-03.md"),
    ]  # fmt: skip
    for scope, rel in written:
        documents.write(scope, rel, f"- {rel}\n")
    documents.write("main", "memory/2026-01-05.md", "- gone\n")
    documents.delete("main", "memory/2026-01-05.md")
    assert documents.tree() == sorted(written, key=lambda f: f[1])

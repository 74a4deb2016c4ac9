"""Writes whose cost does not grow with the file.

A new entry whose section ends the file is appended (journaled, fsynced) instead of
rewriting the file; what the process knows of a file (line count, headings, hash) is
checked against the file before each append. These tests pin: the append writes what a
rewrite would, a kill mid-append is undone, hand edits round-trip, and a stale record
is never used.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import langmem_ext.workspace.store as store_module
from langmem_ext import Memory, Settings
from langmem_ext.core.config import CATEGORIES
from langmem_ext.workspace.files import AppendJournal
from langmem_ext.workspace.layout import Layout
from langmem_ext.workspace.markdown import (
    append_entries,
    insert_entries_tracked,
    outline,
    parse_entries,
)

CHILD_ENV = {**os.environ, "LANGMEM_EMBEDDINGS__PROVIDER": "fake", "PYTHONUNBUFFERED": "1"}


def _settings(ws: Path) -> Settings:
    s = Settings(workspace=ws)
    s.embeddings.provider = "fake"
    return s


def _lines_in_file(path: Path) -> dict[str, int]:
    return {e.id: e.line for e in parse_entries(path.read_text("utf-8")) if e.id}


def _lines_in_index(mem: Memory, rel: str) -> dict[str, int]:
    return mem.workspace.keyword.lines_of_path(rel)


# -- the pure part ---------------------------------------------------------------------


def test_append_entries_writes_what_insert_entries_writes() -> None:
    """Whenever an append is offered, it is byte for byte the rewrite's result, with the
    same parsed entries and the outline of the new text."""
    r = random.Random(18)
    pieces = [
        "# Long-term memory",
        "",
        "## Core",
        "## Facts",
        "## Episodes",
        "### Details",
        "## Notes",
        "# Other",
        "- a bullet ^m-aaaa1",
        "- no id yet",
        "  continued",
        "free text",
        "## 事实",
        "   ",
        "- x\r",
    ]
    appended = refused = 0
    for trial in range(3000):
        lines = [r.choice(pieces) for _ in range(r.randrange(0, 8))]
        content = (
            "\n".join(lines)
            + ("\n" if r.random() < 0.9 else "")
            + ("\n" if r.random() < 0.1 else "")
        )
        items = [
            (
                f"m-{trial:05d}{j}",
                r.choice(["x", "two words", "multi\nline"]),
                r.choice(["fact", "core", "episode", "system"]),
            )
            for j in range(r.randrange(1, 4))
        ]
        ref = insert_entries_tracked(content, items, title="T")
        got = append_entries(outline(content), items)
        if got is None:
            refused += 1
            continue
        appended += 1
        assert content + got.text == ref.content
        assert got.entries == ref.entries
        assert got.outline == outline(ref.content)
    assert appended > 500 and refused > 500  # both kinds of file were met


def test_append_entries_refuses_a_section_in_the_middle() -> None:
    text = "# M\n\n## Core\n- c ^m-aaaa1\n\n## Facts\n- f ^m-aaaa2\n"
    assert append_entries(outline(text), [("m-bbbb1", "new", "core")]) is None
    got = append_entries(outline(text), [("m-bbbb1", "new", "fact")])
    assert got is not None and got.text == "- new ^m-bbbb1\n"
    assert [(e.id, e.line, e.category) for e in got.entries] == [("m-bbbb1", 8, "fact")]


# -- the workspace ---------------------------------------------------------------------


def test_an_add_appends_without_reading_or_rewriting_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(settings=_settings(tmp_path / "ws")) as mem:
        mem.add_many([f"fact number {i}" for i in range(50)])
        path = mem.root / "MEMORY.md"
        inode, before = path.stat().st_ino, path.read_text("utf-8")
        reads: list[Path] = []
        real_read = Layout.read

        def counting(self: Layout, p: Path, scope: str) -> str:
            reads.append(p)
            return real_read(self, p, scope)

        monkeypatch.setattr(Layout, "read", counting)
        new_id = mem.add("the fifty-first fact")
        assert reads == []  # neither read nor parsed
        assert path.stat().st_ino == inode  # appended in place, not renamed over
        expected = insert_entries_tracked(
            before, [(new_id, "the fifty-first fact", "fact")], title="x"
        ).content
        assert path.read_text("utf-8") == expected
        assert _lines_in_index(mem, "MEMORY.md") == _lines_in_file(path)
        stamp = mem.workspace.keyword.file_stamps("main")["MEMORY.md"]
        assert stamp.hash == store_module._file_hash(expected)
        assert stamp.size == path.stat().st_size
        assert [h.id for h in mem.search("fifty-first", k=1)] == [new_id]
        assert not mem.workspace.scope_needs_sync("main")


def test_a_section_in_the_middle_is_rewritten_and_later_appends_continue(
    tmp_path: Path,
) -> None:
    with Memory(settings=_settings(tmp_path / "ws")) as mem:
        mem.add("a fact", category="fact")
        mem.add("a core memory", category="core")  # a new section: appended at the end
        mem.add("another fact", category="fact")  # Facts is in the middle now: rewrite
        mem.add("a third core memory", category="core")  # Core ends the file: append
        mem.add("an episode", category="episode")  # a new section again
        path = mem.root / "MEMORY.md"
        text = path.read_text("utf-8")
        assert text.index("another fact") < text.index("## Core")
        assert [(e.text, e.category) for e in parse_entries(text)] == [
            ("a fact", "fact"),
            ("another fact", "fact"),
            ("a core memory", "core"),
            ("a third core memory", "core"),
            ("an episode", "episode"),
        ]
        assert _lines_in_index(mem, "MEMORY.md") == _lines_in_file(path)
        assert mem.workspace.keyword.file_stamps("main")[
            "MEMORY.md"
        ].hash == store_module._file_hash(text)


def test_hand_edits_between_appends_round_trip(tmp_path: Path) -> None:
    with Memory(settings=_settings(tmp_path / "ws")) as mem:
        ids = mem.add_many(["alpha fact", "beta fact", "gamma fact"])
        path = mem.root / "MEMORY.md"
        text = path.read_text("utf-8")
        text = text.replace("beta fact", "beta fact, edited by hand")
        text = text.replace(f"- gamma fact ^{ids[2]}\n", "")  # removed by hand
        path.write_text(text + "- typed by hand without an id\n", encoding="utf-8")
        new_id = mem.add("delta fact")
        after = path.read_text("utf-8")
        assert "beta fact, edited by hand" in after and "gamma fact" not in after
        texts = {e.text for e in mem.list()}
        assert texts == {
            "alpha fact",
            "beta fact, edited by hand",
            "typed by hand without an id",
            "delta fact",
        }
        assert _lines_in_index(mem, "MEMORY.md") == _lines_in_file(path)
        assert parse_entries(after)[-1].id == new_id
        # and appends go on from the edited file
        mem.add("epsilon fact")
        assert _lines_in_index(mem, "MEMORY.md") == _lines_in_file(path)


def test_a_same_size_edit_within_one_timestamp_tick_is_not_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system whose timestamps do not move within a tick, a hand edit that
    keeps the size (here it splits the last bullet in two) changes no stat field: the
    comparison of the file's last bytes catches it, so the new entry's line is right."""

    def coarse(s: os.stat_result) -> tuple[int, int, int, int, int]:
        return (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, 0)

    monkeypatch.setattr(store_module, "_stat_key", coarse)
    with Memory(settings=_settings(tmp_path / "ws")) as mem:
        mem.add_many(["first fact", "second fact", "xxxxxxxxxxxx"])
        path = mem.root / "MEMORY.md"
        st = path.stat()
        text = path.read_text("utf-8")
        edited = text.replace("- xxxxxxxxxxxx", "- x\n- yyyyyyyy")
        assert len(edited.encode()) == st.st_size
        path.write_text(edited, encoding="utf-8")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        new_id = mem.add("third fact")
        assert path.read_text("utf-8") == edited + f"- third fact ^{new_id}\n"
        assert _lines_in_index(mem, "MEMORY.md")[new_id] == _lines_in_file(path)[new_id]


_KILL_MID_APPEND = """
import os, signal
real_write = os.write
def torn(fd, data):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        target = ""
    if target.endswith("MEMORY.md"):
        real_write(fd, bytes(data)[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    return real_write(fd, data)
os.write = torn
"""


def _add_killed_mid_append(ws: Path, text: str) -> None:
    child = _KILL_MID_APPEND + textwrap.dedent(
        f"""
        from langmem_ext import Memory
        mem = Memory({str(ws)!r})
        mem.add({text!r})
        print("NOT KILLED", flush=True)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", child], env=CHILD_ENV, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "NOT KILLED" not in proc.stdout


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_an_append_torn_by_a_kill_is_undone_on_open(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with Memory(settings=_settings(ws)) as mem:
        mem.add_many(["User likes green tea", "User lives in Lisbon"])
    path = ws / "MEMORY.md"
    before = path.read_bytes()
    _add_killed_mid_append(ws, "User owns a very long named bicycle called Rocinante")
    torn = path.read_bytes()
    assert torn.startswith(before) and len(torn) > len(before)  # half a bullet
    assert parse_entries(torn.decode("utf-8", "replace"))[-1].text.startswith("User owns")
    with Memory(settings=_settings(ws)) as mem:
        assert path.read_bytes() == before
        assert {e.text for e in mem.list()} == {"User likes green tea", "User lives in Lisbon"}
        new_id = mem.add("User owns a bicycle")
        assert path.read_bytes() == before + f"- User owns a bicycle ^{new_id}\n".encode()
    assert (ws / AppendJournal.NAME).read_bytes() == b""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_a_process_already_open_repairs_another_ones_torn_append(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with Memory(settings=_settings(ws)) as mem:
        mem.add_many(["User likes green tea", "User lives in Lisbon"])
        path = ws / "MEMORY.md"
        before = path.read_bytes()
        _add_killed_mid_append(ws, "User owns a very long named bicycle called Rocinante")
        assert path.read_bytes() != before
        new_id = mem.add("User plays chess")  # repairs first, under the lock
        assert path.read_bytes() == before + f"- User plays chess ^{new_id}\n".encode()
        assert {e.text for e in mem.list()} == {
            "User likes green tea",
            "User lives in Lisbon",
            "User plays chess",
        }


def test_a_failed_append_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(settings=_settings(tmp_path / "ws")) as mem:
        mem.add("User likes green tea")
        path = mem.root / "MEMORY.md"
        before = path.read_bytes()
        real_write = os.write
        journal_fd: list[int] = []

        def full(fd: int, data: bytes) -> int:
            if not journal_fd:  # the journal record is written first
                journal_fd.append(fd)
                return real_write(fd, data)
            real_write(fd, bytes(data)[:5])
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "write", full)
        with pytest.raises(OSError, match="No space"):
            mem.add("User lives in Lisbon")
        monkeypatch.setattr(os, "write", real_write)
        assert path.read_bytes() == before
        mem.add("User lives in Porto")
        assert [e.text for e in mem.list()] == ["User likes green tea", "User lives in Porto"]


def test_the_records_kept_are_bounded_and_a_forgotten_file_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "_KNOWN_FILES_MAX", 2)
    with Memory(settings=_settings(tmp_path / "ws")) as mem:
        for scope in ("ann", "bob", "cat", "ann"):
            mem.add(f"{scope} likes tea", scope=scope)
            mem.add(f"{scope} likes coffee", scope=scope)
        assert len(mem.workspace._known) == 2
        for scope in ("ann", "bob", "cat"):
            path = mem.workspace.layout.root / "memory" / "scopes" / scope / "LONG_TERM.md"
            rel = f"memory/scopes/{scope}/LONG_TERM.md"
            assert _lines_in_index(mem, rel) == _lines_in_file(path)
            assert len(mem.list(scope=scope)) == (4 if scope == "ann" else 2)


# -- edits of one entry: the index follows without reading the file again ---------------


def _index_matches_file(mem: Memory, path: Path, rel: str) -> None:
    """Docs, ledger and file stamp agree with the file as a full parse reads it."""
    content = path.read_text("utf-8")
    parsed = {e.id: e for e in parse_entries(content) if e.id}
    docs = mem.workspace.keyword.docs_of_path(rel)
    assert set(docs) == set(parsed)
    for entry_id, p in parsed.items():
        d = docs[entry_id]
        assert (d.line, d.category, d.text) == (p.line, p.category, p.text), entry_id
    assert set(mem.workspace.ledger.entries.live_ids_of_path(rel)) == set(parsed)
    stamp = mem.workspace.keyword.file_stamps("main")[rel]
    assert stamp.hash == store_module._file_hash(content)


def test_updates_and_deletes_follow_the_index_without_reconciling_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update (a new version, or in place), a delete and a move to another section of
    one entry locate it by its index row and write only the rows they change and the
    lines that moved: the index ends as a full reconcile of the file would leave it,
    which is never run."""
    mem = Memory.from_settings(_settings(tmp_path / "ws"))
    r = random.Random(7)
    ids = [
        mem.add(
            f"fact {i} about topic {i % 5}" + ("\nsecond line" if i % 4 == 0 else ""),
            category=r.choice(["fact", "core", "episode", "system"]),
        )
        for i in range(40)
    ]
    path = mem.root / "MEMORY.md"
    rel = mem.workspace.layout.rel(path)
    _index_matches_file(mem, path, rel)

    def refused(*_a: object, **_k: object) -> None:
        raise AssertionError("the whole file was reconciled")

    monkeypatch.setattr(store_module.Workspace, "_reconcile", refused)
    live = list(ids)
    for step in range(40):
        target = r.choice(live)
        kind = step % 4
        if kind == 0:
            new = mem.update(target, f"fact {step} rewritten\nover two lines").id
            live[live.index(target)] = new
        elif kind == 1:
            mem.update(target, f"fact {step} edited in place", supersede=False)
        elif kind == 2:
            mem.delete(target)
            live.remove(target)
        else:
            state = mem.workspace.ledger.entries.get(target)
            assert state is not None
            category = state.category
            mem.set_category(target, r.choice([c for c in CATEGORIES if c != category]))
        _index_matches_file(mem, path, rel)
    monkeypatch.undo()
    hits = mem.search("rewritten over two lines", k=3)
    assert hits and hits[0].id in live
    mem.close()
    reopened = Memory.from_settings(_settings(tmp_path / "ws"))
    assert reopened.sync().files_changed == 0  # the stamps were the file's
    _index_matches_file(reopened, path, rel)
    reopened.close()

"""Faults of the workspace found on first contact: silent loss, crashes,
stray temp files, untyped errors, symlinks, scope names and stable citations."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from langmem_ext import Memory, Settings
from langmem_ext.core.errors import (
    InvalidInputError,
    InvalidPathError,
    InvalidScopeError,
    LangmemError,
    MemoryFileError,
    PendingAlreadyResolvedError,
)
from langmem_ext.tools import create_memory_get_tool
from langmem_ext.workspace.files import WorkspaceLock
from langmem_ext.workspace.layout import check_scope
from langmem_ext.workspace.markdown import parse_entries

CHILD_ENV = {**os.environ, "LANGMEM_EMBEDDINGS__PROVIDER": "fake", "PYTHONUNBUFFERED": "1"}


def _settings(ws: Path) -> Settings:
    s = Settings(workspace=ws)
    s.embeddings.provider = "fake"
    return s


def _ids_in(path: Path) -> list[str | None]:
    return [e.id for e in parse_entries(path.read_text(encoding="utf-8"))]


# -- F1: silent loss -----------------------------------------------------------------


def test_confirm_after_a_text_quoting_the_block_id_stores_the_memory(
    fake_memory: Memory,
) -> None:
    m = fake_memory
    p = m.save("User likes green tea")
    note = m.add(f"Note ^{p.entry_id}")
    entry = m.confirm(p.id)
    assert entry.id == p.entry_id and entry.text == "User likes green tea"
    assert _ids_in(m.root / "MEMORY.md") == [note, p.entry_id]
    texts = {e.id: e.text for e in m.list()}
    assert texts == {note: f"Note ^{p.entry_id}", p.entry_id: "User likes green tea"}


def test_markup_looking_texts_round_trip_without_fake_ids_or_sections(
    fake_memory: Memory,
) -> None:
    m = fake_memory
    texts = [
        "## Core",
        "# Title\n## Episodes\n- a bullet ^m-0123456789",
        "* star bullet ^m-abcdef0123 ^m-abcdef0124",
        "^m-fedcba9876",
        "ends with an id-looking word ^m-1234567890\nand goes on",
    ]
    ids = [m.add(t) for t in texts]
    m.reindex()
    parsed = parse_entries((m.root / "MEMORY.md").read_text(encoding="utf-8"))
    assert [e.id for e in parsed] == ids
    assert [e.text for e in parsed] == texts
    assert {e.category for e in parsed} == {"fact"}
    assert [(e.id, e.text, e.category) for e in m.list()] == [
        (i, t, "fact") for i, t in zip(ids, texts, strict=True)
    ]


def test_a_failed_confirm_never_leaves_the_pending_item_confirmed(fake_memory: Memory) -> None:
    m = fake_memory
    m.add("an existing fact")
    p = m.save("User likes oolong")
    (m.root / "MEMORY.md").write_bytes(b"# Long-term memory\n\n- broken \xff bytes\n")
    with pytest.raises(MemoryFileError, match=r"MEMORY\.md"):
        m.confirm(p.id)
    assert [x.id for x in m.list_pending()] == [p.id]
    assert b"oolong" not in (m.root / "MEMORY.md").read_bytes()


# -- F2: pending after a crash ----------------------------------------------------------

_KILL_AFTER_MARKDOWN = """
import os
import langmem_ext.workspace.documents as documents
real = documents.atomic_write_text
def killing(path, content):
    real(path, content)
    if path.name == "MEMORY.md":
        os.kill(os.getpid(), 9)
documents.atomic_write_text = killing
"""

_KILL_AFTER_LEDGER = """
import os
from langmem_ext.workspace.store import Workspace
real = Workspace.write_entries
def killing(self, *args, **kwargs):
    real(self, *args, **kwargs)
    os.kill(os.getpid(), 9)
Workspace.write_entries = killing
"""


def _confirm_killed(ws: Path, pending_id: str, hook: str) -> None:
    child = hook + textwrap.dedent(
        f"""
        from langmem_ext import Memory
        mem = Memory({str(ws)!r})
        mem.confirm({pending_id!r})
        print("NOT KILLED", flush=True)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", child], env=CHILD_ENV, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "NOT KILLED" not in proc.stdout


@pytest.mark.parametrize("hook", [_KILL_AFTER_MARKDOWN, _KILL_AFTER_LEDGER], ids=["md", "ledger"])
def test_confirm_killed_after_the_markdown_write_is_confirmed_on_open(
    tmp_path: Path, hook: str
) -> None:
    ws = tmp_path / "ws"
    with Memory(settings=_settings(ws)) as mem:
        p = mem.save("User prefers window seats")
        other = mem.save("User flies on Tuesdays")
    _confirm_killed(ws, p.id, hook)
    assert _ids_in(ws / "MEMORY.md") == [p.entry_id]  # the write reached Markdown
    with Memory(settings=_settings(ws)) as mem:
        assert [x.id for x in mem.list_pending()] == [other.id]
        with pytest.raises(PendingAlreadyResolvedError, match="confirmed"):
            mem.reject(p.id)
        [entry] = mem.list()
        assert entry.id == p.entry_id and entry.verified
        assert _ids_in(ws / "MEMORY.md") == [p.entry_id]


def test_reject_after_a_crash_sees_the_written_entry_without_a_sync(tmp_path: Path) -> None:
    """Even with auto-sync off, a pending item whose entry reached the files is not rejected."""
    ws = tmp_path / "ws"
    with Memory(settings=_settings(ws)) as mem:
        p = mem.save("User prefers aisle seats")
    _confirm_killed(ws, p.id, _KILL_AFTER_MARKDOWN)
    s = _settings(ws)
    s.index.auto_sync = False
    with Memory(settings=s) as mem:
        with pytest.raises(PendingAlreadyResolvedError, match="confirmed"):
            mem.reject(p.id)
        assert mem.list_pending() == []


# -- F3: temp files ------------------------------------------------------------------------

_KILL_BEFORE_RENAME = """
import os
real = os.replace
def killing(src, dst, *a, **k):
    if str(dst).endswith("MEMORY.md"):
        os.kill(os.getpid(), 9)
    return real(src, dst, *a, **k)
os.replace = killing
"""


def test_temp_files_left_by_a_kill_are_removed_on_open(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with Memory(settings=_settings(ws)) as mem:
        mem.add("first fact", scope="bob")
        p = mem.save("User likes jasmine tea")
    _confirm_killed(ws, p.id, _KILL_BEFORE_RENAME)
    left = list(ws.glob(".MEMORY.md.*.tmp"))
    assert len(left) == 1 and "jasmine" in left[0].read_text(encoding="utf-8")
    bob_tmp = ws / "memory" / "scopes" / "bob" / ".LONG_TERM.md.ab12cd_9.tmp"
    bob_tmp.write_text("half", encoding="utf-8")
    # Not ours: other names, or outside the memory roots.
    keep = [
        ws / ".notes.txt.abcdefgh.tmp",
        ws / "memory" / ".cache.tmp",
        ws / "other" / ".MEMORY.md.abcdefgh.tmp",
    ]
    for k in keep:
        k.parent.mkdir(parents=True, exist_ok=True)
        k.write_text("keep", encoding="utf-8")

    # While another writer holds the workspace lock, nothing is removed.
    other_writer = WorkspaceLock(ws / ".lock", timeout=5)
    with other_writer.hold():
        Memory(settings=_settings(ws)).close()
        assert left[0].exists() and bob_tmp.exists()

    with Memory(settings=_settings(ws)) as mem:
        assert not left[0].exists() and not bob_tmp.exists()
        assert all(k.exists() for k in keep)
        assert [x.id for x in mem.list_pending()] == [p.id]  # the kill lost nothing confirmed
        mem.confirm(p.id)
        assert [e.text for e in mem.list()] == ["User likes jasmine tea"]


# -- F4: untyped errors --------------------------------------------------------------------


def test_lone_surrogates_are_typed_errors_naming_the_field(fake_memory: Memory) -> None:
    m = fake_memory
    eid = m.add("a fine fact")
    bad = "a \ud800 b"
    calls = {
        "save": lambda: m.save(bad),
        "add": lambda: m.add(bad),
        "add_many": lambda: m.add_many(["another fine fact", bad]),
        "update": lambda: m.update(eid, bad),
    }
    for name, call in calls.items():
        with pytest.raises(InvalidInputError, match="text") as info:
            call()
        assert "surrogate" in str(info.value), name
    with pytest.raises(InvalidInputError, match="query"):
        m.search(bad)
    with pytest.raises(InvalidPathError):
        m.get("MEMORY\ud800.md")
    assert [e.text for e in m.list()] == ["a fine fact"]  # no partial state
    assert m.list_pending() == []


def test_empty_and_huge_inputs_are_typed(fake_memory: Memory) -> None:
    m = fake_memory
    eid = m.add("a fine fact", target="daily")  # memory/ exists: long names reach the OS
    huge = "x" * 100_000
    for call in (
        lambda: m.save(""),
        lambda: m.add("   "),
        lambda: m.add_many(["ok", ""]),
        lambda: m.update(eid, "\n"),
        lambda: m.search(""),
        lambda: m.get(""),
        lambda: m.save(huge),
        lambda: m.add(huge),
        lambda: m.add_many([huge]),
        lambda: m.update(eid, huge),
        lambda: m.get("x" * 4000),
        lambda: m.get("memory/" + "x" * 4000 + ".md"),
        lambda: m.get("x" * 4000, scope="bob"),
    ):
        with pytest.raises(LangmemError):
            call()
    m.search(huge[:20_000])  # a long query is searched (or refused), never a crash
    assert [e.text for e in m.list()] == ["a fine fact"]


def test_memory_get_tool_returns_an_error_message_for_a_too_long_path(
    fake_memory: Memory,
) -> None:
    fake_memory.add("a fine fact", target="daily")
    tool = create_memory_get_tool(fake_memory)
    msg = tool.invoke(
        {"name": "memory_get", "args": {"path": "x" * 4000}, "id": "c1", "type": "tool_call"}
    )
    assert isinstance(msg, ToolMessage) and msg.status == "error"
    assert "too long" in str(msg.content)


def test_an_invalid_utf8_file_is_skipped_and_named(
    fake_memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    m = fake_memory
    m.add("User drinks green tea every morning")
    bad = m.root / "memory" / "2026-01-05.md"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(b"# 2026-01-05\n\n## Facts\n- bad \xff\xfe bytes\n")
    with caplog.at_level(logging.WARNING):
        report = m.sync()
    assert "memory/2026-01-05.md" in report.skipped
    assert "UTF-8" in report.skipped["memory/2026-01-05.md"]
    assert any("2026-01-05.md" in r.getMessage() for r in caplog.records)
    assert [e.text for e in m.list()] == ["User drinks green tea every morning"]
    assert m.search("green tea")[0].text == "User drinks green tea every morning"
    assert m.sync().skipped  # reported again by every sync until fixed
    with pytest.raises(MemoryFileError, match=r"memory/2026-01-05\.md"):
        m.get("memory/2026-01-05.md")
    with pytest.raises(MemoryFileError, match=r"memory/2026-01-05\.md.*UTF-8"):
        m.add("Lunch at noon", target="daily", created_at=bad_day())
    # Fixed by hand: indexed on the next sync.
    bad.write_text("# 2026-01-05\n\n## Facts\n- fixed by hand\n", encoding="utf-8")
    assert not m.sync().skipped
    assert "fixed by hand" in {e.text for e in m.list()}


def bad_day() -> float:
    from datetime import datetime

    return datetime(2026, 1, 5, 12).timestamp()


# -- F5: symlinks and scope roots ------------------------------------------------------------


def _texts(m: Memory, scope: str) -> set[str]:
    return {e.text for e in m.list(scope=scope)}


def test_symlinked_files_are_never_read(fake_memory: Memory, tmp_path: Path) -> None:
    m = fake_memory
    m.add("bob's secret diary entry", scope="bob", target="daily", created_at=bad_day())
    m.add("main's own fact")
    bob_daily = m.root / "memory" / "scopes" / "bob" / "2026-01-05.md"
    assert bob_daily.is_file()
    outside = tmp_path / "outside.md"
    outside.write_text("# x\n\n- outside the workspace secret\n", encoding="utf-8")
    (m.root / "memory" / "2026-01-05.md").symlink_to(bob_daily)
    (m.root / "memory" / "2026-01-06.md").symlink_to(outside)
    alice = m.root / "memory" / "scopes" / "alice"
    alice.mkdir(parents=True)
    (alice / "LONG_TERM.md").symlink_to(outside)
    (m.root / "memory" / "scopes" / "carol").symlink_to(m.root / "memory" / "scopes" / "bob")

    report = m.sync()
    assert {"memory/2026-01-05.md", "memory/2026-01-06.md"} <= set(report.skipped)
    assert _texts(m, "main") == {"main's own fact"}
    assert _texts(m, "alice") == set()
    assert _texts(m, "carol") == set()
    for scope in ("main", "alice", "carol"):
        assert not [h for h in m.search("secret diary outside", scope=scope) if "secret" in h.text]
    for path, scope in (
        ("memory/2026-01-05.md", "main"),
        ("memory/2026-01-06.md", "main"),
        ("2026-01-05.md", "main"),
        ("LONG_TERM.md", "alice"),
        ("memory/scopes/carol/2026-01-05.md", "carol"),
        ("memory/scopes/bob/2026-01-05.md", "main"),
    ):
        with pytest.raises(InvalidPathError):
            m.get(path, scope=scope)
    assert "carol" not in m.scopes()
    assert _texts(m, "bob") == {"bob's secret diary entry"}  # bob's own file is fine


def test_writes_refuse_a_symlinked_target(fake_memory: Memory) -> None:
    m = fake_memory
    m.add("bob's long-term fact", scope="bob")
    (m.root / "MEMORY.md").symlink_to(m.root / "memory" / "scopes" / "bob" / "LONG_TERM.md")
    with pytest.raises(LangmemError, match=r"MEMORY\.md"):
        m.add("main writes here")
    assert _texts(m, "bob") == {"bob's long-term fact"}
    assert (m.root / "MEMORY.md").is_symlink()


def test_an_empty_scope_is_an_error_not_main(fake_memory: Memory) -> None:
    m = fake_memory
    m.add("main fact")
    for call in (
        lambda: m.list(scope=""),
        lambda: m.search("fact", scope=""),
        lambda: m.save("some fact here", scope=""),
        lambda: m.add("some fact here", scope=""),
        lambda: m.get("MEMORY.md", scope=""),
        lambda: m.list_pending(scope=""),
        lambda: m.sync(scope=""),
    ):
        with pytest.raises(InvalidScopeError):
            call()


# -- papercuts ----------------------------------------------------------------------------------


def test_get_past_the_end_says_how_many_lines_the_file_has(fake_memory: Memory) -> None:
    m = fake_memory
    m.add("only fact")
    n = len((m.root / "MEMORY.md").read_text(encoding="utf-8").splitlines())
    with pytest.raises(InvalidInputError, match=rf"MEMORY\.md has {n} lines"):
        m.get("MEMORY.md:99999")
    with pytest.raises(InvalidInputError, match=rf"has {n} lines"):
        m.get("MEMORY.md", from_line=n + 1)
    assert m.get("MEMORY.md", from_line=n).lines == ["- only fact ^" + m.list()[0].id]


@pytest.mark.parametrize("name", ["用户", "équipe", "Ünïcödé_42", "команда-1", "हिन्दी"])
def test_unicode_scope_names_work_end_to_end(fake_memory: Memory, name: str) -> None:
    m = fake_memory
    eid = m.add("scope specific fact about kites", scope=name)
    assert m.search("kites", scope=name)[0].id == eid
    assert [e.id for e in m.list(scope=name)] == [eid]
    assert m.list(scope="main") == []
    assert (m.root / "memory" / "scopes" / name / "LONG_TERM.md").is_file()
    assert m.get("LONG_TERM.md", scope=name).total_lines > 0
    assert name in m.scopes()
    m.reindex()
    assert m.search("kites", scope=name, mode="vector")[0].id == eid


def test_scope_names_are_nfc_normalised_and_unsafe_ones_refused() -> None:
    decomposed = unicodedata.normalize("NFD", "équipe")
    assert decomposed != "équipe"
    assert check_scope(decomposed) == "équipe"
    for bad in ("", "a/b", "..", ".hidden", "-x", "_x", "a b", "a\x00b", "a\nb", "x" * 65, "a.b"):
        with pytest.raises(InvalidScopeError):
            check_scope(bad)
    with pytest.raises(InvalidScopeError, match="letters"):
        check_scope("a/b")


def test_anchors_stay_valid_when_lines_move(fake_memory: Memory) -> None:
    m = fake_memory
    m.add("first fact")
    ep = m.add("went hiking in the alps", category="episode")
    before = m.get_entry(ep)
    assert before.anchor == f"MEMORY.md#^{ep}"
    for i in range(3):
        m.add(f"another fact number {i}")  # inserted above the episode
    after = m.get_entry(ep)
    assert after.line > before.line and after.anchor == before.anchor
    [hit] = [h for h in m.search("hiking alps") if h.id == ep]
    assert hit.anchor == before.anchor
    got = m.get(before.anchor)
    assert got.from_line == after.line
    assert got.lines == [f"- went hiking in the alps ^{ep}"]
    assert m.get(before.citation).lines != got.lines  # the line citation went stale
    with pytest.raises(InvalidPathError, match="m-0000000000"):
        m.get("MEMORY.md#^m-0000000000")
    with pytest.raises(InvalidPathError):
        m.get(f"MEMORY.md#^{ep}", scope="bob")


def test_session_log_refuses_a_symlinked_transcript_and_surrogates(fake_memory: Memory) -> None:
    from datetime import date

    from langmem_ext.memory.sessions.log import SessionLog

    m = fake_memory
    log = SessionLog(m)
    at = bad_day()
    log.append("bob", "t1", "user", "bob's private words", at=at)
    bob_file = m.workspace.layout.transcript("bob", date(2026, 1, 5))
    before = bob_file.read_bytes()
    mine = m.workspace.layout.transcript("main", date(2026, 1, 5))
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.symlink_to(bob_file)
    with pytest.raises(InvalidPathError, match="symlink"):
        log.append("main", "t2", "user", "main's words", at=at)
    with pytest.raises(InvalidInputError, match="surrogate"):
        log.append("bob", "t1", "user", "broken \udc80 text", at=at)
    assert bob_file.read_bytes() == before
